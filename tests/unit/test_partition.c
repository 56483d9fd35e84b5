/* test_partition.c - partition.c: a GPT written by sfdisk (the first 34
 * sectors of a 100 MiB disk, tests/data/gpt-100m.head) read back with the
 * numbers and extents sfdisk gave; damage to its header or entries is
 * caught by their CRC32; MBRs with primary partitions and a chain of
 * logical ones (numbered from 5, as Linux does), chains that loop or lead
 * off the disk, partitions past the end, boot sectors that are no
 * partition table; and the FILE@N names. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "partition.h"

#define GPT_DISK_BYTES (100ull << 20)
#define MBR_DISK_BYTES (64ull << 20)

static char image_path[64];
static int image_fd = -1;
static char err[512];
static struct partition_table table;

static void image_open(void)
{
	snprintf(image_path, sizeof(image_path), "/tmp/test_partition.XXXXXX");
	image_fd = mkstemp(image_path);
	cr_assert(image_fd >= 0);
	unlink(image_path);
}

static void image_close(void)
{
	if (image_fd >= 0)
		close(image_fd);
	image_fd = -1;
}

TestSuite(partition, .init = image_open, .fini = image_close);

static void image_put(const void *buf, size_t len, uint64_t off)
{
	cr_assert_eq(pwrite(image_fd, buf, len, (off_t)off), (ssize_t)len);
}

static void gpt_fixture(void)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/gpt-100m.head", TEST_DATA_DIR);
	FILE *f = fopen(path, "rb");
	cr_assert(f, "cannot open %s", path);
	uint8_t head[17408];
	cr_assert_eq(fread(head, 1, sizeof(head), f), sizeof(head));
	fclose(f);
	image_put(head, sizeof(head), 0);
	/* The rest of the disk reads as zeros: no backup GPT at its end. */
	cr_assert_eq(ftruncate(image_fd, (off_t)GPT_DISK_BYTES), 0);
}

static int table_read(uint64_t disk_bytes)
{
	err[0] = '\0';
	return partition_table_read(image_fd, disk_bytes, 0, "disk.img", &table, err, sizeof(err));
}

Test(partition, gpt_as_sfdisk_wrote_it)
{
	gpt_fixture();
	cr_assert_eq(table_read(GPT_DISK_BYTES), 0, "%s", err);
	cr_assert_str_eq(table.scheme, "gpt");
	cr_assert_eq(table.nr, 2);
	const struct partition *p1 = partition_find(&table, 1), *p3 = partition_find(&table, 3);
	cr_assert(p1 && p3);
	cr_assert_null(partition_find(&table, 2)); /* an unused entry keeps its number free */
	cr_assert_eq(p1->start_bytes, 2048ull * 512);
	cr_assert_eq(p1->len_bytes, 16384ull * 512);
	cr_assert_eq(p3->start_bytes, 59392ull * 512);
	cr_assert_eq(p3->len_bytes, 81920ull * 512);
	char numbers[64];
	partition_numbers_text(&table, numbers, sizeof(numbers));
	cr_assert_str_eq(numbers, "1, 3");
}

Test(partition, gpt_header_damage_is_caught)
{
	gpt_fixture();
	uint8_t byte = 0x7f;
	image_put(&byte, 1, 512 + 40); /* first usable LBA, under the header CRC */
	cr_assert_eq(table_read(GPT_DISK_BYTES), -EINVAL);
	cr_assert(strstr(err, "GPT header's checksum is wrong"), "%s", err);
	cr_assert(strstr(err, "no backup header at the disk's last sector"), "%s", err);
}

/* The fixture's primary, copied to the end as a backup GPT would be
 * (header at the last sector naming itself, entries before it), the
 * primary then damaged: the table is read from the backup, and says so.
 * The backup's fields are set as the UEFI spec lays them out; sfdisk's
 * own backup is read in tests/integration/partitions.sh. */
static uint32_t crc32_reference(const uint8_t *p, size_t len)
{
	uint32_t crc = 0xffffffffu;
	for (size_t i = 0; i < len; i++) {
		crc ^= p[i];
		for (int bit = 0; bit < 8; bit++)
			crc = crc & 1u ? (crc >> 1) ^ 0xedb88320u : crc >> 1;
	}
	return ~crc;
}

static void put_le64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static void gpt_backup_from_primary(uint64_t header_lba)
{
	uint8_t header[512], entries[16384];
	cr_assert_eq(pread(image_fd, header, sizeof(header), 512), (ssize_t)sizeof(header));
	cr_assert_eq(pread(image_fd, entries, sizeof(entries), 1024), (ssize_t)sizeof(entries));
	uint64_t last_lba = GPT_DISK_BYTES / 512 - 1;
	put_le64(header + 24, header_lba); /* MyLBA */
	put_le64(header + 32, 1);          /* AlternateLBA: the primary */
	put_le64(header + 72, last_lba - 32); /* PartitionEntryLBA */
	memset(header + 16, 0, 4);
	uint32_t crc = crc32_reference(header, 92);
	for (int i = 0; i < 4; i++)
		header[16 + i] = (uint8_t)(crc >> (8 * i));
	image_put(entries, sizeof(entries), (last_lba - 32) * 512);
	image_put(header, sizeof(header), last_lba * 512);
}

