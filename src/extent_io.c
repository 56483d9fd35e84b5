/* extent_io.c - see extent_io.h.
 *
 * A request is cut into extents (pieces that map linearly onto their
 * copies) and the member I/O of all of them runs in parallel on the array's
 * I/O pool, so a 1 MiB request keeps every member busy at once.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "bitmap.h"
#include "extent_io.h"
#include "member_badblocks.h"
#include "io_pool.h"
#include "parity.h"
#include "read_balance.h"

/* Region of the volume a lock covers; writes are split at these bounds. */
#define EXTENT_LOCK_REGION_BYTES (64u * 1024u)

/* Requests per parallel batch. */
#define EXTENT_BATCH 64

/* Where the extent ext at volume offset off lies in md's resync address
 * space: the volume itself (raid10), or its copies' member offsets, the
 * same for every copy where md keeps a bitmap by member offset (raid1). */
static uint64_t extent_sync_off(const struct raid_array *a, uint64_t off,
                                const struct raid_extent *ext)
{
	return a->ops->sync_by_array_bytes ? off : ext->copies[0].member_off_bytes;
}

/* The sectors md's check counts where other differs from first, len bytes
 * of the volume at off: 8 per 4 KiB page that differs, or, for a level
 * whose md code counts its resync block (raid1, raid10), that block's
 * sectors once. A check's blocks do not end at a bitmap chunk's end (the
 * md oracle counted 256 for two 64 KiB blocks of a raid10 with 16 KiB
 * bitmap chunks). */
static uint64_t extent_mismatch_sectors(const struct raid_array *a, uint64_t off,
                                        const char *first, const char *other, size_t len)
{
	const size_t page = 4096;
	uint64_t block = a->ops->mismatch_block_bytes;
	uint64_t sectors = 0;

	for (size_t done = 0; done < len;) {
		size_t n = block ? (size_t)(block - (off + done) % block) : page;
		if (n > len - done)
			n = len - done;
		if (memcmp(first + done, other + done, n) != 0)
			sectors += block ? (n + SECTOR_BYTES - 1) / SECTOR_BYTES : page / SECTOR_BYTES;
		done += n;
	}
	return sectors;
}

/* Copy m of role failed to read at member offset at: write the good
 * bytes back (md's read-error handling); only if that write fails too is
 * its member failed. The region is marked in the bitmap meanwhile: a
 * crash must not leave a half-mended copy that reads as good. */
static void extent_fix_read_error(struct raid_array *a, int role, struct member *m,
                                  const char *good, size_t len, uint64_t at, uint64_t sync_off)
{
	if (a->slot[role] != m || a->read_only)
		return; /* failed out or replaced meanwhile; or not ours to write */
	int wrc = bitmap_start_write(a, sync_off, len);
	if (wrc == 0)
		wrc = member_write(m, good, len, at);
	/* Failed out before the write ends: until then the bitmap daemon
	 * cannot clear the region (it waits for writes in flight), and once
	 * the role is missing it clears nothing, so a re-add resyncs it. */
	if (wrc < 0)
		array_member_error(a, role, m, wrc, true);
	bitmap_end_write(a, sync_off, len);
	if (wrc == 0)
		array_logf(a, "read error on %s (role %d) corrected: %zu KiB rewritten from another "
		           "copy",
		           m->abs_path, role, len / 1024);
}

/* Mend the copies of one piece that failed to read (bad[], on members
 * bad_member[]) with the bytes of copy good_c, which dst holds. Unless the
 * caller holds the piece's lock regions already, they are taken and the
 * good copy read again under them: a write may have changed every copy
 * since dst was read, and its bytes must not be overwritten with older
 * ones, which would leave the copies differing. */
