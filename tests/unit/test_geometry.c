/* test_geometry.c - every level's geometry against hand-computed tables.
 *
 * The expected values below are literals worked out on paper from the
 * Linux md driver (drivers/md): raid5.c raid5_compute_sector (levels 5 and
 * 6), raid6_d0 / raid6_idx_to_slot (Q syndrome order), raid0.c
 * create_strip_zones / map_sector / raid0_make_request, raid10.c
 * __raid10_find_phys / calc_sectors / setup_geo, linear.c linear_conf.
 * Nothing here re-derives them with md's formulas; the tests only go
 * through raid_level_find() and the ops table.
 *
 * Notation for parity rows: one character per member role, in role order:
 * 'P', 'Q', or the digit k of the data chunk it holds (volume order inside
 * the row). "12P0" means D0 on role 3, D1 on role 0, D2 on role 1, P on
 * role 2. The slot string gives, for data chunk k, its Q syndrome slot.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <criterion/criterion.h>

#include "level.h"
#include "md_super.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define KIB 1024ull
#define MIB (1024ull * 1024ull)
#define C64 (64ull * KIB) /* the chunk used throughout */

typedef unsigned long long ull;

/* ---- helpers ------------------------------------------------------------ */

static const struct raid_level_ops *ops_for(int32_t level)
{
	const struct raid_level_ops *ops = raid_level_find(level);

	cr_assert_not_null(ops, "raid_level_find(%d) is NULL", (int)level);
	cr_assert_eq(ops->level, level, "raid_level_find(%d) gave level %d", (int)level,
	             (int)ops->level);
	return ops;
}

/* A geometry with every member of dev_bytes. */
static struct raid_geometry uniform_geo(int32_t level, uint32_t layout, uint32_t chunk,
                                        int disks, uint64_t dev_bytes)
{
	struct raid_geometry geo;

	memset(&geo, 0, sizeof(geo));
	geo.level = level;
	geo.layout = layout;
	geo.chunk_bytes = chunk;
	geo.raid_disks = disks;
	geo.dev_bytes = dev_bytes;
	for (int i = 0; i < disks; i++)
		geo.member_bytes[i] = dev_bytes;
	return geo;
}

static void *init_ok(const struct raid_level_ops *ops, struct raid_geometry *geo)
{
	char err[256] = "";
	void *priv = NULL;
	int rc = ops->geometry_init(geo, &priv, err, sizeof(err));

	cr_assert_eq(rc, 0, "%s geometry_init(layout 0x%x, %d disks) failed with %d: %s",
	             ops->name, geo->layout, geo->raid_disks, rc, err);
	return priv;
}

/* geometry_init must refuse with -EINVAL, say why, and leave nothing to free. */
static void init_refused(const struct raid_level_ops *ops, struct raid_geometry *geo,
                         const char *what)
{
	char err[256] = "";
	void *priv = (void *)&priv;
	int rc = ops->geometry_init(geo, &priv, err, sizeof(err));

	if (rc == 0)
		ops->geometry_free(priv);
	cr_assert_eq(rc, -EINVAL, "%s (%s): geometry_init returned %d, expected -EINVAL",
	             ops->name, what, rc);
	cr_assert(err[0] != '\0', "%s (%s): refusal without a message", ops->name, what);
	cr_assert_null(priv, "%s (%s): priv left set after a refusal", ops->name, what);
}

static void expect_one_copy(const struct raid_level_ops *ops, const struct raid_geometry *geo,
                            const void *priv, uint64_t off, int role, uint64_t member_off,
                            uint64_t len)
{
	struct raid_extent ext;

	memset(&ext, 0xa5, sizeof(ext));
	ops->map(geo, priv, off, &ext);
	cr_assert_eq(ext.nr_copies, 1, "%s off %llu: %d copies, expected 1", ops->name, (ull)off,
	             ext.nr_copies);
	cr_assert_eq(ext.copies[0].role, role, "%s layout %u off %llu: role %d, expected %d",
	             ops->name, geo->layout, (ull)off, ext.copies[0].role, role);
	cr_assert_eq(ext.copies[0].member_off_bytes, member_off,
	             "%s layout %u off %llu: member offset %llu, expected %llu", ops->name,
	             geo->layout, (ull)off, (ull)ext.copies[0].member_off_bytes, (ull)member_off);
	cr_assert_eq(ext.len_bytes, len, "%s layout %u off %llu: len %llu, expected %llu", ops->name,
	             geo->layout, (ull)off, (ull)ext.len_bytes, (ull)len);
}

/* missing[] from a string of roles, e.g. "02" = roles 0 and 2 missing. */
static bool can_run_without(const struct raid_level_ops *ops, const struct raid_geometry *geo,
                            const char *roles)
{
	bool missing[RAID_MAX_MEMBERS] = { false };

	for (const char *c = roles; *c; c++)
		missing[*c - '0'] = true;
	return ops->can_run(geo, missing);
}

/* Check one parity row against its role string and (optional) slot string. */
static void check_row(const struct raid_level_ops *ops, const struct raid_geometry *geo,
                      uint64_t row, const char *roles, const char *slots)
{
	int exp_p = -1, exp_q = -1, exp_data[RAID_MAX_MEMBERS], nr_data = 0;
	struct row_layout lay;

	cr_assert_eq((int)strlen(roles), geo->raid_disks, "bad table entry \"%s\"", roles);
	for (int i = 0; roles[i]; i++) {
		if (roles[i] == 'P') {
			exp_p = i;
		} else if (roles[i] == 'Q') {
			exp_q = i;
		} else {
			exp_data[roles[i] - '0'] = i;
			nr_data++;
		}
	}

	memset(&lay, 0xa5, sizeof(lay));
	ops->row_layout(geo, row, &lay);
	cr_assert_eq(lay.nr_data, nr_data, "%s layout %u, %d disks, row %llu: nr_data %d, want %d",
	             ops->name, geo->layout, geo->raid_disks, (ull)row, lay.nr_data, nr_data);
	cr_assert_eq(lay.p_role, exp_p, "%s layout %u, %d disks, row %llu (%s): P on %d, want %d",
	             ops->name, geo->layout, geo->raid_disks, (ull)row, roles, lay.p_role, exp_p);
	cr_assert_eq(lay.q_role, exp_q, "%s layout %u, %d disks, row %llu (%s): Q on %d, want %d",
	             ops->name, geo->layout, geo->raid_disks, (ull)row, roles, lay.q_role, exp_q);
	for (int k = 0; k < nr_data; k++)
		cr_assert_eq(lay.data_role[k], exp_data[k],
		             "%s layout %u, %d disks, row %llu (%s): D%d on %d, want %d", ops->name,
		             geo->layout, geo->raid_disks, (ull)row, roles, k, lay.data_role[k],
		             exp_data[k]);
	if (slots) {
		cr_assert_eq((int)strlen(slots), nr_data, "bad slot entry \"%s\"", slots);
		for (int k = 0; k < nr_data; k++)
			cr_assert_eq(lay.data_qslot[k], slots[k] - '0',
			             "%s layout %u, %d disks, row %llu (%s/%s): D%d in Q slot %d, "
			             "want %d",
			             ops->name, geo->layout, geo->raid_disks, (ull)row, roles, slots,
			             k, lay.data_qslot[k], slots[k] - '0');
	}
	cr_assert_eq(lay.member_off_bytes, row * geo->chunk_bytes,
	             "%s row %llu: member offset %llu", ops->name, (ull)row,
	             (ull)lay.member_off_bytes);
}

/* ---- level table -------------------------------------------------------- */

Test(levels, find_each_level)
{
	static const struct {
		int32_t level;
		const char *name;
		int max_parity;
	} want[] = {
		{ -1, "linear", 0 }, { 0, "raid0", 0 }, { 1, "raid1", 0 },
		{ 10, "raid10", 0 }, { 5, "raid5", 1 }, { 6, "raid6", 2 },
	};

	for (size_t i = 0; i < ARRAY_SIZE(want); i++) {
		const struct raid_level_ops *ops = ops_for(want[i].level);
		cr_assert_str_eq(ops->name, want[i].name);
		cr_assert_eq(ops->max_parity, want[i].max_parity, "%s max_parity", ops->name);
		cr_assert_eq(ops->row_layout != NULL, want[i].max_parity > 0, "%s row_layout",
		             ops->name);
	}
	cr_assert_null(raid_level_find(4), "raid4 is not supported");
	cr_assert_null(raid_level_find(7));
	cr_assert_null(raid_level_find(-5));
}

/* Whether every extent of the first old_dev member bytes' volume maps to
 * the same places once each member gives new_dev. */
static bool grows_in_place(const struct raid_level_ops *ops, uint32_t layout, int disks,
                           uint64_t old_dev, uint64_t new_dev)
{
	struct raid_geometry small = uniform_geo(ops->level, layout, C64, disks, old_dev);
	struct raid_geometry large = uniform_geo(ops->level, layout, C64, disks, new_dev);
	void *small_priv = init_ok(ops, &small), *large_priv = init_ok(ops, &large);
	bool same = large.array_bytes > small.array_bytes;

	for (uint64_t off = 0; same && off < small.array_bytes; off += 4 * KIB) {
		struct raid_extent a, b;
		ops->map(&small, small_priv, off, &a);
		ops->map(&large, large_priv, off, &b);
		same = a.nr_copies == b.nr_copies;
		for (int c = 0; same && c < a.nr_copies; c++)
			same = a.copies[c].role == b.copies[c].role &&
			       a.copies[c].member_off_bytes == b.copies[c].member_off_bytes;
	}
	ops->geometry_free(small_priv);
	ops->geometry_free(large_priv);
	return same;
}

