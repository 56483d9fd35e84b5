/* stripe_cache.c - see stripe_cache.h.
 *
 * Locking: the cache lock guards the table, the lists, pins and counts and
 * is never held across member I/O. Each cached row has its own mutex for
 * its contents, held while it is read, written, loaded or flushed, so
 * requests to different rows run in parallel. A pinned row is never
 * evicted; only clean rows are evicted, least recently used first. Every
 * entry is on exactly one list: clean ones on the LRU, dirty ones on the
 * dirty list (oldest first), so finding a victim or the oldest dirty row
 * does not walk past the other kind. A writer that finds the cache full
 * of dirty rows flushes the oldest itself.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "array.h"
#include "bitmap.h"
#include "io_pool.h"
#include "stripe_cache.h"
#include "stripe_io.h"
#include "stripe_row.h"

#define CACHE_MIN_ROWS 4
/* With the cache off, rows are only a request's working space: enough of
 * them for every request in flight, none kept. */
#define CACHE_UNCACHED_ROWS 64
#define CACHE_FLUSHER_TICK_MS 50
/* Flushers run rows in parallel: a row's flush mostly waits on member
 * reads (read-modify-write), one at a time (they run their small batches
 * themselves), so their number is the write-back's queue depth on the
 * members, as md's raid5 keeps many stripes' reads in flight at once. A
 * virtio disk served 22k random 4 KiB read pairs a second at 8 in flight
 * and 42k at 64; 32 flushers gave RAID5 random writes over 16 times the
 * cache 34-40% more than 8 did, and 64 no more than 32
 * (docs/benchmarks.md). */
#define CACHE_FLUSHER_THREADS 32
/* Member I/O batches a flusher runs itself (io_pool_thread_inline_bytes). */
#define CACHE_FLUSHER_INLINE_BATCH_BYTES (64 * 1024)
/* Direct reads gathered before they are issued together: a 1 MiB
 * request of 64 KiB chunks is 16. */
#define CACHE_DIRECT_READS 32

struct gather_piece;
struct write_flight;

struct cache_entry {
	struct stripe_row r;
	pthread_mutex_t lock;               /* the row's contents */
	int pins;
	bool in_table;
	bool read_ahead;                    /* loaded by read-ahead, not yet read */
	uint64_t dirty_seq;                 /* when it became dirty (0: clean) */
	uint64_t dirty_since_ms;
	struct gather_piece *gather;        /* writes waiting for the rest of the row */
	uint64_t gather_mask;               /* their data chunks */
	struct cache_entry *hash_next;
	struct cache_entry *lru_prev, *lru_next;     /* clean entries, LRU first */
	struct cache_entry *dirty_prev, *dirty_next; /* dirty entries, oldest first */
};

struct entry_list {
	struct cache_entry *head, *tail;
};

struct stripe_cache {
	struct raid_array *a;
	pthread_mutex_t lock;
	pthread_cond_t flusher_wake;
	pthread_cond_t clean_ready;         /* an entry became clean or unpinned */
	size_t max_entries;
	size_t nr_entries;
	size_t nr_dirty;
	size_t nr_buckets;
	struct cache_entry **buckets;
	struct entry_list lru;
	struct entry_list dirty;
	uint64_t next_dirty_seq;
	int nr_waiting_clean;               /* threads waiting on clean_ready */
	bool stopping;
	bool flush_requested;
	pthread_t flushers[CACHE_FLUSHER_THREADS];
	int nr_flushers;

	/* Read-ahead: one sequential stream is followed. */
	uint64_t last_read_end;
	unsigned sequential_reads;
	uint64_t ra_queue[64];
	unsigned ra_head, ra_count;
	pthread_cond_t ra_wake;
	pthread_t ra_thread;
	bool ra_running;

	/* Write gathering (see struct gather_piece). */
	struct write_flight *flights;
	pthread_cond_t gather_cv;
	int nr_gather_waiters;
	size_t nr_gather, max_gather;

	struct stripe_cache_counters counters;
};

static uint64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* With the cache off, a row lives for one request: nothing stays dirty
 * and nothing read is kept. */
static bool cache_retains(const struct stripe_cache *c)
{
	return c->a->tuning.cache_bytes > 0;
}

/* ---- intrusive lists ------------------------------------------------- */

#define LIST_UNLINK(list, e, prev, next)                        \
	do {                                                    \
		if ((e)->prev) (e)->prev->next = (e)->next;     \
		else (list)->head = (e)->next;                  \
		if ((e)->next) (e)->next->prev = (e)->prev;     \
		else (list)->tail = (e)->prev;                  \
		(e)->prev = (e)->next = NULL;                   \
	} while (0)

#define LIST_APPEND(list, e, prev, next)                        \
	do {                                                    \
		(e)->next = NULL;                               \
		(e)->prev = (list)->tail;                       \
		if ((list)->tail) (list)->tail->next = (e);     \
		else (list)->head = (e);                        \
		(list)->tail = (e);                             \
	} while (0)

static size_t bucket_of(const struct stripe_cache *c, uint64_t row)
{
	return (size_t)((row * 0x9e3779b97f4a7c15ull) >> 20) & (c->nr_buckets - 1);
}

static struct cache_entry *table_find(struct stripe_cache *c, uint64_t row)
{
	for (struct cache_entry *e = c->buckets[bucket_of(c, row)]; e; e = e->hash_next)
		if (e->r.row == row)
			return e;
	return NULL;
}

static void table_insert(struct stripe_cache *c, struct cache_entry *e)
{
	size_t b = bucket_of(c, e->r.row);
	e->hash_next = c->buckets[b];
	c->buckets[b] = e;
	e->in_table = true;
}

static void table_remove(struct stripe_cache *c, struct cache_entry *e)
{
	struct cache_entry **link = &c->buckets[bucket_of(c, e->r.row)];
	while (*link != e)
		link = &(*link)->hash_next;
	*link = e->hash_next;
	e->hash_next = NULL;
	e->in_table = false;
}

/* ---- pinning ---------------------------------------------------------- */

/* A clean, unpinned entry to reuse, least recently used first. */
static struct cache_entry *find_victim(struct stripe_cache *c)
{
	for (struct cache_entry *e = c->lru.head; e; e = e->lru_next)
		if (e->pins == 0)
			return e;
	return NULL;
}

