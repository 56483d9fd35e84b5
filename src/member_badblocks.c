/* member_badblocks.c - see member_badblocks.h. */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "errmsg.h"
#include "member.h"
#include "member_badblocks.h"

/* md's longest entry (BB_MAX_LEN), in units of 2^shift sectors. */
#define ENTRY_MAX_UNITS 512u

struct bad_range {
	uint64_t lo, hi; /* absolute sectors of the member, [lo, hi) */
};

struct member_badblocks {
	/* Taken by lookups only while ranges remain (nr_ranges != 0):
	 * ranges only ever shrink, so a member whose log is empty again
	 * reads without it. */
	pthread_mutex_t lock;
	atomic_size_t nr_ranges;
	/* Changes made here, and how many of them the log on the member
	 * holds: a sync returns only once the stored count has reached the
	 * changes made before it began. */
	atomic_uint_fast64_t gen_changed, gen_stored;
	bool stored_empty;       /* the log on the member holds no entry */
	/* One log write at a time, each with the ranges of its moment:
	 * an older list written last would bring back cleared sectors. */
	pthread_mutex_t store_lock;
	unsigned shift;          /* sb.bblog_shift */
	size_t capacity;         /* entries the log holds */
	uint64_t log_at_bytes, log_bytes; /* where it lies on the member */
	struct bad_range ranges[]; /* sorted, apart from each other */
};

static int range_cmp(const void *x, const void *y)
{
	const struct bad_range *p = x, *q = y;
	return p->lo < q->lo ? -1 : p->lo > q->lo;
}

/* Sort and merge overlapping or touching ranges, as md's badblocks_set
 * keeps its table. */
static size_t ranges_normalise(struct bad_range *r, size_t nr)
{
	size_t out = 0;

	qsort(r, nr, sizeof(*r), range_cmp);
	for (size_t i = 0; i < nr; i++) {
		if (out && r[i].lo <= r[out - 1].hi) {
			if (r[i].hi > r[out - 1].hi)
				r[out - 1].hi = r[i].hi;
			continue;
		}
		r[out++] = r[i];
	}
	return out;
}

/* Entries the ranges need on disk, md's way: at most ENTRY_MAX_UNITS each. */
static size_t entries_needed(const struct bad_range *r, size_t nr, unsigned shift)
{
	size_t n = 0;
	for (size_t i = 0; i < nr; i++) {
		uint64_t units = (r[i].hi - r[i].lo) >> shift;
		n += (size_t)((units + ENTRY_MAX_UNITS - 1) / ENTRY_MAX_UNITS);
	}
	return n;
}

/* [data_off, data_off + len) of m's data area as absolute sectors
 * [*lo, *hi), in whole units of 2^shift sectors: the units it covers
 * entirely (what a write made good), or every unit it touches. */
static void range_in_units(const struct member *m, unsigned shift, uint64_t data_off,
                           uint64_t len, bool covered_only, uint64_t *lo, uint64_t *hi)
{
	uint64_t unit = (uint64_t)1 << shift;
	uint64_t first = covered_only ? (data_off + 511u) / 512u : data_off / 512u;
	uint64_t end = covered_only ? (data_off + len) / 512u : (data_off + len + 511u) / 512u;
	first += m->sb.data_offset;
	end += m->sb.data_offset;
	*lo = covered_only ? (first + unit - 1) / unit * unit : first / unit * unit;
	*hi = covered_only ? end / unit * unit : (end + unit - 1) / unit * unit;
}

