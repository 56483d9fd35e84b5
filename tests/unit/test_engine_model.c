/* test_engine_model.c - the engine against an in-memory model of the volume.
 *
 * For every level (linear, raid0, raid1, raid10 near-2 and far-2, raid5,
 * raid6) and chunk size (4 KiB, 64 KiB, 1 MiB where the level has chunks),
 * a fresh array of member files is created, assembled and started; then
 * thousands of random reads, writes and zeroings (discards; unaligned,
 * crossing chunk and row boundaries, whole rows, small 4 KiB-aligned
 * pieces, the tail of the volume) go to both the array and a plain byte buffer, and every read is
 * compared with the buffer. The array is then stopped and reassembled and
 * the whole volume compared; redundant levels are also read with every
 * member (and for raid6 and raid10 every pair) left out, and written
 * degraded, then read back degraded and with the stale member offered
 * again (it must stay out). Every subset of members that the level cannot
 * lose must be refused. Beyond one case per level and chunk there are a
 * few shapes that reach other code: raid0 with unequal members (zones),
 * raid10 near-2 on three members (copies wrap rows) and offset-2, and
 * raid6 on seven members (read-modify-write; five never take it).
 *
 * Each case has a fixed seed, printed at the start; set
 * RAIDFUSE_MODEL_SEED=<number> to run with another one and
 * RAIDFUSE_MODEL_SCALE=<n> to multiply the operation counts.
 * A failing read reports the first differing byte, where it lives (chunk,
 * role, member offset) and which earlier write last touched that sector.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <criterion/criterion.h>
#include <criterion/logging.h>

#include "array.h"
#include "level.h"

#define KiB (1024u)
#define MiB (1024u * 1024u)
#define META_BYTES (1u * MiB) /* data offset array_create uses */
#define MAX_DISKS 8
#define ERRLEN 512

/* ---- cases ------------------------------------------------------------ */

struct model_case {
	const char *name;
	int32_t level;
	uint32_t layout;
	bool layout_set;
	uint32_t chunk;                 /* 0: the level has no chunk */
	int disks;
	uint64_t data_bytes[MAX_DISKS]; /* data area of each member */
	int ops;                        /* healthy random operations */
	int degraded_ops;               /* per degraded-write phase */
};

#define UNIFORM4(x) { (x), (x), (x), (x) }
#define UNIFORM5(x) { (x), (x), (x), (x), (x) }
#define UNIFORM7(x) { (x), (x), (x), (x), (x), (x), (x) }

/* ---- per-test state (each Criterion test runs in its own process) ----- */

struct op_record {
	uint64_t off;
	size_t len;
	const char *phase;
};

static struct {
	const struct model_case *c;
	char ctx[160];                  /* "raid5 chunk 64K seed 0x..." for messages */
	char dir[64];
	char paths[MAX_DISKS][128];
	bool dir_made;
	struct raid_array *arr;
	uint64_t size;                  /* array bytes */
	uint64_t unit;                  /* chunk, or 64 KiB for levels without */
	uint64_t row;                   /* volume bytes of one row of chunks */
	int nr_data;                    /* data chunks per row */
	uint64_t bounds[MAX_DISKS];     /* linear: volume offsets where members start */
	int nr_bounds;
	uint8_t *model;
	uint8_t *buf;
	size_t buflen;
	int32_t *stamp;                 /* per 512-byte sector: op that last wrote it */
	struct op_record *oplog;
	int nr_ops, cap_ops;
	uint64_t rng;
} g;

/* ---- random numbers (splitmix64) -------------------------------------- */

