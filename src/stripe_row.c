/* stripe_row.c - see stripe_row.h.
 *
 * Work on a row is cut into *bands*: runs of columns over which every
 * chunk's column state is the same, so one decision (and one member I/O per
 * chunk) covers the whole band. Flushing a band picks, as md does, the way
 * with fewer member reads: reconstruct-write reads the invalid data
 * columns; read-modify-write reads the old contents of the dirty ones and
 * the old parity. A band whose data is all in memory (a full-row write)
 * reads nothing. With a member missing, the band is first brought fully
 * into memory, rebuilding from the members' *old* contents (dirty columns
 * are re-read from their members for that), then parity is recomputed.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "array.h"
#include "io_pool.h"
#include "parity.h"
#include "stripe_io.h"
#include "stripe_row.h"

#define COLUMN STRIPE_COLUMN_BYTES

static int row_nr_parity(const struct raid_array *a)
{
	return a->ops->max_parity;
}

/* ---- per-thread scratch ---------------------------------------------- */

static pthread_key_t scratch_key;
static pthread_once_t scratch_once = PTHREAD_ONCE_INIT;

struct scratch_arena {
	size_t len;
	uint8_t *base;
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
static uint8_t *scratch_get(size_t len)
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

/* ---- set-up ----------------------------------------------------------- */

int stripe_row_init(struct stripe_row *r, struct raid_array *a, uint64_t row)
{
	uint64_t chunk = a->geo.chunk_bytes;
	int nr_data = a->geo.raid_disks - row_nr_parity(a);
	uint32_t nr_columns = (uint32_t)(chunk / COLUMN);
	size_t data_bytes = (size_t)chunk * (size_t)nr_data;

	memset(r, 0, sizeof(*r));
	r->buffers = parity_buf_alloc(data_bytes + (size_t)nr_columns * (size_t)nr_data);
	if (!r->buffers)
		return -ENOMEM;
	for (int k = 0; k < nr_data; k++) {
		r->data[k] = r->buffers + (size_t)k * chunk;
		r->state[k] = r->buffers + data_bytes + (size_t)k * nr_columns;
	}
	r->nr_columns = nr_columns;
	stripe_row_reset(r, a, row);
	return 0;
}

void stripe_row_reset(struct stripe_row *r, struct raid_array *a, uint64_t row)
{
	r->row = row;
	a->ops->row_layout(&a->geo, row, &r->lay);
	for (int k = 0; k < r->lay.nr_data; k++)
		memset(r->state[k], COLUMN_INVALID, r->nr_columns);
	r->nr_dirty = 0;
}

void stripe_row_free(struct stripe_row *r)
{
	free(r->buffers);
	r->buffers = NULL;
}

/* Roles that failed a read in the operation under way on this thread: the
 * operation goes on as if they were missing, rebuilds their bytes from the
 * rest of the row and writes them back (md's handling of read errors); a
 * member is failed only if that rewrite fails too. */
static __thread int suspect_roles[2];
static __thread int nr_suspect_roles;

static bool role_suspect(int role)
{
	for (int i = 0; i < nr_suspect_roles; i++)
		if (suspect_roles[i] == role)
			return true;
	return false;
}

static void suspects_clear(void)
{
	nr_suspect_roles = 0;
}

/* ---- member I/O of a band ------------------------------------------- */

struct band_io {
	struct io_req reqs[2 * (RAID_MAX_MEMBERS + 2)];
	int roles[2 * (RAID_MAX_MEMBERS + 2)];
	bool has_reads;
	bool read_from_missing;       /* a role to read was failed out meanwhile */
	/* A read of several columns that meets md's bad block log answers
	 * -ENODATA rather than taking its role for suspect: the caller goes
	 * column by column, so that only the logged columns are rebuilt and
	 * written back. Rebuilt whole, the role's good columns would be
	 * replaced by what the other members make of them, garbage on one
	 * of them included, and a check would see nothing to compare. */
	bool nodata_by_column;
	int nr;
};

static void band_io_add(struct band_io *io, struct raid_array *a, const struct stripe_row *r,
                        int role, void *buf, uint32_t c0, uint32_t c1, bool is_write)
{
	struct io_req *req = &io->reqs[io->nr];

	memset(req, 0, sizeof(*req));
	req->buf = buf;
	req->len_bytes = (size_t)(c1 - c0) * COLUMN;
	req->data_off_bytes = r->lay.member_off_bytes + (uint64_t)c0 * COLUMN;
	/* A replacement being copied has this range already: it must see
	 * the write too, or it would take over the role with stale bytes.
	 * Looked up before the member in sync (see array_replacement_target):
	 * the copy may take over the role in between. */
	struct member *copy = is_write ? array_replacement_target(a, role, req->data_off_bytes,
	                                                          req->len_bytes)
	                               : NULL;
	/* Writes also reach a member being rebuilt where it is rebuilt. */
	req->member = is_write ? array_write_target(a, role, req->data_off_bytes, req->len_bytes)
	                       : array_read_source(a, role, req->data_off_bytes, req->len_bytes);
	if (copy == req->member)
		copy = NULL;
	/* Failed out since the caller looked: a write's bytes follow from
	 * the others' now, as for any role written degraded; a read has to
	 * be planned again without it. */
	if (!req->member) {
		io->read_from_missing |= !is_write;
		return;
	}
	req->is_write = is_write;
	io->has_reads |= !is_write;
	io->roles[io->nr++] = role;
	if (!copy)
		return;
	io->reqs[io->nr] = *req;
	io->reqs[io->nr].member = copy;
	io->roles[io->nr++] = role;
}

/* Run the batch. A member that fails is failed out of the array if it can
 * be spared: reads then answer -EAGAIN (the caller plans again, degraded),
 * writes carry on (the member's contents follow from the others). */
static int band_io_run(struct band_io *io, struct raid_array *a)
{
	int rc = 0;

	/* Members are opened buffered, so a write is a copy into the page
	 * cache: handing it to another thread costs more than it saves on a
	 * few cores (measured: 8-20% more CPU per byte, and slower), and
	 * concurrent requests keep the CPUs busy anyway. Reads may wait on
	 * the disk: those go out in parallel. */
	struct io_pool *pool = io->has_reads ? a->io_pool : NULL;
	if (io->read_from_missing)
		return -EAGAIN;
	if (io->nr == 0 || io_pool_run(pool, io->reqs, io->nr) == 0)
		return 0;
	for (int i = 0; i < io->nr; i++) {
		struct io_req *req = &io->reqs[i];
		if (req->result == 0)
			continue;
		int role = io->roles[i];
		/* Not the member serving the role: the one being rebuilt or
		 * copied for it, which must not be declared in sync later. */
		if (req->is_write && req->member != a->slot[role]) {
			array_rebuild_target_failed(a, role, req->member, req->result);
			continue;
		}
		/* A read of the member being rebuilt (where it is rebuilt)
		 * that failed: its bytes are rebuilt from the rest instead,
		 * as before it was read at all (sectors it logged as lost
		 * included); it is not failed for that. */
		if (!req->is_write && req->member != a->slot[role]) {
			if (nr_suspect_roles < 2 && !role_suspect(role)) {
				suspect_roles[nr_suspect_roles++] = role;
				if (rc == 0)
					rc = -EAGAIN;
			} else if (rc == 0 || rc == -EAGAIN) {
				rc = req->result; /* no room to plan without it */
			}
			continue;
		}
		if (!req->is_write && req->result == -ENODATA && io->nodata_by_column &&
		    req->len_bytes > COLUMN) {
			if (rc == 0 || rc == -EAGAIN)
				rc = -ENODATA;
			continue;
		}
		if (!req->is_write && nr_suspect_roles < 2 && !role_suspect(role) &&
		    array_can_spare(a, role, suspect_roles, nr_suspect_roles)) {
			suspect_roles[nr_suspect_roles++] = role;
			if (rc == 0)
				rc = -EAGAIN;
			continue;
		}
		bool failed_out = array_member_error(a, role, req->member, req->result,
		                                     req->is_write);
		if (!failed_out)
			rc = req->result;
		else if (!req->is_write && rc == 0)
			rc = -EAGAIN;
	}
	return rc;
}

/* ---- bands ------------------------------------------------------------ */

/* First column after c0 (and before c1) where some chunk changes state. */
static uint32_t band_end(const struct stripe_row *r, uint32_t c0, uint32_t c1)
{
	for (uint32_t c = c0 + 1; c < c1; c++)
		for (int k = 0; k < r->lay.nr_data; k++)
			if (r->state[k][c] != r->state[k][c0])
				return c;
	return c1;
}

static void band_set_state(struct stripe_row *r, int k, uint32_t c0, uint32_t c1,
                           enum column_state to)
{
	for (uint32_t c = c0; c < c1; c++) {
		if (r->state[k][c] == COLUMN_DIRTY && to != COLUMN_DIRTY)
			r->nr_dirty--;
		else if (r->state[k][c] != COLUMN_DIRTY && to == COLUMN_DIRTY)
			r->nr_dirty++;
		r->state[k][c] = (uint8_t)to;
	}
}

/* Whether role's chunk of row r can be read: from the member in sync, or
 * from the member being rebuilt where its rebuild has passed the row. */
static bool role_present(const struct raid_array *a, const struct stripe_row *r, int role)
{
	return role >= 0 && !role_suspect(role) &&
	       array_read_source(a, role, r->lay.member_off_bytes,
	                         (uint64_t)r->nr_columns * COLUMN) != NULL;
}

/* Whether writes of the row's columns [c0, c1) on role have a member. */
static bool role_writable(struct raid_array *a, const struct stripe_row *r, int role,
                          uint32_t c0, uint32_t c1)
{
	return role >= 0 &&
	       array_write_target(a, role, r->lay.member_off_bytes + (uint64_t)c0 * COLUMN,
	                          (uint64_t)(c1 - c0) * COLUMN) != NULL;
}

/* Slots of a band in syndrome order: data by slot, then P, then Q. */
struct band_vec {
	void *by_slot[RAID_MAX_MEMBERS + 2];
	int role[RAID_MAX_MEMBERS + 2];
	int nr_slots;
};

static void band_vec_roles(struct band_vec *v, const struct stripe_row *r, int nr_parity)
{
	int nr_data = r->lay.nr_data;
	for (int k = 0; k < nr_data; k++)
		v->role[r->lay.data_qslot[k]] = r->lay.data_role[k];
	v->role[nr_data] = r->lay.p_role;
	if (nr_parity == 2)
		v->role[nr_data + 1] = r->lay.q_role;
	v->nr_slots = nr_data + nr_parity;
}

/* Reads of the row's parity into stored (slot s's at (s - nr_data) *
 * stride), for columns [c0, c1): only of the parity roles present, as a
 * degraded RAID6 compares what it has left. Returns which were added (bit
 * p for parity p). */
static int band_io_add_parity_present(struct band_io *io, struct raid_array *a,
                                      const struct stripe_row *r, const struct band_vec *v,
                                      uint8_t *stored, size_t stride, uint32_t c0, uint32_t c1)
{
	int nr_data = r->lay.nr_data, present_mask = 0;

	for (int s = nr_data; s < v->nr_slots; s++) {
		if (!role_present(a, r, v->role[s]))
			continue;
		present_mask |= 1 << (s - nr_data);
		band_io_add(io, a, r, v->role[s], stored + (size_t)(s - nr_data) * stride, c0, c1,
		            false);
	}
	return present_mask;
}

/* Bring the invalid columns of a uniform band into memory for the chunks
 * in want (all invalid chunks if want_all), rebuilding from parity when a
 * wanted chunk's member is missing. */
static int band_load(struct raid_array *a, struct stripe_row *r, uint32_t c0, uint32_t c1,
                     int want_k, bool want_all)
{
	int nr_data = r->lay.nr_data, nr_parity = row_nr_parity(a);
	size_t len = (size_t)(c1 - c0) * COLUMN;
	size_t at = (size_t)c0 * COLUMN;
	bool need_rebuild = false, any = false;
	/* band_load_retry goes column by column on -ENODATA */
	struct band_io io = { .nr = 0, .nodata_by_column = c1 - c0 > 1 };

	for (int k = 0; k < nr_data; k++) {
		if (r->state[k][c0] != COLUMN_INVALID || !(want_all || k == want_k))
			continue;
		any = true;
		if (!role_present(a, r, r->lay.data_role[k]))
			need_rebuild = true;
	}
	if (!any)
		return 0;
	/* A rebuild takes each chunk's state at c0 for the whole band. A
	 * plain read's band is uniform only in the chunk read (row_load_range);
	 * when that chunk's member fails under it, the retry lands here with
	 * other chunks mixed (a dirty column after a clean or invalid one):
	 * rebuild each uniform part on its own, or dirty bytes would be
	 * overwritten by the member's, or fed into the reconstruction. */
	if (need_rebuild && band_end(r, c0, c1) < c1) {
		for (uint32_t s = c0, e; s < c1; s = e) {
			e = band_end(r, s, c1);
			int rc;
			/* Planned again here: the parts done are no longer
			 * invalid, and a retry of the whole band from its first
			 * column would take it for loaded. */
			do
				rc = band_load(a, r, s, e, want_k, want_all);
			while (rc == -EAGAIN);
			if (rc < 0)
				return rc;
		}
		return 0;
	}
	if (!need_rebuild) {
		for (int k = 0; k < nr_data; k++)
			if (r->state[k][c0] == COLUMN_INVALID && (want_all || k == want_k))
				band_io_add(&io, a, r, r->lay.data_role[k], r->data[k] + at, c0, c1,
				            false);
		int rc = band_io_run(&io, a);
		if (rc < 0)
			return rc;
		for (int k = 0; k < nr_data; k++)
			if (r->state[k][c0] == COLUMN_INVALID && (want_all || k == want_k))
				band_set_state(r, k, c0, c1, COLUMN_CLEAN);
		return 0;
	}

	/* Rebuild: gather what the members hold now (old contents of dirty
	 * columns included), recover the missing slots, keep the data. */
	struct band_vec v;
	int lost[2], nr_lost = 0;
	uint8_t *scratch = scratch_get(len * (size_t)(nr_data + nr_parity));
	if (!scratch)
		return -ENOMEM;
	band_vec_roles(&v, r, nr_parity);
	for (int k = 0; k < nr_data; k++) {
		int slot = r->lay.data_qslot[k];
		bool present = role_present(a, r, r->lay.data_role[k]);
		switch (r->state[k][c0]) {
		case COLUMN_CLEAN:
			v.by_slot[slot] = r->data[k] + at;
			break;
		case COLUMN_DIRTY:
			v.by_slot[slot] = scratch + (size_t)slot * len;
			if (present)
				band_io_add(&io, a, r, v.role[slot], v.by_slot[slot], c0, c1, false);
			break;
		default:
			v.by_slot[slot] = r->data[k] + at;
			if (present)
				band_io_add(&io, a, r, v.role[slot], v.by_slot[slot], c0, c1, false);
			break;
		}
		if (!present && r->state[k][c0] != COLUMN_CLEAN) {
			if (nr_lost == nr_parity)
				return -EIO;
			lost[nr_lost++] = slot;
		}
	}
	for (int s = nr_data; s < v.nr_slots; s++) {
		v.by_slot[s] = scratch + (size_t)s * len;
		if (role_present(a, r, v.role[s])) {
			band_io_add(&io, a, r, v.role[s], v.by_slot[s], c0, c1, false);
		} else {
			if (nr_lost == nr_parity)
				return -EIO;
			lost[nr_lost++] = s;
		}
	}
	int rc = band_io_run(&io, a);
	if (rc < 0)
		return rc;
	if (parity_recover(v.by_slot, nr_data, nr_parity == 2, lost, nr_lost, len) < 0)
		return -EIO;
	/* Bytes of members that failed to read: write back what they hold. */
	for (int i = 0; i < nr_lost; i++) {
		int role = v.role[lost[i]];
		struct member *m = role_suspect(role) ? a->slot[role] : NULL;
		if (!m || a->read_only)
			continue;
		int wrc = member_write(m, v.by_slot[lost[i]], len,
		                       r->lay.member_off_bytes + (uint64_t)c0 * COLUMN);
		if (wrc == 0)
			array_logf(a, "read error on %s (role %d) corrected: %zu KiB rewritten from "
			           "the rest of row %llu",
			           m->abs_path, role, len / 1024, (unsigned long long)r->row);
		else
			array_member_error(a, role, m, wrc, true);
	}
	for (int k = 0; k < nr_data; k++)
		if (r->state[k][c0] == COLUMN_INVALID)
			band_set_state(r, k, c0, c1, COLUMN_CLEAN);
	return 0;
}

static int band_load_retry(struct raid_array *a, struct stripe_row *r, uint32_t c0, uint32_t c1,
                           int want_k, bool want_all)
{
	int rc;
	do
		rc = band_load(a, r, c0, c1, want_k, want_all);
	while (rc == -EAGAIN);
	/* Sectors in md's bad block log on more members than parity can
	 * cover in this band, maybe not in the same columns: column by
	 * column, each may still be rebuilt from what is left (and its
	 * logged sectors written back). The suspects of the last column
	 * stay: a flush that follows computes parity from the data, now
	 * all in memory, and writes every member. */
	if (rc == -ENODATA && c1 - c0 > 1) {
		rc = 0;
		for (uint32_t c = c0; c < c1 && rc == 0; c++) {
			suspects_clear();
			do
				rc = band_load(a, r, c, c + 1, want_k, want_all);
			while (rc == -EAGAIN);
		}
	}
	return rc;
}

/* Bytes of a row (all its members) per step when whole columns are
 * written with parity computed on the way: with the page cache copies of
 * the same bytes, what one CPU's cache holds comfortably (2 MiB of L2 on
 * the machine measured). The parity pass then brings a step's data into
 * the cache and the member writes copy it from there; over whole chunks
 * of 512 KiB it would have left the cache again, and every byte would
 * come from memory twice. */
#define ROW_SLICE_BYTES (512u * 1024u)

static uint32_t row_slice_columns(const struct raid_array *a)
{
	uint32_t columns = ROW_SLICE_BYTES / COLUMN / (uint32_t)a->geo.raid_disks;
	return columns ? columns : 1;
}

/* Write the dirty columns and the given parity of a uniform band. */
static int band_write_out(struct raid_array *a, struct stripe_row *r, uint32_t c0, uint32_t c1,
                          const struct band_vec *v)
{
	struct band_io io = { .nr = 0 };
	size_t at = (size_t)c0 * COLUMN;

	for (int k = 0; k < r->lay.nr_data; k++)
		if (r->state[k][c0] == COLUMN_DIRTY && role_writable(a, r, r->lay.data_role[k], c0, c1))
			band_io_add(&io, a, r, r->lay.data_role[k], r->data[k] + at, c0, c1, true);
	for (int s = r->lay.nr_data; s < v->nr_slots; s++)
		if (role_writable(a, r, v->role[s], c0, c1))
			band_io_add(&io, a, r, v->role[s], v->by_slot[s], c0, c1, true);
	return band_io_run(&io, a);
}

static void band_gen_parity(struct band_vec *v, int nr_data, int nr_parity, size_t len)
{
	if (nr_parity == 2)
		parity_gen_pq(v->by_slot, nr_data, v->by_slot[nr_data], v->by_slot[nr_data + 1], len);
	else
		parity_gen_p(v->by_slot, nr_data, v->by_slot[nr_data], len);
}

/* With every data column of band [c0, c1) in memory: compute the parity
 * and write it with the dirty columns, a slice at a time. v holds the
 * band's roles; scratch takes one slice of parity. */
static int band_write_full(struct raid_array *a, struct stripe_row *r, uint32_t c0, uint32_t c1,
                           struct band_vec *v, uint8_t *scratch)
{
	int nr_data = r->lay.nr_data, nr_parity = v->nr_slots - nr_data;
	uint32_t step = row_slice_columns(a);