Test(partition, gpt_backup_serves_when_the_primary_is_damaged)
{
	gpt_fixture();
	gpt_backup_from_primary(GPT_DISK_BYTES / 512 - 1);
	cr_assert_eq(table_read(GPT_DISK_BYTES), 0, "%s", err);
	cr_assert_not(table.from_backup, "an intact primary was passed over");
	uint8_t byte = 0x7f;
	image_put(&byte, 1, 512 + 40);
	cr_assert_eq(table_read(GPT_DISK_BYTES), 0, "%s", err);
	cr_assert(table.from_backup);
	cr_assert_str_eq(table.scheme, "gpt");
	const struct partition *p3 = partition_find(&table, 3);
	cr_assert(p3 && table.nr == 2);
	cr_assert_eq(p3->start_bytes, 59392ull * 512);
	cr_assert_eq(p3->len_bytes, 81920ull * 512);
	/* A primary wiped whole (no signature) gives way to it too. */
	uint8_t zeros[512] = { 0 };
	image_put(zeros, sizeof(zeros), 512);
	cr_assert_eq(table_read(GPT_DISK_BYTES), 0, "%s", err);
	cr_assert(table.from_backup);
}

Test(partition, gpt_backup_damaged_too)
{
	gpt_fixture();
	/* A "backup" that names another sector is not taken. */
	gpt_backup_from_primary(7);
	uint8_t byte = 0x7f;
	image_put(&byte, 1, 512 + 40);
	cr_assert_eq(table_read(GPT_DISK_BYTES), -EINVAL);
	cr_assert(strstr(err, "GPT header's checksum is wrong") &&
	          strstr(err, "says it lies at sector 7"), "%s", err);
	cr_assert(strncmp(strstr(err, "; ") + 2, "disk.img", 8) != 0,
	          "the disk is named twice: %s", err);
	/* The primary wiped whole: the MBR announces a GPT, so the backup's
	 * fault is what the message names. */
	uint8_t zeros[512] = { 0 };
	image_put(zeros, sizeof(zeros), 512);
	cr_assert_eq(table_read(GPT_DISK_BYTES), -EINVAL);
	cr_assert(strstr(err, "says it lies at sector 7") &&
	          strstr(err, "no GPT header at sector 1"), "%s", err);
}

Test(partition, gpt_entry_damage_is_caught)
{
	gpt_fixture();
	uint8_t byte = 0x01;
	image_put(&byte, 1, 1024 + 32); /* partition 1's first LBA */
	cr_assert_eq(table_read(GPT_DISK_BYTES), -EINVAL);
	cr_assert(strstr(err, "checksum of the GPT's entries is wrong"), "%s", err);
}

Test(partition, gpt_partition_past_a_cut_image)
{
	gpt_fixture();
	/* The same table on a disk cut to 50 MiB: partition 3 ends past it. */
	cr_assert_eq(table_read(50ull << 20), -EINVAL);
	cr_assert(strstr(err, "partition 3") && strstr(err, "past the end"), "%s", err);
}

static void mbr_entry(uint8_t *sector, int slot, uint8_t type, uint32_t start, uint32_t count)
{
	uint8_t *e = sector + 446 + slot * 16;
	e[4] = type;
	for (int i = 0; i < 4; i++) {
		e[8 + i] = (uint8_t)(start >> (8 * i));
		e[12 + i] = (uint8_t)(count >> (8 * i));
	}
}

static void mbr_put(uint8_t *sector, uint64_t at_sector)
{
	sector[510] = 0x55;
	sector[511] = 0xaa;
	image_put(sector, 512, at_sector * 512);
}

/* 1 primary at 2048 (8192 sectors), slot 2 empty, an extended partition
 * at 10240 holding logical partitions at 12288 and 55296 (40960 each). */
static void mbr_with_logical(uint32_t second_link)
{
	uint8_t mbr[512] = { 0 }, ebr1[512] = { 0 }, ebr2[512] = { 0 };
	mbr_entry(mbr, 0, 0x83, 2048, 8192);
	mbr_entry(mbr, 2, 0x05, 10240, 120832);
	mbr_put(mbr, 0);
	mbr_entry(ebr1, 0, 0xfd, 2048, 40960);        /* relative to this EBR */
	mbr_entry(ebr1, 1, 0x05, second_link, 43008); /* relative to the extended one */
	mbr_put(ebr1, 10240);
	mbr_entry(ebr2, 0, 0xfd, 2048, 40960);
	mbr_put(ebr2, 10240 + 43008);
	cr_assert_eq(ftruncate(image_fd, (off_t)MBR_DISK_BYTES), 0);
}