/* Ask the flusher for a pass, waking it once rather than on every
 * request while the pressure lasts. Caller holds c->lock. */
static void flusher_nudge_locked(struct stripe_cache *c)
{
	if (c->flush_requested)
		return;
	c->flush_requested = true;
	pthread_cond_broadcast(&c->flusher_wake);
}

static int entry_flush(struct stripe_cache *c, struct cache_entry *e);
static void entry_put_locked(struct stripe_cache *c, struct cache_entry *e);

/* Pin the entry for row, creating or recycling one. Caller holds c->lock. */
static int entry_get_locked(struct stripe_cache *c, uint64_t row, bool may_wait,
                            struct cache_entry **out)
{
	struct raid_array *a = c->a;

	for (;;) {
		struct cache_entry *e = table_find(c, row);
		if (e) {
			e->pins++;
			if (!e->dirty_seq) {
				LIST_UNLINK(&c->lru, e, lru_prev, lru_next);
				LIST_APPEND(&c->lru, e, lru_prev, lru_next);
			}
			*out = e;
			return 0;
		}
		/* With the cache off, reuse a row before making one more. */
		e = cache_retains(c) ? NULL : find_victim(c);
		if (!e && c->nr_entries < c->max_entries) {
			e = calloc(1, sizeof(*e));
			if (!e)
				return -ENOMEM;
			int rc = stripe_row_init(&e->r, a, row);
			if (rc < 0) {
				free(e);
				return rc;
			}
			pthread_mutex_init(&e->lock, NULL);
			c->nr_entries++;
		} else {
			if (!e)
				e = find_victim(c);
			if (!e) {
				if (!may_wait)
					return -EBUSY;
				flusher_nudge_locked(c);
				/* Full of dirty rows: write the oldest one out here
				 * rather than queue behind the flushers, so every
				 * writer under pressure flushes in parallel (as md's
				 * raid5 worker threads do). */
				struct cache_entry *oldest = c->dirty.head;
				while (oldest && oldest->pins)
					oldest = oldest->dirty_next;
				if (oldest) {
					oldest->pins++;
					pthread_mutex_unlock(&c->lock);
					entry_flush(c, oldest);
					pthread_mutex_lock(&c->lock);
					entry_put_locked(c, oldest);
				} else {
					c->nr_waiting_clean++;
					pthread_cond_wait(&c->clean_ready, &c->lock);
					c->nr_waiting_clean--;
				}
				continue;
			}
			table_remove(c, e);
			LIST_UNLINK(&c->lru, e, lru_prev, lru_next);
			stripe_row_reset(&e->r, a, row);
			e->read_ahead = false;
		}
		table_insert(c, e);
		LIST_APPEND(&c->lru, e, lru_prev, lru_next);
		e->pins = 1;
		*out = e;
		return 0;
	}
}

/* Unpin; note a row that became dirty or clean. Caller holds c->lock
 * and no longer holds e->lock. */
static void entry_put_locked(struct stripe_cache *c, struct cache_entry *e)
{
	if (e->r.nr_dirty && !e->dirty_seq) {
		e->dirty_seq = ++c->next_dirty_seq;
		e->dirty_since_ms = now_ms();
		LIST_UNLINK(&c->lru, e, lru_prev, lru_next);
		LIST_APPEND(&c->dirty, e, dirty_prev, dirty_next);
		c->nr_dirty++;
		if (c->nr_dirty * 4 >= c->max_entries * 3)
			flusher_nudge_locked(c);
	} else if (!e->r.nr_dirty && e->dirty_seq) {
		e->dirty_seq = 0;
		LIST_UNLINK(&c->dirty, e, dirty_prev, dirty_next);
		LIST_APPEND(&c->lru, e, lru_prev, lru_next);
		c->nr_dirty--;
	}
	if (--e->pins == 0 && c->nr_waiting_clean > 0)
		pthread_cond_broadcast(&c->clean_ready);
}

static void entry_put(struct stripe_cache *c, struct cache_entry *e)
{
	pthread_mutex_lock(&c->lock);
	entry_put_locked(c, e);
	pthread_mutex_unlock(&c->lock);
}

/* The entry of `row`, pinned and with its contents lock held. */
static int entry_acquire(struct stripe_cache *c, uint64_t row, struct cache_entry **out)
{
	pthread_mutex_lock(&c->lock);
	int rc = entry_get_locked(c, row, true, out);
	pthread_mutex_unlock(&c->lock);
	if (rc == 0)
		pthread_mutex_lock(&(*out)->lock);
	return rc;
}

/* Flush a pinned entry whose lock the caller holds. A row that cannot be
 * written (no redundancy left to absorb the error) is dropped and the
 * error kept for fsync, so one bad row cannot wedge the cache. */
static int entry_flush_held(struct stripe_cache *c, struct cache_entry *e)
{
	struct stripe_row_stats stats = { 0 };
	int rc = 0;

	if (!e->r.nr_dirty)
		return 0;
	/* The row's region must be marked in the write-intent bitmap before
	 * any of its columns reach a member. */
	rc = bitmap_start_write(c->a, e->r.lay.member_off_bytes, c->a->geo.chunk_bytes);
	if (rc == 0)
		rc = stripe_row_flush(c->a, &e->r, &stats);
	bitmap_end_write(c->a, e->r.lay.member_off_bytes, c->a->geo.chunk_bytes);
	if (rc < 0) {
		array_logf(c->a, "row %llu: write-back failed: %s; the writes it could not put out "
		           "are lost, and fsync reports it",
		           (unsigned long long)e->r.row,
		           rc == -ENODATA ? "sectors in md's bad block log that no other member holds"
		                          : strerror(-rc));
		array_note_write_error(c->a, rc);
		stripe_row_reset(&e->r, c->a, e->r.row);
	} else {
		atomic_fetch_add(&c->counters.rows_flushed, 1);
	}
	atomic_fetch_add(&c->counters.full_row_writes, stats.full_row);
	atomic_fetch_add(&c->counters.rmw_writes, stats.rmw);
	atomic_fetch_add(&c->counters.rcw_writes, stats.rcw);
	atomic_fetch_add(&c->counters.degraded_writes, stats.degraded);
	return rc;
}

