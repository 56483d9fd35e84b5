/* stripe_io.c - row I/O for RAID5 and RAID6 (write-through).
 *
 * A request is cut into rows; inside a row it is cut into *bands*: runs of
 * 4 KiB columns over which the set of chunks being written, and whether
 * each is written whole, does not change. Parity is independent per
 * column, so each band is planned on its own, the way md plans each
 * stripe_head: read-modify-write (read old data and old parity) or
 * reconstruct-write (read the data not being replaced), whichever needs
 * fewer member reads; a band that replaces every data chunk reads nothing.
 * With a member missing the band is rebuilt first and parity recomputed
 * from the full data, so the surviving members always stay consistent.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "errmsg.h"
#include "parity.h"
#include "stripe_io.h"

/* ---- geometry shared by the parity levels --------------------------- */

int stripe_geometry_init(struct raid_geometry *geo, int nr_parity, char *err, size_t errlen)
{
	int nr_data = geo->raid_disks - nr_parity;

	if (geo->chunk_bytes == 0 || geo->chunk_bytes % STRIPE_COLUMN_BYTES)
		return errmsg_fail(-EINVAL, err, errlen,
		                   "chunk of %u bytes: parity levels need a multiple of 4 KiB",
		                   geo->chunk_bytes);
	if (nr_data < 1 || nr_data > PARITY_MAX_DATA)
		return errmsg_fail(-EINVAL, err, errlen, "%d members leave %d data chunks per row",
		                   geo->raid_disks, nr_data);
	geo->array_bytes = geo->dev_bytes / geo->chunk_bytes * geo->chunk_bytes * (uint64_t)nr_data;
	if (geo->array_bytes == 0)
		return errmsg_fail(-EINVAL, err, errlen, "members are smaller than one chunk");
	return 0;
}

uint64_t stripe_usable_dev_bytes(const struct raid_geometry *geo, uint64_t bytes)
{
	return bytes - bytes % geo->chunk_bytes;
}

static int stripe_nr_parity(const struct raid_array *a)
{
	return a->ops->max_parity;
}

void stripe_map(const struct raid_geometry *geo, const void *priv, uint64_t off,
                struct raid_extent *out)
{
	const struct raid_level_ops *ops = raid_level_find(geo->level);
	struct row_layout lay;
	int nr_data = geo->raid_disks - ops->max_parity;
	uint64_t chunk_number = off / geo->chunk_bytes;
	uint64_t in_chunk = off % geo->chunk_bytes;

	(void)priv;
	ops->row_layout(geo, chunk_number / (uint64_t)nr_data, &lay);
	out->nr_copies = 1;
	out->copies[0].role = lay.data_role[chunk_number % (uint64_t)nr_data];
	out->copies[0].member_off_bytes = lay.member_off_bytes + in_chunk;
	out->len_bytes = geo->chunk_bytes - in_chunk;
}

/* ---- per-thread scratch for column buffers -------------------------- */

static pthread_key_t scratch_key;
static pthread_once_t scratch_once = PTHREAD_ONCE_INIT;

struct scratch_arena {
	size_t len;
	char *base;
};

static void scratch_free(void *arena_ptr)
{
	struct scratch_arena *arena = arena_ptr;
	free(arena->base);
	free(arena);
}

static void scratch_key_create(void)
{
	pthread_key_create(&scratch_key, scratch_free);
}

/* A 64-byte aligned buffer of at least len bytes, reused by this thread. */
static char *scratch_get(size_t len)
{
	struct scratch_arena *arena;

	pthread_once(&scratch_once, scratch_key_create);
	arena = pthread_getspecific(scratch_key);
	if (!arena) {
		arena = calloc(1, sizeof(*arena));
		if (!arena)
			return NULL;
		pthread_setspecific(scratch_key, arena);
	}
	if (arena->len < len) {
		free(arena->base);
		arena->base = parity_buf_alloc(len);
		arena->len = arena->base ? len : 0;
	}
	return arena->base;
}