static void extent_mend_copies(struct raid_array *a, const struct raid_extent *ext, int good_c,
                               const int *bad, struct member *const *bad_member, int nr_bad,
                               const char *dst, size_t piece, uint64_t off, bool region_held)
{
	uint64_t first = off / EXTENT_LOCK_REGION_BYTES;
	uint64_t last = (off + piece - 1) / EXTENT_LOCK_REGION_BYTES;
	const char *good = dst;
	char *fresh = NULL;

	if (!region_held) {
		row_lock_range(&a->row_locks, first, last);
		struct member *gm = a->slot[ext->copies[good_c].role];
		fresh = parity_buf_alloc(piece);
		if (!fresh || !gm ||
		    member_read(gm, fresh, piece, ext->copies[good_c].member_off_bytes) < 0)
			nr_bad = 0; /* mended by the next read that finds it */
		good = fresh;
	}
	for (int i = 0; i < nr_bad; i++)
		extent_fix_read_error(a, ext->copies[bad[i]].role, bad_member[i], good, piece,
		                      ext->copies[bad[i]].member_off_bytes,
		                      extent_sync_off(a, off, ext));
	if (!region_held)
		row_unlock_range(&a->row_locks, first, last);
	free(fresh);
}

/* Read a piece from its copies one after another; copies that failed
 * are mended from the one that answered. */
static int extent_read_piece(struct raid_array *a, char *dst, size_t len, uint64_t off,
                             bool region_held)
{
	while (len > 0) {
		struct raid_extent ext;
		int rc = -EIO, bad[RAID_MAX_COPIES], bad_rc[RAID_MAX_COPIES], nr_bad = 0, good_c = -1;
		struct member *bad_member[RAID_MAX_COPIES];
		bool logged = false;

		a->ops->map(&a->geo, a->level_priv, off, &ext);
		size_t piece = ext.len_bytes < len ? (size_t)ext.len_bytes : len;
		for (int c = 0; c < ext.nr_copies; c++) {
			struct member *m = a->slot[ext.copies[c].role];
			if (!m)
				continue;
			rc = member_read(m, dst, piece, ext.copies[c].member_off_bytes);
			if (rc == 0) {
				good_c = c;
				break;
			}
			logged |= rc == -ENODATA;
			bad_member[nr_bad] = m;
			bad_rc[nr_bad] = rc;
			bad[nr_bad++] = c;
		}
		uint64_t mid = (off + piece / 2) / SECTOR_BYTES * SECTOR_BYTES;
		if (mid <= off)
			mid = (off / SECTOR_BYTES + 1) * SECTOR_BYTES;
		if (rc < 0 && logged && mid < off + piece) {
			/* Logged bad sectors on every copy, maybe not the same
			 * ones: split at a sector boundary (md picks a copy per
			 * sector), each side may still be whole somewhere. */
			size_t half = (size_t)(mid - off);
			rc = extent_read_piece(a, dst, half, off, region_held);
			if (rc == 0)
				rc = extent_read_piece(a, dst + half, piece - half, off + half, region_held);
		} else if (rc == 0 && nr_bad) {
			extent_mend_copies(a, &ext, good_c, bad, bad_member, nr_bad, dst, piece, off,
			                   region_held);
		} else {
			for (int i = 0; rc < 0 && i < nr_bad; i++)
				if (a->slot[ext.copies[bad[i]].role] == bad_member[i])
					array_member_error(a, ext.copies[bad[i]].role, bad_member[i],
					                   bad_rc[i], false);
		}
		if (rc < 0)
			return rc;
		dst += piece;
		off += piece;
		len -= piece;
	}
	return 0;
}

/* Reads go to every member at once: each extent from the copy the read
 * balancer picks, in parallel; a piece whose read fails is read again copy
 * by copy.
 * region_held: the caller holds the lock regions of the range. */
