/* member_badblocks.h - md's bad block log of a member (md's "bbl"): the
 * sectors where md saw a write fail without failing the member. They hold
 * whatever was there before, not the array's data, so md never reads them
 * and neither does raidfuse: a read that touches one fails with -ENODATA
 * (member_read), which the array answers from redundancy without holding
 * it against the member. md rewrites such sectors and updates the log as
 * it goes; raidfuse does not yet keep the log up to date, so it serves
 * arrays whose members log bad blocks read-only (array.c).
 *
 * On disk (md super_1_load): bblog_size sectors at bblog_offset sectors
 * from the superblock, little-endian 64-bit entries, sector << 10 | count,
 * both in units of 2^bblog_shift sectors, absolute on the device; an
 * all-ones entry ends the list. Read only when feature_map has
 * MD_FEATURE_BAD_BLOCKS, as md does. */
#ifndef RAIDFUSE_MEMBER_BADBLOCKS_H
#define RAIDFUSE_MEMBER_BADBLOCKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct member;

#define MEMBER_BADBLOCKS_MAX_SECTORS 8 /* md reads one page of log */

/* Load m's log after its superblock (member_super_load does). 0, or
 * -errno with err naming the member and what is wrong. */
int member_badblocks_load(struct member *m, char *err, size_t errlen);
void member_badblocks_free(struct member *m);

/* Bad ranges in the data area, and the bytes they cover (examine). */
size_t member_badblocks_count(struct member *m, uint64_t *bytes);

/* Whether [data_off, data_off + len) touches a bad range. Free when the
 * member has none. */
bool member_badblocks_hit(struct member *m, uint64_t data_off, uint64_t len);

#endif
