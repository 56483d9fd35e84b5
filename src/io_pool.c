/* io_pool.c - see io_pool.h.
 *
 * One shared FIFO of requests. io_pool_run queues all but the first
 * request of its batch, wakes one worker for each, does the first itself,
 * then keeps taking requests from the queue (its own or other batches')
 * until its batch is complete: with few cores a caller that only waited
 * would waste a thread switch per request, and a caller that helps never
 * deadlocks on a busy pool.
 *
 * Trying reads with RWF_NOWAIT in the caller first (to skip the pool
 * when the bytes are in the page cache) was measured and dropped: on
 * cold members it halved RAID5's random-write flush rate.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

#include "io_pool.h"
#include "member.h"

struct io_batch {
	int pending;
	pthread_cond_t done;
};

struct io_pool {
	pthread_mutex_t lock;
	pthread_cond_t work;
	struct io_req *head, *tail;
	bool stopping;
	int nr_threads;
	pthread_t *threads;
};

static void io_req_execute(struct io_req *req)
{
	if (req->is_write && req->zero)
		req->result = member_zero(req->member, req->len_bytes, req->data_off_bytes);
	else if (req->is_write && req->nr_iov > 0)
		req->result = member_writev(req->member, req->iov, req->nr_iov,
		                            req->data_off_bytes);
	else if (req->is_write)
		req->result = member_write(req->member, req->buf, req->len_bytes,
		                           req->data_off_bytes);
	else
		req->result = member_read(req->member, req->buf, req->len_bytes,
		                          req->data_off_bytes);
}

/* Caller holds pool->lock. */
static struct io_req *io_pool_dequeue(struct io_pool *pool)
{
	struct io_req *req = pool->head;
	if (req) {
		pool->head = req->next_queued;
		if (!pool->head)
			pool->tail = NULL;
	}
	return req;
}

/* Caller holds pool->lock. */
static void io_req_complete(struct io_req *req)
{
	if (--req->batch->pending == 0)
		pthread_cond_broadcast(&req->batch->done);
}

static void *io_pool_worker(void *arg)
{
	struct io_pool *pool = arg;

	pthread_mutex_lock(&pool->lock);
	for (;;) {
		struct io_req *req = io_pool_dequeue(pool);
		if (!req) {
			if (pool->stopping)
				break;
			pthread_cond_wait(&pool->work, &pool->lock);
			continue;
		}
		pthread_mutex_unlock(&pool->lock);
		io_req_execute(req);
		pthread_mutex_lock(&pool->lock);
		io_req_complete(req);
	}
	pthread_mutex_unlock(&pool->lock);
	return NULL;
}

int io_pool_create(struct io_pool **out, int nr_threads)
{
	struct io_pool *pool = calloc(1, sizeof(*pool));

	*out = NULL;
	if (!pool)
		return -ENOMEM;
	pthread_mutex_init(&pool->lock, NULL);
	pthread_cond_init(&pool->work, NULL);
	pool->threads = calloc((size_t)(nr_threads > 0 ? nr_threads : 1), sizeof(pthread_t));
	if (!pool->threads) {
		io_pool_destroy(pool);
		return -ENOMEM;
	}
	for (int i = 0; i < nr_threads; i++) {
		if (pthread_create(&pool->threads[i], NULL, io_pool_worker, pool) != 0) {
			io_pool_destroy(pool);
			return -EAGAIN;
		}
		pool->nr_threads++;
	}
	*out = pool;
	return 0;
}

void io_pool_destroy(struct io_pool *pool)
{
	if (!pool)
		return;
	pthread_mutex_lock(&pool->lock);
	pool->stopping = true;
	pthread_cond_broadcast(&pool->work);
	pthread_mutex_unlock(&pool->lock);
	for (int i = 0; i < pool->nr_threads; i++)
		pthread_join(pool->threads[i], NULL);
	pthread_cond_destroy(&pool->work);
	pthread_mutex_destroy(&pool->lock);
	free(pool->threads);
	free(pool);
}

static __thread size_t thread_inline_bytes;

void io_pool_thread_inline_bytes(size_t max_bytes)
{
	thread_inline_bytes = max_bytes;
}

static bool batch_runs_inline(const struct io_req *reqs, int nr_reqs)
{
	size_t bytes = 0;

	if (thread_inline_bytes == 0)
		return false;
	for (int i = 0; i < nr_reqs; i++)
		bytes += reqs[i].len_bytes;
	return bytes <= thread_inline_bytes;
}

int io_pool_run(struct io_pool *pool, struct io_req *reqs, int nr_reqs)
{
	struct io_batch batch = { .pending = nr_reqs };
	int failed = 0;

	if (nr_reqs <= 0)
		return 0;
	if (!pool || pool->nr_threads == 0 || nr_reqs == 1 || batch_runs_inline(reqs, nr_reqs)) {
		for (int i = 0; i < nr_reqs; i++) {
			io_req_execute(&reqs[i]);
			failed += reqs[i].result != 0;
		}
		return failed;
	}
	pthread_cond_init(&batch.done, NULL);
	pthread_mutex_lock(&pool->lock);
	for (int i = 0; i < nr_reqs; i++) {
		reqs[i].batch = &batch;
		reqs[i].next_queued = NULL;
		if (i == 0)
			continue;
		if (pool->tail)
			pool->tail->next_queued = &reqs[i];
		else
			pool->head = &reqs[i];
		pool->tail = &reqs[i];
	}
	/* One worker per queued request (a broadcast woke them all, and all
	 * but a few went back to sleep: a thread switch each). */
	for (int i = 1; i < nr_reqs && i <= pool->nr_threads; i++)
		pthread_cond_signal(&pool->work);
	pthread_mutex_unlock(&pool->lock);

	io_req_execute(&reqs[0]);
	pthread_mutex_lock(&pool->lock);
	io_req_complete(&reqs[0]);
	while (batch.pending > 0) {
		struct io_req *req = io_pool_dequeue(pool);
		if (!req) {
			pthread_cond_wait(&batch.done, &pool->lock);
			continue;
		}
		pthread_mutex_unlock(&pool->lock);
		io_req_execute(req);
		pthread_mutex_lock(&pool->lock);
		io_req_complete(req);
	}
	pthread_mutex_unlock(&pool->lock);
	pthread_cond_destroy(&batch.done);
	for (int i = 0; i < nr_reqs; i++)
		failed += reqs[i].result != 0;
	return failed;
}