Test(partition, mbr_primary_and_logical)
{
	mbr_with_logical(43008);
	cr_assert_eq(table_read(MBR_DISK_BYTES), 0, "%s", err);
	cr_assert_str_eq(table.scheme, "mbr");
	cr_assert_eq(table.nr, 3);
	const struct partition *p1 = partition_find(&table, 1), *p5 = partition_find(&table, 5),
	                       *p6 = partition_find(&table, 6);
	cr_assert(p1 && p5 && p6);
	cr_assert_null(partition_find(&table, 3)); /* the extended container is no member */
	cr_assert_eq(p1->start_bytes, 2048ull * 512);
	cr_assert_eq(p5->start_bytes, 12288ull * 512);
	cr_assert_eq(p6->start_bytes, 55296ull * 512);
	cr_assert_eq(p6->len_bytes, 40960ull * 512);
}

Test(partition, mbr_chain_that_loops)
{
	mbr_with_logical(0);
	/* A link of 0 ends the chain (no second logical partition). */
	cr_assert_eq(table_read(MBR_DISK_BYTES), 0, "%s", err);
	cr_assert_eq(table.nr, 2);
	/* A second EBR that links back to itself. */
	uint8_t ebr2[512] = { 0 };
	mbr_with_logical(43008);
	mbr_entry(ebr2, 0, 0xfd, 2048, 40960);
	mbr_entry(ebr2, 1, 0x05, 43008, 43008);
	mbr_put(ebr2, 10240 + 43008);
	cr_assert_eq(table_read(MBR_DISK_BYTES), -EINVAL);
	cr_assert(strstr(err, "loops"), "%s", err);
}

Test(partition, mbr_chain_off_the_disk)
{
	mbr_with_logical(43008);
	uint8_t mbr[512] = { 0 };
	mbr_entry(mbr, 0, 0x83, 2048, 8192);
	mbr_entry(mbr, 2, 0x05, 200000, 1000); /* past the 131072 sectors */
	mbr_put(mbr, 0);
	cr_assert_eq(table_read(MBR_DISK_BYTES), -EINVAL);
	cr_assert(strstr(err, "past the end"), "%s", err);
}

Test(partition, no_table_and_boot_sectors)
{
	cr_assert_eq(ftruncate(image_fd, (off_t)MBR_DISK_BYTES), 0);
	cr_assert_eq(table_read(MBR_DISK_BYTES), -ENOENT);
	cr_assert(strstr(err, "no partition table"), "%s", err);
	/* A FAT boot sector ends in 55 aa too, but its "entries" are code. */
	uint8_t boot[512];
	memset(boot, 0x4e, sizeof(boot));
	mbr_put(boot, 0);
	cr_assert_eq(table_read(MBR_DISK_BYTES), -ENOENT, "%s", err);
	/* A protective MBR without the GPT it announces. */
	uint8_t mbr[512] = { 0 };
	mbr_entry(mbr, 0, 0xee, 1, 131071);
	mbr_put(mbr, 0);
	cr_assert_eq(table_read(MBR_DISK_BYTES), -EINVAL);
	cr_assert(strstr(err, "no GPT header"), "%s", err);
}

Test(partition, spec_names)
{
	char file[16];
	unsigned number;

	cr_assert(partition_spec_split("disk.img@3", file, sizeof(file), &number));
	cr_assert_str_eq(file, "disk.img");
	cr_assert_eq(number, 3);
	cr_assert(partition_spec_split("/a@b/disk@128", file, sizeof(file), &number));
	cr_assert_str_eq(file, "/a@b/disk");
	cr_assert_eq(number, 128);
	/* FILE must fit, with its NUL. */
	cr_assert_not(partition_spec_split("0123456789abcdef@1", file, sizeof(file), &number));
	cr_assert(partition_spec_split("0123456789abcde@1", file, sizeof(file), &number));
	cr_assert_str_eq(file, "0123456789abcde");
	cr_assert_not(partition_spec_split("disk.img", file, sizeof(file), &number));
	cr_assert_not(partition_spec_split("disk.img@0", file, sizeof(file), &number));
	cr_assert_not(partition_spec_split("disk.img@03", file, sizeof(file), &number));
	cr_assert_not(partition_spec_split("disk.img@1000", file, sizeof(file), &number));
	cr_assert_not(partition_spec_split("disk.img@3x", file, sizeof(file), &number));
	cr_assert_not(partition_spec_split("@3", file, sizeof(file), &number));
	cr_assert_not(partition_spec_split("dir/@3", file, sizeof(file), &number));
	cr_assert_not(partition_spec_split("disk.img@", file, sizeof(file), &number));
}
