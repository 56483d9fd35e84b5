/* stripe_io.h - the row (stripe) engine shared by the parity levels: a
 * level supplies row_layout(); this code reads, reconstructs and writes
 * rows, keeping P (and Q) right on every write. */
#ifndef RAIDFUSE_STRIPE_IO_H
#define RAIDFUSE_STRIPE_IO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "level.h"

struct raid_array;
struct member;

/* Granularity of parity work inside a chunk, as md's 4 KiB stripe pages. */
#define STRIPE_COLUMN_BYTES 4096u

/* Common geometry checks and array size for a level with nr_parity
 * parity chunks per row. */
int stripe_geometry_init(struct raid_geometry *geo, int nr_parity, char *err, size_t errlen);
uint64_t stripe_usable_dev_bytes(const struct raid_geometry *geo, uint64_t bytes);
void stripe_map(const struct raid_geometry *geo, const void *priv, uint64_t off,
                struct raid_extent *out);

int stripe_io_read(struct raid_array *a, void *buf, size_t len, uint64_t off);
int stripe_io_write(struct raid_array *a, const void *buf, size_t len, uint64_t off);
int stripe_io_zero(struct raid_array *a, size_t len, uint64_t off);
/* Recompute every row's parity from its data (healthy arrays only). */
int stripe_io_resync(struct raid_array *a, uint64_t dev_lo, uint64_t dev_hi);
int stripe_io_check(struct raid_array *a, uint64_t *mismatch_sectors);
int stripe_io_attach(struct raid_array *a);
uint64_t stripe_io_scrub_units(const struct raid_array *a);
void *stripe_io_scrub_begin(struct raid_array *a);
int stripe_io_scrub_unit(struct raid_array *a, void *ctx, uint64_t row, bool repair,
                         uint64_t *mismatch_sectors);
void stripe_io_scrub_end(struct raid_array *a, void *ctx);
int stripe_io_recover_unit(struct raid_array *a, void *ctx, uint64_t row, int role,
                           struct member *target);
int stripe_io_flush(struct raid_array *a);
void stripe_io_detach(struct raid_array *a);
size_t stripe_io_status(struct raid_array *a, char *buf, size_t len);

#endif