	for (uint32_t s0 = c0; s0 < c1; s0 += step) {
		uint32_t s1 = c1 - s0 > step ? s0 + step : c1;
		size_t at = (size_t)s0 * COLUMN, len = (size_t)(s1 - s0) * COLUMN;

		for (int k = 0; k < nr_data; k++)
			v->by_slot[r->lay.data_qslot[k]] = r->data[k] + at;
		for (int s = nr_data; s < v->nr_slots; s++)
			v->by_slot[s] = scratch + (size_t)(s - nr_data) * len;
		band_gen_parity(v, nr_data, nr_parity, len);
		int rc = band_write_out(a, r, s0, s1, v);
		if (rc < 0)
			return rc;
	}
	return 0;
}

static int band_flush(struct raid_array *a, struct stripe_row *r, uint32_t c0, uint32_t c1,
                      struct stripe_row_stats *stats)
{
	int nr_data = r->lay.nr_data, nr_parity = row_nr_parity(a);
	size_t len = (size_t)(c1 - c0) * COLUMN;
	size_t at = (size_t)c0 * COLUMN;
	int nr_dirty = 0, nr_invalid = 0, nr_missing = 0;
	struct band_vec v;
	int rc;

	band_vec_roles(&v, r, nr_parity);
	for (int k = 0; k < nr_data; k++) {
		nr_dirty += r->state[k][c0] == COLUMN_DIRTY;
		nr_invalid += r->state[k][c0] == COLUMN_INVALID;
	}
	if (nr_dirty == 0)
		return 0;
	for (int s = 0; s < v.nr_slots; s++)
		nr_missing += !role_present(a, r, v.role[s]);

