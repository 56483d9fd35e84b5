/* test_parity.c - parity.c against a plain C model of RAID5/6 parity.
 *
 * The model multiplies in GF(2^8) by shift-and-xor with 0x11d and builds
 * Q = sum g^i * D_i byte by byte, so it shares no code (and no tables) with
 * the ISA-L paths under test.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "parity.h"

static const int nr_data_cases[] = { 1, 2, 3, 4, 5, 8, 16 };
static const size_t len_cases[] = { 64, 4096 };

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static void for_each_shape(void (*check)(int nr_data, size_t len))
{
	for (size_t i = 0; i < ARRAY_SIZE(nr_data_cases); i++)
		for (size_t j = 0; j < ARRAY_SIZE(len_cases); j++)
			check(nr_data_cases[i], len_cases[j]);
}

/* ---- reference model ---------------------------------------------------- */

static uint8_t ref_gf_mul(uint8_t a, uint8_t b)
{
	unsigned int acc = 0, shifted = a;

	for (; b; b >>= 1) {
		if (b & 1)
			acc ^= shifted;
		shifted <<= 1;
		if (shifted & 0x100)
			shifted ^= 0x11d;
	}
	return (uint8_t)acc;
}

static uint8_t ref_gf_pow2(int e)
{
	uint8_t x = 1;

	while (e-- > 0)
		x = ref_gf_mul(x, 2);
	return x;
}

static void ref_pq(void *const *data, int nr_data, size_t len, uint8_t *p, uint8_t *q)
{
	for (size_t b = 0; b < len; b++) {
		uint8_t p_byte = 0, q_byte = 0;

		for (int i = 0; i < nr_data; i++) {
			uint8_t d = ((const uint8_t *)data[i])[b];

			p_byte ^= d;
			q_byte ^= ref_gf_mul(ref_gf_pow2(i), d);
		}
		if (p)
			p[b] = p_byte;
		if (q)
			q[b] = q_byte;
	}
}

/* ---- rows of buffers -------------------------------------------------- */

/* bufs[0..nr_data-1] data, bufs[nr_data] P, bufs[nr_data + 1] Q, as
 * parity_recover wants them. */
struct row {
	int nr_data;
	size_t len;
	void *bufs[PARITY_MAX_DATA + 2];
};

static uint64_t rng_state;

static uint64_t rng_next(void)
{
	/* xorshift64*: deterministic, so a failure reproduces. */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545f4914f6cdd1dULL;
}

static void fill_random(void *buf, size_t len)
{
	uint8_t *bytes = buf;

	for (size_t i = 0; i < len; i++)
		bytes[i] = (uint8_t)(rng_next() >> 56);
}

static uint8_t random_nonzero_byte(void)
{
	return (uint8_t)(rng_next() % 255 + 1);
}

static void *must_alloc(size_t len)
{
	void *buf = parity_buf_alloc(len);

	cr_assert_not_null(buf, "parity_buf_alloc(%zu)", len);
	return buf;
}

static uint8_t *row_byte(const struct row *row, int idx)
{
	return row->bufs[idx];
}

static void row_alloc(struct row *row, int nr_data, size_t len)
{
	row->nr_data = nr_data;
	row->len = len;
	for (int i = 0; i < nr_data + 2; i++)
		row->bufs[i] = must_alloc(len);
}

/* Random data with P and Q from the model. */
static void row_init(struct row *row, int nr_data, size_t len)
{
	row_alloc(row, nr_data, len);
	for (int i = 0; i < nr_data; i++)
		fill_random(row->bufs[i], len);
	ref_pq(row->bufs, nr_data, len, row->bufs[nr_data], row->bufs[nr_data + 1]);
}

static void row_copy(struct row *dst, const struct row *src)
{
	for (int i = 0; i < src->nr_data + 2; i++)
		memcpy(dst->bufs[i], src->bufs[i], src->len);
}

static void row_free(struct row *row)
{
	for (int i = 0; i < row->nr_data + 2; i++)
		free(row->bufs[i]);
}