/* New bytes for every data chunk of rows[0..nr) (chunk_src: nr_data per
 * row, row after row; NULL for the row's own) go straight to the members
 * with their parity, consecutive rows as one run (md handles full-stripe
 * writes the same way: nothing to read, nothing to gain by waiting).
 * Caller holds every row's entry lock and a pin. */
static int rows_write_whole_held(struct stripe_cache *c, struct stripe_row *const rows[], int nr,
                                 const void *const chunk_src[])
{
	struct raid_array *a = c->a;
	struct stripe_row_stats stats = { 0 };
	uint64_t dev_off = rows[0]->lay.member_off_bytes, dev_len = (uint64_t)nr * a->geo.chunk_bytes;
	int rc = bitmap_start_write(a, dev_off, dev_len);

	if (rc == 0)
		rc = stripe_rows_write_whole(a, rows, nr, chunk_src, &stats);
	bitmap_end_write(a, dev_off, dev_len);
	if (rc < 0)
		array_note_write_error(a, rc);
	atomic_fetch_add(&c->counters.full_row_writes, stats.full_row);
	atomic_fetch_add(&c->counters.direct_rows, stats.full_row);
	atomic_fetch_add(&c->counters.run_rows, stats.run_rows);
	return rc;
}

static int entry_write_whole_held(struct stripe_cache *c, struct cache_entry *e,
                                  const void *const chunk_src[])
{
	struct stripe_row *row = &e->r;

	return rows_write_whole_held(c, &row, 1, chunk_src);
}

/* Rows run[0..nr) written whole from src, as one run. */
static int entries_write_run_held(struct stripe_cache *c, struct cache_entry *const run[], int nr,
                                  const char *src)
{
	struct stripe_row *rows[STRIPE_RUN_MAX_ROWS];
	const void *chunk_src[STRIPE_RUN_MAX_ROWS * RAID_MAX_MEMBERS];
	int nr_data = run[0]->r.lay.nr_data;
	uint64_t chunk = c->a->geo.chunk_bytes;

	for (int i = 0; i < nr; i++) {
		rows[i] = &run[i]->r;
		for (int k = 0; k < nr_data; k++)
			chunk_src[i * nr_data + k] = src + ((size_t)i * (size_t)nr_data + (size_t)k) * chunk;
	}
	return rows_write_whole_held(c, rows, nr, chunk_src);
}

static int entry_flush(struct stripe_cache *c, struct cache_entry *e)
{
	pthread_mutex_lock(&e->lock);
	int rc = entry_flush_held(c, e);
	pthread_mutex_unlock(&e->lock);
	return rc;
}

static bool row_fully_dirty(const struct stripe_row *r)
{
	return r->nr_dirty == r->nr_columns * (uint32_t)r->lay.nr_data;
}

/* ---- the flusher and read-ahead threads ------------------------------ */

/* The oldest dirty row no other thread is flushing. Caller holds c->lock. */
static struct cache_entry *oldest_unpinned_dirty(struct stripe_cache *c)
{
	struct cache_entry *e = c->dirty.head;
	while (e && e->pins)
		e = e->dirty_next;
	return e;
}

static void *flusher_main(void *arg)
{
	struct stripe_cache *c = arg;
	const struct array_tuning *t = &c->a->tuning;

	/* No request waits on a flusher, and enough of them run to keep the
	 * members busy: their small reads (read-modify-write, a few columns)
	 * run here rather than costing a hand-off each. */
	io_pool_thread_inline_bytes(CACHE_FLUSHER_INLINE_BATCH_BYTES);

	pthread_mutex_lock(&c->lock);
	while (!c->stopping) {
		struct cache_entry *e = oldest_unpinned_dirty(c);
		bool pressure = c->nr_dirty * 4 >= c->max_entries * 3 || c->flush_requested;
		bool old_enough = e && now_ms() - e->dirty_since_ms >= t->flush_age_ms;

		if (!e || (!pressure && !old_enough)) {
			if (!c->dirty.head)
				c->flush_requested = false;
			struct timespec until;
			clock_gettime(CLOCK_REALTIME, &until);
			until.tv_nsec += CACHE_FLUSHER_TICK_MS * 1000000L;
			if (until.tv_nsec >= 1000000000L) {
				until.tv_sec++;
				until.tv_nsec -= 1000000000L;
			}
			pthread_cond_timedwait(&c->flusher_wake, &c->lock, &until);
			continue;
		}
		e->pins++;
		pthread_mutex_unlock(&c->lock);
		entry_flush(c, e);
		pthread_mutex_lock(&c->lock);
		entry_put_locked(c, e);
		if (!c->dirty.head || c->nr_dirty * 2 < c->max_entries)
			c->flush_requested = false;
	}
	pthread_mutex_unlock(&c->lock);
	return NULL;
}

static void *readahead_main(void *arg)
{
	struct stripe_cache *c = arg;

	pthread_mutex_lock(&c->lock);
	while (!c->stopping) {
		if (c->ra_count == 0) {
			pthread_cond_wait(&c->ra_wake, &c->lock);
			continue;
		}
		uint64_t row = c->ra_queue[c->ra_head];
		c->ra_head = (c->ra_head + 1) % (sizeof(c->ra_queue) / sizeof(c->ra_queue[0]));
		c->ra_count--;
		struct cache_entry *e;
		if (table_find(c, row) || entry_get_locked(c, row, false, &e) < 0)
			continue; /* cached already, or no clean room: read-ahead is optional */
		pthread_mutex_unlock(&c->lock);
		pthread_mutex_lock(&e->lock);
		if (stripe_row_load_all(c->a, &e->r) == 0) {
			e->read_ahead = true;
			atomic_fetch_add(&c->counters.readahead_rows, 1);
		}
		pthread_mutex_unlock(&e->lock);
		pthread_mutex_lock(&c->lock);
		entry_put_locked(c, e);
	}
	pthread_mutex_unlock(&c->lock);
	return NULL;
}

/* A read of [off, off+len) ended at row `row`: if the stream is
 * sequential, queue the next rows. Caller holds c->lock. */
