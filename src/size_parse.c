/* size_parse.c - see size_parse.h. */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "size_parse.h"

int size_parse(const char *text, uint64_t default_unit, uint64_t *bytes)
{
	char *end;
	uint64_t unit = default_unit;

	if (!text || !isdigit((unsigned char)text[0]))
		return -EINVAL;
	errno = 0;
	unsigned long long value = strtoull(text, &end, 10);
	if (errno)
		return -EINVAL;
	bool has_suffix = true;
	switch (toupper((unsigned char)*end)) {
	case 'K': unit = 1ull << 10; end++; break;
	case 'M': unit = 1ull << 20; end++; break;
	case 'G': unit = 1ull << 30; end++; break;
	case 'T': unit = 1ull << 40; end++; break;
	case 'B': unit = 1; break;
	default: has_suffix = false; break;
	}
	/* 64K, 64KB and 64KiB alike, whatever the default unit. */
	if (has_suffix && (strcasecmp(end, "iB") == 0 || strcasecmp(end, "B") == 0))
		end += strlen(end);
	if (*end != '\0')
		return -EINVAL;
	if (value && unit > UINT64_MAX / value)
		return -EINVAL;
	*bytes = value * unit;
	return 0;
}
