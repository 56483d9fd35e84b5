/* test_io_pool.c - io_pool.c and the member I/O it runs: every request of
 * a batch is done and its result reported, whether the batch is spread
 * over the workers or run by the calling thread alone
 * (io_pool_thread_inline_bytes), and vectored writes (member_writev, as
 * row runs use) put their buffers back to back on the member.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "io_pool.h"
#include "member.h"

#define FILE_BYTES (256 * 1024)
#define NR_REQS 16
#define REQ_BYTES 4096

static char member_path[64];
static struct member member;

static uint8_t pattern_byte(uint64_t off)
{
	return (uint8_t)(off * 7 + (off >> 12) * 13 + 1);
}

static void member_setup(void)
{
	char err[256];
	uint8_t *bytes = malloc(FILE_BYTES);

	cr_assert_not_null(bytes);
	for (uint64_t i = 0; i < FILE_BYTES; i++)
		bytes[i] = pattern_byte(i);
	snprintf(member_path, sizeof(member_path), "/tmp/rf-io-pool.XXXXXX");
	int fd = mkstemp(member_path);
	cr_assert(fd >= 0);
	cr_assert_eq(write(fd, bytes, FILE_BYTES), FILE_BYTES);
	close(fd);
	free(bytes);
	cr_assert_eq(member_open(&member, member_path, false, err, sizeof(err)), 0, "%s", err);
}

static void member_teardown(void)
{
	member_close(&member);
	unlink(member_path);
	io_pool_thread_inline_bytes(0);
}

/* NR_REQS reads of REQ_BYTES, scattered over the member, through pool;
 * each must come back with the file's bytes. */
static void read_batch_check(struct io_pool *pool)
{
	static uint8_t bufs[NR_REQS][REQ_BYTES];
	struct io_req reqs[NR_REQS];

	memset(bufs, 0, sizeof(bufs));
	for (int i = 0; i < NR_REQS; i++) {
		uint64_t off = (uint64_t)((i * 5) % NR_REQS) * REQ_BYTES + 512;
		reqs[i] = (struct io_req){ .member = &member, .buf = bufs[i], .len_bytes = REQ_BYTES,
			                   .data_off_bytes = off, .is_write = false, .result = 1 };
	}
	cr_assert_eq(io_pool_run(pool, reqs, NR_REQS), 0);
	for (int i = 0; i < NR_REQS; i++) {
		cr_assert_eq(reqs[i].result, 0, "request %d: result %d", i, reqs[i].result);
		for (size_t b = 0; b < REQ_BYTES; b++)
			cr_assert_eq(bufs[i][b], pattern_byte(reqs[i].data_off_bytes + b),
			             "request %d, byte %zu", i, b);
	}
}

TestSuite(io_pool, .init = member_setup, .fini = member_teardown);

Test(io_pool, spread_over_workers)
{
	struct io_pool *pool;

	cr_assert_eq(io_pool_create(&pool, 3), 0);
	read_batch_check(pool);
	io_pool_destroy(pool);
}

Test(io_pool, run_inline_by_the_caller)
{
	struct io_pool *pool;

	cr_assert_eq(io_pool_create(&pool, 3), 0);
	/* Under the limit (the whole batch is 64 KiB): run by this thread. */
	io_pool_thread_inline_bytes(NR_REQS * REQ_BYTES);
	read_batch_check(pool);
	/* Over it: spread again. */
	io_pool_thread_inline_bytes(REQ_BYTES);
	read_batch_check(pool);
	io_pool_destroy(pool);
}

Test(io_pool, failed_requests_counted)
{
	struct io_pool *pool;
	uint8_t bufs[4][REQ_BYTES];
	struct io_req reqs[4];

	cr_assert_eq(io_pool_create(&pool, 2), 0);
	for (int inline_run = 0; inline_run < 2; inline_run++) {
		io_pool_thread_inline_bytes(inline_run ? sizeof(bufs) : 0);
		for (int i = 0; i < 4; i++)
			/* Requests 1 and 3 read past the end of the member. */
			reqs[i] = (struct io_req){ .member = &member, .buf = bufs[i],
				                   .len_bytes = REQ_BYTES,
				                   .data_off_bytes = i % 2 ? FILE_BYTES : 0 };
		cr_assert_eq(io_pool_run(pool, reqs, 4), 2, "inline %d", inline_run);
		cr_assert_eq(reqs[0].result, 0);
		cr_assert_eq(reqs[2].result, 0);
		cr_assert(reqs[1].result < 0 && reqs[3].result < 0, "results %d %d",
		          reqs[1].result, reqs[3].result);
	}
	io_pool_destroy(pool);
}

Test(io_pool, vectored_write_lands_back_to_back)
{
	static uint8_t parts[3][8192];
	uint8_t back[sizeof(parts)];
	struct iovec iov[3];
	uint64_t written_before = member.bytes_written;

	for (int p = 0; p < 3; p++) {
		memset(parts[p], 0xa0 + p, sizeof(parts[p]));
		iov[p] = (struct iovec){ .iov_base = parts[p], .iov_len = sizeof(parts[p]) };
	}
	struct io_req req = { .member = &member, .iov = iov, .nr_iov = 3,
		              .len_bytes = sizeof(parts), .data_off_bytes = 12288, .is_write = true };
	cr_assert_eq(io_pool_run(NULL, &req, 1), 0);
	cr_assert_eq(req.result, 0);
	/* The caller's vector is left as it was. */
	for (int p = 0; p < 3; p++)
		cr_assert(iov[p].iov_base == parts[p] && iov[p].iov_len == sizeof(parts[p]));
	cr_assert_eq(member.bytes_written - written_before, sizeof(parts));
	cr_assert_eq(member_read(&member, back, sizeof(back), 12288), 0);
	cr_assert_eq(memcmp(back, parts, sizeof(parts)), 0);
	/* Its neighbours are untouched. */
	uint8_t edge[2];
	cr_assert_eq(member_read(&member, &edge[0], 1, 12287), 0);
	cr_assert_eq(member_read(&member, &edge[1], 1, 12288 + sizeof(parts)), 0);
	cr_assert_eq(edge[0], pattern_byte(12287));
	cr_assert_eq(edge[1], pattern_byte(12288 + sizeof(parts)));
}

Test(io_pool, vectored_write_refused_on_read_only_member)
{
	char err[256];
	struct member ro;
	uint8_t part[4096] = { 0 };
	struct iovec iov = { .iov_base = part, .iov_len = sizeof(part) };

	cr_assert_eq(member_open(&ro, member_path, true, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(member_writev(&ro, &iov, 1, 0), -EROFS);
	member_close(&ro);
}