/* Index of the first buffer that differs, or -1. */
static int row_first_diff(const struct row *a, const struct row *b)
{
	for (int i = 0; i < a->nr_data + 2; i++)
		if (memcmp(a->bufs[i], b->bufs[i], a->len) != 0)
			return i;
	return -1;
}

static void corrupt_byte(void *buf, size_t len)
{
	uint8_t *bytes = buf;

	bytes[rng_next() % len] ^= random_nonzero_byte();
}

static void init_rng(void)
{
	rng_state = 0x9e3779b97f4a7c15ULL;
}

TestSuite(parity, .init = init_rng);

/* ---- allocation and the field itself ---------------------------------- */

Test(parity, buf_alloc_is_aligned_and_zeroed)
{
	for (size_t len = 64; len <= 65536; len *= 4) {
		uint8_t *buf = parity_buf_alloc(len);

		cr_assert_not_null(buf);
		cr_assert_eq((uintptr_t)buf % PARITY_ALIGN_BYTES, 0, "len %zu", len);
		for (size_t i = 0; i < len; i++)
			cr_assert_eq(buf[i], 0, "len %zu byte %zu", len, i);
		free(buf);
	}
}

Test(parity, md_raid6_known_vector)
{
	const uint8_t data_bytes[3] = { 0x01, 0x80, 0x80 };
	struct row row;

	/* The model first: 2 * 0x80 wraps through 0x11d. */
	cr_assert_eq(ref_gf_mul(2, 0x80), 0x1d);
	cr_assert_eq(ref_gf_mul(4, 0x80), 0x3a);
	cr_assert_eq(ref_gf_mul(1, 0x01) ^ ref_gf_mul(2, 0x80) ^ ref_gf_mul(4, 0x80), 0x26);

	row_alloc(&row, 3, 64);
	for (int i = 0; i < 3; i++)
		memset(row.bufs[i], data_bytes[i], row.len);
	parity_gen_pq(row.bufs, 3, row.bufs[3], row.bufs[4], row.len);
	for (size_t b = 0; b < row.len; b++) {
		cr_assert_eq(row_byte(&row, 3)[b], 0x01, "P byte %zu", b);
		cr_assert_eq(row_byte(&row, 4)[b], 0x26, "Q byte %zu", b);
	}
	row_free(&row);
}

/* ---- generation ------------------------------------------------------- */

static void check_gen_p_matches_model(int n, size_t len)
{
	struct row row;
	uint8_t *p = must_alloc(len);

	row_init(&row, n, len);
	fill_random(p, len);
	parity_gen_p(row.bufs, n, p, len);
	cr_assert(memcmp(p, row.bufs[n], len) == 0, "nr_data %d len %zu", n, len);
	free(p);
	row_free(&row);
}

Test(parity, gen_p_matches_model)
{
	for_each_shape(check_gen_p_matches_model);
}

static void check_gen_pq(int n, size_t len)
{
	struct row row;
	uint8_t *p = must_alloc(len);
	uint8_t *q = must_alloc(len);

	row_init(&row, n, len);
	fill_random(p, len);
	fill_random(q, len);
	parity_gen_pq(row.bufs, n, p, q, len);
	cr_assert(memcmp(p, row.bufs[n], len) == 0, "P: nr_data %d len %zu", n, len);
	cr_assert(memcmp(q, row.bufs[n + 1], len) == 0, "Q: nr_data %d len %zu", n, len);
	free(p);
	free(q);
	row_free(&row);
}

Test(parity, gen_pq_matches_model)
{
	for_each_shape(check_gen_pq);
}

Test(parity, gen_pq_widest_row)
{
	check_gen_pq(PARITY_MAX_DATA, 64);
}

/* ---- read-modify-write ------------------------------------------------ */

