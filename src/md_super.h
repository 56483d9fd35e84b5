/* md_super.h - Linux md metadata 1.x superblock and write-intent bitmap
 * superblock: decode, encode, checksum and validation.
 *
 * The on-disk structures are little-endian and packed (md_p.h:
 * mdp_superblock_1, md-bitmap.h: bitmap_super_t). This module converts
 * between the raw bytes and host-order structs; it does no I/O.
 */
#ifndef RAIDFUSE_MD_SUPER_H
#define RAIDFUSE_MD_SUPER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MD_SB_MAGIC 0xa92b4efcu
#define MD_SB_V12_OFFSET_BYTES 4096u   /* metadata 1.2: 4 KiB from the start */
#define MD_SB_V12_OFFSET_SECTORS 8u
#define MD_SB_FIXED_BYTES 256u          /* fixed part, before dev_roles[] */
#define MD_SB_MAX_DEV 384u              /* most roles we read or write */
#define MD_SB_MAX_BYTES (MD_SB_FIXED_BYTES + 2u * MD_SB_MAX_DEV) /* 1024 */
#define MD_SB_DEFAULT_MAX_DEV 128u

#define MD_ROLE_SPARE 0xffffu
#define MD_ROLE_FAULTY 0xfffeu
#define MD_ROLE_JOURNAL 0xfffdu
#define MD_ROLE_MAX 0xff00u             /* roles below this are active slots */

/* Per-member flags (md_p.h's devflags). */
#define MD_DEVFLAG_WRITE_MOSTLY 0x01u /* read only when no other copy is there */
#define MD_DEVFLAG_FAILFAST 0x02u

#define MD_FEATURE_BITMAP_OFFSET 0x1u
#define MD_FEATURE_RECOVERY_OFFSET 0x2u
#define MD_FEATURE_RESHAPE_ACTIVE 0x4u
#define MD_FEATURE_BAD_BLOCKS 0x8u
#define MD_FEATURE_REPLACEMENT 0x10u
#define MD_FEATURE_RESHAPE_BACKWARDS 0x20u
#define MD_FEATURE_NEW_OFFSET 0x40u
#define MD_FEATURE_RECOVERY_BITMAP 0x80u
#define MD_FEATURE_CLUSTERED 0x100u
#define MD_FEATURE_JOURNAL 0x200u
#define MD_FEATURE_PPL 0x400u
#define MD_FEATURE_MULTIPLE_PPLS 0x800u
#define MD_FEATURE_RAID0_LAYOUT 0x1000u
/* Features this implementation understands well enough to run the array. */
#define MD_FEATURES_SUPPORTED \
	(MD_FEATURE_BITMAP_OFFSET | MD_FEATURE_RECOVERY_OFFSET | MD_FEATURE_BAD_BLOCKS | \
	 MD_FEATURE_REPLACEMENT | MD_FEATURE_RAID0_LAYOUT)

#define MD_RESYNC_NONE UINT64_MAX       /* resync_offset of a clean array */

#define MD_LEVEL_LINEAR (-1)

/* Host-order view of mdp_superblock_1. Field names follow md_p.h. */
struct md_super {
	uint32_t feature_map;
	uint8_t set_uuid[16];
	char set_name[33];          /* NUL-terminated copy of the 32-byte field */
	uint64_t ctime;             /* low 40 bits seconds, high 24 bits usec (md) */
	int32_t level;
	uint32_t layout;
	uint64_t size;              /* sectors used on each member (levels 1,4,5,6,10) */
	uint32_t chunksize;         /* sectors */
	uint32_t raid_disks;
	int32_t bitmap_offset;      /* sectors from the superblock, signed */
	uint32_t new_level;
	uint64_t reshape_position;
	uint32_t delta_disks;
	uint32_t new_layout;
	uint32_t new_chunk;
	uint32_t new_offset;
	uint64_t data_offset;       /* sectors */
	uint64_t data_size;         /* sectors */
	uint64_t super_offset;      /* sectors */
	uint64_t recovery_offset;   /* sectors */
	uint32_t dev_number;
	uint32_t cnt_corrected_read;
	uint8_t device_uuid[16];
	uint8_t devflags;            /* MD_DEVFLAG_* */
	uint8_t bblog_shift;
	uint16_t bblog_size;
	int32_t bblog_offset;
	uint64_t utime;
	uint64_t events;
	uint64_t resync_offset;
	uint32_t sb_csum;           /* as read; recomputed by md_super_encode */
	uint32_t max_dev;
	uint16_t dev_roles[MD_SB_MAX_DEV];
};

/* Whether raw opens an md superblock of major version major (0 for
 * metadata 0.90, 1 for 1.x): md's magic, then the version. Little-endian;
 * 0.90 may also be big-endian, written in the byte order of its host. */
bool md_super_head_is(const uint8_t raw[8], uint32_t major);

/* Bytes md checksums and writes for this superblock: 256 + 2 * max_dev. */
size_t md_super_bytes(uint32_t max_dev);

/* The md checksum of a raw superblock (sb_csum treated as zero). raw must
 * hold md_super_bytes(max_dev) bytes, max_dev taken from the raw field. */
uint32_t md_super_csum(const uint8_t *raw);