	uint8_t *scratch = scratch_get(len * (size_t)(nr_data + nr_parity));
	if (!scratch)
		return -ENOMEM;
	for (int s = nr_data; s < v.nr_slots; s++)
		v.by_slot[s] = scratch + (size_t)s * len;

	int rmw_reads = nr_dirty + nr_parity;
	bool rmw = nr_missing == 0 && rmw_reads < nr_invalid;
	uint8_t *old[RAID_MAX_MEMBERS];
	if (rmw) {
		/* Read-modify-write: old data of the dirty chunks and old
		 * parity, then fold the change into the parity. */
		struct band_io io = { .nr = 0 };
		for (int k = 0; k < nr_data; k++) {
			if (r->state[k][c0] != COLUMN_DIRTY)
				continue;
			old[k] = scratch + (size_t)r->lay.data_qslot[k] * len;
			band_io_add(&io, a, r, r->lay.data_role[k], old[k], c0, c1, false);
		}
		for (int s = nr_data; s < v.nr_slots; s++)
			band_io_add(&io, a, r, v.role[s], v.by_slot[s], c0, c1, false);
		rc = band_io_run(&io, a);
		/* Sectors in md's bad block log on more of these members
		 * than parity covers: the other way, which reads the rest
		 * of the band column by column, may still find each. */
		rmw = rc != -ENODATA;
		if (rc < 0 && rmw)
			return rc;
	}
	if (rmw) {
		for (int k = 0; k < nr_data; k++) {
			if (r->state[k][c0] != COLUMN_DIRTY)
				continue;
			parity_update_p(v.by_slot[nr_data], old[k], r->data[k] + at, len);
			if (nr_parity == 2)
				parity_update_q(v.by_slot[nr_data + 1], old[k], r->data[k] + at,
				                r->lay.data_qslot[k], len);
		}
		rc = band_write_out(a, r, c0, c1, &v);
		if (rc < 0)
			return rc;
		stats->rmw++;
	} else {
		/* Reconstruct-write (or degraded): all data in memory, then
		 * parity from scratch, a slice at a time. */
		rc = band_load_retry(a, r, c0, c1, -1, true);
		if (rc == 0)
			rc = band_write_full(a, r, c0, c1, &v, scratch);
		if (rc < 0)
			return rc;
		if (nr_missing)
			stats->degraded++;
		else if (nr_invalid == 0)
			stats->full_row++;
		else
			stats->rcw++;
	}
	for (int k = 0; k < nr_data; k++)
		if (r->state[k][c0] == COLUMN_DIRTY)
			band_set_state(r, k, c0, c1, COLUMN_CLEAN);
	return 0;
}

/* ---- the row's entry points ------------------------------------------ */

int stripe_row_write(struct raid_array *a, struct stripe_row *r, int k, uint64_t lo,
                     uint64_t hi, const void *src)
{
	suspects_clear();
	uint32_t c_first = (uint32_t)(lo / COLUMN), c_last = (uint32_t)((hi - 1) / COLUMN);
	int rc;

	/* A partly covered column keeps the bytes around the write, so its
	 * old contents must be in memory first. */
	if (lo % COLUMN && r->state[k][c_first] == COLUMN_INVALID) {
		rc = band_load_retry(a, r, c_first, c_first + 1, k, false);
		if (rc < 0)
			return rc;
	}
	if (hi % COLUMN && r->state[k][c_last] == COLUMN_INVALID) {
		rc = band_load_retry(a, r, c_last, c_last + 1, k, false);
		if (rc < 0)
			return rc;
	}
	memcpy(r->data[k] + lo, src, (size_t)(hi - lo));
	band_set_state(r, k, c_first, c_last + 1, COLUMN_DIRTY);
	return 0;
}

/* Load [c0, c1) of chunk k (or of every chunk when k < 0). */
static int row_load_range(struct raid_array *a, struct stripe_row *r, int k, uint32_t c0,
                          uint32_t c1)
{
	bool present = k >= 0 && role_present(a, r, r->lay.data_role[k]);

	while (c0 < c1) {
		uint32_t end;
		int rc;

		if (present) {
			/* Only chunk k's own states matter for a plain read. */
			end = c0 + 1;
			while (end < c1 && r->state[k][end] == r->state[k][c0])
				end++;
			if (r->state[k][c0] != COLUMN_INVALID) {
				c0 = end;
				continue;
			}
			rc = band_load_retry(a, r, c0, end, k, false);
			if (rc < 0)
				return rc;
			if (!role_present(a, r, r->lay.data_role[k]))
				present = false; /* it failed while reading: go on rebuilding */
		} else {
			end = band_end(r, c0, c1);
			rc = band_load_retry(a, r, c0, end, k, k < 0);
			if (rc < 0)
				return rc;
		}
		c0 = end;
	}
	return 0;
}

int stripe_row_read(struct raid_array *a, struct stripe_row *r, int k, uint64_t lo,
                    uint64_t hi, void *dst, bool *was_cached)
{
	uint32_t c0 = (uint32_t)(lo / COLUMN), c1 = (uint32_t)((hi + COLUMN - 1) / COLUMN);
	bool cached = true;

	suspects_clear();
	for (uint32_t c = c0; c < c1 && cached; c++)
		cached = r->state[k][c] != COLUMN_INVALID;
	if (!cached) {
		int rc = row_load_range(a, r, k, c0, c1);
		if (rc < 0)
			return rc;
	}
	memcpy(dst, r->data[k] + lo, (size_t)(hi - lo));
	if (was_cached)
		*was_cached = cached;
	return 0;
}

bool stripe_row_direct_read_req(struct raid_array *a, uint64_t row, int k, uint64_t lo,
                                uint64_t hi, void *dst, struct io_req *req)
{
	struct row_layout lay;

	a->ops->row_layout(&a->geo, row, &lay);
	int role = lay.data_role[k];
	struct member *m = role >= 0 ? array_read_source(a, role, lay.member_off_bytes + lo, hi - lo)
	                             : NULL;
	if (!m)
		return false;
	memset(req, 0, sizeof(*req));
	req->member = m;
	req->buf = dst;
	req->len_bytes = (size_t)(hi - lo);
	req->data_off_bytes = lay.member_off_bytes + lo;
	return true;
}

static bool row_all_invalid(const struct stripe_row *r)
{
	for (int k = 0; k < r->lay.nr_data; k++)
		for (uint32_t c = 0; c < r->nr_columns; c++)
			if (r->state[k][c] != COLUMN_INVALID)
				return false;
	return true;
}

int stripe_row_load_all(struct raid_array *a, struct stripe_row *r)
{
	suspects_clear();
	/* A row with nothing in memory (read-ahead, scrub) is one band: its
	 * chunks are read in one batch, from all members at once. */
	if (row_all_invalid(r) && stripe_row_all_present(a, r))
		return band_load_retry(a, r, 0, r->nr_columns, -1, true);
	for (int k = 0; k < r->lay.nr_data; k++) {
		int rc = role_present(a, r, r->lay.data_role[k]) ?
		                 row_load_range(a, r, k, 0, r->nr_columns) :
		                 row_load_range(a, r, -1, 0, r->nr_columns);
		if (rc < 0)
			return rc;
	}
	return 0;
}

/* band_flush, planned again while a member fails under it. */
static int band_flush_retry(struct raid_array *a, struct stripe_row *r, uint32_t c0, uint32_t c1,
                            struct stripe_row_stats *stats)
{
	int rc;
	do
		rc = band_flush(a, r, c0, c1, stats);
	while (rc == -EAGAIN);
	return rc;
}

int stripe_row_flush(struct raid_array *a, struct stripe_row *r, struct stripe_row_stats *stats)
{
	uint32_t c0 = 0;
	int first_error = 0;

	suspects_clear();
	while (r->nr_dirty && c0 < r->nr_columns) {
		uint32_t end = band_end(r, c0, r->nr_columns);
		int rc = band_flush_retry(a, r, c0, end, stats);
		/* A column that md's bad block log makes unwritable (no
		 * member holds what its parity needs) must not take the
		 * band's other columns, nor the row's other bands, with it:
		 * each on its own, the error kept for the lost ones (md
		 * fails only that stripe). */
		if (rc == -ENODATA && end - c0 > 1) {
			rc = 0;
			for (uint32_t c = c0; c < end; c++) {
				suspects_clear();
				int crc = band_flush_retry(a, r, c, c + 1, stats);
				if (crc < 0 && first_error == 0)
					first_error = crc;
			}
		}
		if (rc == -ENODATA) {
			if (first_error == 0)
				first_error = rc;
		} else if (rc < 0) {
			return rc;
		}
		c0 = end;
	}
	return first_error;
}

bool stripe_row_all_present(const struct raid_array *a, const struct stripe_row *r)
{
	if (!role_present(a, r, r->lay.p_role))
		return false;
	if (row_nr_parity(a) == 2 && !role_present(a, r, r->lay.q_role))
		return false;
	for (int k = 0; k < r->lay.nr_data; k++)
		if (!role_present(a, r, r->lay.data_role[k]))
			return false;
	return true;
}

/* A row written whole: its roles, where each data chunk's new bytes are,
 * and which chunks are written. */
struct whole_row {
	struct band_vec v;
	bool held[RAID_MAX_MEMBERS];            /* chunk k's bytes are the row's own */
	bool changed[RAID_MAX_MEMBERS];         /* chunk k differs from its member */
};

static void whole_row_prepare(struct stripe_row *r, int nr_parity, const void *const chunk_src[],
                              struct whole_row *w)
{
	size_t len = (size_t)r->nr_columns * COLUMN;