/* ---- one band of one row ------------------------------------------- */

/* The columns [lo, hi) of every chunk of a row, as buffers in both volume
 * order (data[k]) and syndrome order (by_slot[], P at nr_data, Q after). */
struct band {
	struct raid_array *a;
	const struct row_layout *lay;
	int nr_parity;
	uint64_t lo, hi;
	size_t len;
	void *data[RAID_MAX_MEMBERS];
	void *old[RAID_MAX_MEMBERS];
	void *by_slot[RAID_MAX_MEMBERS + 2];
	struct member *member[RAID_MAX_MEMBERS + 2]; /* by slot; NULL if missing */
	int role[RAID_MAX_MEMBERS + 2];              /* by slot */
};

static int band_setup(struct band *b, struct raid_array *a, const struct row_layout *lay,
                      uint64_t lo, uint64_t hi, bool want_old)
{
	int nr_data = lay->nr_data;
	int nr_parity = stripe_nr_parity(a);
	size_t len = (size_t)(hi - lo);
	int nr_bufs = nr_data + nr_parity + (want_old ? nr_data : 0);
	char *arena = scratch_get(len * (size_t)nr_bufs);

	if (!arena)
		return -ENOMEM;
	b->a = a;
	b->lay = lay;
	b->nr_parity = nr_parity;
	b->lo = lo;
	b->hi = hi;
	b->len = len;
	for (int k = 0; k < nr_data; k++) {
		int slot = lay->data_qslot[k];
		b->data[k] = arena + (size_t)k * len;
		b->by_slot[slot] = b->data[k];
		b->role[slot] = lay->data_role[k];
		if (want_old)
			b->old[k] = arena + (size_t)(nr_data + nr_parity + k) * len;
	}
	b->by_slot[nr_data] = arena + (size_t)nr_data * len;
	b->role[nr_data] = lay->p_role;
	if (nr_parity == 2) {
		b->by_slot[nr_data + 1] = arena + (size_t)(nr_data + 1) * len;
		b->role[nr_data + 1] = lay->q_role;
	}
	for (int s = 0; s < nr_data + nr_parity; s++)
		b->member[s] = a->slot[b->role[s]];
	return 0;
}

/* Read the band of slot s into buf. On a member error, fail the member if
 * the array can do without it: returns -EAGAIN so the caller replans
 * (degraded), or the error if the member had to stay. */
static int band_read_slot(struct band *b, int s, void *buf)
{
	if (!b->member[s])
		return -EIO;
	int rc = member_read(b->member[s], buf, b->len, b->lay->member_off_bytes + b->lo);
	if (rc == 0)
		return 0;
	return array_member_error(b->a, b->role[s], rc, false) ? -EAGAIN : rc;
}

static int band_write_slot(struct band *b, int s, const void *buf)
{
	int rc = member_write(b->member[s], buf, b->len, b->lay->member_off_bytes + b->lo);
	if (rc == 0)
		return 0;
	/* A member that failed is out; its contents follow from the others. */
	return array_member_error(b->a, b->role[s], rc, true) ? 0 : rc;
}

static void band_gen_parity(struct band *b)
{
	int nr_data = b->lay->nr_data;
	if (b->nr_parity == 2)
		parity_gen_pq(b->by_slot, nr_data, b->by_slot[nr_data], b->by_slot[nr_data + 1],
		              b->len);
	else
		parity_gen_p(b->by_slot, nr_data, b->by_slot[nr_data], b->len);
}

