/* test_badblocks.c - member_badblocks.c: md's bad block log read from a
 * member file (entries as md's super_1_sync writes them) and looked up;
 * member_read refuses logged sectors with -ENODATA; logs md would not read,
 * or whose entries lie past the member, are refused; writes clear logged
 * sectors, rebuilds add them, and syncs store the log as md writes it.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdbool.h>
#include <sys/uio.h>
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

/* The entries md would read back from the member's log now. */
static int log_on_member(uint64_t (*out)[2], int max)
{
	uint8_t log[4096];
	int fd = open(member_path, O_RDONLY);
	cr_assert(fd >= 0);
	cr_assert_eq(pread(fd, log, sizeof(log), (8 + LOG_OFFSET_SECTORS) * 512), (ssize_t)sizeof(log));
	close(fd);
	int n = 0;
	uint64_t sector, count;
	while (n < max && md_badblock_entry_decode(log + 8 * n, &sector, &count)) {
		out[n][0] = sector;
		out[n][1] = count;
		n++;
	}
	return n;
}

Test(badblocks, writes_clear_whole_sectors_they_cover)
{
	static const uint64_t entries[][2] = { { DATA_OFFSET_SECTORS + 100, 16 } };
	uint8_t buf[8 * 512];
	uint64_t bytes;

	member_with_log(entries, 1, 0, true);
	memset(buf, 0x5a, sizeof(buf));
	/* Half a sector: that sector still holds stale bytes. */
	cr_assert_eq(member_write(&member, buf, 256, 100 * 512), 0);
	cr_assert(member_badblocks_hit(&member, 100 * 512, 512), "a partly written sector stays");
	/* The middle four sectors: the range splits in two. */
	cr_assert_eq(member_write(&member, buf, 4 * 512, 104 * 512), 0);
	cr_assert_eq(member_badblocks_count(&member, &bytes), 2);
	cr_assert_eq(bytes, 12 * 512);
	cr_assert_eq(member_read(&member, buf, 4 * 512, 104 * 512), 0, "made good: read again");
	cr_assert_eq(member_read(&member, buf, 512, 103 * 512), -ENODATA);
	cr_assert_eq(member_read(&member, buf, 512, 108 * 512), -ENODATA);
	/* A vectored write over the rest of the second part. */
	struct iovec iov[2] = { { buf, 4 * 512 }, { buf, 4 * 512 } };
	cr_assert_eq(member_writev(&member, iov, 2, 108 * 512), 0);
	cr_assert_eq(member_badblocks_count(&member, &bytes), 1);
	cr_assert_eq(bytes, 4 * 512);
}

Test(badblocks, shift_clears_whole_units_only)
{
	/* Units of 8 sectors: a write of 8 sectors that straddles two units
	 * covers neither. */
	static const uint64_t entries[][2] = { { (DATA_OFFSET_SECTORS + 64) / 8, 2 } };
	uint8_t buf[8 * 512] = { 0 };
	uint64_t bytes;

	member_with_log(entries, 1, 3, true);
	cr_assert_eq(member_write(&member, buf, sizeof(buf), 68 * 512), 0);
	cr_assert_eq(member_badblocks_count(&member, &bytes), 1);
	cr_assert_eq(bytes, 16 * 512);
	cr_assert_eq(member_write(&member, buf, sizeof(buf), 72 * 512), 0);
	cr_assert_eq(member_badblocks_count(&member, &bytes), 1);
	cr_assert_eq(bytes, 8 * 512, "the second unit is good, the first still logged");
	cr_assert_eq(member_read(&member, buf, 512, 72 * 512), 0);
	cr_assert_eq(member_read(&member, buf, 512, 71 * 512), -ENODATA);
}

