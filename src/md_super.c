/* md_super.c - owns the byte-level conversion of the md metadata 1.x
 * superblock (mdp_superblock_1) and of the write-intent bitmap superblock
 * (bitmap_super_t): checksum, validation on decode, and encode. No I/O.
 *
 * Offsets follow Linux include/uapi/linux/raid/md_p.h and
 * drivers/md/md-bitmap.h; the checksum is md's calc_sb_1_csum (the kernel
 * and mdadm super1.c compute it the same way). Every field is read and
 * written byte by byte as little-endian, so the code neither depends on
 * host byte order nor on the alignment of the caller's buffer.
 */
#include "byte_order.h"
#include "md_super.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* Byte offsets inside mdp_superblock_1. */
enum {
	SB_MAGIC = 0,
	SB_MAJOR_VERSION = 4,
	SB_FEATURE_MAP = 8,
	SB_PAD0 = 12,
	SB_SET_UUID = 16,
	SB_SET_NAME = 32,
	SB_CTIME = 64,
	SB_LEVEL = 72,
	SB_LAYOUT = 76,
	SB_SIZE = 80,
	SB_CHUNKSIZE = 88,
	SB_RAID_DISKS = 92,
	SB_BITMAP_OFFSET = 96,
	SB_NEW_LEVEL = 100,
	SB_RESHAPE_POSITION = 104,
	SB_DELTA_DISKS = 112,
	SB_NEW_LAYOUT = 116,
	SB_NEW_CHUNK = 120,
	SB_NEW_OFFSET = 124,
	SB_DATA_OFFSET = 128,
	SB_DATA_SIZE = 136,
	SB_SUPER_OFFSET = 144,
	SB_RECOVERY_OFFSET = 152,
	SB_DEV_NUMBER = 160,
	SB_CNT_CORRECTED_READ = 164,
	SB_DEVICE_UUID = 168,
	SB_DEVFLAGS = 184,
	SB_BBLOG_SHIFT = 185,
	SB_BBLOG_SIZE = 186,
	SB_BBLOG_OFFSET = 188,
	SB_UTIME = 192,
	SB_EVENTS = 200,
	SB_RESYNC_OFFSET = 208,
	SB_SB_CSUM = 216,
	SB_MAX_DEV = 220,
	SB_PAD3 = 224,
	SB_DEV_ROLES = 256,
};

/* Byte offsets inside bitmap_super_t. */
enum {
	BM_MAGIC = 0,
	BM_VERSION = 4,
	BM_UUID = 8,
	BM_EVENTS = 24,
	BM_EVENTS_CLEARED = 32,
	BM_SYNC_SIZE = 40,
	BM_STATE = 48,
	BM_CHUNKSIZE = 52,
	BM_DAEMON_SLEEP = 56,
	BM_WRITE_BEHIND = 60,
	BM_SECTORS_RESERVED = 64,
	BM_NODES = 68,
	BM_CLUSTER_NAME = 72,
	BM_CLUSTER_NAME_LEN = 64,
};

/* The bitmap versions the kernel accepts: BITMAP_MAJOR_LO (3, host-endian
 * bits) to BITMAP_MAJOR_CLUSTERED (5). Anything else md refuses to load. */
#define BM_VERSION_MIN 3u
#define BM_VERSION_MAX 5u
/* md-bitmap refuses chunks below one sector. */
#define BM_CHUNK_MIN 512u

_Static_assert(MD_SB_MAX_BYTES == 1024u, "md_super.h: 1 KiB holds 384 roles");
_Static_assert(SB_DEV_ROLES == MD_SB_FIXED_BYTES, "roles start after the fixed part");
_Static_assert(BM_CLUSTER_NAME + BM_CLUSTER_NAME_LEN <= MD_BITMAP_SB_BYTES,
               "cluster_name fits in bitmap_super_t");

__attribute__((format(printf, 3, 4)))
static void set_err(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!err || errlen == 0)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

/* Copies a fixed-size on-disk string up to its first NUL and zero-pads the
 * rest, so that stale bytes after the terminator in the caller's struct
 * never reach the disk. md and mdadm write these fields the same way. */
static void put_fixed_string(uint8_t *dst, const char *src, size_t len)
{
	size_t n = strnlen(src, len);

	memcpy(dst, src, n);
	memset(dst + n, 0, len - n);
}

bool md_super_head_is(const uint8_t raw[8], uint32_t major)
{
	if (get_le32(raw) == MD_SB_MAGIC && get_le32(raw + 4) == major)
		return true;
	return major == 0 && get_be32(raw) == MD_SB_MAGIC && get_be32(raw + 4) == 0;
}

