/* array_grow.c - changing an assembled, unmounted array's metadata in
 * place, as mdadm --grow does on a running one: for now, adding or
 * removing the internal write-intent bitmap. The data is not touched.
 *
 * Every member gets its new bitmap (all bits clear) before any superblock
 * points at it, and the superblocks are then written one by one with the
 * events bumped. A stop between two superblocks leaves members one update
 * apart, which assembly accepts (as md does) and settles: the freshest
 * member's bitmap setting is the array's (array_assemble.c).
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "array.h"
#include "array_internal.h"
#include "bitmap.h"
#include "errmsg.h"

/* Only a clean array with every member in sync: the bitmap added must
 * have nothing to say (all bits clear is true only then), and the one
 * removed must have nothing left to say. */
static int grow_refusal(const struct raid_array *a, char *err, size_t errlen)
{
	char missing[256];

	if (a->read_only)
		return errmsg_fail(-EROFS, err, errlen, "the members are open read-only");
	if (a->was_dirty)
		return errmsg_fail(-EUCLEAN, err, errlen,
		                   "the array was not stopped cleanly: mount it once (raidfuse "
		                   "resyncs it) and unmount it, then change its bitmap");
	array_missing_text(a, missing, sizeof(missing));
	if (array_missing_count(a))
		return errmsg_fail(-ENODEV, err, errlen,
		                   "the array is degraded (missing role(s) %s): rebuild it first, "
		                   "so that every member gets the change",
		                   missing);
	for (int role = 0; role < a->geo.raid_disks; role++)
		if (a->rebuilding[role])
			return errmsg_fail(-EBUSY, err, errlen,
			                   "%s is being rebuilt into role %d: mount the array and let "
			                   "the rebuild finish first",
			                   a->rebuilding[role]->path, role);
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
	int rc = grow_refusal(a, err, errlen);
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
	pthread_mutex_lock(&a->state_lock);
	rc = array_super_sync(a, true);
	pthread_mutex_unlock(&a->state_lock);
	if (rc < 0)
		return errmsg_fail(rc, err, errlen, "cannot write the superblocks: %s",
		                   strerror(-rc));
	return 0;
}