/* Read every present slot and rebuild the missing ones. */
static int band_read_all(struct band *b)
{
	int lost[2], nr_lost = 0;
	int nr_slots = b->lay->nr_data + b->nr_parity;

	for (int s = 0; s < nr_slots; s++) {
		if (!b->member[s]) {
			if (nr_lost == b->nr_parity)
				return -EIO;
			lost[nr_lost++] = s;
			continue;
		}
		int rc = band_read_slot(b, s, b->by_slot[s]);
		if (rc < 0)
			return rc;
	}
	return parity_recover(b->by_slot, b->lay->nr_data, b->nr_parity == 2, lost, nr_lost,
	                      b->len) < 0 ? -EIO : 0;
}

/* What a write does to data chunk k of a row: bytes [lo, hi) of the chunk
 * come from src (src points at byte lo). lo == hi: untouched. */
struct chunk_write {
	uint64_t lo, hi;
	const char *src;
};

static bool chunk_touches(const struct chunk_write *w, uint64_t lo, uint64_t hi)
{
	return w->lo < w->hi && w->lo < hi && w->hi > lo;
}

static bool chunk_covers(const struct chunk_write *w, uint64_t lo, uint64_t hi)
{
	return w->lo <= lo && w->hi >= hi && w->lo < w->hi;
}

static void band_overlay(struct band *b, const struct chunk_write *w, void *dst)
{
	uint64_t from = w->lo > b->lo ? w->lo : b->lo;
	uint64_t to = w->hi < b->hi ? w->hi : b->hi;
	memcpy((char *)dst + (from - b->lo), w->src + (from - w->lo), (size_t)(to - from));
}

static int band_write_touched(struct band *b, const struct chunk_write *w)
{
	int nr_data = b->lay->nr_data;

	for (int k = 0; k < nr_data; k++) {
		int s = b->lay->data_qslot[k];
		if (!chunk_touches(&w[k], b->lo, b->hi) || !b->member[s])
			continue;
		int rc = band_write_slot(b, s, b->data[k]);
		if (rc < 0)
			return rc;
	}
	for (int s = nr_data; s < nr_data + b->nr_parity; s++) {
		if (!b->member[s])
			continue;
		int rc = band_write_slot(b, s, b->by_slot[s]);
		if (rc < 0)
			return rc;
	}
	return 0;
}

static int band_write_degraded(struct band *b, const struct chunk_write *w)
{
	int rc = band_read_all(b);
	if (rc < 0)
		return rc;
	for (int k = 0; k < b->lay->nr_data; k++)
		if (chunk_touches(&w[k], b->lo, b->hi))
			band_overlay(b, &w[k], b->data[k]);
	band_gen_parity(b);
	return band_write_touched(b, w);
}

static int band_write_rcw(struct band *b, const struct chunk_write *w)
{
	for (int k = 0; k < b->lay->nr_data; k++) {
		if (chunk_covers(&w[k], b->lo, b->hi))
			continue;
		int rc = band_read_slot(b, b->lay->data_qslot[k], b->data[k]);
		if (rc < 0)
			return rc;
	}
	for (int k = 0; k < b->lay->nr_data; k++)
		if (chunk_touches(&w[k], b->lo, b->hi))
			band_overlay(b, &w[k], b->data[k]);
	band_gen_parity(b);
	return band_write_touched(b, w);
}

static int band_write_rmw(struct band *b, const struct chunk_write *w)
{
	int nr_data = b->lay->nr_data;
	int rc;

	for (int k = 0; k < nr_data; k++) {
		if (!chunk_touches(&w[k], b->lo, b->hi))
			continue;
		rc = band_read_slot(b, b->lay->data_qslot[k], b->old[k]);
		if (rc < 0)
			return rc;
	}
	for (int s = nr_data; s < nr_data + b->nr_parity; s++) {
		rc = band_read_slot(b, s, b->by_slot[s]);
		if (rc < 0)
			return rc;
	}
	for (int k = 0; k < nr_data; k++) {
		if (!chunk_touches(&w[k], b->lo, b->hi))
			continue;
		memcpy(b->data[k], b->old[k], b->len);
		band_overlay(b, &w[k], b->data[k]);
		parity_update_p(b->by_slot[nr_data], b->old[k], b->data[k], b->len);
		if (b->nr_parity == 2)
			parity_update_q(b->by_slot[nr_data + 1], b->old[k], b->data[k],
			                b->lay->data_qslot[k], b->len);
	}
	return band_write_touched(b, w);
}

