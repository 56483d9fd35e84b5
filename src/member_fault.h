/* member_fault.h - fault injection for drills and tests: a member can be
 * made to fail reads and/or writes with EIO (always, at a rate, or in a
 * byte range of its data area), to answer slowly, to return silently
 * corrupted bytes in a range, or to vanish altogether. Set from
 * MOUNT/.raidfuse/devN/fault. Off by default, and then free. */
#ifndef RAIDFUSE_MEMBER_FAULT_H
#define RAIDFUSE_MEMBER_FAULT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct member;

struct member_fault {
	bool read_error;
	bool write_error;
	uint32_t rate_ppm;        /* of requests in range that fail; 0 = all */
	uint64_t range_lo, range_hi; /* data-area bytes; hi == 0: everywhere */
	uint32_t latency_ms;
	uint64_t corrupt_lo, corrupt_hi; /* reads of these bytes come back flipped */
	bool vanished;            /* every request fails, superblock included */
	bool super_error;         /* superblock writes fail, nothing else */
	bool no_write_zeroes;     /* zeroes by writing, as a disk without write-zeroes */
	uint64_t rng;
};

/* Parse "clear", or tokens: read-error write-error error rate=P (0..1)
 * range=OFF+LEN latency=MS corrupt=OFF+LEN vanish super-error no-write-zeroes. 0 or
 * -EINVAL. */
int member_fault_parse(const char *text, size_t len, struct member_fault *out);
/* The settings as text (the same tokens). */
void member_fault_format(const struct member_fault *f, char *buf, size_t len);

/* Called by member I/O (data area offsets): -EIO to inject, else 0;
 * sleeps for the latency. */
int member_fault_before(struct member *m, bool is_write, uint64_t data_off, size_t len);
/* After a successful read: flip the bytes of the corrupt range. */
void member_fault_after_read(struct member *m, void *buf, uint64_t data_off, size_t len);

#endif
