/* array_add.c - adding a member to a running array (a spare, a member
 * rebuilt into a missing role, one re-added from its bitmap) and
 * replacing an in-sync member with a copy: the checks a new member must
 * pass before any byte of it is written, and the superblock it gets.
 * The rebuild itself is sync.c's.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "array.h"
#include "array_internal.h"
#include "bitmap.h"
#include "errmsg.h"
#include "member_badblocks.h"
#include "sync.h"

/* The device number of the file system this daemon serves (its mount
 * point's line in mountinfo), read without asking the mount itself. */
static bool array_served_dev(const struct raid_array *a, dev_t *out)
{
	char line[4096], point[PATH_MAX];
	unsigned major_nr, minor_nr;
	bool found = false;

	if (!a->served_dir)
		return false;
	FILE *f = fopen("/proc/self/mountinfo", "re");
	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		char escaped[PATH_MAX];
		if (sscanf(line, "%*u %*u %u:%u %*s %4095s", &major_nr, &minor_nr, escaped) != 3)
			continue;
		/* mountinfo writes space, tab, newline and backslash as \ooo. */
		size_t n = 0;
		for (const char *p = escaped; *p && n + 1 < sizeof(point); n++) {
			unsigned octal;
			if (p[0] == '\\' && sscanf(p + 1, "%3o", &octal) == 1) {
				point[n] = (char)octal;
				p += 4;
			} else {
				point[n] = *p++;
			}
		}
		point[n] = '\0';
		if (strcmp(point, a->served_dir) == 0) {
			*out = makedev(major_nr, minor_nr); /* the last: what is on top */
			found = true;
		}
	}
	fclose(f);
	return found;
}

/* A member on the array's own volume (volume.img through a loop device,
 * or any file under the mount, by whatever path): every write to it would
 * come back to this daemon, which waits on itself for good. */
static bool array_member_on_self(const struct raid_array *a, const struct member *m)
{
	dev_t served, backing_dev;
	ino_t backing_ino;

	if (!array_served_dev(a, &served))
		return false;
	if (m->st_dev == served)
		return true;
	return member_loop_backing_id(m, &backing_dev, &backing_ino) && backing_dev == served;
}

/* Open, claim and check a member to add, and give it a superblock of
 * this array (a spare, not yet written). */