int member_badblocks_load(struct member *m, char *err, size_t errlen)
{
	uint8_t raw[MEMBER_BADBLOCKS_MAX_SECTORS * 512];
	const struct md_super *sb = &m->sb;

	member_badblocks_free(m);
	bool logged = sb->feature_map & MD_FEATURE_BAD_BLOCKS;
	bool area = sb->bblog_offset != 0 && sb->bblog_size != 0 &&
	            sb->bblog_size <= MEMBER_BADBLOCKS_MAX_SECTORS && sb->bblog_shift <= 32;
	if (!logged && !area)
		return 0; /* no log, and no room for one */
	if (!area)
		return errmsg_fail(-EINVAL, err, errlen,
		                   "%s: the superblock says bad blocks are logged, but the log "
		                   "(offset %" PRId32 ", %u sectors, shift %u) is not one md reads",
		                   m->path, sb->bblog_offset, sb->bblog_size, sb->bblog_shift);
	int64_t log_sector = (int64_t)sb->super_offset + sb->bblog_offset;
	size_t log_bytes = (size_t)sb->bblog_size * 512u;
	uint64_t data_start = sb->data_offset * 512u, data_end = data_start + sb->data_size * 512u;
	uint64_t sb_start = sb->super_offset * 512u, sb_end = sb_start + 4096u;
	/* Clear of the superblock's 4 KiB and of the data (after the
	 * superblock in metadata 1.1 and 1.2, before it in 1.0): raidfuse
	 * writes there (an unused room is kept empty, for sectors a rebuild
	 * cannot recover). */
	uint64_t log_start = (uint64_t)log_sector * 512u, log_end = log_start + log_bytes;
	bool inside = log_sector >= 0 && log_end <= m->file_bytes &&
	              (log_end <= data_start || log_start >= data_end) &&
	              (log_end <= sb_start || log_start >= sb_end);
	if (!logged && !inside)
		return 0;
	if (!inside)
		return errmsg_fail(-EINVAL, err, errlen,
		                   "%s: the bad block log at sector %" PRId64 " (%zu bytes) overlaps "
		                   "the superblock or the data area, or lies past the member's end",
		                   m->path, log_sector, log_bytes);
	int rc = logged ? member_pread_abs(m, raw, log_bytes, (uint64_t)log_sector * 512u) : 0;
	if (!logged)
		memset(raw, 0xff, log_bytes);
	if (rc < 0)
		return errmsg_fail(rc, err, errlen, "%s: cannot read the bad block log: %s", m->path,
		                   strerror(-rc));
	size_t max_entries = log_bytes / 8;
	struct member_badblocks *b = calloc(1, sizeof(*b) + max_entries * sizeof(b->ranges[0]));
	if (!b)
		return errmsg_fail(-ENOMEM, err, errlen, "out of memory");
	uint64_t max_units = (m->file_bytes / 512u) >> sb->bblog_shift;
	uint64_t sector_units, count_units;
	size_t nr = 0;
	for (size_t i = 0; i < max_entries &&
	                   md_badblock_entry_decode(raw + 8 * i, &sector_units, &count_units);
	     i++) {
		/* Checked before shifting: a corrupt entry must not wrap. */
		if (sector_units > max_units || count_units > max_units) {
			free(b);
			return errmsg_fail(-EINVAL, err, errlen,
			                   "%s: bad block log entry %zu (sector %" PRIu64 ", %" PRIu64
			                   " units of 2^%u sectors) lies past the member's end: the "
			                   "log is corrupt",
			                   m->path, i, sector_units, count_units, sb->bblog_shift);
		}
		if (count_units == 0)
			continue;
		/* Entries before the data area (metadata, which raidfuse
		 * reads with its own checks) are kept: the log is written
		 * back whole. */
		b->ranges[nr].lo = sector_units << sb->bblog_shift;
		b->ranges[nr].hi = (sector_units + count_units) << sb->bblog_shift;
		nr++;
	}
	pthread_mutex_init(&b->lock, NULL);
	pthread_mutex_init(&b->store_lock, NULL);
	b->shift = sb->bblog_shift;
	b->capacity = max_entries;
	b->log_at_bytes = (uint64_t)log_sector * 512u;
	b->log_bytes = log_bytes;
	b->stored_empty = nr == 0;
	atomic_store(&b->nr_ranges, ranges_normalise(b->ranges, nr));
	m->badblocks = b;
	return 0;
}

void member_badblocks_free(struct member *m)
{
	struct member_badblocks *b = m->badblocks;

	m->badblocks = NULL;
	if (!b)
		return;
	pthread_mutex_destroy(&b->lock);
	pthread_mutex_destroy(&b->store_lock);
	free(b);
}

