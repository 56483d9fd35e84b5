/* parity.c - RAID5/6 parity arithmetic on column buffers.
 *
 * This file owns the math of a row: generating P and Q, folding a changed
 * data chunk into them, rebuilding up to two lost chunks, and telling a
 * bad parity chunk from a bad data chunk. It knows nothing of members,
 * layouts or I/O; callers hand it column buffers in syndrome slot order.
 *
 * The heavy lifting is ISA-L's: xor_gen and pq_gen for full rows, and
 * gf_vect_mul / gf_vect_mad for everything that needs one GF(2^8) constant
 * times a buffer. Tables for both come from gf_vect_mul_init, never from
 * ec_init_tables: newer ISA-L builds GFNI tables there on CPUs that have
 * GFNI, while gf_vect_mad keeps using the 32-byte pshufb layout.
 */
#include <assert.h>
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <isa-l/erasure_code.h>
#include <isa-l/gf_vect_mul.h>
#include <isa-l/raid.h>

#include "parity.h"

/* Size of one gf_vect_mul_init table. */
#define GF_TABLE_BYTES 32

/* Enough pointers for every data slot, P, Q and one destination. */
#define MAX_VECTS (PARITY_MAX_DATA + 3)

/* ISA-L takes int lengths and refuses (or misbehaves on) unaligned ones;
 * the header promises both, so a violation is a caller bug. */
static int isal_len(size_t len_bytes)
{
	assert(len_bytes % PARITY_ALIGN_BYTES == 0);
	assert(len_bytes <= INT_MAX);
	return (int)len_bytes;
}

static uint8_t gf_mul2(uint8_t x)
{
	return (uint8_t)((x << 1) ^ ((x & 0x80) ? 0x1d : 0));
}

/* g^e for any e >= 0; the multiplicative group has order 255. */
static uint8_t gf_exp2(int e)
{
	uint8_t x = 1;

	for (e %= 255; e > 0; e--)
		x = gf_mul2(x);
	return x;
}

/* dest = coef * src */
static void gf_mul_buf(void *dest, const void *src, uint8_t coef, int len)
{
	unsigned char table[GF_TABLE_BYTES];

	if (coef == 1) {
		memcpy(dest, src, (size_t)len);
		return;
	}
	gf_vect_mul_init(coef, table);
	gf_vect_mul(len, table, (void *)src, dest);
}

/* dest ^= coef * src */
static void gf_mad_buf(void *dest, const void *src, uint8_t coef, int len)
{
	unsigned char table[GF_TABLE_BYTES];

	gf_vect_mul_init(coef, table);
	gf_vect_mad(len, 1, 0, table, (unsigned char *)src, dest);
}

/* dest = XOR of bufs[0..nr_bufs-1] except bufs[skip] (skip < 0: none).
 * xor_gen wants at least two sources, so a lone source is a copy. */
static void xor_except(void *const *bufs, int nr_bufs, int skip, void *dest, int len)
{
	void *vects[MAX_VECTS];
	int nr_vects = 0;

	for (int i = 0; i < nr_bufs; i++)
		if (i != skip)
			vects[nr_vects++] = bufs[i];
	assert(nr_vects >= 1 && nr_vects < MAX_VECTS);

	if (nr_vects == 1) {
		memcpy(dest, vects[0], (size_t)len);
		return;
	}
	vects[nr_vects++] = dest;
	xor_gen(nr_vects, len, vects);
}

/* Q alone, for when P is intact and must not be written. */
static void gen_q(void *const *data, int nr_data, void *q, int len)
{
	uint8_t coef = 1;

	memcpy(q, data[0], (size_t)len);
	for (int i = 1; i < nr_data; i++) {
		coef = gf_mul2(coef);
		gf_mad_buf(q, data[i], coef, len);
	}
}

static void gen_pq(void *const *data, int nr_data, void *p, void *q, int len)
{
	void *vects[MAX_VECTS];

	/* pq_gen needs two sources; with one, P = Q = g^0 * D. */
	if (nr_data == 1) {
		memcpy(p, data[0], (size_t)len);
		memcpy(q, data[0], (size_t)len);
		return;
	}
	memcpy(vects, data, (size_t)nr_data * sizeof(*vects));
	vects[nr_data] = p;
	vects[nr_data + 1] = q;
	pq_gen(nr_data + 2, len, vects);
}

static bool buf_is_zero(const void *buf, size_t len)
{
	const unsigned char *bytes = buf;

	/* Each byte equals its successor and the first is zero. */
	return len == 0 || (bytes[0] == 0 && memcmp(bytes, bytes + 1, len - 1) == 0);
}

