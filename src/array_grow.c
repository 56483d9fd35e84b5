/* array_grow.c - changing an assembled, unmounted array in place, as
 * mdadm --grow does on a running one: adding or removing the internal
 * write-intent bitmap, growing the size each member gives (after the
 * members grew), and changing a raid1's number of copies. No byte of the
 * volume moves.
 *
 * Everything a change needs (a new bitmap, all bits clear; zeros in the
 * members' new room) is written and synced before any superblock points
 * at it; the superblocks are then written one by one with the events
 * bumped. A stop between two superblocks leaves members one update apart,
 * which assembly accepts (as md does) and settles: the freshest member's
 * bitmap setting, size and raid_disks are the array's (array_assemble.c).
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "array_internal.h"
#include "bitmap.h"
#include "errmsg.h"

/* The change made in memory goes to every member's superblock, clean,
 * with the events bumped. */
static int grow_write_supers(struct raid_array *a, char *err, size_t errlen)
{
	pthread_mutex_lock(&a->state_lock);
	int rc = array_super_sync(a, true);
	pthread_mutex_unlock(&a->state_lock);
	if (rc < 0)
		return errmsg_fail(rc, err, errlen, "cannot write the superblocks: %s",
		                   strerror(-rc));
	return 0;
}

/* Only a clean array with every member of roles [0, roles_kept) in sync:
 * a bitmap added must have nothing to say (all bits clear is true only
 * then), one removed nothing left to say, and every member that stays
 * must get the change. */
static int grow_refusal(const struct raid_array *a, int roles_kept, char *err, size_t errlen)
{
	char missing[256] = "";
	size_t used = 0;

	if (a->read_only)
		return errmsg_fail(-EROFS, err, errlen, "the members are open read-only");
	if (a->was_dirty)
		return errmsg_fail(-EUCLEAN, err, errlen,
		                   "the array was not stopped cleanly: mount it once (raidfuse "
		                   "resyncs it) and unmount it first");
	for (int role = 0; role < a->geo.raid_disks; role++)
		if (a->rebuilding[role])
			return errmsg_fail(-EBUSY, err, errlen,
			                   "%s is being rebuilt into role %d: mount the array and let "
			                   "the rebuild finish first",
			                   a->rebuilding[role]->path, role);
	for (int role = 0; role < roles_kept && used < sizeof(missing); role++)
		if (!a->slot[role])
			used += (size_t)snprintf(missing + used, sizeof(missing) - used, "%s%d",
			                         used ? "," : "", role);
	if (missing[0])
		return errmsg_fail(-ENODEV, err, errlen,
		                   "the array is degraded (missing role(s) %s): rebuild it first, "
		                   "so that every member gets the change",
		                   missing);
	return 0;
}

static int grow_add_bitmap(struct raid_array *a, uint64_t chunk_wanted_bytes, char *err,
                           size_t errlen)
{
	uint64_t sync_bytes = raid_level_sync_bytes(a->ops, &a->geo), chunk_bytes;
	int32_t offset = 0;
	int rc;

	if (!a->ops->bitmap_capable)
		return errmsg_fail(-EOPNOTSUPP, err, errlen,
		                   "%s arrays have no write-intent bitmap (md keeps none: there is "
		                   "no redundancy to resync)",
		                   a->ops->name);
	rc = bitmap_pick_chunk(sync_bytes, chunk_wanted_bytes, &chunk_bytes, err, errlen);
	if (rc < 0)
		return rc;
	/* md keeps one offset for every member: it must fit on each. */
	const struct member *first = NULL;
	for (int i = 0; i < a->nr_members; i++) {
		const struct member *m = &a->members[i];
		int32_t here;
		if (!member_is_live(m))
			continue;
		rc = bitmap_place_added(m, &here, err, errlen);
		if (rc < 0)
			return rc;
		if (first && here != offset)
			return errmsg_fail(-EINVAL, err, errlen,
			                   "%s would keep a bitmap %" PRId32 " sectors from its "
			                   "superblock, %s at %" PRId32 ": md keeps one place for "
			                   "every member",
			                   m->path, here, first->path, offset);
		first = first ? first : m;
		offset = here;
	}
	/* The bitmap carries the events of the superblock update to come,
	 * so that assembly does not take it for a stale one. */
	for (int i = 0; i < a->nr_members && rc == 0; i++) {
		struct member *m = &a->members[i];
		if (!member_is_live(m))
			continue;
		m->sb.feature_map |= MD_FEATURE_BITMAP_OFFSET;
		m->sb.bitmap_offset = offset;
		rc = bitmap_format_member(m, a->set_uuid, sync_bytes, chunk_bytes, a->events + 1);
		if (rc == 0)
			rc = member_sync(m);
		if (rc < 0)
			errmsg_set(err, errlen, "%s: cannot write the bitmap: %s", m->path,
			           strerror(-rc));
	}
	if (rc == 0)
		rc = bitmap_load(a, first, err, errlen);
	return rc;
}

