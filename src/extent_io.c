/* extent_io.c - see extent_io.h.
 *
 * Writes to the copies of one region are done under that region's lock, so
 * two overlapping writes cannot leave the mirrors holding different bytes.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "bitmap.h"
#include "extent_io.h"
#include "parity.h"

/* Region of the volume a lock covers; writes are split at these bounds. */
#define EXTENT_LOCK_REGION_BYTES (64u * 1024u)

int extent_io_read(struct raid_array *a, void *buf, size_t len, uint64_t off)
{
	char *dst = buf;

	while (len > 0) {
		struct raid_extent ext;
		int rc = -EIO;

		a->ops->map(&a->geo, a->level_priv, off, &ext);
		size_t piece = ext.len_bytes < len ? (size_t)ext.len_bytes : len;
		for (int c = 0; c < ext.nr_copies; c++) {
			int role = ext.copies[c].role;
			struct member *m = a->slot[role];
			if (!m)
				continue;
			rc = member_read(m, dst, piece, ext.copies[c].member_off_bytes);
			if (rc == 0)
				break;
			array_member_error(a, role, rc, false);
		}
		if (rc < 0)
			return rc;
		dst += piece;
		off += piece;
		len -= piece;
	}
	return 0;
}

static int extent_write_region(struct raid_array *a, const char *src, size_t len, uint64_t off)
{
	while (len > 0) {
		struct raid_extent ext;
		int written = 0, rc = 0;

		a->ops->map(&a->geo, a->level_priv, off, &ext);
		size_t piece = ext.len_bytes < len ? (size_t)ext.len_bytes : len;
		rc = bitmap_start_write(a, ext.copies[0].member_off_bytes, piece);
		for (int c = 0; c < ext.nr_copies && rc == 0; c++) {
			int role = ext.copies[c].role;
			struct member *m = a->slot[role];
			if (!m)
				continue;
			int wrc = member_write(m, src, piece, ext.copies[c].member_off_bytes);
			if (wrc == 0) {
				written++;
			} else if (!array_member_error(a, role, wrc, true)) {
				rc = wrc;
			}
		}
		bitmap_end_write(a, ext.copies[0].member_off_bytes, piece);
		if (rc < 0)
			return rc;
		if (written == 0)
			return -EIO;
		src += piece;
		off += piece;
		len -= piece;
	}
	return 0;
}

int extent_io_write(struct raid_array *a, const void *buf, size_t len, uint64_t off)
{
	const char *src = buf;

	while (len > 0) {
		uint64_t region = off / EXTENT_LOCK_REGION_BYTES;
		uint64_t region_end = (region + 1) * EXTENT_LOCK_REGION_BYTES;
		size_t piece = region_end - off < len ? (size_t)(region_end - off) : len;

		row_lock(&a->row_locks, region);
		int rc = extent_write_region(a, src, piece, off);
		row_unlock(&a->row_locks, region);
		if (rc < 0)
			return rc;
		src += piece;
		off += piece;
		len -= piece;
	}
	return 0;
}

/* Whether any copy of the extent at off lies in member bytes [lo, hi). */
static bool extent_in_dev_range(struct raid_array *a, uint64_t off, size_t len, uint64_t lo,
                                uint64_t hi)
{
	struct raid_extent ext;
	a->ops->map(&a->geo, a->level_priv, off, &ext);
	for (int c = 0; c < ext.nr_copies; c++) {
		uint64_t at = ext.copies[c].member_off_bytes;
		if (at < hi && at + len > lo)
			return true;
	}
	return false;
}

int extent_io_resync(struct raid_array *a, uint64_t dev_lo, uint64_t dev_hi)
{
	const size_t step = 1024 * 1024;
	char *buf = parity_buf_alloc(step);
	int rc = 0;

	if (!buf)
		return -ENOMEM;
	for (uint64_t off = 0; off < a->geo.array_bytes && rc == 0;) {
		struct raid_extent ext;
		size_t len = a->geo.array_bytes - off < step ? (size_t)(a->geo.array_bytes - off) : step;
		uint64_t region = off / EXTENT_LOCK_REGION_BYTES;
		if (len > EXTENT_LOCK_REGION_BYTES - off % EXTENT_LOCK_REGION_BYTES)
			len = EXTENT_LOCK_REGION_BYTES - off % EXTENT_LOCK_REGION_BYTES;
		a->ops->map(&a->geo, a->level_priv, off, &ext);
		if (len > ext.len_bytes)
			len = (size_t)ext.len_bytes;
		if (!extent_in_dev_range(a, off, len, dev_lo, dev_hi)) {
			off += len;
			continue;
		}
		row_lock(&a->row_locks, region);
		rc = extent_io_read(a, buf, len, off);
		if (rc == 0)
			rc = extent_write_region(a, buf, len, off);
		row_unlock(&a->row_locks, region);
		off += len;
	}
	free(buf);
	return rc;
}

int extent_io_check(struct raid_array *a, uint64_t *mismatch_sectors)
{
	const size_t page = 4096, step = 256 * 1024;
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
		for (int c = 0; c < ext.nr_copies && rc == 0; c++) {
			struct member *m = a->slot[ext.copies[c].role];
			if (!m) {
				rc = -ENODEV;
				break;
			}
			rc = member_read(m, c ? other : first, len, ext.copies[c].member_off_bytes);
			if (rc < 0 || c == 0)
				continue;
			for (size_t at = 0; at < len; at += page) {
				size_t n = len - at < page ? len - at : page;
				if (memcmp(first + at, other + at, n) != 0)
					*mismatch_sectors += page / SECTOR_BYTES;
			}
		}
		off += len;
	}
out:
	free(first);
	free(other);
	return rc;
}