static int extent_read(struct raid_array *a, void *buf, size_t len, uint64_t off,
                       bool region_held)
{
	char *dst = buf;

	while (len > 0) {
		struct io_req reqs[EXTENT_BATCH];
		uint64_t req_off[EXTENT_BATCH];
		int nr = 0;

		memset(reqs, 0, sizeof(reqs));
		while (len > 0 && nr < EXTENT_BATCH) {
			struct raid_extent ext;
			a->ops->map(&a->geo, a->level_priv, off, &ext);
			size_t piece = ext.len_bytes < len ? (size_t)ext.len_bytes : len;
			int c = read_balance_pick(a, &ext, piece);
			struct member *m = c >= 0 ? a->slot[ext.copies[c].role] : NULL;
			if (!m)
				return -EIO;
			uint64_t at = ext.copies[c].member_off_bytes;
			read_balance_note(m, at, piece);
			reqs[nr] = (struct io_req){ .member = m, .buf = dst, .len_bytes = piece,
			                            .data_off_bytes = at };
			req_off[nr++] = off;
			dst += piece;
			off += piece;
			len -= piece;
		}
		if (io_pool_run(a->io_pool, reqs, nr) == 0)
			continue;
		for (int i = 0; i < nr; i++) {
			if (reqs[i].result == 0)
				continue;
			int rc = extent_read_piece(a, reqs[i].buf, reqs[i].len_bytes, req_off[i],
			                           region_held);
			if (rc < 0)
				return rc;
		}
	}
	return 0;
}

int extent_io_read(struct raid_array *a, void *buf, size_t len, uint64_t off)
{
	return extent_read(a, buf, len, off, false);
}

/* Write [off, off + len) to every present copy, all pieces in parallel.
 * A member that fails is failed out while another copy of each piece
 * stays; otherwise the error is returned. */
/* src NULL: zeros (extent_io_zero), punched where the members can. */
static int extent_write_batch(struct raid_array *a, const char *src, size_t len, uint64_t off)
{
	while (len > 0) {
		struct io_req reqs[EXTENT_BATCH * 2 * RAID_MAX_COPIES];
		int req_role[EXTENT_BATCH * 2 * RAID_MAX_COPIES];
		bool req_replacement[EXTENT_BATCH * 2 * RAID_MAX_COPIES];
		int req_piece[EXTENT_BATCH * 2 * RAID_MAX_COPIES];
		uint64_t piece_sync_off[EXTENT_BATCH];
		size_t piece_len[EXTENT_BATCH];
		int piece_copies_ok[EXTENT_BATCH];
		int nr = 0, nr_pieces = 0, rc = 0;

		while (len > 0 && nr_pieces < EXTENT_BATCH) {
			struct raid_extent ext;
			a->ops->map(&a->geo, a->level_priv, off, &ext);
			size_t piece = ext.len_bytes < len ? (size_t)ext.len_bytes : len;
			for (int c = 0; c < ext.nr_copies; c++) {
				int role = ext.copies[c].role;
				uint64_t at = ext.copies[c].member_off_bytes;
				/* the copy first: see array_replacement_target */
				struct member *copy = array_replacement_target(a, role, at, piece);
				struct member *m = array_write_target(a, role, at, piece);
				if (copy == m)
					copy = NULL;
				if (m) {
					reqs[nr] = (struct io_req){ .member = m, .buf = (void *)src,
					                            .len_bytes = piece, .is_write = true,
					                            .zero = !src, .data_off_bytes = at };
					req_role[nr] = role;
					req_replacement[nr] = false;
					req_piece[nr++] = nr_pieces;
				}
				if (copy) {
					reqs[nr] = (struct io_req){ .member = copy, .buf = (void *)src,
					                            .len_bytes = piece, .is_write = true,
					                            .zero = !src, .data_off_bytes = at };
					req_role[nr] = role;
					req_replacement[nr] = true;
					req_piece[nr++] = nr_pieces;
				}
			}
			piece_sync_off[nr_pieces] = extent_sync_off(a, off, &ext);
			piece_len[nr_pieces] = piece;
			piece_copies_ok[nr_pieces++] = 0;
			if (src)
				src += piece;
			off += piece;
			len -= piece;
		}
		int nr_started = 0;
		while (nr_started < nr_pieces && rc == 0) {
			rc = bitmap_start_write(a, piece_sync_off[nr_started], piece_len[nr_started]);
			nr_started++; /* counted in flight even when its store failed */
		}
		if (rc < 0) {
			for (int p = 0; p < nr_started; p++)
				bitmap_end_write(a, piece_sync_off[p], piece_len[p]);
			return rc;
		}
		io_pool_run(a->io_pool, reqs, nr);
		/* Members whose write failed are failed out before the writes
		 * end in the bitmap (see extent_fix_read_error). */
		for (int i = 0; i < nr; i++) {
			bool to_serving = reqs[i].member == a->slot[req_role[i]];
			if (reqs[i].result < 0 && to_serving) {
				/* a replacement promoted meanwhile included */
				if (!array_member_error(a, req_role[i], reqs[i].member,
				                        reqs[i].result, true))
					rc = reqs[i].result;
			} else if (reqs[i].result < 0) {
				/* the member being rebuilt or copied for the role */
				array_rebuild_target_failed(a, req_role[i], reqs[i].member,
				                            reqs[i].result);
			} else if (!req_replacement[i]) {
				piece_copies_ok[req_piece[i]]++;
			}
		}
		for (int p = 0; p < nr_started; p++)
			bitmap_end_write(a, piece_sync_off[p], piece_len[p]);
		if (rc < 0)
			return rc;
		for (int p = 0; p < nr_pieces; p++)
			if (piece_copies_ok[p] == 0)
				return -EIO;
	}
	return 0;
}

