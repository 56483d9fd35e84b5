/* md_names.c - owns the text forms of md identifiers: array/device UUIDs,
 * RAID level names and per-level layout names, spelled the way mdadm 4.2
 * prints and parses them (mdadm maps.c r0layout/r5layout/r6layout/pers,
 * util.c print_r10_layout, parse_layout_10), so raidfuse's output can be
 * compared with `mdadm --examine` and users can type what mdadm accepts.
 */
#include "md_super.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

struct name_map {
	const char *name;
	uint32_t value;
};

/* Within each table the first entry for a value is the name printed for
 * it; later entries are aliases accepted on input. */
static const struct {
	const char *name;
	int32_t level;
} level_names[] = {
	{ "linear", MD_LEVEL_LINEAR },
	{ "jbod", MD_LEVEL_LINEAR },
	{ "raid0", 0 },
	{ "0", 0 },
	{ "stripe", 0 },
	{ "raid1", 1 },
	{ "1", 1 },
	{ "mirror", 1 },
	{ "raid4", 4 },
	{ "4", 4 },
	{ "raid5", 5 },
	{ "5", 5 },
	{ "raid6", 6 },
	{ "6", 6 },
	{ "raid10", 10 },
	{ "10", 10 },
};

/* md's ALGORITHM_* numbers (raid5.h). */
enum {
	ALG_LEFT_ASYMMETRIC = 0,
	ALG_RIGHT_ASYMMETRIC = 1,
	ALG_LEFT_SYMMETRIC = 2,
	ALG_RIGHT_SYMMETRIC = 3,
	ALG_PARITY_0 = 4,
	ALG_PARITY_N = 5,
	ALG_ROTATING_ZERO_RESTART = 8,
	ALG_ROTATING_N_RESTART = 9,
	ALG_ROTATING_N_CONTINUE = 10,
	ALG_LEFT_ASYMMETRIC_6 = 16,
	ALG_RIGHT_ASYMMETRIC_6 = 17,
	ALG_LEFT_SYMMETRIC_6 = 18,
	ALG_RIGHT_SYMMETRIC_6 = 19,
	ALG_PARITY_0_6 = 20,
};

/* For RAID5 mdadm maps the DDF names onto the plain algorithms they are
 * equivalent to; only RAID6 has distinct rotating DDF layouts. */
static const struct name_map r5_layouts[] = {
	{ "left-asymmetric", ALG_LEFT_ASYMMETRIC },
	{ "right-asymmetric", ALG_RIGHT_ASYMMETRIC },
	{ "left-symmetric", ALG_LEFT_SYMMETRIC },
	{ "right-symmetric", ALG_RIGHT_SYMMETRIC },
	{ "parity-first", ALG_PARITY_0 },
	{ "parity-last", ALG_PARITY_N },
	{ "default", ALG_LEFT_SYMMETRIC },
	{ "la", ALG_LEFT_ASYMMETRIC },
	{ "ra", ALG_RIGHT_ASYMMETRIC },
	{ "ls", ALG_LEFT_SYMMETRIC },
	{ "rs", ALG_RIGHT_SYMMETRIC },
	{ "ddf-zero-restart", ALG_RIGHT_ASYMMETRIC },
	{ "ddf-N-restart", ALG_LEFT_ASYMMETRIC },
	{ "ddf-N-continue", ALG_LEFT_SYMMETRIC },
	{ NULL, 0 },
};

static const struct name_map r6_layouts[] = {
	{ "left-asymmetric", ALG_LEFT_ASYMMETRIC },
	{ "right-asymmetric", ALG_RIGHT_ASYMMETRIC },
	{ "left-symmetric", ALG_LEFT_SYMMETRIC },
	{ "right-symmetric", ALG_RIGHT_SYMMETRIC },
	{ "parity-first", ALG_PARITY_0 },
	{ "parity-last", ALG_PARITY_N },
	{ "ddf-zero-restart", ALG_ROTATING_ZERO_RESTART },
	{ "ddf-N-restart", ALG_ROTATING_N_RESTART },
	{ "ddf-N-continue", ALG_ROTATING_N_CONTINUE },
	{ "left-asymmetric-6", ALG_LEFT_ASYMMETRIC_6 },
	{ "right-asymmetric-6", ALG_RIGHT_ASYMMETRIC_6 },
	{ "left-symmetric-6", ALG_LEFT_SYMMETRIC_6 },
	{ "right-symmetric-6", ALG_RIGHT_SYMMETRIC_6 },
	{ "parity-first-6", ALG_PARITY_0_6 },
	{ "default", ALG_LEFT_SYMMETRIC },
	{ "la", ALG_LEFT_ASYMMETRIC },
	{ "ra", ALG_RIGHT_ASYMMETRIC },
	{ "ls", ALG_LEFT_SYMMETRIC },
	{ "rs", ALG_RIGHT_SYMMETRIC },
	{ NULL, 0 },
};

