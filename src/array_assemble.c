/* array_assemble.c - building a raid_array from its members' superblocks.
 *
 * Assembly follows mdadm's rules: the member with the highest event count
 * is the authority on roles; a member whose events lag (by more than the
 * one md tolerates) or whose role the authority marks faulty or spare is
 * left out with a warning; a degraded array starts only when asked
 * (--run); a dirty *and* degraded one only when forced. Nothing here
 * writes to a member: array_start (array.c) does, once assembly has
 * decided who serves.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "array_internal.h"
#include "bitmap.h"
#include "errmsg.h"
#include "member_badblocks.h"

static int assemble_open_members(struct raid_array *a, const char *const *paths, int nr_paths,
                                 bool read_only, char *err, size_t errlen)
{
	/* Room for members added while mounted, so pointers stay valid. */
	a->members_capacity = nr_paths + RAID_MAX_MEMBERS;
	a->members = calloc((size_t)a->members_capacity, sizeof(*a->members));
	if (!a->members)
		return errmsg_fail(-ENOMEM, err, errlen, "out of memory");
	for (int i = 0; i < nr_paths; i++) {
		int rc = member_open(&a->members[i], paths[i], read_only, err, errlen);
		if (rc < 0)
			return rc;
		a->nr_members++;
		array_note_partition_backup(a, &a->members[i]);
		for (int j = 0; j < i; j++) {
			if (member_same_file(&a->members[j], &a->members[i]))
				return errmsg_fail(-EINVAL, err, errlen,
				                   "%s and %s are the same member given twice",
				                   paths[j], paths[i]);
		}
	}
	for (int i = 0; i < nr_paths; i++) {
		int rc = member_claim(&a->members[i], !read_only, err, errlen);
		if (rc < 0)
			return rc;
	}
	for (int i = 0; i < nr_paths; i++) {
		int rc = member_super_load(&a->members[i], err, errlen);
		if (rc == 0)
			rc = member_badblocks_load(&a->members[i], err, errlen);
		if (rc < 0)
			return rc;
	}
	return 0;
}

static int assemble_check_uuids(struct raid_array *a, char *err, size_t errlen)
{
	const struct md_super *first = &a->members[0].sb;

	for (int i = 1; i < a->nr_members; i++) {
		const struct md_super *sb = &a->members[i].sb;
		if (memcmp(sb->set_uuid, first->set_uuid, 16) != 0) {
			char u0[36], u1[36];
			md_uuid_format(first->set_uuid, u0);
			md_uuid_format(sb->set_uuid, u1);
			return errmsg_fail(-EINVAL, err, errlen,
			                   "%s belongs to array %s but %s belongs to array %s: "
			                   "members of different arrays",
			                   a->members[i].path, u1, a->members[0].path, u0);
		}
	}
	return 0;
}

/* The fields that give the array its shape, as mdadm's compare_super1
 * compares them: a member that disagrees with the freshest is corrupt, or
 * from another incarnation of the array, and its data would be read with
 * a shape that is not its own. mdadm aborts the assembly; so does this. */
static int assemble_check_shape(const struct member *m, const struct member *fresh, char *err,
                                size_t errlen)
{
	const struct md_super *x = &m->sb, *f = &fresh->sb;
	if (m->super_minor != fresh->super_minor || m->super_090 != fresh->super_090)
		return errmsg_fail(-EINVAL, err, errlen,
		                   "%s holds an md metadata %s superblock, %s a %s one: members "
		                   "of different arrays",
		                   m->path, member_metadata_name(m), fresh->path,
		                   member_metadata_name(fresh));
	const char *field = x->level != f->level           ? "level"
	                    : x->layout != f->layout       ? "layout"
	                    : x->chunksize != f->chunksize ? "chunksize"
	                    : x->raid_disks != f->raid_disks ? "raid_disks"
	                    : x->size != f->size           ? "size"
	                    : x->ctime != f->ctime         ? "ctime"
	                                                   : NULL;
	if (!field)
		return 0;
	/* Most often a member left out before the array was grown (its
	 * events say so): not corrupt, only older. */
	if (x->events < f->events && x->level == f->level && x->layout == f->layout &&
	    x->chunksize == f->chunksize && x->ctime == f->ctime)
		return errmsg_fail(-EINVAL, err, errlen,
		                   "%s: its superblock does not match %s's (%s differs: raid_disks "
		                   "%u/%u, size %" PRIu64 "/%" PRIu64 " sectors) and its events %" PRIu64
		                   " are behind the array's %" PRIu64 ": a member left out before the "
		                   "array changed (raidfuse grow); leave it out, or wipe it (mdadm "
		                   "--zero-superblock) and add it as a new member",
		                   m->path, fresh->path, field, x->raid_disks, f->raid_disks, x->size,
		                   f->size, (uint64_t)x->events, (uint64_t)f->events);
	return errmsg_fail(-EINVAL, err, errlen,
	                   "%s: its superblock does not match %s's (%s differs: level %d/%d, "
	                   "layout 0x%x/0x%x, chunksize %u/%u, raid_disks %u/%u, size %" PRIu64
	                   "/%" PRIu64 " sectors): a corrupt superblock, or members of "
	                   "different arrays",
	                   m->path, fresh->path, field, x->level, f->level, x->layout, f->layout,
	                   x->chunksize, f->chunksize, x->raid_disks, f->raid_disks, x->size,
	                   f->size);
}