size_t md_super_bytes(uint32_t max_dev)
{
#if SIZE_MAX < 0x200000100ull
	/* A 32-bit size_t cannot hold every max_dev's size; saturating keeps
	 * a length check against it failing instead of wrapping. */
	if (max_dev > (SIZE_MAX - MD_SB_FIXED_BYTES) / 2u)
		return SIZE_MAX;
#endif
	return MD_SB_FIXED_BYTES + 2u * (size_t)max_dev;
}

uint32_t md_super_csum(const uint8_t *raw)
{
	size_t size = md_super_bytes(get_le32(raw + SB_MAX_DEV));
	uint64_t sum = 0;
	size_t off;

	for (off = 0; size - off >= 4; off += 4) {
		/* The stored checksum takes part as zero. */
		if (off != SB_SB_CSUM)
			sum += get_le32(raw + off);
	}
	if (size - off == 2)
		sum += get_le16(raw + off);
	return (uint32_t)((sum & 0xffffffffu) + (sum >> 32));
}

int md_super_decode(const uint8_t *raw, size_t raw_len, struct md_super *sb, char *err,
                    size_t errlen)
{
	uint32_t magic, major, max_dev, csum, want;
	size_t need;
	uint32_t i;

	memset(sb, 0, sizeof(*sb));
	if (raw_len < MD_SB_FIXED_BYTES) {
		set_err(err, errlen, "superblock too short: %zu bytes (expected at least %u)",
		        raw_len, MD_SB_FIXED_BYTES);
		return -ERANGE;
	}
	magic = get_le32(raw + SB_MAGIC);
	if (magic != MD_SB_MAGIC) {
		set_err(err, errlen, "bad magic 0x%08x (expected 0x%08x)", magic, MD_SB_MAGIC);
		return -EINVAL;
	}
	major = get_le32(raw + SB_MAJOR_VERSION);
	if (major != 1) {
		set_err(err, errlen, "bad major_version %u (expected 1)", major);
		return -EINVAL;
	}
	max_dev = get_le32(raw + SB_MAX_DEV);
	if (max_dev > MD_SB_MAX_DEV) {
		set_err(err, errlen, "max_dev %u too large (expected at most %u)", max_dev,
		        MD_SB_MAX_DEV);
		return -ERANGE;
	}
	need = md_super_bytes(max_dev);
	if (raw_len < need) {
		set_err(err, errlen,
		        "superblock too short for max_dev %u: %zu bytes (expected at least %zu)",
		        max_dev, raw_len, need);
		return -ERANGE;
	}
	csum = get_le32(raw + SB_SB_CSUM);
	want = md_super_csum(raw);
	if (csum != want) {
		set_err(err, errlen, "bad checksum: sb_csum 0x%08x (expected 0x%08x over %zu bytes)",
		        csum, want, need);
		return -EBADMSG;
	}

	sb->feature_map = get_le32(raw + SB_FEATURE_MAP);
	memcpy(sb->set_uuid, raw + SB_SET_UUID, sizeof(sb->set_uuid));
	memcpy(sb->set_name, raw + SB_SET_NAME, 32);
	sb->set_name[32] = '\0';
	sb->ctime = get_le64(raw + SB_CTIME);
	sb->level = (int32_t)get_le32(raw + SB_LEVEL);
	sb->layout = get_le32(raw + SB_LAYOUT);
	sb->size = get_le64(raw + SB_SIZE);
	sb->chunksize = get_le32(raw + SB_CHUNKSIZE);
	sb->raid_disks = get_le32(raw + SB_RAID_DISKS);
	sb->bitmap_offset = (int32_t)get_le32(raw + SB_BITMAP_OFFSET);
	sb->new_level = get_le32(raw + SB_NEW_LEVEL);
	sb->reshape_position = get_le64(raw + SB_RESHAPE_POSITION);
	sb->delta_disks = get_le32(raw + SB_DELTA_DISKS);
	sb->new_layout = get_le32(raw + SB_NEW_LAYOUT);
	sb->new_chunk = get_le32(raw + SB_NEW_CHUNK);
	sb->new_offset = get_le32(raw + SB_NEW_OFFSET);
	sb->data_offset = get_le64(raw + SB_DATA_OFFSET);
	sb->data_size = get_le64(raw + SB_DATA_SIZE);
	sb->super_offset = get_le64(raw + SB_SUPER_OFFSET);
	sb->recovery_offset = get_le64(raw + SB_RECOVERY_OFFSET);
	sb->dev_number = get_le32(raw + SB_DEV_NUMBER);
	sb->cnt_corrected_read = get_le32(raw + SB_CNT_CORRECTED_READ);
	memcpy(sb->device_uuid, raw + SB_DEVICE_UUID, sizeof(sb->device_uuid));
	sb->devflags = raw[SB_DEVFLAGS];
	sb->bblog_shift = raw[SB_BBLOG_SHIFT];
	sb->bblog_size = get_le16(raw + SB_BBLOG_SIZE);
	sb->bblog_offset = (int32_t)get_le32(raw + SB_BBLOG_OFFSET);
	sb->utime = get_le64(raw + SB_UTIME);
	sb->events = get_le64(raw + SB_EVENTS);
	sb->resync_offset = get_le64(raw + SB_RESYNC_OFFSET);
	sb->sb_csum = csum;
	sb->max_dev = max_dev;
	for (i = 0; i < max_dev; i++)
		sb->dev_roles[i] = get_le16(raw + SB_DEV_ROLES + 2u * i);
	/* Slots past max_dev do not exist on disk; md treats a missing slot
	 * as spare (role_from_sb), so a caller scanning the whole array never
	 * mistakes one for role 0. */
	for (; i < MD_SB_MAX_DEV; i++)
		sb->dev_roles[i] = MD_ROLE_SPARE;
	return 0;
}