	band_vec_roles(&w->v, r, nr_parity);
	for (int k = 0; k < r->lay.nr_data; k++) {
		const uint8_t *src = chunk_src[k];
		/* A chunk the row holds clean is on its member already: it
		 * only feeds the parity. */
		w->changed[k] = src || memchr(r->state[k], COLUMN_DIRTY, r->nr_columns);
		/* A source ISA-L cannot read in place costs one copy into
		 * the row, which then stays cached. */
		if (src && (uintptr_t)src % PARITY_SRC_ALIGN_BYTES) {
			memcpy(r->data[k], src, len);
			src = NULL;
		}
		w->held[k] = src == NULL;
		w->v.by_slot[r->lay.data_qslot[k]] = w->held[k] ? r->data[k] : (void *)src;
	}
}

/* Whatever the row held is superseded; after a failed write only the
 * members can say what they hold. */
static void whole_row_finish(struct stripe_row *r, const bool held[], int rc,
                             struct stripe_row_stats *stats)
{
	for (int k = 0; k < r->lay.nr_data; k++)
		memset(r->state[k], rc == 0 && held[k] ? COLUMN_CLEAN : COLUMN_INVALID,
		       r->nr_columns);
	r->nr_dirty = 0;
	if (rc == 0)
		stats->full_row++;
}

int stripe_row_write_whole(struct raid_array *a, struct stripe_row *r,
                           const void *const chunk_src[], struct stripe_row_stats *stats)
{
	int nr_data = r->lay.nr_data, nr_parity = row_nr_parity(a);
	uint32_t slice_columns = row_slice_columns(a);
	uint8_t *scratch = scratch_get((size_t)slice_columns * COLUMN * (size_t)nr_parity);
	struct band_io io = { .nr = 0 };
	struct whole_row w;

	if (!scratch)
		return -ENOMEM;
	suspects_clear();
	whole_row_prepare(r, nr_parity, chunk_src, &w);
	int rc = 0;
	/* Slice by slice (ROW_SLICE_BYTES). */
	for (uint32_t c0 = 0; c0 < r->nr_columns && rc == 0; c0 += slice_columns) {
		uint32_t c1 = r->nr_columns - c0 > slice_columns ? c0 + slice_columns : r->nr_columns;
		size_t at = (size_t)c0 * COLUMN, slice_len = (size_t)(c1 - c0) * COLUMN;
		struct band_vec slice = w.v;

		for (int k = 0; k < nr_data; k++)
			slice.by_slot[r->lay.data_qslot[k]] =
				(uint8_t *)w.v.by_slot[r->lay.data_qslot[k]] + at;
		for (int s = nr_data; s < w.v.nr_slots; s++)
			slice.by_slot[s] = scratch + (size_t)(s - nr_data) * slice_len;
		band_gen_parity(&slice, nr_data, nr_parity, slice_len);
		io.nr = 0;
		for (int k = 0; k < nr_data; k++)
			if (w.changed[k] && role_writable(a, r, r->lay.data_role[k], c0, c1))
				band_io_add(&io, a, r, r->lay.data_role[k],
				            slice.by_slot[r->lay.data_qslot[k]], c0, c1, true);
		for (int s = nr_data; s < w.v.nr_slots; s++)
			if (role_writable(a, r, w.v.role[s], c0, c1))
				band_io_add(&io, a, r, w.v.role[s], slice.by_slot[s], c0, c1, true);
		rc = band_io_run(&io, a);
	}
	whole_row_finish(r, w.held, rc, stats);
	return rc;
}

int stripe_run_max_rows(const struct raid_array *a)
{
	uint64_t row_bytes = a->geo.chunk_bytes * (uint64_t)a->geo.raid_disks;
	uint64_t rows = ROW_SLICE_BYTES / row_bytes;

	if (rows < 1)
		return 1;
	return rows > STRIPE_RUN_MAX_ROWS ? STRIPE_RUN_MAX_ROWS : (int)rows;
}

/* Whether rows can go out as one run: consecutive, every data chunk new,
 * and every member in the array with nothing being rebuilt or copied (a
 * rebuild's progress is per range, so its writes go row by row). */
static bool rows_form_run(const struct raid_array *a, struct stripe_row *const rows[],
                          int nr_rows, const void *const chunk_src[])
{
	int nr_data = rows[0]->lay.nr_data;
	uint64_t chunk = a->geo.chunk_bytes;

	if (nr_rows < 2 || nr_rows > STRIPE_RUN_MAX_ROWS ||
	    nr_data + row_nr_parity(a) != a->geo.raid_disks)
		return false;
	for (int role = 0; role < a->geo.raid_disks; role++)
		if (!a->slot[role] || a->rebuilding[role])
			return false;
	for (int i = 0; i < nr_rows; i++) {
		if (rows[i]->row != rows[0]->row + (uint64_t)i ||
		    rows[i]->lay.member_off_bytes != rows[0]->lay.member_off_bytes + (uint64_t)i * chunk)
			return false;
		for (int k = 0; k < nr_data; k++)
			if (!chunk_src[(size_t)i * (size_t)nr_data + (size_t)k])
				return false;
	}
	return true;
}

static int rows_write_one_by_one(struct raid_array *a, struct stripe_row *const rows[],
                                 int nr_rows, const void *const chunk_src[],
                                 struct stripe_row_stats *stats)
{
	int rc = 0;

