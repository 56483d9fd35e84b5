/* pattern.h - the deterministic content the test tools write and verify.
 *
 * A pattern is a byte stream over absolute file offsets chosen by a 64-bit
 * key: the 8 bytes at offset 8*W are mix64(key ^ W), little-endian. Each
 * tool derives the key from what identifies one write (fsync_writer: seed
 * and write number; stress_rw: seed, region and generation), so any part
 * of any write can be regenerated to check it, and bytes of another write,
 * or bytes that landed at the wrong offset, never match by accident.
 * Header only (static inline), so each tool stays one .c file to build.
 */
#ifndef RAIDFUSE_TESTS_PATTERN_H
#define RAIDFUSE_TESTS_PATTERN_H

#include <stddef.h>
#include <stdint.h>

/* splitmix64's finalizer: every input bit changes about half the output
 * bits (the tools also step their random generators with it). */
static inline uint64_t mix64(uint64_t z)
{
	z += 0x9e3779b97f4a7c15ull;
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Fill BUF with the bytes of KEY's pattern at offsets [OFF, OFF+LEN). */
static inline void pattern_fill(unsigned char *buf, uint64_t key, uint64_t off, size_t len)
{
	size_t i = 0;

	while (i < len) {
		uint64_t o = off + i;
		uint64_t w = mix64(key ^ (o >> 3));
		for (unsigned b = (unsigned)(o & 7); b < 8 && i < len; b++, i++)
			buf[i] = (unsigned char)(w >> (8 * b));
	}
}

#endif