size_t md_super_encode(const struct md_super *sb, uint8_t raw[MD_SB_MAX_BYTES])
{
	/* The struct cannot hold more roles than this, and a larger max_dev
	 * would make the caller write past the 1 KiB it was promised. */
	uint32_t max_dev = sb->max_dev > MD_SB_MAX_DEV ? MD_SB_MAX_DEV : sb->max_dev;
	uint32_t i;

	memset(raw, 0, MD_SB_MAX_BYTES);
	put_le32(raw + SB_MAGIC, MD_SB_MAGIC);
	put_le32(raw + SB_MAJOR_VERSION, 1);
	put_le32(raw + SB_FEATURE_MAP, sb->feature_map);
	memcpy(raw + SB_SET_UUID, sb->set_uuid, sizeof(sb->set_uuid));
	put_fixed_string(raw + SB_SET_NAME, sb->set_name, 32);
	put_le64(raw + SB_CTIME, sb->ctime);
	put_le32(raw + SB_LEVEL, (uint32_t)sb->level);
	put_le32(raw + SB_LAYOUT, sb->layout);
	put_le64(raw + SB_SIZE, sb->size);
	put_le32(raw + SB_CHUNKSIZE, sb->chunksize);
	put_le32(raw + SB_RAID_DISKS, sb->raid_disks);
	put_le32(raw + SB_BITMAP_OFFSET, (uint32_t)sb->bitmap_offset);
	put_le32(raw + SB_NEW_LEVEL, sb->new_level);
	put_le64(raw + SB_RESHAPE_POSITION, sb->reshape_position);
	put_le32(raw + SB_DELTA_DISKS, sb->delta_disks);
	put_le32(raw + SB_NEW_LAYOUT, sb->new_layout);
	put_le32(raw + SB_NEW_CHUNK, sb->new_chunk);
	put_le32(raw + SB_NEW_OFFSET, sb->new_offset);
	put_le64(raw + SB_DATA_OFFSET, sb->data_offset);
	put_le64(raw + SB_DATA_SIZE, sb->data_size);
	put_le64(raw + SB_SUPER_OFFSET, sb->super_offset);
	put_le64(raw + SB_RECOVERY_OFFSET, sb->recovery_offset);
	put_le32(raw + SB_DEV_NUMBER, sb->dev_number);
	put_le32(raw + SB_CNT_CORRECTED_READ, sb->cnt_corrected_read);
	memcpy(raw + SB_DEVICE_UUID, sb->device_uuid, sizeof(sb->device_uuid));
	raw[SB_DEVFLAGS] = sb->devflags;
	raw[SB_BBLOG_SHIFT] = sb->bblog_shift;
	put_le16(raw + SB_BBLOG_SIZE, sb->bblog_size);
	put_le32(raw + SB_BBLOG_OFFSET, (uint32_t)sb->bblog_offset);
	put_le64(raw + SB_UTIME, sb->utime);
	put_le64(raw + SB_EVENTS, sb->events);
	put_le64(raw + SB_RESYNC_OFFSET, sb->resync_offset);
	put_le32(raw + SB_MAX_DEV, max_dev);
	for (i = 0; i < max_dev; i++)
		put_le16(raw + SB_DEV_ROLES + 2u * i, sb->dev_roles[i]);
	/* pad0 and pad3 stay zero: md_p.h says "set to 0 when writing". */
	put_le32(raw + SB_SB_CSUM, md_super_csum(raw));
	return md_super_bytes(max_dev);
}

uint16_t md_super_role(const struct md_super *sb)
{
	/* Same rule as mdadm's role_from_sb, plus the bound of our array. */
	if (sb->dev_number >= sb->max_dev || sb->dev_number >= MD_SB_MAX_DEV)
		return MD_ROLE_SPARE;
	return sb->dev_roles[sb->dev_number];
}