/* src NULL: zeros. */
static int extent_write_range(struct raid_array *a, const char *src, size_t len, uint64_t off)
{
	struct raid_extent first;

	/* One copy (linear, raid0): nothing can diverge, no lock needed. */
	a->ops->map(&a->geo, a->level_priv, off, &first);
	if (first.nr_copies == 1)
		return extent_write_batch(a, src, len, off);

	/* Copies of one region are written under its lock, so two
	 * overlapping writes cannot leave the mirrors holding different
	 * bytes. */
	while (len > 0) {
		uint64_t region = off / EXTENT_LOCK_REGION_BYTES;
		uint64_t region_end = (region + 1) * EXTENT_LOCK_REGION_BYTES;
		size_t piece = region_end - off < len ? (size_t)(region_end - off) : len;

		row_lock(&a->row_locks, region);
		int rc = extent_write_batch(a, src, piece, off);
		row_unlock(&a->row_locks, region);
		if (rc < 0)
			return rc;
		if (src)
			src += piece;
		off += piece;
		len -= piece;
	}
	return 0;
}

int extent_io_write(struct raid_array *a, const void *buf, size_t len, uint64_t off)
{
	return extent_write_range(a, buf, len, off);
}

/* Every copy of the range zeroed the way a write would reach it (under
 * the region's lock, marked in the bitmap, onto members being rebuilt or
 * copied where they are), so the copies cannot differ afterwards. */
int extent_io_zero(struct raid_array *a, size_t len, uint64_t off)
{
	return extent_write_range(a, NULL, len, off);
}

/* Part of [off, off + len) is in md's bad block log on every copy: the
 * sectors some copy holds are resynced one by one, the rest passed over
 * (reads of them fail; there is nothing to copy). Caller holds the lock
 * region. */
static int extent_resync_by_sector(struct raid_array *a, char *buf, size_t len, uint64_t off)
{
	uint64_t lost = 0;
	int rc = 0;

	for (size_t done = 0; done < len && rc == 0; done += SECTOR_BYTES) {
		size_t n = len - done < SECTOR_BYTES ? len - done : SECTOR_BYTES;
		rc = extent_read(a, buf, n, off + done, true);
		if (rc == -ENODATA) {
			lost += n;
			rc = 0;
		} else if (rc == 0) {
			rc = extent_write_batch(a, buf, n, off + done);
		}
	}
	if (lost)
		array_logf(a, "resync: %" PRIu64 " bytes from %" PRIu64 " are in md's bad block log "
		           "on every copy: passed over (reads of them fail)",
		           lost, off);
	return rc;
}

/* The copy levels' resync space is the volume (raid10), or equal to it
 * (raid1: every member holds the volume at the same offsets), so the
 * range is walked as volume bytes, a lock region at a time. */