static void check_update_matches_regeneration(int n, size_t len)
{
	struct row row;
	uint8_t *old_data = must_alloc(len);
	uint8_t *expect_p = must_alloc(len);
	uint8_t *expect_q = must_alloc(len);

	row_init(&row, n, len);
	for (int round = 0; round < 8; round++) {
		int slot = (int)(rng_next() % (uint64_t)n);

		memcpy(old_data, row.bufs[slot], len);
		fill_random(row.bufs[slot], len);
		parity_update_p(row.bufs[n], old_data, row.bufs[slot], len);
		parity_update_q(row.bufs[n + 1], old_data, row.bufs[slot], slot, len);

		ref_pq(row.bufs, n, len, expect_p, expect_q);
		cr_assert(memcmp(row.bufs[n], expect_p, len) == 0,
			  "P: nr_data %d len %zu slot %d", n, len, slot);
		cr_assert(memcmp(row.bufs[n + 1], expect_q, len) == 0,
			  "Q: nr_data %d len %zu slot %d", n, len, slot);
	}
	free(old_data);
	free(expect_p);
	free(expect_q);
	row_free(&row);
}

Test(parity, update_matches_regeneration)
{
	for_each_shape(check_update_matches_regeneration);
}

Test(parity, update_q_uses_slot_coefficient)
{
	/* Slot 1 of an all-zero row going 0x00 -> 0x80 must leave Q = 0x1d. */
	uint8_t *q = must_alloc(64);
	uint8_t *old_data = must_alloc(64);
	uint8_t *new_data = must_alloc(64);

	memset(new_data, 0x80, 64);
	parity_update_q(q, old_data, new_data, 1, 64);
	for (int b = 0; b < 64; b++)
		cr_assert_eq(q[b], 0x1d, "byte %d", b);
	free(q);
	free(old_data);
	free(new_data);
}

/* ---- recovery --------------------------------------------------------- */

/* Scribble over the lost buffers, recover, and require the whole row to
 * match the original again (so survivors must be left alone too). */
static void check_recover(const struct row *good, struct row *work, int has_q,
			  const int *lost, int nr_lost)
{
	void *bufs[PARITY_MAX_DATA + 2];
	int n = good->nr_data;
	int rc, diff;

	row_copy(work, good);
	for (int i = 0; i < nr_lost; i++)
		fill_random(work->bufs[lost[i]], good->len);
	memcpy(bufs, work->bufs, sizeof(bufs));
	if (!has_q)
		bufs[n + 1] = NULL;	/* RAID5 rows have no Q to touch */

	rc = parity_recover(bufs, n, has_q, lost, nr_lost, good->len);
	cr_assert_eq(rc, 0, "nr_data %d has_q %d lost %d,%d", n, has_q,
		     lost[0], nr_lost > 1 ? lost[1] : -1);
	if (!has_q)	/* Q was never part of the row */
		memcpy(work->bufs[n + 1], good->bufs[n + 1], good->len);
	diff = row_first_diff(work, good);
	cr_assert_eq(diff, -1, "nr_data %d len %zu has_q %d lost %d,%d: buffer %d wrong", n,
		     good->len, has_q, lost[0], nr_lost > 1 ? lost[1] : -1, diff);
}

Test(parity, recover_nothing_lost)
{
	struct row good, work;

	row_init(&good, 4, 4096);
	row_alloc(&work, 4, 4096);
	row_copy(&work, &good);
	cr_assert_eq(parity_recover(work.bufs, 4, 1, NULL, 0, work.len), 0);
	cr_assert_eq(row_first_diff(&work, &good), -1);
	row_free(&good);
	row_free(&work);
}

static void check_recover_raid5_every_single_loss(int n, size_t len)
{
	struct row good, work;

	row_init(&good, n, len);
	row_alloc(&work, n, len);
	for (int lost = 0; lost <= n; lost++)
		check_recover(&good, &work, 0, &lost, 1);
	row_free(&good);
	row_free(&work);
}

Test(parity, recover_raid5_every_single_loss)
{
	for_each_shape(check_recover_raid5_every_single_loss);
}