static void grow_remove_bitmap(struct raid_array *a)
{
	for (int i = 0; i < a->nr_members; i++) {
		struct member *m = &a->members[i];
		if (!member_is_live(m))
			continue;
		m->sb.feature_map &= ~MD_FEATURE_BITMAP_OFFSET;
		m->sb.bitmap_offset = 0;
	}
	/* Its bytes stay where they were, as mdadm leaves them. */
	bitmap_free(a->bitmap);
	a->bitmap = NULL;
}

int array_grow_bitmap(struct raid_array *a, bool internal, uint64_t chunk_wanted_bytes,
                      char *err, size_t errlen)
{
	int rc = grow_refusal(a, a->geo.raid_disks, err, errlen);
	if (rc < 0)
		return rc;
	if (internal && a->bitmap)
		return errmsg_fail(-EEXIST, err, errlen,
		                   "the array has an internal bitmap already (%" PRIu64 " KiB "
		                   "chunks)",
		                   bitmap_chunk_bytes(a->bitmap) / 1024);
	if (!internal && !a->bitmap)
		return errmsg_fail(-ENOENT, err, errlen, "the array has no bitmap to remove");
	if (internal)
		rc = grow_add_bitmap(a, chunk_wanted_bytes, err, errlen);
	else
		grow_remove_bitmap(a);
	if (rc < 0)
		return rc;
	return grow_write_supers(a, err, errlen);
}

/* The data bytes m offers: from its data offset to its end. 1.0 keeps its
 * superblock at the end, where a member that grew no longer has it. */
static int grow_member_room(const struct member *m, uint64_t *room_bytes, char *err,
                            size_t errlen)
{
	if (m->sb.super_offset > m->sb.data_offset)
		return errmsg_fail(-EOPNOTSUPP, err, errlen,
		                   "%s: metadata 1.0 keeps its superblock at the member's end, "
		                   "which moves when the member grows; raidfuse grows 1.1 and 1.2 "
		                   "arrays only",
		                   m->path);
	*room_bytes = member_room_after_data_offset(m);
	return 0;
}

/* The new per-member size: want_bytes (0: the most every member offers),
 * in whole units of the level, larger than now. */
static int grow_pick_size(const struct raid_array *a, uint64_t want_bytes, uint64_t *new_bytes,
                          char *err, size_t errlen)
{
	const struct member *smallest = NULL;
	uint64_t room = UINT64_MAX;

	for (int i = 0; i < a->nr_members; i++) {
		const struct member *m = &a->members[i];
		uint64_t here;
		if (!member_is_live(m))
			continue;
		int rc = grow_member_room(m, &here, err, errlen);
		if (rc < 0)
			return rc;
		if (here < room) {
			room = here;
			smallest = m;
		}
	}
	if (!smallest)
		return errmsg_fail(-ENODEV, err, errlen, "no member to grow");
	if (want_bytes > room)
		return errmsg_fail(-ENOSPC, err, errlen,
		                   "--size %" PRIu64 " KiB is more than %s offers (%" PRIu64
		                   " KiB from its data offset to its end)",
		                   want_bytes / 1024, smallest->path, room / 1024);
	uint64_t target = a->ops->usable_dev_bytes(&a->geo, want_bytes ? want_bytes : room);
	if (target < a->geo.dev_bytes)
		return errmsg_fail(-EINVAL, err, errlen,
		                   "--size %" PRIu64 " KiB would shrink the array (each member gives "
		                   "%" PRIu64 " KiB now): raidfuse does not shrink arrays, whose end "
		                   "the file system on them may use",
		                   target / 1024, a->geo.dev_bytes / 1024);
	if (target == a->geo.dev_bytes)
		return errmsg_fail(-EEXIST, err, errlen,
		                   want_bytes ? "each member gives %" PRIu64 " KiB already"
		                              : "each member gives %" PRIu64 " KiB already, the most "
		                                "the smallest member offers: grow the members first",
		                   target / 1024);
	*new_bytes = target;
	return 0;
}