int extent_io_resync(struct raid_array *a, uint64_t sync_lo, uint64_t sync_hi)
{
	const size_t step = 1024 * 1024;
	char *buf = parity_buf_alloc(step);
	uint64_t end = sync_hi < a->geo.array_bytes ? sync_hi : a->geo.array_bytes;
	int rc = 0;

	if (!buf)
		return -ENOMEM;
	for (uint64_t off = sync_lo; off < end && rc == 0;) {
		size_t len = end - off < step ? (size_t)(end - off) : step;
		uint64_t region = off / EXTENT_LOCK_REGION_BYTES;
		if (len > EXTENT_LOCK_REGION_BYTES - off % EXTENT_LOCK_REGION_BYTES)
			len = EXTENT_LOCK_REGION_BYTES - off % EXTENT_LOCK_REGION_BYTES;
		row_lock(&a->row_locks, region);
		rc = extent_read(a, buf, len, off, true);
		if (rc == 0)
			rc = extent_write_batch(a, buf, len, off);
		else if (rc == -ENODATA)
			rc = extent_resync_by_sector(a, buf, len, off);
		row_unlock(&a->row_locks, region);
		off += len;
	}
	free(buf);
	return rc;
}

int extent_io_check(struct raid_array *a, uint64_t *mismatch_sectors)
{
	const size_t step = 256 * 1024;
	char *first = parity_buf_alloc(step), *other = parity_buf_alloc(step);
	int rc = 0;

	*mismatch_sectors = 0;
	if (!first || !other) {
		rc = -ENOMEM;
		goto out;
	}
	for (uint64_t off = 0; off < a->geo.array_bytes && rc == 0;) {
		struct raid_extent ext;
		a->ops->map(&a->geo, a->level_priv, off, &ext);
		size_t len = ext.len_bytes < step ? (size_t)ext.len_bytes : step;
		if (len > a->geo.array_bytes - off)
			len = (size_t)(a->geo.array_bytes - off);
		/* Copies on missing members are passed over: a degraded
		 * array is compared over what it has left. */
		bool have_first = false;
		for (int c = 0; c < ext.nr_copies && rc == 0; c++) {
			struct member *m = a->slot[ext.copies[c].role];
			if (!m)
				continue;
			rc = member_read(m, have_first ? other : first, len,
			                 ext.copies[c].member_off_bytes);
			if (rc < 0 || !have_first) {
				have_first = true;
				continue;
			}
			*mismatch_sectors += extent_mismatch_sectors(a, off, first, other, len);
		}
		off += len;
	}
out:
	free(first);
	free(other);
	return rc;
}

/* ---- scrub: one lock region at a time -------------------------------- */

struct extent_scrub {
	char *first, *other;
};

uint64_t extent_io_scrub_units(const struct raid_array *a)
{
	return (a->geo.array_bytes + EXTENT_LOCK_REGION_BYTES - 1) / EXTENT_LOCK_REGION_BYTES;
}

void *extent_io_scrub_begin(struct raid_array *a)
{
	struct extent_scrub *s = calloc(1, sizeof(*s));
	(void)a;
	if (!s)
		return NULL;
	s->first = parity_buf_alloc(EXTENT_LOCK_REGION_BYTES);
	s->other = parity_buf_alloc(EXTENT_LOCK_REGION_BYTES);
	if (!s->first || !s->other) {
		extent_io_scrub_end(a, s);
		return NULL;
	}
	return s;
}

void extent_io_scrub_end(struct raid_array *a, void *ctx)
{
	struct extent_scrub *s = ctx;
	(void)a;
	if (!s)
		return;
	free(s->first);
	free(s->other);
	free(s);
}

/* Call per_extent on each extent of lock region unit in volume order, every
 * extent clipped to the region (and the volume's end), stopping at the
 * first error. The region is locked throughout so that user writes, which
 * take the same lock, cannot change the copies while they are compared or
 * copied. */
static int extent_walk_unit(struct raid_array *a, uint64_t unit,
                            int (*per_extent)(struct raid_array *a, uint64_t off,
                                              const struct raid_extent *ext, size_t len,
                                              void *arg),
                            void *arg)
{
	uint64_t off = unit * EXTENT_LOCK_REGION_BYTES;
	uint64_t end = off + EXTENT_LOCK_REGION_BYTES;
	int rc = 0;

	if (end > a->geo.array_bytes)
		end = a->geo.array_bytes;
	row_lock(&a->row_locks, unit);
	while (off < end && rc == 0) {
		struct raid_extent ext;
		a->ops->map(&a->geo, a->level_priv, off, &ext);
		size_t len = ext.len_bytes < end - off ? (size_t)ext.len_bytes : (size_t)(end - off);
		rc = per_extent(a, off, &ext, len, arg);
		off += len;
	}
	row_unlock(&a->row_locks, unit);
	return rc;
}