/* md bumps the events with a resize: a member exactly one update behind
 * whose size is smaller than the freshest's missed the last superblock
 * write of raidfuse grow --size, which had zeroed and synced the new room
 * on every member before any superblock changed. It takes the new size
 * (the data size too, when the member's end leaves room for it). One
 * whose raid_disks differ missed a grow --raid-devices of a level where
 * that moves no byte. */
static void assemble_settle_grow(struct raid_array *a, struct member *m,
                                 const struct member *fresh)
{
	const struct md_super *f = &fresh->sb;
	const struct raid_level_ops *ops = raid_level_find(f->level);
	if (m->sb.events + 1 != f->events)
		return;
	if (ops && ops->copies_any_count && m->sb.level == f->level &&
	    m->sb.raid_disks != f->raid_disks) {
		array_logf(a, "%s: one update behind, with %u roles: takes "
		           "the array's %u (a grow --raid-devices it missed)",
		           m->path, m->sb.raid_disks, f->raid_disks);
		m->sb.raid_disks = f->raid_disks;
	}
	if (m->sb.size >= f->size || m->sb.super_offset > m->sb.data_offset)
		return;
	uint64_t room = member_room_after_data_offset(m) / SECTOR_BYTES;
	if (room < f->size)
		return;
	array_logf(a, "%s: one update behind, giving %" PRIu64 " sectors: takes the array's %"
	           PRIu64 " (a grow --size it missed)",
	           m->path, m->sb.size, f->size);
	m->sb.size = f->size;
	if (m->sb.data_size < room)
		m->sb.data_size = room;
}

static int assemble_check_features(struct member *m, char *err, size_t errlen)
{
	/* md's re-add recovery (MD_FEATURE_RECOVERY_BITMAP): below
	 * recovery_offset the member is in sync, above it only what the
	 * bitmap marks is not. A plain recovery from recovery_offset
	 * rebuilds a superset of that, so the member resumes as one. */
	if ((m->sb.feature_map & MD_FEATURE_RECOVERY_BITMAP) &&
	    (m->sb.feature_map & MD_FEATURE_RECOVERY_OFFSET))
		m->sb.feature_map &= ~MD_FEATURE_RECOVERY_BITMAP;
	uint32_t unknown = m->sb.feature_map & ~MD_FEATURES_SUPPORTED;
	if (unknown & (MD_FEATURE_RESHAPE_ACTIVE | MD_FEATURE_RESHAPE_BACKWARDS |
	               MD_FEATURE_NEW_OFFSET))
		return errmsg_fail(-EOPNOTSUPP, err, errlen,
		                   "%s: a reshape is in progress (feature_map 0x%x); finish it "
		                   "with mdadm first",
		                   m->path, m->sb.feature_map);
	if (unknown)
		return errmsg_fail(-EOPNOTSUPP, err, errlen,
		                   "%s: superblock features 0x%x are not supported (%s)",
		                   m->path, unknown,
		                   unknown & MD_FEATURE_JOURNAL      ? "a write journal"
		                   : unknown & (MD_FEATURE_PPL | MD_FEATURE_MULTIPLE_PPLS)
		                                                     ? "a partial parity log"
		                   : unknown & MD_FEATURE_CLUSTERED ? "a clustered array"
		                   : unknown & MD_FEATURE_RECOVERY_BITMAP
		                           ? "a bitmap recovery without a recovery offset"
		                           : "features unknown to raidfuse; the superblock may be "
		                             "corrupt");
	return 0;
}

