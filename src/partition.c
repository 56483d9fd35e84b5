/* partition.c - reading MBR and GPT partition tables (partition.h).
 *
 * Only what locating a partition needs: no CHS, no hybrid MBRs beyond
 * preferring the GPT a protective entry points to, no BSD labels. A GPT
 * whose primary copy is damaged is read from its backup, as the kernel
 * does, and the table says so. */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "byte_order.h"
#include "errmsg.h"
#include "partition.h"

#define MBR_SIGNATURE_OFFSET 510
#define MBR_ENTRIES_OFFSET 446
#define MBR_ENTRY_BYTES 16
#define MBR_TYPE_GPT_PROTECTIVE 0xee
#define MBR_EBR_CHAIN_MAX 128 /* logical partitions followed at most */

#define GPT_HEADER_MIN_BYTES 92
#define GPT_ENTRY_MIN_BYTES 128
#define GPT_ENTRIES_MAX_BYTES (1u << 20)

/* CRC-32 as UEFI defines it (IEEE 802.3, reflected). Tables are read
 * once per mount: a bitwise loop is fast enough. */
static uint32_t crc32_ieee(const uint8_t *p, size_t len)
{
	uint32_t crc = 0xffffffffu;

	for (size_t i = 0; i < len; i++) {
		crc ^= p[i];
		for (int bit = 0; bit < 8; bit++)
			crc = (crc >> 1) ^ (0xedb88320u & (0u - (crc & 1u)));
	}
	return ~crc;
}

static int read_exact(int fd, void *buf, size_t len, uint64_t off)
{
	char *cursor = buf;

	while (len > 0) {
		ssize_t got = pread(fd, cursor, len, (off_t)off);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0)
			return -errno;
		if (got == 0)
			return -EIO; /* the caller checked the size: it shrank */
		cursor += got;
		len -= (size_t)got;
		off += (uint64_t)got;
	}
	return 0;
}

static int table_add(struct partition_table *t, unsigned number, uint64_t start_sector,
                     uint64_t nr_sectors, unsigned sector_bytes, uint64_t disk_bytes,
                     const char *name, char *err, size_t errlen)
{
	if (nr_sectors == 0)
		return 0;
	if (t->nr == PARTITION_MAX)
		return errmsg_fail(-EINVAL, err, errlen,
		                   "%s: the %s lists more than %d partitions", name, t->scheme,
		                   PARTITION_MAX);
	uint64_t disk_sectors = disk_bytes / sector_bytes;
	if (start_sector >= disk_sectors || nr_sectors > disk_sectors - start_sector)
		return errmsg_fail(-EINVAL, err, errlen,
		                   "%s: %s partition %u (sectors %llu + %llu of %u bytes) reaches "
		                   "past the end of the disk (%llu sectors): the image is cut "
		                   "short or the table is damaged",
		                   name, t->scheme, number, (unsigned long long)start_sector,
		                   (unsigned long long)nr_sectors, sector_bytes,
		                   (unsigned long long)disk_sectors);
	t->parts[t->nr].number = number;
	t->parts[t->nr].start_bytes = start_sector * sector_bytes;
	t->parts[t->nr].len_bytes = nr_sectors * sector_bytes;
	t->nr++;
	return 0;
}

/* The GPT whose header is at header_lba (which: "" or "backup ", for
 * messages): 1 if found, valid and read into t, 0 if no GPT header is
 * there, or -errno with err saying what is wrong. */