/* grow --size relies on can_resize: a level that says yes must keep every
 * byte where it was (checked by mapping, not taken on trust), and the
 * far layouts it refuses do move. */
Test(levels, can_resize_keeps_every_byte_in_place)
{
	static const struct {
		int32_t level;
		uint32_t layout;
		int disks;
		bool resizable;
	} cases[] = {
		{ 1, 0, 2, true },        { 5, 2, 4, true },       { 5, 0, 3, true },
		{ 6, 2, 5, true },        { 10, 0x102, 4, true },  { 10, 0x102, 3, true },
		{ 10, 0x10201, 4, true }, { 10, 0x201, 4, false }, { 10, 0x202, 4, false },
		{ 10, 0x201, 3, false },  { 0, 0, 3, false },      { -1, 0, 3, false },
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		const struct raid_level_ops *ops = ops_for(cases[i].level);
		struct raid_geometry geo =
			uniform_geo(cases[i].level, cases[i].layout, C64, cases[i].disks, 16 * C64);
		bool says = ops->can_resize && ops->can_resize(&geo);
		cr_expect_eq(says, cases[i].resizable, "%s layout 0x%x: can_resize %d", ops->name,
		             cases[i].layout, says);
		if (cases[i].level == 0 || cases[i].level == -1)
			continue; /* no uniform growth to compare */
		bool kept = grows_in_place(ops, cases[i].layout, cases[i].disks, 16 * C64, 24 * C64);
		cr_expect_eq(kept, cases[i].resizable,
		             "%s layout 0x%x on %d: bytes %s their places when members grow",
		             ops->name, cases[i].layout, cases[i].disks, kept ? "keep" : "leave");
	}
}

/* ---- RAID5 -------------------------------------------------------------- */

/* 4 disks, rows 0..7, layouts 0..5 (raid5_compute_sector, level 5). */
static const char *const raid5_4disk[6][8] = {
	/* 0 left-asymmetric: P on 3,2,1,0; data in role order around P */
	{ "012P", "01P2", "0P12", "P012", "012P", "01P2", "0P12", "P012" },
	/* 1 right-asymmetric: P on 0,1,2,3 */
	{ "P012", "0P12", "01P2", "012P", "P012", "0P12", "01P2", "012P" },
	/* 2 left-symmetric: data starts right after P and wraps */
	{ "012P", "12P0", "2P01", "P012", "012P", "12P0", "2P01", "P012" },
	/* 3 right-symmetric */
	{ "P012", "2P01", "12P0", "012P", "P012", "2P01", "12P0", "012P" },
	/* 4 parity-first */
	{ "P012", "P012", "P012", "P012", "P012", "P012", "P012", "P012" },
	/* 5 parity-last */
	{ "012P", "012P", "012P", "012P", "012P", "012P", "012P", "012P" },
};

Test(raid5, rows_4_disks_all_layouts)
{
	const struct raid_level_ops *ops = ops_for(5);

	for (uint32_t layout = 0; layout < 6; layout++) {
		struct raid_geometry geo = uniform_geo(5, layout, C64, 4, 16 * C64);
		void *priv = init_ok(ops, &geo);

		cr_assert_eq(geo.array_bytes, 48 * C64, "layout %u array_bytes %llu", layout,
		             (ull)geo.array_bytes);
		for (uint64_t row = 0; row < 8; row++)
			check_row(ops, &geo, row, raid5_4disk[layout][row], NULL);
		ops->geometry_free(priv);
	}
}

Test(raid5, rows_3_disks)
{
	const struct raid_level_ops *ops = ops_for(5);
	static const char *const ls[6] = { "01P", "1P0", "P01", "01P", "1P0", "P01" };
	static const char *const ra[6] = { "P01", "0P1", "01P", "P01", "0P1", "01P" };
	struct raid_geometry geo = uniform_geo(5, 2, C64, 3, 16 * C64);
	void *priv = init_ok(ops, &geo);

	cr_assert_eq(geo.array_bytes, 32 * C64);
	for (uint64_t row = 0; row < 6; row++)
		check_row(ops, &geo, row, ls[row], NULL);
	ops->geometry_free(priv);

	geo = uniform_geo(5, 1, C64, 3, 16 * C64);
	priv = init_ok(ops, &geo);
	for (uint64_t row = 0; row < 6; row++)
		check_row(ops, &geo, row, ra[row], NULL);
	ops->geometry_free(priv);
}

Test(raid5, rows_5_disks)
{
	const struct raid_level_ops *ops = ops_for(5);
	static const char *const ls[10] = { "0123P", "123P0", "23P01", "3P012", "P0123",
		                            "0123P", "123P0", "23P01", "3P012", "P0123" };
	static const char *const la[10] = { "0123P", "012P3", "01P23", "0P123", "P0123",
		                            "0123P", "012P3", "01P23", "0P123", "P0123" };
	struct raid_geometry geo = uniform_geo(5, 2, C64, 5, 16 * C64);
	void *priv = init_ok(ops, &geo);

	cr_assert_eq(geo.array_bytes, 64 * C64);
	for (uint64_t row = 0; row < 10; row++)
		check_row(ops, &geo, row, ls[row], NULL);
	ops->geometry_free(priv);

	geo = uniform_geo(5, 0, C64, 5, 16 * C64);
	priv = init_ok(ops, &geo);
	for (uint64_t row = 0; row < 10; row++)
		check_row(ops, &geo, row, la[row], NULL);
	ops->geometry_free(priv);
}

Test(raid5, rows_have_no_q)
{
	const struct raid_level_ops *ops = ops_for(5);
	struct raid_geometry geo = uniform_geo(5, 2, C64, 4, 16 * C64);
	void *priv = init_ok(ops, &geo);
	struct row_layout lay;

	ops->row_layout(&geo, 5, &lay);
	cr_assert_eq(lay.q_role, -1);
	cr_assert_eq(lay.member_off_bytes, 5 * C64);
	ops->geometry_free(priv);
}

Test(raid5, array_bytes_rounds_to_chunk)
{
	const struct raid_level_ops *ops = ops_for(5);
	/* 16 chunks and 1000 bytes per member: the partial chunk is unused */
	struct raid_geometry geo = uniform_geo(5, 2, C64, 4, 16 * C64 + 1000);
	void *priv = init_ok(ops, &geo);

	cr_assert_eq(geo.array_bytes, 3145728ull, "got %llu", (ull)geo.array_bytes);
	ops->geometry_free(priv);
}

Test(raid5, map_left_symmetric_4_disks)
{
	const struct raid_level_ops *ops = ops_for(5);
	struct raid_geometry geo = uniform_geo(5, 2, C64, 4, 16 * C64);
	void *priv = init_ok(ops, &geo);
	static const struct {
		uint64_t off;
		int role;
		uint64_t member_off, len;
	} cases[] = {
		{ 0, 0, 0, 65536 },                 /* chunk 0: row 0 D0 */
		{ 65636, 1, 100, 65436 },           /* chunk 1 + 100: row 0 D1 */
		{ 196608, 3, 65536, 65536 },        /* chunk 3: row 1 D0 on role 3 */
		{ 266240, 0, 69632, 61440 },        /* chunk 4 + 4 KiB: row 1 D1 */
		{ 327680, 1, 65536, 65536 },        /* chunk 5: row 1 D2 */
		{ 524287, 3, 196607, 1 },           /* last byte of chunk 7: row 2 D1 */
		{ 720896, 3, 196608, 65536 },       /* chunk 11: row 3 D2 */
		{ 786432, 0, 262144, 65536 },       /* chunk 12: row 4 D0 */
		{ 3145727, 3, 1048575, 1 },         /* last byte: chunk 47, row 15 "P012" D2 */
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++)
		expect_one_copy(ops, &geo, priv, cases[i].off, cases[i].role, cases[i].member_off,
		                cases[i].len);
	ops->geometry_free(priv);
}

Test(raid5, map_left_asymmetric_4_disks)
{
	const struct raid_level_ops *ops = ops_for(5);
	struct raid_geometry geo = uniform_geo(5, 0, C64, 4, 16 * C64);
	void *priv = init_ok(ops, &geo);
	static const struct {
		uint64_t off;
		int role;
		uint64_t member_off, len;
	} cases[] = {
		{ 196608, 0, 65536, 65536 },        /* chunk 3: row 1 D0 */
		{ 262144 + 512, 1, 66048, 65024 },  /* chunk 4: row 1 D1 */
		{ 327680, 3, 65536, 65536 },        /* chunk 5: row 1 D2 skips P on 2 */
		{ 393216, 0, 131072, 65536 },       /* chunk 6: row 2 D0 */
		{ 458752, 2, 131072, 65536 },       /* chunk 7: row 2 D1 skips P on 1 */
		{ 589824, 1, 196608, 65536 },       /* chunk 9: row 3 D0, P on 0 */
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++)
		expect_one_copy(ops, &geo, priv, cases[i].off, cases[i].role, cases[i].member_off,
		                cases[i].len);
	ops->geometry_free(priv);
}