/* Place members in their roles from the freshest superblock. */
static int assemble_place_members(struct raid_array *a, const struct md_super *fresh,
                                  char *err, size_t errlen)
{
	for (int i = 0; i < a->nr_members; i++) {
		struct member *m = &a->members[i];
		uint32_t dev = m->sb.dev_number;
		uint16_t role = dev < fresh->max_dev ? fresh->dev_roles[dev] : MD_ROLE_SPARE;

		m->role = -1;
		m->state = MEMBER_STALE;
		if (m->sb.events + 1 < fresh->events) {
			array_logf(a,
			          "%s: events %" PRIu64 " are behind the array's %" PRIu64
			          " (stale: it missed later writes); leaving it out",
			          m->path, m->sb.events, fresh->events);
			continue;
		}
		if (role == MD_ROLE_FAULTY) {
			array_logf(a, "%s: the array records this member as faulty; leaving it out",
			          m->abs_path);
			continue;
		}
		/* Its role is what its own superblock says, as md reads it: a
		 * member that one superblock update behind still calls itself
		 * a spare never learnt that a rebuild onto it began (the
		 * daemon died between the writes) and holds nothing yet. */
		uint16_t own_role = dev < m->sb.max_dev ? m->sb.dev_roles[dev] : MD_ROLE_SPARE;
		if (role < (uint16_t)a->geo.raid_disks && own_role != role) {
			if (own_role == MD_ROLE_SPARE) {
				m->state = MEMBER_SPARE;
				array_logf(a, "%s: the array gives it role %u but its own superblock says "
				           "spare (a rebuild onto it had just begun); kept as a spare: "
				           "rebuilt whole into a role that is missing or fails",
				           m->abs_path, role);
			} else {
				array_logf(a, "%s: its own superblock gives it role %u, the array's role "
				           "%u; leaving it out",
				           m->abs_path, own_role, role);
			}
			continue;
		}
		if (role == MD_ROLE_SPARE || role == MD_ROLE_JOURNAL) {
			m->state = MEMBER_SPARE;
			array_logf(a, "%s: a spare%s", m->abs_path,
			           a->read_only ? " (unused: the array is read-only)"
			                        : " (it takes over a role that is missing or fails)");
			continue;
		}
		if (role >= (uint16_t)a->geo.raid_disks)
			return errmsg_fail(-EINVAL, err, errlen,
			                   "%s: role %u is beyond raid_disks %d", m->path, role,
			                   a->geo.raid_disks);
		bool recovering = (m->sb.feature_map & MD_FEATURE_RECOVERY_OFFSET) &&
		                  m->sb.recovery_offset != MD_RESYNC_NONE;
		/* md would take a checkpoint past the data as a finished
		 * recovery, trusting a corrupt field with a member never
		 * copied; rebuilding it whole costs time, not data. */
		if (recovering && m->sb.recovery_offset > m->sb.data_size) {
			array_logf(a, "%s: recovery_offset %" PRIu64 " sectors is past its data (%" PRIu64
			           " sectors): corrupt; it is rebuilt from the start",
			           m->abs_path, (uint64_t)m->sb.recovery_offset,
			           (uint64_t)m->sb.data_size);
			m->sb.recovery_offset = 0;
		}
		/* A replacement being copied claims the role of the member it
		 * replaces; the one that is in sync keeps serving. */
		if (a->slot[role] && recovering && !a->rebuilding[role]) {
			a->rebuilding[role] = m;
			atomic_store(&a->rebuilt_bytes[role], m->sb.recovery_offset * SECTOR_BYTES);
			m->role = role;
			m->state = MEMBER_REBUILDING;
			continue;
		}
		if (a->slot[role] && !recovering && a->rebuilding[role] == NULL) {
			/* fall through to the error below */
		} else if (a->rebuilding[role] && !recovering && !a->slot[role]) {
			a->slot[role] = m;
			m->role = role;
			m->state = MEMBER_IN_SYNC;
			a->geo.member_bytes[role] = m->sb.data_size * SECTOR_BYTES;
			continue;
		}
		if (a->slot[role])
			return errmsg_fail(-EINVAL, err, errlen,
			                   "%s and %s both claim role %u of the array",
			                   a->slot[role]->path, m->path, role);
		if (recovering) {
			/* Resume where the recovery had got to. */
			a->rebuilding[role] = m;
			atomic_store(&a->rebuilt_bytes[role], m->sb.recovery_offset * SECTOR_BYTES);
			m->role = role;
			m->state = MEMBER_REBUILDING;
			array_logf(a, "%s: recovery onto it stopped at %" PRIu64 " MiB; it resumes",
			           m->abs_path, m->sb.recovery_offset / 2048);
			continue;
		}
		a->slot[role] = m;
		m->role = role;
		m->state = MEMBER_IN_SYNC;
		a->geo.member_bytes[role] = m->sb.data_size * SECTOR_BYTES;
	}
	return 0;
}