Test(badblocks, sync_stores_the_log_as_md_writes_it)
{
	/* One range before the data area (metadata: kept as it is), one
	 * longer than md's longest entry, one that a write clears. */
	static const uint64_t entries[][2] = {
		{ 40, 8 }, { DATA_OFFSET_SECTORS + 1000, 512 }, { DATA_OFFSET_SECTORS + 1512, 300 },
		{ DATA_OFFSET_SECTORS + 100, 8 },
	};
	uint64_t got[8][2];
	uint8_t buf[8 * 512] = { 0 };

	member_with_log(entries, 4, 0, true);
	cr_assert_eq(member_write(&member, buf, sizeof(buf), 100 * 512), 0);
	cr_assert_eq(log_on_member(got, 8), 4, "nothing stored before a sync");
	cr_assert_eq(member_badblocks_feature(&member), 1, "the stored log has entries");
	cr_assert_eq(member_sync(&member), 0);
	/* Sorted, the two touching ranges merged and cut at 512 sectors. */
	cr_assert_eq(log_on_member(got, 8), 3);
	cr_assert_eq(got[0][0], 40);
	cr_assert_eq(got[0][1], 8);
	cr_assert_eq(got[1][0], DATA_OFFSET_SECTORS + 1000);
	cr_assert_eq(got[1][1], 512);
	cr_assert_eq(got[2][0], DATA_OFFSET_SECTORS + 1512);
	cr_assert_eq(got[2][1], 300);
	/* The rest made good: the stored log is empty but for the metadata
	 * entry, so the feature bit stays. */
	uint8_t big[812 * 512];
	memset(big, 0, sizeof(big));
	cr_assert_eq(member_write(&member, big, sizeof(big), 1000 * 512), 0);
	cr_assert_eq(member_sync(&member), 0);
	cr_assert_eq(log_on_member(got, 8), 1);
	cr_assert_eq(member_badblocks_feature(&member), 1);
}

Test(badblocks, emptied_log_drops_the_feature)
{
	static const uint64_t entries[][2] = { { DATA_OFFSET_SECTORS + 100, 8 } };
	uint64_t got[2][2];
	uint8_t buf[8 * 512] = { 0 };

	member_with_log(entries, 1, 0, true);
	cr_assert_eq(member_write(&member, buf, sizeof(buf), 100 * 512), 0);
	cr_assert_eq(member_badblocks_feature(&member), 1, "cleared, not stored yet: the bit stays");
	cr_assert_eq(member_sync(&member), 0);
	cr_assert_eq(log_on_member(got, 2), 0);
	cr_assert_eq(member_badblocks_feature(&member), -1, "stored empty: the bit goes");
}

