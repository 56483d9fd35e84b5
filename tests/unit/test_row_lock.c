/* test_row_lock.c - row_lock_range: a range whose keys share a bucket
 * locks it once (no self-deadlock) and holds every key of the range until
 * released; two ranges whose keys meet the same buckets in opposite
 * orders are taken over and over by two threads without deadlocking (the
 * criterion timeout fails the test if they do). Buckets are found by
 * trying their mutexes, not by copying the hash. */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include <criterion/criterion.h>

#include "row_lock.h"

static struct row_locks locks;

static void setup(void)
{
	row_locks_init(&locks);
}

static void teardown(void)
{
	row_locks_destroy(&locks);
}

TestSuite(row_lock, .init = setup, .fini = teardown, .timeout = 60);

/* The bucket key falls in: the one mutex busy while the key is held. */
static int bucket_of(uint64_t key)
{
	int found = -1;

	row_lock(&locks, key);
	for (int i = 0; i < ROW_LOCK_BUCKETS; i++) {
		if (pthread_mutex_trylock(&locks.bucket[i]) == EBUSY) {
			found = i;
			continue;
		}
		pthread_mutex_unlock(&locks.bucket[i]);
	}
	row_unlock(&locks, key);
	cr_assert_geq(found, 0, "no bucket busy while key %llu is held", (unsigned long long)key);
	return found;
}

struct bucket_probe {
	int bucket;
	bool busy;
};

/* From another thread, which holds nothing: is the bucket taken? */
static void *probe_bucket(void *arg)
{
	struct bucket_probe *p = arg;

	p->busy = pthread_mutex_trylock(&locks.bucket[p->bucket]) == EBUSY;
	if (!p->busy)
		pthread_mutex_unlock(&locks.bucket[p->bucket]);
	return NULL;
}

static bool bucket_busy(int bucket)
{
	struct bucket_probe p = { bucket, false };
	pthread_t t;

	cr_assert_eq(pthread_create(&t, NULL, probe_bucket, &p), 0);
	pthread_join(t, NULL);
	return p.busy;
}

Test(row_lock, range_with_a_shared_bucket)
{
	enum { NR_KEYS = ROW_LOCK_BUCKETS + 1 }; /* two of them must share a bucket */
	static int bucket[NR_KEYS];
	int first = -1, last = -1;

	for (int k = 0; k < NR_KEYS && first < 0; k++) {
		bucket[k] = bucket_of((uint64_t)k);
		for (int j = 0; j < k && first < 0; j++)
			if (bucket[j] == bucket[k]) {
				first = j;
				last = k;
			}
	}
	cr_assert_geq(first, 0, "no two of %d keys share a bucket", NR_KEYS);

	row_lock_range(&locks, (uint64_t)first, (uint64_t)last);
	for (int k = first; k <= last; k++)
		cr_expect(bucket_busy(bucket[k]), "key %d of [%d, %d] is not held", k, first, last);
	row_unlock_range(&locks, (uint64_t)first, (uint64_t)last);
	for (int k = first; k <= last; k++)
		cr_expect_not(bucket_busy(bucket[k]), "key %d still held after the unlock", k);
}

struct range_worker {
	uint64_t first, last;
	int rounds;
};

static void *lock_range_rounds(void *arg)
{
	struct range_worker *w = arg;

	for (int i = 0; i < w->rounds; i++) {
		row_lock_range(&locks, w->first, w->last);
		row_unlock_range(&locks, w->first, w->last);
	}
	return NULL;
}

Test(row_lock, opposite_orders_do_not_deadlock)
{
	enum { SEARCH = 20000, SPAN = 4096 };
	static int bucket[SEARCH + SPAN];
	int x, y;

	for (int k = 0; k < SEARCH + SPAN; k++)
		bucket[k] = bucket_of((uint64_t)k);
	x = bucket[0];
	y = bucket[1];
	cr_assert_neq(x, y, "keys 0 and 1 share a bucket: pick other keys");
	/* A range meeting y first and x after it: taken key by key, the two
	 * ranges would lock x, y and y, x. */
	int s = -1, t = -1;
	for (int k = 2; k < SEARCH && s < 0; k++) {
		if (bucket[k] != y)
			continue;
		for (int j = k + 1; j < k + SPAN; j++) {
			if (bucket[j] == x) {
				s = k;
				t = j;
				break;
			}
		}
	}
	cr_assert_geq(s, 0, "no key range meets bucket %d before bucket %d", y, x);

	struct range_worker a = { 0, 1, 200000 }, b = { (uint64_t)s, (uint64_t)t, 200000 };
	pthread_t ta, tb;
	cr_assert_eq(pthread_create(&ta, NULL, lock_range_rounds, &a), 0);
	cr_assert_eq(pthread_create(&tb, NULL, lock_range_rounds, &b), 0);
	pthread_join(ta, NULL);
	pthread_join(tb, NULL);
	for (int i = 0; i < ROW_LOCK_BUCKETS; i++)
		cr_expect_not(bucket_busy(i), "bucket %d left locked", i);
}
