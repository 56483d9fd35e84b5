/* test_ondisk_corrupt.c - the on-disk parsers against corrupt members.
 *
 * Small arrays are made with the engine's own create (raid5, raid1, raid6,
 * raid10 with their write-intent bitmap; linear and raid0 without one;
 * all with the room for md's bad block log create leaves), then, over and
 * over with a fixed seed, one member's metadata (now and then every
 * member's alike) is corrupted the way a
 * bit flip, a bad tool or a hostile image would: each field of the md
 * superblock in turn (its checksum recomputed, so the parser gets past
 * it), random bytes of it, the fields of the write-intent bitmap
 * superblock, and the entries of the bad block log with and without the
 * feature bit that makes md read them. Every corruption goes through what
 * `raidfuse examine` runs and through the assembly `mount --readonly`
 * runs; a volume that assembles is read at its first and last MiB.
 *
 * What must hold: a refusal is a negative errno with a message (naming the
 * member where the member is at fault), never a crash, a hang (the suite
 * has a timeout) or an access out of bounds (the sanitizer build of the
 * unit tests catches those); an array that assembles has the shape every
 * serving member's superblock gives, read without wrapping, inside each
 * member's data area, and reads no member past its end; and no member
 * file changes, whether the corrupt member was refused or not. A few
 * corruptions the loop reaches too rarely (fields that wrap only when
 * counted in bytes, a bitmap on top of a superblock, a data area or a bad
 * block log) have a test each at the end.
 *
 * Set RAIDFUSE_CORRUPT_SEED=<number> for another seed and
 * RAIDFUSE_CORRUPT_SCALE=<n> to multiply the iterations; every failure
 * names the case, iteration and the corruption made, and
 * RAIDFUSE_CORRUPT_TRACE=1 prints each corruption before it is tried (a
 * hang ends in a timeout that cannot say which).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "array.h"
#include "cli.h"
#include "level.h"
#include "md_super.h"
#include "member_badblocks.h"

#define KiB (1024u)
#define MiB (1024u * 1024u)
#define MAX_DISKS 6
#define ERRLEN 1024

/* Where create puts things (array_create.c), in bytes from the start. */
#define META_BYTES (1u * MiB)                  /* data_offset 2048 sectors */
#define SB_AT 4096u                            /* md 1.2 superblock */
#define BITMAP_AT (SB_AT + 8u * 512u)          /* bitmap_offset 8 */
#define BITMAP_BITS_AT (BITMAP_AT + 256u)
#define BBLOG_AT (SB_AT + 16u * 512u)          /* bblog_offset 16 */
#define BBLOG_BYTES (8u * 512u)
/* Every corruption lies inside this head of the member; restoring it
 * restores the member. */
#define HEAD_BYTES (BBLOG_AT + BBLOG_BYTES)
#define DATA_BYTES (2u * MiB)
#define FILE_BYTES (META_BYTES + DATA_BYTES)
#define FILE_SECTORS (FILE_BYTES / 512u)
#define DATA_SECTORS (DATA_BYTES / 512u)

/* Byte offsets inside mdp_superblock_1 (md_p.h). */
enum {
	SB_FEATURE_MAP = 8,
	SB_SET_UUID = 16,
	SB_LEVEL = 72,
	SB_LAYOUT = 76,
	SB_SIZE = 80,
	SB_CHUNKSIZE = 88,
	SB_BITMAP_OFFSET = 96,
	SB_DATA_OFFSET = 128,
	SB_BBLOG_SHIFT = 185,
	SB_BBLOG_OFFSET = 188,
	SB_SB_CSUM = 216,
	SB_MAX_DEV = 220,
	SB_DEV_ROLES = 256,
};

/* Byte offsets inside bitmap_super_t (md-bitmap.h). */
enum {
	BM_MAGIC = 0,
	BM_VERSION = 4,
	BM_UUID = 8,
	BM_CHUNKSIZE = 52,
};

struct field {
	const char *name;
	unsigned off;
	unsigned width; /* 1, 2, 4 or 8: a number; more: bytes */
};

/* Every field of mdp_superblock_1 but the magic, the version and the
 * checksum (those have their own tests in test_md_super), and dev_roles,
 * which mutate_sb_roles covers. */
static const struct field sb_fields[] = {
	{ "feature_map", 8, 4 },      { "pad0", 12, 4 },           { "set_uuid", 16, 16 },
	{ "set_name", 32, 32 },       { "ctime", 64, 8 },          { "level", 72, 4 },
	{ "layout", 76, 4 },          { "size", 80, 8 },           { "chunksize", 88, 4 },
	{ "raid_disks", 92, 4 },      { "bitmap_offset", 96, 4 },  { "new_level", 100, 4 },
	{ "reshape_position", 104, 8 }, { "delta_disks", 112, 4 }, { "new_layout", 116, 4 },
	{ "new_chunk", 120, 4 },      { "new_offset", 124, 4 },    { "data_offset", 128, 8 },
	{ "data_size", 136, 8 },      { "super_offset", 144, 8 },  { "recovery_offset", 152, 8 },
	{ "dev_number", 160, 4 },     { "cnt_corrected_read", 164, 4 },
	{ "device_uuid", 168, 16 },   { "devflags", 184, 1 },      { "bblog_shift", 185, 1 },
	{ "bblog_size", 186, 2 },     { "bblog_offset", 188, 4 },  { "utime", 192, 8 },
	{ "events", 200, 8 },         { "resync_offset", 208, 8 }, { "max_dev", 220, 4 },
	{ "pad3", 224, 32 },
};
#define NR_SB_FIELDS (sizeof(sb_fields) / sizeof(sb_fields[0]))