	for (int i = 0; i < nr_rows && rc == 0; i++)
		rc = stripe_row_write_whole(a, rows[i],
		                            chunk_src + (size_t)i * (size_t)rows[i]->lay.nr_data, stats);
	return rc;
}

_Static_assert(STRIPE_RUN_MAX_ROWS <= MEMBER_WRITEV_MAX,
               "a run's write to one member must fit one member_writev");

int stripe_rows_write_whole(struct raid_array *a, struct stripe_row *const rows[], int nr_rows,
                            const void *const chunk_src[], struct stripe_row_stats *stats)
{
	int nr_data = rows[0]->lay.nr_data, nr_parity = row_nr_parity(a);
	int nr_roles = a->geo.raid_disks;

	if (!rows_form_run(a, rows, nr_rows, chunk_src))
		return rows_write_one_by_one(a, rows, nr_rows, chunk_src, stats);
	size_t chunk = (size_t)rows[0]->nr_columns * COLUMN;
	size_t parity_bytes = (size_t)nr_rows * (size_t)nr_parity * chunk;
	uint8_t *scratch = scratch_get(parity_bytes +
	                               (size_t)nr_roles * (size_t)nr_rows * sizeof(struct iovec));
	bool held[STRIPE_RUN_MAX_ROWS][RAID_MAX_MEMBERS];
	struct band_io io = { .nr = 0 };

	if (!scratch) /* row by row needs only a slice of scratch */
		return rows_write_one_by_one(a, rows, nr_rows, chunk_src, stats);
	/* iov[role][i]: what row i puts on role's member. */
	struct iovec *iov = (struct iovec *)(void *)(scratch + parity_bytes);
	suspects_clear();
	for (int i = 0; i < nr_rows; i++) {
		struct whole_row w;

		whole_row_prepare(rows[i], nr_parity, chunk_src + (size_t)i * (size_t)nr_data, &w);
		memcpy(held[i], w.held, sizeof(w.held));
		for (int s = nr_data; s < w.v.nr_slots; s++)
			w.v.by_slot[s] = scratch + ((size_t)i * (size_t)nr_parity +
			                            (size_t)(s - nr_data)) * chunk;
		band_gen_parity(&w.v, nr_data, nr_parity, chunk);
		for (int s = 0; s < w.v.nr_slots; s++)
			iov[(size_t)w.v.role[s] * (size_t)nr_rows + (size_t)i] =
				(struct iovec){ .iov_base = w.v.by_slot[s], .iov_len = chunk };
	}
	/* A member's chunks of consecutive rows are neighbours: one write
	 * each, where row by row there would be one per row. */
	uint64_t run_off = rows[0]->lay.member_off_bytes, run_bytes = (uint64_t)nr_rows * chunk;
	for (int role = 0; role < nr_roles; role++) {
		struct io_req *req = &io.reqs[io.nr];
		/* rows_form_run saw every member in; one may have been failed
		 * out since (its bytes then follow from the others'). */
		struct member *m = array_write_target(a, role, run_off, run_bytes);

		if (!m)
			continue;
		*req = (struct io_req){ .member = m,
		                        .iov = iov + (size_t)role * (size_t)nr_rows,
		                        .nr_iov = nr_rows,
		                        .len_bytes = run_bytes,
		                        .data_off_bytes = run_off,
		                        .is_write = true };
		io.roles[io.nr++] = role;
	}
	int rc = band_io_run(&io, a);
	for (int i = 0; i < nr_rows; i++)
		whole_row_finish(rows[i], held[i], rc, stats);
	if (rc == 0)
		stats->run_rows += (uint64_t)nr_rows;
	return rc;
}

/* Zeros to role's chunks of rows[0..nr_rows) (data and parity alike),
 * queued on io: one request for the whole run when as_run, else one
 * row's (nr_rows 1), as a write reaches the role's members (the one being
 * rebuilt or copied included where it is done). */
static void rows_zero_role(struct band_io *io, struct raid_array *a, struct stripe_row *const rows[],
                           int nr_rows, int role, bool as_run)
{
	if (!as_run) {
		if (!role_writable(a, rows[0], role, 0, rows[0]->nr_columns))
			return;
		int first = io->nr;
		band_io_add(io, a, rows[0], role, NULL, 0, rows[0]->nr_columns, true);
		for (int q = first; q < io->nr; q++)
			io->reqs[q].zero = true;
		return;
	}
	struct member *m = array_write_target(a, role, rows[0]->lay.member_off_bytes,
	                                      (uint64_t)nr_rows * a->geo.chunk_bytes);
	if (!m)
		return;
	io->reqs[io->nr] = (struct io_req){ .member = m,
	                                    .len_bytes = (size_t)nr_rows * a->geo.chunk_bytes,
	                                    .data_off_bytes = rows[0]->lay.member_off_bytes,
	                                    .is_write = true,
	                                    .zero = true };
	io->roles[io->nr++] = role;
}

int stripe_rows_zero(struct raid_array *a, struct stripe_row *const rows[], int nr_rows)
{
	uint64_t chunk = a->geo.chunk_bytes;
	/* Consecutive rows are neighbours on every member: one request per
	 * member for all of them, unless a member is being rebuilt or
	 * copied, whose progress is per range (then row by row). */
	bool as_run = true;
	int rc = 0;

	for (int i = 1; i < nr_rows; i++)
		as_run &= rows[i]->lay.member_off_bytes ==
		          rows[0]->lay.member_off_bytes + (uint64_t)i * chunk;
	for (int role = 0; role < a->geo.raid_disks; role++)
		as_run &= a->rebuilding[role] == NULL;
	suspects_clear();
	int group = as_run ? nr_rows : 1;
	for (int first = 0; first < nr_rows && rc == 0; first += group) {
		struct band_io io = { .nr = 0 };

		for (int role = 0; role < a->geo.raid_disks; role++)
			rows_zero_role(&io, a, rows + first, group, role, as_run);
		rc = band_io_run(&io, a);
	}
	/* What the rows held is superseded, and after a failed write only
	 * the members can say what they hold: either way, read it again. */
	for (int i = 0; i < nr_rows; i++)
		stripe_row_reset(rows[i], a, rows[i]->row);
	return rc;
}

bool stripe_row_chunk_held(const struct stripe_row *r, int k)
{
	return memchr(r->state[k], COLUMN_INVALID, r->nr_columns) == NULL;
}

/* P (and Q) of a whole row whose data is all in memory, into scratch;
 * v then holds every slot of the row. */
static int row_full_parity(struct raid_array *a, struct stripe_row *r, struct band_vec *v)
{
	int nr_data = r->lay.nr_data, nr_parity = row_nr_parity(a);
	size_t len = (size_t)r->nr_columns * COLUMN;
	uint8_t *scratch = scratch_get(len * (size_t)nr_parity);

	if (!scratch)
		return -ENOMEM;
	band_vec_roles(v, r, nr_parity);
	for (int k = 0; k < nr_data; k++)
		v->by_slot[r->lay.data_qslot[k]] = r->data[k];
	for (int s = nr_data; s < v->nr_slots; s++)
		v->by_slot[s] = scratch + (size_t)(s - nr_data) * len;
	band_gen_parity(v, nr_data, nr_parity, len);
	return 0;
}

int stripe_row_write_parity(struct raid_array *a, struct stripe_row *r)
{
	int nr_parity = row_nr_parity(a);
	uint8_t *scratch = scratch_get((size_t)row_slice_columns(a) * COLUMN * (size_t)nr_parity);
	struct band_vec v;

	if (!scratch)
		return -ENOMEM;
	/* Every column is clean: only P (and Q) are written. */
	band_vec_roles(&v, r, nr_parity);
	return band_write_full(a, r, 0, r->nr_columns, &v, scratch);
}

int stripe_row_rebuild_role(struct raid_array *a, struct stripe_row *r, int role,
                            struct member *target)
{
	size_t len = (size_t)r->nr_columns * COLUMN;
	const void *src = NULL;