static void check_recover_raid6_every_single_and_double_loss(int n, size_t len)
{
	struct row good, work;

	row_init(&good, n, len);
	row_alloc(&work, n, len);
	for (int a = 0; a < n + 2; a++) {
		check_recover(&good, &work, 1, (int[]){ a }, 1);
		for (int b = a + 1; b < n + 2; b++) {
			check_recover(&good, &work, 1, (int[]){ a, b }, 2);
			check_recover(&good, &work, 1, (int[]){ b, a }, 2);
		}
	}
	row_free(&good);
	row_free(&work);
}

Test(parity, recover_raid6_every_single_and_double_loss)
{
	for_each_shape(check_recover_raid6_every_single_and_double_loss);
}

Test(parity, recover_raid6_widest_row)
{
	const int n = PARITY_MAX_DATA;
	const int p_idx = n, q_idx = n + 1;
	const int pairs[][2] = {
		{ 0, 1 }, { 0, n - 1 }, { n - 2, n - 1 },	/* two data */
		{ 17, p_idx }, { n - 1, q_idx }, { p_idx, q_idx },
	};
	struct row good, work;

	row_init(&good, n, 64);
	row_alloc(&work, n, 64);
	for (size_t i = 0; i < ARRAY_SIZE(pairs); i++)
		check_recover(&good, &work, 1, pairs[i], 2);
	row_free(&good);
	row_free(&work);
}

Test(parity, recover_treats_has_q_as_a_flag)
{
	struct row good, work;

	row_init(&good, 3, 64);
	row_alloc(&work, 3, 64);
	row_copy(&work, &good);
	fill_random(work.bufs[0], work.len);
	fill_random(work.bufs[2], work.len);
	cr_assert_eq(parity_recover(work.bufs, 3, 2, (int[]){ 0, 2 }, 2, work.len), 0);
	cr_assert_eq(row_first_diff(&work, &good), -1);
	row_free(&good);
	row_free(&work);
}

static void check_recover_rejects(int nr_data, int has_q, const int *lost, int nr_lost,
				  size_t len, const char *what)
{
	struct row good, work;
	int nr_alloc = nr_data < 1 ? 1 : nr_data > PARITY_MAX_DATA ? PARITY_MAX_DATA : nr_data;

	/* parity_recover must refuse before it looks at slots it was not given. */
	row_init(&good, nr_alloc, 4096);
	row_alloc(&work, good.nr_data, good.len);
	row_copy(&work, &good);
	cr_assert_eq(parity_recover(work.bufs, nr_data, has_q, lost, nr_lost, len), -EINVAL,
		     "%s", what);
	cr_assert_eq(row_first_diff(&work, &good), -1, "%s: row modified", what);
	row_free(&good);
	row_free(&work);
}

Test(parity, recover_rejects_invalid_patterns)
{
	check_recover_rejects(4, 0, (int[]){ 0, 1 }, 2, 4096, "two lost without Q");
	check_recover_rejects(4, 1, (int[]){ 0, 1, 2 }, 3, 4096, "three lost");
	check_recover_rejects(4, 1, (int[]){ 0 }, -1, 4096, "negative count");
	check_recover_rejects(4, 1, (int[]){ -1 }, 1, 4096, "negative index");
	check_recover_rejects(4, 0, (int[]){ 5 }, 1, 4096, "Q index without Q");
	check_recover_rejects(4, 1, (int[]){ 6 }, 1, 4096, "index past Q");
	check_recover_rejects(4, 1, (int[]){ 0, 7 }, 2, 4096, "second index past Q");
	check_recover_rejects(4, 1, (int[]){ 2, 2 }, 2, 4096, "duplicate index");
	check_recover_rejects(4, 1, (int[]){ 5, 5 }, 2, 4096, "duplicate parity index");
	check_recover_rejects(4, 1, NULL, 1, 4096, "no lost array");
	check_recover_rejects(0, 1, (int[]){ 0 }, 1, 4096, "no data slots");
	check_recover_rejects(PARITY_MAX_DATA + 1, 1, (int[]){ 0 }, 1, 4096, "too many data slots");
	check_recover_rejects(4, 1, (int[]){ 0 }, 1, 4096 - 32, "unaligned length");
	check_recover_rejects(4, 2, (int[]){ 0, 1, 2 }, 3, 4096, "three lost, has_q 2");
	check_recover_rejects(4, 2, (int[]){ 6 }, 1, 4096, "index past Q, has_q 2");
}