/* Returns 0, -ERANGE (raw shorter than 256 bytes) or -EINVAL (bad magic,
 * a version md would not load, or a chunk size md would refuse). */
int md_bitmap_super_decode(const uint8_t *raw, size_t raw_len, struct md_bitmap_super *bsb,
                           char *err, size_t errlen)
{
	uint32_t magic, version, chunk;

	memset(bsb, 0, sizeof(*bsb));
	if (raw_len < MD_BITMAP_SB_BYTES) {
		set_err(err, errlen, "bitmap superblock too short: %zu bytes (expected %u)",
		        raw_len, MD_BITMAP_SB_BYTES);
		return -ERANGE;
	}
	magic = get_le32(raw + BM_MAGIC);
	if (magic != MD_BITMAP_MAGIC) {
		set_err(err, errlen, "bad bitmap magic 0x%08x (expected 0x%08x)", magic,
		        MD_BITMAP_MAGIC);
		return -EINVAL;
	}
	version = get_le32(raw + BM_VERSION);
	if (version < BM_VERSION_MIN || version > BM_VERSION_MAX) {
		set_err(err, errlen, "bad bitmap version %u (expected %u to %u)", version,
		        BM_VERSION_MIN, BM_VERSION_MAX);
		return -EINVAL;
	}
	chunk = get_le32(raw + BM_CHUNKSIZE);
	if (chunk < BM_CHUNK_MIN || (chunk & (chunk - 1)) != 0) {
		set_err(err, errlen,
		        "bad bitmap chunksize %u (expected a power of two of at least %u bytes)",
		        chunk, BM_CHUNK_MIN);
		return -EINVAL;
	}

	bsb->magic = magic;
	bsb->version = version;
	memcpy(bsb->uuid, raw + BM_UUID, sizeof(bsb->uuid));
	bsb->events = get_le64(raw + BM_EVENTS);
	bsb->events_cleared = get_le64(raw + BM_EVENTS_CLEARED);
	bsb->sync_size = get_le64(raw + BM_SYNC_SIZE);
	bsb->state = get_le32(raw + BM_STATE);
	bsb->chunksize = chunk;
	bsb->daemon_sleep = get_le32(raw + BM_DAEMON_SLEEP);
	bsb->write_behind = get_le32(raw + BM_WRITE_BEHIND);
	bsb->sectors_reserved = get_le32(raw + BM_SECTORS_RESERVED);
	bsb->nodes = get_le32(raw + BM_NODES);
	memcpy(bsb->cluster_name, raw + BM_CLUSTER_NAME, BM_CLUSTER_NAME_LEN);
	bsb->cluster_name[BM_CLUSTER_NAME_LEN] = '\0';
	return 0;
}

void md_bitmap_super_encode(const struct md_bitmap_super *bsb, uint8_t raw[MD_BITMAP_SB_BYTES])
{
	memset(raw, 0, MD_BITMAP_SB_BYTES);
	/* Like md_super_encode, the magic is not the caller's to choose: a
	 * zero-initialised struct must still produce a bitmap md recognises. */
	put_le32(raw + BM_MAGIC, MD_BITMAP_MAGIC);
	put_le32(raw + BM_VERSION, bsb->version);
	memcpy(raw + BM_UUID, bsb->uuid, sizeof(bsb->uuid));
	put_le64(raw + BM_EVENTS, bsb->events);
	put_le64(raw + BM_EVENTS_CLEARED, bsb->events_cleared);
	put_le64(raw + BM_SYNC_SIZE, bsb->sync_size);
	put_le32(raw + BM_STATE, bsb->state);
	put_le32(raw + BM_CHUNKSIZE, bsb->chunksize);
	put_le32(raw + BM_DAEMON_SLEEP, bsb->daemon_sleep);
	put_le32(raw + BM_WRITE_BEHIND, bsb->write_behind);
	put_le32(raw + BM_SECTORS_RESERVED, bsb->sectors_reserved);
	put_le32(raw + BM_NODES, bsb->nodes);
	put_fixed_string(raw + BM_CLUSTER_NAME, bsb->cluster_name, BM_CLUSTER_NAME_LEN);
}

bool md_badblock_entry_decode(const uint8_t raw[8], uint64_t *sector_units, uint64_t *count_units)
{
	uint64_t entry = get_le64(raw);
	if (entry == UINT64_MAX)
		return false;
	*sector_units = entry >> 10;
	*count_units = entry & 0x3ff;
	return true;
}

void md_badblock_entry_encode(uint8_t raw[8], uint64_t sector_units, uint64_t count_units)
{
	put_le64(raw, sector_units << 10 | (count_units & 0x3ff));
}