int array_assemble(struct raid_array **out, const char *const *paths, int nr_paths,
                   const struct array_assemble_opts *opts, char *err, size_t errlen)
{
	struct raid_array *a;
	const struct md_super *fresh;
	bool missing[RAID_MAX_MEMBERS];
	char missing_text[256];
	int rc;

	*out = NULL;
	if (nr_paths < 1)
		return errmsg_fail(-EINVAL, err, errlen, "no members given");
	a = calloc(1, sizeof(*a));
	if (!a)
		return errmsg_fail(-ENOMEM, err, errlen, "out of memory");
	pthread_mutex_init(&a->state_lock, NULL);
	pthread_mutex_init(&a->member_add_lock, NULL);
	pthread_mutex_init(&a->workers_lock, NULL);
	pthread_mutex_init(&a->log_lock, NULL);
	row_locks_init(&a->row_locks);
	a->read_only = opts->read_only;
	if (opts->tuning_set)
		a->tuning = opts->tuning;
	else
		array_tuning_defaults(&a->tuning);
	if (a->tuning.cache_bytes == 0)
		a->tuning.write_back = false;
	a->log = opts->log;
	a->log_ctx = opts->log_ctx;
	a->event = opts->event;
	a->event_ctx = opts->event_ctx;
	if (opts->served_dir && !(a->served_dir = strdup(opts->served_dir))) {
		rc = errmsg_fail(-ENOMEM, err, errlen, "out of memory");
		goto fail;
	}

	rc = assemble_open_members(a, paths, nr_paths, opts->read_only, err, errlen);
	if (rc == 0)
		rc = assemble_check_uuids(a, err, errlen);
	if (rc < 0)
		goto fail;

	const struct member *fresh_member = &a->members[0];
	for (int i = 1; i < a->nr_members; i++)
		if (a->members[i].sb.events > fresh_member->sb.events)
			fresh_member = &a->members[i];
	fresh = &fresh_member->sb;
	a->super_minor = fresh_member->super_minor;
	a->super_090 = fresh_member->super_090;
	/* raidfuse reads 0.90 but does not write it: every change (the
	 * clean mark at mount, events, a rebuild) is a superblock write. */
	if (a->super_090 && !opts->read_only) {
		rc = errmsg_fail(-EROFS, err, errlen,
		                 "%s: md metadata 0.90 (the legacy format), which raidfuse reads "
		                 "but does not write: mount it with --readonly (or -o ro) to read "
		                 "it or copy its data out. To write to it, convert it to 1.0 with "
		                 "the md driver first (mdadm --assemble --update=metadata, on a "
		                 "clean array without a write-intent bitmap: mdadm --grow "
		                 "--bitmap=none before)",
		                 fresh_member->path);
		goto fail;
	}
	for (int i = 0; i < a->nr_members; i++) {
		assemble_settle_grow(a, &a->members[i], fresh_member);
		rc = assemble_check_features(&a->members[i], err, errlen);
		if (rc == 0)
			rc = assemble_check_shape(&a->members[i], fresh_member, err, errlen);
		if (rc < 0)
			goto fail;
	}
	rc = array_geometry_from_super(&a->geo, fresh, err, errlen);
	if (rc < 0)
		goto fail;
	a->ops = raid_level_find(a->geo.level);
	memcpy(a->set_uuid, fresh->set_uuid, 16);
	memcpy(a->set_name, fresh->set_name, sizeof(a->set_name));
	a->events = fresh->events;
	bool dirty = fresh->resync_offset != MD_RESYNC_NONE;

	rc = assemble_place_members(a, fresh, err, errlen);
	if (rc < 0)
		goto fail;
	/* From here on every serving member carries the authority's roles. */
	for (int role = 0; role < a->geo.raid_disks; role++) {
		struct member *m = a->slot[role];
		if (!m || &m->sb == fresh)
			continue;
		m->sb.max_dev = fresh->max_dev;
		memcpy(m->sb.dev_roles, fresh->dev_roles, sizeof(m->sb.dev_roles));
	}
	/* And its bitmap: md keeps one bitmap offset for the array and
	 * super_1_sync writes it to every member. A member one update behind
	 * (raidfuse grow --bitmap stopped between two members) would else
	 * have the bitmap written over its superblock, or keep a stale one. */
	for (int i = 0; i < a->nr_members; i++) {
		struct member *m = &a->members[i];
		if (!member_is_live(m) || &m->sb == fresh)
			continue;
		m->sb.feature_map = (m->sb.feature_map & ~MD_FEATURE_BITMAP_OFFSET) |
		                    (fresh->feature_map & MD_FEATURE_BITMAP_OFFSET);
		m->sb.bitmap_offset = fresh->bitmap_offset;
	}
	for (int role = 0; role < a->geo.raid_disks; role++)
		missing[role] = !a->slot[role];
	array_missing_text(a, missing_text, sizeof(missing_text));
	int nr_missing = array_missing_count(a);
	if (!a->ops->can_run(&a->geo, missing)) {
		/* A member part way through its rebuild is present but cannot
		 * serve its role: say so rather than call it missing. */
		int nr_part_rebuilt = 0;
		for (int role = 0; role < a->geo.raid_disks; role++)
			nr_part_rebuilt += !a->slot[role] && a->rebuilding[role];
		char part_text[96] = "";
		if (nr_part_rebuilt)
			snprintf(part_text, sizeof(part_text),
			         " (%d of them only part way through a rebuild)", nr_part_rebuilt);
		rc = errmsg_fail(-ENODEV, err, errlen,
		                 "cannot start %s array: %d of %d members in sync; missing role(s) "
		                 "%s%s",
		                 a->ops->name, a->geo.raid_disks - nr_missing, a->geo.raid_disks,
		                 missing_text, part_text);
		goto fail;
	}
	int nr_without_member = 0;
	for (int role = 0; role < a->geo.raid_disks; role++)
		nr_without_member += !a->slot[role] && !a->rebuilding[role];
	if (nr_without_member && !opts->run_degraded) {
		rc = errmsg_fail(-ENODEV, err, errlen,
		                 "%s array is degraded (missing role(s) %s); pass --run to start "
		                 "it degraded",
		                 a->ops->name, missing_text);
		goto fail;
	}
	/* md's rule for parity levels (raid5's "cannot start dirty degraded
	 * array"): a row the crash left half written would rebuild a missing
	 * member's chunk wrongly. Mirrors have no such hole; md starts them. */
	if (nr_missing && dirty && !opts->force && a->ops->max_parity > 0) {
		rc = errmsg_fail(-EUCLEAN, err, errlen,
		                 "%s array is both degraded (missing role(s) %s) and dirty (not "
		                 "stopped cleanly), so its parity cannot be trusted; pass --force "
		                 "to start it anyway",
		                 a->ops->name, missing_text);
		goto fail;
	}
	/* Members of levels without per-member size use their own data area. */
	for (int role = 0; role < a->geo.raid_disks; role++)
		if (!a->slot[role])
			a->geo.member_bytes[role] = a->geo.dev_bytes;
	rc = a->ops->geometry_init(&a->geo, &a->level_priv, err, errlen);
	if (rc < 0)
		goto fail;
	/* The bitmap lives on the members in sync (md reads it from one of
	 * those): a spare, or a member being rebuilt, carries the array's
	 * events but no bitmap of its own. */
	struct member *bitmap_source = NULL;
	for (int role = 0; role < a->geo.raid_disks; role++) {
		struct member *m = a->slot[role];
		if (m && &m->sb == fresh) {
			bitmap_source = m;
			break;
		}
		if (m && (!bitmap_source || m->sb.events > bitmap_source->sb.events))
			bitmap_source = m;
	}
	if (bitmap_source)
		rc = bitmap_load(a, bitmap_source, err, errlen);
	if (rc < 0)
		goto fail;
	if (a->bitmap && !a->ops->bitmap_capable && !a->read_only) {
		rc = errmsg_fail(-EOPNOTSUPP, err, errlen,
		                 "%s arrays with a write-intent bitmap can be mounted --readonly "
		                 "only",
		                 a->ops->name);
		goto fail;
	}
	/* Members being rebuilt too: the rebuild writes their whole share. */
	uint64_t need_sectors = a->geo.dev_bytes / SECTOR_BYTES;
	for (int role = 0; role < a->geo.raid_disks; role++) {
		struct member *serving[2] = { a->slot[role], a->rebuilding[role] };
		for (int i = 0; i < 2; i++) {
			struct member *m = serving[i];
			if (m && need_sectors > m->sb.data_size) {
				rc = errmsg_fail(-EINVAL, err, errlen,
				                 "%s: data_size %" PRIu64 " sectors is smaller than the "
				                 "array's per-member size %" PRIu64 " sectors",
				                 m->path, m->sb.data_size, need_sectors);
				goto fail;
			}
		}
	}

	a->was_dirty = dirty;
	*out = a;
	return 0;
fail:
	array_free(a);
	return rc;
}