/* ---- scrubbing -------------------------------------------------------- */

static void check_verify_flags_the_mismatching_chunk(int n, size_t len)
{
	struct row row;
	uint8_t *scratch = must_alloc(2 * len);
	int target = (int)(rng_next() % (uint64_t)n);

	row_init(&row, n, len);
	cr_assert_eq(parity_verify(row.bufs, n, row.bufs[n], row.bufs[n + 1], scratch, len),
		     0, "clean: nr_data %d len %zu", n, len);
	cr_assert_eq(parity_verify(row.bufs, n, row.bufs[n], NULL, scratch, len), 0,
		     "clean raid5: nr_data %d len %zu", n, len);

	corrupt_byte(row.bufs[n], len);
	cr_assert_eq(parity_verify(row.bufs, n, row.bufs[n], row.bufs[n + 1], scratch, len),
		     1, "P: nr_data %d len %zu", n, len);
	cr_assert_eq(parity_verify(row.bufs, n, row.bufs[n], NULL, scratch, len), 1,
		     "P raid5: nr_data %d len %zu", n, len);
	ref_pq(row.bufs, n, len, row.bufs[n], NULL);

	corrupt_byte(row.bufs[n + 1], len);
	cr_assert_eq(parity_verify(row.bufs, n, row.bufs[n], row.bufs[n + 1], scratch, len),
		     2, "Q: nr_data %d len %zu", n, len);
	ref_pq(row.bufs, n, len, NULL, row.bufs[n + 1]);

	corrupt_byte(row.bufs[target], len);
	cr_assert_eq(parity_verify(row.bufs, n, row.bufs[n], row.bufs[n + 1], scratch, len),
		     3, "data %d: nr_data %d len %zu", target, n, len);
	cr_assert_eq(parity_verify(row.bufs, n, row.bufs[n], NULL, scratch, len), 1,
		     "data %d raid5: nr_data %d len %zu", target, n, len);

	free(scratch);
	row_free(&row);
}

Test(parity, verify_flags_the_mismatching_chunk)
{
	for_each_shape(check_verify_flags_the_mismatching_chunk);
}

static void check_find_bad_slot_names_each_corrupted_slot(int n, size_t len)
{
	struct row good, work;
	uint8_t *scratch = must_alloc(2 * len);

	row_init(&good, n, len);
	row_alloc(&work, n, len);
	for (int slot = 0; slot < n; slot++) {
		row_copy(&work, &good);
		corrupt_byte(work.bufs[slot], len);
		cr_assert_eq(parity_find_bad_slot(work.bufs, n, work.bufs[n], work.bufs[n + 1],
						  scratch, len),
			     slot, "one byte: nr_data %d len %zu", n, len);

		/* A wider error in the same slot still points at it. */
		for (int k = 0; k < 5; k++)
			corrupt_byte(work.bufs[slot], len);
		fill_random(row_byte(&work, slot), len / 2);
		cr_assert_eq(parity_find_bad_slot(work.bufs, n, work.bufs[n], work.bufs[n + 1],
						  scratch, len),
			     slot, "many bytes: nr_data %d len %zu", n, len);
	}
	free(scratch);
	row_free(&good);
	row_free(&work);
}

Test(parity, find_bad_slot_names_each_corrupted_slot)
{
	for_each_shape(check_find_bad_slot_names_each_corrupted_slot);
}