Test(raid5, can_run_one_missing)
{
	const struct raid_level_ops *ops = ops_for(5);
	struct raid_geometry geo = uniform_geo(5, 2, C64, 4, 16 * C64);
	void *priv = init_ok(ops, &geo);

	cr_assert(can_run_without(ops, &geo, ""));
	cr_assert(can_run_without(ops, &geo, "0"));
	cr_assert(can_run_without(ops, &geo, "1"));
	cr_assert(can_run_without(ops, &geo, "2"));
	cr_assert(can_run_without(ops, &geo, "3"));
	cr_assert_not(can_run_without(ops, &geo, "01"));
	cr_assert_not(can_run_without(ops, &geo, "23"));
	cr_assert_not(can_run_without(ops, &geo, "013"));
	ops->geometry_free(priv);
}

Test(raid5, refusals)
{
	const struct raid_level_ops *ops = ops_for(5);
	struct raid_geometry geo;

	geo = uniform_geo(5, 6, C64, 4, 16 * C64);
	init_refused(ops, &geo, "layout 6");
	geo = uniform_geo(5, 16, C64, 4, 16 * C64);
	init_refused(ops, &geo, "raid6-only layout 16");
	geo = uniform_geo(5, 2, 0, 4, 16 * C64);
	init_refused(ops, &geo, "chunk 0");
	geo = uniform_geo(5, 2, 1000, 4, 16 * C64);
	init_refused(ops, &geo, "chunk not a multiple of 4 KiB");
	geo = uniform_geo(5, 2, C64, 4, C64 - 512);
	init_refused(ops, &geo, "members smaller than a chunk");
}

/* ---- RAID6 -------------------------------------------------------------- */

struct prow {
	const char *roles;
	const char *slots;
};

struct raid6_table {
	uint32_t layout;
	struct prow rows[12];
};

/* 5 disks, rows 0..9. Q slots: numbered from the member after Q (member 0
 * when Q is the last member), cyclically, skipping P and Q. */
static const struct raid6_table raid6_5disk[] = {
	{ 0, /* left-asymmetric */
	  { { "Q012P", "012" }, { "012PQ", "012" }, { "01PQ2", "120" }, { "0PQ12", "201" },
	    { "PQ012", "012" }, { "Q012P", "012" }, { "012PQ", "012" }, { "01PQ2", "120" },
	    { "0PQ12", "201" }, { "PQ012", "012" } } },
	{ 1, /* right-asymmetric */
	  { { "PQ012", "012" }, { "0PQ12", "201" }, { "01PQ2", "120" }, { "012PQ", "012" },
	    { "Q012P", "012" }, { "PQ012", "012" }, { "0PQ12", "201" }, { "01PQ2", "120" },
	    { "012PQ", "012" }, { "Q012P", "012" } } },
	{ 2, /* left-symmetric */
	  { { "Q012P", "012" }, { "012PQ", "012" }, { "12PQ0", "012" }, { "2PQ01", "012" },
	    { "PQ012", "012" }, { "Q012P", "012" }, { "012PQ", "012" }, { "12PQ0", "012" },
	    { "2PQ01", "012" }, { "PQ012", "012" } } },
	{ 3, /* right-symmetric */
	  { { "PQ012", "012" }, { "2PQ01", "012" }, { "12PQ0", "012" }, { "012PQ", "012" },
	    { "Q012P", "012" }, { "PQ012", "012" }, { "2PQ01", "012" }, { "12PQ0", "012" },
	    { "012PQ", "012" }, { "Q012P", "012" } } },
	{ 4, /* parity-first */
	  { { "PQ012", "012" }, { "PQ012", "012" }, { "PQ012", "012" }, { "PQ012", "012" },
	    { "PQ012", "012" }, { "PQ012", "012" }, { "PQ012", "012" }, { "PQ012", "012" },
	    { "PQ012", "012" }, { "PQ012", "012" } } },
	{ 5, /* parity-last */
	  { { "012PQ", "012" }, { "012PQ", "012" }, { "012PQ", "012" }, { "012PQ", "012" },
	    { "012PQ", "012" }, { "012PQ", "012" }, { "012PQ", "012" }, { "012PQ", "012" },
	    { "012PQ", "012" }, { "012PQ", "012" } } },
	{ 16, /* left-asymmetric-6: raid5 LA on roles 0..3 (period 4), Q last */
	  { { "012PQ", "012" }, { "01P2Q", "012" }, { "0P12Q", "012" }, { "P012Q", "012" },
	    { "012PQ", "012" }, { "01P2Q", "012" }, { "0P12Q", "012" }, { "P012Q", "012" },
	    { "012PQ", "012" }, { "01P2Q", "012" } } },
	{ 17, /* right-asymmetric-6 */
	  { { "P012Q", "012" }, { "0P12Q", "012" }, { "01P2Q", "012" }, { "012PQ", "012" },
	    { "P012Q", "012" }, { "0P12Q", "012" }, { "01P2Q", "012" }, { "012PQ", "012" },
	    { "P012Q", "012" }, { "0P12Q", "012" } } },
	{ 18, /* left-symmetric-6: data wraps, but Q slots follow role order */
	  { { "012PQ", "012" }, { "12P0Q", "201" }, { "2P01Q", "120" }, { "P012Q", "012" },
	    { "012PQ", "012" }, { "12P0Q", "201" }, { "2P01Q", "120" }, { "P012Q", "012" },
	    { "012PQ", "012" }, { "12P0Q", "201" } } },
	{ 19, /* right-symmetric-6 */
	  { { "P012Q", "012" }, { "2P01Q", "120" }, { "12P0Q", "201" }, { "012PQ", "012" },
	    { "P012Q", "012" }, { "2P01Q", "120" }, { "12P0Q", "201" }, { "012PQ", "012" },
	    { "P012Q", "012" }, { "2P01Q", "120" } } },
	{ 20, /* parity-first-6 */
	  { { "P012Q", "012" }, { "P012Q", "012" }, { "P012Q", "012" }, { "P012Q", "012" },
	    { "P012Q", "012" }, { "P012Q", "012" }, { "P012Q", "012" }, { "P012Q", "012" },
	    { "P012Q", "012" }, { "P012Q", "012" } } },
};

/* 6 disks, rows 0..11. */
static const struct raid6_table raid6_6disk[] = {
	{ 0, /* left-asymmetric */
	  { { "Q0123P", "0123" }, { "0123PQ", "0123" }, { "012PQ3", "1230" },
	    { "01PQ23", "2301" }, { "0PQ123", "3012" }, { "PQ0123", "0123" },
	    { "Q0123P", "0123" }, { "0123PQ", "0123" }, { "012PQ3", "1230" },
	    { "01PQ23", "2301" }, { "0PQ123", "3012" }, { "PQ0123", "0123" } } },
	{ 1, /* right-asymmetric */
	  { { "PQ0123", "0123" }, { "0PQ123", "3012" }, { "01PQ23", "2301" },
	    { "012PQ3", "1230" }, { "0123PQ", "0123" }, { "Q0123P", "0123" },
	    { "PQ0123", "0123" }, { "0PQ123", "3012" }, { "01PQ23", "2301" },
	    { "012PQ3", "1230" }, { "0123PQ", "0123" }, { "Q0123P", "0123" } } },
	{ 2, /* left-symmetric */
	  { { "Q0123P", "0123" }, { "0123PQ", "0123" }, { "123PQ0", "0123" },
	    { "23PQ01", "0123" }, { "3PQ012", "0123" }, { "PQ0123", "0123" },
	    { "Q0123P", "0123" }, { "0123PQ", "0123" }, { "123PQ0", "0123" },
	    { "23PQ01", "0123" }, { "3PQ012", "0123" }, { "PQ0123", "0123" } } },
	{ 3, /* right-symmetric */
	  { { "PQ0123", "0123" }, { "3PQ012", "0123" }, { "23PQ01", "0123" },
	    { "123PQ0", "0123" }, { "0123PQ", "0123" }, { "Q0123P", "0123" },
	    { "PQ0123", "0123" }, { "3PQ012", "0123" }, { "23PQ01", "0123" },
	    { "123PQ0", "0123" }, { "0123PQ", "0123" }, { "Q0123P", "0123" } } },
	{ 4, /* parity-first */
	  { { "PQ0123", "0123" }, { "PQ0123", "0123" }, { "PQ0123", "0123" },
	    { "PQ0123", "0123" }, { "PQ0123", "0123" }, { "PQ0123", "0123" },
	    { "PQ0123", "0123" }, { "PQ0123", "0123" }, { "PQ0123", "0123" },
	    { "PQ0123", "0123" }, { "PQ0123", "0123" }, { "PQ0123", "0123" } } },
	{ 5, /* parity-last */
	  { { "0123PQ", "0123" }, { "0123PQ", "0123" }, { "0123PQ", "0123" },
	    { "0123PQ", "0123" }, { "0123PQ", "0123" }, { "0123PQ", "0123" },
	    { "0123PQ", "0123" }, { "0123PQ", "0123" }, { "0123PQ", "0123" },
	    { "0123PQ", "0123" }, { "0123PQ", "0123" }, { "0123PQ", "0123" } } },
	{ 16, /* left-asymmetric-6 (period 5) */
	  { { "0123PQ", "0123" }, { "012P3Q", "0123" }, { "01P23Q", "0123" },
	    { "0P123Q", "0123" }, { "P0123Q", "0123" }, { "0123PQ", "0123" },
	    { "012P3Q", "0123" }, { "01P23Q", "0123" }, { "0P123Q", "0123" },
	    { "P0123Q", "0123" }, { "0123PQ", "0123" }, { "012P3Q", "0123" } } },
	{ 17, /* right-asymmetric-6 */
	  { { "P0123Q", "0123" }, { "0P123Q", "0123" }, { "01P23Q", "0123" },
	    { "012P3Q", "0123" }, { "0123PQ", "0123" }, { "P0123Q", "0123" },
	    { "0P123Q", "0123" }, { "01P23Q", "0123" }, { "012P3Q", "0123" },
	    { "0123PQ", "0123" }, { "P0123Q", "0123" }, { "0P123Q", "0123" } } },
	{ 18, /* left-symmetric-6 */
	  { { "0123PQ", "0123" }, { "123P0Q", "3012" }, { "23P01Q", "2301" },
	    { "3P012Q", "1230" }, { "P0123Q", "0123" }, { "0123PQ", "0123" },
	    { "123P0Q", "3012" }, { "23P01Q", "2301" }, { "3P012Q", "1230" },
	    { "P0123Q", "0123" }, { "0123PQ", "0123" }, { "123P0Q", "3012" } } },
	{ 19, /* right-symmetric-6 */
	  { { "P0123Q", "0123" }, { "3P012Q", "1230" }, { "23P01Q", "2301" },
	    { "123P0Q", "3012" }, { "0123PQ", "0123" }, { "P0123Q", "0123" },
	    { "3P012Q", "1230" }, { "23P01Q", "2301" }, { "123P0Q", "3012" },
	    { "0123PQ", "0123" }, { "P0123Q", "0123" }, { "3P012Q", "1230" } } },
	{ 20, /* parity-first-6 */
	  { { "P0123Q", "0123" }, { "P0123Q", "0123" }, { "P0123Q", "0123" },
	    { "P0123Q", "0123" }, { "P0123Q", "0123" }, { "P0123Q", "0123" },
	    { "P0123Q", "0123" }, { "P0123Q", "0123" }, { "P0123Q", "0123" },
	    { "P0123Q", "0123" }, { "P0123Q", "0123" }, { "P0123Q", "0123" } } },
};

