/* stripe_io.c - what RAID5 and RAID6 share: the geometry common to the
 * parity levels, and their ops entry points, which hand volume I/O to the
 * stripe cache (stripe_cache.c) whose rows (stripe_row.c) do the parity
 * work. */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "bitmap.h"
#include "errmsg.h"
#include "parity.h"
#include "stripe_cache.h"
#include "stripe_io.h"
#include "stripe_row.h"

/* ---- geometry shared by the parity levels --------------------------- */

int stripe_geometry_init(struct raid_geometry *geo, int nr_parity, char *err, size_t errlen)
{
	int nr_data = geo->raid_disks - nr_parity;

	uint32_t chunk = geo->chunk_bytes;
	if (chunk < STRIPE_COLUMN_BYTES || (chunk & (chunk - 1)))
		return errmsg_fail(-EINVAL, err, errlen,
		                   "chunk of %u bytes: md's RAID5/6 need a power of two of at "
		                   "least 4 KiB",
		                   chunk);
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

/* ---- ops entry points ------------------------------------------------ */

int stripe_io_attach(struct raid_array *a)
{
	return stripe_cache_create(a, &a->cache);
}

void stripe_io_detach(struct raid_array *a)
{
	stripe_cache_destroy(a->cache);
	a->cache = NULL;
}

int stripe_io_flush(struct raid_array *a)
{
	return stripe_cache_flush(a);
}

size_t stripe_io_status(struct raid_array *a, char *buf, size_t len)
{
	return stripe_cache_status(a, buf, len);
}

int stripe_io_read(struct raid_array *a, void *buf, size_t len, uint64_t off)
{
	return stripe_cache_read(a, buf, len, off);
}

int stripe_io_write(struct raid_array *a, const void *buf, size_t len, uint64_t off)
{
	return stripe_cache_write(a, buf, len, off);
}

int stripe_io_zero(struct raid_array *a, size_t len, uint64_t off)
{
	return stripe_cache_zero(a, len, off);
}

int stripe_io_check(struct raid_array *a, uint64_t *mismatch_sectors)
{
	uint64_t rows = a->geo.dev_bytes / a->geo.chunk_bytes, bad_columns = 0;
	struct stripe_row r;
	int rc = stripe_row_init(&r, a, 0);

	for (uint64_t row = 0; row < rows && rc == 0; row++) {
		stripe_row_reset(&r, a, row);
		rc = stripe_row_load_all(a, &r);
		if (rc == 0)
			rc = stripe_row_check(a, &r, &bad_columns);
	}
	stripe_row_free(&r);
	*mismatch_sectors = bad_columns * (STRIPE_COLUMN_BYTES / SECTOR_BYTES);
	return rc;
}

uint64_t stripe_io_scrub_units(const struct raid_array *a)
{
	return a->geo.dev_bytes / a->geo.chunk_bytes;
}

void *stripe_io_scrub_begin(struct raid_array *a)
{
	struct stripe_row *r = calloc(1, sizeof(*r));
	if (r && stripe_row_init(r, a, 0) < 0) {
		free(r);
		r = NULL;
	}
	return r;
}

/* A row whose columns cannot all be loaded (md's bad block log on more
 * members than parity covers): scrubbed or resynced column by column,
 * the lost columns passed over and said so (reads of them fail). */
static int stripe_io_sync_columns(struct raid_array *a, struct stripe_row *r, uint64_t row,
                                  enum stripe_sync_mode mode, uint64_t *bad_columns)
{
	uint64_t lost = 0;
	/* A resync's rows are marked already (it runs before any request). */
	bool may_write = !a->read_only && mode != STRIPE_SYNC_REWRITE;
	int rc = may_write ? bitmap_start_write(a, r->lay.member_off_bytes, a->geo.chunk_bytes)
	                   : 0;
	if (rc == 0) {
		stripe_row_reset(r, a, row);
		rc = stripe_row_sync_columns(a, r, mode, bad_columns, &lost);
	}
	if (may_write)
		bitmap_end_write(a, r->lay.member_off_bytes, a->geo.chunk_bytes);
	if (lost)
		array_logf(a, "row %llu: %llu column(s) of 4 KiB in md's bad block log on more "
		           "members than parity covers: passed over (reads of them fail)",
		           (unsigned long long)row, (unsigned long long)lost);
	return rc;
}

int stripe_io_scrub_unit(struct raid_array *a, void *ctx, uint64_t row, bool repair,
                         uint64_t *mismatch_sectors)
{
	struct stripe_row *r = ctx;
	uint64_t bad_columns = 0;
	void *held;

	if (!r)
		return -ENOMEM;
	int rc = stripe_cache_hold(a, row, &held);
	if (rc < 0)
		return rc;
	stripe_row_reset(r, a, row);
	rc = stripe_row_load_all(a, r);
	if (rc == -ENODATA) {
		rc = stripe_io_sync_columns(a, r, row, repair ? STRIPE_SYNC_REPAIR : STRIPE_SYNC_CHECK,
		                            &bad_columns);
		stripe_cache_release(a, held);
		*mismatch_sectors = bad_columns * (STRIPE_COLUMN_BYTES / SECTOR_BYTES);
		return rc;
	}
	if (rc == 0)
		rc = stripe_row_check(a, r, &bad_columns);
	/* A parity chunk that failed to read (the data loaded) is, as md's
	 * sync does after a read error, written anew from the data, with
	 * nothing to compare in this row; if that write fails too, the
	 * member is failed. */
	bool parity_unreadable = rc == -EAGAIN && !a->read_only;
	if (parity_unreadable)
		rc = 0;
	if (rc == 0 && (parity_unreadable || (repair && bad_columns))) {
		/* A crash halfway through the new parity must leave the row
		 * marked for the resync at the next start. */
		rc = bitmap_start_write(a, r->lay.member_off_bytes, a->geo.chunk_bytes);
		if (rc == 0)
			rc = stripe_row_write_parity(a, r);
		bitmap_end_write(a, r->lay.member_off_bytes, a->geo.chunk_bytes);
		if (rc == 0 && parity_unreadable)
			array_logf(a, "read error on the parity of row %llu corrected: rewritten from "
			           "the data",
			           (unsigned long long)row);
	}
	stripe_cache_release(a, held);
	*mismatch_sectors = bad_columns * (STRIPE_COLUMN_BYTES / SECTOR_BYTES);
	return rc;
}

int stripe_io_recover_unit(struct raid_array *a, void *ctx, uint64_t row, int role,
                           struct member *target)
{
	struct stripe_row *r = ctx;
	uint64_t end = (row + 1) * a->geo.chunk_bytes;
	void *held;

	if (!r)
		return -ENOMEM;
	if (end <= atomic_load(&a->rebuilt_bytes[role]))
		return 1; /* rebuilt before a restart: nothing copied */
	/* The bitmap is asked with the row held (and flushed): a flush
	 * between the question and the skip would set the bit and leave the
	 * returning member out, as not rebuilt yet. */
	int rc = stripe_cache_hold(a, row, &held);
	if (rc < 0)
		return rc;
	bool needed = array_rebuild_needed(a, role, row * a->geo.chunk_bytes, a->geo.chunk_bytes);
	if (needed) {
		stripe_row_reset(r, a, row);
		rc = stripe_row_load_all(a, r);
		if (rc == 0)
			rc = stripe_row_rebuild_role(a, r, role, target);
		else if (rc == -ENODATA)
			rc = stripe_row_rebuild_role_columns(a, r, role, target);
	}
	if (rc == 0)
		array_recovery_advance(a, role, target, end);
	stripe_cache_release(a, held);
	return rc == 0 && !needed ? 1 : rc;
}

void stripe_io_scrub_end(struct raid_array *a, void *ctx)
{
	struct stripe_row *r = ctx;
	(void)a;
	if (r)
		stripe_row_free(r);
	free(r);
}

/* A replacement holds what its member held when it was copied, and takes
 * the member's writes after that; a crash can land between a write to the
 * member and the same write to the replacement. The resync gives the
 * replacement the row's data as well as its new parity (md's resync
 * writes a stripe's replacement devices too), or it would serve a chunk
 * that disagrees with the parity once the copy ends. A replacement that
 * fails the write is given up (stripe_row_rebuild_role): the member it
 * was to replace still serves. */
static void resync_replacements(struct raid_array *a, struct stripe_row *r, bool by_column)
{
	size_t len = (size_t)r->nr_columns * STRIPE_COLUMN_BYTES;

	for (int k = 0; k < r->lay.nr_data; k++) {
		int role = r->lay.data_role[k];
		struct member *copy =
			array_replacement_target(a, role, r->lay.member_off_bytes, len);
		if (!copy)
			continue;
		/* A row with sectors in md's bad block log goes column by
		 * column; what no member holds is logged on the copy too. */
		if (by_column)
			(void)stripe_row_rebuild_role_columns(a, r, role, copy);
		else
			(void)stripe_row_rebuild_role(a, r, role, copy);
	}
}

/* Recompute every row's parity from the data on the members. Runs before
 * the array serves requests, so rows of its own are enough. */
int stripe_io_resync(struct raid_array *a, uint64_t dev_lo, uint64_t dev_hi)
{
	uint64_t rows = a->geo.dev_bytes / a->geo.chunk_bytes;
	uint64_t first = dev_lo / a->geo.chunk_bytes;
	uint64_t end = (dev_hi + a->geo.chunk_bytes - 1) / a->geo.chunk_bytes;
	struct stripe_row r;
	int rc = stripe_row_init(&r, a, 0);

	if (end > rows)
		end = rows;
	for (uint64_t row = first; row < end && rc == 0; row++) {
		stripe_row_reset(&r, a, row);
		rc = stripe_row_load_all(a, &r);
		if (rc == 0) {
			rc = stripe_row_write_parity(a, &r);
			if (rc == 0)
				resync_replacements(a, &r, false);
		} else if (rc == -ENODATA) {
			uint64_t bad_columns = 0;
			rc = stripe_io_sync_columns(a, &r, row, STRIPE_SYNC_REWRITE, &bad_columns);
			if (rc == 0)
				resync_replacements(a, &r, true);
		}
	}
	stripe_row_free(&r);
	return rc;
}