static void readahead_note_locked(struct stripe_cache *c, uint64_t off, size_t len, uint64_t row,
                                  uint64_t nr_rows)
{
	unsigned depth = c->a->tuning.readahead_rows;
	const unsigned queue_cap = sizeof(c->ra_queue) / sizeof(c->ra_queue[0]);

	c->sequential_reads = off == c->last_read_end ? c->sequential_reads + 1 : 0;
	c->last_read_end = off + len;
	if (!c->ra_running || depth == 0 || c->sequential_reads < 2)
		return;
	for (uint64_t next = row + 1; next <= row + depth && next < nr_rows; next++) {
		if (c->ra_count == queue_cap || table_find(c, next))
			continue;
		bool queued = false;
		for (unsigned i = 0; i < c->ra_count && !queued; i++)
			queued = c->ra_queue[(c->ra_head + i) % queue_cap] == next;
		if (queued)
			continue;
		c->ra_queue[(c->ra_head + c->ra_count) % queue_cap] = next;
		c->ra_count++;
	}
	pthread_cond_signal(&c->ra_wake);
}

/* ---- public ----------------------------------------------------------- */

int stripe_cache_create(struct raid_array *a, struct stripe_cache **out)
{
	struct stripe_cache *c = calloc(1, sizeof(*c));
	uint64_t row_bytes = (uint64_t)a->geo.chunk_bytes *
	                     (uint64_t)(a->geo.raid_disks - a->ops->max_parity);

	*out = NULL;
	if (!c)
		return -ENOMEM;
	c->a = a;
	pthread_mutex_init(&c->lock, NULL);
	pthread_cond_init(&c->flusher_wake, NULL);
	pthread_cond_init(&c->clean_ready, NULL);
	pthread_cond_init(&c->ra_wake, NULL);
	pthread_cond_init(&c->gather_cv, NULL);
	c->max_entries = (size_t)(a->tuning.cache_bytes / row_bytes);
	if (c->max_entries < CACHE_MIN_ROWS)
		c->max_entries = CACHE_MIN_ROWS;
	if (a->tuning.cache_bytes == 0)
		c->max_entries = CACHE_UNCACHED_ROWS;
	/* Rows pinned for waiting writes (until their owners return) stay a
	 * minority, so the requests they wait for always find room. */
	c->max_gather = c->max_entries / 4 ? c->max_entries / 4 : 1;
	c->nr_buckets = 64;
	while (c->nr_buckets < c->max_entries * 2)
		c->nr_buckets *= 2;
	c->buckets = calloc(c->nr_buckets, sizeof(*c->buckets));
	if (!c->buckets) {
		stripe_cache_destroy(c);
		return -ENOMEM;
	}
	for (int i = 0; i < CACHE_FLUSHER_THREADS; i++) {
		if (pthread_create(&c->flushers[i], NULL, flusher_main, c) != 0) {
			stripe_cache_destroy(c);
			return -EAGAIN;
		}
		c->nr_flushers++;
	}
	if (a->tuning.readahead_rows > 0 && a->tuning.cache_bytes > 0) {
		if (pthread_create(&c->ra_thread, NULL, readahead_main, c) == 0)
			c->ra_running = true;
	}
	*out = c;
	return 0;
}

void stripe_cache_destroy(struct stripe_cache *c)
{
	if (!c)
		return;
	pthread_mutex_lock(&c->lock);
	c->stopping = true;
	pthread_cond_broadcast(&c->flusher_wake);
	pthread_cond_broadcast(&c->ra_wake);
	pthread_mutex_unlock(&c->lock);
	for (int i = 0; i < c->nr_flushers; i++)
		pthread_join(c->flushers[i], NULL);
	if (c->ra_running)
		pthread_join(c->ra_thread, NULL);
	/* Dirty rows left (a flush that failed) are dropped with the rest. */
	for (struct cache_entry *e = c->dirty.head, *next; e; e = next) {
		next = e->dirty_next;
		LIST_UNLINK(&c->dirty, e, dirty_prev, dirty_next);
		LIST_APPEND(&c->lru, e, lru_prev, lru_next);
	}
	for (struct cache_entry *e = c->lru.head, *next; e; e = next) {
		next = e->lru_next;
		stripe_row_free(&e->r);
		pthread_mutex_destroy(&e->lock);
		free(e);
	}
	free(c->buckets);
	pthread_cond_destroy(&c->gather_cv);
	pthread_cond_destroy(&c->ra_wake);
	pthread_cond_destroy(&c->clean_ready);
	pthread_cond_destroy(&c->flusher_wake);
	pthread_mutex_destroy(&c->lock);
	free(c);
}

static uint64_t cache_row_bytes(const struct raid_array *a)
{
	return (uint64_t)a->geo.chunk_bytes * (uint64_t)(a->geo.raid_disks - a->ops->max_parity);
}

/* Where volume byte `off` lies: its row, the data chunk k in that row,
 * the offset in the chunk, and how many of len bytes the chunk holds
 * (reads and writes cut their ranges at chunks with it). */
struct chunk_piece {
	uint64_t row;
	int k;
	uint64_t lo;
	size_t len;
};

static struct chunk_piece piece_at(const struct raid_array *a, uint64_t off, size_t len)
{
	uint64_t chunk = a->geo.chunk_bytes, row_bytes = cache_row_bytes(a);
	uint64_t in_row = off % row_bytes;
	struct chunk_piece p = {
		.row = off / row_bytes,
		.k = (int)(in_row / chunk),
		.lo = in_row % chunk,
	};
	p.len = chunk - p.lo < len ? (size_t)(chunk - p.lo) : len;
	return p;
}

/* One piece through a cached row. */
static int read_piece_cached(struct stripe_cache *c, const struct chunk_piece *p, char *dst)
{
	struct raid_array *a = c->a;
	struct cache_entry *e;
	bool was_cached = false;

	int rc = entry_acquire(c, p->row, &e);
	if (rc < 0)
		return rc;
	rc = stripe_row_read(a, &e->r, p->k, p->lo, p->lo + p->len, dst, &was_cached);
	bool ra_hit = was_cached && e->read_ahead;
	e->read_ahead = false;
	if (!cache_retains(c) && !e->r.nr_dirty)
		stripe_row_reset(&e->r, a, p->row);
	pthread_mutex_unlock(&e->lock);
	entry_put(c, e);
	if (rc < 0)
		return rc;
	atomic_fetch_add(was_cached ? &c->counters.hits : &c->counters.misses, 1);
	if (ra_hit)
		atomic_fetch_add(&c->counters.readahead_hits, 1);
	return 0;
}