static void check_raid6_tables(const struct raid6_table *tables, size_t nr_tables, int disks,
                               uint64_t want_array_bytes)
{
	const struct raid_level_ops *ops = ops_for(6);

	for (size_t t = 0; t < nr_tables; t++) {
		struct raid_geometry geo = uniform_geo(6, tables[t].layout, C64, disks, 16 * C64);
		void *priv = init_ok(ops, &geo);

		cr_assert_eq(geo.array_bytes, want_array_bytes, "layout %u array_bytes %llu",
		             tables[t].layout, (ull)geo.array_bytes);
		for (int row = 0; row < 2 * disks; row++)
			check_row(ops, &geo, (uint64_t)row, tables[t].rows[row].roles,
			          tables[t].rows[row].slots);
		ops->geometry_free(priv);
	}
}

Test(raid6, rows_5_disks_all_layouts)
{
	check_raid6_tables(raid6_5disk, ARRAY_SIZE(raid6_5disk), 5, 48 * C64);
}

Test(raid6, rows_6_disks_all_layouts)
{
	check_raid6_tables(raid6_6disk, ARRAY_SIZE(raid6_6disk), 6, 64 * C64);
}

/* Rows far down the array use the same rotation (row mod disks). */
Test(raid6, rows_far_into_the_array)
{
	const struct raid_level_ops *ops = ops_for(6);
	struct raid_geometry geo = uniform_geo(6, 0, C64, 5, 1024 * MIB);
	void *priv = init_ok(ops, &geo);

	/* 1000003 = 5 * 200000 + 3: like row 3 */
	check_row(ops, &geo, 1000003, "0PQ12", "201");
	ops->geometry_free(priv);

	geo = uniform_geo(6, 18, C64, 6, 1024 * MIB);
	priv = init_ok(ops, &geo);
	/* 1000003 = 5 * 200000 + 3: like row 3 of the period-5 "_6" rotation */
	check_row(ops, &geo, 1000003, "3P012Q", "1230");
	ops->geometry_free(priv);
}

Test(raid6, map_left_asymmetric_5_disks)
{
	const struct raid_level_ops *ops = ops_for(6);
	struct raid_geometry geo = uniform_geo(6, 0, C64, 5, 16 * C64);
	void *priv = init_ok(ops, &geo);
	static const struct {
		uint64_t off;
		int role;
		uint64_t member_off, len;
	} cases[] = {
		{ 0, 1, 0, 65536 },                 /* chunk 0: row 0 "Q012P" D0 */
		{ 131072 + 7, 3, 7, 65529 },        /* chunk 2: row 0 D2 */
		{ 196608, 0, 65536, 65536 },        /* chunk 3: row 1 "012PQ" D0 */
		{ 393216, 0, 131072, 65536 },       /* chunk 6: row 2 "01PQ2" D0 */
		{ 458752 + 4096, 1, 135168, 61440 },/* chunk 7: row 2 D1 */
		{ 524288, 4, 131072, 65536 },       /* chunk 8: row 2 D2 on role 4 */
		{ 655360, 3, 196608, 65536 },       /* chunk 10: row 3 "0PQ12" D1 */
		{ 3145727, 3, 1048575, 1 },         /* last byte: chunk 47, row 15 = row 0 D2 */
	};

	cr_assert_eq(geo.array_bytes, 3145728ull);
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++)
		expect_one_copy(ops, &geo, priv, cases[i].off, cases[i].role, cases[i].member_off,
		                cases[i].len);
	ops->geometry_free(priv);
}

Test(raid6, map_left_symmetric_6_disks)
{
	const struct raid_level_ops *ops = ops_for(6);
	struct raid_geometry geo = uniform_geo(6, 2, C64, 6, 16 * C64 + 4096);
	void *priv = init_ok(ops, &geo);
	static const struct {
		uint64_t off;
		int role;
		uint64_t member_off, len;
	} cases[] = {
		{ 0, 1, 0, 65536 },                 /* row 0 "Q0123P": D0 on 1 */
		{ 262144, 0, 65536, 65536 },        /* chunk 4: row 1 "0123PQ" D0 */
		{ 524288, 5, 131072, 65536 },       /* chunk 8: row 2 "123PQ0" D0 on 5 */
		{ 589824 + 1, 0, 131073, 65535 },   /* chunk 9: row 2 D1 on 0 */
		{ 851968, 5, 196608, 65536 },       /* chunk 13: row 3 "23PQ01" D1 on 5 */
	};

	cr_assert_eq(geo.array_bytes, 64 * C64);
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++)
		expect_one_copy(ops, &geo, priv, cases[i].off, cases[i].role, cases[i].member_off,
		                cases[i].len);
	ops->geometry_free(priv);
}

Test(raid6, can_run_two_missing)
{
	const struct raid_level_ops *ops = ops_for(6);
	struct raid_geometry geo = uniform_geo(6, 2, C64, 5, 16 * C64);
	void *priv = init_ok(ops, &geo);

	cr_assert(can_run_without(ops, &geo, ""));
	cr_assert(can_run_without(ops, &geo, "4"));
	cr_assert(can_run_without(ops, &geo, "01"));
	cr_assert(can_run_without(ops, &geo, "24"));
	cr_assert_not(can_run_without(ops, &geo, "012"));
	cr_assert_not(can_run_without(ops, &geo, "134"));
	cr_assert_not(can_run_without(ops, &geo, "01234"));
	ops->geometry_free(priv);
}

Test(raid6, refusals)
{
	const struct raid_level_ops *ops = ops_for(6);
	static const uint32_t bad_layouts[] = { 6, 7, 8, 9, 10, 15, 21 };
	struct raid_geometry geo;

	for (size_t i = 0; i < ARRAY_SIZE(bad_layouts); i++) {
		char what[32];
		snprintf(what, sizeof(what), "layout %u", bad_layouts[i]);
		geo = uniform_geo(6, bad_layouts[i], C64, 5, 16 * C64);
		init_refused(ops, &geo, what);
	}
	geo = uniform_geo(6, 2, 0, 5, 16 * C64);
	init_refused(ops, &geo, "chunk 0");
	geo = uniform_geo(6, 2, 6144, 5, 16 * C64);
	init_refused(ops, &geo, "chunk 6 KiB");
	geo = uniform_geo(6, 2, C64, 5, 4096);
	init_refused(ops, &geo, "members smaller than a chunk");
}

/* ---- RAID0 -------------------------------------------------------------- */

/* Members given in chunks of C64, plus a few stray bytes to round away. */
static struct raid_geometry raid0_geo(uint32_t layout, uint32_t feature_map, int disks,
                                      const uint64_t *chunks, uint64_t slack)
{
	struct raid_geometry geo;

	memset(&geo, 0, sizeof(geo));
	geo.level = 0;
	geo.layout = layout;
	geo.feature_map = feature_map;
	geo.chunk_bytes = C64;
	geo.raid_disks = disks;
	for (int i = 0; i < disks; i++)
		geo.member_bytes[i] = chunks[i] * C64 + slack;
	geo.dev_bytes = geo.member_bytes[0];
	return geo;
}