/* What extent_recover_extent rebuilds, and into what. */
struct extent_recover {
	struct extent_scrub *s;
	int role;
	struct member *target;
	uint64_t member_off;      /* where on target: the copy of role there */
};

/* Read len bytes at delta into the extent from a copy other than the
 * one rebuilt: each other present copy in turn, until one reads; in a
 * replace, last the member being replaced, which still holds this copy
 * (md reads it too, so a replace works with the other copies gone). Each
 * slot is read once: it may be failed out meanwhile. -ENODATA when the
 * bytes are in md's bad block log on every copy that has them. */
static int extent_recover_read(struct raid_array *a, const struct raid_extent *ext,
                               const struct extent_recover *r, void *dst, size_t len,
                               uint64_t delta)
{
	int rc = -EIO;
	bool logged = false;

	for (int c = 0; c <= ext->nr_copies && rc < 0; c++) {
		struct member *src;
		uint64_t src_at;
		if (c < ext->nr_copies) {
			if (ext->copies[c].role == r->role)
				continue;
			src = a->slot[ext->copies[c].role];
			src_at = ext->copies[c].member_off_bytes;
		} else {
			src = a->slot[r->role];
			src_at = r->member_off;
		}
		if (src && src != r->target) {
			rc = member_read(src, dst, len, src_at + delta);
			logged |= rc == -ENODATA;
		}
	}
	return rc < 0 && logged ? -ENODATA : rc;
}

/* No copy holds the whole extent: sector by sector, what one holds is
 * written to the target, the runs that none holds are logged as bad on
 * it (md's recovery records them the same way). */
static int extent_recover_by_sector(struct raid_array *a, const struct raid_extent *ext,
                                    const struct extent_recover *r, size_t len)
{
	uint64_t lost_from = 0, lost_len = 0;
	int rc = 0;

	for (size_t done = 0; done < len && rc == 0; done += SECTOR_BYTES) {
		size_t n = len - done < SECTOR_BYTES ? len - done : SECTOR_BYTES;
		rc = extent_recover_read(a, ext, r, r->s->first, n, done);
		if (rc == -ENODATA) {
			if (!lost_len)
				lost_from = r->member_off + done;
			lost_len += n;
			rc = 0;
			continue;
		}
		if (rc == 0 && lost_len) {
			rc = array_rebuild_lost(a, r->role, r->target, lost_from, lost_len);
			lost_len = 0;
		}
		if (rc == 0) {
			rc = member_write(r->target, r->s->first, n, r->member_off + done);
			if (rc < 0)
				array_rebuild_target_failed(a, r->role, r->target, rc);
		}
	}
	if (rc == 0 && lost_len)
		rc = array_rebuild_lost(a, r->role, r->target, lost_from, lost_len);
	if (rc == 0)
		array_recovery_advance(a, r->role, r->target, r->member_off + len);
	return rc;
}

/* Rebuild role's copy at r->member_off of the extent at volume offset off
 * from another present copy. An extent that needs no rebuild (a re-added
 * member's, clean in the bitmap) is not copied but still counts as
 * rebuilt, so rebuilt bytes keep growing. */
static int extent_recover_extent(struct raid_array *a, uint64_t off,
                                 const struct raid_extent *ext, size_t len,
                                 const struct extent_recover *r)
{
	int to = -1, rc = -EIO;

	for (int c = 0; c < ext->nr_copies; c++)
		if (ext->copies[c].role == r->role && ext->copies[c].member_off_bytes == r->member_off)
			to = c;
	if (to < 0)
		return -EIO; /* member_to_volume and map disagree: a level bug */
	uint64_t at = r->member_off;
	if (at + len <= atomic_load(&a->rebuilt_bytes[r->role]))
		return 1; /* rebuilt already (a resumed rebuild) */
	if (!array_rebuild_needed(a, r->role, extent_sync_off(a, off, ext), len)) {
		array_recovery_advance(a, r->role, r->target, at + len);
		return 1;
	}
	rc = extent_recover_read(a, ext, r, r->s->first, len, 0);
	if (rc == -ENODATA)
		return extent_recover_by_sector(a, ext, r, len);
	if (rc == 0) {
		rc = member_write(r->target, r->s->first, len, at);
		if (rc < 0)
			array_rebuild_target_failed(a, r->role, r->target, rc);
	}
	if (rc == 0)
		array_recovery_advance(a, r->role, r->target, at + len);
	return rc;
}