/* Pieces of rows the cache does not hold, read from the members straight
 * into the request, all members at once; what they cannot serve goes
 * through a row. */
struct direct_reads {
	struct io_req reqs[CACHE_DIRECT_READS];
	uint64_t off[CACHE_DIRECT_READS];   /* volume offset of each piece */
	int nr;
};

static int direct_reads_run(struct stripe_cache *c, struct direct_reads *d)
{
	int nr = d->nr, rc = 0;

	d->nr = 0;
	if (nr == 0)
		return 0;
	io_pool_run(nr > 1 ? c->a->io_pool : NULL, d->reqs, nr);
	for (int i = 0; i < nr && rc == 0; i++) {
		struct io_req *req = &d->reqs[i];
		if (req->result == 0) {
			atomic_fetch_add(&c->counters.direct_reads, 1);
			continue;
		}
		/* The row path retries, rebuilds from parity and rewrites the
		 * bad range, or fails the member (md's read-error handling). */
		struct chunk_piece p = piece_at(c->a, d->off[i], req->len_bytes);
		rc = read_piece_cached(c, &p, req->buf);
	}
	return rc;
}

int stripe_cache_read(struct raid_array *a, void *buf, size_t len, uint64_t off)
{
	struct stripe_cache *c = a->cache;
	uint64_t row_bytes = cache_row_bytes(a);
	uint64_t nr_rows = a->geo.array_bytes / row_bytes;
	struct direct_reads direct;
	uint64_t looked_up_row = UINT64_MAX;
	bool row_cached = false;
	char *dst = buf;
	int rc = 0;

	direct.nr = 0;
	pthread_mutex_lock(&c->lock);
	readahead_note_locked(c, off, len, (off + len - 1) / row_bytes, nr_rows);
	pthread_mutex_unlock(&c->lock);
	while (len > 0 && rc == 0) {
		struct chunk_piece p = piece_at(a, off, len);

		/* A row the cache does not hold has nothing newer than the
		 * members (rows leave the cache only clean), so its bytes come
		 * straight from them, as md's chunk-aligned reads bypass its
		 * stripe cache: no copy through a row, no row evicted for it.
		 * A write that brings the row in meanwhile overlaps this read,
		 * and no block device orders the two. One look per row. */
		if (p.row != looked_up_row) {
			pthread_mutex_lock(&c->lock);
			row_cached = table_find(c, p.row) != NULL;
			pthread_mutex_unlock(&c->lock);
			looked_up_row = p.row;
		}
		if (!row_cached && stripe_row_direct_read_req(a, p.row, p.k, p.lo, p.lo + p.len, dst,
		                                              &direct.reqs[direct.nr])) {
			direct.off[direct.nr] = off;
			if (++direct.nr == CACHE_DIRECT_READS)
				rc = direct_reads_run(c, &direct);
		} else {
			rc = read_piece_cached(c, &p, dst);
		}
		dst += p.len;
		off += p.len;
		len -= p.len;
	}
	int drc = direct_reads_run(c, &direct);
	return rc < 0 ? rc : drc;
}

/* ---- write gathering --------------------------------------------------
 *
 * A sequential writer with several requests in flight splits rows between
 * them. A write of whole chunks whose row the requests already under way
 * will complete waits in the row's entry instead of being copied into it;
 * the request that brings the last chunks writes the row whole from every
 * request's own buffer (no reads, no copy), and the waiting requests return
 * then. md delays partial-stripe writes for the same reason. Waiting only
 * on requests already under way needs no timeout: once the rest of the row
 * is no longer on its way, the owner copies its piece into the row after
 * all and returns (write-back as usual).
 */

struct gather_piece {
	int k0, k1;                 /* data chunks [k0, k1) of the row */
	const char *src;            /* chunk k0's new bytes, in the owner's request */
	struct cache_entry *e;      /* pinned by the owner until done */
	bool done;                  /* on the members, or copied into the row */
	int rc;
	struct gather_piece *next;  /* in e->gather */
};

/* A write request under way: the volume range it covers and how far it
 * has got (everything below progress has been through its rows). */
struct write_flight {
	uint64_t off, end, progress;
	struct write_flight *next;
};

enum gather_result {
	GATHER_NO,                  /* write the piece the usual way */
	GATHER_WAITING,             /* the piece waits in the row */
	GATHER_WROTE,               /* the row went out whole */
};

static uint64_t chunk_mask(int k0, int k1)
{
	uint64_t mask = 0;
	for (int k = k0; k < k1; k++)
		mask |= 1ull << k;
	return mask;
}

/* Whether every data chunk of `row` outside have will be written by a
 * request under way, other than self, that has not got there yet. Caller
 * holds c->lock. */
static bool rest_on_its_way(const struct stripe_cache *c, const struct write_flight *self,
                            uint64_t row, int nr_data, uint64_t have)
{
	uint64_t chunk = c->a->geo.chunk_bytes, base = row * cache_row_bytes(c->a);

	for (int k = 0; k < nr_data; k++) {
		uint64_t lo = base + (uint64_t)k * chunk, hi = lo + chunk;
		bool coming = have & (1ull << k);
		for (const struct write_flight *f = c->flights; f && !coming; f = f->next)
			coming = f != self && f->off <= lo && hi <= f->end && f->progress <= lo;
		if (!coming)
			return false;
	}
	return true;
}

static void flight_progress_locked(struct stripe_cache *c, struct write_flight *f,
                                   uint64_t progress)
{
	f->progress = progress;
	if (c->nr_gather_waiters)
		pthread_cond_broadcast(&c->gather_cv);
}

/* Take every waiting piece off the row, telling its owner rc. Caller holds
 * e->lock; an owner may return as soon as c->lock is dropped. */