static int array_member_prepare(struct raid_array *a, const char *path, struct member **out,
                                int *readd_role, char *err, size_t errlen)
{
	const struct member *model = NULL;
	uint32_t next_dev = 0;
	int rc;

	if (a->read_only)
		return errmsg_fail(-EROFS, err, errlen, "the array is mounted read-only");
	int refused = array_rebuild_refusal(a, err, errlen);
	if (refused < 0)
		return refused;
	/* Entries of removed members are kept (their devN stays readable):
	 * a mount takes this many adds, drills and flapping disks included. */
	if (a->nr_members >= a->members_capacity)
		return errmsg_fail(-ENOSPC, err, errlen,
		                   "%d members added since this array was mounted, the most one "
		                   "mount takes: unmount it and mount it again to add more",
		                   RAID_MAX_MEMBERS);
	for (int role = 0; role < a->geo.raid_disks && !model; role++)
		model = a->slot[role];
	if (!model)
		return errmsg_fail(-ENODEV, err, errlen, "no member in sync to copy from");

	if (a->served_dir && member_path_inside(path, a->served_dir))
		return errmsg_fail(-EINVAL, err, errlen,
		                   "%s is inside the mount point %s: the daemon would wait on "
		                   "itself for every write to it",
		                   path, a->served_dir);
	struct member *m = &a->members[a->nr_members];
	rc = member_open(m, path, false, err, errlen);
	if (rc < 0)
		return rc;
	array_note_partition_backup(a, m);
	if (array_member_on_self(a, m)) {
		member_close(m);
		return errmsg_fail(-EINVAL, err, errlen,
		                   "%s lies on this array's own volume (%s): the daemon would wait "
		                   "on itself for every write to it",
		                   path, a->served_dir);
	}
	for (int i = 0; i < a->nr_members; i++) {
		const struct member *x = &a->members[i];
		if (x->state != MEMBER_REMOVED && member_same_file(x, m)) {
			member_close(m);
			if (x->state == MEMBER_STALE || x->state == MEMBER_FAULTY)
				return errmsg_fail(-EEXIST, err, errlen,
				                   "%s is still listed as dev%d (%s): remove it first "
				                   "(raidfuse remove %s dev%d), then add it",
				                   path, i, member_state_name(x->state),
				                   a->served_dir ? a->served_dir : "MOUNTPOINT", i);
			return errmsg_fail(-EEXIST, err, errlen, "%s is a member of this array already",
			                   path);
		}
		if (x->sb.dev_number + 1 > next_dev)
			next_dev = x->sb.dev_number + 1;
	}
	rc = member_claim(m, true, err, errlen);
	if (rc < 0) {
		member_close(m);
		return rc;
	}
	uint64_t need = model->data_offset_bytes + a->geo.dev_bytes;
	if (m->file_bytes < need) {
		uint64_t have = m->file_bytes;
		member_close(m);
		return errmsg_fail(-ENOSPC, err, errlen,
		                   "%s is %" PRIu64 " bytes; a member of this array needs %" PRIu64,
		                   path, have, need);
	}
	bool has_super = member_super_load(m, NULL, 0) == 0;
	const char *version;
	if (!has_super && member_other_md_super(m, &version)) {
		member_close(m);
		return errmsg_fail(-EBUSY, err, errlen,
		                   "%s holds an md superblock (metadata %s) of another array: "
		                   "wipe it first (mdadm --zero-superblock FILE, or wipefs -a FILE) "
		                   "if that array is no longer wanted",
		                   path, version);
	}
	if (has_super && (m->super_minor != a->super_minor || m->super_090 != a->super_090)) {
		const char *version_text = member_metadata_name(m); /* static: outlives m */
		member_close(m);
		return errmsg_fail(-EBUSY, err, errlen,
		                   "%s holds an md metadata %s superblock, and this array's members "
		                   "metadata %s ones: it is no member of this array; wipe it first "
		                   "(mdadm --zero-superblock FILE, or wipefs -a FILE) if what it "
		                   "held is no longer wanted",
		                   path, version_text, array_metadata_name(a));
	}
	if (has_super && memcmp(m->sb.set_uuid, a->set_uuid, 16) != 0) {
		char name[sizeof(m->sb.set_name) + 1];
		snprintf(name, sizeof(name), "%.*s", (int)sizeof(m->sb.set_name), m->sb.set_name);
		member_close(m);
		return errmsg_fail(-EBUSY, err, errlen,
		                   "%s holds the md superblock of another array (%s): wipe it "
		                   "first (mdadm --zero-superblock FILE, or wipefs -a FILE) if "
		                   "that array is no longer wanted",
		                   path, name[0] ? name : "no name");
	}
	uint64_t bad_bytes;
	rc = has_super ? member_badblocks_load(m, err, errlen) : 0;
	if (rc < 0) {
		member_close(m);
		return rc;
	}
	if (member_badblocks_count(m, &bad_bytes)) {
		member_close(m);
		return errmsg_fail(-EINVAL, err, errlen,
		                   "%s has %" PRIu64 " sectors in md's bad block log of its old "
		                   "place, which mean nothing for a new member: wipe it (mdadm "
		                   "--zero-superblock FILE, or wipefs -a FILE) to add it as a new member",
		                   path, bad_bytes / SECTOR_BYTES);
	}
	if (has_super) {
		uint16_t old_role = md_super_role(&m->sb);
		/* One that was itself being rebuilt when it left holds only
		 * what that rebuild had reached (md re-adds it only with
		 * MD_FEATURE_RECOVERY_BITMAP, which raidfuse never writes):
		 * all of it again. */
		bool was_recovering = (m->sb.feature_map & MD_FEATURE_RECOVERY_OFFSET) &&
		                      m->sb.recovery_offset != MD_RESYNC_NONE;
		/* It left while the bitmap kept every region written since: it
		 * needs only those (md's re-add). */
		if (readd_role && old_role < a->geo.raid_disks && !a->slot[old_role] &&
		    !a->rebuilding[old_role] && a->bitmap && !was_recovering &&
		    m->sb.events >= bitmap_events_cleared(a->bitmap) &&
		    m->sb.data_offset * SECTOR_BYTES == model->data_offset_bytes)
			*readd_role = old_role;
		if (old_role < a->geo.raid_disks && a->slot[old_role]) {
			member_close(m);
			return errmsg_fail(-EBUSY, err, errlen,
			                   "%s was role %u of this array, which another member now "
			                   "serves: it was replaced; wipe it (mdadm --zero-superblock "
			                   "FILE, or wipefs -a FILE) to add it as a new member",
			                   path, old_role);
		}
	}
	if (next_dev >= model->sb.max_dev) {
		member_close(m);
		return errmsg_fail(-ENOSPC, err, errlen, "no free device number in the superblock");
	}
	/* Its own flags (write-mostly) come back with a re-added member, as
	 * md reads them from its superblock; a new one has none. */
	uint8_t own_devflags = readd_role && *readd_role >= 0 ? m->sb.devflags : 0;
	m->sb = model->sb;
	m->sb.devflags = own_devflags;
	atomic_store(&m->write_mostly, (own_devflags & MD_DEVFLAG_WRITE_MOSTLY) != 0);
	m->sb.dev_number = next_dev;
	m->super_minor = a->super_minor;
	m->sb.data_size = m->file_bytes / SECTOR_BYTES - m->sb.data_offset;
	if (a->super_minor == 0) {
		/* Metadata 1.0: the superblock near this member's own end, the
		 * bitmap and the bad block log just before it (negative
		 * offsets from it), the data from 0 up to them. */
		uint64_t at = member_super1_offset_sectors(0, m->file_bytes / SECTOR_BYTES);
		int64_t lowest = 0;
		if ((m->sb.feature_map & MD_FEATURE_BITMAP_OFFSET) && m->sb.bitmap_offset < lowest)
			lowest = m->sb.bitmap_offset;
		if (m->sb.bblog_size && m->sb.bblog_offset < lowest)
			lowest = m->sb.bblog_offset;
		int64_t data_end = at == UINT64_MAX ? -1 : (int64_t)at + lowest;
		if (data_end < 0 || (uint64_t)data_end < m->sb.data_offset ||
		    ((uint64_t)data_end - m->sb.data_offset) * SECTOR_BYTES < a->geo.dev_bytes) {
			member_close(m);
			return errmsg_fail(-ENOSPC, err, errlen,
			                   "%s is too small for a member of this metadata 1.0 array: "
			                   "its data (%" PRIu64 " bytes) and, after it, the bitmap, bad "
			                   "block log and superblock must fit",
			                   path, a->geo.dev_bytes);
		}
		m->sb.super_offset = at;
		m->sb.data_size = (uint64_t)data_end - m->sb.data_offset;
	}
	m->sb.recovery_offset = MD_RESYNC_NONE;
	/* A bad block log describes its own member's sectors (and members
	 * with one are refused above): the new member starts with an empty
	 * one where the model keeps its log, for sectors its rebuild finds
	 * nowhere. */
	m->sb.feature_map &= ~(MD_FEATURE_RECOVERY_OFFSET | MD_FEATURE_BAD_BLOCKS);
	m->data_offset_bytes = model->data_offset_bytes;
	rc = member_badblocks_load(m, err, errlen);
	if (rc < 0) {
		member_close(m);
		return rc;
	}
	if (getrandom(m->sb.device_uuid, sizeof(m->sb.device_uuid), 0) != sizeof(m->sb.device_uuid)) {
		member_close(m);
		return errmsg_fail(-EIO, err, errlen, "cannot get random bytes");
	}
	m->role = -1;
	m->state = MEMBER_SPARE;
	*out = m;
	return 0;
}