	for (int k = 0; k < r->lay.nr_data; k++)
		if (r->lay.data_role[k] == role)
			src = r->data[k];
	if (!src) {
		struct band_vec v;
		int rc = row_full_parity(a, r, &v);
		if (rc < 0)
			return rc;
		for (int s = r->lay.nr_data; s < v.nr_slots; s++)
			if (v.role[s] == role)
				src = v.by_slot[s];
	}
	if (!src)
		return -EINVAL;
	int rc = member_write(target, src, len, r->lay.member_off_bytes);
	if (rc < 0)
		array_rebuild_target_failed(a, role, target, rc);
	return rc;
}

/* Column c of the row on its own: every data chunk's bytes in memory
 * (rebuilt from parity where a member is missing or logs the sectors),
 * and v pointing at them and at the parity computed from them, in the
 * thread's scratch, followed by room for `extra` more columns (*extra_at).
 * -ENODATA when no member holds what the column needs. */
static int column_with_parity(struct raid_array *a, struct stripe_row *r, uint32_t c,
                              struct band_vec *v, size_t extra, uint8_t **extra_at)
{
	int nr_data = r->lay.nr_data, nr_parity = row_nr_parity(a);
	size_t col = (size_t)c * COLUMN;

	suspects_clear();
	int rc = band_load_retry(a, r, c, c + 1, -1, true);
	if (rc < 0)
		return rc;
	/* fetched after the load, which may grow the thread's scratch */
	uint8_t *scratch = scratch_get((size_t)COLUMN * ((size_t)nr_parity + extra));
	if (!scratch)
		return -ENOMEM;
	band_vec_roles(v, r, nr_parity);
	for (int k = 0; k < nr_data; k++)
		v->by_slot[r->lay.data_qslot[k]] = r->data[k] + col;
	for (int s = nr_data; s < v->nr_slots; s++)
		v->by_slot[s] = scratch + (size_t)(s - nr_data) * COLUMN;
	band_gen_parity(v, nr_data, nr_parity, COLUMN);
	if (extra_at)
		*extra_at = scratch + (size_t)nr_parity * COLUMN;
	return 0;
}

int stripe_row_sync_columns(struct raid_array *a, struct stripe_row *r,
                            enum stripe_sync_mode mode, uint64_t *bad_columns,
                            uint64_t *lost_columns)
{
	int nr_data = r->lay.nr_data, nr_parity = row_nr_parity(a);

	for (uint32_t c = 0; c < r->nr_columns; c++) {
		struct band_vec v;
		uint8_t *stored;
		int rc = column_with_parity(a, r, c, &v, (size_t)nr_parity, &stored);
		if (rc == -ENODATA) {
			(*lost_columns)++;
			continue;
		}
		if (rc < 0)
			return rc;
		bool write = mode == STRIPE_SYNC_REWRITE;
		if (!write) {
			struct band_io io = { .nr = 0 };
			int present_mask =
				band_io_add_parity_present(&io, a, r, &v, stored, COLUMN, c, c + 1);
			rc = band_io_run(&io, a);
			bool differs = false;
			for (int p = 0; p < nr_parity && rc == 0; p++)
				differs |= (present_mask & 1 << p) &&
				           memcmp(v.by_slot[nr_data + p], stored + (size_t)p * COLUMN,
				                  COLUMN) != 0;
			if (rc == -EAGAIN || rc == -ENODATA) {
				write = !a->read_only; /* unreadable parity: written anew */
			} else if (rc < 0) {
				return rc;
			} else if (differs) {
				(*bad_columns)++;
				write = mode == STRIPE_SYNC_REPAIR;
			}
		}
		if (write) {
			rc = band_write_out(a, r, c, c + 1, &v);
			if (rc < 0)
				return rc;
		}
	}
	return 0;
}

int stripe_row_rebuild_role_columns(struct raid_array *a, struct stripe_row *r, int role,
                                    struct member *target)
{
	for (uint32_t c = 0; c < r->nr_columns; c++) {
		uint64_t at = r->lay.member_off_bytes + (uint64_t)c * COLUMN;
		struct band_vec v;
		int rc = column_with_parity(a, r, c, &v, 0, NULL);
		if (rc == -ENODATA) {
			rc = array_rebuild_lost(a, role, target, at, COLUMN);
			if (rc < 0)
				return rc;
			continue;
		}
		if (rc < 0)
			return rc;
		const void *src = NULL;
		for (int s = 0; s < v.nr_slots; s++)
			if (v.role[s] == role)
				src = v.by_slot[s];
		if (!src)
			return -EINVAL;
		rc = member_write(target, src, COLUMN, at);
		if (rc < 0) {
			array_rebuild_target_failed(a, role, target, rc);
			return rc;
		}
	}
	return 0;
}

/* RAID6: P and Q both disagree in column c. If one data chunk explains
 * both, say which member holds it (md's check only counts). */
static void stripe_row_blame(struct raid_array *a, struct stripe_row *r, uint32_t c,
                             const uint8_t *stored_p, const uint8_t *stored_q)
{
	void *data[RAID_MAX_MEMBERS];
	uint8_t *scratch = parity_buf_alloc(2 * COLUMN);
	size_t at = (size_t)c * COLUMN;

	if (!scratch)
		return;
	for (int k = 0; k < r->lay.nr_data; k++)
		data[r->lay.data_qslot[k]] = r->data[k] + at;
	int slot = parity_find_bad_slot(data, r->lay.nr_data, stored_p + at, stored_q + at, scratch,
	                                COLUMN);
	free(scratch);
	if (slot < 0)
		return;
	for (int k = 0; k < r->lay.nr_data; k++) {
		if (r->lay.data_qslot[k] != slot)
			continue;
		struct member *m = a->slot[r->lay.data_role[k]];
		array_logf(a,
		           "row %llu, bytes %zu-%zu of the chunk: the data on role %d (%s) is wrong; "
		           "P and Q agree on what it should be",
		           (unsigned long long)r->row, at, at + COLUMN - 1, r->lay.data_role[k],
		           m ? m->abs_path : "missing");
	}
}

int stripe_row_check(struct raid_array *a, struct stripe_row *r, uint64_t *bad_columns)
{
	int nr_data = r->lay.nr_data, nr_parity = row_nr_parity(a);
	size_t len = (size_t)r->nr_columns * COLUMN;
	/* stored P, Q, then the computed P, Q */
	uint8_t *scratch = scratch_get(len * (size_t)nr_parity * 2);
	struct band_io io = { .nr = 0 };
	struct band_vec v;

	if (!scratch)
		return -ENOMEM;
	band_vec_roles(&v, r, nr_parity);
	/* A degraded RAID6 compares the parity it has: P when Q is missing,
	 * Q otherwise (a missing data chunk was rebuilt from P, which then
	 * agrees by construction), as md's handle_parity_checks6. */
	int present_mask = band_io_add_parity_present(&io, a, r, &v, scratch, len, 0, r->nr_columns);
	int rc = band_io_run(&io, a);
	if (rc < 0)
		return rc;
	for (int k = 0; k < nr_data; k++)
		v.by_slot[r->lay.data_qslot[k]] = r->data[k];
	for (int s = nr_data; s < v.nr_slots; s++)
		v.by_slot[s] = scratch + (size_t)(nr_parity + s - nr_data) * len;
	band_gen_parity(&v, nr_data, nr_parity, len);
	for (uint32_t c = 0; c < r->nr_columns; c++) {
		size_t at = (size_t)c * COLUMN;
		int bad_mask = 0;
		for (int p = 0; p < nr_parity; p++)
			if ((present_mask & 1 << p) &&
			    memcmp(scratch + (size_t)p * len + at,
			           scratch + (size_t)(nr_parity + p) * len + at, COLUMN) != 0)
				bad_mask |= 1 << p;
		if (!bad_mask)
			continue;
		(*bad_columns)++;
		if (bad_mask == 3)
			stripe_row_blame(a, r, c, scratch, scratch + len);
	}
	return 0;
}
