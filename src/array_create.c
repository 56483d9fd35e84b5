/* array_create.c - making a new array: validate everything first, then
 * create missing member files, zero the members and write md 1.x
 * superblocks (1.2 unless asked for 1.0 or 1.1), laid out as mdadm's
 * write_init_super1 lays them out. Zeroed data is consistent parity for
 * every level (P and Q of zeros are zeros), so the array is clean from the
 * start without the initial resync md would run. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "array.h"
#include "bitmap.h"
#include "errmsg.h"
#include "parity.h"
#include "partition.h"

#define CREATE_DATA_OFFSET_SECTORS 2048u  /* 1 MiB, as mdadm 4.x for small members */
#define CREATE_BBLOG_OFFSET_SECTORS (BITMAP_OFFSET_SECTORS + 8) /* from the superblock */
#define CREATE_BBLOG_SECTORS ((unsigned)BITMAP_BBLOG_ROOM_SECTORS) /* 512 entries, as mdadm */
_Static_assert(MD_BITMAP_SB_BYTES + BITMAP_ROOM_BITS / 8 <= BITMAP_WRITTEN_SECTORS * SECTOR_BYTES,
               "the bitmap create writes must end before the bad block log");
#define CREATE_MIN_CHUNK_BYTES (4u * 1024u)
#define CREATE_MAX_CHUNK_BYTES (1024u * 1024u)