static void gather_finish(struct stripe_cache *c, struct cache_entry *e, int rc)
{
	pthread_mutex_lock(&c->lock);
	for (struct gather_piece *p = e->gather; p; p = p->next) {
		p->done = true;
		p->rc = rc;
	}
	e->gather = NULL;
	e->gather_mask = 0;
	pthread_cond_broadcast(&c->gather_cv);
	pthread_mutex_unlock(&c->lock);
}

/* Copy the waiting pieces into the row as ordinary dirty data. Caller
 * holds e->lock. */
static int gather_absorb(struct stripe_cache *c, struct cache_entry *e)
{
	uint64_t chunk = c->a->geo.chunk_bytes;
	int rc = 0;

	for (struct gather_piece *p = e->gather; p && rc == 0; p = p->next)
		for (int k = p->k0; k < p->k1 && rc == 0; k++)
			rc = stripe_row_write(c->a, &e->r, k, 0, chunk,
			                      p->src + (size_t)(k - p->k0) * chunk);
	gather_finish(c, e, rc);
	return rc;
}

/* Bytes [in_row, in_row + len) of e's row from src, if they are whole
 * chunks: write the row whole if with the waiting pieces and what the row
 * holds it is complete, or wait in it (*piece) if the rest is on its way.
 * Caller holds e->lock and a pin. */
static enum gather_result gather_try(struct stripe_cache *c, struct cache_entry *e,
                                     struct write_flight *self, uint64_t in_row, size_t len,
                                     const char *src, struct gather_piece *piece, int *rc)
{
	struct raid_array *a = c->a;
	uint64_t chunk = a->geo.chunk_bytes;
	int nr_data = e->r.lay.nr_data;

	if (in_row % chunk || len % chunk || !stripe_row_all_present(a, &e->r))
		return GATHER_NO;
	int k0 = (int)(in_row / chunk), k1 = k0 + (int)(len / chunk);
	uint64_t mine = chunk_mask(k0, k1), have = mine | e->gather_mask;
	for (int k = 0; k < nr_data; k++)
		if (!(have & (1ull << k)) && stripe_row_chunk_held(&e->r, k))
			have |= 1ull << k;
	if (have == chunk_mask(0, nr_data)) {
		const void *chunk_src[RAID_MAX_MEMBERS] = { NULL };
		for (const struct gather_piece *p = e->gather; p; p = p->next)
			for (int k = p->k0; k < p->k1; k++)
				chunk_src[k] = p->src + (size_t)(k - p->k0) * chunk;
		/* Where this request overlaps a waiting one, both are under
		 * way and either order is right: this one lands last. */
		for (int k = k0; k < k1; k++)
			chunk_src[k] = src + (size_t)(k - k0) * chunk;
		*rc = entry_write_whole_held(c, e, chunk_src);
		if (e->gather) {
			atomic_fetch_add(&c->counters.gathered_rows, 1);
			gather_finish(c, e, *rc);
		}
		return GATHER_WROTE;
	}
	if (!self || (mine & e->gather_mask))
		return GATHER_NO;
	pthread_mutex_lock(&c->lock);
	bool wait = c->nr_gather < c->max_gather &&
	            rest_on_its_way(c, self, e->r.row, nr_data, mine | e->gather_mask);
	if (wait) {
		*piece = (struct gather_piece){ .k0 = k0, .k1 = k1, .src = src, .e = e,
		                                .next = e->gather };
		e->gather = piece;
		e->gather_mask |= mine;
		c->nr_gather++;
	}
	pthread_mutex_unlock(&c->lock);
	return wait ? GATHER_WAITING : GATHER_NO;
}

/* The end of a write request: wait until its waiting pieces are written,
 * copying into their rows those whose rest is no longer on its way. */
static int gather_wait(struct stripe_cache *c, struct write_flight *self,
                       struct gather_piece *pieces, int nr_pieces)
{
	int rc = 0;

	pthread_mutex_lock(&c->lock);
	flight_progress_locked(c, self, self->end); /* nothing more comes from here */
	for (int i = 0; i < nr_pieces; i++) {
		struct gather_piece *p = &pieces[i];
		struct cache_entry *e = p->e;
		while (!p->done &&
		       rest_on_its_way(c, self, e->r.row, e->r.lay.nr_data, e->gather_mask)) {
			c->nr_gather_waiters++;
			pthread_cond_wait(&c->gather_cv, &c->lock);
			c->nr_gather_waiters--;
		}
		if (!p->done) {
			pthread_mutex_unlock(&c->lock);
			pthread_mutex_lock(&e->lock);
			if (!p->done) {
				p->rc = gather_absorb(c, e);
				if (p->rc == 0 && row_fully_dirty(&e->r))
					p->rc = entry_flush_held(c, e);
			}
			pthread_mutex_unlock(&e->lock);
			pthread_mutex_lock(&c->lock);
		}
		if (p->rc < 0 && rc == 0)
			rc = p->rc;
		/* A piece counts against max_gather until its pin goes: a
		 * done piece's owner still holds it while it works on its
		 * later rows. */
		c->nr_gather--;
		entry_put_locked(c, e);
	}
	for (struct write_flight **f = &c->flights; *f; f = &(*f)->next)
		if (*f == self) {
			*f = self->next;
			break;
		}
	pthread_mutex_unlock(&c->lock);
	return rc;
}

/* Bytes [in_row, in_row + len) of a locked entry's row from src, the usual
 * way: copied into the row, which is written out now if write-through or
 * complete. */
static int entry_write_held(struct stripe_cache *c, struct cache_entry *e, uint64_t in_row,
                            size_t len, const char *src)
{
	struct raid_array *a = c->a;
	uint64_t off = e->r.row * cache_row_bytes(a) + in_row;
	int rc = e->gather ? gather_absorb(c, e) : 0;

	while (len > 0 && rc == 0) {
		struct chunk_piece p = piece_at(a, off, len);
		rc = stripe_row_write(a, &e->r, p.k, p.lo, p.lo + p.len, src);
		src += p.len;
		off += p.len;
		len -= p.len;
	}
	/* Write-through: the request returns only once the row is on the
	 * members. A row this request completed goes out now too: it needs
	 * no reads, so waiting would only hold a cache slot (md also starts
	 * full stripes at once). */
	if (rc == 0 && (!a->tuning.write_back || row_fully_dirty(&e->r)))
		rc = entry_flush_held(c, e);
	return rc;
}