static const struct field bm_fields[] = {
	{ "magic", 0, 4 },          { "version", 4, 4 },          { "uuid", 8, 16 },
	{ "events", 24, 8 },        { "events_cleared", 32, 8 },  { "sync_size", 40, 8 },
	{ "state", 48, 4 },         { "chunksize", 52, 4 },       { "daemon_sleep", 56, 4 },
	{ "write_behind", 60, 4 },  { "sectors_reserved", 64, 4 }, { "nodes", 68, 4 },
	{ "cluster_name", 72, 64 },
};
#define NR_BM_FIELDS (sizeof(bm_fields) / sizeof(bm_fields[0]))

struct corrupt_case {
	const char *name;
	int32_t level;
	uint32_t layout;
	bool layout_set;
	uint32_t chunk;
	int disks;
	uint64_t bitmap_chunk;  /* 0: none (levels without one) */
	int iterations;
};

static struct {
	const struct corrupt_case *c;
	char dir[64];
	char paths[MAX_DISKS][128];
	uint8_t *pristine[MAX_DISKS];   /* every member file as create left it */
	uint8_t head[MAX_DISKS][HEAD_BYTES]; /* what each head must hold now */
	uint64_t rng;
	int iteration;
	char what[512];                 /* the corruption made, for messages */
	size_t what_used;
	bool quiet;                     /* the same corruption on the next member */
	char examine_err[ERRLEN];       /* the last cli_error of cmd_examine */
	int refused, opened;            /* tallies, to show the test reaches both */
	int read_ok, read_failed;
} g;

/* ---- the examine verb links against this instead of raidfuse.c's ------- */

void cli_error(const char *verb, const char *fmt, ...)
{
	va_list ap;
	(void)verb;
	va_start(ap, fmt);
	vsnprintf(g.examine_err, sizeof(g.examine_err), fmt, ap);
	va_end(ap);
}

/* ---- helpers ------------------------------------------------------------ */

