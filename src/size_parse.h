/* size_parse.h - sizes as users type them: "64K", "1M", "512", "2G". */
#ifndef RAIDFUSE_SIZE_PARSE_H
#define RAIDFUSE_SIZE_PARSE_H

#include <stdint.h>

/* Parse a byte count with an optional binary suffix (K, M, G, T; case-
 * insensitive, optional "iB"/"B"); a bare number means default_unit bytes.
 * 0 or -EINVAL (junk, overflow). */
int size_parse(const char *text, uint64_t default_unit, uint64_t *bytes);

#endif