size_t member_badblocks_count(struct member *m, uint64_t *bytes)
{
	struct member_badblocks *b = m->badblocks;
	uint64_t data_lo = m->sb.data_offset;
	size_t n = 0;

	*bytes = 0;
	if (!b)
		return 0;
	pthread_mutex_lock(&b->lock);
	for (size_t i = 0; i < atomic_load(&b->nr_ranges); i++) {
		if (b->ranges[i].hi <= data_lo)
			continue;
		uint64_t lo = b->ranges[i].lo > data_lo ? b->ranges[i].lo : data_lo;
		*bytes += (b->ranges[i].hi - lo) * 512u;
		n++;
	}
	pthread_mutex_unlock(&b->lock);
	return n;
}

bool member_badblocks_hit(struct member *m, uint64_t data_off, uint64_t len)
{
	struct member_badblocks *b = m->badblocks;
	bool hit = false;

	if (!b || atomic_load(&b->nr_ranges) == 0 || len == 0)
		return false;
	uint64_t lo, hi;
	range_in_units(m, 0, data_off, len, false, &lo, &hi);
	pthread_mutex_lock(&b->lock);
	size_t nr = atomic_load(&b->nr_ranges);
	for (size_t i = 0; i < nr && !hit && b->ranges[i].lo < hi; i++)
		hit = lo < b->ranges[i].hi;
	pthread_mutex_unlock(&b->lock);
	return hit;
}

bool member_badblocks_clear(struct member *m, uint64_t data_off, uint64_t len)
{
	struct member_badblocks *b = m->badblocks;
	struct bad_range next[MEMBER_BADBLOCKS_MAX_SECTORS * 512 / 8 + 1];
	bool cleared = false;

	if (!b || atomic_load(&b->nr_ranges) == 0 || len == 0)
		return false;
	/* Only whole units the write covered: the rest of a unit still
	 * holds what was there before. */
	uint64_t lo, hi;
	range_in_units(m, b->shift, data_off, len, true, &lo, &hi);
	if (lo >= hi)
		return false;
	pthread_mutex_lock(&b->lock);
	size_t nr = atomic_load(&b->nr_ranges), out = 0;
	for (size_t i = 0; i < nr; i++) {
		struct bad_range r = b->ranges[i];
		if (r.hi <= lo || r.lo >= hi) {
			next[out++] = r;
			continue;
		}
		cleared = true;
		if (r.lo < lo)
			next[out++] = (struct bad_range){ r.lo, lo };
		if (r.hi > hi)
			next[out++] = (struct bad_range){ hi, r.hi };
	}
	/* A range split in two may not fit the log: md's badblocks_clear
	 * then keeps it whole, and so does this (the sectors stay
	 * logged; reads keep answering them from redundancy). */
	if (cleared && entries_needed(next, out, b->shift) <= b->capacity) {
		memcpy(b->ranges, next, out * sizeof(next[0]));
		atomic_store(&b->nr_ranges, out);
		atomic_fetch_add(&b->gen_changed, 1);
	} else {
		cleared = false;
	}
	pthread_mutex_unlock(&b->lock);
	return cleared;
}

int member_badblocks_add(struct member *m, uint64_t data_off, uint64_t len)
{
	struct member_badblocks *b = m->badblocks;
	int rc = 0;

	if (!b)
		return -ENOSPC;
	if (len == 0)
		return 0;
	/* Every unit the range touches: none of it holds the array's bytes. */
	uint64_t lo, hi;
	range_in_units(m, b->shift, data_off, len, false, &lo, &hi);
	pthread_mutex_lock(&b->lock);
	size_t nr = atomic_load(&b->nr_ranges);
	struct bad_range next[MEMBER_BADBLOCKS_MAX_SECTORS * 512 / 8 + 1];
	memcpy(next, b->ranges, nr * sizeof(next[0]));
	next[nr] = (struct bad_range){ lo, hi };
	size_t out = ranges_normalise(next, nr + 1);
	if (entries_needed(next, out, b->shift) > b->capacity) {
		rc = -ENOSPC; /* md fails the member then */
	} else {
		memcpy(b->ranges, next, out * sizeof(next[0]));
		atomic_store(&b->nr_ranges, out);
		atomic_fetch_add(&b->gen_changed, 1);
	}
	pthread_mutex_unlock(&b->lock);
	return rc;
}