static uint64_t rnd64(void)
{
	/* splitmix64: deterministic for a seed, good enough to pick cases. */
	uint64_t z = (g.rng += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static uint64_t rnd(uint64_t n)
{
	return n ? rnd64() % n : 0;
}

__attribute__((format(printf, 1, 2))) static void note(const char *fmt, ...)
{
	va_list ap;
	if (g.quiet || g.what_used >= sizeof(g.what))
		return;
	va_start(ap, fmt);
	int n = vsnprintf(g.what + g.what_used, sizeof(g.what) - g.what_used, fmt, ap);
	va_end(ap);
	if (n > 0)
		g.what_used += (size_t)n;
}

static uint64_t get_le(const uint8_t *p, unsigned width)
{
	uint64_t v = 0;
	for (unsigned i = 0; i < width; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

static void put_le(uint8_t *p, unsigned width, uint64_t v)
{
	for (unsigned i = 0; i < width; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t width_mask(unsigned width)
{
	return width >= 8 ? UINT64_MAX : ((uint64_t)1 << (8 * width)) - 1;
}

static const struct field *field_named(const struct field *fields, size_t nr, const char *name)
{
	for (size_t i = 0; i < nr; i++)
		if (strcmp(fields[i].name, name) == 0)
			return &fields[i];
	cr_assert_fail("no field %s", name);
	return NULL;
}

/* A value a corrupt field might hold: the edges of its width, values
 * near the old one, values near this member's own geometry, or noise. */
static uint64_t corrupt_value(uint64_t old, unsigned width)
{
	uint64_t mask = width_mask(width), v;
	static const uint64_t geometry[] = {
		FILE_SECTORS, FILE_SECTORS - 1, FILE_SECTORS + 1, DATA_SECTORS, DATA_SECTORS + 1,
		META_BYTES / 512, META_BYTES / 512 - 1, FILE_BYTES, 8, 9, 16, 24, 4096,
		(uint64_t)1 << 55, (uint64_t)1 << 32, ((uint64_t)1 << 32) + 8,
		0x800008, 0x7fffffff,
	};

	switch (rnd(15)) {
	case 0: v = 0; break;
	case 1: v = 1; break;
	case 2: v = mask; break;
	case 3: v = mask - 1; break;
	case 4: v = (uint64_t)1 << (8 * width - 1); break;
	case 5: v = old + 1; break;
	case 6: v = old - 1; break;
	case 7: v = old * 2; break;
	case 8: v = old ^ ((uint64_t)1 << rnd(8 * width)); break;
	case 9: v = old + rnd(129) - 64; break;
	case 10: v = geometry[rnd(sizeof(geometry) / sizeof(geometry[0]))]; break;
	case 11: v = (uint64_t)1 << rnd(8 * width); break;
	case 12: v = old | ((uint64_t)1 << rnd(8 * width)); break;
	/* Counted in sectors, the same once in bytes if it wraps. */
	case 13: v = width >= 2 ? old + ((uint64_t)1 << (8 * width - 9)) : old; break;
	default: v = rnd64(); break;
	}
	return v & mask;
}

static void corrupt_field(uint8_t *base, const struct field *f, const char *where)
{
	if (f->width > 8) {
		unsigned at = (unsigned)rnd(f->width), n = 1 + (unsigned)rnd(f->width - at);
		for (unsigned i = 0; i < n; i++)
			base[f->off + at + i] = (uint8_t)rnd64();
		note("%s.%s bytes %u..%u random; ", where, f->name, at, at + n - 1);
		return;
	}
	uint64_t old = get_le(base + f->off, f->width);
	uint64_t v = corrupt_value(old, f->width);
	put_le(base + f->off, f->width, v);
	note("%s.%s %" PRIu64 " -> %" PRIu64 " (0x%" PRIx64 "); ", where, f->name, old, v, v);
}

/* md's checksum over the corrupt superblock, so the parser reads on;
 * now and then left stale, so the checksum refusal is reached too. */
static void sb_fix_csum(uint8_t *head)
{
	uint8_t *sb = head + SB_AT;
	if (get_le(sb + SB_MAX_DEV, 4) > MD_SB_MAX_DEV || rnd(24) == 0) {
		note("csum stale; ");
		return;
	}
	put_le(sb + SB_SB_CSUM, 4, md_super_csum(sb));
}

/* ---- corruptions ------------------------------------------------------- */

static void mutate_sb_field(uint8_t *head, unsigned which)
{
	uint8_t *sb = head + SB_AT;
	const struct field *f = &sb_fields[which % NR_SB_FIELDS];

	if (f->off == SB_FEATURE_MAP && rnd(2)) {
		/* The bits md defines, one at a time. */
		uint32_t old = (uint32_t)get_le(sb + f->off, 4), bit = 1u << rnd(14);
		put_le(sb + f->off, 4, old ^ bit);
		note("sb.feature_map 0x%x ^ 0x%x; ", old, bit);
	} else if (f->off == SB_LEVEL && rnd(2)) {
		static const int32_t levels[] = { -1, 0, 1, 4, 5, 6, 10, -4, -5, 2, 3, 11 };
		int32_t level = levels[rnd(sizeof(levels) / sizeof(levels[0]))];
		put_le(sb + f->off, 4, (uint32_t)level);
		note("sb.level -> %d; ", level);
	} else if (f->off == SB_LAYOUT && rnd(2)) {
		static const uint32_t layouts[] = { 0, 1, 2, 3, 4, 5, 6, 16, 17, 18, 20, 0x102,
			                            0x201, 0x10201, 0x20202, 0x40102, 0x0101,
			                            0x1ff, 0xff01, 0x10101, 0x20102, 0x103 };
		uint32_t layout = layouts[rnd(sizeof(layouts) / sizeof(layouts[0]))];
		put_le(sb + f->off, 4, layout);
		note("sb.layout -> 0x%x; ", layout);
	} else {
		corrupt_field(sb, f, "sb");
	}
	sb_fix_csum(head);
}

static void mutate_sb_roles(uint8_t *head, unsigned which)
{
	(void)which; /* random, not a field in turn */
	uint8_t *sb = head + SB_AT;
	static const uint16_t roles[] = { 0, 1, 2, 3, 4, 5, 6, 63, 64, 0xfeff, 0xff00,
		                          MD_ROLE_JOURNAL, MD_ROLE_FAULTY, MD_ROLE_SPARE };
	int n = 1 + (int)rnd(3);

	for (int i = 0; i < n; i++) {
		unsigned slot = rnd(4) ? (unsigned)rnd(8) : (unsigned)rnd(MD_SB_MAX_DEV);
		uint16_t role = rnd(4) ? roles[rnd(sizeof(roles) / sizeof(roles[0]))]
		                       : (uint16_t)rnd64();
		put_le(sb + SB_DEV_ROLES + 2 * slot, 2, role);
		note("sb.dev_roles[%u] -> 0x%x; ", slot, role);
	}
	sb_fix_csum(head);
}

static void mutate_sb_bytes(uint8_t *head, unsigned which)
{
	(void)which; /* random, not a field in turn */
	uint8_t *sb = head + SB_AT;
	int n = 1 + (int)rnd(6);

	for (int i = 0; i < n; i++) {
		/* Mostly the fixed part and the first roles, where the
		 * meaning is. */
		unsigned at = rnd(4) ? (unsigned)rnd(MD_SB_FIXED_BYTES + 32) : (unsigned)rnd(1024);
		uint8_t v = (uint8_t)rnd64();
		if (at < 8)
			continue; /* magic and version: test_md_super */
		sb[at] = v;
		note("sb byte %u -> 0x%02x; ", at, v);
	}
	sb_fix_csum(head);
}

/* Members of levels without a bitmap get one planted first (the feature
 * bit, an offset, a valid bitmap superblock), so its parser is reached
 * on every level. */
static uint8_t *bitmap_of(uint8_t *head)
{
	uint8_t *sb = head + SB_AT;
	uint32_t features = (uint32_t)get_le(sb + SB_FEATURE_MAP, 4);

	if (!(features & MD_FEATURE_BITMAP_OFFSET)) {
		struct md_bitmap_super bsb;
		memset(&bsb, 0, sizeof(bsb));
		bsb.version = 4;
		memcpy(bsb.uuid, sb + SB_SET_UUID, 16);
		bsb.sync_size = DATA_SECTORS;
		bsb.chunksize = 64 * KiB;
		bsb.daemon_sleep = 5;
		md_bitmap_super_encode(&bsb, head + BITMAP_AT);
		memset(head + BITMAP_BITS_AT, 0, BBLOG_AT - BITMAP_BITS_AT);
		put_le(sb + SB_FEATURE_MAP, 4, features | MD_FEATURE_BITMAP_OFFSET);
		put_le(sb + SB_BITMAP_OFFSET, 4, 8);
		note("bitmap planted at offset 8; ");
	}
	return head + BITMAP_AT;
}

static void mutate_bitmap_field(uint8_t *head, unsigned which)
{
	uint8_t *bm = bitmap_of(head);
	const struct field *f = &bm_fields[which % NR_BM_FIELDS];

	if (f->off == BM_CHUNKSIZE && rnd(2)) {
		uint32_t chunk = rnd(4) ? 1u << rnd(32) : (uint32_t)rnd64();
		put_le(bm + f->off, 4, chunk);
		note("bitmap.chunksize -> %u; ", chunk);
	} else if (f->off == BM_VERSION && rnd(2)) {
		uint32_t version = (uint32_t)rnd(7);
		put_le(bm + f->off, 4, version);
		note("bitmap.version -> %u; ", version);
	} else if ((f->off == BM_MAGIC || f->off == BM_UUID) && rnd(4)) {
		/* Kept valid mostly: the rest of the parser is the target. */
		corrupt_field(bm, field_named(bm_fields, NR_BM_FIELDS, rnd(2) ? "sync_size" : "chunksize"),
		              "bitmap");
	} else {
		corrupt_field(bm, f, "bitmap");
	}
	sb_fix_csum(head);
}

static void mutate_bitmap_place(uint8_t *head, unsigned which)
{
	(void)which; /* random, not a field in turn */
	uint8_t *sb = head + SB_AT;
	static const int32_t offsets[] = { -8, -1, 0, 1, 2, 7, 9, 16, 24, 2040, 2048, 4096,
		                           INT32_MIN, INT32_MAX, 1 << 20 };
	(void)bitmap_of(head);
	int32_t off = rnd(4) ? offsets[rnd(sizeof(offsets) / sizeof(offsets[0]))]
	                     : (int32_t)rnd64();
	put_le(sb + SB_BITMAP_OFFSET, 4, (uint32_t)off);
	note("sb.bitmap_offset -> %d; ", off);
	/* Sometimes a valid bitmap superblock waits at the new place. */
	int64_t at = (int64_t)SB_AT + (int64_t)off * 512;
	if (rnd(2) && at >= 0 && at + 256 <= (int64_t)HEAD_BYTES && at != SB_AT) {
		memmove(head + at, head + BITMAP_AT, 256);
		note("bitmap moved there; ");
	}
	sb_fix_csum(head);
}

static void mutate_bitmap_bytes(uint8_t *head, unsigned which)
{
	(void)which; /* random, not a field in turn */
	uint8_t *bm = bitmap_of(head);
	int n = 1 + (int)rnd(8);

	for (int i = 0; i < n; i++) {
		unsigned at = (unsigned)rnd(BBLOG_AT - BITMAP_AT);
		uint8_t v = (uint8_t)rnd64();
		if (at < 4 && rnd(4))
			continue; /* keep the magic, mostly */
		bm[at] = v;
		note("bitmap byte %u -> 0x%02x; ", at, v);
	}
	sb_fix_csum(head);
}

/* A bad block log entry's sector: in the data area, in the metadata,
 * at or past the member's end, or anything. */
static uint64_t bblog_sector(void)
{
	switch (rnd(6)) {
	case 0: return META_BYTES / 512 + rnd(DATA_SECTORS);
	case 1: return rnd(META_BYTES / 512);
	case 2: return FILE_SECTORS - rnd(4);
	case 3: return FILE_SECTORS + rnd(1024);
	case 4: return rnd64() >> 10;
	default: return META_BYTES / 512 + DATA_SECTORS - 1 - rnd(64);
	}
}

static void mutate_bblog(uint8_t *head, unsigned which)
{
	(void)which; /* random, not a field in turn */
	uint8_t *sb = head + SB_AT, *log = head + BBLOG_AT;
	uint32_t features = (uint32_t)get_le(sb + SB_FEATURE_MAP, 4);
	int n = (int)rnd(6);

	/* Unit size first: the entries below count in it. */
	if (rnd(4) == 0) {
		uint8_t shift = rnd(2) ? (uint8_t)rnd(12) : (uint8_t)rnd64();
		sb[SB_BBLOG_SHIFT] = shift;
		note("sb.bblog_shift -> %u; ", shift);
	}
	unsigned shift = sb[SB_BBLOG_SHIFT];
	for (int i = 0; i < n; i++) {
		uint64_t sector = bblog_sector(), count = rnd(3) ? 1 + rnd(64) : rnd(1024);
		if (shift < 64)
			sector >>= shift;
		md_badblock_entry_encode(log + 8 * i, sector, count);
		note("bblog[%d] = %" PRIu64 "+%" PRIu64 "; ", i, sector, count);
	}
	if (rnd(8) == 0) {
		/* No terminator: the log runs to its end. */
		for (unsigned at = 8u * (unsigned)n; at < BBLOG_BYTES; at++)
			log[at] = (uint8_t)rnd64();
		note("bblog unterminated; ");
	}
	if (rnd(4) == 0) {
		corrupt_field(sb, field_named(sb_fields, NR_SB_FIELDS,
		                              rnd(2) ? "bblog_size" : "bblog_offset"), "sb");
	}
	bool logged = rnd(4) != 0;
	features = logged ? features | MD_FEATURE_BAD_BLOCKS : features & ~MD_FEATURE_BAD_BLOCKS;
	put_le(sb + SB_FEATURE_MAP, 4, features);
	note("BAD_BLOCKS %s; ", logged ? "set" : "clear");
	sb_fix_csum(head);
}

typedef void (*mutation_fn)(uint8_t *head, unsigned which);

/* Weighted towards the superblock fields, each taken in turn. */
static const mutation_fn schedule[] = {
	mutate_sb_field, mutate_sb_field,     mutate_sb_field,         mutate_sb_roles,
	mutate_sb_bytes, mutate_bitmap_field, mutate_bitmap_place,
	mutate_bitmap_bytes, mutate_bblog, mutate_bblog,
};
#define NR_SCHEDULE (sizeof(schedule) / sizeof(schedule[0]))

/* ---- the members ------------------------------------------------------- */

static void read_whole(const char *path, uint8_t *buf, size_t len, off_t at)
{
	int fd = open(path, O_RDONLY);
	cr_assert(fd >= 0, "open %s: %s", path, strerror(errno));
	ssize_t got = pread(fd, buf, len, at);
	cr_assert_eq(got, (ssize_t)len, "read %s: %zd of %zu bytes", path, got, len);
	close(fd);
}

static void write_head(int disk)
{
	int fd = open(g.paths[disk], O_WRONLY);
	cr_assert(fd >= 0, "open %s: %s", g.paths[disk], strerror(errno));
	cr_assert_eq(pwrite(fd, g.head[disk], HEAD_BYTES, 0), (ssize_t)HEAD_BYTES);
	close(fd);
}

static void corrupt_setup(const struct corrupt_case *c)
{
	struct array_create_opts co;
	const char *pathv[MAX_DISKS];
	char err[ERRLEN] = "";
	const char *env = getenv("RAIDFUSE_CORRUPT_SEED");

	memset(&g, 0, sizeof(g));
	g.c = c;
	g.rng = env && *env ? strtoull(env, NULL, 0) : 0xc0ffee00d15c0000ull ^ (uint64_t)c->level;
	cr_log_info("%s: seed 0x%016" PRIx64, c->name, g.rng);
	snprintf(g.dir, sizeof(g.dir), "/tmp/raidfuse-corrupt-XXXXXX");
	cr_assert_not_null(mkdtemp(g.dir), "mkdtemp: %s", strerror(errno));
	for (int i = 0; i < c->disks; i++) {
		snprintf(g.paths[i], sizeof(g.paths[i]), "%s/member%d.img", g.dir, i);
		pathv[i] = g.paths[i];
	}
	memset(&co, 0, sizeof(co));
	co.level = c->level;
	co.layout = c->layout;
	co.layout_set = c->layout_set;
	co.chunk_bytes = c->chunk;
	co.raid_disks = c->disks;
	co.name = "corrupt";
	co.member_file_bytes = FILE_BYTES;
	co.bitmap_chunk_bytes = c->bitmap_chunk;
	int rc = array_create(pathv, c->disks, &co, err, sizeof(err));
	cr_assert_eq(rc, 0, "%s: array_create: rc %d: %s", c->name, rc, err);
	for (int i = 0; i < c->disks; i++) {
		g.pristine[i] = malloc(FILE_BYTES);
		cr_assert_not_null(g.pristine[i]);
		read_whole(g.paths[i], g.pristine[i], FILE_BYTES, 0);
		/* The layout this test corrupts is the one create writes. */
		cr_assert_eq(get_le(g.pristine[i] + SB_AT, 4), MD_SB_MAGIC);
		cr_assert_eq(get_le(g.pristine[i] + SB_AT + SB_BBLOG_OFFSET, 4), 16);
		if (c->bitmap_chunk)
			cr_assert_eq(get_le(g.pristine[i] + BITMAP_AT + BM_MAGIC, 4), MD_BITMAP_MAGIC);
	}
}

static void corrupt_fini(void)
{
	for (int i = 0; i < MAX_DISKS; i++) {
		if (g.paths[i][0])
			unlink(g.paths[i]);
		free(g.pristine[i]);
		g.pristine[i] = NULL;
	}
	if (g.dir[0])
		rmdir(g.dir);
}

struct file_stamp {
	off_t size;
	struct timespec mtime;
};

static void stamp_all(struct file_stamp *st)
{
	for (int i = 0; i < g.c->disks; i++) {
		struct stat s;
		cr_assert_eq(stat(g.paths[i], &s), 0, "stat %s: %s", g.paths[i], strerror(errno));
		st[i].size = s.st_size;
		st[i].mtime = s.st_mtim;
	}
}

/* No member changed: size and mtime as before (a write anywhere moves
 * it), the heads as written; now and then every byte. */
static void check_unchanged(const struct file_stamp *before, bool every_byte)
{
	static uint8_t buf[FILE_BYTES];
	struct file_stamp after[MAX_DISKS];

	stamp_all(after);
	for (int i = 0; i < g.c->disks; i++) {
		cr_assert(after[i].size == before[i].size &&
		                  after[i].mtime.tv_sec == before[i].mtime.tv_sec &&
		                  after[i].mtime.tv_nsec == before[i].mtime.tv_nsec,
		          "%s iteration %d: %s was written to (size or mtime changed) after: %s",
		          g.c->name, g.iteration, g.paths[i], g.what);
		size_t len = every_byte ? FILE_BYTES : HEAD_BYTES;
		read_whole(g.paths[i], buf, len, 0);
		cr_assert(memcmp(buf, g.head[i], HEAD_BYTES) == 0,
		          "%s iteration %d: the metadata of %s changed after: %s", g.c->name,
		          g.iteration, g.paths[i], g.what);
		cr_assert(!every_byte || memcmp(buf + HEAD_BYTES, g.pristine[i] + HEAD_BYTES,
		                                FILE_BYTES - HEAD_BYTES) == 0,
		          "%s iteration %d: %s changed after: %s", g.c->name, g.iteration,
		          g.paths[i], g.what);
	}
}

/* A refusal: a negative errno, and a message. */
static void assert_refusal(int rc, const char *err, const char *step)
{
	cr_assert(rc < 0 && rc > -4096, "%s iteration %d: %s returned %d (not 0 or -errno) "
	          "after: %s", g.c->name, g.iteration, step, rc, g.what);
	cr_assert(err[0] != '\0', "%s iteration %d: %s refused (%d) without a message after: %s",
	          g.c->name, g.iteration, step, rc, g.what);
}

/* What `raidfuse examine` runs, on the corrupt member: the loaders (whose
 * refusals name the member), then the verb itself, which prints. */
static void run_examine(int disk)
{
	struct member m;
	char err[ERRLEN] = "";

	int rc = member_open(&m, g.paths[disk], true, err, sizeof(err));
	cr_assert_eq(rc, 0, "member_open %s: %s", g.paths[disk], err);
	rc = member_super_load(&m, err, sizeof(err));
	if (rc == 0)
		rc = member_badblocks_load(&m, err, sizeof(err));
	if (rc < 0) {
		assert_refusal(rc, err, "loading the superblock and bad block log");
		cr_assert_not_null(strstr(err, g.paths[disk]),
		                   "%s iteration %d: the refusal does not name the member: \"%s\" "
		                   "after: %s",
		                   g.c->name, g.iteration, err, g.what);
	}
	member_close(&m);

	char *argv[] = { "examine", g.paths[disk], NULL };
	g.examine_err[0] = '\0';
	fflush(stdout);
	int saved = dup(STDOUT_FILENO), null = open("/dev/null", O_WRONLY);
	cr_assert(saved >= 0 && null >= 0);
	dup2(null, STDOUT_FILENO);
	close(null);
	int status = cmd_examine(2, argv);
	fflush(stdout);
	dup2(saved, STDOUT_FILENO);
	close(saved);
	cr_assert_eq(status, rc < 0 ? CLI_EXIT_ERROR : CLI_EXIT_OK,
	             "%s iteration %d: examine exited %d (loaders said %d) after: %s", g.c->name,
	             g.iteration, status, rc, g.what);
	cr_assert(rc == 0 || g.examine_err[0], "examine refused without a message");
}

static void read_range(struct raid_array *a, uint8_t *buf, uint64_t off, size_t len)
{
	int rc = array_read(a, buf, len, off);
	if (rc == 0)
		g.read_ok++;
	else
		g.read_failed++;
	cr_assert(rc == 0 || (rc < 0 && rc > -4096),
	          "%s iteration %d: array_read of %zu bytes at %" PRIu64 " returned %d after: %s",
	          g.c->name, g.iteration, len, off, rc, g.what);
}

/* An array that assembled maps the volume into its members' data areas
 * only: what the superblocks say must not send reads past a member's end
 * or into its metadata. */
static void assert_geometry_inside(const struct raid_array *a)
{
	for (int role = 0; role < a->geo.raid_disks; role++) {
		const struct member *m = a->slot[role] ? a->slot[role] : a->rebuilding[role];
		if (!m)
			continue;
		uint64_t data_bytes = m->sb.data_size * SECTOR_BYTES;
		cr_assert(m->data_offset_bytes >= SB_AT + MD_SB_MAX_BYTES,
		          "%s iteration %d: %s (role %d) has its data at byte %" PRIu64
		          ", over its superblock, after: %s",
		          g.c->name, g.iteration, m->path, role, m->data_offset_bytes, g.what);
		/* The shape is what this member's superblock says too, read
		 * without wrapping (mdadm's compare_super1 refuses members
		 * that disagree). */
		cr_assert(m->sb.level == a->geo.level && m->sb.layout == a->geo.layout &&
		                  m->sb.raid_disks == (uint32_t)a->geo.raid_disks &&
		                  (uint64_t)m->sb.chunksize * SECTOR_BYTES == a->geo.chunk_bytes &&
		                  (!a->ops->uniform_members ||
		                   (m->sb.size <= m->sb.data_size &&
		                    m->sb.size * SECTOR_BYTES == a->geo.dev_bytes)),
		          "%s iteration %d: %s (role %d) says level %d layout 0x%x raid_disks %u "
		          "chunksize %u size %" PRIu64 " (data_size %" PRIu64 "), the array runs "
		          "as level %d layout 0x%x raid_disks %d chunk %u bytes, %" PRIu64 " bytes "
		          "per member, after: %s",
		          g.c->name, g.iteration, m->path, role, m->sb.level, m->sb.layout,
		          m->sb.raid_disks, m->sb.chunksize, m->sb.size, m->sb.data_size,
		          a->geo.level, a->geo.layout, a->geo.raid_disks, a->geo.chunk_bytes,
		          a->geo.dev_bytes, g.what);
		cr_assert(a->geo.member_bytes[role] <= data_bytes &&
		                  (!a->ops->uniform_members || a->geo.dev_bytes <= data_bytes) &&
		                  m->data_offset_bytes + data_bytes <= m->file_bytes,
		          "%s iteration %d: %s (role %d): the array uses %" PRIu64 " bytes (per member "
		          "%" PRIu64 ") from byte %" PRIu64 " of a %" PRIu64 "-byte member whose data "
		          "area is %" PRIu64 " bytes, after: %s",
		          g.c->name, g.iteration, m->path, role, a->geo.member_bytes[role],
		          a->geo.dev_bytes, m->data_offset_bytes, m->file_bytes, data_bytes, g.what);
	}
}

/* What `mount --readonly` runs: assembly and start, then the volume's
 * first and last MiB read through the engine, then stop. With write
 * access asked for (no start, so nothing may be written either), the
 * same parsers run with the checks that only a writable array needs. */
static void run_assembly(int victim)
{
	static uint8_t buf[MiB];
	const char *pathv[MAX_DISKS];
	struct array_assemble_opts opts;
	struct raid_array *a = NULL;
	char err[ERRLEN] = "";
	int n = 0;

	/* The corrupt member first half the time: ties in events go to it. */
	if (rnd(2))
		pathv[n++] = g.paths[victim];
	for (int i = 0; i < g.c->disks; i++)
		if (i != victim)
			pathv[n++] = g.paths[i];
	if (n < g.c->disks)
		pathv[n++] = g.paths[victim];

	memset(&opts, 0, sizeof(opts));
	opts.read_only = rnd(4) != 0;
	opts.run_degraded = rnd(2);
	opts.force = rnd(4) == 0;
	array_tuning_defaults(&opts.tuning);
	opts.tuning.cache_bytes = 2 * MiB;
	opts.tuning_set = true;
	int rc = array_assemble(&a, pathv, n, &opts, err, sizeof(err));
	if (rc < 0) {
		assert_refusal(rc, err, "array_assemble");
		cr_assert_null(a);
		g.refused++;
		return;
	}
	cr_assert_eq(rc, 0);
	cr_assert_not_null(a);
	g.opened++;
	assert_geometry_inside(a);
	if (opts.read_only) {
		rc = array_start(a, err, sizeof(err));
		cr_assert_eq(rc, 0, "%s iteration %d: read-only start: %s", g.c->name, g.iteration,
		             err);
		uint64_t size = a->geo.array_bytes;
		cr_assert(size > 0, "%s iteration %d: an empty volume assembled after: %s",
		          g.c->name, g.iteration, g.what);
		size_t len = size < MiB ? (size_t)size : MiB;
		read_range(a, buf, 0, len);
		read_range(a, buf, size - len, len);
		/* A member read past its end is answered from redundancy
		 * without a word to the reader: the counters tell. */
		for (int i = 0; i < a->nr_members; i++)
			cr_assert_eq(atomic_load(&a->members[i].read_errors), 0,
			             "%s iteration %d: %s had read errors (past its end?) after: %s",
			             g.c->name, g.iteration, a->members[i].path, g.what);
	}
	rc = array_stop(a);
	cr_assert_eq(rc, 0, "%s iteration %d: array_stop: %d", g.c->name, g.iteration, rc);
}

static void run_case(const struct corrupt_case *c)
{
	const char *env = getenv("RAIDFUSE_CORRUPT_SCALE");
	int iterations = c->iterations * (env && atoi(env) > 0 ? atoi(env) : 1);
	struct file_stamp before[MAX_DISKS];
	const char *trace = getenv("RAIDFUSE_CORRUPT_TRACE");

	corrupt_setup(c);
	for (int i = 0; i < c->disks; i++)
		memcpy(g.head[i], g.pristine[i], HEAD_BYTES);
	for (g.iteration = 0; g.iteration < iterations; g.iteration++) {
		int victim = (int)rnd((uint64_t)c->disks);
		/* Now and then every member alike: a shape that all agree on
		 * reaches the geometry checks that a lone dissenter never
		 * gets past. */
		bool every_member = rnd(6) == 0;
		g.what_used = 0;
		g.what[0] = '\0';
		if (every_member)
			note("every member: ");
		else
			note("member %d: ", victim);
		/* The last corruption undone, this one made, each member's
		 * with the same random choices. */
		bool twice = rnd(8) == 0; /* two at once reach checks one alone does not */
		uint64_t rng_start = g.rng;
		unsigned step = (unsigned)g.iteration;
		for (int i = 0; i < c->disks; i++) {
			if (memcmp(g.head[i], g.pristine[i], HEAD_BYTES) != 0) {
				memcpy(g.head[i], g.pristine[i], HEAD_BYTES);
				write_head(i);
			}
			if (!every_member && i != victim)
				continue;
			g.rng = rng_start;
			g.quiet = every_member && i > 0; /* noted once is enough */
			schedule[step % NR_SCHEDULE](g.head[i], step / NR_SCHEDULE);
			if (twice)
				schedule[rnd(NR_SCHEDULE)](g.head[i], (unsigned)rnd64());
			write_head(i);
		}
		g.quiet = false;
		if (trace) /* before it runs: a hang stops the test with no message */
			fprintf(stderr, "%s iteration %d: %s\n", c->name, g.iteration, g.what);

		stamp_all(before);
		run_examine(victim);
		run_assembly(victim);
		check_unchanged(before, g.iteration % 64 == 63 || g.iteration == iterations - 1);
	}
	cr_log_info("%s: %d iterations, %d assembled, %d refused; %d reads, %d failed", c->name,
	            iterations, g.opened, g.refused, g.read_ok + g.read_failed, g.read_failed);
	/* Both outcomes are reached, or the corruptions miss their target. */
	cr_assert(g.opened > 0 && g.refused > 0, "%s: %d assembled, %d refused", c->name,
	          g.opened, g.refused);
}

TestSuite(ondisk_corrupt, .fini = corrupt_fini, .timeout = 120);

Test(ondisk_corrupt, raid5_4)
{
	static const struct corrupt_case c = { "raid5 x4", 5, 0, false, 64 * KiB, 4, 64 * KiB, 1400 };
	run_case(&c);
}

Test(ondisk_corrupt, raid1_2)
{
	static const struct corrupt_case c = { "raid1 x2", 1, 0, false, 0, 2, 64 * KiB, 1000 };
	run_case(&c);
}

Test(ondisk_corrupt, raid6_5)
{
	static const struct corrupt_case c = { "raid6 x5", 6, 0, false, 64 * KiB, 5, 64 * KiB, 1000 };
	run_case(&c);
}

Test(ondisk_corrupt, raid10_4)
{
	static const struct corrupt_case c = { "raid10 x4", 10, 0, false, 64 * KiB, 4, 64 * KiB, 1000 };
	run_case(&c);
}

Test(ondisk_corrupt, linear_2)
{
	static const struct corrupt_case c = { "linear x2", -1, 0, false, 0, 2, 0, 500 };
	run_case(&c);
}

Test(ondisk_corrupt, raid0_3)
{
	static const struct corrupt_case c = { "raid0 x3", 0, 0, false, 64 * KiB, 3, 0, 500 };
	run_case(&c);
}

/* ---- corruptions the loop above reaches too rarely to rely on --------- */

static const struct corrupt_case raid5_case = { "raid5 x4", 5, 0, false, 64 * KiB, 4, 64 * KiB, 0 };

/* Field (off, width) of every member's superblock set by set(old), the
 * checksum recomputed. */
static void every_sb_field(unsigned off, unsigned width, uint64_t (*set)(uint64_t old))
{
	for (int i = 0; i < g.c->disks; i++) {
		uint8_t *sb = g.head[i] + SB_AT;
		put_le(sb + off, width, set(get_le(sb + off, width)));
		put_le(sb + SB_SB_CSUM, 4, md_super_csum(sb));
		write_head(i);
	}
}

static void assemble_refused(const char *why, const char *field)
{
	const char *pathv[MAX_DISKS];
	struct array_assemble_opts opts;
	struct raid_array *a = NULL;
	char err[ERRLEN] = "";

	for (int i = 0; i < g.c->disks; i++)
		pathv[i] = g.paths[i];
	memset(&opts, 0, sizeof(opts));
	opts.read_only = true;
	int rc = array_assemble(&a, pathv, g.c->disks, &opts, err, sizeof(err));
	if (rc == 0)
		array_stop(a);
	cr_assert(rc < 0, "%s: assembled", why);
	cr_assert_not_null(strstr(err, field), "%s: the refusal does not name %s: \"%s\"", why,
	                   field, err);
}

static uint64_t chunk_wrapping(uint64_t old)
{
	return old | (1u << 23); /* 2^32 bytes more: the same chunk mod 2^32 */
}

static uint64_t size_wrapping(uint64_t old)
{
	return old | ((uint64_t)1 << 55);
}

Test(ondisk_corrupt, chunk_wrapping_in_bytes_refused)
{
	corrupt_setup(&raid5_case);
	for (int i = 0; i < g.c->disks; i++)
		memcpy(g.head[i], g.pristine[i], HEAD_BYTES);
	every_sb_field(SB_CHUNKSIZE, 4, chunk_wrapping);
	assemble_refused("chunksize 2^23 + 128 sectors on every member", "chunksize");
}

Test(ondisk_corrupt, size_wrapping_in_bytes_refused)
{
	corrupt_setup(&raid5_case);
	for (int i = 0; i < g.c->disks; i++)
		memcpy(g.head[i], g.pristine[i], HEAD_BYTES);
	every_sb_field(SB_SIZE, 8, size_wrapping);
	assemble_refused("size 2^55 + 4096 sectors on every member", "size");
}

static void pristine_heads(void)
{
	corrupt_setup(&raid5_case);
	for (int i = 0; i < g.c->disks; i++)
		memcpy(g.head[i], g.pristine[i], HEAD_BYTES);
}

static void fix_csum_and_write(int disk)
{
	uint8_t *sb = g.head[disk] + SB_AT;
	put_le(sb + SB_SB_CSUM, 4, md_super_csum(sb));
	write_head(disk);
}

/* With 384 device slots the superblock fills 1 KiB: a bitmap one sector
 * after it lies inside, and each store of one would wreck the other. */
Test(ondisk_corrupt, bitmap_inside_superblock_refused)
{
	pristine_heads();
	for (int i = 0; i < g.c->disks; i++) {
		uint8_t *sb = g.head[i] + SB_AT;
		memmove(sb + 512, g.head[i] + BITMAP_AT, 256);
		put_le(sb + SB_BITMAP_OFFSET, 4, 1);
		put_le(sb + SB_MAX_DEV, 4, MD_SB_MAX_DEV);
		for (unsigned slot = 4; slot < 128; slot++)
			put_le(sb + SB_DEV_ROLES + 2 * slot, 2, MD_ROLE_SPARE);
		fix_csum_and_write(i);
	}
	assemble_refused("a bitmap at sector 1 of a 1 KiB superblock", "superblock");
}

/* md lets each member have its own data_offset; the bitmap, written at
 * one offset on all of them, must end before every one's data. */
Test(ondisk_corrupt, bitmap_over_another_members_data_refused)
{
	pristine_heads();
	uint8_t *sb = g.head[2] + SB_AT;
	put_le(sb + SB_DATA_OFFSET, 8, 16); /* where the bitmap is */
	fix_csum_and_write(2);
	assemble_refused("member 2's data at the bitmap's sector", "data area");
}

/* The room for the bad block log (empty, no feature bit: raidfuse writes
 * it when a rebuild logs lost sectors) on top of the bitmap. */
Test(ondisk_corrupt, bitmap_over_bad_block_log_refused)
{
	pristine_heads();
	for (int i = 0; i < g.c->disks; i++) {
		put_le(g.head[i] + SB_AT + SB_BBLOG_OFFSET, 4, 8);
		fix_csum_and_write(i);
	}
	assemble_refused("the bad block log room over the bitmap", "bad block log");
}