/* Recovery runs in member order (rebuilt bytes, md's recovery_offset,
 * only grow, whatever the layout), a piece at a time: a chunk, or a lock
 * region if chunks are larger, so that each piece is one extent of the
 * volume under one lock. */
static uint64_t extent_recover_piece_bytes(const struct raid_array *a)
{
	uint64_t chunk = a->geo.chunk_bytes;
	return chunk && chunk < EXTENT_LOCK_REGION_BYTES ? chunk : EXTENT_LOCK_REGION_BYTES;
}

uint64_t extent_io_recover_units(const struct raid_array *a)
{
	uint64_t piece = extent_recover_piece_bytes(a);
	return (a->geo.dev_bytes + piece - 1) / piece;
}

/* Rebuild role's member bytes of piece `unit` from another copy of the
 * volume bytes they hold, with that volume region locked against user
 * writes (which reach the target once rebuilt bytes pass them). */
int extent_io_recover_unit(struct raid_array *a, void *ctx, uint64_t unit, int role,
                           struct member *target)
{
	uint64_t piece = extent_recover_piece_bytes(a);
	struct extent_recover r = { .s = ctx, .role = role, .target = target,
	                            .member_off = unit * piece };
	uint64_t off;
	int rc;

	if (!r.s)
		return -ENOMEM;
	if (r.member_off >= a->geo.dev_bytes)
		return 1;
	size_t len = (size_t)(a->geo.dev_bytes - r.member_off < piece ? a->geo.dev_bytes - r.member_off
	                                                               : piece);
	if (!a->ops->member_to_volume(&a->geo, a->level_priv, role, r.member_off, &off)) {
		/* No copy lives here: nothing to rebuild. */
		array_recovery_advance(a, role, target, r.member_off + len);
		return 1;
	}
	uint64_t region = off / EXTENT_LOCK_REGION_BYTES;
	struct raid_extent ext;
	row_lock(&a->row_locks, region);
	a->ops->map(&a->geo, a->level_priv, off, &ext);
	if (len > ext.len_bytes)
		len = (size_t)ext.len_bytes;
	if (len > a->geo.array_bytes - off)
		len = (size_t)(a->geo.array_bytes - off);
	rc = extent_recover_extent(a, off, &ext, len, &r);
	row_unlock(&a->row_locks, region);
	return rc;
}

/* What extent_scrub_extent compares with, and where it counts. */
struct extent_compare {
	struct extent_scrub *s;
	bool repair;
	uint64_t *mismatch_sectors;
};

/* Compare every copy of one extent with the first copy that reads,
 * counting as md does (extent_mismatch_sectors); repair writes
 * that copy over each copy that differs. A copy that cannot be read (an
 * I/O error, a sector in md's bad block log) is mended from it, in check
 * too, as md's sync does. Copies on missing members are passed over, as
 * md's raid1/raid10 sync does: a degraded array is compared over the
 * copies it has left (an extent with one copy has nothing to compare). */
static int extent_scrub_extent(struct raid_array *a, uint64_t off, const struct raid_extent *ext,
                               size_t len, void *arg);

/* No copy of the extent reads whole, and md's bad block log is why: its
 * copies log sectors, maybe not the same ones. Each half is scrubbed on
 * its own (md goes sector by sector), down to sectors that no copy holds,
 * which are passed over: there is nothing to compare or to mend them
 * from, and reads of them fail as under md. */
