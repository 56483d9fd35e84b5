/* parity.h - RAID5/6 parity arithmetic on column buffers (ISA-L backed).
 *
 * Buffers are in *syndrome slot order*: slot i of a row carries the data
 * chunk whose Q coefficient is g^i (g = 2 over GF(2^8), polynomial 0x11d,
 * as in Linux md). Every buffer passed here must be 64-byte aligned, except
 * the data that parity_gen_p and parity_gen_pq only read, which needs only
 * PARITY_SRC_ALIGN_BYTES (ISA-L's documented alignment for xor_gen and
 * pq_gen sources: request buffers can then be used where they are), and
 * every length a multiple of PARITY_ALIGN_BYTES; the engine works in 4 KiB
 * columns, which satisfies both. Lengths must also fit in an int (ISA-L's
 * length type). parity_recover returns -EINVAL when they do not hold;
 * the other functions assert them.
 */
#ifndef RAIDFUSE_PARITY_H
#define RAIDFUSE_PARITY_H

#include <stddef.h>
#include <stdint.h>

#define PARITY_ALIGN_BYTES 64
#define PARITY_SRC_ALIGN_BYTES 32
#define PARITY_MAX_DATA 253 /* GF(2^8) has 255 non-zero powers; P and Q use two slots */

/* Allocate a zeroed, 64-byte aligned buffer; NULL on ENOMEM. Free with free(). */
void *parity_buf_alloc(size_t len_bytes);

/* P = XOR of data[0..nr_data-1]. nr_data >= 1 (one data chunk: P is a copy). */
void parity_gen_p(void *const *data, int nr_data, void *p, size_t len_bytes);

/* P and Q over data[0..nr_data-1] (slot order). nr_data >= 1. */
void parity_gen_pq(void *const *data, int nr_data, void *p, void *q, size_t len_bytes);

/* Read-modify-write updates for one data slot whose contents change from
 * old_data to new_data: p ^= old ^ new; q ^= g^slot * (old ^ new). */
void parity_update_p(void *p, const void *old_data, const void *new_data, size_t len_bytes);
void parity_update_q(void *q, const void *old_data, const void *new_data, int slot,
                     size_t len_bytes);

/* Rebuild lost buffers of one row in place.
 * bufs[0..nr_data-1] are data slots, bufs[nr_data] is P, bufs[nr_data+1] is Q
 * (present only when has_q). lost[0..nr_lost-1] are distinct indices into
 * bufs (0 <= lost[i] < nr_data + 1 + has_q). nr_lost may be 0, 1, or 2
 * (2 only when has_q). Buffers not listed in lost must hold valid contents;
 * the lost ones are overwritten.
 * Returns 0, or -EINVAL when the pattern is not recoverable. */
int parity_recover(void *const *bufs, int nr_data, int has_q, const int *lost, int nr_lost,
                   size_t len_bytes);

/* Compare stored P (and Q) with what the data says; used by check/repair.
 * Returns a bitmask: bit 0 set when P mismatches, bit 1 when Q mismatches.
 * q may be NULL (RAID5): only P is checked.
 * scratch must hold 2 * len_bytes, 64-byte aligned. */
int parity_verify(void *const *data, int nr_data, const void *p, const void *q,
                  void *scratch, size_t len_bytes);

/* For RAID6: if exactly one data slot is wrong (P and Q both mismatch in a
 * way consistent with a single data error), return that slot (>= 0);
 * -1 when the row is consistent or no single slot explains the mismatch
 * (also when q is NULL). A row whose only fault is in P or only in Q gives
 * -1; parity_verify tells which.
 * scratch must hold 2 * len_bytes. */
int parity_find_bad_slot(void *const *data, int nr_data, const void *p, const void *q,
                         void *scratch, size_t len_bytes);

#endif
