/* read_balance.h - which copy of a mirrored extent a read goes to (md's
 * read_balance): an idle copy first, else the one with the fewest reads in
 * flight, ties to the one whose last read ended nearest; a write-mostly
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

/* Account a read of len bytes at at (member data-area bytes) to m while it
 * runs: read_balance_pick sees it in flight, and where it ends. */
void read_balance_begin(struct member *m, uint64_t at, size_t len);
void read_balance_end(struct member *m);

#endif