static void check_find_bad_slot_rejects_what_one_slot_cannot_explain(int n, size_t len)
{
	struct row good, work;
	uint8_t *scratch = must_alloc(2 * len);

	row_init(&good, n, len);
	row_alloc(&work, n, len);

	row_copy(&work, &good);
	cr_assert_eq(parity_find_bad_slot(work.bufs, n, work.bufs[n], work.bufs[n + 1],
					  scratch, len),
		     -1, "consistent: nr_data %d len %zu", n, len);

	corrupt_byte(work.bufs[n], len);
	cr_assert_eq(parity_find_bad_slot(work.bufs, n, work.bufs[n], work.bufs[n + 1],
					  scratch, len),
		     -1, "P only: nr_data %d len %zu", n, len);

	row_copy(&work, &good);
	corrupt_byte(work.bufs[n + 1], len);
	cr_assert_eq(parity_find_bad_slot(work.bufs, n, work.bufs[n], work.bufs[n + 1],
					  scratch, len),
		     -1, "Q only: nr_data %d len %zu", n, len);

	/* Two slots wrong at different bytes: each byte names a
	 * different slot, so no single one explains the row. */
	if (n >= 2) {
		row_copy(&work, &good);
		row_byte(&work, 0)[1] ^= random_nonzero_byte();
		row_byte(&work, n - 1)[len - 1] ^= random_nonzero_byte();
		cr_assert_eq(parity_find_bad_slot(work.bufs, n, work.bufs[n],
						  work.bufs[n + 1], scratch, len),
			     -1, "two slots: nr_data %d len %zu", n, len);
	}

	/* P and Q both wrong, but not as one data error would leave them. */
	row_copy(&work, &good);
	row_byte(&work, n)[0] ^= 0x01;
	row_byte(&work, n + 1)[len - 1] ^= 0x01;
	cr_assert_eq(parity_find_bad_slot(work.bufs, n, work.bufs[n], work.bufs[n + 1],
					  scratch, len),
		     -1, "P and Q at different bytes: nr_data %d len %zu", n, len);

	/* P and Q wrong exactly as a data slot past the end of the row would
	 * leave them: the ratio is a power of g, but of no real slot. */
	for (int phantom = n; phantom <= n + 7; phantom += 7) {
		row_copy(&work, &good);
		row_byte(&work, n)[3] ^= 0x5a;
		row_byte(&work, n + 1)[3] ^= ref_gf_mul(ref_gf_pow2(phantom), 0x5a);
		cr_assert_eq(parity_find_bad_slot(work.bufs, n, work.bufs[n], work.bufs[n + 1],
						  scratch, len),
			     -1, "phantom slot %d: nr_data %d len %zu", phantom, n, len);
	}

	free(scratch);
	row_free(&good);
	row_free(&work);
}

Test(parity, find_bad_slot_rejects_what_one_slot_cannot_explain)
{
	for_each_shape(check_find_bad_slot_rejects_what_one_slot_cannot_explain);
}

/* Data sources only PARITY_SRC_ALIGN_BYTES aligned, as a FUSE request
 * buffer is: P and Q must still match the model (and not fault). */
static void check_gen_from_src_aligned(int n, size_t len)
{
	uint8_t *block = must_alloc((size_t)n * len + PARITY_SRC_ALIGN_BYTES);
	uint8_t *p = must_alloc(len), *q = must_alloc(len);
	uint8_t *ref_p = must_alloc(len), *ref_q = must_alloc(len);
	void *data[PARITY_MAX_DATA];

	/* 64-byte aligned block + 32: aligned to 32 but not to 64. */
	for (int i = 0; i < n; i++) {
		data[i] = block + PARITY_SRC_ALIGN_BYTES + (size_t)i * len;
		fill_random(data[i], len);
	}
	ref_pq(data, n, len, ref_p, ref_q);
	parity_gen_p(data, n, p, len);
	cr_assert(memcmp(p, ref_p, len) == 0, "P (gen_p): nr_data %d len %zu", n, len);
	memset(p, 0, len);
	parity_gen_pq(data, n, p, q, len);
	cr_assert(memcmp(p, ref_p, len) == 0, "P (gen_pq): nr_data %d len %zu", n, len);
	cr_assert(memcmp(q, ref_q, len) == 0, "Q (gen_pq): nr_data %d len %zu", n, len);
	free(block);
	free(p);
	free(q);
	free(ref_p);
	free(ref_q);
}

Test(parity, gen_reads_sources_aligned_to_src_align_only)
{
	for_each_shape(check_gen_from_src_aligned);
}
