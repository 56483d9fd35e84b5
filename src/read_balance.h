/* read_balance.h - which copy of a mirrored extent a read goes to: the
 * copy whose last read ended where this one starts (a sequential reader),
 * else one fixed by the block's place, so that reads spread over every
 * member and a block is always cached by the same one; a write-mostly
 * member (raid1) only when no other copy is there. */
#ifndef RAIDFUSE_READ_BALANCE_H
#define RAIDFUSE_READ_BALANCE_H

#include <stddef.h>

struct raid_array;
struct raid_extent;
struct member;

/* The index in ext->copies of the copy to read len bytes from, or -1
 * when no copy's member is present. */
int read_balance_pick(const struct raid_array *a, const struct raid_extent *ext, size_t len);

/* Note a read of len bytes at at (member data-area bytes) going to m:
 * where it ends is where a sequential reader continues. */
void read_balance_note(struct member *m, uint64_t at, size_t len);

#endif