static int gpt_read_at(int fd, uint64_t disk_bytes, unsigned sector_bytes, uint64_t header_lba,
                       const char *which, const char *name, struct partition_table *t,
                       char *err, size_t errlen)
{
	uint8_t header[4096];

	t->nr = 0;
	int rc = read_exact(fd, header, sector_bytes, header_lba * sector_bytes);
	if (rc < 0)
		return errmsg_fail(rc, err, errlen, "%s: cannot read the %sGPT header: %s", name, which,
		                   strerror(-rc));
	if (memcmp(header, "EFI PART", 8) != 0)
		return 0;
	t->scheme = "gpt";
	uint32_t header_bytes = get_le32(header + 12);
	if (header_bytes < GPT_HEADER_MIN_BYTES || header_bytes > sector_bytes)
		return errmsg_fail(-EINVAL, err, errlen,
		                   "%s: the %sGPT header gives its size as %u bytes (expected %d to "
		                   "%u): it is damaged",
		                   name, which, header_bytes, GPT_HEADER_MIN_BYTES, sector_bytes);
	uint32_t header_crc = get_le32(header + 16);
	memset(header + 16, 0, 4);
	if (crc32_ieee(header, header_bytes) != header_crc)
		return errmsg_fail(-EINVAL, err, errlen, "%s: the %sGPT header's checksum is wrong: it is "
		                   "damaged", name, which);
	/* As the kernel: a header must name the sector it was read from
	 * (a copy of the primary pasted at the end is no backup). */
	if (get_le64(header + 24) != header_lba)
		return errmsg_fail(-EINVAL, err, errlen,
		                   "%s: the %sGPT header at sector %llu says it lies at sector %llu: it "
		                   "is damaged or the image was resized",
		                   name, which, (unsigned long long)header_lba,
		                   (unsigned long long)get_le64(header + 24));
	uint64_t entries_lba = get_le64(header + 72);
	uint32_t nr_entries = get_le32(header + 80), entry_bytes = get_le32(header + 84);
	if (entry_bytes < GPT_ENTRY_MIN_BYTES || entry_bytes % 8 != 0 ||
	    (uint64_t)nr_entries * entry_bytes > GPT_ENTRIES_MAX_BYTES)
		return errmsg_fail(-EINVAL, err, errlen,
		                   "%s: the %sGPT header describes %u entries of %u bytes: it is "
		                   "damaged",
		                   name, which, nr_entries, entry_bytes);
	size_t array_bytes = (size_t)nr_entries * entry_bytes;
	if (entries_lba < 2 || entries_lba > disk_bytes / sector_bytes ||
	    array_bytes > disk_bytes - entries_lba * sector_bytes)
		return errmsg_fail(-EINVAL, err, errlen,
		                   "%s: the %sGPT's entries (at sector %llu) lie outside the disk: "
		                   "the image is cut short or the header is damaged",
		                   name, which, (unsigned long long)entries_lba);
	uint8_t *entries = malloc(array_bytes ? array_bytes : 1);
	if (!entries)
		return errmsg_fail(-ENOMEM, err, errlen, "out of memory");
	rc = read_exact(fd, entries, array_bytes, entries_lba * sector_bytes);
	if (rc < 0) {
		free(entries);
		return errmsg_fail(rc, err, errlen, "%s: cannot read the %sGPT's entries: %s", name,
		                   which, strerror(-rc));
	}
	if (crc32_ieee(entries, array_bytes) != get_le32(header + 88)) {
		free(entries);
		return errmsg_fail(-EINVAL, err, errlen,
		                   "%s: the checksum of the %sGPT's entries is wrong: they are "
		                   "damaged",
		                   name, which);
	}
	static const uint8_t unused_type[16];
	for (uint32_t i = 0; i < nr_entries && rc == 0; i++) {
		const uint8_t *e = entries + (size_t)i * entry_bytes;
		if (memcmp(e, unused_type, sizeof(unused_type)) == 0)
			continue;
		uint64_t first = get_le64(e + 32), last = get_le64(e + 40);
		if (last < first) {
			rc = errmsg_fail(-EINVAL, err, errlen,
			                 "%s: GPT partition %u ends (sector %llu) before it begins "
			                 "(%llu): the table is damaged",
			                 name, i + 1, (unsigned long long)last,
			                 (unsigned long long)first);
			break;
		}
		rc = table_add(t, i + 1, first, last - first + 1, sector_bytes, disk_bytes, name, err,
		               errlen);
	}
	free(entries);
	return rc < 0 ? rc : 1;
}

/* The GPT of sectors of sector_bytes (announced: the MBR says there is
 * one): 1 if read, 0 if there is none, or -errno. As the kernel does, a
 * primary header (LBA 1) that is missing or damaged gives way to the
 * backup at the disk's last sector; the table says so (from_backup), so
 * that the user hears of the damage. */
