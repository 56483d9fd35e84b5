/* partition.h - the partition table of a whole-disk image or device: MBR
 * (primary partitions 1-4 by slot, logical ones in the extended
 * partition's chain from 5, as Linux numbers them) and GPT (header and
 * entry array checked by their CRC32, as the kernel does). It lets a
 * member be one partition of a disk image, FILE@N, so that images of
 * disks pulled from a NAS, whose md members are partitions, mount without
 * root or a loop device. */
#ifndef RAIDFUSE_PARTITION_H
#define RAIDFUSE_PARTITION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PARTITION_MAX 256 /* entries kept; GPTs have 128, MBR chains few */

struct partition {
	unsigned number;     /* Linux's: /dev/sdaN */
	uint64_t start_bytes;
	uint64_t len_bytes;
};

struct partition_table {
	const char *scheme;  /* "gpt" or "mbr" */
	bool from_backup;    /* a GPT read from its backup: the primary is damaged */
	unsigned nr;
	struct partition parts[PARTITION_MAX];
};

/* Read the table of the disk behind fd (disk_bytes long, logical sectors
 * of sector_bytes, 512 or 4096; 0 tries 512, then 4096 for a GPT). 0, or
 * -ENOENT when the disk holds no partition table, -EINVAL when it holds
 * a damaged one, -errno when it cannot be read; err says which (named
 * after name). Partitions that reach past the disk are refused. A GPT
 * whose primary copy is damaged or gone is read from its backup at the
 * last sector, and table->from_backup says so. */
int partition_table_read(int fd, uint64_t disk_bytes, unsigned sector_bytes, const char *name,
                         struct partition_table *table, char *err, size_t errlen);

/* The partition numbered number, or NULL. */
const struct partition *partition_find(const struct partition_table *table, unsigned number);

/* "1, 2, 5" into buf: what a message offers instead of a missing one. */
void partition_numbers_text(const struct partition_table *table, char *buf, size_t len);

/* Whether path is FILE@N for a partition number N (1-999) with FILE fitting
 * in file_size bytes: FILE is then copied to file (NUL-terminated). Says
 * nothing about whether FILE exists: a file whose name merely ends so is
 * opened as itself (member_open). */
bool partition_spec_split(const char *path, char *file, size_t file_size, unsigned *number);

#endif
