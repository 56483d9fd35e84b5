/* test_md_super090.c - unit tests for md_super090.c: a metadata 0.90
 * superblock and its bitmap superblock written by the real Linux md driver
 * (tests/data/r6-090.m2.sb090 and .bitmap, cut from member 2 of
 * tests/data/md090's raid6; expected values from `mdadm --examine`), and
 * the refusals of damaged, big-endian and reshaping superblocks.
 */
#include <criterion/criterion.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "md_super.h"

#ifndef TEST_DATA_DIR
#define TEST_DATA_DIR "tests/data"
#endif

#define FIXTURE_SUPER_OFFSET 8064u /* (8192 & ~127) - 128 for a 4 MiB member */

static void load_fixture(const char *name, uint8_t *buf, size_t want)
{
	char path[1024];
	snprintf(path, sizeof(path), "%s/%s", TEST_DATA_DIR, name);
	FILE *f = fopen(path, "rb");
	cr_assert_not_null(f, "cannot open fixture %s: %s", path, strerror(errno));
	size_t n = fread(buf, 1, want, f);
	fclose(f);
	cr_assert_eq(n, want, "fixture %s: %zu bytes, expected %zu", path, n, want);
}

static uint32_t word_at(const uint8_t *raw, unsigned index)
{
	const uint8_t *p = raw + 4u * index;
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void word_put(uint8_t *raw, unsigned index, uint32_t v)
{
	uint8_t *p = raw + 4u * index;
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

/* Re-checksum after a change, as md would have written it. */
static void resum(uint8_t *raw)
{
	word_put(raw, 38, md_super090_csum(raw));
}

/* little as a big-endian host writes it: every word in its byte order,
 * and the 64-bit counts (events 39/40, cp_events 41/42) high word first
 * (md_p.h), so each pair trades places. */
static void as_big_endian(const uint8_t *little, uint8_t *big)
{
	for (unsigned i = 0; i < MD_SB090_BYTES / 4u; i++) {
		unsigned from = i >= 39 && i <= 42 ? (i % 2 ? i + 1 : i - 1) : i;
		uint32_t w = word_at(little, from);
		big[4 * i] = (uint8_t)(w >> 24);
		big[4 * i + 1] = (uint8_t)(w >> 16);
		big[4 * i + 2] = (uint8_t)(w >> 8);
		big[4 * i + 3] = (uint8_t)w;
	}
}

static uint8_t raw[MD_SB090_BYTES];
static struct md_super sb;
static char err[256];

static void setup(void)
{
	load_fixture("r6-090.m2.sb090", raw, sizeof(raw));
}

TestSuite(md_super090, .init = setup);

Test(md_super090, decodes_what_mdadm_examine_shows)
{
	int rc = md_super090_decode(raw, FIXTURE_SUPER_OFFSET, &sb, err, sizeof(err));
	cr_assert_eq(rc, 0, "decode: %d %s", rc, err);
	char uuid[36];
	md_uuid_format(sb.set_uuid, uuid);
	cr_expect_str_eq(uuid, "0fdd59cd:079676d6:b6641343:7cc40f45");
	cr_expect_eq(sb.level, 6);
	cr_expect_eq(sb.layout, 2u, "left-symmetric");
	cr_expect_eq(sb.chunksize, 32u, "16K chunk in sectors");
	cr_expect_eq(sb.raid_disks, 4u);
	cr_expect_eq(sb.size, 8064u, "Used Dev Size 4032 KiB");
	cr_expect_eq(sb.events, 18u);
	cr_expect_eq(sb.sb_csum, 0xc9eb429fu);
	cr_expect_eq(sb.ctime, 1796330685u);
	cr_expect_eq(sb.utime, 1796330686u);
	cr_expect_eq(sb.dev_number, 2u, "this 2");
	cr_expect_eq(md_super_role(&sb), 2u, "active sync, RaidDevice 2");
	for (uint16_t r = 0; r < 4; r++)
		cr_expect_eq(sb.dev_roles[r], r);
	for (unsigned d = 4; d < MD_SB_MAX_DEV; d++)
		cr_expect_eq(sb.dev_roles[d], MD_ROLE_SPARE, "descriptor %u is empty", d);
	cr_expect_eq(sb.max_dev, MD_SB090_DISKS);
	cr_expect_eq(sb.data_offset, 0u);
	cr_expect_eq(sb.data_size, FIXTURE_SUPER_OFFSET);
	cr_expect_eq(sb.super_offset, FIXTURE_SUPER_OFFSET);
	cr_expect_eq(sb.resync_offset, MD_RESYNC_NONE, "State : clean");
	cr_expect_eq(sb.feature_map, MD_FEATURE_BITMAP_OFFSET, "Internal Bitmap : present");
	cr_expect_eq(sb.bitmap_offset, 8, "0.90's bitmap follows the superblock's 4 KiB");
	cr_expect_eq(sb.set_name[0], '\0');
}

Test(md_super090, bitmap_uuid_is_the_words_in_host_order)
{
	uint8_t bitmap_raw[MD_BITMAP_SB_BYTES];
	struct md_bitmap_super bsb;
	uint8_t want[16];

	load_fixture("r6-090.m2.bitmap", bitmap_raw, sizeof(bitmap_raw));
	cr_assert_eq(md_bitmap_super_decode(bitmap_raw, sizeof(bitmap_raw), &bsb, err, sizeof(err)),
	             0, "%s", err);
	cr_assert_eq(md_super090_decode(raw, FIXTURE_SUPER_OFFSET, &sb, err, sizeof(err)), 0);
	md_super090_bitmap_uuid(sb.set_uuid, false, want);
	cr_expect_eq(memcmp(bsb.uuid, want, 16), 0, "the bitmap's uuid is md's uuid bytes");
	cr_expect_neq(memcmp(bsb.uuid, sb.set_uuid, 16), 0,
	              "set_uuid is the printed form, not md's bytes");
	cr_expect_eq(bsb.events, 18u);
}

Test(md_super090, not_clean_resyncs_from_the_checkpoint_or_the_start)
{
	word_put(raw, 33, word_at(raw, 33) & ~1u); /* state: not clean */
	word_put(raw, 43, 1234);                   /* recovery_cp */
	resum(raw);
	cr_assert_eq(md_super090_decode(raw, FIXTURE_SUPER_OFFSET, &sb, err, sizeof(err)), 0, "%s",
	             err);
	cr_expect_eq(sb.resync_offset, 1234u, "checkpoint written with these events");
	word_put(raw, 41, word_at(raw, 41) + 1); /* cp_events_lo */
	resum(raw);
	cr_assert_eq(md_super090_decode(raw, FIXTURE_SUPER_OFFSET, &sb, err, sizeof(err)), 0);
	cr_expect_eq(sb.resync_offset, 0u, "a stale checkpoint: from the start");
}

Test(md_super090, descriptor_states_as_super_90_validate_reads_them)
{
	word_put(raw, 128 + 1 * 32 + 4, 1u);       /* descriptor 1: faulty */
	word_put(raw, 128 + 3 * 32 + 4, 0u);       /* descriptor 3: neither active nor sync */
	word_put(raw, 128 + 0 * 32 + 4, 1u << 3);  /* descriptor 0: removed (super_90_sync) */
	word_put(raw, 128 + 2 * 32 + 4, 1u << 2);  /* descriptor 2: sync without active */
	word_put(raw, 128 + 4 * 32 + 3, 5u);       /* descriptor 4: sync, raid_disk 5 of 4 */
	word_put(raw, 128 + 4 * 32 + 4, 6u);
	word_put(raw, 992 + 4, word_at(raw, 992 + 4) | 1u << 9); /* this disk write-mostly */
	resum(raw);
	cr_assert_eq(md_super090_decode(raw, FIXTURE_SUPER_OFFSET, &sb, err, sizeof(err)), 0);
	cr_expect_eq(sb.dev_roles[0], MD_ROLE_FAULTY, "a removed role is gone, not a spare");
	cr_expect_eq(sb.dev_roles[1], MD_ROLE_FAULTY);
	cr_expect_eq(sb.dev_roles[2], 2u, "md takes SYNC alone as in sync");
	cr_expect_eq(sb.dev_roles[3], MD_ROLE_SPARE);
	cr_expect_eq(sb.dev_roles[4], MD_ROLE_SPARE, "a role past raid_disks");
	cr_expect_eq(sb.devflags & MD_DEVFLAG_WRITE_MOSTLY, MD_DEVFLAG_WRITE_MOSTLY);
}

Test(md_super090, a_folded_checksum_is_taken_as_md_takes_it)
{
	/* Old kernels and mdadm on Alpha stored the sum folded to 16 bits;
	 * md compares both sides folded. */
	uint32_t sum = md_super090_csum(raw);
	uint32_t folded = (sum & 0xffffu) + (sum >> 16);
	folded = (folded & 0xffffu) + (folded >> 16);
	word_put(raw, 38, folded);
	cr_expect_eq(md_super090_decode(raw, FIXTURE_SUPER_OFFSET, &sb, err, sizeof(err)), 0, "%s",
	             err);
	word_put(raw, 38, folded + 1);
	cr_expect_eq(md_super090_decode(raw, FIXTURE_SUPER_OFFSET, &sb, err, sizeof(err)), -EBADMSG);
}

Test(md_super090, refuses_a_wrong_checksum)
{
	raw[100] ^= 1;
	cr_expect_eq(md_super090_decode(raw, FIXTURE_SUPER_OFFSET, &sb, err, sizeof(err)), -EBADMSG);
	cr_expect_not_null(strstr(err, "checksum"), "%s", err);
}

Test(md_super090, reads_a_big_endian_one_as_super0_swap_endian_does)
{
	/* The same superblock as a big-endian host writes it. */
	uint8_t big[MD_SB090_BYTES];
	as_big_endian(raw, big);
	struct md_super little;
	cr_assert_eq(md_super090_decode(raw, FIXTURE_SUPER_OFFSET, &little, err, sizeof(err)), 0);
	cr_assert(md_super090_is_big_endian(big));
	cr_assert(!md_super090_is_big_endian(raw));
	cr_assert_eq(md_super090_decode(big, FIXTURE_SUPER_OFFSET, &sb, err, sizeof(err)), 0, "%s",
	             err);
	cr_expect_eq(memcmp(&sb, &little, sizeof(sb)), 0, "decodes to the same fields");
	cr_expect_eq(sb.events, 18u);

	/* Not clean, with counts past 2^32: the checkpoint is taken only when
	 * cp_events equal events, high words included. */
	word_put(raw, 33, word_at(raw, 33) & ~1u);
	word_put(raw, 40, 7);  /* events_hi (little-endian order) */
	word_put(raw, 42, 7);  /* cp_events_hi */
	word_put(raw, 41, 18); /* cp_events_lo = events_lo */
	word_put(raw, 43, 4242);
	resum(raw);
	as_big_endian(raw, big);
	cr_assert_eq(md_super090_decode(big, FIXTURE_SUPER_OFFSET, &sb, err, sizeof(err)), 0, "%s",
	             err);
	cr_expect_eq(sb.events, (7ull << 32) | 18u);
	cr_expect_eq(sb.resync_offset, 4242u);
	word_put(raw, 42, 8); /* cp_events_hi: now unequal */
	resum(raw);
	as_big_endian(raw, big);
	cr_assert_eq(md_super090_decode(big, FIXTURE_SUPER_OFFSET, &sb, err, sizeof(err)), 0, "%s",
	             err);
	cr_expect_eq(sb.resync_offset, 0u, "cp_events differ in the high word: from the start");
	uint8_t bitmap_uuid[16];
	md_super090_bitmap_uuid(sb.set_uuid, true, bitmap_uuid);
	cr_expect_eq(memcmp(bitmap_uuid, sb.set_uuid, 16), 0,
	             "a big-endian host's uuid bytes are the words as printed");
}

Test(md_super090, refuses_reshaping_and_corrupt)
{
	uint8_t copy[MD_SB090_BYTES];
	memcpy(copy, raw, sizeof(copy));
	word_put(copy, 2, 91);
	resum(copy);
	cr_expect_eq(md_super090_decode(copy, FIXTURE_SUPER_OFFSET, &sb, err, sizeof(err)),
	             -EOPNOTSUPP);
	cr_expect_not_null(strstr(err, "reshape"), "%s", err);

	const struct {
		unsigned word;
		uint32_t value;
		const char *named;
	} corrupt[] = {
		{ 10, 0, "raid_disks" },  { 10, 28, "raid_disks" }, { 65, 1000, "chunk_size" },
		{ 992, 27, "number" },    { 1, 1, "major" },        { 2, 89, "0.89" },
	};
	for (size_t i = 0; i < sizeof(corrupt) / sizeof(corrupt[0]); i++) {
		memcpy(copy, raw, sizeof(copy));
		word_put(copy, corrupt[i].word, corrupt[i].value);
		resum(copy);
		cr_expect_eq(md_super090_decode(copy, FIXTURE_SUPER_OFFSET, &sb, err, sizeof(err)),
		             -EINVAL, "word %u = %u", corrupt[i].word, corrupt[i].value);
		cr_expect_not_null(strstr(err, corrupt[i].named), "word %u: %s", corrupt[i].word, err);
	}
}

Test(md_super090, data_size_capped_at_4_tib_for_sized_levels_only)
{
	uint64_t far = 5ull << 32; /* a 10 TiB member */
	cr_assert_eq(md_super090_decode(raw, far, &sb, err, sizeof(err)), 0);
	cr_expect_eq(sb.data_size, (2ull << 32) - 2, "super_90_load's cap: 2^32 KiB less a sector");
	cr_expect_eq(sb.super_offset, far);
	word_put(raw, 7, (uint32_t)-1); /* linear: no size, the whole room */
	resum(raw);
	cr_assert_eq(md_super090_decode(raw, far, &sb, err, sizeof(err)), 0);
	cr_expect_eq(sb.data_size, far);
}
