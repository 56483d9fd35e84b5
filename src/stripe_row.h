/* stripe_row.h - one row (stripe) of a RAID5/6 array held in memory: every
 * data chunk of the row with a state per 4 KiB column (invalid, clean,
 * dirty), the way md's stripe_head holds one page per disk with its flags.
 *
 * Writes land in the row (columns become dirty); flushing computes parity
 * and writes the dirty columns and P (and Q) to the members. The same row
 * object serves the stripe cache (rows kept, write-back) and write-through
 * (a row used for one request and flushed at once).
 */
#ifndef RAIDFUSE_STRIPE_ROW_H
#define RAIDFUSE_STRIPE_ROW_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "level.h"

struct raid_array;
struct member;

enum column_state {
	COLUMN_INVALID = 0,  /* not in memory */
	COLUMN_CLEAN,        /* in memory, equal to the member */
	COLUMN_DIRTY,        /* in memory, newer than the member */
};

struct stripe_row {
	uint64_t row;
	struct row_layout lay;
	uint32_t nr_columns;                  /* columns per chunk */
	/* Dirty columns over all chunks. Changed under the row's entry lock;
	 * atomic because the cache's list bookkeeping reads it under its
	 * own lock only (stripe_cache.c, entry_put_locked). */
	atomic_uint nr_dirty;
	uint8_t *data[RAID_MAX_MEMBERS];      /* chunk k, chunk_bytes, 64-byte aligned */
	uint8_t *state[RAID_MAX_MEMBERS];     /* chunk k, one enum column_state per column */
	uint8_t *buffers;                     /* one allocation behind data[] and state[] */
};

/* Flush strategy counters, for status. */
struct stripe_row_stats {
	uint64_t full_row;                    /* bands written with no reads */
	uint64_t run_rows;                    /* of those, rows written as one run */
	uint64_t rmw;                         /* read-modify-write bands */
	uint64_t rcw;                         /* reconstruct-write bands */
	uint64_t degraded;                    /* bands written with a member missing */
};

/* Set up row r of array a (buffers allocated, every column invalid). */
int stripe_row_init(struct stripe_row *r, struct raid_array *a, uint64_t row);
/* Make it row `row` again, all invalid, reusing the buffers. */
void stripe_row_reset(struct stripe_row *r, struct raid_array *a, uint64_t row);
void stripe_row_free(struct stripe_row *r);

/* Copy bytes [lo, hi) of chunk k from src into the row (reading the old
 * contents of partly covered columns first); the columns become dirty. */
int stripe_row_write(struct raid_array *a, struct stripe_row *r, int k, uint64_t lo,
                     uint64_t hi, const void *src);
/* Copy bytes [lo, hi) of chunk k out of the row, loading (or rebuilding)
 * what is not in memory. *was_cached tells whether all of it already was. */
int stripe_row_read(struct raid_array *a, struct stripe_row *r, int k, uint64_t lo,
                    uint64_t hi, void *dst, bool *was_cached);
/* The member read of bytes [lo, hi) of chunk k of row `row` straight into
 * dst, with no row in memory (md's chunk-aligned read). False when chunk
 * k's member is missing: only a row can rebuild it. */
struct io_req;
bool stripe_row_direct_read_req(struct raid_array *a, uint64_t row, int k, uint64_t lo,
                                uint64_t hi, void *dst, struct io_req *req);
/* Load every invalid column of every chunk (read-ahead, full-row reads). */
int stripe_row_load_all(struct raid_array *a, struct stripe_row *r);
/* With every column in memory and clean, compute P (and Q) and write
 * only them (resync). */
int stripe_row_write_parity(struct raid_array *a, struct stripe_row *r);
/* With every column loaded from the members, read the stored P (and Q)
 * and count the 4 KiB columns where they differ from what the data gives. */
int stripe_row_check(struct raid_array *a, struct stripe_row *r, uint64_t *bad_columns);