static int random_fill(uint8_t *buf, size_t len)
{
	while (len > 0) {
		ssize_t got = getrandom(buf, len, 0);
		if (got < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		buf += got;
		len -= (size_t)got;
	}
	return 0;
}

/* Where md's metadata goes on a member of member_sectors, in sectors (the
 * offsets of the bitmap and the bad block log from the superblock). */
struct create_layout {
	uint64_t super_offset;
	uint64_t data_offset;
	uint64_t data_sectors;
	int32_t bitmap_offset;
	int32_t bblog_offset;
};

/* mdadm's choose_bm_space: the room 1.0 keeps before its superblock for a
 * bitmap added later (mdadm --grow --bitmap=internal), by member size. */
static uint64_t create_bitmap_room_sectors(uint64_t member_sectors)
{
	if (member_sectors < 64 * 2)
		return 0;
	if (member_sectors - 64 * 2 >= 200ull * 1024 * 1024 * 2)
		return 128 * 2;
	if (member_sectors - 4 * 2 > 8ull * 1024 * 1024 * 2)
		return 64 * 2;
	return 4 * 2;
}

/* As mdadm's write_init_super1: 1.1 and 1.2 keep the superblock at 0 or
 * 4 KiB, the bitmap 4 KiB after it, the bad block log after the bitmap
 * and the data from 1 MiB; 1.0 keeps the superblock 8 to 12 KiB before
 * the end, the bitmap and the log just before it, the data from 0. */
static struct create_layout create_layout_for(int super_minor, uint64_t member_sectors,
                                              bool bitmap)
{
	struct create_layout l;

	memset(&l, 0, sizeof(l));
	if (super_minor == 0) {
		l.super_offset = member_super1_offset_sectors(0, member_sectors);
		l.bblog_offset = -(int32_t)CREATE_BBLOG_SECTORS;
		l.bitmap_offset = bitmap ? l.bblog_offset - (int32_t)BITMAP_WRITTEN_SECTORS : 0;
		uint64_t reserved = CREATE_BBLOG_SECTORS +
		                    (bitmap ? BITMAP_WRITTEN_SECTORS
		                            : create_bitmap_room_sectors(member_sectors));
		l.data_sectors = l.super_offset > reserved ? l.super_offset - reserved : 0;
		return l;
	}
	l.super_offset = member_super1_offset_sectors(super_minor, member_sectors);
	l.data_offset = CREATE_DATA_OFFSET_SECTORS;
	l.data_sectors = member_sectors > l.data_offset ? member_sectors - l.data_offset : 0;
	l.bitmap_offset = bitmap ? BITMAP_OFFSET_SECTORS : 0;
	l.bblog_offset = CREATE_BBLOG_OFFSET_SECTORS;
	return l;
}

/* The data sectors a member of member_bytes (what --size leaves of a file
 * of file_bytes) offers the array. A 1.0 member is laid out from its true
 * end, and mdadm's room for a bitmap grows with the member (at 8 and 200
 * GiB by more than a few sectors of length): the data can end before what
 * --size alone leaves, so it is the smaller of the two. */
static uint64_t create_data_sectors(int super_minor, uint64_t member_bytes, uint64_t file_bytes,
                                    bool bitmap)
{
	uint64_t sized = create_layout_for(super_minor, member_bytes / SECTOR_BYTES, bitmap)
	                         .data_sectors;
	if (super_minor != 0)
		return sized;
	uint64_t whole = create_layout_for(0, file_bytes / SECTOR_BYTES, bitmap).data_sectors;
	return whole < sized ? whole : sized;
}

/* With --size shorter than an existing member, the zeroing leaves its end:
 * the superblock of the array it held there (1.0 near the end, 0.90 in
 * the last 64 KiB) would still be found by mdadm --examine, blkid and
 * udev's assembly, naming an array whose data this one overwrites. Such
 * a superblock is wiped; other bytes past --size are left alone. */
static int create_wipe_stale_end_supers(struct member *m, uint64_t member_bytes)
{
	const uint64_t sectors = m->file_bytes / SECTOR_BYTES;
	const struct {
		uint32_t major;
		uint64_t sector;
	} places[] = {
		{ 1, member_super1_offset_sectors(0, sectors) },
		{ 0, member_super090_offset_sectors(sectors) },
	};

	for (size_t p = 0; p < sizeof(places) / sizeof(places[0]); p++) {
		uint8_t head[8];
		uint64_t at = places[p].sector;
		if (at == UINT64_MAX || at * SECTOR_BYTES < member_bytes ||
		    (at + 8) * SECTOR_BYTES > m->file_bytes ||
		    member_pread_abs(m, head, sizeof(head), at * SECTOR_BYTES) < 0 ||
		    !md_super_head_is(head, places[p].major))
			continue;
		int rc = member_zero_abs(m, at * SECTOR_BYTES, 8 * SECTOR_BYTES);
		if (rc < 0)
			return rc;
	}
	return 0;
}

/* An empty bad block log (md ends the list at the first all-ones entry;
 * zeros would read as entries of no length, which md refuses). */
static int create_empty_bblog(struct member *m)
{
	uint8_t log[CREATE_BBLOG_SECTORS * SECTOR_BYTES];
	memset(log, 0xff, sizeof(log));
	return member_pwrite_abs(m, log, sizeof(log),
	                         (uint64_t)((int64_t)m->sb.super_offset + m->sb.bblog_offset) *
	                                 SECTOR_BYTES);
}

static int create_check_args(const struct raid_level_ops *ops, int nr_paths,
                             const struct array_create_opts *opts, char *err, size_t errlen)
{
	if (!ops)
		return errmsg_fail(-EINVAL, err, errlen, "RAID level %d is not supported",
		                   opts->level);
	if (opts->raid_disks != nr_paths)
		return errmsg_fail(-EINVAL, err, errlen,
		                   "--raid-devices is %d but %d member(s) were named",
		                   opts->raid_disks, nr_paths);
	if (nr_paths < ops->create_min_disks)
		return errmsg_fail(-EINVAL, err, errlen, "%s needs at least %d members, not %d",
		                   ops->name, ops->create_min_disks, nr_paths);
	if (nr_paths > RAID_MAX_MEMBERS)
		return errmsg_fail(-EINVAL, err, errlen, "at most %d members are supported",
		                   RAID_MAX_MEMBERS);
	if (opts->metadata > ARRAY_METADATA_1_2)
		return errmsg_fail(-EINVAL, err, errlen, "unknown metadata version %d (1.0, 1.1 "
		                   "or 1.2)", (int)opts->metadata);
	if (ops->uses_chunk) {
		uint32_t c = opts->chunk_bytes;
		if (c & (c - 1))
			return errmsg_fail(-EINVAL, err, errlen,
			                   "chunk %u bytes is not a power of two", c);
		if (c < CREATE_MIN_CHUNK_BYTES || c > CREATE_MAX_CHUNK_BYTES)
			return errmsg_fail(-EINVAL, err, errlen,
			                   "chunk %u bytes is outside 4 KiB to 1 MiB", c);
	}
	return 0;
}

/* Whether two names of files still to be made name the same one (a, ./a,
 * dir/../a): their folders resolved, as the kernel would. */
static bool create_same_new_file(const char *first, const char *second)
{
	if (strcmp(first, second) == 0)
		return true;
	char *a = member_resolve_path(first), *b = member_resolve_path(second);
	bool same = a && b && strcmp(a, b) == 0;
	free(a);
	free(b);
	return same;
}

/* Open the members that exist, refusing one named twice and one in use.
 * Those that do not exist need --size; they are created later, after
 * every check has passed, so a refused create leaves nothing behind. */
static int create_open_existing(struct member *members, bool *to_create,
                                const char *const *paths, int nr_paths,
                                const struct array_create_opts *opts, char *err, size_t errlen)
{
	for (int i = 0; i < nr_paths; i++) {
		struct stat st;
		if (!member_names_partition(paths[i]) && lstat(paths[i], &st) < 0) {
			if (errno != ENOENT)
				return errmsg_fail(-errno, err, errlen, "%s: %s", paths[i],
				                   strerror(errno));
			/* FILE@N names partition N of FILE: a missing FILE is a
			 * typo or a disk not made yet, never a new member file
			 * whose name happens to end in @N. */
			char disk_path[PATH_MAX];
			unsigned partition;
			if (partition_spec_split(paths[i], disk_path, sizeof(disk_path), &partition))
				return errmsg_fail(-ENOENT, err, errlen,
				                   "%s: no such file, and no disk image %s whose "
				                   "partition %u it would name; make the disk and its "
				                   "partition table first (sfdisk), or pick a member "
				                   "name not ending in @N",
				                   paths[i], disk_path, partition);
			if (!opts->member_file_bytes)
				return errmsg_fail(-ENOENT, err, errlen,
				                   "%s does not exist; give --size to create it",
				                   paths[i]);
			for (int j = 0; j < i; j++)
				if (to_create[j] && create_same_new_file(paths[j], paths[i]))
					return errmsg_fail(-EINVAL, err, errlen,
					                   "%s and %s are the same member given twice",
					                   paths[j], paths[i]);
			to_create[i] = true;
			continue;
		}
		int rc = member_open(&members[i], paths[i], false, err, errlen);
		if (rc < 0)
			return rc;
		/* Mounting through a backup GPT serves what is there; creating
		 * writes a new member where a damaged table says a partition
		 * lies: the user repairs the table first. */
		if (members[i].partition_from_backup)
			return errmsg_fail(-EINVAL, err, errlen,
			                   "%s: the primary GPT of its disk is damaged (the partition "
			                   "was found through the backup GPT); repair it first "
			                   "(sgdisk -e, or fdisk's write) before creating on it",
			                   paths[i]);
		for (int j = 0; j < i; j++)
			if (!to_create[j] && member_same_file(&members[j], &members[i]))
				return errmsg_fail(-EINVAL, err, errlen,
				                   "%s and %s are the same member given twice",
				                   paths[j], paths[i]);
	}
	for (int i = 0; i < nr_paths; i++) {
		if (to_create[i])
			continue;
		int rc = member_claim(&members[i], true, err, errlen);
		if (rc < 0)
			return rc;
	}
	return 0;
}

static int create_make_new(struct member *members, bool *created, const bool *to_create,
                           const char *const *paths, int nr_paths,
                           const struct array_create_opts *opts, char *err, size_t errlen)
{
	for (int i = 0; i < nr_paths; i++) {
		if (!to_create[i])
			continue;
		int fd = open(paths[i], O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
		if (fd < 0)
			return errmsg_fail(-errno, err, errlen, "%s: cannot create: %s", paths[i],
			                   strerror(errno));
		created[i] = true;
		if (ftruncate(fd, (off_t)opts->member_file_bytes) < 0) {
			int rc = -errno;
			close(fd);
			return errmsg_fail(rc, err, errlen,
			                   "%s: cannot size to %" PRIu64 " bytes: %s", paths[i],
			                   opts->member_file_bytes, strerror(-rc));
		}
		close(fd);
		int rc = member_open(&members[i], paths[i], false, err, errlen);
		if (rc == 0)
			rc = member_claim(&members[i], true, err, errlen);
		if (rc < 0)
			return rc;
	}
	return 0;
}

/* Sizes of every member, and no md superblock on existing ones unless
 * --force. New members have exactly --size bytes. */
static int create_check_members(struct member *members, const bool *to_create, int nr_paths,
                                const char *const *paths, const struct array_create_opts *opts,
                                uint64_t *member_bytes, char *err, size_t errlen)
{
	const uint64_t min_bytes = CREATE_DATA_OFFSET_SECTORS * SECTOR_BYTES + 64 * 1024;

	for (int i = 0; i < nr_paths; i++) {
		struct member *m = &members[i];
		uint64_t bytes = to_create[i] ? opts->member_file_bytes : m->file_bytes;
		if (!to_create[i] && opts->member_file_bytes) {
			if (bytes < opts->member_file_bytes)
				return errmsg_fail(-EINVAL, err, errlen,
				                   "%s is %" PRIu64 " bytes, smaller than --size %" PRIu64,
				                   paths[i], bytes, opts->member_file_bytes);
			bytes = opts->member_file_bytes;
		}
		if (bytes < min_bytes)
			return errmsg_fail(-EINVAL, err, errlen,
			                   "%s is too small: %" PRIu64 " bytes, a member needs at least "
			                   "%" PRIu64 " (the metadata md keeps, up to 1 MiB, and data)",
			                   paths[i], bytes, min_bytes);
		member_bytes[i] = bytes;
		if (!to_create[i] && !opts->force && member_super_load(m, NULL, 0) == 0) {
			char uuid[36];
			md_uuid_format(m->sb.set_uuid, uuid);
			return errmsg_fail(-EEXIST, err, errlen,
			                   "%s already holds an md metadata %s superblock (array %s); "
			                   "pass --force to overwrite it",
			                   m->path, member_metadata_name(m), uuid);
		}
		const char *version;
		if (!to_create[i] && !opts->force && member_other_md_super(m, &version))
			return errmsg_fail(-EEXIST, err, errlen,
			                   "%s already holds an md superblock (metadata %s); pass "
			                   "--force to overwrite it",
			                   m->path, version);
	}
	return 0;
}

int array_create(const char *const *paths, int nr_paths, const struct array_create_opts *opts,
                 char *err, size_t errlen)
{
	const struct raid_level_ops *ops = raid_level_find(opts->level);
	struct member *members = NULL;
	bool *created = NULL, *to_create = NULL;
	uint64_t member_bytes[RAID_MAX_MEMBERS];
	struct md_super sb;
	struct raid_geometry geo;
	void *priv = NULL;
	int rc;

	rc = create_check_args(ops, nr_paths, opts, err, errlen);
	if (rc < 0)
		return rc;
	int super_minor = opts->metadata == ARRAY_METADATA_DEFAULT ? 2 : (int)opts->metadata - 1;
	members = calloc((size_t)nr_paths, sizeof(*members));
	created = calloc((size_t)nr_paths, sizeof(*created));
	to_create = calloc((size_t)nr_paths, sizeof(*to_create));
	if (!members || !created || !to_create) {
		rc = errmsg_fail(-ENOMEM, err, errlen, "out of memory");
		goto out;
	}
	for (int i = 0; i < nr_paths; i++) {
		members[i].fd = -1;
		members[i].backing_fd = -1;
	}
	rc = create_open_existing(members, to_create, paths, nr_paths, opts, err, errlen);
	if (rc == 0)
		rc = create_check_members(members, to_create, nr_paths, paths, opts, member_bytes,
		                          err, errlen);
	if (rc < 0)
		goto out;

	memset(&sb, 0, sizeof(sb));
	sb.level = opts->level;
	sb.layout = opts->layout_set ? opts->layout : ops->default_layout;
	sb.feature_map = ops->create_feature_map;
	sb.chunksize = ops->uses_chunk ? opts->chunk_bytes / SECTOR_BYTES : 0;
	sb.raid_disks = (uint32_t)opts->raid_disks;
	bool bitmap = ops->bitmap_capable && !opts->no_bitmap;
	/* The offsets each member gets from create_layout_for; these are
	 * the same on every member. Room for md's bad block log where
	 * mdadm's write_init_super1 puts it, next to the 4 KiB kept for the
	 * bitmap (which create never lets grow past it). Empty: md (or a
	 * raidfuse rebuild) logs there the sectors it cannot write or
	 * rebuild, instead of failing a member. */
	struct create_layout common = create_layout_for(super_minor, 0, bitmap);
	sb.data_offset = common.data_offset;
	sb.bblog_offset = common.bblog_offset;
	sb.bblog_size = CREATE_BBLOG_SECTORS;
	sb.bblog_shift = 0;
	sb.max_dev = MD_SB_DEFAULT_MAX_DEV;
	sb.resync_offset = MD_RESYNC_NONE;
	sb.ctime = sb.utime = (uint64_t)time(NULL);
	for (uint32_t i = 0; i < MD_SB_MAX_DEV; i++)
		sb.dev_roles[i] = i < sb.raid_disks ? (uint16_t)i : MD_ROLE_SPARE;
	if (opts->name) {
		snprintf(sb.set_name, sizeof(sb.set_name), "%s", opts->name);
	} else {
		char host[64] = "localhost";
		gethostname(host, sizeof(host) - 1);
		snprintf(sb.set_name, sizeof(sb.set_name), "%.30s:0", host);
	}
	rc = random_fill(sb.set_uuid, sizeof(sb.set_uuid));
	if (rc < 0) {
		errmsg_set(err, errlen, "cannot get random bytes for the array UUID");
		goto out;
	}

	/* Size: the usable bytes of the smallest member for uniform levels;
	 * linear and raid0 use each member whole. */
	rc = array_geometry_from_super(&geo, &sb, err, errlen);
	if (rc < 0)
		goto out;
	uint64_t smallest = UINT64_MAX;
	for (int i = 0; i < nr_paths; i++) {
		uint64_t file_bytes = to_create[i] ? member_bytes[i] : members[i].file_bytes;
		uint64_t data_bytes =
		        create_data_sectors(super_minor, member_bytes[i], file_bytes, bitmap) *
		        SECTOR_BYTES;
		geo.member_bytes[i] = ops->usable_dev_bytes(&geo, data_bytes);
		if (geo.member_bytes[i] < smallest)
			smallest = geo.member_bytes[i];
	}
	if (ops->uniform_members)
		geo.dev_bytes = smallest;
	rc = ops->geometry_init(&geo, &priv, err, errlen);
	if (rc < 0)
		goto out;
	ops->geometry_free(priv);
	sb.size = geo.dev_bytes / SECTOR_BYTES;
	uint64_t bitmap_chunk = 0, sync_bytes = raid_level_sync_bytes(ops, &geo);
	if (bitmap) {
		sb.feature_map |= MD_FEATURE_BITMAP_OFFSET;
		sb.bitmap_offset = common.bitmap_offset;
		rc = bitmap_pick_chunk(sync_bytes, opts->bitmap_chunk_bytes, &bitmap_chunk, err,
		                       errlen);
		if (rc < 0)
			goto out;
	} else if (opts->want_bitmap) {
		rc = errmsg_fail(-EINVAL, err, errlen,
		                 "--bitmap internal: raidfuse keeps no write-intent bitmap for "
		                 "%s (raid1, raid10, raid5 and raid6 have one)",
		                 ops->name);
		goto out;
	} else if (opts->bitmap_chunk_bytes) {
		rc = errmsg_fail(-EINVAL, err, errlen, "--bitmap-chunk given, but %s",
		                 opts->no_bitmap ? "--bitmap none asks for no bitmap"
		                                 : "this level has no write-intent bitmap");
		goto out;
	}
	rc = create_make_new(members, created, to_create, paths, nr_paths, opts, err, errlen);
	if (rc < 0)
		goto out;

	for (int i = 0; i < nr_paths; i++) {
		struct member *m = &members[i];
		/* 1.0 keeps its superblock at the true end of the member, past
		 * --size if the file is longer (md finds it only there): that
		 * tail, bitmap and log included, is zeroed too. */
		uint64_t layout_sectors = super_minor == 0 ? m->file_bytes / SECTOR_BYTES
		                                                 : member_bytes[i] / SECTOR_BYTES;
		struct create_layout layout = create_layout_for(super_minor, layout_sectors,
		                                                bitmap);
		rc = member_zero_abs(m, 0, member_bytes[i]);
		if (rc == 0 && m->file_bytes > member_bytes[i])
			rc = create_wipe_stale_end_supers(m, member_bytes[i]);
		if (rc == 0 && super_minor == 0) {
			int64_t lowest = layout.bblog_offset;
			if (bitmap && layout.bitmap_offset < lowest)
				lowest = layout.bitmap_offset;
			uint64_t tail_bytes = (uint64_t)((int64_t)layout.super_offset + lowest) *
			                      SECTOR_BYTES;
			rc = member_zero_abs(m, tail_bytes, m->file_bytes - tail_bytes);
		}
		if (rc < 0) {
			errmsg_set(err, errlen, "%s: cannot zero the member: %s", m->path,
			           strerror(-rc));
			goto out;
		}
		m->sb = sb;
		m->super_minor = super_minor;
		m->sb.dev_number = (uint32_t)i;
		m->sb.super_offset = layout.super_offset;
		m->sb.data_size = layout.data_sectors;
		m->data_offset_bytes = m->sb.data_offset * SECTOR_BYTES;
		/* linear and raid0 use each member's data_size whole (md's
		 * rdev->sectors): it ends where --size leaves it, as with 1.2,
		 * not at a 1.0 member's true end (never zeroed, nor asked for). */
		if (!ops->uniform_members)
			m->sb.data_size = create_data_sectors(super_minor, member_bytes[i],
			                                      m->file_bytes, bitmap);
		rc = random_fill(m->sb.device_uuid, sizeof(m->sb.device_uuid));
		if (rc == 0)
			rc = member_super_store(m);
		if (rc == 0)
			rc = create_empty_bblog(m);
		if (rc == 0 && bitmap_chunk)
			rc = bitmap_format_member(m, sb.set_uuid, sync_bytes, bitmap_chunk,
			                          sb.events);
		if (rc == 0)
			rc = member_sync(m);
		if (rc < 0) {
			errmsg_set(err, errlen, "%s: cannot write the superblock: %s", m->path,
			           strerror(-rc));
			goto out;
		}
	}
out:
	for (int i = 0; members && i < nr_paths; i++) {
		member_close(&members[i]);
		if (rc < 0 && created[i])
			unlink(paths[i]);
	}
	free(members);
	free(created);
	free(to_create);
	return rc;
}