struct chunk_case {
	uint64_t chunk;  /* volume chunk number */
	int role;
	uint64_t dev_chunk; /* chunk number on the member */
};

/* Map a few bytes into each listed chunk: its start, an inner offset, and
 * its last byte. */
static void check_chunks(const struct raid_level_ops *ops, const struct raid_geometry *geo,
                         const void *priv, const struct chunk_case *cases, size_t n)
{
	static const uint64_t inner[] = { 0, 4608, C64 - 1 };

	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < ARRAY_SIZE(inner); j++)
			expect_one_copy(ops, geo, priv, cases[i].chunk * C64 + inner[j],
			                cases[i].role, cases[i].dev_chunk * C64 + inner[j],
			                C64 - inner[j]);
}

Test(raid0, equal_members_single_zone)
{
	const struct raid_level_ops *ops = ops_for(0);
	static const uint64_t chunks[] = { 16, 16, 16 };
	static const struct chunk_case cases[] = {
		{ 0, 0, 0 }, { 1, 1, 0 }, { 2, 2, 0 }, { 3, 0, 1 }, { 4, 1, 1 },
		{ 5, 2, 1 }, { 46, 1, 15 }, { 47, 2, 15 },
	};
	/* A single zone maps the same whatever the layout field says, and md
	 * needs no layout for it (old superblocks without the feature bit). */
	static const struct {
		uint32_t layout, feature_map;
	} variants[] = {
		{ 0, 0 }, { 2, 0 }, { 1, MD_FEATURE_RAID0_LAYOUT }, { 2, MD_FEATURE_RAID0_LAYOUT },
	};

	for (size_t v = 0; v < ARRAY_SIZE(variants); v++) {
		struct raid_geometry geo = raid0_geo(variants[v].layout, variants[v].feature_map,
		                                     3, chunks, 1000);
		void *priv = init_ok(ops, &geo);

		cr_assert_eq(geo.array_bytes, 48 * C64, "array_bytes %llu", (ull)geo.array_bytes);
		check_chunks(ops, &geo, priv, cases, ARRAY_SIZE(cases));
		ops->geometry_free(priv);
	}
}

/* 4, 8, 8 chunks: zone 0 = 3 x 4 chunks (volume chunks 0-11), zone 1 =
 * roles 1 and 2 from member chunk 4 (volume chunks 12-19). Zone 0 holds an
 * even number of chunks, so both layouts happen to agree here. */
Test(raid0, two_zones_4_8_8)
{
	const struct raid_level_ops *ops = ops_for(0);
	static const uint64_t chunks[] = { 4, 8, 8 };
	static const struct chunk_case cases[] = {
		{ 0, 0, 0 }, { 2, 2, 0 }, { 10, 1, 3 }, { 11, 2, 3 },
		{ 12, 1, 4 }, { 13, 2, 4 }, { 14, 1, 5 }, { 15, 2, 5 }, { 18, 1, 7 }, { 19, 2, 7 },
	};

	for (uint32_t layout = 1; layout <= 2; layout++) {
		struct raid_geometry geo = raid0_geo(layout, MD_FEATURE_RAID0_LAYOUT, 3, chunks, 0);
		void *priv = init_ok(ops, &geo);

		cr_assert_eq(geo.array_bytes, 20 * C64, "array_bytes %llu", (ull)geo.array_bytes);
		check_chunks(ops, &geo, priv, cases, ARRAY_SIZE(cases));
		ops->geometry_free(priv);
	}
}

/* 5, 8, 8 chunks: zone 0 = volume chunks 0-14, zone 1 = chunks 15-20 on
 * roles 1, 2 from member chunk 5. "original" (1) picks the member from the
 * volume chunk number (15 is odd: role 2 first), "alternate" (2) from the
 * chunk number inside the zone (role 1 first). */
static const uint64_t raid0_588[] = { 5, 8, 8 };
static const struct chunk_case raid0_588_zone0[] = {
	{ 0, 0, 0 }, { 1, 1, 0 }, { 2, 2, 0 }, { 12, 0, 4 }, { 13, 1, 4 }, { 14, 2, 4 },
};
static const struct chunk_case raid0_588_original[] = {
	{ 15, 2, 5 }, { 16, 1, 5 }, { 17, 2, 6 }, { 18, 1, 6 }, { 19, 2, 7 }, { 20, 1, 7 },
};
static const struct chunk_case raid0_588_alternate[] = {
	{ 15, 1, 5 }, { 16, 2, 5 }, { 17, 1, 6 }, { 18, 2, 6 }, { 19, 1, 7 }, { 20, 2, 7 },
};

Test(raid0, two_zones_original_layout)
{
	const struct raid_level_ops *ops = ops_for(0);
	struct raid_geometry geo = raid0_geo(1, MD_FEATURE_RAID0_LAYOUT, 3, raid0_588, 0);
	void *priv = init_ok(ops, &geo);

	cr_assert_eq(geo.array_bytes, 21 * C64, "array_bytes %llu", (ull)geo.array_bytes);
	check_chunks(ops, &geo, priv, raid0_588_zone0, ARRAY_SIZE(raid0_588_zone0));
	check_chunks(ops, &geo, priv, raid0_588_original, ARRAY_SIZE(raid0_588_original));
	ops->geometry_free(priv);
}

Test(raid0, two_zones_alternate_layout)
{
	const struct raid_level_ops *ops = ops_for(0);
	/* stray bytes on every member must not change the zones */
	struct raid_geometry geo = raid0_geo(2, MD_FEATURE_RAID0_LAYOUT, 3, raid0_588, 4096);
	void *priv = init_ok(ops, &geo);

	cr_assert_eq(geo.array_bytes, 21 * C64, "array_bytes %llu", (ull)geo.array_bytes);
	check_chunks(ops, &geo, priv, raid0_588_zone0, ARRAY_SIZE(raid0_588_zone0));
	check_chunks(ops, &geo, priv, raid0_588_alternate, ARRAY_SIZE(raid0_588_alternate));
	ops->geometry_free(priv);
}

/* 3, 5, 7 chunks: zone 0 = chunks 0-8 (3 x 3), zone 1 = chunks 9-12 on
 * roles 1, 2 from member chunk 3, zone 2 = chunks 13-14 on role 2 from
 * member chunk 5. */
Test(raid0, three_zones_both_layouts)
{
	const struct raid_level_ops *ops = ops_for(0);
	static const uint64_t chunks[] = { 3, 5, 7 };
	static const struct chunk_case common[] = {
		{ 0, 0, 0 }, { 7, 1, 2 }, { 8, 2, 2 }, { 13, 2, 5 }, { 14, 2, 6 },
	};
	static const struct chunk_case original[] = {
		{ 9, 2, 3 }, { 10, 1, 3 }, { 11, 2, 4 }, { 12, 1, 4 },
	};
	static const struct chunk_case alternate[] = {
		{ 9, 1, 3 }, { 10, 2, 3 }, { 11, 1, 4 }, { 12, 2, 4 },
	};
	struct raid_geometry geo = raid0_geo(1, MD_FEATURE_RAID0_LAYOUT, 3, chunks, 0);
	void *priv = init_ok(ops, &geo);

	cr_assert_eq(geo.array_bytes, 15 * C64, "array_bytes %llu", (ull)geo.array_bytes);
	check_chunks(ops, &geo, priv, common, ARRAY_SIZE(common));
	check_chunks(ops, &geo, priv, original, ARRAY_SIZE(original));
	ops->geometry_free(priv);

	geo = raid0_geo(2, MD_FEATURE_RAID0_LAYOUT, 3, chunks, 0);
	priv = init_ok(ops, &geo);
	cr_assert_eq(geo.array_bytes, 15 * C64, "array_bytes %llu", (ull)geo.array_bytes);
	check_chunks(ops, &geo, priv, common, ARRAY_SIZE(common));
	check_chunks(ops, &geo, priv, alternate, ARRAY_SIZE(alternate));
	ops->geometry_free(priv);
}

/* md (super_1_validate) ignores the layout of raid0 unless the superblock
 * sets MD_FEATURE_RAID0_LAYOUT, and create_strip_zones refuses a multi-zone
 * array whose second zone spans several members without a known layout. */
Test(raid0, multizone_needs_layout)
{
	const struct raid_level_ops *ops = ops_for(0);
	struct raid_geometry geo;

	geo = raid0_geo(0, 0, 3, raid0_588, 0);
	init_refused(ops, &geo, "two zones, no feature bit, layout 0");
	geo = raid0_geo(2, 0, 3, raid0_588, 0);
	init_refused(ops, &geo, "two zones, layout 2 but no feature bit");
	geo = raid0_geo(1, 0, 3, raid0_588, 0);
	init_refused(ops, &geo, "two zones, layout 1 but no feature bit");
	geo = raid0_geo(0, MD_FEATURE_RAID0_LAYOUT, 3, raid0_588, 0);
	init_refused(ops, &geo, "two zones, feature bit, layout 0");
	geo = raid0_geo(3, MD_FEATURE_RAID0_LAYOUT, 3, raid0_588, 0);
	init_refused(ops, &geo, "two zones, feature bit, layout 3");
}

