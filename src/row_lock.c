/* row_lock.c - see row_lock.h. */
#include "config.h"

#include <stdbool.h>
#include <string.h>

#include "row_lock.h"

static unsigned row_lock_bucket(uint64_t key)
{
	/* Fibonacci hashing spreads neighbouring rows over distinct buckets. */
	return (unsigned)((key * 0x9e3779b97f4a7c15ull) >> 54) % ROW_LOCK_BUCKETS;
}

void row_locks_init(struct row_locks *locks)
{
	for (unsigned i = 0; i < ROW_LOCK_BUCKETS; i++)
		pthread_mutex_init(&locks->bucket[i], NULL);
}

void row_locks_destroy(struct row_locks *locks)
{
	for (unsigned i = 0; i < ROW_LOCK_BUCKETS; i++)
		pthread_mutex_destroy(&locks->bucket[i]);
}

void row_lock(struct row_locks *locks, uint64_t key)
{
	pthread_mutex_lock(&locks->bucket[row_lock_bucket(key)]);
}

void row_unlock(struct row_locks *locks, uint64_t key)
{
	pthread_mutex_unlock(&locks->bucket[row_lock_bucket(key)]);
}

/* The buckets the keys [first, last] fall in. */
static void range_buckets(uint64_t first, uint64_t last, bool used[ROW_LOCK_BUCKETS])
{
	memset(used, 0, ROW_LOCK_BUCKETS * sizeof(used[0]));
	if (last - first >= ROW_LOCK_BUCKETS) {
		memset(used, 1, ROW_LOCK_BUCKETS * sizeof(used[0]));
		return;
	}
	for (uint64_t key = first;; key++) {
		used[row_lock_bucket(key)] = true;
		if (key == last)
			break;
	}
}

void row_lock_range(struct row_locks *locks, uint64_t first, uint64_t last)
{
	bool used[ROW_LOCK_BUCKETS];

	range_buckets(first, last, used);
	for (unsigned i = 0; i < ROW_LOCK_BUCKETS; i++)
		if (used[i])
			pthread_mutex_lock(&locks->bucket[i]);
}

void row_unlock_range(struct row_locks *locks, uint64_t first, uint64_t last)
{
	bool used[ROW_LOCK_BUCKETS];

	range_buckets(first, last, used);
	for (unsigned i = ROW_LOCK_BUCKETS; i-- > 0;)
		if (used[i])
			pthread_mutex_unlock(&locks->bucket[i]);
}
