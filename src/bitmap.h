/* bitmap.h - md's internal write-intent bitmap (md-bitmap.c, version 4).
 *
 * Each member carries a copy: a 256-byte bitmap superblock at
 * bitmap_offset sectors from the md superblock, the bits right after it.
 * One bit covers chunksize bytes of md's resync address space: every
 * member's data area for RAID1/4/5/6, the volume for RAID10 (see
 * raid_level_sync_bytes); "sync_off" below is an offset in that space.
 * A bit is set, and made durable on
 * every member, before the first write to its region reaches a member;
 * it is cleared once the region has been idle and in sync for a while.
 * After an unclean stop only the regions whose bits are set need a resync.
 */
#ifndef RAIDFUSE_BITMAP_H
#define RAIDFUSE_BITMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "md_super.h"

struct member;
struct raid_array;
struct write_bitmap;

#define BITMAP_OFFSET_SECTORS 8        /* where create puts it: 4 KiB after the superblock */
#define BITMAP_WRITTEN_SECTORS 8u      /* what create and grow write: 4 KiB */
#define BITMAP_BBLOG_ROOM_SECTORS 8    /* what mdadm keeps for a bad block log */
#define BITMAP_DAEMON_SLEEP_S 5        /* md's default */

#define BITMAP_DEFAULT_CHUNK_BYTES (64ull << 20) /* mdadm's default for internal bitmaps */
#define BITMAP_MIN_CHUNK_BYTES 4096u
#define BITMAP_MAX_CHUNK_BYTES (1ull << 31)
#define BITMAP_MAX_BITS 8192u                    /* what create prefers: 1 KiB of bits */
/* The most bits create can write: the room before the bad block log,
 * BITMAP_WRITTEN_SECTORS after the bitmap's, less its superblock. The default chunk
 * uses it only where 2 GiB chunks need more than BITMAP_MAX_BITS (a
 * resync space over 16 TiB: RAID5 of 20 TB disks). */
#define BITMAP_ROOM_BITS ((BITMAP_WRITTEN_SECTORS * 512u - MD_BITMAP_SB_BYTES) * 8u)

/* The bitmap chunk create writes for a resync space of sync_bytes:
 * wanted_bytes if not 0 (a power of two from 4 KiB to 2 GiB whose bits
 * fit in BITMAP_ROOM_BITS), else mdadm's default, 64 MiB, doubled until
 * the bits fit in BITMAP_MAX_BITS, or up to 2 GiB and the room. Coarser
 * chunks mean fewer bitmap updates while writing, longer resyncs after a
 * crash. 0, or -EINVAL with err saying what is wrong. */
int bitmap_pick_chunk(uint64_t sync_bytes, uint64_t wanted_bytes, uint64_t *chunk_bytes,
                      char *err, size_t errlen);

/* The chunk a bitmap of chunk_bytes needs once the resync space is
 * sync_bytes: the same, or doubled until its bits fit in
 * BITMAP_ROOM_BITS; 0 when even md's largest chunk does not fit. */
uint64_t bitmap_chunk_for(uint64_t sync_bytes, uint64_t chunk_bytes);

/* Write a fresh bitmap (all bits clear; its superblock and bits in whole
 * sectors, at most BITMAP_WRITTEN_SECTORS) where m's superblock says, to
 * a member being created or an array growing. -ENOSPC, writing nothing,
 * if that would overlap the superblock, data or bad block log. Not
 * synced. */
int bitmap_format_member(struct member *m, const uint8_t uuid[16], uint64_t sync_bytes,
                         uint64_t bitmap_chunk_bytes, uint64_t events);
/* Whether bitmap_format_member would find room on m. */
bool bitmap_fits(const struct member *m, uint64_t sync_bytes, uint64_t chunk_bytes);

/* Where mdadm --grow --bitmap=internal puts a bitmap on a member of an
 * array made without one (add_internal_bitmap1, with a settable offset):
 * 1.1 and 1.2 4 KiB after the superblock, up to the bad block log; 1.0
 * just before its bad block log (or the 4 KiB md keeps for one), after
 * the data. Sets *offset_sectors (from the superblock), or returns
 * -ENOSPC with err naming what is in the way. */
int bitmap_place_added(const struct member *m, int32_t *offset_sectors, char *err,
                       size_t errlen);

/* Read the bitmap of an assembled array (the freshest member's copy),
 * after its geometry is known (the bits cover its resync space). A stale
 * bitmap (its events behind the array's) is loaded with every bit set,
 * as md does. 0, or -errno with err set. Sets a->bitmap. */
int bitmap_load(struct raid_array *a, const struct member *fresh, char *err, size_t errlen);
void bitmap_free(struct write_bitmap *b);

/* Number of bits, and whether bit i is set (for resync). */
uint64_t bitmap_nr_bits(const struct write_bitmap *b);
uint64_t bitmap_chunk_bytes(const struct write_bitmap *b);
bool bitmap_test(const struct write_bitmap *b, uint64_t bit);
uint64_t bitmap_count_set(struct write_bitmap *b);
/* Whether any bit covering [sync_off, sync_off + len) is set. */
bool bitmap_range_dirty(struct write_bitmap *b, uint64_t sync_off, uint64_t len);
/* events_cleared: a member that left at these events or later missed
 * only what the bits mark. */
uint64_t bitmap_events_cleared(const struct write_bitmap *b);

/* Around every write to the members of what lies at [sync_off,
 * sync_off + len): start returns once the covering bits are durable on
 * every member. */
int bitmap_start_write(struct raid_array *a, uint64_t sync_off, uint64_t len);
void bitmap_end_write(struct raid_array *a, uint64_t sync_off, uint64_t len);

/* Clear the bits of regions with no write in flight that have been idle
 * for idle_ms (all of them when idle_ms is 0), after syncing the members.
 * Does nothing while the array is degraded (the bits say what a returning
 * member would need). */
int bitmap_clear_idle(struct raid_array *a, uint64_t idle_ms);

/* Write the bitmap superblock (events) and the bits to every member. */
int bitmap_store(struct raid_array *a);

#endif