static int add_member_serialized(struct raid_array *a, const char *path, char *err,
                                 size_t errlen)
{
	struct member *m;
	int readd_role = -1;
	int rc = array_member_prepare(a, path, &m, &readd_role, err, errlen);
	if (rc < 0)
		return rc;
	pthread_mutex_lock(&a->state_lock);
	a->nr_members++;
	array_roles_set(a, m->sb.dev_number, MD_ROLE_SPARE);
	if (readd_role >= 0) {
		a->rebuilding[readd_role] = m;
		a->rebuild_bitmap_only[readd_role] = true;
		atomic_store(&a->rebuilt_bytes[readd_role], 0);
		m->sb.recovery_offset = 0;
	}
	rc = array_super_sync(a, false);
	pthread_mutex_unlock(&a->state_lock);
	if (rc < 0)
		return errmsg_fail(rc, err, errlen, "cannot record the new member: %s", strerror(-rc));
	if (readd_role >= 0)
		array_logf(a, "re-added %s to role %d: only the %" PRIu64 " regions the bitmap "
		           "marks are rebuilt",
		           m->abs_path, readd_role, bitmap_count_set(a->bitmap));
	else
		array_logf(a, "added %s as a spare (device %u)", m->abs_path, m->sb.dev_number);
	array_recovery_kick(a);
	return 0;
}

