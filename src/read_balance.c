/* read_balance.c - see read_balance.h.
 *
 * Reading every piece from the first copy, as the mirrors once did, left
 * half of a RAID10's members and one of a RAID1's idle for reads. md takes
 * an idle disk before a busy one (the next request keeps the others
 * busy) and, among busy ones, the least loaded, then the nearest head
 * position; a sequential reader at depth 1 so stays on one member (its
 * head is where the next read starts), which keeps that member's own
 * read-ahead useful. The counts are hints: racing pickers at worst
 * choose a busier copy.
 */
#include "config.h"

#include <stdint.h>

#include "array.h"
#include "member_badblocks.h"
#include "read_balance.h"

/* Whether m is to be read only when nothing else holds the bytes. */
static bool read_balance_avoid(const struct raid_array *a, struct member *m)
{
	return a->ops->honours_write_mostly && atomic_load(&m->write_mostly);
}

int read_balance_pick(const struct raid_array *a, const struct raid_extent *ext, size_t len)
{
	int best = -1, fallback = -1;
	unsigned best_pending = 0;
	uint64_t best_distance = 0;
	bool best_idle_at_head = false;

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
		unsigned pending = (unsigned)atomic_load_explicit(&m->reads_in_flight,
		                                                  memory_order_relaxed);
		uint64_t head = atomic_load_explicit(&m->read_head_bytes, memory_order_relaxed);
		uint64_t distance = head > at ? head - at : at - head;
		bool idle_at_head = pending == 0 && distance == 0;
		if (idle_at_head && !best_idle_at_head) {
			best = c;
			best_idle_at_head = true;
			best_pending = 0;
			best_distance = 0;
			continue;
		}
		if (best_idle_at_head)
			continue;
		if (best < 0 || pending < best_pending ||
		    (pending == best_pending && distance < best_distance)) {
			best = c;
			best_pending = pending;
			best_distance = distance;
		}
	}
	return best >= 0 ? best : fallback;
}

void read_balance_begin(struct member *m, uint64_t at, size_t len)
{
	atomic_fetch_add_explicit(&m->reads_in_flight, 1, memory_order_relaxed);
	atomic_store_explicit(&m->read_head_bytes, at + len, memory_order_relaxed);
}

void read_balance_end(struct member *m)
{
	atomic_fetch_sub_explicit(&m->reads_in_flight, 1, memory_order_relaxed);
}