static int band_write(struct raid_array *a, const struct row_layout *lay,
                      const struct chunk_write *w, uint64_t lo, uint64_t hi)
{
	for (;;) {
		struct band b;
		int nr_missing = 0, rcw_reads = 0, rmw_reads = 0, rc;

		rc = band_setup(&b, a, lay, lo, hi, true);
		if (rc < 0)
			return rc;
		for (int s = 0; s < lay->nr_data + b.nr_parity; s++)
			nr_missing += !b.member[s];
		for (int k = 0; k < lay->nr_data; k++) {
			rcw_reads += !chunk_covers(&w[k], lo, hi);
			rmw_reads += chunk_touches(&w[k], lo, hi);
		}
		rmw_reads += b.nr_parity;
		if (nr_missing)
			rc = band_write_degraded(&b, w);
		else if (rcw_reads <= rmw_reads)
			rc = band_write_rcw(&b, w);
		else
			rc = band_write_rmw(&b, w);
		if (rc != -EAGAIN)
			return rc;
		/* A member failed while reading: plan again, now degraded. */
	}
}

static uint64_t column_floor(uint64_t x)
{
	return x - x % STRIPE_COLUMN_BYTES;
}

static uint64_t column_ceil(uint64_t x)
{
	return column_floor(x + STRIPE_COLUMN_BYTES - 1);
}

static int cmp_u64(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
	return a < b ? -1 : a > b;
}

/* Write one row: cut it into bands at every column where a chunk's write
 * starts or ends. */
static int row_write(struct raid_array *a, uint64_t row, const struct chunk_write *w)
{
	struct row_layout lay;
	uint64_t cuts[2 * RAID_MAX_MEMBERS + 2];
	int nr_cuts = 0, rc = 0;

	a->ops->row_layout(&a->geo, row, &lay);
	for (int k = 0; k < lay.nr_data; k++) {
		if (w[k].lo >= w[k].hi)
			continue;
		cuts[nr_cuts++] = column_floor(w[k].lo);
		cuts[nr_cuts++] = column_ceil(w[k].hi);
	}
	qsort(cuts, (size_t)nr_cuts, sizeof(cuts[0]), cmp_u64);
	for (int i = 0; i + 1 < nr_cuts && rc == 0; i++) {
		uint64_t lo = cuts[i], hi = cuts[i + 1];
		bool any = false;
		if (lo == hi)
			continue;
		for (int k = 0; k < lay.nr_data; k++)
			any = any || chunk_touches(&w[k], lo, hi);
		if (any)
			rc = band_write(a, &lay, w, lo, hi);
	}
	return rc;
}

int stripe_io_write(struct raid_array *a, const void *buf, size_t len, uint64_t off)
{
	const char *src = buf;
	uint64_t chunk = a->geo.chunk_bytes;
	int nr_data = a->geo.raid_disks - stripe_nr_parity(a);
	uint64_t row_bytes = chunk * (uint64_t)nr_data;

	while (len > 0) {
		struct chunk_write w[RAID_MAX_MEMBERS];
		uint64_t row = off / row_bytes;
		uint64_t in_row = off % row_bytes;
		size_t piece = row_bytes - in_row < len ? (size_t)(row_bytes - in_row) : len;

		memset(w, 0, sizeof(w));
		for (uint64_t pos = in_row; pos < in_row + piece;) {
			int k = (int)(pos / chunk);
			uint64_t lo = pos % chunk;
			uint64_t hi = in_row + piece - (uint64_t)k * chunk;
			if (hi > chunk)
				hi = chunk;
			w[k].lo = lo;
			w[k].hi = hi;
			w[k].src = src + (pos - in_row);
			pos = (uint64_t)k * chunk + hi;
		}
		row_lock(&a->row_locks, row);
		int rc = row_write(a, row, w);
		row_unlock(&a->row_locks, row);
		if (rc < 0)
			return rc;
		src += piece;
		off += piece;
		len -= piece;
	}
	return 0;
}