static int gpt_read(int fd, uint64_t disk_bytes, unsigned sector_bytes, bool announced,
                    const char *name, struct partition_table *t, char *err, size_t errlen)
{
	char primary_err[512] = "", backup_err[512] = "";

	if (disk_bytes < 3ull * sector_bytes)
		return 0;
	int primary_rc = gpt_read_at(fd, disk_bytes, sector_bytes, 1, "", name, t,
	                             primary_err, sizeof(primary_err));
	if (primary_rc == 1 || primary_rc == -ENOMEM)
		return primary_rc == 1 ? 1 : errmsg_fail(-ENOMEM, err, errlen, "out of memory");
	int backup_rc = gpt_read_at(fd, disk_bytes, sector_bytes, disk_bytes / sector_bytes - 1,
	                            "backup ", name, t, backup_err, sizeof(backup_err));
	if (backup_rc == 1) {
		t->from_backup = true;
		return 1;
	}
	t->nr = 0;
	/* No primary and no good backup: no GPT (the last sector of a disk
	 * without one holds whatever its data leaves there), unless the MBR
	 * announced one: then what is wrong with the backup is the news. */
	if (primary_rc == 0 && (backup_rc == 0 || !announced))
		return 0;
	t->scheme = "gpt";
	if (primary_rc == 0)
		return errmsg_fail(backup_rc, err, errlen, "%s (and there is no GPT header at "
		                   "sector 1)", backup_err);
	/* Both said what is wrong, each after the disk's name: once is enough. */
	const char *backup_why = backup_err;
	size_t name_len = strlen(name);
	if (strncmp(backup_why, name, name_len) == 0 && strncmp(backup_why + name_len, ": ", 2) == 0)
		backup_why += name_len + 2;
	return errmsg_fail(primary_rc, err, errlen,
	                   "%s; %s (repair the table with sgdisk or fdisk, or give the member "
	                   "as a loop device's partition)",
	                   primary_err,
	                   backup_rc == 0 ? "there is no backup header at the disk's last sector "
	                                    "to use instead" : backup_why);
}

static bool mbr_type_is_extended(uint8_t type)
{
	return type == 0x05 || type == 0x0f || type == 0x85;
}

/* The logical partitions in the chain of EBRs of the extended partition
 * at ext_start (sectors), numbered from 5. */
static int mbr_read_logical(int fd, uint64_t disk_bytes, unsigned sector_bytes, uint64_t ext_start,
                            const char *name, struct partition_table *t, char *err, size_t errlen)
{
	uint8_t ebr[512];
	uint64_t ebr_sector = ext_start;
	unsigned number = 5;

	for (int hops = 0; hops < MBR_EBR_CHAIN_MAX; hops++) {
		if (ebr_sector >= disk_bytes / sector_bytes)
			return errmsg_fail(-EINVAL, err, errlen,
			                   "%s: the MBR's chain of logical partitions leads past the "
			                   "end of the disk (sector %llu): it is damaged",
			                   name, (unsigned long long)ebr_sector);
		int rc = read_exact(fd, ebr, sizeof(ebr), ebr_sector * sector_bytes);
		if (rc < 0)
			return errmsg_fail(rc, err, errlen, "%s: cannot read the extended boot record "
			                   "at sector %llu: %s",
			                   name, (unsigned long long)ebr_sector, strerror(-rc));
		if (ebr[MBR_SIGNATURE_OFFSET] != 0x55 || ebr[MBR_SIGNATURE_OFFSET + 1] != 0xaa)
			return errmsg_fail(-EINVAL, err, errlen,
			                   "%s: no extended boot record at sector %llu, where the "
			                   "MBR's chain of logical partitions leads: it is damaged",
			                   name, (unsigned long long)ebr_sector);
		const uint8_t *own = ebr + MBR_ENTRIES_OFFSET;
		const uint8_t *next = own + MBR_ENTRY_BYTES;
		if (own[4] != 0) {
			rc = table_add(t, number, ebr_sector + get_le32(own + 8), get_le32(own + 12),
			               sector_bytes, disk_bytes, name, err, errlen);
			if (rc < 0)
				return rc;
			number++;
		}
		if (!mbr_type_is_extended(next[4]) || get_le32(next + 8) == 0)
			return 0;
		ebr_sector = ext_start + get_le32(next + 8);
	}
	return errmsg_fail(-EINVAL, err, errlen,
	                   "%s: the MBR's chain of logical partitions has more than %d links or "
	                   "loops: it is damaged",
	                   name, MBR_EBR_CHAIN_MAX);
}

int partition_table_read(int fd, uint64_t disk_bytes, unsigned sector_bytes, const char *name,
                         struct partition_table *t, char *err, size_t errlen)
{
	uint8_t mbr[512];

