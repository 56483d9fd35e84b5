/* io_pool.h - member I/O in parallel: a batch of positioned reads and
 * writes on different members is spread over a pool of worker threads,
 * and the caller works on the batch too, so a row touches all its members
 * at once instead of one after another. */
#ifndef RAIDFUSE_IO_POOL_H
#define RAIDFUSE_IO_POOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct iovec;
struct member;
struct io_pool;

struct io_req {
	struct member *member;
	void *buf;
	size_t len_bytes;
	/* A write of several buffers back to back (member_writev): when
	 * nr_iov > 0 these replace buf, and len_bytes is their sum. */
	const struct iovec *iov;
	int nr_iov;
	uint64_t data_off_bytes;     /* relative to the member's data area */
	bool is_write;
	bool zero;                   /* a write of len_bytes of zeros (member_zero; buf unused) */
	int result;                  /* 0 or -errno, filled in by io_pool_run */
	struct io_batch *batch;      /* internal */
	struct io_req *next_queued;  /* internal */
};

/* A pool with nr_threads workers (0: every batch runs in the caller). */
int io_pool_create(struct io_pool **out, int nr_threads);
void io_pool_destroy(struct io_pool *pool);

/* Batches of at most max_bytes that the calling thread runs are run by
 * it alone, one request after another, instead of being spread over the
 * pool (0, the default, turns this off). For background threads such as
 * the stripe cache's flushers: several of them already keep the members
 * busy, and each hand-off to a worker costs two thread switches, which
 * cost more CPU than a small read (RAID5 random writes from cold members:
 * 11% less daemon CPU per write). A request that waits for a row such a
 * thread holds waits a read's latency longer per extra read. */
void io_pool_thread_inline_bytes(size_t max_bytes);

/* Run every request; return when all are done. Per-request results are in
 * reqs[i].result; the return value is the number of failed requests. */
int io_pool_run(struct io_pool *pool, struct io_req *reqs, int nr_reqs);

#endif