/* ---- reads ---------------------------------------------------------- */

/* Bytes [lo, hi) of data chunk k of a row whose member is gone: rebuild
 * the covering columns from the rest of the row. */
static int chunk_reconstruct(struct raid_array *a, const struct row_layout *lay, int k,
                             uint64_t lo, uint64_t hi, char *dst)
{
	for (;;) {
		struct band b;
		int rc = band_setup(&b, a, lay, column_floor(lo), column_ceil(hi), false);
		if (rc < 0)
			return rc;
		rc = band_read_all(&b);
		if (rc == -EAGAIN)
			continue;
		if (rc < 0)
			return rc;
		memcpy(dst, (char *)b.data[k] + (lo - b.lo), (size_t)(hi - lo));
		return 0;
	}
}

int stripe_io_read(struct raid_array *a, void *buf, size_t len, uint64_t off)
{
	char *dst = buf;
	uint64_t chunk = a->geo.chunk_bytes;
	int nr_data = a->geo.raid_disks - stripe_nr_parity(a);

	while (len > 0) {
		uint64_t chunk_number = off / chunk;
		uint64_t row = chunk_number / (uint64_t)nr_data;
		int k = (int)(chunk_number % (uint64_t)nr_data);
		uint64_t lo = off % chunk;
		size_t piece = chunk - lo < len ? (size_t)(chunk - lo) : len;
		struct row_layout lay;
		int rc = -EIO;

		a->ops->row_layout(&a->geo, row, &lay);
		struct member *m = a->slot[lay.data_role[k]];
		if (m) {
			rc = member_read(m, dst, piece, lay.member_off_bytes + lo);
			if (rc < 0 && !array_member_error(a, lay.data_role[k], rc, false))
				return rc;
		}
		if (rc < 0) {
			row_lock(&a->row_locks, row);
			rc = chunk_reconstruct(a, &lay, k, lo, lo + piece, dst);
			row_unlock(&a->row_locks, row);
			if (rc < 0)
				return rc;
		}
		dst += piece;
		off += piece;
		len -= piece;
	}
	return 0;
}

/* ---- resync --------------------------------------------------------- */

int stripe_io_resync(struct raid_array *a)
{
	const uint64_t band_bytes = 64 * 1024;
	uint64_t chunk = a->geo.chunk_bytes;
	uint64_t rows = a->geo.dev_bytes / chunk;
	int nr_data = a->geo.raid_disks - stripe_nr_parity(a);

	for (uint64_t row = 0; row < rows; row++) {
		struct row_layout lay;
		int rc = 0;

		a->ops->row_layout(&a->geo, row, &lay);
		row_lock(&a->row_locks, row);
		for (uint64_t lo = 0; lo < chunk && rc == 0; lo += band_bytes) {
			uint64_t hi = lo + band_bytes < chunk ? lo + band_bytes : chunk;
			struct band b;
			rc = band_setup(&b, a, &lay, lo, hi, false);
			for (int k = 0; k < nr_data && rc == 0; k++)
				rc = band_read_slot(&b, lay.data_qslot[k], b.data[k]);
			if (rc == 0) {
				band_gen_parity(&b);
				for (int s = nr_data; s < nr_data + b.nr_parity && rc == 0; s++)
					rc = band_write_slot(&b, s, b.by_slot[s]);
			}
		}
		row_unlock(&a->row_locks, row);
		if (rc < 0)
			return rc == -EAGAIN ? -EIO : rc;
	}
	return 0;
}