/* RAID0 layouts exist because Linux 3.14 changed how multi-zone arrays
 * (members of different sizes) map; 0 is mdadm's "dangerous" (unspecified). */
static const struct name_map r0_layouts[] = {
	{ "original", 1 },
	{ "alternate", 2 },
	{ "dangerous", 0 },
	{ NULL, 0 },
};

/* The kernel's RAID4 always keeps parity on the last member whatever the
 * layout says; mdadm writes 0 and md's raid5->raid4 takeover writes
 * parity-last, so both are accepted. */
static const struct name_map r4_layouts[] = {
	{ "-", 0 },
	{ "parity-last", ALG_PARITY_N },
	{ "", 0 },
	{ NULL, 0 },
};

/* Levels with no layout: mdadm prints none, we print "-". */
static const struct name_map no_layouts[] = {
	{ "-", 0 },
	{ "", 0 },
	{ NULL, 0 },
};

#define R10_NEAR(l) ((l) & 0xffu)
#define R10_FAR(l) (((l) >> 8) & 0xffu)
#define R10_OFFSET 0x10000u
/* Bits 17-18 select the far-set variant (md raid10 setup_geo); above
 * that md refuses the layout. */
#define R10_LAYOUT_LIMIT (1u << 19)
#define R10_FAR_SET_MAX 2u

static const char UNKNOWN_NAME[] = "-unknown-";

void md_uuid_format(const uint8_t uuid[16], char out[36])
{
	static const char hex[] = "0123456789abcdef";
	char *p = out;
	int i;

	for (i = 0; i < 16; i++) {
		if (i != 0 && i % 4 == 0)
			*p++ = ':';
		*p++ = hex[uuid[i] >> 4];
		*p++ = hex[uuid[i] & 0xf];
	}
	*p = '\0';
}

int md_uuid_parse(const char *text, uint8_t uuid[16])
{
	uint8_t tmp[16] = { 0 };
	int digits = 0;
	const char *p;

	if (!text)
		return -EINVAL;
	/* Same separators as mdadm's parse_uuid, so both md's
	 * xxxxxxxx:xxxxxxxx:... and the RFC 4122 dashed form are accepted. */
	for (p = text; *p; p++) {
		int n;

		if (*p >= '0' && *p <= '9')
			n = *p - '0';
		else if (*p >= 'a' && *p <= 'f')
			n = *p - 'a' + 10;
		else if (*p >= 'A' && *p <= 'F')
			n = *p - 'A' + 10;
		else if (strchr(":. -", *p))
			continue;
		else
			return -EINVAL;
		if (digits >= 32)
			return -EINVAL;
		tmp[digits / 2] = (uint8_t)(tmp[digits / 2] << 4 | n);
		digits++;
	}
	if (digits != 32)
		return -EINVAL;
	memcpy(uuid, tmp, sizeof(tmp));
	return 0;
}

const char *md_level_name(int32_t level)
{
	size_t i;

	for (i = 0; i < sizeof(level_names) / sizeof(level_names[0]); i++)
		if (level_names[i].level == level)
			return level_names[i].name;
	return NULL;
}

int md_level_parse(const char *text, int32_t *level)
{
	size_t i;

	if (!text)
		return -EINVAL;
	for (i = 0; i < sizeof(level_names) / sizeof(level_names[0]); i++) {
		if (strcasecmp(text, level_names[i].name) == 0) {
			*level = level_names[i].level;
			return 0;
		}
	}
	return -EINVAL;
}

static const struct name_map *layout_table(int32_t level)
{
	switch (level) {
	case MD_LEVEL_LINEAR:
	case 1:
		return no_layouts;
	case 0:
		return r0_layouts;
	case 4:
		return r4_layouts;
	case 5:
		return r5_layouts;
	case 6:
		return r6_layouts;
	default:
		return NULL;
	}
}

static const char *map_value(const struct name_map *map, uint32_t value)
{
	for (; map->name; map++)
		if (map->value == value)
			return map->name;
	return NULL;
}

static bool map_name(const struct name_map *map, const char *name, uint32_t *value)
{
	for (; map->name; map++) {
		if (strcasecmp(map->name, name) == 0) {
			*value = map->value;
			return true;
		}
	}
	return false;
}

static bool r10_layout_valid(uint32_t layout)
{
	return R10_NEAR(layout) >= 1 && R10_FAR(layout) >= 1 && layout < R10_LAYOUT_LIMIT &&
	       (layout >> 17) <= R10_FAR_SET_MAX;
}

/* Whole-string unsigned number, decimal or 0x-hex (layouts like 0x10201
 * are easier to read in hex). Digits only: no sign, blanks or second
 * prefix, which strtoul would quietly accept. */
