/* member_badblocks.c - see member_badblocks.h. */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "errmsg.h"
#include "member.h"
#include "member_badblocks.h"

struct bad_range {
	uint64_t lo, hi; /* data-area bytes */
};

/* Fixed once loaded: lookups need no lock. */
struct member_badblocks {
	size_t nr;
	struct bad_range ranges[];
};

int member_badblocks_load(struct member *m, char *err, size_t errlen)
{
	uint8_t raw[MEMBER_BADBLOCKS_MAX_SECTORS * 512];
	const struct md_super *sb = &m->sb;

	member_badblocks_free(m);
	if (!(sb->feature_map & MD_FEATURE_BAD_BLOCKS))
		return 0;
	if (sb->bblog_offset == 0 || sb->bblog_size == 0 ||
	    sb->bblog_size > MEMBER_BADBLOCKS_MAX_SECTORS || sb->bblog_shift > 32)
		return errmsg_fail(-EINVAL, err, errlen,
		                   "%s: the superblock says bad blocks are logged, but the log "
		                   "(offset %" PRId32 ", %u sectors, shift %u) is not one md reads",
		                   m->path, sb->bblog_offset, sb->bblog_size, sb->bblog_shift);
	int64_t log_sector = (int64_t)sb->super_offset + sb->bblog_offset;
	size_t log_bytes = (size_t)sb->bblog_size * 512u;
	if (log_sector < 0 || (uint64_t)log_sector * 512u + log_bytes > m->file_bytes)
		return errmsg_fail(-EINVAL, err, errlen,
		                   "%s: the bad block log at sector %" PRId64 " lies outside the member",
		                   m->path, log_sector);
	int rc = member_pread_abs(m, raw, log_bytes, (uint64_t)log_sector * 512u);
	if (rc < 0)
		return errmsg_fail(rc, err, errlen, "%s: cannot read the bad block log: %s", m->path,
		                   strerror(-rc));
	size_t max_entries = log_bytes / 8;
	struct member_badblocks *b = calloc(1, sizeof(*b) + max_entries * sizeof(b->ranges[0]));
	if (!b)
		return errmsg_fail(-ENOMEM, err, errlen, "out of memory");
	uint64_t max_units = (m->file_bytes / 512u) >> sb->bblog_shift;
	uint64_t sector_units, count_units;
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
		uint64_t sector = sector_units << sb->bblog_shift;
		uint64_t count = count_units << sb->bblog_shift;
		/* Absolute on the device: what lies before the data area is
		 * metadata, which raidfuse reads with its own checks. */
		uint64_t lo = sector, hi = sector + count;
		if (count == 0 || hi <= sb->data_offset)
			continue;
		if (lo < sb->data_offset)
			lo = sb->data_offset;
		b->ranges[b->nr].lo = (lo - sb->data_offset) * 512u;
		b->ranges[b->nr].hi = (hi - sb->data_offset) * 512u;
		b->nr++;
	}
	m->badblocks = b;
	return 0;
}

void member_badblocks_free(struct member *m)
{
	struct member_badblocks *b = m->badblocks;

	m->badblocks = NULL;
	free(b);
}

size_t member_badblocks_count(struct member *m, uint64_t *bytes)
{
	struct member_badblocks *b = m->badblocks;
	size_t n = 0;

	*bytes = 0;
	if (!b)
		return 0;
	for (size_t i = 0; i < b->nr; i++, n++)
		*bytes += b->ranges[i].hi - b->ranges[i].lo;
	return n;
}

bool member_badblocks_hit(struct member *m, uint64_t data_off, uint64_t len)
{
	struct member_badblocks *b = m->badblocks;
	bool hit = false;

	if (!b)
		return false;
	for (size_t i = 0; i < b->nr && !hit; i++)
		hit = b->ranges[i].lo < data_off + len && data_off < b->ranges[i].hi;
	return hit;
}