Test(badblocks, split_that_overflows_the_log_keeps_the_range)
{
	/* A log of one sector holds 64 entries: fill it, then try to cut a
	 * hole in one range, which would need a 65th. */
	static uint64_t entries[64][2];
	uint8_t buf[512] = { 0 };
	uint64_t bytes;

	for (int i = 0; i < 64; i++) {
		entries[i][0] = DATA_OFFSET_SECTORS + 100 + 10 * (uint64_t)i;
		entries[i][1] = 4;
	}
	char err[256] = "";
	cr_assert_eq(member_with_log_rc(entries, 64, 0, true, err, sizeof(err)), 0, "%s", err);
	member.sb.bblog_size = 1;
	cr_assert_eq(member_badblocks_load(&member, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(member_badblocks_count(&member, &bytes), 64);
	cr_assert_eq(member_write(&member, buf, 512, 101 * 512), 0);
	cr_assert_eq(member_badblocks_count(&member, &bytes), 64, "kept whole, as md does");
	cr_assert_eq(bytes, 64 * 4 * 512);
	cr_assert_eq(member_write(&member, buf, 512, 100 * 512), 0);
	cr_assert_eq(member_badblocks_count(&member, &bytes), 64, "trimmed at its start: no split");
	cr_assert_eq(bytes, (64 * 4 - 1) * 512);
}

Test(badblocks, add_logs_whole_units_and_stores_them)
{
	/* No feature bit, but room for a log (as mdadm leaves): empty, and
	 * ready to take entries. Units of 8 sectors: 512 bytes inside one
	 * unit log all of it. */
	uint64_t got[4][2], bytes;
	uint8_t buf[512];

	member_with_log(NULL, 0, 3, false);
	cr_assert_not_null(member.badblocks, "a member with room gets an empty log");
	cr_assert_eq(member_badblocks_count(&member, &bytes), 0);
	cr_assert_eq(member_badblocks_add(&member, 100 * 512, 512), 0);
	cr_assert_eq(member_badblocks_count(&member, &bytes), 1);
	cr_assert_eq(bytes, 8 * 512);
	cr_assert_eq(member_read(&member, buf, 512, 96 * 512), -ENODATA, "the unit's first sector");
	cr_assert_eq(member_read(&member, buf, 512, 104 * 512), 0, "the next unit");
	/* Next to it: one range, one entry. */
	cr_assert_eq(member_badblocks_add(&member, 104 * 512, 4096), 0);
	cr_assert_eq(member_badblocks_count(&member, &bytes), 1);
	cr_assert_eq(bytes, 16 * 512);
	cr_assert_eq(member_badblocks_feature(&member), 0, "not stored yet: no bit to point at it");
	cr_assert_eq(member_sync(&member), 0);
	cr_assert_eq(member_badblocks_feature(&member), 1);
	cr_assert_eq(log_on_member(got, 4), 1);
	cr_assert_eq(got[0][0], (DATA_OFFSET_SECTORS + 96) / 8);
	cr_assert_eq(got[0][1], 2);
}

Test(badblocks, add_without_room_or_past_capacity_refused)
{
	static uint64_t entries[64][2];
	char err[256] = "";
	uint64_t bytes;

	member_with_log(NULL, 0, 0, false);
	member.sb.bblog_offset = 0; /* no room, as raidfuse create leaves */
	cr_assert_eq(member_badblocks_load(&member, err, sizeof(err)), 0, "%s", err);
	cr_assert_null(member.badblocks);
	cr_assert_eq(member_badblocks_add(&member, 0, 512), -ENOSPC);
	member_teardown();

	for (int i = 0; i < 64; i++) {
		entries[i][0] = DATA_OFFSET_SECTORS + 100 + 10 * (uint64_t)i;
		entries[i][1] = 4;
	}
	cr_assert_eq(member_with_log_rc(entries, 64, 0, true, err, sizeof(err)), 0, "%s", err);
	member.sb.bblog_size = 1;
	cr_assert_eq(member_badblocks_load(&member, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(member_badblocks_add(&member, 4096 * 512, 512), -ENOSPC, "a 65th entry");
	cr_assert_eq(member_badblocks_add(&member, 104 * 512, 512), 0, "joins a range: fits");
	cr_assert_eq(member_badblocks_count(&member, &bytes), 64);
	cr_assert_eq(bytes, (64 * 4 + 1) * 512);
}

Test(badblocks, log_over_the_superblock_or_data_refused)
{
	char err[256] = "";

	member_with_log(NULL, 0, 0, true);
	member.sb.bblog_offset = 4; /* inside the superblock's 4 KiB */
	cr_assert_eq(member_badblocks_load(&member, err, sizeof(err)), -EINVAL);
	cr_assert(strstr(err, "overlaps") != NULL, "message: %s", err);
	member.sb.bblog_offset = DATA_OFFSET_SECTORS - 8 - 4; /* into the data area */
	cr_assert_eq(member_badblocks_load(&member, err, sizeof(err)), -EINVAL);
	/* Without the feature bit such room is not used, and not refused. */
	member.sb.feature_map = 0;
	cr_assert_eq(member_badblocks_load(&member, err, sizeof(err)), 0, "%s", err);
	cr_assert_null(member.badblocks);
}

/* A sync that another thread's sync overtakes: the first stops in its data
 * sync (holding the list it took) until released. */
static sem_t in_data_sync, release_data_sync;
static atomic_int data_syncs;
static atomic_bool second_done;

static int held_data_sync(struct member *m)
{
	if (atomic_fetch_add(&data_syncs, 1) == 0) {
		sem_post(&in_data_sync);
		sem_wait(&release_data_sync);
	}
	return fdatasync(m->fd) < 0 ? -errno : 0;
}

static void *first_sync(void *arg)
{
	(void)arg;
	member_badblocks_sync(&member, held_data_sync);
	return NULL;
}

static void *second_sync(void *arg)
{
	(void)arg;
	member_sync(&member);
	atomic_store(&second_done, true);
	return NULL;
}

Test(badblocks, sync_waits_for_a_store_under_way)
{
	/* Thread 1 took the list (with the range added) and sits in its data
	 * sync; a second add's member_sync must not return before the log
	 * on the member holds both: a rebuild would go on to record its
	 * progress past bytes the log does not name yet. */
	uint64_t got[4][2];
	pthread_t t1, t2;

	member_with_log(NULL, 0, 0, false);
	sem_init(&in_data_sync, 0, 0);
	sem_init(&release_data_sync, 0, 0);
	atomic_store(&data_syncs, 0);
	atomic_store(&second_done, false);
	cr_assert_eq(member_badblocks_add(&member, 100 * 512, 512), 0);
	cr_assert_eq(pthread_create(&t1, NULL, first_sync, NULL), 0);
	sem_wait(&in_data_sync);
	cr_assert_eq(member_badblocks_add(&member, 300 * 512, 512), 0);
	cr_assert_eq(member_badblocks_feature(&member), 0, "nothing stored yet: the bit waits");
	cr_assert_eq(pthread_create(&t2, NULL, second_sync, NULL), 0);
	usleep(100 * 1000);
	cr_assert_not(atomic_load(&second_done), "returned with the log not yet written");
	sem_post(&release_data_sync);
	pthread_join(t1, NULL);
	pthread_join(t2, NULL);
	cr_assert_eq(log_on_member(got, 4), 2, "both ranges in the log on the member");
	cr_assert_eq(member_badblocks_feature(&member), 1);
}