static uint64_t rnd64(void)
{
	uint64_t z = (g.rng += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Uniform in [0, n); n > 0. */
static uint64_t rnd(uint64_t n)
{
	return rnd64() % n;
}

static void rnd_fill(uint8_t *p, size_t len)
{
	size_t i = 0;
	for (; i + 8 <= len; i += 8) {
		uint64_t v = rnd64();
		memcpy(p + i, &v, 8);
	}
	if (i < len) {
		uint64_t v = rnd64();
		memcpy(p + i, &v, len - i);
	}
}

static uint64_t name_hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ull;
	for (; *s; s++)
		h = (h ^ (uint8_t)*s) * 0x100000001b3ull;
	return h;
}

static uint64_t min_u64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

/* ---- setup and teardown ----------------------------------------------- */

static void model_fini(void)
{
	if (g.arr) {
		array_stop(g.arr);
		g.arr = NULL;
	}
	if (g.c)
		for (int i = 0; i < g.c->disks; i++)
			if (g.paths[i][0])
				unlink(g.paths[i]);
	if (g.dir_made)
		rmdir(g.dir);
	g.dir_made = false;
	free(g.model);
	free(g.buf);
	free(g.stamp);
	free(g.oplog);
	g.model = g.buf = NULL;
	g.stamp = NULL;
	g.oplog = NULL;
}

TestSuite(engine_model, .fini = model_fini, .timeout = 600);

static const char *level_name(int32_t level)
{
	const struct raid_level_ops *ops = raid_level_find(level);
	return ops ? ops->name : "?";
}

/* Array size as md would compute it, from the case alone. */
static uint64_t expected_size(const struct model_case *c)
{
	uint64_t d = c->data_bytes[0], ch = c->chunk;
	uint64_t sum = 0;

	switch (c->level) {
	case -1:
		for (int i = 0; i < c->disks; i++)
			sum += c->data_bytes[i] / SECTOR_BYTES * SECTOR_BYTES;
		return sum;
	case 0:
		for (int i = 0; i < c->disks; i++)
			sum += c->data_bytes[i] / ch * ch;
		return sum;
	case 1:
		return d & ~(uint64_t)(64 * KiB - 1);
	case 10: {
		uint64_t near = c->layout & 0xff, far = (c->layout >> 8) & 0xff;
		return (d / ch) / far * (uint64_t)c->disks / near * ch;
	}
	case 5:
		return (d / ch) * ch * (uint64_t)(c->disks - 1);
	case 6:
		return (d / ch) * ch * (uint64_t)(c->disks - 2);
	}
	return 0;
}

static void model_setup(const struct model_case *c)
{
	struct array_create_opts co;
	const char *pathv[MAX_DISKS];
	char err[ERRLEN] = "";
	const char *env;
	int scale = 1;

	memset(&g, 0, sizeof(g));
	g.c = c;
	g.rng = 0x5eed0000d15c0001ull ^ name_hash(c->name);
	env = getenv("RAIDFUSE_MODEL_SEED");
	if (env && *env)
		g.rng = strtoull(env, NULL, 0);
	env = getenv("RAIDFUSE_MODEL_SCALE");
	if (env && atoi(env) > 0)
		scale = atoi(env);
	snprintf(g.ctx, sizeof(g.ctx), "%s (level %s, chunk %u KiB, %d members) seed 0x%016" PRIx64,
	         c->name, level_name(c->level), c->chunk / KiB, c->disks, g.rng);
	cr_log_info("%s", g.ctx);
	fprintf(stderr, "engine_model: %s (rerun with RAIDFUSE_MODEL_SEED=0x%016" PRIx64 ")\n",
	        g.ctx, g.rng);
	g.cap_ops = (2 * c->ops + 4 * c->degraded_ops) * scale + 64;

	snprintf(g.dir, sizeof(g.dir), "/tmp/raidfuse-model-XXXXXX");
	cr_assert_not_null(mkdtemp(g.dir), "%s: mkdtemp: %s", g.ctx, strerror(errno));
	g.dir_made = true;
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
	co.name = "model";
	bool uniform = true;
	for (int i = 1; i < c->disks; i++)
		uniform = uniform && c->data_bytes[i] == c->data_bytes[0];
	if (uniform) {
		co.member_file_bytes = c->data_bytes[0] + META_BYTES;
	} else {
		/* Members of different sizes: make the files, create uses them. */
		for (int i = 0; i < c->disks; i++) {
			FILE *f = fopen(g.paths[i], "w");
			cr_assert_not_null(f, "%s: cannot create %s: %s", g.ctx, g.paths[i],
			                   strerror(errno));
			cr_assert_eq(ftruncate(fileno(f), (off_t)(c->data_bytes[i] + META_BYTES)), 0,
			             "%s: ftruncate %s: %s", g.ctx, g.paths[i], strerror(errno));
			fclose(f);
		}
	}
	int rc = array_create(pathv, c->disks, &co, err, sizeof(err));
	cr_assert_eq(rc, 0, "%s: array_create: rc %d: %s", g.ctx, rc, err);

	/* Shape used to aim operations at interesting places. */
	g.unit = c->chunk ? c->chunk : 64 * KiB;
	switch (c->level) {
	case 0:
		g.nr_data = c->disks;
		break;
	case 5:
		g.nr_data = c->disks - 1;
		break;
	case 6:
		g.nr_data = c->disks - 2;
		break;
	case 10:
		g.nr_data = c->disks / ((c->layout & 0xff) ? (int)(c->layout & 0xff) : 1);
		break;
	default:
		g.nr_data = 4; /* linear, raid1: four 64 KiB lock regions */
		break;
	}
	g.row = g.unit * (uint64_t)g.nr_data;
	if (c->level == -1) {
		uint64_t start = 0;
		for (int i = 0; i < c->disks; i++) {
			g.bounds[g.nr_bounds++] = start;
			start += c->data_bytes[i] / SECTOR_BYTES * SECTOR_BYTES;
		}
	}
	g.size = expected_size(c);
	g.buflen = (size_t)(2 * g.row + 4 * g.unit + 64 * KiB);
	if (g.buflen < 2 * MiB)
		g.buflen = 2 * MiB;
	g.model = calloc(1, (size_t)g.size);
	/* 64 bytes of slack: writes start at a random 16-byte step into it,
	 * so whole rows come from buffers ISA-L can read in place (the engine
	 * then skips its copy) and from buffers it cannot. */
	if (posix_memalign((void **)&g.buf, 64, g.buflen + 64) != 0)
		g.buf = NULL;
	g.stamp = malloc((size_t)(g.size / SECTOR_BYTES + 1) * sizeof(*g.stamp));
	g.oplog = calloc((size_t)g.cap_ops, sizeof(*g.oplog));
	cr_assert(g.model && g.buf && g.stamp && g.oplog, "%s: out of memory", g.ctx);
	for (uint64_t s = 0; s <= g.size / SECTOR_BYTES; s++)
		g.stamp[s] = -1;
}

/* ---- assembly --------------------------------------------------------- */

static int popcount(unsigned x)
{
	return __builtin_popcount(x);
}

/* Assemble every member except those in leave_out, in shuffled order. */
static int assemble(unsigned leave_out, bool read_only, bool run_degraded, struct raid_array **out,
                    char *err, size_t errlen)
{
	const char *pathv[MAX_DISKS];
	struct array_assemble_opts opts;
	int n = 0;

	for (int i = 0; i < g.c->disks; i++)
		if (!(leave_out & (1u << i)))
			pathv[n++] = g.paths[i];
	for (int i = n - 1; i > 0; i--) {
		int j = (int)rnd((uint64_t)i + 1);
		const char *t = pathv[i];
		pathv[i] = pathv[j];
		pathv[j] = t;
	}
	memset(&opts, 0, sizeof(opts));
	opts.read_only = read_only;
	opts.run_degraded = run_degraded;
	err[0] = '\0';
	return array_assemble(out, pathv, n, &opts, err, errlen);
}

static void mask_text(unsigned mask, char *out, size_t outlen)
{
	size_t used = 0;
	out[0] = '\0';
	for (int i = 0; i < g.c->disks && used < outlen; i++)
		if (mask & (1u << i)) {
			int n = snprintf(out + used, outlen - used, "%s%d", used ? "," : "", i);
			if (n > 0)
				used += (size_t)n;
		}
	if (!used)
		snprintf(out, outlen, "none");
}

/* Assemble (and start unless read-only) with leave_out missing; assert it
 * works and the roles served are exactly the others. */
static void open_array(unsigned leave_out, bool read_only, const char *what)
{
	char err[ERRLEN], missing[64];
	int rc;

	mask_text(leave_out, missing, sizeof(missing));
	cr_assert_null(g.arr, "%s: %s: an array is still open", g.ctx, what);
	rc = assemble(leave_out, read_only, leave_out != 0, &g.arr, err, sizeof(err));
	cr_assert_eq(rc, 0, "%s: %s: array_assemble without role(s) %s (read_only %d): rc %d: %s",
	             g.ctx, what, missing, read_only, rc, err);
	cr_assert_eq(g.arr->geo.array_bytes, g.size,
	             "%s: %s: array size %" PRIu64 ", expected %" PRIu64, g.ctx, what,
	             g.arr->geo.array_bytes, g.size);
	for (int r = 0; r < g.c->disks; r++)
		cr_assert_eq(g.arr->slot[r] == NULL, ((leave_out >> r) & 1) != 0,
		             "%s: %s: role %d is %s, expected %s", g.ctx, what, r,
		             g.arr->slot[r] ? "served" : "missing",
		             (leave_out >> r) & 1 ? "missing" : "served");
	cr_assert_eq(array_missing_count(g.arr), popcount(leave_out),
	             "%s: %s: array_missing_count %d, expected %d", g.ctx, what,
	             array_missing_count(g.arr), popcount(leave_out));
	cr_assert_not(g.arr->was_dirty, "%s: %s: array assembled as dirty after a clean stop",
	              g.ctx, what);
	if (read_only) {
		uint8_t b = 0;
		rc = array_write(g.arr, &b, 1, 0);
		cr_assert_eq(rc, -EROFS, "%s: %s: write to a read-only array: rc %d, expected -EROFS",
		             g.ctx, what, rc);
	} else {
		rc = array_start(g.arr, err, sizeof(err));
		cr_assert_eq(rc, 0, "%s: %s: array_start without role(s) %s: rc %d: %s", g.ctx, what,
		             missing, rc, err);
	}
}

static void close_array(const char *what)
{
	int rc = array_stop(g.arr);
	g.arr = NULL;
	cr_assert_eq(rc, 0, "%s: %s: array_stop: rc %d", g.ctx, what, rc);
}

/* ---- checking --------------------------------------------------------- */

/* Describe the first byte where buf (read at off) differs from the model,
 * and fail. */
static void report_mismatch(const char *what, int op, uint64_t off, size_t len)
{
	size_t i = 0, ndiff = 0;
	struct raid_extent ext;
	int32_t writer;
	char writer_text[200] = "never written (zeros expected)";

	while (i < len && g.buf[i] == g.model[off + i])
		i++;
	for (size_t j = i; j < len; j++)
		ndiff += g.buf[j] != g.model[off + j];
	uint64_t at = off + i;
	g.arr->ops->map(&g.arr->geo, g.arr->level_priv, at, &ext);
	writer = g.stamp[at / SECTOR_BYTES];
	if (writer >= 0) {
		const struct op_record *w = &g.oplog[writer];
		snprintf(writer_text, sizeof(writer_text),
		         "sector last written by op #%d (%s: off %" PRIu64 " len %zu)", writer,
		         w->phase, w->off, w->len);
	}
	cr_assert_fail("%s: %s op #%d: read off %" PRIu64 " len %zu differs from the model in %zu "
	               "bytes; first at volume byte %" PRIu64 " (unit %" PRIu64 " +%" PRIu64
	               ", row %" PRIu64 ", role %d member off %" PRIu64 "%s): got 0x%02x, want "
	               "0x%02x; %s",
	               g.ctx, what, op, off, len, ndiff, at, at / g.unit, at % g.unit, at / g.row,
	               ext.copies[0].role, ext.copies[0].member_off_bytes,
	               g.arr->slot[ext.copies[0].role] ? "" : ", missing", g.buf[i],
	               g.model[at], writer_text);
}

static void check_read(const char *what, int op, uint64_t off, size_t len)
{
	int rc = array_read(g.arr, g.buf, len, off);
	cr_assert_eq(rc, 0, "%s: %s op #%d: array_read off %" PRIu64 " len %zu: rc %d", g.ctx, what,
	             op, off, len, rc);
	if (memcmp(g.buf, g.model + off, len) != 0)
		report_mismatch(what, op, off, len);
}

/* Read the whole volume in pieces that do not line up with chunks. */
static void verify_volume(const char *what)
{
	size_t piece = g.buflen - 4096 - 512;
	for (uint64_t off = 0; off < g.size;) {
		size_t n = (size_t)min_u64(piece, g.size - off);
		check_read(what, -1, off, n);
		off += n;
	}
}

/* ---- random operations ------------------------------------------------ */

/* A random multiple of step in (0, size], or a linear member boundary. */
static uint64_t pick_boundary(uint64_t step)
{
	if (g.nr_bounds > 1 && rnd(2))
		return g.bounds[1 + rnd((uint64_t)g.nr_bounds - 1)];
	uint64_t n = g.size / step;
	if (n == 0)
		return g.size;
	return (1 + rnd(n)) * step;
}

static uint64_t before(uint64_t b, uint64_t back)
{
	return back > b ? 0 : b - back;
}

static void pick_range(uint64_t *off_out, size_t *len_out)
{
	uint64_t S = g.size, C = g.unit, R = g.row;
	uint64_t off, len, b;
	uint64_t small = min_u64(C, 8 * KiB);
	unsigned cls = (unsigned)rnd(100);

	if (cls < 12) {                 /* a few bytes anywhere */
		off = rnd(S);
		len = 1 + rnd(32);
	} else if (cls < 24) {          /* up to a chunk anywhere */
		off = rnd(S);
		len = 1 + rnd(C);
	} else if (cls < 38) {          /* across a chunk (or member) boundary */
		b = pick_boundary(C);
		off = before(b, 1 + rnd(small));
		len = b - off + 1 + rnd(small);
	} else if (cls < 48) {          /* small 4 KiB-aligned pieces */
		off = rnd(S / 4096) * 4096;
		len = 4096 * (1 + rnd(4));
	} else if (cls < 58) {          /* exactly one or two full rows */
		off = rnd(S / R) * R;
		len = R * (1 + rnd(2));
	} else if (cls < 66) {          /* across a row boundary */
		b = pick_boundary(R);
		off = before(b, 1 + rnd(C));
		len = b - off + 1 + rnd(C);
	} else if (cls < 74) {          /* whole chunks, chunk-aligned */
		off = rnd(S / C) * C;
		len = C * (1 + rnd((uint64_t)g.nr_data));
	} else if (cls < 80) {          /* partial 4 KiB columns around a column edge */
		off = rnd(S / 4096) * 4096 + rnd(4096);
		len = 1 + rnd(3 * 4096);
	} else if (cls < 92) {          /* anything up to two rows */
		off = rnd(S);
		len = 1 + rnd(2 * R);
	} else if (cls < 96) {          /* the tail of the volume */
		off = before(S, 1 + rnd(min_u64(S, 2 * C)));
		len = rnd(2) ? S - off : 1 + rnd(S - off);
	} else {                        /* the very start */
		off = rnd(3) ? 0 : rnd(512);
		len = 1 + rnd(2 * R);
	}
	if (off >= S)
		off = rnd(S);
	if (len > S - off)
		len = S - off;
	if (len > g.buflen)
		len = g.buflen;
	if (len == 0)
		len = 1;
	*off_out = off;
	*len_out = (size_t)len;
}

static int log_op(const char *phase, uint64_t off, size_t len)
{
	cr_assert_lt(g.nr_ops, g.cap_ops, "%s: op log full", g.ctx);
	g.oplog[g.nr_ops].off = off;
	g.oplog[g.nr_ops].len = len;
	g.oplog[g.nr_ops].phase = phase;
	return g.nr_ops++;
}

static void random_ops(const char *phase, int count)
{
	const char *env = getenv("RAIDFUSE_MODEL_SCALE");
	if (env && atoi(env) > 0)
		count *= atoi(env);

	for (int i = 0; i < count; i++) {
		uint64_t off;
		size_t len;
		pick_range(&off, &len);
		int op = log_op(phase, off, len);
		unsigned what = (unsigned)rnd(100);
		if (what < 6) {
			/* A discard: every level offers it. */
			int rc = array_zero(g.arr, len, off);
			cr_assert_eq(rc, 0,
			             "%s: %s op #%d (#%d of the phase): array_zero off %" PRIu64
			             " len %zu: rc %d",
			             g.ctx, phase, op, i, off, len, rc);
			memset(g.model + off, 0, len);
			for (uint64_t s = off / SECTOR_BYTES; s <= (off + len - 1) / SECTOR_BYTES; s++)
				g.stamp[s] = op;
		} else if (what < 60) {
			uint8_t *src = g.buf + 16 * rnd(4);
			rnd_fill(src, len);
			int rc = array_write(g.arr, src, len, off);
			cr_assert_eq(rc, 0,
			             "%s: %s op #%d (#%d of the phase): array_write off %" PRIu64
			             " len %zu: rc %d",
			             g.ctx, phase, op, i, off, len, rc);
			memcpy(g.model + off, src, len);
			for (uint64_t s = off / SECTOR_BYTES; s <= (off + len - 1) / SECTOR_BYTES; s++)
				g.stamp[s] = op;
		} else {
			check_read(phase, op, off, len);
		}
		if (rnd(200) == 0) {
			int rc = array_flush(g.arr);
			cr_assert_eq(rc, 0, "%s: %s after op #%d: array_flush: rc %d", g.ctx, phase,
			             op, rc);
		}
	}
}

/* Out-of-range and empty requests. */
static void edge_checks(void)
{
	uint8_t b[2] = { 0, 0 };
	int rc;

	rc = array_write(g.arr, b, 1, g.size);
	cr_assert_eq(rc, -ENOSPC, "%s: write 1 byte at the end: rc %d, expected -ENOSPC", g.ctx,
	             rc);
	rc = array_write(g.arr, b, 2, g.size - 1);
	cr_assert_eq(rc, -ENOSPC, "%s: write 2 bytes over the end: rc %d, expected -ENOSPC", g.ctx,
	             rc);
	rc = array_read(g.arr, b, 2, g.size - 1);
	cr_assert_eq(rc, -EINVAL, "%s: read 2 bytes over the end: rc %d, expected -EINVAL", g.ctx,
	             rc);
	rc = array_write(g.arr, b, 0, g.size);
	cr_assert_eq(rc, 0, "%s: empty write at the end: rc %d", g.ctx, rc);
	rc = array_read(g.arr, b, 0, g.size);
	cr_assert_eq(rc, 0, "%s: empty read at the end: rc %d", g.ctx, rc);
	check_read("edge: last byte", -1, g.size - 1, 1);
}

/* ---- leaving members out ---------------------------------------------- */

/* Whether the array can serve every byte with the roles in missing gone,
 * from the level's definition (not the engine's can_run). */
static bool expect_runnable(unsigned missing)
{
	const struct model_case *c = g.c;
	int n = popcount(missing);

	if (n == 0)
		return true;
	switch (c->level) {
	case 1:
		return n < c->disks;
	case 5:
		return n <= 1;
	case 6:
		return n <= 2;
	case 10: {
		/* Layout version 0 (one far set): chunk k's near copies start at
		 * member (k * near) % disks; far copy f is shifted f * near. */
		int near = (int)(c->layout & 0xff), far = (int)((c->layout >> 8) & 0xff);
		for (int k = 0; k < c->disks * near; k++) {
			bool alive = false;
			for (int j = 0; j < near; j++)
				for (int f = 0; f < far; f++) {
					int d = (k * near + j + f * near) % c->disks;
					alive = alive || !(missing & (1u << d));
				}
			if (!alive)
				return false;
		}
		return true;
	}
	default:
		return false;
	}
}

/* Every subset of up to max_out members left out: read-only assembly must
 * work exactly when the level allows it, and then serve the whole volume. */
static void leave_out_checks(int max_out)
{
	char err[ERRLEN], what[96], missing[64];
	unsigned all = (1u << g.c->disks) - 1;
	int read_checks = 0;

	for (int k = 1; k <= max_out; k++)
		for (unsigned mask = 1; mask < all; mask++) {
			if (popcount(mask) != k)
				continue;
			mask_text(mask, missing, sizeof(missing));
			snprintf(what, sizeof(what), "read-only without role(s) %s", missing);
			if (!expect_runnable(mask)) {
				struct raid_array *a = NULL;
				int rc = assemble(mask, true, true, &a, err, sizeof(err));
				if (a)
					array_stop(a);
				cr_assert_eq(rc, -ENODEV,
				             "%s: %s: assembly should be refused (data lost) but "
				             "returned %d: %s",
				             g.ctx, what, rc, err);
				continue;
			}
			if (read_checks == 0) {
				/* Degraded needs --run. */
				struct raid_array *a = NULL;
				int rc = assemble(mask, true, false, &a, err, sizeof(err));
				if (a)
					array_stop(a);
				cr_assert_eq(rc, -ENODEV,
				             "%s: %s without run_degraded: rc %d, expected -ENODEV (%s)",
				             g.ctx, what, rc, err);
			}
			open_array(mask, true, what);
			verify_volume(what);
			close_array(what);
			read_checks++;
		}
	cr_assert_gt(read_checks, 0, "%s: no degraded read checks ran", g.ctx);
}

/* md's check of the degraded array, over the redundancy it has left:
 * the degraded writes must have kept every remaining parity and copy in
 * step (mismatch 0). With none left (no role could be lost too, and no
 * extent has two copies left) it is refused. */
static void degraded_check(unsigned leave_out, const char *what)
{
	bool missing[RAID_MAX_MEMBERS] = { false };
	bool redundancy_left = false;

	for (int r = 0; r < g.c->disks; r++)
		missing[r] = (leave_out >> r) & 1;
	for (int r = 0; r < g.c->disks && !redundancy_left; r++) {
		if (missing[r])
			continue;
		missing[r] = true;
		redundancy_left = g.arr->ops->can_run(&g.arr->geo, missing);
		missing[r] = false;
	}
	/* Copies: every extent of the volume, for one with two left (a
	 * RAID10 of three less one keeps a third of its chunks mirrored). */
	for (uint64_t off = 0; g.arr->ops->max_parity == 0 && !redundancy_left &&
	                       off < g.arr->geo.array_bytes;) {
		struct raid_extent ext;
		int present = 0;
		g.arr->ops->map(&g.arr->geo, g.arr->level_priv, off, &ext);
		for (int i = 0; i < ext.nr_copies; i++)
			present += !missing[ext.copies[i].role];
		redundancy_left = present >= 2;
		off += ext.len_bytes;
	}
	uint64_t mismatch_sectors = 1;
	int rc = array_check(g.arr, &mismatch_sectors);
	if (!redundancy_left) {
		cr_assert_eq(rc, -ENODEV, "%s: %s: check with no redundancy left: rc %d", g.ctx, what,
		             rc);
		return;
	}
	cr_assert_eq(rc, 0, "%s: %s: check over the redundancy left: rc %d", g.ctx, what, rc);
	cr_assert_eq(mismatch_sectors, 0, "%s: %s: check over the redundancy left: %" PRIu64
	             " sectors mismatch", g.ctx, what, mismatch_sectors);
}

/* Write with leave_out missing, then read it back degraded, then offer
 * every member again: the ones left out are stale and must stay out. */
static void degraded_write_phase(unsigned leave_out, const char *phase)
{
	char what[128], missing[64];

	mask_text(leave_out, missing, sizeof(missing));
	snprintf(what, sizeof(what), "%s (without role(s) %s)", phase, missing);
	fprintf(stderr, "engine_model: %s: %s\n", g.ctx, what);
	open_array(leave_out, false, what);
	random_ops(phase, g.c->degraded_ops);
	verify_volume(what);
	close_array(what);

	snprintf(what, sizeof(what), "%s, reassembled read-only without role(s) %s", phase,
	         missing);
	open_array(leave_out, true, what);
	verify_volume(what);
	degraded_check(leave_out, what);
	close_array(what);

	/* All members offered: the stale ones are recorded faulty. */
	snprintf(what, sizeof(what), "%s, all members offered (role(s) %s stale)", phase, missing);
	char err[ERRLEN];
	int rc = assemble(0, true, true, &g.arr, err, sizeof(err));
	cr_assert_eq(rc, 0, "%s: %s: array_assemble: rc %d: %s", g.ctx, what, rc, err);
	for (int r = 0; r < g.c->disks; r++)
		cr_assert_eq(g.arr->slot[r] == NULL, ((leave_out >> r) & 1) != 0,
		             "%s: %s: role %d is %s", g.ctx, what, r,
		             g.arr->slot[r] ? "served (a stale member was taken back)" : "missing");
	verify_volume(what);
	close_array(what);
}

/* ---- the test --------------------------------------------------------- */

static void run_case(const struct model_case *c)
{
	model_setup(c);

	/* 1-2: healthy random I/O. */
	open_array(0, false, "healthy");
	cr_assert_eq(g.arr->geo.level, c->level, "%s: assembled level %d", g.ctx,
	             g.arr->geo.level);
	verify_volume("fresh array (all zeros)");
	edge_checks();
	random_ops("healthy", c->ops);
	verify_volume("healthy, before stop");
	close_array("healthy");

	/* 3: reassembled, every byte as the model says. */
	open_array(0, false, "reassembled");
	verify_volume("reassembled");
	random_ops("reassembled", c->ops / 10);
	close_array("reassembled");
	open_array(0, true, "reassembled read-only");
	verify_volume("reassembled read-only");
	close_array("reassembled read-only");

	/* 4: members left out. */
	int max_out;
	switch (c->level) {
	case 1:
	case 10:
		max_out = c->disks - 1;
		break;
	case 5:
		max_out = 2;
		break;
	case 6:
		max_out = 3;
		break;
	default:
		max_out = 1; /* only refusals */
		break;
	}
	if (c->level == -1 || c->level == 0) {
		char err[ERRLEN];
		for (int r = 0; r < c->disks; r++) {
			struct raid_array *a = NULL;
			int rc = assemble(1u << r, true, true, &a, err, sizeof(err));
			if (a)
				array_stop(a);
			cr_assert_eq(rc, -ENODEV, "%s: without role %d: rc %d, expected -ENODEV (%s)",
			             g.ctx, r, rc, err);
		}
		return;
	}
	leave_out_checks(max_out);

	/* 5: degraded writes. */
	unsigned first = 1u << rnd((uint64_t)c->disks);
	degraded_write_phase(first, "degraded");
	if (c->level == 6) {
		unsigned second;
		do
			second = 1u << rnd((uint64_t)c->disks);
		while (second == first);
		degraded_write_phase(first | second, "doubly degraded");
	}
}

/* ---- cases ------------------------------------------------------------ */

#define CASE(ident, ...)                                             \
	Test(engine_model, ident)                                    \
	{                                                            \
		static const struct model_case c = { __VA_ARGS__ };  \
		run_case(&c);                                        \
	}

/* Small chunks: members of 4 MiB; 1 MiB chunks: 16 MiB (several rows). */
#define SMALL (4ull * MiB)
#define LARGE (16ull * MiB)

/* linear: three members of different, sector-granular sizes. */
CASE(linear, .name = "linear", .level = -1, .disks = 3,
     .data_bytes = { 3 * MiB + 5 * 512, 1 * MiB + 7 * 512, 2 * MiB + 68 * KiB }, .ops = 4000)

CASE(raid0_chunk4k, .name = "raid0_chunk4k", .level = 0, .chunk = 4 * KiB, .disks = 4,
     .data_bytes = UNIFORM4(SMALL), .ops = 4000)
CASE(raid0_chunk64k, .name = "raid0_chunk64k", .level = 0, .chunk = 64 * KiB, .disks = 4,
     .data_bytes = UNIFORM4(SMALL), .ops = 4000)
CASE(raid0_chunk1m, .name = "raid0_chunk1m", .level = 0, .chunk = 1 * MiB, .disks = 4,
     .data_bytes = UNIFORM4(LARGE), .ops = 600)
/* Members of different sizes: md's strip zones. */
CASE(raid0_unequal_chunk64k, .name = "raid0_unequal_chunk64k", .level = 0, .chunk = 64 * KiB,
     .disks = 4, .data_bytes = { SMALL, SMALL / 2 + 64 * KiB, 3 * SMALL / 2 + 4 * KiB, SMALL },
     .ops = 4000)

CASE(raid1, .name = "raid1", .level = 1, .disks = 4, .data_bytes = UNIFORM4(SMALL), .ops = 4000,
     .degraded_ops = 500)

CASE(raid10_near2_chunk4k, .name = "raid10_near2_chunk4k", .level = 10, .layout = 0x102,
     .layout_set = true, .chunk = 4 * KiB, .disks = 4, .data_bytes = UNIFORM4(SMALL),
     .ops = 4000, .degraded_ops = 500)
CASE(raid10_near2_chunk64k, .name = "raid10_near2_chunk64k", .level = 10, .layout = 0x102,
     .layout_set = true, .chunk = 64 * KiB, .disks = 4, .data_bytes = UNIFORM4(SMALL),
     .ops = 4000, .degraded_ops = 500)
CASE(raid10_near2_chunk1m, .name = "raid10_near2_chunk1m", .level = 10, .layout = 0x102,
     .layout_set = true, .chunk = 1 * MiB, .disks = 4, .data_bytes = UNIFORM4(LARGE),
     .ops = 600, .degraded_ops = 150)
CASE(raid10_far2_chunk64k, .name = "raid10_far2_chunk64k", .level = 10, .layout = 0x201,
     .layout_set = true, .chunk = 64 * KiB, .disks = 4, .data_bytes = UNIFORM4(SMALL),
     .ops = 4000, .degraded_ops = 500)
/* Near copies that wrap to the next row (odd member count), and md's
 * "offset" layout (far copies one chunk further down). */
CASE(raid10_near2_3disks_chunk64k, .name = "raid10_near2_3disks_chunk64k", .level = 10,
     .layout = 0x102, .layout_set = true, .chunk = 64 * KiB, .disks = 3,
     .data_bytes = { SMALL, SMALL, SMALL }, .ops = 4000, .degraded_ops = 500)
CASE(raid10_offset2_chunk64k, .name = "raid10_offset2_chunk64k", .level = 10,
     .layout = 0x10201, .layout_set = true, .chunk = 64 * KiB, .disks = 4,
     .data_bytes = UNIFORM4(SMALL), .ops = 4000, .degraded_ops = 500)

CASE(raid5_chunk4k, .name = "raid5_chunk4k", .level = 5, .chunk = 4 * KiB, .disks = 4,
     .data_bytes = UNIFORM4(SMALL), .ops = 4000, .degraded_ops = 500)
CASE(raid5_chunk64k, .name = "raid5_chunk64k", .level = 5, .chunk = 64 * KiB, .disks = 4,
     .data_bytes = UNIFORM4(SMALL), .ops = 4000, .degraded_ops = 500)
CASE(raid5_chunk1m, .name = "raid5_chunk1m", .level = 5, .chunk = 1 * MiB, .disks = 4,
     .data_bytes = UNIFORM4(LARGE), .ops = 600, .degraded_ops = 150)

CASE(raid6_chunk4k, .name = "raid6_chunk4k", .level = 6, .chunk = 4 * KiB, .disks = 5,
     .data_bytes = UNIFORM5(SMALL), .ops = 4000, .degraded_ops = 500)
CASE(raid6_chunk64k, .name = "raid6_chunk64k", .level = 6, .chunk = 64 * KiB, .disks = 5,
     .data_bytes = UNIFORM5(SMALL), .ops = 4000, .degraded_ops = 500)
/* Five members give three data chunks, where reconstruct-write never
 * reads more than read-modify-write: seven make RAID6 take the
 * read-modify-write path (old data, P and Q updated in place) too. */
CASE(raid6_7disks_chunk4k, .name = "raid6_7disks_chunk4k", .level = 6, .chunk = 4 * KiB,
     .disks = 7, .data_bytes = UNIFORM7(SMALL / 2), .ops = 4000, .degraded_ops = 500)
CASE(raid6_7disks_chunk64k, .name = "raid6_7disks_chunk64k", .level = 6, .chunk = 64 * KiB,
     .disks = 7, .data_bytes = UNIFORM7(SMALL), .ops = 4000, .degraded_ops = 500)
CASE(raid6_chunk1m, .name = "raid6_chunk1m", .level = 6, .chunk = 1 * MiB, .disks = 5,
     .data_bytes = UNIFORM5(LARGE), .ops = 600, .degraded_ops = 150)
