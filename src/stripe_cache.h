/* stripe_cache.h - the stripe cache of a RAID5/6 array (md's
 * stripe_cache_size, in whole rows): writes land in cached rows and return
 * (write-back); flusher threads write dirty rows out under memory
 * pressure or when they have been dirty longer than an age; sequential
 * readers get the next rows read ahead. With capacity 0 every request uses
 * a row of its own that is flushed before the request returns
 * (write-through). */
#ifndef RAIDFUSE_STRIPE_CACHE_H
#define RAIDFUSE_STRIPE_CACHE_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

struct raid_array;
struct stripe_cache;

struct stripe_cache_counters {
	atomic_uint_fast64_t hits;            /* read pieces served from memory */
	atomic_uint_fast64_t misses;          /* read pieces loaded into a row */
	atomic_uint_fast64_t direct_reads;    /* read pieces of rows not cached, read
	                                       * from the members straight into the
	                                       * request */
	atomic_uint_fast64_t rows_flushed;
	atomic_uint_fast64_t full_row_writes; /* bands flushed with no reads */
	atomic_uint_fast64_t direct_rows;     /* whole rows written from the request */
	atomic_uint_fast64_t gathered_rows;   /* of those, rows gathered from several
	                                       * requests (write gathering) */
	atomic_uint_fast64_t run_rows;        /* of those, rows written in runs of
	                                       * consecutive rows, one member write
	                                       * per run (small chunks) */
	atomic_uint_fast64_t rmw_writes;      /* read-modify-write bands */
	atomic_uint_fast64_t rcw_writes;      /* reconstruct-write bands */
	atomic_uint_fast64_t degraded_writes; /* bands written with a member missing */
	atomic_uint_fast64_t readahead_rows;  /* rows read ahead */
	atomic_uint_fast64_t readahead_hits;  /* reads served by a row read ahead */
	atomic_uint_fast64_t zeroed_rows;     /* whole rows zeroed on the members (discard) */
};

int stripe_cache_create(struct raid_array *a, struct stripe_cache **out);
/* Flush nothing; stop the threads and free. Call stripe_cache_flush first. */
void stripe_cache_destroy(struct stripe_cache *cache);

int stripe_cache_read(struct raid_array *a, void *buf, size_t len, uint64_t off);
int stripe_cache_write(struct raid_array *a, const void *buf, size_t len, uint64_t off);
/* Zeros over [off, off + len) (a discard): whole rows zeroed on every
 * member, data and parity, with no reads (their cached contents
 * dropped); the parts of rows at the ends written as zeros through the
 * cache. */
int stripe_cache_zero(struct raid_array *a, size_t len, uint64_t off);
/* Write out every row that was dirty when the call began. 0 or -errno. */
int stripe_cache_flush(struct raid_array *a);

/* Hold a row against every other request, its dirty columns written out
 * first, so the members can be compared and rewritten (scrub). */
int stripe_cache_hold(struct raid_array *a, uint64_t row, void **handle);
void stripe_cache_release(struct raid_array *a, void *handle);

/* Status lines ("cache_size_mib: ...") appended to buf. */
size_t stripe_cache_status(struct raid_array *a, char *buf, size_t len);

#endif