/* create_strip_zones: "if (conf->nr_strip_zones == 1 ||
 * conf->strip_zone[1].nb_dev == 1) conf->layout = RAID0_ORIG_LAYOUT;" -
 * when the second zone has one member, both layouts agree and md assembles
 * the array without any layout (e.g. a legacy 2-disk raid0 of unequal
 * disks). */
Test(raid0, multizone_single_member_tail_needs_no_layout)
{
	const struct raid_level_ops *ops = ops_for(0);
	static const uint64_t two[] = { 4, 8 };
	static const uint64_t three[] = { 4, 4, 8 };
	/* 4, 8: zone 0 = chunks 0-7 on roles 0, 1; zone 1 = chunks 8-11 on
	 * role 1 from member chunk 4 */
	static const struct chunk_case two_cases[] = {
		{ 0, 0, 0 }, { 1, 1, 0 }, { 7, 1, 3 }, { 8, 1, 4 }, { 11, 1, 7 },
	};
	/* 4, 4, 8: zone 0 = chunks 0-11; zone 1 = chunks 12-15 on role 2 */
	static const struct chunk_case three_cases[] = {
		{ 11, 2, 3 }, { 12, 2, 4 }, { 13, 2, 5 }, { 15, 2, 7 },
	};
	struct raid_geometry geo = raid0_geo(0, 0, 2, two, 0);
	void *priv = init_ok(ops, &geo);

	cr_assert_eq(geo.array_bytes, 12 * C64);
	check_chunks(ops, &geo, priv, two_cases, ARRAY_SIZE(two_cases));
	ops->geometry_free(priv);

	geo = raid0_geo(0, 0, 3, three, 0);
	priv = init_ok(ops, &geo);
	cr_assert_eq(geo.array_bytes, 16 * C64);
	check_chunks(ops, &geo, priv, three_cases, ARRAY_SIZE(three_cases));
	ops->geometry_free(priv);
}

Test(raid0, refusals_and_can_run)
{
	const struct raid_level_ops *ops = ops_for(0);
	static const uint64_t chunks[] = { 16, 16, 16 };
	static const uint64_t none[] = { 0, 0, 0 };
	struct raid_geometry geo = raid0_geo(2, MD_FEATURE_RAID0_LAYOUT, 3, chunks, 0);
	void *priv = init_ok(ops, &geo);

	cr_assert(can_run_without(ops, &geo, ""));
	cr_assert_not(can_run_without(ops, &geo, "0"));
	cr_assert_not(can_run_without(ops, &geo, "2"));
	ops->geometry_free(priv);

	geo.chunk_bytes = 0;
	init_refused(ops, &geo, "chunk 0");
	geo = raid0_geo(2, MD_FEATURE_RAID0_LAYOUT, 3, none, 4096);
	init_refused(ops, &geo, "members smaller than a chunk");
}

/* ---- RAID10 ------------------------------------------------------------- */

struct copies_case {
	uint64_t chunk;
	int nr;
	int role[4];
	uint64_t dev_chunk[4];
};

/* Every copy of the listed chunks, in md's r10bio->devs[] order. */
static void check_copies(const struct raid_level_ops *ops, const struct raid_geometry *geo,
                         const void *priv, const struct copies_case *cases, size_t n)
{
	static const uint64_t inner[] = { 0, 4608 };

	for (size_t i = 0; i < n; i++) {
		for (size_t j = 0; j < ARRAY_SIZE(inner); j++) {
			struct raid_extent ext;
			uint64_t off = cases[i].chunk * C64 + inner[j];

			memset(&ext, 0xa5, sizeof(ext));
			ops->map(geo, priv, off, &ext);
			cr_assert_eq(ext.nr_copies, cases[i].nr,
			             "raid10 layout 0x%x, %d disks, chunk %llu: %d copies, want %d",
			             geo->layout, geo->raid_disks, (ull)cases[i].chunk, ext.nr_copies,
			             cases[i].nr);
			cr_assert_eq(ext.len_bytes, C64 - inner[j]);
			for (int c = 0; c < cases[i].nr; c++) {
				cr_assert_eq(ext.copies[c].role, cases[i].role[c],
				             "raid10 layout 0x%x, %d disks, chunk %llu copy %d: role %d, "
				             "want %d",
				             geo->layout, geo->raid_disks, (ull)cases[i].chunk, c,
				             ext.copies[c].role, cases[i].role[c]);
				cr_assert_eq(ext.copies[c].member_off_bytes,
				             cases[i].dev_chunk[c] * C64 + inner[j],
				             "raid10 layout 0x%x, %d disks, chunk %llu copy %d: member "
				             "offset %llu, want chunk %llu",
				             geo->layout, geo->raid_disks, (ull)cases[i].chunk, c,
				             (ull)ext.copies[c].member_off_bytes,
				             (ull)cases[i].dev_chunk[c]);
			}
		}
	}
}

Test(raid10, near2_4_disks)
{
	const struct raid_level_ops *ops = ops_for(10);
	static const struct copies_case cases[] = {
		{ 0, 2, { 0, 1 }, { 0, 0 } }, { 1, 2, { 2, 3 }, { 0, 0 } },
		{ 2, 2, { 0, 1 }, { 1, 1 } }, { 3, 2, { 2, 3 }, { 1, 1 } },
		{ 4, 2, { 0, 1 }, { 2, 2 } }, { 31, 2, { 2, 3 }, { 15, 15 } },
	};
	struct raid_geometry geo = uniform_geo(10, 0x102, C64, 4, 16 * C64);
	void *priv = init_ok(ops, &geo);

	cr_assert_eq(geo.array_bytes, 32 * C64, "array_bytes %llu", (ull)geo.array_bytes);
	check_copies(ops, &geo, priv, cases, ARRAY_SIZE(cases));

	cr_assert(can_run_without(ops, &geo, ""));
	cr_assert(can_run_without(ops, &geo, "0"));
	cr_assert(can_run_without(ops, &geo, "1"));
	cr_assert(can_run_without(ops, &geo, "2"));
	cr_assert(can_run_without(ops, &geo, "3"));
	cr_assert_not(can_run_without(ops, &geo, "01"));
	cr_assert_not(can_run_without(ops, &geo, "23"));
	cr_assert(can_run_without(ops, &geo, "02"));
	cr_assert(can_run_without(ops, &geo, "03"));
	cr_assert(can_run_without(ops, &geo, "12"));
	cr_assert(can_run_without(ops, &geo, "13"));
	cr_assert_not(can_run_without(ops, &geo, "023"));
	cr_assert_not(can_run_without(ops, &geo, "0123"));
	ops->geometry_free(priv);
}

/* Near copies wrap to the next row on an odd number of members. */
Test(raid10, near2_3_disks)
{
	const struct raid_level_ops *ops = ops_for(10);
	static const struct copies_case cases[] = {
		{ 0, 2, { 0, 1 }, { 0, 0 } }, { 1, 2, { 2, 0 }, { 0, 1 } },
		{ 2, 2, { 1, 2 }, { 1, 1 } }, { 3, 2, { 0, 1 }, { 2, 2 } },
		{ 4, 2, { 2, 0 }, { 2, 3 } }, { 5, 2, { 1, 2 }, { 3, 3 } },
		{ 23, 2, { 1, 2 }, { 15, 15 } },
	};
	struct raid_geometry geo = uniform_geo(10, 0x102, C64, 3, 16 * C64);
	void *priv = init_ok(ops, &geo);

	cr_assert_eq(geo.array_bytes, 24 * C64, "array_bytes %llu", (ull)geo.array_bytes);
	check_copies(ops, &geo, priv, cases, ARRAY_SIZE(cases));

	cr_assert(can_run_without(ops, &geo, "0"));
	cr_assert(can_run_without(ops, &geo, "1"));
	cr_assert(can_run_without(ops, &geo, "2"));
	cr_assert_not(can_run_without(ops, &geo, "01"));
	cr_assert_not(can_run_without(ops, &geo, "02"));
	cr_assert_not(can_run_without(ops, &geo, "12"));
	ops->geometry_free(priv);

	/* 5 chunks (and change) per member: 5 * 3 / 2 = 7 array chunks */
	geo = uniform_geo(10, 0x102, C64, 3, 5 * C64 + 1000);
	priv = init_ok(ops, &geo);
	cr_assert_eq(geo.array_bytes, 7 * C64, "array_bytes %llu", (ull)geo.array_bytes);
	ops->geometry_free(priv);
}

/* far 2: the second copy sits one member on, a stride further down; the
 * stride is half the chunks each member uses (calc_sectors). */
