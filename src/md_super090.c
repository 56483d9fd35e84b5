/* md_super090.c - Linux md metadata 0.90 superblock, decoded into the
 * same host-order struct md_super as metadata 1.x, so that assembly,
 * examine and the levels need no second path.
 *
 * 0.90 (md_p.h: mdp_super_t) is 4 KiB of 32-bit words in the byte order
 * of the host that wrote it, kept in the last 64 KiB-aligned 64 KiB of each
 * member, with the data from sector 0. It has no array name, no device
 * UUID, no per-member recovery offset and a table of 27 device
 * descriptors instead of 1.x's role array. A big-endian one (old PowerPC
 * or MIPS NAS boxes) is read too, as `mdadm --examine --metadata=0.swap`
 * reads it (super0_swap_endian; neither md nor mdadm does unasked):
 * every word swapped, and the 64-bit event counts with their high word
 * first. raidfuse never writes one (member_super_store refuses). */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "byte_order.h"
#include "errmsg.h"
#include "md_super.h"

/* Word indexes into mdp_super_t (md_p.h). */
enum {
	W_MAGIC = 0,
	W_MAJOR = 1,
	W_MINOR = 2,
	W_UUID0 = 5,
	W_CTIME = 6,
	W_LEVEL = 7,
	W_SIZE_KIB = 8,
	W_RAID_DISKS = 10,
	W_UUID1 = 13,
	W_UUID2 = 14,
	W_UUID3 = 15,
	W_UTIME = 32,
	W_STATE = 33,
	W_CSUM = 38,
	W_EVENTS_FIRST = 39, /* lo on little-endian hosts, hi on big-endian ones */
	W_EVENTS_SECOND = 40,
	W_CP_EVENTS_FIRST = 41,
	W_CP_EVENTS_SECOND = 42,
	W_RECOVERY_CP = 43,
	W_LAYOUT = 64,
	W_CHUNK_BYTES = 65,
	W_DISKS = 128,      /* 27 descriptors of 32 words */
	W_THIS_DISK = 992,
};
#define DESC_WORDS 32u
#define DESC_NUMBER 0u
#define DESC_RAID_DISK 3u
#define DESC_STATE 4u

#define SB_STATE_CLEAN (1u << 0)
#define SB_STATE_BITMAP_PRESENT (1u << 8)
#define DISK_FAULTY (1u << 0)
#define DISK_SYNC (1u << 2)
#define DISK_REMOVED (1u << 3)
#define DISK_WRITEMOSTLY (1u << 9)

static uint32_t word(const uint8_t *raw, unsigned index)
{
	return get_le32(raw + 4u * index);
}

uint32_t md_super090_csum(const uint8_t raw[MD_SB090_BYTES])
{
	/* md's calc_sb_csum: a 64-bit sum of every word with the checksum
	 * word as zero, its two halves then added. */
	uint64_t sum = 0;
	for (unsigned i = 0; i < MD_SB090_BYTES / 4u; i++)
		if (i != W_CSUM)
			sum += word(raw, i);
	return (uint32_t)((sum & 0xffffffffu) + (sum >> 32));
}

/* md's csum_fold: the 16-bit sum it compares, so that the folded sums
 * old kernels and mdadm on some architectures stored still match. */
static uint32_t csum_fold(uint32_t csum)
{
	csum = (csum & 0xffffu) + (csum >> 16);
	return (csum & 0xffffu) + (csum >> 16);
}

/* A descriptor's role as md's super_90_validate reads it: faulty, in sync
 * (the SYNC bit, with or without ACTIVE), else a spare. A role md's
 * super_90_sync found with no member is written REMOVED (and FAULTY):
 * gone, as 1.x's faulty role, not a spare. */
static uint16_t desc_role(const uint8_t *desc, uint32_t raid_disks)
{
	uint32_t state = get_le32(desc + 4u * DESC_STATE);
	uint32_t raid_disk = get_le32(desc + 4u * DESC_RAID_DISK);

	if (state & (DISK_FAULTY | DISK_REMOVED))
		return MD_ROLE_FAULTY;
	if ((state & DISK_SYNC) && raid_disk < raid_disks)
		return (uint16_t)raid_disk;
	return MD_ROLE_SPARE;
}

bool md_super090_is_big_endian(const uint8_t raw[8])
{
	return get_be32(raw) == MD_SB_MAGIC && get_be32(raw + 4) == 0 &&
	       get_le32(raw) != MD_SB_MAGIC;
}

/* A 64-bit count kept as two words, in the writer's word order. */
static uint64_t two_words(const uint8_t *raw, unsigned first, bool big_endian)
{
	uint64_t lo = word(raw, big_endian ? first + 1 : first);
	uint64_t hi = word(raw, big_endian ? first : first + 1);
	return hi << 32 | lo;
}

