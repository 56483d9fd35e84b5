/* member_badblocks.h - md's bad block log of a member (md's "bbl"): the
 * sectors where md saw a write fail without failing the member. They hold
 * whatever was there before, not the array's data, so md never reads them
 * and neither does raidfuse: a read that touches one fails with -ENODATA
 * (member_read), which the array answers from redundancy without holding
 * it against the member, and mends by writing the rebuilt bytes back.
 * A write that covers logged sectors makes them good (md's MadeGood):
 * they leave the log in memory at once, and on the member once the write
 * is on stable storage (member_sync). raidfuse never adds entries: a
 * failed write fails the member, as md does without a log.
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
/* (A member whose superblock leaves room for a log, as mdadm's do, gets an
 * empty one even without MD_FEATURE_BAD_BLOCKS, for member_badblocks_add;
 * without room, m->badblocks stays NULL.) */
void member_badblocks_free(struct member *m);

/* Bad ranges in the data area, and the bytes they cover (examine). */
size_t member_badblocks_count(struct member *m, uint64_t *bytes);

/* Whether [data_off, data_off + len) touches a bad range. Free when the
 * member has none. */
bool member_badblocks_hit(struct member *m, uint64_t data_off, uint64_t len);

/* [data_off, data_off + len) was written: the whole log units inside it
 * leave the log (in memory). True if any did. A range split in two that
 * would overflow the log stays whole, as in md. */
bool member_badblocks_clear(struct member *m, uint64_t data_off, uint64_t len);

/* [data_off, data_off + len) holds none of the array's bytes (a rebuild
 * found no member that does): every log unit it touches joins the log
 * in memory; member_sync stores it. -ENOSPC if the member has no room
 * for a log, or the log is full (md then fails the member). */
int member_badblocks_add(struct member *m, uint64_t data_off, uint64_t len);

/* sync_data(m), and the log on the member brought up to date after it
 * when sectors were cleared since the last time: the list is taken
 * before the data sync, so no sector leaves the log on the member before
 * the write that made it good is durable. member_sync calls it. */
int member_badblocks_sync(struct member *m, int (*sync_data)(struct member *m));

/* The ranges as md's sysfs bad_blocks shows them, a line each: first
 * sector (absolute on the member) and count. Returns the length. */
size_t member_badblocks_format(struct member *m, char *buf, size_t len);

/* What MD_FEATURE_BAD_BLOCKS in m's superblock should say: 1 (set) when
 * the log on the member holds entries, -1 (clear, as md's super_1_sync
 * drops it) when it holds none and none are pending, 0 (leave it) while
 * a change waits for member_sync. The bit is never set before the log it
 * points to is on the member. */
int member_badblocks_feature(struct member *m);

#endif