/* What stripe_row_sync_columns does with each column's parity. */
enum stripe_sync_mode {
	STRIPE_SYNC_CHECK,   /* compare, count mismatches */
	STRIPE_SYNC_REPAIR,  /* compare, count, write the mismatched */
	STRIPE_SYNC_REWRITE, /* write (resync) */
};

/* After stripe_row_load_all failed with -ENODATA (sectors in md's bad
 * block log on more members than parity covers, in some column): the
 * scrub or resync of the row column by column, passing over (and
 * counting in lost_columns) the columns that cannot be loaded. Parity
 * that cannot be read is written anew, as md's sync does. */
int stripe_row_sync_columns(struct raid_array *a, struct stripe_row *r,
                            enum stripe_sync_mode mode, uint64_t *bad_columns,
                            uint64_t *lost_columns);
/* With every data column in memory, write role's chunk of the row (data,
 * or P or Q computed here) to target (recovery). */
int stripe_row_rebuild_role(struct raid_array *a, struct stripe_row *r, int role,
                            struct member *target);
/* After stripe_row_load_all failed with -ENODATA (sectors in md's bad
 * block log where no redundancy is left): the same, column by column,
 * the columns that cannot be rebuilt logged as bad on target
 * (array_rebuild_lost). */
int stripe_row_rebuild_role_columns(struct raid_array *a, struct stripe_row *r, int role,
                                    struct member *target);
/* Whether every member of the row (data, P, Q) is in the array. */
bool stripe_row_all_present(const struct raid_array *a, const struct stripe_row *r);
/* Write a whole row of data and its parity straight to the members: no
 * reads. chunk_src[k] holds chunk k's new bytes, or is NULL when the row
 * holds all of chunk k already (stripe_row_chunk_held; a chunk it holds
 * clean only feeds the parity and is not rewritten). A source that is
 * PARITY_SRC_ALIGN_BYTES aligned is written in place, not copied (the
 * chunk's columns then become invalid); any other is copied into the row
 * (its columns stay clean). Only when stripe_row_all_present: degraded
 * writes go through the row. */
int stripe_row_write_whole(struct raid_array *a, struct stripe_row *r,
                           const void *const chunk_src[], struct stripe_row_stats *stats);
/* Rows written whole one after another, as one run: parity row by row,
 * then one write per member for all of them (a member's chunks of
 * consecutive rows are neighbours), where stripe_row_write_whole would
 * make one per row and member: small chunks make many small writes (md
 * batches full stripes for the same reason). chunk_src holds nr_data
 * sources per row, row after row. Rows that cannot go as one run (not
 * consecutive, a source NULL, a member missing or being rebuilt) go row
 * by row. */
#define STRIPE_RUN_MAX_ROWS 32
/* Rows a discard zeroes at a time: one request per member for all of
 * them, while the rows are held from every other request. */
#define STRIPE_ZERO_RUN_MAX_ROWS 256
int stripe_rows_write_whole(struct raid_array *a, struct stripe_row *const rows[], int nr_rows,
                            const void *const chunk_src[], struct stripe_row_stats *stats);
/* Zeros over the whole of rows[0..nr_rows), data and parity (a discard
 * of the volume): parity of zeros is zeros, P and Q alike, so nothing is
 * read or computed, and a degraded row stays consistent (its missing
 * chunk reads as zeros). The members free the space where they can. The
 * rows' columns become invalid (dirty ones dropped: the zeros supersede
 * them). Caller holds the rows and has them marked in the bitmap. */
int stripe_rows_zero(struct raid_array *a, struct stripe_row *const rows[], int nr_rows);
/* How many rows a run should hold: as many as fit the bytes the CPU's
 * cache keeps between the parity pass and the member writes (1 for rows
 * that fill it alone). */
int stripe_run_max_rows(const struct raid_array *a);
/* Whether every column of chunk k is in memory (clean or dirty). */
bool stripe_row_chunk_held(const struct stripe_row *r, int k);
/* Write every dirty column and its parity to the members. */
int stripe_row_flush(struct raid_array *a, struct stripe_row *r, struct stripe_row_stats *stats);

#endif