int array_add_member(struct raid_array *a, const char *path, char *err, size_t errlen)
{
	pthread_mutex_lock(&a->member_add_lock);
	int rc = add_member_serialized(a, path, err, errlen);
	pthread_mutex_unlock(&a->member_add_lock);
	return rc;
}

static int replace_member_serialized(struct raid_array *a, struct member *old, const char *path,
                                     char *err, size_t errlen)
{
	struct member *m;
	int role = old->role;

	int refused = array_rebuild_refusal(a, err, errlen);
	if (refused < 0)
		return refused;
	if (old->state != MEMBER_IN_SYNC || role < 0)
		return errmsg_fail(-EINVAL, err, errlen, "%s is not in sync: add a member instead",
		                   old->abs_path);
	if (a->rebuilding[role])
		return errmsg_fail(-EBUSY, err, errlen, "role %d is being rebuilt already", role);
	int rc = array_member_prepare(a, path, &m, NULL, err, errlen);
	if (rc < 0)
		return rc;
	pthread_mutex_lock(&a->state_lock);
	a->nr_members++;
	a->rebuilding[role] = m;
	atomic_store(&a->rebuilt_bytes[role], 0);
	m->sb.recovery_offset = 0;
	pthread_mutex_unlock(&a->state_lock);
	array_logf(a, "replacing %s (role %d) with %s; the old member serves until the copy ends",
	           old->abs_path, role, m->abs_path);
	rc = array_sync_recover(a, role, m);
	if (rc < 0) {
		pthread_mutex_lock(&a->state_lock);
		a->rebuilding[role] = NULL;
		m->state = MEMBER_REMOVED;
		/* Free for a retry once the check ends. */
		member_unclaim(m);
		pthread_mutex_unlock(&a->state_lock);
		return errmsg_fail(rc, err, errlen, "cannot start the copy: %s",
		                   rc == -EBUSY ? "a check, repair or rebuild is running" :
		                                  strerror(-rc));
	}
	return 0;
}

int array_replace_member(struct raid_array *a, struct member *old, const char *path, char *err,
                         size_t errlen)
{
	pthread_mutex_lock(&a->member_add_lock);
	int rc = replace_member_serialized(a, old, path, err, errlen);
	pthread_mutex_unlock(&a->member_add_lock);
	return rc;
}