/* Decode raw (raw_len bytes, at least MD_SB_FIXED_BYTES) into sb.
 * Checks magic, major_version == 1, max_dev <= MD_SB_MAX_DEV, raw_len
 * covering the roles, and the checksum.
 * Returns 0, -EINVAL (not an md 1.x superblock: bad magic or version),
 * -EBADMSG (checksum mismatch), or -ERANGE (max_dev too large / raw too
 * short). On error, err (errlen bytes) says which field and what was
 * expected, e.g. "bad magic 0x00000000 (expected 0xa92b4efc)". */
int md_super_decode(const uint8_t *raw, size_t raw_len, struct md_super *sb, char *err,
                    size_t errlen);

/* Encode sb into raw (zeroing raw[0..MD_SB_MAX_BYTES)), computing sb_csum.
 * Returns the number of meaningful bytes (md_super_bytes(sb->max_dev)). */
size_t md_super_encode(const struct md_super *sb, uint8_t raw[MD_SB_MAX_BYTES]);

/* Role of this device as recorded in sb: dev_roles[dev_number], or
 * MD_ROLE_SPARE when dev_number is out of range. */
uint16_t md_super_role(const struct md_super *sb);

/* Format helpers. uuid text is md's "xxxxxxxx:xxxxxxxx:xxxxxxxx:xxxxxxxx"
 * (35 chars + NUL). */
void md_uuid_format(const uint8_t uuid[16], char out[36]);
int md_uuid_parse(const char *text, uint8_t uuid[16]); /* 0 or -EINVAL */

/* Level/layout names as mdadm prints them. */
const char *md_level_name(int32_t level);              /* "raid5", "linear", or NULL */
int md_level_parse(const char *text, int32_t *level);   /* "5", "raid5", "linear", "jbod"... */
/* Layout name for a level, e.g. raid5 2 -> "left-symmetric", raid10 0x102
 * -> "near=2" (written into out); returns out. */
const char *md_layout_name(int32_t level, uint32_t layout, char *out, size_t outlen);
/* Parse a layout name for a level ("left-symmetric", "ls", "la", "rs", "ra",
 * "n2", "f2", "o2", or a number). 0 or -EINVAL. */
int md_layout_parse(int32_t level, const char *text, uint32_t *layout);

/* Metadata 0.90 (md_super090.c): 4 KiB of host-order words at the last
 * 64 KiB-aligned 64 KiB of a member (member_super090_offset_sectors). */
#define MD_SB090_BYTES 4096u
#define MD_SB090_DISKS 27u      /* MD_SB_DISKS: device descriptors */
/* md's checksum of a raw 0.90 superblock (its checksum word as zero). */
uint32_t md_super090_csum(const uint8_t raw[MD_SB090_BYTES]);
/* Whether raw opens a 0.90 superblock written by a big-endian host. */
bool md_super090_is_big_endian(const uint8_t raw[8]);
/* Decode a 0.90 superblock (of either byte order) found at
 * super_offset_sectors into sb, as md's super_90_load/validate read it:
 * data from sector 0 up to the superblock, roles from the 27 device
 * descriptors (max_dev 27), the checksum compared folded to 16 bits as md
 * compares it, set_uuid as mdadm prints it, bitmap (if any) 8 sectors
 * after the superblock. Returns 0, -EINVAL (not 0.90, or a corrupt field),
 * -EBADMSG (checksum), or -EOPNOTSUPP (0.91: a reshape in progress), with
 * err saying which. */
int md_super090_decode(const uint8_t raw[MD_SB090_BYTES], uint64_t super_offset_sectors,
                       struct md_super *sb, char *err, size_t errlen);
/* The uuid md writes into a 0.90 array's bitmap superblock, from set_uuid
 * as md_super090_decode gives it, for a superblock of that byte order. */
void md_super090_bitmap_uuid(const uint8_t set_uuid[16], bool big_endian, uint8_t out[16]);

/* md write-intent bitmap superblock (bitmap_super_t, 256 bytes). */
#define MD_BITMAP_MAGIC 0x6d746962u     /* "bitm" */
#define MD_BITMAP_SB_BYTES 256u
struct md_bitmap_super {
	uint32_t magic;
	uint32_t version;
	uint8_t uuid[16];
	uint64_t events;
	uint64_t events_cleared;
	uint64_t sync_size;         /* sectors */
	uint32_t state;
	uint32_t chunksize;         /* bytes */
	uint32_t daemon_sleep;      /* seconds */
	uint32_t write_behind;
	uint32_t sectors_reserved;
	uint32_t nodes;
	char cluster_name[65];
};
int md_bitmap_super_decode(const uint8_t *raw, size_t raw_len, struct md_bitmap_super *bsb,
                           char *err, size_t errlen);
void md_bitmap_super_encode(const struct md_bitmap_super *bsb,
                            uint8_t raw[MD_BITMAP_SB_BYTES]);

/* One 8-byte entry of md's bad block log (super_1_load): its sector and
 * count in units of 2^bblog_shift sectors, absolute on the device; false
 * for the all-ones entry that ends the list. */
bool md_badblock_entry_decode(const uint8_t raw[8], uint64_t *sector_units, uint64_t *count_units);
/* One entry of that log: sector and count in units (count at most 1023). */
void md_badblock_entry_encode(uint8_t raw[8], uint64_t sector_units, uint64_t count_units);

#endif