	memset(t, 0, sizeof(*t));
	unsigned sector = sector_bytes ? sector_bytes : 512;
	if (sector != 512 && sector != 4096)
		return errmsg_fail(-EINVAL, err, errlen, "%s: sectors of %u bytes are not supported",
		                   name, sector);
	if (disk_bytes < sizeof(mbr))
		return errmsg_fail(-ENOENT, err, errlen, "%s: too small to hold a partition table",
		                   name);
	int rc = read_exact(fd, mbr, sizeof(mbr), 0);
	if (rc < 0)
		return errmsg_fail(rc, err, errlen, "%s: cannot read its first sector: %s", name,
		                   strerror(-rc));
	bool has_mbr = mbr[MBR_SIGNATURE_OFFSET] == 0x55 && mbr[MBR_SIGNATURE_OFFSET + 1] == 0xaa;
	bool protective = false;
	for (int i = 0; has_mbr && i < 4; i++) {
		const uint8_t *e = mbr + MBR_ENTRIES_OFFSET + i * MBR_ENTRY_BYTES;
		protective |= e[4] == MBR_TYPE_GPT_PROTECTIVE;
		/* A boot flag other than 0 or 0x80: a boot sector (a FAT
		 * file system, say), not a partition table. */
		if (e[0] != 0 && e[0] != 0x80)
			has_mbr = false;
	}
	/* A GPT where the MBR says there is one, or where a disk has no
	 * MBR at all (some tools write none). */
	if (protective || !has_mbr) {
		rc = gpt_read(fd, disk_bytes, sector, protective, name, t, err, errlen);
		if (rc == 0 && !sector_bytes)
			rc = gpt_read(fd, disk_bytes, 4096, protective, name, t, err, errlen);
		if (rc < 0)
			return rc;
		if (rc == 1)
			return 0;
		if (protective)
			return errmsg_fail(-EINVAL, err, errlen,
			                   "%s: the MBR says the disk has a GPT, but there is no GPT "
			                   "header at sector 1 nor a backup at the last sector: the "
			                   "table is damaged",
			                   name);
		return errmsg_fail(-ENOENT, err, errlen,
		                   "%s: holds no partition table (neither an MBR nor a GPT)", name);
	}
	t->scheme = "mbr";
	for (int i = 0; i < 4; i++) {
		const uint8_t *e = mbr + MBR_ENTRIES_OFFSET + i * MBR_ENTRY_BYTES;
		if (e[4] == 0)
			continue;
		if (mbr_type_is_extended(e[4])) {
			rc = mbr_read_logical(fd, disk_bytes, sector, get_le32(e + 8), name, t, err, errlen);
			if (rc < 0)
				return rc;
			continue;
		}
		rc = table_add(t, (unsigned)i + 1, get_le32(e + 8), get_le32(e + 12), sector, disk_bytes,
		               name, err, errlen);
		if (rc < 0)
			return rc;
	}
	return 0;
}

const struct partition *partition_find(const struct partition_table *t, unsigned number)
{
	for (unsigned i = 0; i < t->nr; i++)
		if (t->parts[i].number == number)
			return &t->parts[i];
	return NULL;
}

void partition_numbers_text(const struct partition_table *t, char *buf, size_t len)
{
	size_t used = 0;

	if (len)
		buf[0] = '\0';
	for (unsigned i = 0; i < t->nr && used < len; i++) {
		int n = snprintf(buf + used, len - used, "%s%u", i ? ", " : "", t->parts[i].number);
		if (n < 0)
			break;
		used += (size_t)n;
	}
	if (t->nr == 0 && len)
		snprintf(buf, len, "none");
}

bool partition_spec_split(const char *path, char *file, size_t file_size, unsigned *number)
{
	const char *at = strrchr(path, '@');

	if (!at || at == path || at[-1] == '/' || at[1] < '1' || at[1] > '9')
		return false;
	unsigned value = 0;
	const char *digit = at + 1;
	for (; *digit; digit++) {
		if (*digit < '0' || *digit > '9' || digit - at > 3)
			return false;
		value = value * 10 + (unsigned)(*digit - '0');
	}
	size_t file_len = (size_t)(at - path);
	if (file_len >= file_size)
		return false;
	memcpy(file, path, file_len);
	file[file_len] = '\0';
	*number = value;
	return true;
}
