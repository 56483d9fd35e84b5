/* row_lock.h - a fixed table of mutexes keyed by row (or region) number.
 * Two writers to one row must not interleave their parity updates; keys
 * that hash alike only serialise. A caller holds one key at a time, or
 * one range of keys taken with row_lock_range, which takes their buckets
 * in ascending order: no two callers can then wait on each other in a
 * cycle, and keys of a range sharing a bucket do not lock it twice. */
#ifndef RAIDFUSE_ROW_LOCK_H
#define RAIDFUSE_ROW_LOCK_H

#include <pthread.h>
#include <stdint.h>

#define ROW_LOCK_BUCKETS 1024

struct row_locks {
	pthread_mutex_t bucket[ROW_LOCK_BUCKETS];
};

void row_locks_init(struct row_locks *locks);
void row_locks_destroy(struct row_locks *locks);
void row_lock(struct row_locks *locks, uint64_t key);
void row_unlock(struct row_locks *locks, uint64_t key);
/* Every key of [first, last] (first <= last), and release them. */
void row_lock_range(struct row_locks *locks, uint64_t first, uint64_t last);
void row_unlock_range(struct row_locks *locks, uint64_t first, uint64_t last);

#endif
