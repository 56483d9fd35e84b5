/* member_fault.c - see member_fault.h. */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "member.h"
#include "member_fault.h"
#include "size_parse.h"
#include "textbuf.h"

static int parse_range(const char *value, uint64_t *lo, uint64_t *hi)
{
	char first[64];
	const char *plus = strchr(value, '+');
	uint64_t len;

	if (!plus || (size_t)(plus - value) >= sizeof(first))
		return -EINVAL;
	memcpy(first, value, (size_t)(plus - value));
	first[plus - value] = '\0';
	if (size_parse(first, 1, lo) < 0 || size_parse(plus + 1, 1, &len) < 0 || len == 0 ||
	    len > UINT64_MAX - *lo)
		return -EINVAL;
	*hi = *lo + len;
	return 0;
}

int member_fault_parse(const char *text, size_t len, struct member_fault *out)
{
	char copy[512], *save = NULL;

	if (len >= sizeof(copy))
		return -EINVAL;
	memcpy(copy, text, len);
	copy[len] = '\0';
	memset(out, 0, sizeof(*out));
	out->rng = 0x9e3779b97f4a7c15ull;
	for (char *tok = strtok_r(copy, " \t\n", &save); tok; tok = strtok_r(NULL, " \t\n", &save)) {
		if (strcmp(tok, "clear") == 0) {
			memset(out, 0, sizeof(*out));
		} else if (strcmp(tok, "read-error") == 0) {
			out->read_error = true;
		} else if (strcmp(tok, "write-error") == 0) {
			out->write_error = true;
		} else if (strcmp(tok, "error") == 0) {
			out->read_error = out->write_error = true;
		} else if (strcmp(tok, "vanish") == 0) {
			out->vanished = true;
		} else if (strcmp(tok, "super-error") == 0) {
			out->super_error = true;
		} else if (strcmp(tok, "no-write-zeroes") == 0) {
			out->no_write_zeroes = true;
		} else if (strncmp(tok, "rate=", 5) == 0) {
			char *end;
			double rate = strtod(tok + 5, &end);
			/* Written so that NaN fails too; below one in a million
			 * would be 0 ppm, which means every request. */
			if (*end || !(rate * 1e6 >= 1 && rate <= 1))
				return -EINVAL;
			out->rate_ppm = (uint32_t)(rate * 1e6);
		} else if (strncmp(tok, "range=", 6) == 0) {
			if (parse_range(tok + 6, &out->range_lo, &out->range_hi) < 0)
				return -EINVAL;
		} else if (strncmp(tok, "corrupt=", 8) == 0) {
			if (parse_range(tok + 8, &out->corrupt_lo, &out->corrupt_hi) < 0)
				return -EINVAL;
		} else if (strncmp(tok, "latency=", 8) == 0) {
			char *end;
			unsigned long ms = strtoul(tok + 8, &end, 10);
			if (*end || ms > 60000)
				return -EINVAL;
			out->latency_ms = (uint32_t)ms;
		} else {
			return -EINVAL;
		}
	}
	/* rate= and range= say when an error strikes: alone they would be
	 * taken, read back as none and inject nothing. */
	if ((out->rate_ppm || out->range_hi) && !out->read_error && !out->write_error)
		return -EINVAL;
	return 0;
}

void member_fault_format(const struct member_fault *f, char *buf, size_t len)
{
	struct textbuf t = textbuf_init(buf, len);
	if (!f || (!f->read_error && !f->write_error && !f->vanished && !f->super_error &&
	           !f->latency_ms && f->corrupt_hi == 0 && !f->no_write_zeroes)) {
		textbuf_appendf(&t, "none\n");
		return;
	}
	if (f->read_error && f->write_error)
		textbuf_appendf(&t, "error ");
	else if (f->read_error)
		textbuf_appendf(&t, "read-error ");
	else if (f->write_error)
		textbuf_appendf(&t, "write-error ");
	if (f->rate_ppm)
		textbuf_appendf(&t, "rate=%.6f ", f->rate_ppm / 1e6);
	if (f->range_hi)
		textbuf_appendf(&t, "range=%" PRIu64 "+%" PRIu64 " ", f->range_lo, f->range_hi - f->range_lo);
	if (f->latency_ms)
		textbuf_appendf(&t, "latency=%u ", f->latency_ms);
	if (f->corrupt_hi)
		textbuf_appendf(&t, "corrupt=%" PRIu64 "+%" PRIu64 " ", f->corrupt_lo,
		             f->corrupt_hi - f->corrupt_lo);
	if (f->vanished)
		textbuf_appendf(&t, "vanish ");
	if (f->super_error)
		textbuf_appendf(&t, "super-error ");
	if (f->no_write_zeroes)
		textbuf_appendf(&t, "no-write-zeroes ");
	if (t.used > 0 && t.used < len && buf[t.used - 1] == ' ')
		buf[t.used - 1] = '\n';
}

static bool overlaps(uint64_t lo, uint64_t hi, uint64_t off, size_t len)
{
	return hi == 0 || (off < hi && off + len > lo);
}

int member_fault_before(struct member *m, bool is_write, uint64_t data_off, size_t len)
{
	struct member_fault *f = m->fault;

	if (!f)
		return 0;
	if (f->vanished)
		return -EIO;
	if (f->latency_ms) {
		struct timespec nap = { f->latency_ms / 1000, (long)(f->latency_ms % 1000) * 1000000L };
		nanosleep(&nap, NULL);
	}
	if (!(is_write ? f->write_error : f->read_error))
		return 0;
	if (!overlaps(f->range_lo, f->range_hi, data_off, len))
		return 0;
	if (f->rate_ppm) {
		/* xorshift: cheap, and races between threads only blur it */
		uint64_t x = f->rng;
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		f->rng = x;
		if (x % 1000000u >= f->rate_ppm)
			return 0;
	}
	return -EIO;
}

void member_fault_after_read(struct member *m, void *buf, uint64_t data_off, size_t len)
{
	struct member_fault *f = m->fault;

	if (!f || f->corrupt_hi == 0 || !overlaps(f->corrupt_lo, f->corrupt_hi, data_off, len))
		return;
	uint64_t from = f->corrupt_lo > data_off ? f->corrupt_lo : data_off;
	uint64_t to = f->corrupt_hi < data_off + len ? f->corrupt_hi : data_off + len;
	for (uint64_t at = from; at < to; at++)
		((uint8_t *)buf)[at - data_off] ^= 0xa5;
}