static int extent_scrub_split(struct raid_array *a, uint64_t off, const struct raid_extent *ext,
                              size_t len, void *arg)
{
	if (len <= SECTOR_BYTES) {
		array_logf(a, "check: %zu bytes at %" PRIu64 " are in md's bad block log on every "
		           "copy: passed over",
		           len, off);
		return 0;
	}
	size_t half = len / 2 / SECTOR_BYTES * SECTOR_BYTES;
	if (half == 0)
		half = SECTOR_BYTES;
	struct raid_extent tail = *ext;
	for (int c = 0; c < tail.nr_copies; c++)
		tail.copies[c].member_off_bytes += half;
	int rc = extent_scrub_extent(a, off, ext, half, arg);
	if (rc == 0)
		rc = extent_scrub_extent(a, off + half, &tail, len - half, arg);
	return rc;
}

static int extent_scrub_extent(struct raid_array *a, uint64_t off, const struct raid_extent *ext,
                               size_t len, void *arg)
{
	const struct extent_compare *cmp = arg;
	struct extent_scrub *s = cmp->s;
	const size_t page = 4096;
	int ref = -1, rc = -EIO;
	bool logged = false;

	for (int c = 0; c < ext->nr_copies && ref < 0; c++) {
		struct member *m = a->slot[ext->copies[c].role];
		if (!m)
			continue;
		rc = member_read(m, s->first, len, ext->copies[c].member_off_bytes);
		logged |= rc == -ENODATA;
		if (rc == 0)
			ref = c;
		else if (rc != -EIO && rc != -ENODATA)
			return rc;
	}
	if (ref < 0 && logged)
		return extent_scrub_split(a, off, ext, len, arg);
	if (ref < 0)
		return rc; /* no copy readable */
	/* A copy with sectors in md's bad block log: halved down to pages,
	 * as md's sync splits its requests at the log's bounds, so that only
	 * the pages logged are mended from ref and the rest is compared.
	 * Mended whole, the copy's good bytes would take whatever ref holds
	 * there, garbage included, and nothing would be counted. */
	for (int c = 0; c < ext->nr_copies && len > page; c++) {
		struct member *m = a->slot[ext->copies[c].role];
		if (c != ref && m && member_badblocks_hit(m, ext->copies[c].member_off_bytes, len))
			return extent_scrub_split(a, off, ext, len, arg);
	}
	for (int c = 0; c < ext->nr_copies; c++) {
		struct member *m = a->slot[ext->copies[c].role];
		uint64_t at = ext->copies[c].member_off_bytes;
		bool differs = false;
		if (c == ref || !m)
			continue;
		rc = member_read(m, s->other, len, at);
		if (rc == -EIO || rc == -ENODATA) {
			extent_fix_read_error(a, ext->copies[c].role, m, s->first, len, at,
			                      extent_sync_off(a, off, ext));
			continue;
		}
		if (rc < 0)
			return rc;
		uint64_t sectors = extent_mismatch_sectors(a, off, s->first, s->other, len);
		*cmp->mismatch_sectors += sectors;
		differs = sectors > 0;
		if (differs && cmp->repair) {
			/* Marked, so that a crash mid-rewrite is resynced. */
			uint64_t sync_off = extent_sync_off(a, off, ext);
			rc = bitmap_start_write(a, sync_off, len);
			if (rc == 0)
				rc = member_write(m, s->first, len, at);
			if (rc < 0) /* out before the write ends, as above */
				array_member_error(a, ext->copies[c].role, m, rc, true);
			bitmap_end_write(a, sync_off, len);
			if (rc < 0)
				return rc;
		}
	}
	return 0;
}

/* Compare every copy with the first present one; repair copies the first
 * over the others, as md's raid1/raid10 repair does. */
int extent_io_scrub_unit(struct raid_array *a, void *ctx, uint64_t unit, bool repair,
                         uint64_t *mismatch_sectors)
{
	struct extent_compare cmp = { .s = ctx, .repair = repair,
	                              .mismatch_sectors = mismatch_sectors };

	if (!cmp.s)
		return -ENOMEM;
	*mismatch_sectors = 0;
	return extent_walk_unit(a, unit, extent_scrub_extent, &cmp);
}
