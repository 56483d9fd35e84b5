/* test_badblocks.c - member_badblocks.c: md's bad block log read from a
 * member file (entries as md's super_1_sync writes them) and looked up;
 * member_read refuses logged sectors with -ENODATA; logs md would not read,
 * or whose entries lie past the member, are refused.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "md_super.h"
#include "member.h"
#include "member_badblocks.h"

#define FILE_BYTES (4u << 20)
#define DATA_OFFSET_SECTORS 2048u
#define LOG_OFFSET_SECTORS 8       /* from the superblock, as mdadm puts it */

static char member_path[64];
static struct member member;

static void put_le64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/* A member file whose log (at sector 8 + 8) holds the given entries,
 * absolute sectors and counts in units of 2^shift sectors, and whose
 * superblock fields say so (set in memory: the loader reads only the log). */
static int member_with_log_rc(const uint64_t (*entries)[2], int nr, unsigned shift, bool feature,
                              char *err, size_t errlen)
{
	uint8_t log[4096];

	snprintf(member_path, sizeof(member_path), "/tmp/rf-badblocks.XXXXXX");
	int fd = mkstemp(member_path);
	cr_assert(fd >= 0);
	cr_assert_eq(ftruncate(fd, FILE_BYTES), 0);
	memset(log, 0xff, sizeof(log));
	for (int i = 0; i < nr; i++)
		put_le64(log + 8 * i, entries[i][0] << 10 | entries[i][1]);
	cr_assert_eq(pwrite(fd, log, sizeof(log), (8 + LOG_OFFSET_SECTORS) * 512), (ssize_t)sizeof(log));
	close(fd);
	cr_assert_eq(member_open(&member, member_path, false, err, errlen), 0, "%s", err);
	member.sb.feature_map = feature ? MD_FEATURE_BAD_BLOCKS : 0;
	member.sb.super_offset = 8;
	member.sb.data_offset = DATA_OFFSET_SECTORS;
	member.sb.bblog_offset = LOG_OFFSET_SECTORS;
	member.sb.bblog_size = 8;
	member.sb.bblog_shift = (uint8_t)shift;
	member.data_offset_bytes = DATA_OFFSET_SECTORS * 512u;
	return member_badblocks_load(&member, err, errlen);
}

static void member_with_log(const uint64_t (*entries)[2], int nr, unsigned shift, bool feature)
{
	char err[256] = "";
	cr_assert_eq(member_with_log_rc(entries, nr, shift, feature, err, sizeof(err)), 0, "%s",
	             err);
}

static void member_teardown(void)
{
	member_close(&member);
	unlink(member_path);
}

TestSuite(badblocks, .fini = member_teardown);

Test(badblocks, entries_become_data_area_ranges)
{
	/* 16 sectors at data sector 100; one before the data area (metadata:
	 * ignored); one straddling the data offset (its data part kept). */
	static const uint64_t entries[][2] = {
		{ DATA_OFFSET_SECTORS + 100, 16 }, { 40, 8 }, { DATA_OFFSET_SECTORS - 4, 8 },
	};
	uint64_t bytes;

	member_with_log(entries, 3, 0, true);
	cr_assert_eq(member_badblocks_count(&member, &bytes), 2);
	cr_assert_eq(bytes, (16 + 4) * 512);
	cr_assert(member_badblocks_hit(&member, 100 * 512, 512));
	cr_assert(member_badblocks_hit(&member, 115 * 512, 4096), "overlapping the end");
	cr_assert_not(member_badblocks_hit(&member, 116 * 512, 4096), "just after");
	cr_assert_not(member_badblocks_hit(&member, 96 * 512, 4 * 512), "just before");
	cr_assert(member_badblocks_hit(&member, 0, 512), "the straddling entry's data part");
	cr_assert_not(member_badblocks_hit(&member, 4 * 512, 512));
}

Test(badblocks, shift_scales_sectors_and_counts)
{
	/* Shift 3: units of 8 sectors (4 KiB). */
	static const uint64_t entries[][2] = { { (DATA_OFFSET_SECTORS + 64) / 8, 2 } };
	uint64_t bytes;

	member_with_log(entries, 1, 3, true);
	cr_assert_eq(member_badblocks_count(&member, &bytes), 1);
	cr_assert_eq(bytes, 16 * 512);
	cr_assert(member_badblocks_hit(&member, 64 * 512 + 8192 - 1, 1));
	cr_assert_not(member_badblocks_hit(&member, 64 * 512 + 8192, 512));
}

Test(badblocks, no_feature_bit_no_log)
{
	static const uint64_t entries[][2] = { { DATA_OFFSET_SECTORS + 100, 16 } };
	uint64_t bytes;

	member_with_log(entries, 1, 0, false);
	cr_assert_eq(member_badblocks_count(&member, &bytes), 0, "md reads the log only with the bit");
	cr_assert_not(member_badblocks_hit(&member, 100 * 512, 512));
}

Test(badblocks, reads_refused_with_enodata)
{
	static const uint64_t entries[][2] = { { DATA_OFFSET_SECTORS + 100, 16 } };
	uint8_t buf[16 * 512];

	member_with_log(entries, 1, 0, true);
	cr_assert_eq(member_read(&member, buf, 512, 107 * 512), -ENODATA,
	             "a logged sector is not read");
	cr_assert_eq(member_read(&member, buf, 4096, 96 * 512), -ENODATA, "overlapping its start");
	cr_assert_eq(member_read(&member, buf, 512, 99 * 512), 0);
	cr_assert_eq(member_read(&member, buf, 512, 116 * 512), 0);
	cr_assert_eq(atomic_load(&member.read_errors), 0, "not counted as device errors");
}

Test(badblocks, entry_past_the_member_refused)
{
	/* With shift 20 a sector unit is 512 MiB: past this 4 MiB member,
	 * and shifted unchecked it would wrap. */
	static const uint64_t entries[][2] = { { (uint64_t)1 << 50, 8 } };
	char err[256] = "";

	cr_assert_eq(member_with_log_rc(entries, 1, 20, true, err, sizeof(err)), -EINVAL);
	cr_assert(strstr(err, "corrupt") != NULL, "message: %s", err);
}

Test(badblocks, bad_log_fields_refused)
{
	char err[256] = "";

	member_with_log(NULL, 0, 0, true);
	member.sb.bblog_size = 64; /* more than the page md reads */
	cr_assert_eq(member_badblocks_load(&member, err, sizeof(err)), -EINVAL);
	cr_assert(strstr(err, "bad block") != NULL, "message: %s", err);
}