void *parity_buf_alloc(size_t len_bytes)
{
	void *buf;

	if (posix_memalign(&buf, PARITY_ALIGN_BYTES, len_bytes ? len_bytes : 1) != 0)
		return NULL;
	memset(buf, 0, len_bytes);
	return buf;
}

void parity_gen_p(void *const *data, int nr_data, void *p, size_t len_bytes)
{
	int len = isal_len(len_bytes);

	assert(nr_data >= 1 && nr_data <= PARITY_MAX_DATA);
	if (len == 0)
		return;
	xor_except(data, nr_data, -1, p, len);
}

void parity_gen_pq(void *const *data, int nr_data, void *p, void *q, size_t len_bytes)
{
	int len = isal_len(len_bytes);

	assert(nr_data >= 1 && nr_data <= PARITY_MAX_DATA);
	if (len == 0)
		return;
	gen_pq(data, nr_data, p, q, len);
}

/* p ^= old ^ new as two accumulates: no scratch buffer, and no reliance
 * on xor_gen tolerating a destination that aliases a source. */
void parity_update_p(void *p, const void *old_data, const void *new_data, size_t len_bytes)
{
	int len = isal_len(len_bytes);

	if (len == 0)
		return;
	gf_mad_buf(p, old_data, 1, len);
	gf_mad_buf(p, new_data, 1, len);
}

/* g^slot * (old ^ new) == g^slot * old ^ g^slot * new, so the delta never
 * needs a buffer of its own. */
void parity_update_q(void *q, const void *old_data, const void *new_data, int slot,
                     size_t len_bytes)
{
	int len = isal_len(len_bytes);
	uint8_t coef;

	assert(slot >= 0 && slot < PARITY_MAX_DATA);
	if (len == 0)
		return;
	coef = gf_exp2(slot);
	gf_mad_buf(q, old_data, coef, len);
	gf_mad_buf(q, new_data, coef, len);
}

/* Data slot lost together with P:
 * D_d = g^-d * (Q ^ sum_{i != d} g^i D_i)
 *     = g^-d Q ^ sum_{i != d} g^(i-d) D_i,
 * written so that D_d is only ever a destination. */
static void rebuild_data_from_q(void *const *bufs, int nr_data, int lost, int len)
{
	uint8_t coef = gf_exp2(255 - lost);	/* g^(i - lost) for i = 0 */

	gf_mul_buf(bufs[lost], bufs[nr_data + 1], coef, len);
	for (int i = 0; i < nr_data; i++, coef = gf_mul2(coef))
		if (i != lost)
			gf_mad_buf(bufs[lost], bufs[i], coef, len);
}

/* Two data slots a < b lost, P and Q intact. With Pxy = P ^ sum D_i and
 * Qxy = Q ^ sum g^i D_i over the surviving slots:
 *   D_a = A * Pxy ^ B * Qxy,  A = g^(b-a) / (g^(b-a) ^ 1),
 *                             B = g^-a / (g^(b-a) ^ 1)
 *   D_b = Pxy ^ D_a
 * Expanding Pxy and Qxy gives D_a straight from the surviving buffers, each
 * survivor D_i weighted A ^ B * g^i. */
static void rebuild_two_data(void *const *bufs, int nr_data, int a, int b, int len)
{
	uint8_t g_ba = gf_exp2(b - a);
	uint8_t denom_inv = gf_inv(g_ba ^ 1);
	uint8_t coef_a = gf_mul(g_ba, denom_inv);
	uint8_t coef_b = gf_mul(gf_exp2(255 - a), denom_inv);
	uint8_t g_i = 1;

	gf_mul_buf(bufs[a], bufs[nr_data], coef_a, len);
	gf_mad_buf(bufs[a], bufs[nr_data + 1], coef_b, len);
	for (int i = 0; i < nr_data; i++, g_i = gf_mul2(g_i))
		if (i != a && i != b)
			gf_mad_buf(bufs[a], bufs[i], coef_a ^ gf_mul(coef_b, g_i), len);

	/* D_b = P ^ D_a ^ the survivors: everything in data + P but D_b. */
	xor_except(bufs, nr_data + 1, b, bufs[b], len);
}

