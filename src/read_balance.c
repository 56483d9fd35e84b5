/* read_balance.c - see read_balance.h.
 *
 * Reading every piece from the first copy left half of a RAID10's members
 * and one of a RAID1's idle for reads. md picks by load and head position
 * because it sits below the page cache. raidfuse reads its members through
 * theirs (the volume's own is bypassed), so a block must come from the same
 * copy every time, or a block read again may come from the copy that did
 * not cache it. So the copy is fixed by the block's place (16 MiB regions
 * of the member, in turn over the copies), which spreads random reads over
 * every member, and a reader that goes on where the last read of a copy
 * ended stays on it. Regions that large keep a sequential stream on one
 * member, and its own read-ahead useful, even when FUSE hands the stream's
 * requests over out of order.
 */
#include "config.h"

#include <stdint.h>

#include "array.h"
#include "member_badblocks.h"
#include "read_balance.h"

#define READ_BALANCE_REGION_BYTES (16u * 1024u * 1024u)

/* Whether m is to be read only when nothing else holds the bytes. */
static bool read_balance_avoid(const struct raid_array *a, struct member *m)
{
	return a->ops->honours_write_mostly && atomic_load(&m->write_mostly);
}

int read_balance_pick(const struct raid_array *a, const struct raid_extent *ext, size_t len)
{
	int usable[RAID_MAX_COPIES];
	int nr_usable = 0, fallback = -1;

	for (int c = 0; c < ext->nr_copies; c++) {
		struct member *m = a->slot[ext->copies[c].role];
		uint64_t at = ext->copies[c].member_off_bytes;
		if (!m)
			continue;
		/* Stale sectors md logged: the read path would go elsewhere. */
		if (read_balance_avoid(a, m) || (m->badblocks && member_badblocks_hit(m, at, len))) {
			if (fallback < 0)
				fallback = c;
			continue;
		}
		if (atomic_load_explicit(&m->read_head_bytes, memory_order_relaxed) == at)
			return c; /* a sequential reader goes on */
		usable[nr_usable++] = c;
	}
	if (nr_usable == 0)
		return fallback;
	uint64_t region = ext->copies[usable[0]].member_off_bytes / READ_BALANCE_REGION_BYTES;
	return usable[region % (uint64_t)nr_usable];
}

void read_balance_note(struct member *m, uint64_t at, size_t len)
{
	atomic_store_explicit(&m->read_head_bytes, at + len, memory_order_relaxed);
}