static bool parse_u32(const char *text, uint32_t *out)
{
	uint64_t v = 0;
	unsigned base = 10;
	const char *p = text;

	if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
		base = 16;
		p += 2;
	}
	if (*p == '\0')
		return false;
	for (; *p; p++) {
		unsigned d;

		if (*p >= '0' && *p <= '9')
			d = (unsigned)(*p - '0');
		else if (base == 16 && *p >= 'a' && *p <= 'f')
			d = (unsigned)(*p - 'a' + 10);
		else if (base == 16 && *p >= 'A' && *p <= 'F')
			d = (unsigned)(*p - 'A' + 10);
		else
			return false;
		v = v * base + d;
		if (v > UINT32_MAX)
			return false;
	}
	*out = (uint32_t)v;
	return true;
}

/* A copy count as it follows "n", "near=", etc.: 1..255, the width of the
 * layout field. */
static bool parse_copies(const char *text, size_t len, uint32_t *copies)
{
	uint32_t v = 0;
	size_t i;

	if (len == 0 || len > 3)
		return false;
	for (i = 0; i < len; i++) {
		if (text[i] < '0' || text[i] > '9')
			return false;
		v = v * 10 + (uint32_t)(text[i] - '0');
	}
	if (v < 1 || v > 255)
		return false;
	*copies = v;
	return true;
}

/* mdadm's short form: n<K>, f<K> or o<K>. */
static bool parse_r10_short(const char *text, uint32_t *layout)
{
	uint32_t copies;
	char kind = text[0];

	if (kind != 'n' && kind != 'f' && kind != 'o')
		return false;
	if (!parse_copies(text + 1, strlen(text + 1), &copies))
		return false;
	if (kind == 'n')
		*layout = (1u << 8) | copies;
	else if (kind == 'f')
		*layout = (copies << 8) | 1u;
	else
		*layout = R10_OFFSET | (copies << 8) | 1u;
	return true;
}

/* The form md_layout_name prints (mdadm's print_r10_layout): "near=2",
 * "far=2", "offset=2", "near=2, far=3" or "NO REDUNDANCY". */
static bool parse_r10_long(const char *text, uint32_t *layout)
{
	uint32_t near = 1, far = 1, offset = 0;
	bool seen_near = false, seen_far = false;
	const char *p = text;

	if (strcasecmp(text, "NO REDUNDANCY") == 0) {
		*layout = 0x101;
		return true;
	}
	while (*p) {
		const char *eq = strchr(p, '=');
		size_t keylen, vlen;
		uint32_t v;

		if (!eq)
			return false;
		keylen = (size_t)(eq - p);
		vlen = strcspn(eq + 1, ",");
		if (!parse_copies(eq + 1, vlen, &v))
			return false;
		if (keylen == 4 && strncmp(p, "near", 4) == 0 && !seen_near) {
			near = v;
			seen_near = true;
		} else if (keylen == 3 && strncmp(p, "far", 3) == 0 && !seen_far) {
			far = v;
			seen_far = true;
		} else if (keylen == 6 && strncmp(p, "offset", 6) == 0 && !seen_far) {
			far = v;
			offset = R10_OFFSET;
			seen_far = true;
		} else {
			return false;
		}
		p = eq + 1 + vlen;
		if (*p == ',') {
			p++;
			while (*p == ' ')
				p++;
			if (*p == '\0')
				return false;
		}
	}
	if (!seen_near && !seen_far)
		return false;
	*layout = offset | (far << 8) | near;
	return true;
}

const char *md_layout_name(int32_t level, uint32_t layout, char *out, size_t outlen)
{
	const struct name_map *map;
	const char *name;

	if (!out || outlen == 0)
		return out;
	if (level == 10) {
		uint32_t near = R10_NEAR(layout), far = R10_FAR(layout);
		const char *far_word = (layout & R10_OFFSET) ? "offset" : "far";

		if (near != 1 && far != 1)
			snprintf(out, outlen, "near=%u, %s=%u", near, far_word, far);
		else if (near != 1)
			snprintf(out, outlen, "near=%u", near);
		else if (far != 1)
			snprintf(out, outlen, "%s=%u", far_word, far);
		else
			snprintf(out, outlen, "NO REDUNDANCY");
		return out;
	}
	map = layout_table(level);
	name = map ? map_value(map, layout) : NULL;
	snprintf(out, outlen, "%s", name ? name : UNKNOWN_NAME);
	return out;
}

int md_layout_parse(int32_t level, const char *text, uint32_t *layout)
{
	const struct name_map *map;
	uint32_t v;

	if (!text)
		return -EINVAL;
	if (level == 10) {
		if (parse_r10_short(text, &v) || parse_r10_long(text, &v) ||
		    (parse_u32(text, &v) && r10_layout_valid(v))) {
			*layout = v;
			return 0;
		}
		return -EINVAL;
	}
	map = layout_table(level);
	if (!map)
		return -EINVAL;
	if (map_name(map, text, &v)) {
		*layout = v;
		return 0;
	}
	/* A number is taken only if it names a layout md knows for the level,
	 * so a typo cannot create an array md would refuse to run. */
	if (parse_u32(text, &v) && map_value(map, v)) {
		*layout = v;
		return 0;
	}
	return -EINVAL;
}