/* Where each role's unused bytes begin, on a member of the current size.
 * Copies-only levels may leave the end of their last row unused (raid10
 * near with an odd product of members and chunks, offset with an odd
 * number of rows): a larger size puts a new chunk's copy there, so it is
 * zeroed with the new room. Parity rows are always whole. */
static void grow_zero_from(const struct raid_array *a, uint64_t zero_from[RAID_MAX_MEMBERS])
{
	uint64_t used_end[RAID_MAX_MEMBERS] = { 0 };

	for (int role = 0; role < a->geo.raid_disks; role++)
		zero_from[role] = a->geo.dev_bytes;
	if (a->ops->max_parity > 0 || !a->geo.chunk_bytes)
		return;
	/* The last rows of the volume: a chunk's copies lie at most this far
	 * behind its place in the volume. */
	uint64_t window = (uint64_t)a->geo.raid_disks * RAID_MAX_COPIES * a->geo.chunk_bytes;
	uint64_t off = a->geo.array_bytes > window ? a->geo.array_bytes - window : 0;
	while (off < a->geo.array_bytes) {
		struct raid_extent ext;
		a->ops->map(&a->geo, a->level_priv, off, &ext);
		for (int c = 0; c < ext.nr_copies; c++) {
			uint64_t end = ext.copies[c].member_off_bytes + ext.len_bytes;
			if (end > used_end[ext.copies[c].role])
				used_end[ext.copies[c].role] = end;
		}
		off += ext.len_bytes;
	}
	for (int role = 0; role < a->geo.raid_disks; role++)
		if (used_end[role] && used_end[role] < a->geo.dev_bytes)
			zero_from[role] = used_end[role];
}

int array_grow_size(struct raid_array *a, uint64_t want_bytes, uint64_t *new_array_bytes,
                    char *err, size_t errlen)
{
	uint64_t old_bytes = a->geo.dev_bytes, new_bytes = 0, chunk_bytes = 0;
	struct raid_geometry geo;
	void *priv = NULL;

	int rc = grow_refusal(a, a->geo.raid_disks, err, errlen);
	if (rc < 0)
		return rc;
	if (!a->ops->can_resize || !a->ops->can_resize(&a->geo))
		return errmsg_fail(-EOPNOTSUPP, err, errlen,
		                   a->ops->can_resize
		                           ? "%s with far copies cannot change size: the copies "
		                             "would move (md refuses it too)"
		                           : "%s arrays cannot change size in place (md cannot "
		                             "either)",
		                   a->ops->name);
	rc = grow_pick_size(a, want_bytes, &new_bytes, err, errlen);
	if (rc < 0)
		return rc;
	geo = a->geo;
	geo.dev_bytes = new_bytes;
	for (int role = 0; role < geo.raid_disks; role++)
		geo.member_bytes[role] = new_bytes;
	rc = a->ops->geometry_init(&geo, &priv, err, errlen);
	if (rc < 0)
		return rc;
	a->ops->geometry_free(priv);
	uint64_t sync_bytes = raid_level_sync_bytes(a->ops, &geo);
	if (a->bitmap) {
		chunk_bytes = bitmap_chunk_for(sync_bytes, bitmap_chunk_bytes(a->bitmap));
		if (!chunk_bytes)
			return errmsg_fail(-ENOSPC, err, errlen,
			                   "the write-intent bitmap has no room for %" PRIu64 " GiB "
			                   "even with md's largest chunk: remove it first (grow "
			                   "--bitmap none)",
			                   sync_bytes >> 30);
	}
	for (int i = 0; i < a->nr_members && chunk_bytes; i++)
		if (member_is_live(&a->members[i]) &&
		    !bitmap_fits(&a->members[i], sync_bytes, chunk_bytes))
			return errmsg_fail(-ENOSPC, err, errlen,
			                   "%s: its write-intent bitmap has no room for the bits of "
			                   "the new size: remove it first (grow --bitmap none)",
			                   a->members[i].path);
	/* The room past the old size may hold anything (a disk's old data):
	 * zeros keep parity and copies consistent there, as create's do. */
	uint64_t zero_from[RAID_MAX_MEMBERS];
	grow_zero_from(a, zero_from);
	for (int i = 0; i < a->nr_members && rc == 0; i++) {
		struct member *m = &a->members[i];
		if (!member_is_live(m))
			continue;
		uint64_t from = m->role >= 0 && m->role < a->geo.raid_disks ? zero_from[m->role]
		                                                             : old_bytes;
		rc = member_zero(m, new_bytes - from, from);
		if (rc == 0 && chunk_bytes)
			rc = bitmap_format_member(m, a->set_uuid, sync_bytes, chunk_bytes,
			                          a->events + 1);
		if (rc == 0)
			rc = member_sync(m);
		if (rc < 0)
			errmsg_set(err, errlen, "%s: cannot prepare its new room: %s", m->path,
			           strerror(-rc));
	}
	if (rc < 0)
		return rc;
	for (int i = 0; i < a->nr_members; i++) {
		struct member *m = &a->members[i];
		uint64_t room = 0;
		if (!member_is_live(m) || grow_member_room(m, &room, NULL, 0) < 0)
			continue;
		m->sb.size = new_bytes / SECTOR_BYTES;
		if (m->sb.data_size < room / SECTOR_BYTES)
			m->sb.data_size = room / SECTOR_BYTES;
	}
	/* Written already, with the events the superblocks are about to get. */
	bitmap_free(a->bitmap);
	a->bitmap = NULL;
	rc = grow_write_supers(a, err, errlen);
	if (rc < 0)
		return rc;
	*new_array_bytes = geo.array_bytes;
	return 0;
}

