/* extent_io.h - volume I/O for levels whose bytes live in whole copies
 * (linear, raid0, raid1, raid10): read from the first copy that answers,
 * write every copy that is present. */
#ifndef RAIDFUSE_EXTENT_IO_H
#define RAIDFUSE_EXTENT_IO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct raid_array;
struct member;

int extent_io_read(struct raid_array *a, void *buf, size_t len, uint64_t off);
int extent_io_write(struct raid_array *a, const void *buf, size_t len, uint64_t off);
/* Zeros over [off, off + len) on every copy, punched where the members
 * can (raid_level_ops.zero). */
int extent_io_zero(struct raid_array *a, size_t len, uint64_t off);
/* Make every copy of what lies at [sync_lo, sync_hi) of the resync
 * address space equal to the first present one (resync). */
int extent_io_resync(struct raid_array *a, uint64_t sync_lo, uint64_t sync_hi);
/* Compare every copy with the first, counting 8 sectors per mismatched
 * 4 KiB page (md's raid1/raid10 count their whole resync block). */
int extent_io_check(struct raid_array *a, uint64_t *mismatch_sectors);
uint64_t extent_io_scrub_units(const struct raid_array *a);
void *extent_io_scrub_begin(struct raid_array *a);
int extent_io_scrub_unit(struct raid_array *a, void *ctx, uint64_t unit, bool repair,
                         uint64_t *mismatch_sectors);
void extent_io_scrub_end(struct raid_array *a, void *ctx);
/* Recovery in member order (any raid10 layout): units of a chunk or a
 * lock region of the member, each rebuilt from another copy of what it
 * holds (the level's member_to_volume says what). */
uint64_t extent_io_recover_units(const struct raid_array *a);
int extent_io_recover_unit(struct raid_array *a, void *ctx, uint64_t unit, int role,
                           struct member *target);

#endif