static int check_lost(int nr_data, int has_q, const int *lost, int nr_lost)
{
	int nr_bufs = nr_data + 1 + has_q;

	if (nr_lost < 0 || nr_lost > 1 + has_q || (nr_lost > 0 && !lost))
		return -EINVAL;
	for (int i = 0; i < nr_lost; i++) {
		if (lost[i] < 0 || lost[i] >= nr_bufs)
			return -EINVAL;
		for (int j = 0; j < i; j++)
			if (lost[j] == lost[i])
				return -EINVAL;
	}
	return 0;
}

int parity_recover(void *const *bufs, int nr_data, int has_q, const int *lost, int nr_lost,
                   size_t len_bytes)
{
	int p_idx = nr_data, q_idx = nr_data + 1;
	int a, b, len, rc;

	has_q = !!has_q;
	if (!bufs || nr_data < 1 || nr_data > PARITY_MAX_DATA)
		return -EINVAL;
	if (len_bytes % PARITY_ALIGN_BYTES != 0 || len_bytes > INT_MAX)
		return -EINVAL;
	rc = check_lost(nr_data, has_q, lost, nr_lost);
	if (rc)
		return rc;
	if (nr_lost == 0 || len_bytes == 0)
		return 0;
	len = (int)len_bytes;

	a = lost[0];
	if (nr_lost == 1) {
		if (a < nr_data)
			xor_except(bufs, nr_data + 1, a, bufs[a], len);
		else if (a == p_idx)
			xor_except(bufs, nr_data, -1, bufs[p_idx], len);
		else
			gen_q(bufs, nr_data, bufs[q_idx], len);
		return 0;
	}

	b = lost[1];
	if (a > b) {
		int tmp = a;

		a = b;
		b = tmp;
	}
	if (b == q_idx) {
		if (a == p_idx) {
			gen_pq(bufs, nr_data, bufs[p_idx], bufs[q_idx], len);
		} else {
			xor_except(bufs, nr_data + 1, a, bufs[a], len);
			gen_q(bufs, nr_data, bufs[q_idx], len);
		}
	} else if (b == p_idx) {
		rebuild_data_from_q(bufs, nr_data, a, len);
		xor_except(bufs, nr_data, -1, bufs[p_idx], len);
	} else {
		rebuild_two_data(bufs, nr_data, a, b, len);
	}
	return 0;
}

int parity_verify(void *const *data, int nr_data, const void *p, const void *q,
                  void *scratch, size_t len_bytes)
{
	int len = isal_len(len_bytes);
	unsigned char *p_calc = scratch;
	unsigned char *q_calc = p_calc + len_bytes;
	int mismatch = 0;

	assert(nr_data >= 1 && nr_data <= PARITY_MAX_DATA);
	if (len == 0)
		return 0;

	if (q) {
		gen_pq(data, nr_data, p_calc, q_calc, len);
		if (memcmp(q_calc, q, len_bytes) != 0)
			mismatch |= 2;
	} else {
		xor_except(data, nr_data, -1, p_calc, len);
	}
	if (memcmp(p_calc, p, len_bytes) != 0)
		mismatch |= 1;
	return mismatch;
}

/* A single bad data slot z leaves syndromes P' = E and Q' = g^z * E for
 * its error E, so z = log_g(Q'/P') at any byte where E is non-zero, and the
 * same z must explain every other byte. */
int parity_find_bad_slot(void *const *data, int nr_data, const void *p, const void *q,
                         void *scratch, size_t len_bytes)
{
	int len = isal_len(len_bytes);
	unsigned char *p_syn = scratch;
	unsigned char *q_syn = p_syn + len_bytes;
	uint8_t ratio, g_z = 1;
	size_t first;
	int z;

	assert(nr_data >= 1 && nr_data <= PARITY_MAX_DATA);
	if (len == 0 || !q)
		return -1;

	gen_pq(data, nr_data, p_syn, q_syn, len);
	gf_mad_buf(p_syn, p, 1, len);
	gf_mad_buf(q_syn, q, 1, len);
	if (buf_is_zero(p_syn, len_bytes) || buf_is_zero(q_syn, len_bytes))
		return -1;

	/* A zero ratio (Q' clean where P' is not) matches no power of g. */
	for (first = 0; p_syn[first] == 0; first++)
		;
	ratio = gf_mul(q_syn[first], gf_inv(p_syn[first]));
	for (z = 0; z < nr_data && g_z != ratio; z++)
		g_z = gf_mul2(g_z);
	if (z == nr_data)
		return -1;

	/* Q' ^ g^z * P' vanishes everywhere exactly when z explains it all. */
	gf_mad_buf(q_syn, p_syn, g_z, len);
	return buf_is_zero(q_syn, len_bytes) ? z : -1;
}