/* mdadm --grow --raid-devices for a level whose members each hold all of
 * it (raid1): more roles wait for members to be added; fewer need the
 * roles that go to have no member here (failed and removed, as md asks,
 * or left out: recorded faulty then). */
int array_grow_raid_disks(struct raid_array *a, int new_disks, char *err, size_t errlen)
{
	int old_disks = a->geo.raid_disks;

	if (!a->ops->copies_any_count)
		return errmsg_fail(-EOPNOTSUPP, err, errlen,
		                   "%s arrays cannot change their number of members without moving "
		                   "data (a reshape), which raidfuse does not do",
		                   a->ops->name);
	if (new_disks == old_disks)
		return errmsg_fail(-EEXIST, err, errlen, "the array has %d roles already",
		                   old_disks);
	if (new_disks < a->ops->min_disks || new_disks > RAID_MAX_MEMBERS)
		return errmsg_fail(-EINVAL, err, errlen, "%s takes %d to %d members, not %d",
		                   a->ops->name, a->ops->min_disks, RAID_MAX_MEMBERS, new_disks);
	int rc = grow_refusal(a, new_disks < old_disks ? new_disks : old_disks, err, errlen);
	if (rc < 0)
		return rc;
	for (int role = new_disks; role < old_disks; role++)
		if (a->slot[role])
			return errmsg_fail(-EBUSY, err, errlen,
			                   "role %d, which goes, is served by %s: fail and remove it "
			                   "first (raidfuse fail, remove), as mdadm asks",
			                   role, a->slot[role]->path);
	/* A member of a role that goes but that was only left out (not named,
	 * not failed) is still recorded in that role: md's super_1_sync
	 * records every member it does not hold as faulty; so must this, or
	 * the member, one update behind, later claims a role past
	 * raid_disks and the array no longer assembles with it. */
	const struct md_super *roles = &a->slot[0]->sb;
	for (uint32_t dev = 0; new_disks < old_disks && dev < roles->max_dev; dev++)
		if (roles->dev_roles[dev] >= (uint16_t)new_disks &&
		    roles->dev_roles[dev] < (uint16_t)old_disks)
			array_roles_set(a, dev, MD_ROLE_FAULTY);
	for (int i = 0; i < a->nr_members; i++)
		if (member_is_live(&a->members[i]))
			a->members[i].sb.raid_disks = (uint32_t)new_disks;
	a->geo.raid_disks = new_disks;
	return grow_write_supers(a, err, errlen);
}