Test(raid10, far2_4_disks)
{
	const struct raid_level_ops *ops = ops_for(10);
	static const struct copies_case cases16[] = {
		{ 0, 2, { 0, 1 }, { 0, 8 } }, { 1, 2, { 1, 2 }, { 0, 8 } },
		{ 2, 2, { 2, 3 }, { 0, 8 } }, { 3, 2, { 3, 0 }, { 0, 8 } },
		{ 4, 2, { 0, 1 }, { 1, 9 } }, { 5, 2, { 1, 2 }, { 1, 9 } },
		{ 31, 2, { 3, 0 }, { 7, 15 } },
	};
	static const struct copies_case cases15[] = {
		{ 0, 2, { 0, 1 }, { 0, 7 } }, { 6, 2, { 2, 3 }, { 1, 8 } },
		{ 27, 2, { 3, 0 }, { 6, 13 } },
	};
	struct raid_geometry geo = uniform_geo(10, 0x201, C64, 4, 16 * C64);
	void *priv = init_ok(ops, &geo);

	cr_assert_eq(geo.array_bytes, 32 * C64, "array_bytes %llu", (ull)geo.array_bytes);
	check_copies(ops, &geo, priv, cases16, ARRAY_SIZE(cases16));
	cr_assert(can_run_without(ops, &geo, "0"));
	cr_assert(can_run_without(ops, &geo, "3"));
	cr_assert_not(can_run_without(ops, &geo, "01"));
	cr_assert_not(can_run_without(ops, &geo, "12"));
	cr_assert_not(can_run_without(ops, &geo, "23"));
	cr_assert_not(can_run_without(ops, &geo, "03"));
	cr_assert(can_run_without(ops, &geo, "02"));
	cr_assert(can_run_without(ops, &geo, "13"));
	ops->geometry_free(priv);

	/* 17 chunks and change: 8 * 4 = 32 array chunks, 16 used, stride 8 */
	geo = uniform_geo(10, 0x201, C64, 4, 17 * C64 + 512);
	priv = init_ok(ops, &geo);
	cr_assert_eq(geo.array_bytes, 32 * C64, "array_bytes %llu", (ull)geo.array_bytes);
	check_copies(ops, &geo, priv, cases16, ARRAY_SIZE(cases16));
	ops->geometry_free(priv);

	/* 15 chunks: 7 * 4 = 28 array chunks, 14 used, stride 7 */
	geo = uniform_geo(10, 0x201, C64, 4, 15 * C64);
	priv = init_ok(ops, &geo);
	cr_assert_eq(geo.array_bytes, 28 * C64, "array_bytes %llu", (ull)geo.array_bytes);
	check_copies(ops, &geo, priv, cases15, ARRAY_SIZE(cases15));
	ops->geometry_free(priv);
}

/* far 2 on 3 members, 7 chunks each: 3 * 3 = 9 array chunks, 6 used,
 * stride 3. */
Test(raid10, far2_3_disks)
{
	const struct raid_level_ops *ops = ops_for(10);
	static const struct copies_case cases[] = {
		{ 0, 2, { 0, 1 }, { 0, 3 } }, { 2, 2, { 2, 0 }, { 0, 3 } },
		{ 3, 2, { 0, 1 }, { 1, 4 } }, { 8, 2, { 2, 0 }, { 2, 5 } },
	};
	struct raid_geometry geo = uniform_geo(10, 0x201, C64, 3, 7 * C64);
	void *priv = init_ok(ops, &geo);

	cr_assert_eq(geo.array_bytes, 9 * C64, "array_bytes %llu", (ull)geo.array_bytes);
	check_copies(ops, &geo, priv, cases, ARRAY_SIZE(cases));
	ops->geometry_free(priv);
}

/* offset 2: each row of chunks is followed by its copy shifted one member. */
Test(raid10, offset2_4_disks)
{
	const struct raid_level_ops *ops = ops_for(10);
	static const struct copies_case cases[] = {
		{ 0, 2, { 0, 1 }, { 0, 1 } }, { 1, 2, { 1, 2 }, { 0, 1 } },
		{ 2, 2, { 2, 3 }, { 0, 1 } }, { 3, 2, { 3, 0 }, { 0, 1 } },
		{ 4, 2, { 0, 1 }, { 2, 3 } }, { 5, 2, { 1, 2 }, { 2, 3 } },
		{ 31, 2, { 3, 0 }, { 14, 15 } },
	};
	struct raid_geometry geo = uniform_geo(10, 0x10201, C64, 4, 16 * C64);
	void *priv = init_ok(ops, &geo);

	cr_assert_eq(geo.array_bytes, 32 * C64, "array_bytes %llu", (ull)geo.array_bytes);
	check_copies(ops, &geo, priv, cases, ARRAY_SIZE(cases));
	cr_assert(can_run_without(ops, &geo, "1"));
	cr_assert_not(can_run_without(ops, &geo, "01"));
	cr_assert_not(can_run_without(ops, &geo, "30"));
	cr_assert(can_run_without(ops, &geo, "02"));
	cr_assert(can_run_without(ops, &geo, "13"));
	ops->geometry_free(priv);
}

/* near 2 x far 2 on 4: every chunk on every member. 16/2 * 4/2 = 16 array
 * chunks, 16 used, stride 8. */
Test(raid10, near2_far2_4_disks)
{
	const struct raid_level_ops *ops = ops_for(10);
	static const struct copies_case cases[] = {
		{ 0, 4, { 0, 2, 1, 3 }, { 0, 8, 0, 8 } },
		{ 1, 4, { 2, 0, 3, 1 }, { 0, 8, 0, 8 } },
		{ 2, 4, { 0, 2, 1, 3 }, { 1, 9, 1, 9 } },
		{ 15, 4, { 2, 0, 3, 1 }, { 7, 15, 7, 15 } },
	};
	struct raid_geometry geo = uniform_geo(10, 0x202, C64, 4, 16 * C64);
	void *priv = init_ok(ops, &geo);

	cr_assert_eq(geo.array_bytes, 16 * C64, "array_bytes %llu", (ull)geo.array_bytes);
	check_copies(ops, &geo, priv, cases, ARRAY_SIZE(cases));
	cr_assert(can_run_without(ops, &geo, "012"));
	cr_assert(can_run_without(ops, &geo, "123"));
	cr_assert_not(can_run_without(ops, &geo, "0123"));
	ops->geometry_free(priv);
}

/* Layout version 2 (bit 17): far copies stay inside sets of
 * near * far members; the last set takes the remainder. */
Test(raid10, far2_far_sets)
{
	const struct raid_level_ops *ops = ops_for(10);
	/* 4 members: sets {0,1} and {2,3} */
	static const struct copies_case cases4[] = {
		{ 0, 2, { 0, 1 }, { 0, 8 } }, { 1, 2, { 1, 0 }, { 0, 8 } },
		{ 2, 2, { 2, 3 }, { 0, 8 } }, { 3, 2, { 3, 2 }, { 0, 8 } },
		{ 4, 2, { 0, 1 }, { 1, 9 } },
	};
	/* 5 members: sets {0,1} and {2,3,4} */
	static const struct copies_case cases5[] = {
		{ 0, 2, { 0, 1 }, { 0, 8 } }, { 1, 2, { 1, 0 }, { 0, 8 } },
		{ 2, 2, { 2, 3 }, { 0, 8 } }, { 3, 2, { 3, 4 }, { 0, 8 } },
		{ 4, 2, { 4, 2 }, { 0, 8 } }, { 5, 2, { 0, 1 }, { 1, 9 } },
	};
	struct raid_geometry geo = uniform_geo(10, 0x40201, C64, 4, 16 * C64);
	void *priv = init_ok(ops, &geo);

	cr_assert_eq(geo.array_bytes, 32 * C64, "array_bytes %llu", (ull)geo.array_bytes);
	check_copies(ops, &geo, priv, cases4, ARRAY_SIZE(cases4));
	cr_assert_not(can_run_without(ops, &geo, "01"));
	cr_assert_not(can_run_without(ops, &geo, "23"));
	cr_assert(can_run_without(ops, &geo, "12"), "sets {0,1} {2,3}: 1 and 2 share no chunk");
	cr_assert(can_run_without(ops, &geo, "03"));
	cr_assert(can_run_without(ops, &geo, "02"));
	ops->geometry_free(priv);

	geo = uniform_geo(10, 0x40201, C64, 5, 16 * C64);
	priv = init_ok(ops, &geo);
	cr_assert_eq(geo.array_bytes, 40 * C64, "array_bytes %llu", (ull)geo.array_bytes);
	check_copies(ops, &geo, priv, cases5, ARRAY_SIZE(cases5));
	cr_assert_not(can_run_without(ops, &geo, "01"));
	cr_assert_not(can_run_without(ops, &geo, "24"));
	cr_assert(can_run_without(ops, &geo, "02"));
	cr_assert(can_run_without(ops, &geo, "13"));
	ops->geometry_free(priv);
}

/* Recovery walks a member in order and asks which volume bytes each
 * position holds: every copy map() places must map back to its volume
 * offset, and no other position may claim one. */