/* A write request is done with a locked entry: what it holds is no
 * longer read-ahead, and with the cache off nothing of it is kept. */
static void entry_written_unlock(struct stripe_cache *c, struct cache_entry *e)
{
	e->read_ahead = false;
	if (!cache_retains(c))
		stripe_row_reset(&e->r, c->a, e->r.row);
	pthread_mutex_unlock(&e->lock);
}

/* The entries of up to max rows after run[0]'s (acquired), each taken
 * only if that needs no waiting (no cache slot to wait for, its lock
 * free), so that holding several rows cannot deadlock; with
 * stop_at_gather, not past one where gathered writes wait. Returns how
 * many rows run holds. */
static int run_take_next(struct stripe_cache *c, struct cache_entry *run[], int max,
                         bool stop_at_gather)
{
	int nr = 1;

	while (nr < max) {
		struct cache_entry *e;

		pthread_mutex_lock(&c->lock);
		int rc = entry_get_locked(c, run[0]->r.row + (uint64_t)nr, false, &e);
		pthread_mutex_unlock(&c->lock);
		if (rc < 0)
			break;
		if (pthread_mutex_trylock(&e->lock) != 0) {
			entry_put(c, e);
			break;
		}
		if (stop_at_gather && e->gather) {
			pthread_mutex_unlock(&e->lock);
			entry_put(c, e);
			break;
		}
		run[nr++] = e;
	}
	return nr;
}

/* Add the rows after run[0] (acquired, whole in this request) that can go
 * out with it as one run: up to max whole rows of the request. */
static int run_extend(struct stripe_cache *c, struct cache_entry *run[], int max)
{
	if (run[0]->gather || !stripe_row_all_present(c->a, &run[0]->r))
		return 1;
	return run_take_next(c, run, max, true);
}

int stripe_cache_write(struct raid_array *a, const void *buf, size_t len, uint64_t off)
{
	struct stripe_cache *c = a->cache;
	uint64_t row_bytes = cache_row_bytes(a);
	struct write_flight flight = { .off = off, .end = off + len, .progress = off };
	/* Only a request's first and last rows can be partial. */
	struct gather_piece pieces[2];
	int nr_pieces = 0, rc = 0;
	const char *src = buf;
	bool gathering = a->tuning.write_back && cache_retains(c);
	int run_max_rows = stripe_run_max_rows(a);

	if (gathering) {
		pthread_mutex_lock(&c->lock);
		flight.next = c->flights;
		c->flights = &flight;
		pthread_mutex_unlock(&c->lock);
	}
	while (len > 0 && rc == 0) {
		uint64_t row = off / row_bytes, in_row = off % row_bytes;
		size_t piece = row_bytes - in_row < len ? (size_t)(row_bytes - in_row) : len;
		enum gather_result how;
		struct cache_entry *e;

		rc = entry_acquire(c, row, &e);
		if (rc < 0)
			break;
		/* Whole rows in a row go out as one run (small chunks). */
		struct cache_entry *run[STRIPE_RUN_MAX_ROWS] = { e };
		int nr_run = 1, run_max = in_row == 0 ? (int)(len / row_bytes) : 0;
		if (run_max > run_max_rows)
			run_max = run_max_rows;
		if (run_max >= 2)
			nr_run = run_extend(c, run, run_max);
		if (nr_run >= 2) {
			piece = (size_t)nr_run * (size_t)row_bytes;
			rc = entries_write_run_held(c, run, nr_run, src);
			how = GATHER_WROTE;
		} else {
			how = gather_try(c, e, gathering && nr_pieces < 2 ? &flight : NULL, in_row,
			                 piece, src, &pieces[nr_pieces], &rc);
			if (how == GATHER_NO)
				rc = entry_write_held(c, e, in_row, piece, src);
		}
		for (int i = 0; i < nr_run; i++)
			entry_written_unlock(c, run[i]);
		pthread_mutex_lock(&c->lock);
		if (how == GATHER_WAITING)
			nr_pieces++; /* keeps its pin until written */
		else
			for (int i = 0; i < nr_run; i++)
				entry_put_locked(c, run[i]);
		if (gathering)
			flight_progress_locked(c, &flight, off + piece);
		pthread_mutex_unlock(&c->lock);
		src += piece;
		off += piece;
		len -= piece;
	}
	if (!gathering)
		return rc;
	int wrc = gather_wait(c, &flight, pieces, nr_pieces);
	return rc < 0 ? rc : wrc;
}

/* Whole rows [row, row + nr_rows) zeroed, up to a run at a time. Returns
 * how many rows were done (the first call may do fewer than asked). */
static int rows_zero(struct stripe_cache *c, uint64_t row, int nr_rows, int *rc_out)
{
	struct raid_array *a = c->a;
	struct cache_entry *run[STRIPE_ZERO_RUN_MAX_ROWS];
	struct stripe_row *rows[STRIPE_ZERO_RUN_MAX_ROWS];
	int max = nr_rows < STRIPE_ZERO_RUN_MAX_ROWS ? nr_rows : STRIPE_ZERO_RUN_MAX_ROWS;
	/* Leave most of a small cache to the other requests. */
	if ((size_t)max > c->max_entries / 2)
		max = c->max_entries / 2 > 1 ? (int)(c->max_entries / 2) : 1;

	int rc = entry_acquire(c, row, &run[0]);
	if (rc < 0) {
		*rc_out = rc;
		return 0;
	}
	int nr = max > 1 ? run_take_next(c, run, max, false) : 1;
	/* Gathered writes waiting in the rows are older than the zeros:
	 * taken in first, then superseded. */
	for (int i = 0; i < nr && rc == 0; i++)
		if (run[i]->gather)
			rc = gather_absorb(c, run[i]);
	for (int i = 0; i < nr; i++)
		rows[i] = &run[i]->r;
	uint64_t dev_off = rows[0]->lay.member_off_bytes, dev_len = (uint64_t)nr * a->geo.chunk_bytes;
	if (rc == 0) {
		/* counted in flight even when its store fails */
		rc = bitmap_start_write(a, dev_off, dev_len);
		if (rc == 0)
			rc = stripe_rows_zero(a, rows, nr);
		bitmap_end_write(a, dev_off, dev_len);
	}
	if (rc == 0)
		atomic_fetch_add(&c->counters.zeroed_rows, (uint64_t)nr);
	pthread_mutex_lock(&c->lock);
	for (int i = 0; i < nr; i++) {
		run[i]->read_ahead = false;
		pthread_mutex_unlock(&run[i]->lock);
		entry_put_locked(c, run[i]);
	}
	pthread_mutex_unlock(&c->lock);
	*rc_out = rc;
	return nr;
}

