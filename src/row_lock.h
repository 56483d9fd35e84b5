/* row_lock.h - a fixed table of mutexes keyed by row (or region) number.
 * Two writers to one row must not interleave their parity updates; keys
 * that hash alike only serialise, and a caller holds one key at a time,
 * so there is no lock order to get wrong. */
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

#endif