/* The log as md's super_1_sync writes it: entries sector << 10 | count in
 * units, at most ENTRY_MAX_UNITS each, then all ones. */
static void log_encode(const struct member_badblocks *b, size_t nr, uint8_t *raw,
                       size_t raw_bytes)
{
	size_t at = 0;

	memset(raw, 0xff, raw_bytes);
	for (size_t i = 0; i < nr; i++) {
		uint64_t unit = b->ranges[i].lo >> b->shift, end = b->ranges[i].hi >> b->shift;
		while (unit < end && at + 8 <= raw_bytes) {
			uint64_t count = end - unit < ENTRY_MAX_UNITS ? end - unit : ENTRY_MAX_UNITS;
			md_badblock_entry_encode(raw + at, unit, count);
			at += 8;
			unit += count;
		}
	}
}

int member_badblocks_sync(struct member *m, int (*sync_data)(struct member *m))
{
	struct member_badblocks *b = m->badblocks;
	uint8_t raw[MEMBER_BADBLOCKS_MAX_SECTORS * 512];

	/* Stored first, then changed: equal means every change made before
	 * this call is in the log on the member. */
	if (!b || atomic_load(&b->gen_stored) == atomic_load(&b->gen_changed))
		return sync_data(m);
	pthread_mutex_lock(&b->store_lock);
	pthread_mutex_lock(&b->lock);
	uint64_t gen = atomic_load(&b->gen_changed);
	bool due = gen != atomic_load(&b->gen_stored);
	size_t nr = atomic_load(&b->nr_ranges);
	if (due)
		log_encode(b, nr, raw, (size_t)b->log_bytes);
	pthread_mutex_unlock(&b->lock);
	/* Sectors leave the log only after the writes that made them good
	 * are on stable storage: the list was taken before this sync, and
	 * every clear in it followed its write. Until the log says so the
	 * sectors are answered from redundancy, which holds the same. */
	int rc = sync_data(m);
	if (due && rc == 0) {
		rc = member_pwrite_abs(m, raw, (size_t)b->log_bytes, b->log_at_bytes);
		if (rc == 0)
			rc = sync_data(m);
	}
	if (due && rc == 0) {
		pthread_mutex_lock(&b->lock);
		b->stored_empty = nr == 0;
		atomic_store(&b->gen_stored, gen);
		pthread_mutex_unlock(&b->lock);
	}
	pthread_mutex_unlock(&b->store_lock);
	return rc;
}

int member_badblocks_feature(struct member *m)
{
	struct member_badblocks *b = m->badblocks;
	if (!b)
		return 0;
	pthread_mutex_lock(&b->lock);
	int want = 0;
	if (!b->stored_empty)
		want = 1; /* the log on the member has entries: md must read it */
	else if (atomic_load(&b->nr_ranges) == 0 &&
	         atomic_load(&b->gen_stored) == atomic_load(&b->gen_changed))
		want = -1; /* empty here and there */
	pthread_mutex_unlock(&b->lock);
	return want;
}

size_t member_badblocks_format(struct member *m, char *buf, size_t len)
{
	struct member_badblocks *b = m->badblocks;
	size_t used = 0;

	if (len == 0)
		return 0;
	buf[0] = '\0';
	if (!b)
		return 0;
	pthread_mutex_lock(&b->lock);
	for (size_t i = 0; i < atomic_load(&b->nr_ranges) && used + 1 < len; i++) {
		int n = snprintf(buf + used, len - used, "%" PRIu64 " %" PRIu64 "\n", b->ranges[i].lo,
		                 b->ranges[i].hi - b->ranges[i].lo);
		used += n > 0 ? (size_t)n : 0;
	}
	pthread_mutex_unlock(&b->lock);
	return used < len ? used : len - 1;
}