Test(raid10, member_to_volume_inverts_map)
{
	const struct raid_level_ops *ops = ops_for(10);
	static const struct {
		uint32_t layout;
		int disks;
		uint64_t dev_chunks;
	} cases[] = {
		{ 0x102, 4, 16 },   { 0x102, 3, 17 },   { 0x103, 5, 15 },   { 0x201, 4, 16 },
		{ 0x201, 3, 17 },   { 0x301, 5, 19 },   { 0x10201, 4, 16 }, { 0x10201, 3, 15 },
		{ 0x10301, 5, 18 }, { 0x202, 8, 16 },   { 0x40201, 4, 16 }, { 0x40201, 5, 16 },
		{ 0x20201, 6, 16 }, { 0x20201, 7, 17 }, { 0x50201, 5, 16 }, { 0x102, 2, 9 },
	};

	cr_assert_not_null(ops->member_to_volume, "raid10 has no member_to_volume");
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct raid_geometry geo = uniform_geo(10, cases[i].layout, C64, cases[i].disks,
		                                       cases[i].dev_chunks * C64);
		void *priv = init_ok(ops, &geo);
		uint64_t copies_seen = 0, positions_found = 0, off;

		for (uint64_t at = 0; at < geo.array_bytes; at += C64) {
			struct raid_extent ext;
			ops->map(&geo, priv, at + 4096, &ext);
			for (int c = 0; c < ext.nr_copies; c++, copies_seen++) {
				cr_assert(ops->member_to_volume(&geo, priv, ext.copies[c].role,
				                                ext.copies[c].member_off_bytes, &off),
				          "layout 0x%x, %d disks: role %d offset %llu (copy of %llu) "
				          "holds nothing",
				          cases[i].layout, cases[i].disks, ext.copies[c].role,
				          (ull)ext.copies[c].member_off_bytes, (ull)at + 4096);
				cr_assert_eq(off, at + 4096,
				             "layout 0x%x, %d disks: role %d offset %llu gives volume "
				             "%llu, expected %llu",
				             cases[i].layout, cases[i].disks, ext.copies[c].role,
				             (ull)ext.copies[c].member_off_bytes, (ull)off,
				             (ull)at + 4096);
			}
		}
		for (int role = 0; role < geo.raid_disks; role++)
			for (uint64_t moff = 0; moff < geo.dev_bytes; moff += C64)
				positions_found += ops->member_to_volume(&geo, priv, role, moff, &off);
		cr_assert_eq(positions_found, copies_seen,
		             "layout 0x%x, %d disks: %llu member chunks hold a copy, map() "
		             "places %llu",
		             cases[i].layout, cases[i].disks, (ull)positions_found,
		             (ull)copies_seen);
		ops->geometry_free(priv);
	}
}

Test(raid1, member_to_volume_is_the_offset)
{
	const struct raid_level_ops *ops = ops_for(1);
	struct raid_geometry geo = uniform_geo(1, 0, 0, 2, MIB);
	void *priv = init_ok(ops, &geo);
	uint64_t off = 0;

	cr_assert(ops->member_to_volume(&geo, priv, 1, MIB - 4096, &off));
	cr_assert_eq(off, MIB - 4096);
	cr_assert_not(ops->member_to_volume(&geo, priv, 0, MIB, &off), "past the end");
	ops->geometry_free(priv);
}

Test(raid10, refusals)
{
	const struct raid_level_ops *ops = ops_for(10);
	struct raid_geometry geo;

	geo = uniform_geo(10, 0, C64, 4, 16 * C64);
	init_refused(ops, &geo, "layout 0 (no copies)");
	geo = uniform_geo(10, 0x103, C64, 2, 16 * C64);
	init_refused(ops, &geo, "3 near copies on 2 members");
	geo = uniform_geo(10, 0x202, C64, 3, 16 * C64);
	init_refused(ops, &geo, "4 copies on 3 members");
	geo = uniform_geo(10, 0x60102, C64, 4, 16 * C64);
	init_refused(ops, &geo, "layout version 3");
	geo = uniform_geo(10, 0x102, 0, 4, 16 * C64);
	init_refused(ops, &geo, "chunk 0");
	geo = uniform_geo(10, 0x102, C64, 4, C64 - 512);
	init_refused(ops, &geo, "members smaller than a chunk");
}

/* ---- RAID1 -------------------------------------------------------------- */

Test(raid1, three_mirrors)
{
	const struct raid_level_ops *ops = ops_for(1);
	struct raid_geometry geo = uniform_geo(1, 0, 0, 3, 3 * MIB + 4096);
	void *priv = init_ok(ops, &geo);
	struct raid_extent ext;

	cr_assert_eq(geo.array_bytes, 3 * MIB + 4096);
	ops->map(&geo, priv, 12345, &ext);
	cr_assert_eq(ext.nr_copies, 3);
	for (int c = 0; c < 3; c++) {
		cr_assert_eq(ext.copies[c].role, c);
		cr_assert_eq(ext.copies[c].member_off_bytes, 12345);
	}
	cr_assert_eq(ext.len_bytes, 3 * MIB + 4096 - 12345);

	cr_assert(can_run_without(ops, &geo, ""));
	cr_assert(can_run_without(ops, &geo, "0"));
	cr_assert(can_run_without(ops, &geo, "01"));
	cr_assert(can_run_without(ops, &geo, "12"));
	cr_assert_not(can_run_without(ops, &geo, "012"));
	ops->geometry_free(priv);

	geo = uniform_geo(1, 0, 0, 3, 0);
	init_refused(ops, &geo, "member size 0");
}

/* ---- linear ------------------------------------------------------------- */

Test(linear, three_unequal_members)
{
	const struct raid_level_ops *ops = ops_for(-1);
	struct raid_geometry geo;
	static const struct {
		uint64_t off;
		int role;
		uint64_t member_off, len;
	} cases[] = {
		{ 0, 0, 0, 1048576 },
		{ 1048575, 0, 1048575, 1 },
		{ 1048576, 1, 0, 3145728 },
		{ 1048576 + 12345, 1, 12345, 3133383 },
		{ 4194303, 1, 3145727, 1 },
		{ 4194304, 2, 0, 524288 },
		{ 4718591, 2, 524287, 1 },
	};

	memset(&geo, 0, sizeof(geo));
	geo.level = -1;
	geo.raid_disks = 3;
	geo.member_bytes[0] = 1 * MIB;
	geo.member_bytes[1] = 3 * MIB;
	geo.member_bytes[2] = 512 * KIB;
	geo.dev_bytes = geo.member_bytes[0];

	void *priv = init_ok(ops, &geo);
	cr_assert_eq(geo.array_bytes, 4718592ull, "array_bytes %llu", (ull)geo.array_bytes);
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++)
		expect_one_copy(ops, &geo, priv, cases[i].off, cases[i].role, cases[i].member_off,
		                cases[i].len);
	cr_assert(can_run_without(ops, &geo, ""));
	cr_assert_not(can_run_without(ops, &geo, "1"));
	cr_assert_not(can_run_without(ops, &geo, "2"));
	ops->geometry_free(priv);
}

/* With a chunk size in the superblock, linear.c rounds each member down to
 * whole chunks: 1 MiB + 1000 -> 1 MiB, 192 KiB + 5 -> 192 KiB, 70000 ->
 * 64 KiB. */
Test(linear, members_rounded_to_chunk)
{
	const struct raid_level_ops *ops = ops_for(-1);
	struct raid_geometry geo;

	memset(&geo, 0, sizeof(geo));
	geo.level = -1;
	geo.chunk_bytes = C64;
	geo.raid_disks = 3;
	geo.member_bytes[0] = 1048576 + 1000;
	geo.member_bytes[1] = 196608 + 5;
	geo.member_bytes[2] = 70000;
	geo.dev_bytes = geo.member_bytes[0];

	void *priv = init_ok(ops, &geo);
	cr_assert_eq(geo.array_bytes, 1310720ull, "array_bytes %llu", (ull)geo.array_bytes);
	expect_one_copy(ops, &geo, priv, 1048575, 0, 1048575, 1);
	expect_one_copy(ops, &geo, priv, 1048576, 1, 0, 196608);
	expect_one_copy(ops, &geo, priv, 1245183, 1, 196607, 1);
	expect_one_copy(ops, &geo, priv, 1245184, 2, 0, 65536);
	expect_one_copy(ops, &geo, priv, 1310719, 2, 65535, 1);
	ops->geometry_free(priv);

	memset(geo.member_bytes, 0, sizeof(geo.member_bytes));
	geo.member_bytes[0] = 1000;
	init_refused(ops, &geo, "no whole chunk anywhere");
}

/* ---- checks md makes that refuse a geometry ----------------------------- */

/* raid10.c setup_conf: "if (copies < 2 || copies > mddev->raid_disks)
 * ... unsupported raid10 layout". */
Test(md_refusals, raid10_single_copy_layout)
{
	struct raid_geometry geo = uniform_geo(10, 0x101, C64, 4, 16 * C64);
	init_refused(ops_for(10), &geo, "layout 0x101: one copy");
}

/* raid5.c setup_conf: "!mddev->new_chunk_sectors || (new_chunk_sectors << 9)
 * % PAGE_SIZE || !is_power_of_2(new_chunk_sectors)" -> invalid chunk size;
 * raid10.c setup_geo: chunk < PAGE_SIZE or not a power of 2 -> -2. */
Test(md_refusals, raid5_chunk_not_power_of_two)
{
	struct raid_geometry geo = uniform_geo(5, 2, 12 * 1024, 4, 16 * C64);
	init_refused(ops_for(5), &geo, "raid5 chunk 12 KiB");
}

Test(md_refusals, raid6_chunk_not_power_of_two)
{
	struct raid_geometry geo = uniform_geo(6, 2, 12 * 1024, 5, 16 * C64);
	init_refused(ops_for(6), &geo, "raid6 chunk 12 KiB");
}

Test(md_refusals, raid10_chunk_not_power_of_two)
{
	struct raid_geometry geo = uniform_geo(10, 0x102, 12 * 1024, 4, 16 * C64);
	init_refused(ops_for(10), &geo, "raid10 chunk 12 KiB");
}

Test(md_refusals, raid10_chunk_below_page_size)
{
	struct raid_geometry geo = uniform_geo(10, 0x102, 2048, 4, 16 * C64);
	init_refused(ops_for(10), &geo, "raid10 chunk 2 KiB");
}