int md_super090_decode(const uint8_t raw_disk[MD_SB090_BYTES], uint64_t super_offset_sectors,
                       struct md_super *sb, char *err, size_t errlen)
{
	/* Words in the host order of whoever wrote it: a big-endian one is
	 * swapped into a copy, read from then on like a little-endian one. */
	uint8_t swapped[MD_SB090_BYTES];
	const uint8_t *raw = raw_disk;
	bool big_endian = md_super090_is_big_endian(raw_disk);
	if (big_endian) {
		for (size_t i = 0; i < MD_SB090_BYTES; i += 4)
			put_le32(swapped + i, get_be32(raw_disk + i));
		raw = swapped;
	}
	if (word(raw, W_MAGIC) != MD_SB_MAGIC || word(raw, W_MAJOR) != 0)
		return errmsg_fail(-EINVAL, err, errlen,
		                   "no md metadata 0.90 superblock (magic 0x%08x, major %u)",
		                   word(raw, W_MAGIC), word(raw, W_MAJOR));
	uint32_t minor = word(raw, W_MINOR);
	if (minor == 91)
		return errmsg_fail(-EOPNOTSUPP, err, errlen,
		                   "its version is 0.91: a reshape is in progress; finish it with "
		                   "mdadm first");
	if (minor != 90)
		return errmsg_fail(-EINVAL, err, errlen,
		                   "metadata 0.%u (expected 0.90)", minor);
	uint32_t csum = md_super090_csum(raw);
	if (csum_fold(csum) != csum_fold(word(raw, W_CSUM)))
		return errmsg_fail(-EBADMSG, err, errlen,
		                   "checksum is 0x%08x, but the superblock sums to 0x%08x",
		                   word(raw, W_CSUM), csum);
	uint32_t raid_disks = word(raw, W_RAID_DISKS);
	if (raid_disks == 0 || raid_disks > MD_SB090_DISKS)
		return errmsg_fail(-EINVAL, err, errlen,
		                   "raid_disks is %u (expected 1 to %u): the superblock is corrupt",
		                   raid_disks, MD_SB090_DISKS);
	uint32_t chunk_bytes = word(raw, W_CHUNK_BYTES);
	if (chunk_bytes % 512u)
		return errmsg_fail(-EINVAL, err, errlen,
		                   "chunk_size is %u bytes (expected whole sectors): the "
		                   "superblock is corrupt",
		                   chunk_bytes);

	memset(sb, 0, sizeof(*sb));
	/* md's uuid bytes are the words in host order; mdadm prints each
	 * word as a number, as md_uuid_format prints these bytes. */
	const unsigned uuid_words[4] = { W_UUID0, W_UUID1, W_UUID2, W_UUID3 };
	for (int i = 0; i < 4; i++) {
		uint32_t w = word(raw, uuid_words[i]);
		sb->set_uuid[4 * i] = (uint8_t)(w >> 24);
		sb->set_uuid[4 * i + 1] = (uint8_t)(w >> 16);
		sb->set_uuid[4 * i + 2] = (uint8_t)(w >> 8);
		sb->set_uuid[4 * i + 3] = (uint8_t)w;
	}
	sb->ctime = word(raw, W_CTIME);
	sb->level = (int32_t)word(raw, W_LEVEL);
	sb->layout = word(raw, W_LAYOUT);
	sb->size = (uint64_t)word(raw, W_SIZE_KIB) * 2u;
	sb->chunksize = chunk_bytes / 512u;
	sb->raid_disks = raid_disks;
	uint32_t state = word(raw, W_STATE);
	if (state & SB_STATE_BITMAP_PRESENT) {
		/* 0.90's bitmap always follows the superblock's 4 KiB. */
		sb->feature_map |= MD_FEATURE_BITMAP_OFFSET;
		sb->bitmap_offset = MD_SB090_BYTES / 512;
	}
	sb->data_offset = 0;
	/* The data runs up to the superblock; md caps it at 4 TiB (2^32
	 * KiB, the size field's range) for the levels that store a size
	 * (super_90_load). */
	sb->data_size = super_offset_sectors;
	if (sb->data_size >= (2ull << 32) && sb->level >= 1)
		sb->data_size = (2ull << 32) - 2;
	sb->super_offset = super_offset_sectors;
	sb->utime = word(raw, W_UTIME);
	sb->events = two_words(raw, W_EVENTS_FIRST, big_endian);
	uint64_t cp_events = two_words(raw, W_CP_EVENTS_FIRST, big_endian);
	/* super_90_validate: clean, or resync from the checkpoint when it
	 * was written with these events, else from the start. */
	if (state & SB_STATE_CLEAN)
		sb->resync_offset = MD_RESYNC_NONE;
	else if (cp_events == sb->events)
		sb->resync_offset = word(raw, W_RECOVERY_CP);
	else
		sb->resync_offset = 0;
	sb->sb_csum = word(raw, W_CSUM);

	const uint8_t *this_disk = raw + 4u * W_THIS_DISK;
	sb->dev_number = get_le32(this_disk + 4u * DESC_NUMBER);
	if (sb->dev_number >= MD_SB090_DISKS)
		return errmsg_fail(-EINVAL, err, errlen,
		                   "this device's number is %u (expected below %u): the "
		                   "superblock is corrupt",
		                   sb->dev_number, MD_SB090_DISKS);
	if (get_le32(this_disk + 4u * DESC_STATE) & DISK_WRITEMOSTLY)
		sb->devflags |= MD_DEVFLAG_WRITE_MOSTLY;
	sb->max_dev = MD_SB090_DISKS;
	for (unsigned i = 0; i < MD_SB_MAX_DEV; i++)
		sb->dev_roles[i] = MD_ROLE_SPARE;
	for (unsigned i = 0; i < MD_SB090_DISKS; i++)
		sb->dev_roles[i] = desc_role(raw + 4u * (W_DISKS + i * DESC_WORDS), raid_disks);
	return 0;
}

void md_super090_bitmap_uuid(const uint8_t set_uuid[16], bool big_endian, uint8_t out[16])
{
	/* The bitmap superblock holds md's uuid bytes: each word in the
	 * writer's host order, where set_uuid holds them as mdadm prints
	 * them (which is big-endian order). */
	if (big_endian) {
		memcpy(out, set_uuid, 16);
		return;
	}
	for (int i = 0; i < 16; i += 4) {
		out[i] = set_uuid[i + 3];
		out[i + 1] = set_uuid[i + 2];
		out[i + 2] = set_uuid[i + 1];
		out[i + 3] = set_uuid[i];
	}
}