int stripe_cache_zero(struct raid_array *a, size_t len, uint64_t off)
{
	struct stripe_cache *c = a->cache;
	uint64_t row_bytes = cache_row_bytes(a);
	char *zeros = NULL;
	int rc = 0;

	while (len > 0 && rc == 0) {
		uint64_t row = off / row_bytes, in_row = off % row_bytes;
		size_t piece = row_bytes - in_row < len ? (size_t)(row_bytes - in_row) : len;

		if (piece == row_bytes) {
			uint64_t nr_whole = len / row_bytes;
			int nr = rows_zero(c, row, nr_whole > INT_MAX ? INT_MAX : (int)nr_whole, &rc);
			piece = (size_t)nr * (size_t)row_bytes;
		} else {
			/* Part of a row: zeros written through the cache like
			 * any write, so the rest of the row keeps its parity. */
			if (!zeros)
				zeros = calloc(1, (size_t)row_bytes);
			rc = zeros ? stripe_cache_write(a, zeros, piece, off) : -ENOMEM;
		}
		off += piece;
		len -= piece;
	}
	free(zeros);
	return rc;
}

int stripe_cache_hold(struct raid_array *a, uint64_t row, void **handle)
{
	struct stripe_cache *c = a->cache;
	struct cache_entry *e;

	int rc = entry_acquire(c, row, &e);
	if (rc < 0)
		return rc;
	rc = entry_flush_held(c, e);
	/* Columns md's bad block log left unwritable: their writes are
	 * dropped (and kept for fsync), the row is as the members hold it,
	 * and the scrub or rebuild that wants it goes on. */
	if (rc == -ENODATA)
		rc = 0;
	if (rc < 0) {
		pthread_mutex_unlock(&e->lock);
		entry_put(c, e);
		return rc;
	}
	*handle = e;
	return 0;
}

void stripe_cache_release(struct raid_array *a, void *handle)
{
	struct cache_entry *e = handle;
	pthread_mutex_unlock(&e->lock);
	entry_put(a->cache, e);
}

int stripe_cache_flush(struct raid_array *a)
{
	struct stripe_cache *c = a->cache;
	int rc = 0;

	pthread_mutex_lock(&c->lock);
	uint64_t upto = c->next_dirty_seq;
	for (;;) {
		struct cache_entry *e = c->dirty.head;
		if (!e || e->dirty_seq > upto)
			break;
		e->pins++;
		pthread_mutex_unlock(&c->lock);
		int frc = entry_flush(c, e);
		if (frc < 0 && rc == 0)
			rc = frc;
		pthread_mutex_lock(&c->lock);
		/* Written again since the flush let go of it: those bytes are
		 * newer than this fsync, so the row queues as newly dirty
		 * instead of holding the loop while writes to it go on. */
		if (e->dirty_seq && e->dirty_seq <= upto) {
			LIST_UNLINK(&c->dirty, e, dirty_prev, dirty_next);
			e->dirty_seq = ++c->next_dirty_seq;
			e->dirty_since_ms = now_ms();
			LIST_APPEND(&c->dirty, e, dirty_prev, dirty_next);
		}
		entry_put_locked(c, e);
	}
	pthread_mutex_unlock(&c->lock);
	return rc;
}

size_t stripe_cache_status(struct raid_array *a, char *buf, size_t len)
{
	struct stripe_cache *c = a->cache;
	const struct stripe_cache_counters *n = &c->counters;
	size_t rows, dirty;

	pthread_mutex_lock(&c->lock);
	rows = c->nr_entries;
	dirty = c->nr_dirty;
	pthread_mutex_unlock(&c->lock);
	int w = snprintf(buf, len,
	                 "cache_mode: %s\ncache_size_mib: %" PRIu64 "\ncache_rows: %zu of %zu\n"
	                 "cache_dirty_rows: %zu\ncache_hits: %" PRIu64 "\ncache_misses: %" PRIu64
	                 "\ndirect_reads: %" PRIu64 "\nrows_flushed: %" PRIu64 "\nfull_row_writes: %" PRIu64
	                 "\ndirect_row_writes: %" PRIu64 "\ngathered_row_writes: %" PRIu64
	                 "\nrun_row_writes: %" PRIu64
	                 "\nrmw_writes: %" PRIu64 "\nrcw_writes: %" PRIu64
	                 "\ndegraded_writes: %" PRIu64 "\nreadahead_rows: %" PRIu64
	                 "\nreadahead_hits: %" PRIu64 "\nzeroed_rows: %" PRIu64 "\n",
	                 !a->tuning.cache_bytes ? "off"
	                 : a->tuning.write_back ? "write-back" : "write-through",
	                 a->tuning.cache_bytes >> 20, rows, c->max_entries, dirty,
	                 (uint64_t)atomic_load(&n->hits), (uint64_t)atomic_load(&n->misses),
	                 (uint64_t)atomic_load(&n->direct_reads),
	                 (uint64_t)atomic_load(&n->rows_flushed),
	                 (uint64_t)atomic_load(&n->full_row_writes),
	                 (uint64_t)atomic_load(&n->direct_rows),
	                 (uint64_t)atomic_load(&n->gathered_rows),
	                 (uint64_t)atomic_load(&n->run_rows),
	                 (uint64_t)atomic_load(&n->rmw_writes), (uint64_t)atomic_load(&n->rcw_writes),
	                 (uint64_t)atomic_load(&n->degraded_writes),
	                 (uint64_t)atomic_load(&n->readahead_rows),
	                 (uint64_t)atomic_load(&n->readahead_hits),
	                 (uint64_t)atomic_load(&n->zeroed_rows));
	return w < 0 ? 0 : ((size_t)w < len ? (size_t)w : len);
}
