/* array.c - a running array's state: keeping the superblocks in step
 * with it (events, clean/dirty, failed members), member failure, rebuild
 * progress, start and stop, and the volume I/O entry points. Assembly from
 * the superblocks is array_assemble.c's; adding and replacing members,
 * array_add.c's.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "array.h"
#include "array_internal.h"
#include "bitmap.h"
#include "member_badblocks.h"
#include "errmsg.h"
#include "textbuf.h"
#include "io_pool.h"
#include "sync.h"

/* Into the ring (MOUNT/.raidfuse/log) and to the log callback. */
static void array_log_line(struct raid_array *a, const char *msg)
{
	time_t now = time(NULL);
	struct tm tm;

	gmtime_r(&now, &tm);
	pthread_mutex_lock(&a->log_lock);
	char *slot = a->log_ring[a->log_next++ % 64];
	size_t stamp = strftime(slot, 32, "%Y-%m-%dT%H:%M:%SZ ", &tm);
	snprintf(slot + stamp, sizeof(a->log_ring[0]) - stamp, "%s", msg);
	pthread_mutex_unlock(&a->log_lock);
	if (a->log)
		a->log(a->log_ctx, msg);
}

/* The line into the log and, for an event, to the event callback. */
static void array_vlog(struct raid_array *a, const char *event, const struct member *member,
                       const char *disc, const char *fmt, va_list ap)
{
	char msg[512];

	vsnprintf(msg, sizeof(msg), fmt, ap);
	array_log_line(a, msg);
	if (event && a->event)
		a->event(a->event_ctx, event, member ? member->abs_path : NULL, disc, msg);
}

void array_logf(struct raid_array *a, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	array_vlog(a, NULL, NULL, NULL, fmt, ap);
	va_end(ap);
}

/* A member found through its disk's backup GPT serves (the kernel reads
 * such a disk too), but the user hears that the primary table is damaged. */
void array_note_partition_backup(struct raid_array *a, const struct member *m)
{
	if (m->partition_from_backup)
		array_logf(a, "%s: the primary GPT of its disk is damaged; partition %u was found "
		           "through the backup GPT (repair the primary with sgdisk -e or fdisk)",
		           m->abs_path, m->partition);
}

void array_eventf(struct raid_array *a, const char *event, const struct member *member,
                  const char *fmt, ...)
{
	va_list ap;
	/* mdadm's Monitor passes no third argument with RebuildStarted,
	 * RebuildNN and RebuildFinished: scripts written for it take one
	 * there for a mismatch count, never for a member. */
	const char *disc = member && strncmp(event, "Rebuild", 7) != 0 ? member->abs_path : NULL;

	va_start(ap, fmt);
	array_vlog(a, event, member, disc, fmt, ap);
	va_end(ap);
}

void array_eventf_disc(struct raid_array *a, const char *event, const struct member *member,
                       const char *disc, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	array_vlog(a, event, member, disc, fmt, ap);
	va_end(ap);
}

void array_log_text(struct raid_array *a, char *buf, size_t len)
{
	struct textbuf t = textbuf_init(buf, len);

	pthread_mutex_lock(&a->log_lock);
	unsigned first = a->log_next > 64 ? a->log_next - 64 : 0;
	for (unsigned i = first; i < a->log_next; i++)
		textbuf_appendf(&t, "%s\n", a->log_ring[i % 64]);
	pthread_mutex_unlock(&a->log_lock);
}

int array_geometry_from_super(struct raid_geometry *geo, const struct md_super *sb, char *err,
                              size_t errlen)
{
	const struct raid_level_ops *ops = raid_level_find(sb->level);

	memset(geo, 0, sizeof(*geo));
	if (!ops)
		return errmsg_fail(-EINVAL, err, errlen, "RAID level %d is not supported",
		                   sb->level);
	if (sb->raid_disks < 1 || sb->raid_disks > RAID_MAX_MEMBERS)
		return errmsg_fail(-EINVAL, err, errlen, "raid_disks %u out of range (1-%d)",
		                   sb->raid_disks, RAID_MAX_MEMBERS);
	if ((int)sb->raid_disks < ops->min_disks)
		return errmsg_fail(-EINVAL, err, errlen, "%s needs at least %d members, not %u",
		                   ops->name, ops->min_disks, sb->raid_disks);
	if (ops->uses_chunk && sb->chunksize == 0)
		return errmsg_fail(-EINVAL, err, errlen, "%s with chunk size 0", ops->name);
	/* Both kept in bytes: a corrupt field must be refused, not wrap to
	 * a plausible chunk or member size that md would never read. */
	if (sb->chunksize > UINT32_MAX / SECTOR_BYTES)
		return errmsg_fail(-EINVAL, err, errlen,
		                   "chunksize %u sectors is too large (expected at most %u)",
		                   sb->chunksize, UINT32_MAX / SECTOR_BYTES);
	if (sb->size > UINT64_MAX / SECTOR_BYTES)
		return errmsg_fail(-EINVAL, err, errlen, "size %" PRIu64 " sectors is too large",
		                   sb->size);
	geo->level = sb->level;
	geo->layout = sb->layout;
	geo->feature_map = sb->feature_map;
	geo->chunk_bytes = ops->uses_chunk || sb->chunksize ? sb->chunksize * SECTOR_BYTES : 0;
	geo->raid_disks = (int)sb->raid_disks;
	geo->dev_bytes = sb->size * SECTOR_BYTES;
	return 0;
}

/* ---- superblock updates -------------------------------------------- */

/* Members whose superblocks follow the array's state. */
bool member_is_live(const struct member *m)
{
	return m->state == MEMBER_IN_SYNC || m->state == MEMBER_REBUILDING ||
	       m->state == MEMBER_SPARE;
}

static void array_roles_mark_faulty(struct raid_array *a, uint32_t dev_number);

/* Give up m, which serves no role (a spare, or a member being rebuilt or
 * copied): faulty, out of every role it was rebuilt for, and recorded so
 * in the roles table. Caller holds state_lock and syncs the superblocks. */
static void member_give_up_locked(struct raid_array *a, struct member *m)
{
	for (int role = 0; role < a->geo.raid_disks; role++) {
		if (a->rebuilding[role] == m) {
			a->rebuilding[role] = NULL;
			a->rebuild_bitmap_only[role] = false;
		}
	}
	m->state = MEMBER_FAULTY;
	array_roles_mark_faulty(a, m->sb.dev_number);
}

/* Take role's member in sync out of the array: faulty, its role empty,
 * and so recorded in the roles table (written by the caller's superblock
 * update). Caller holds state_lock. */
static void role_fail_locked(struct raid_array *a, int role)
{
	struct member *m = a->slot[role];
	a->slot[role] = NULL;
	m->state = MEMBER_FAULTY;
	array_roles_mark_faulty(a, m->sb.dev_number);
}

/* Write the array state to every live member: events bumped, dirty or
 * clean, roles. Caller holds state_lock. */
int array_super_sync(struct raid_array *a, bool clean)
{
	bool roles_changed = false;
	int rc = 0;

	if (a->read_only)
		return 0;
	a->events++;
	a->super_recorded = 0;
	/* The bitmap carries the events too, and md distrusts one older than
	 * the superblocks (a full resync): it goes first, as in md's
	 * md_update_sb. A newer bitmap than the superblocks is harmless. */
	int brc = bitmap_store(a);
	for (int i = 0; i < a->nr_members; i++) {
		struct member *m = &a->members[i];
		if (!member_is_live(m))
			continue;
		m->sb.events = a->events;
		m->sb.utime = (uint64_t)time(NULL);
		/* md marks the copy that replaces a member still serving the
		 * same role; without it md would find two devices claiming one
		 * role and refuse the array. */
		if (m->state == MEMBER_REBUILDING && m->role >= 0 && a->slot[m->role] &&
		    a->slot[m->role] != m)
			m->sb.feature_map |= MD_FEATURE_REPLACEMENT;
		else
			m->sb.feature_map &= ~MD_FEATURE_REPLACEMENT;
		/* md's bad block log: named while the member holds entries,
		 * dropped once it is empty, as md's super_1_sync does. */
		int bbl = member_badblocks_feature(m);
		if (bbl > 0)
			m->sb.feature_map |= MD_FEATURE_BAD_BLOCKS;
		else if (bbl < 0)
			m->sb.feature_map &= ~MD_FEATURE_BAD_BLOCKS;
		m->sb.resync_offset = clean && !atomic_load(&a->resync_pending) ? MD_RESYNC_NONE : 0;
		int wrc = member_super_store(m);
		if (wrc == 0)
			wrc = member_sync(m);
		if (wrc < 0 && m->state != MEMBER_IN_SYNC) {
			/* A spare or a member being rebuilt serves nothing yet:
			 * it is given up rather than failing every later
			 * superblock update (its sync error sticks). */
			member_give_up_locked(a, m);
			array_logf(a, "%s cannot take a superblock update: %s; it is now faulty",
			           m->abs_path, strerror(-wrc));
			roles_changed = true;
			continue;
		}
		/* md's super_written: a member that cannot record the array's
		 * state is failed, if the array can run without it; else its
		 * superblock is left behind and the caller hears of it. */
		if (wrc < 0 && m->role >= 0 && a->slot[m->role] == m &&
		    array_can_spare(a, m->role, NULL, 0)) {
			role_fail_locked(a, m->role);
			array_eventf(a, "Fail", m,
			             "member %s (role %d) cannot take a superblock update: %s; the "
			             "array continues degraded",
			             m->abs_path, m->role, strerror(-wrc));
			a->kick_wanted = true;
			roles_changed = true;
			continue;
		}
		if (wrc < 0 && rc == 0)
			rc = wrc;
		if (wrc == 0 && m->state == MEMBER_IN_SYNC)
			a->super_recorded++;
	}
	/* Members written before the change carry the old roles table under
	 * these events: write them all again (the faulty one is no longer
	 * live, so this ends). */
	if (roles_changed)
		return array_super_sync(a, clean);
	if (brc < 0 && rc == 0)
		rc = brc;
	return rc;
}

/* Set dev_roles[dev_number] in every live member's superblock. */
void array_roles_set(struct raid_array *a, uint32_t dev_number, uint16_t role)
{
	for (int i = 0; i < a->nr_members; i++) {
		struct member *m = &a->members[i];
		if (member_is_live(m) && dev_number < m->sb.max_dev)
			m->sb.dev_roles[dev_number] = role;
	}
}

static void array_roles_mark_faulty(struct raid_array *a, uint32_t dev_number)
{
	array_roles_set(a, dev_number, MD_ROLE_FAULTY);
}

bool array_can_spare(struct raid_array *a, int role, const int *also, int nr_also)
{
	bool missing[RAID_MAX_MEMBERS];
	for (int r = 0; r < a->geo.raid_disks; r++)
		missing[r] = !a->slot[r] || r == role;
	for (int i = 0; i < nr_also; i++)
		missing[also[i]] = true;
	return a->ops->can_run(&a->geo, missing);
}

bool array_has_redundancy(struct raid_array *a)
{
	for (int role = 0; role < a->geo.raid_disks; role++)
		if (a->slot[role] && array_can_spare(a, role, NULL, 0))
			return true;
	if (a->ops->max_parity != 0 || !a->ops->map)
		return false;
	/* Copies: no member may be lost, yet some extents may still have two
	 * (a RAID10 of 3 less one keeps both copies of a third of its
	 * chunks), and md's check compares those (raid10_sync_request skips
	 * only what has fewer than two). Which members hold a chunk's copies
	 * repeats every raid_disks chunks of the volume. */
	uint64_t step = a->geo.chunk_bytes ? a->geo.chunk_bytes : a->geo.array_bytes;
	for (int c = 0; c < a->geo.raid_disks && step && (uint64_t)c * step < a->geo.array_bytes;
	     c++) {
		struct raid_extent ext;
		int present = 0;
		a->ops->map(&a->geo, a->level_priv, (uint64_t)c * step, &ext);
		for (int i = 0; i < ext.nr_copies; i++)
			present += a->slot[ext.copies[i].role] != NULL;
		if (present >= 2)
			return true;
	}
	return false;
}

const char *array_metadata_name(const struct raid_array *a)
{
	return metadata_version_name(a->super_090, a->super_minor);
}

int array_missing_count(const struct raid_array *a)
{
	int missing = 0;
	for (int role = 0; role < a->geo.raid_disks; role++)
		missing += !a->slot[role];
	return missing;
}

void array_missing_text(const struct raid_array *a, char *out, size_t outlen)
{
	struct textbuf t = textbuf_init(out, outlen);
	for (int role = 0; role < a->geo.raid_disks; role++)
		if (!a->slot[role])
			textbuf_appendf(&t, "%s%d", t.used ? ", " : "", role);
}

/* Whether a superblock update under the lock just held failed a member
 * out (a spare may take its role); cleared. Caller holds state_lock. */
static bool kick_wanted_take_locked(struct raid_array *a)
{
	bool wanted = a->kick_wanted;
	a->kick_wanted = false;
	return wanted;
}

/* A member was failed out in memory but no superblock could record it
 * (every write of the update failed): md does not complete a write until
 * the failure is on disk (MD_SB_CHANGE_PENDING). Here the members would
 * still call the failed one in sync after a crash, and its stale chunks
 * would be trusted: no later write may be reported durable. Caller holds
 * state_lock. */
static void array_failure_unrecorded_locked(struct raid_array *a, const struct member *m, int rc)
{
	if (a->sticky_error == 0)
		a->sticky_error = rc;
	if (!atomic_exchange(&a->broken, true))
		array_logf(a, "the failure of %s could not be recorded in any superblock: %s; the "
		           "array is failed (writes fail) so that none is taken for durable",
		           m->abs_path, strerror(-rc));
}

bool array_member_error(struct raid_array *a, int role, struct member *erred, int err,
                        bool is_write)
{
	bool failed = false, kick = false;

	pthread_mutex_lock(&a->state_lock);
	struct member *m = a->slot[role];
	if (!m || m != erred) {
		pthread_mutex_unlock(&a->state_lock);
		return true;
	}
	/* Sectors md logged as bad: stale bytes, not a failing member. */
	if (err == -ENODATA && !is_write) {
		pthread_mutex_unlock(&a->state_lock);
		return false;
	}
	if (array_can_spare(a, role, NULL, 0)) {
		role_fail_locked(a, role);
		int src = array_super_sync(a, false);
		if (src < 0 && a->super_recorded == 0)
			array_failure_unrecorded_locked(a, m, src);
		failed = true;
		array_eventf(a, "Fail", m,
		             "member %s (role %d) failed on %s: %s; the array continues degraded",
		          m->abs_path, role, is_write ? "write" : "read", strerror(-err));
		kick = true;
	} else if (is_write) {
		/* Lost without a copy to fall back on: md marks the array
		 * broken. A parity member is out as well, for in-memory use
		 * only (the superblocks keep it, so a forced assembly can take
		 * it back): its stale chunks would otherwise feed
		 * reconstructions that read back wrong bytes without an error.
		 * A mirror's last copy keeps serving what it holds, as in md. */
		if (a->sticky_error == 0)
			a->sticky_error = err;
		bool first = !atomic_exchange(&a->broken, true);
		if (a->ops->max_parity > 0) {
			a->slot[role] = NULL;
			m->state = MEMBER_FAULTY;
		}
		array_eventf(a, "Fail", m,
		             "member %s (role %d) failed on write: %s; no redundancy left: the "
		             "array is failed%s (writes fail, reads that need the member fail); "
		             "unmount, check the members, then mount --force",
		             m->abs_path, role, strerror(-err), first ? "" : " already");
	} else {
		array_logf(a, "member %s (role %d): read error: %s; no redundancy left to fail it",
		          m->abs_path, role, strerror(-err));
	}
	kick |= kick_wanted_take_locked(a);
	pthread_mutex_unlock(&a->state_lock);
	if (kick)
		array_recovery_kick(a); /* a spare takes over at once */
	return failed;
}

int array_fail_role(struct raid_array *a, int role)
{
	if (role < 0 || role >= a->geo.raid_disks)
		return -EINVAL;
	pthread_mutex_lock(&a->state_lock);
	struct member *m = a->slot[role];
	if (!m) {
		pthread_mutex_unlock(&a->state_lock);
		return -ENODEV;
	}
	if (!array_can_spare(a, role, NULL, 0)) {
		pthread_mutex_unlock(&a->state_lock);
		return -EBUSY;
	}
	role_fail_locked(a, role);
	int src = array_super_sync(a, false);
	if (src < 0 && a->super_recorded == 0)
		array_failure_unrecorded_locked(a, m, src);
	(void)kick_wanted_take_locked(a); /* kicked below anyway */
	pthread_mutex_unlock(&a->state_lock);
	array_eventf(a, "Fail", m, "member %s (role %d) set faulty; the array continues degraded",
	             m->abs_path, role);
	array_recovery_kick(a);
	return 0;
}

/* Give up m if it is still the target of role's rebuild or copy; *serving
 * is the member that keeps the role (a replace), or NULL. */
static bool rebuild_target_drop(struct raid_array *a, int role, struct member *m,
                                struct member **serving)
{
	bool dropped = false;

	pthread_mutex_lock(&a->state_lock);
	if (m && role >= 0 && role < a->geo.raid_disks && a->rebuilding[role] == m) {
		member_give_up_locked(a, m);
		/* As for a member in sync (array_member_error): if no
		 * superblock records the drop, a restart would take m's
		 * recovery_offset for good and serve the bytes it failed to
		 * take; fail the array rather than let a write count as done. */
		int src = array_super_sync(a, false);
		if (src < 0 && a->super_recorded == 0)
			array_failure_unrecorded_locked(a, m, src);
		*serving = a->slot[role];
		dropped = true;
	}
	bool kick = kick_wanted_take_locked(a);
	pthread_mutex_unlock(&a->state_lock);
	if (kick)
		array_recovery_kick(a);
	return dropped;
}

int array_fail_rebuilding(struct raid_array *a, struct member *m)
{
	int role = m->role;
	struct member *serving = NULL;

	if (!rebuild_target_drop(a, role, m, &serving))
		return -EINVAL;
	array_eventf(a, "FailSpare", m, "%s, being %s role %d, set faulty; %s", m->abs_path,
	             serving ? "copied to replace" : "rebuilt for", role,
	             serving ? "the member it replaced keeps serving" : "the rebuild stops");
	return 0;
}

int array_set_write_mostly(struct raid_array *a, struct member *m, bool on)
{
	if (!a->ops->honours_write_mostly)
		return -EOPNOTSUPP;
	if (a->read_only)
		return -EROFS;
	pthread_mutex_lock(&a->state_lock);
	if (m->state == MEMBER_REMOVED) {
		pthread_mutex_unlock(&a->state_lock);
		return -ENODEV;
	}
	uint8_t old_flags = m->sb.devflags;
	if (on)
		m->sb.devflags |= MD_DEVFLAG_WRITE_MOSTLY;
	else
		m->sb.devflags &= (uint8_t)~MD_DEVFLAG_WRITE_MOSTLY;
	bool changed = m->sb.devflags != old_flags;
	int rc = changed ? array_super_sync(a, false) : 0;
	atomic_store(&m->write_mostly, on);
	bool kick = kick_wanted_take_locked(a);
	pthread_mutex_unlock(&a->state_lock);
	if (kick)
		array_recovery_kick(a);
	if (changed)
		array_logf(a, "%s is %s write-mostly%s", m->abs_path, on ? "now" : "no longer",
		           on ? ": read only when no other copy is there" : "");
	return rc;
}

int array_remove_member(struct raid_array *a, struct member *m)
{
	int rc = 0;

	pthread_mutex_lock(&a->state_lock);
	/* A member being rebuilt is still written by the rebuild and
	 * would be promoted at its end (md answers EBUSY too): fail it
	 * first. */
	if (m->state == MEMBER_IN_SYNC || m->state == MEMBER_REBUILDING)
		rc = -EBUSY;
	/* A re-added member waiting as a spare for its rebuild's turn is a
	 * spare to md (raid_disk -1, its old role only remembered): it may
	 * be removed, and its role waits for the next spare. Its reservation
	 * goes with it, or the role would keep waiting for it. */
	for (int role = 0; rc == 0 && role < a->geo.raid_disks; role++) {
		if (a->rebuilding[role] != m || m->state != MEMBER_SPARE)
			continue;
		a->rebuilding[role] = NULL;
		a->rebuild_bitmap_only[role] = false;
		atomic_store(&a->rebuilt_bytes[role], 0);
	}
	if (rc == 0 && m->state != MEMBER_REMOVED) {
		m->state = MEMBER_REMOVED;
		/* The descriptor stays open (a request still in flight may use
		 * it), but the file is free for others. */
		member_unclaim(m);
	}
	pthread_mutex_unlock(&a->state_lock);
	if (rc == 0)
		array_logf(a, "member %s removed", m->abs_path);
	return rc;
}

/* ---- recovery and added members ------------------------------------- */

int array_recovery_begin(struct raid_array *a, int role, struct member *m)
{
	pthread_mutex_lock(&a->state_lock);
	/* m was chosen before the lock was taken: it may have been removed
	 * (or failed) since. */
	if ((m->state != MEMBER_SPARE && m->state != MEMBER_REBUILDING) ||
	    (a->slot[role] && a->rebuilding[role] != m) ||
	    (a->rebuilding[role] && a->rebuilding[role] != m)) {
		pthread_mutex_unlock(&a->state_lock);
		return -EBUSY;
	}
	if (a->rebuilding[role] != m) {
		a->rebuilding[role] = m;
		a->rebuild_bitmap_only[role] = false; /* a new member: all of it */
		atomic_store(&a->rebuilt_bytes[role], 0);
		m->sb.recovery_offset = 0;
	}
	m->role = role;
	m->state = MEMBER_REBUILDING;
	m->sb.feature_map |= MD_FEATURE_RECOVERY_OFFSET;
	array_roles_set(a, m->sb.dev_number, (uint16_t)role);
	int rc = array_super_sync(a, false);
	pthread_mutex_unlock(&a->state_lock);
	array_eventf(a, "RebuildStarted", m, "recovery of role %d onto %s started", role,
	             m->abs_path);
	return rc;
}

void array_recovery_advance(struct raid_array *a, int role, struct member *m, uint64_t end)
{
	pthread_mutex_lock(&a->state_lock);
	/* Only up: a resumed rebuild passes pieces below its checkpoint. */
	if (a->rebuilding[role] == m && end > atomic_load(&a->rebuilt_bytes[role]))
		atomic_store(&a->rebuilt_bytes[role], end);
	pthread_mutex_unlock(&a->state_lock);
}

void array_recovery_checkpoint(struct raid_array *a, int role, struct member *target)
{
	int rc = 0;

	pthread_mutex_lock(&a->state_lock);
	struct member *m = a->rebuilding[role];
	if (m && m == target && !a->read_only) {
		/* The bytes first, then the offset that vouches for them. */
		uint64_t rebuilt = atomic_load(&a->rebuilt_bytes[role]);
		rc = member_sync(m);
		if (rc == 0) {
			m->sb.recovery_offset = rebuilt / SECTOR_BYTES;
			rc = member_super_store(m);
		}
		if (rc == 0)
			rc = member_sync(m);
	}
	pthread_mutex_unlock(&a->state_lock);
	if (rc < 0)
		array_rebuild_target_failed(a, role, m, rc);
}

int array_recovery_finish(struct raid_array *a, int role, struct member *target,
                          struct member **replaced_out)
{
	*replaced_out = NULL;
	pthread_mutex_lock(&a->state_lock);
	struct member *m = a->rebuilding[role];
	if (!m || m != target) {
		pthread_mutex_unlock(&a->state_lock);
		return -ENODEV;
	}
	/* What the rebuild wrote must be durable before the superblocks say
	 * the member is in sync. */
	int rc = member_sync(m);
	int sync_rc = rc;
	struct member *replaced = a->slot[role];
	if (rc == 0) {
		if (replaced) {
			replaced->state = MEMBER_FAULTY;
			array_roles_mark_faulty(a, replaced->sb.dev_number);
		}
		/* slot first, then rebuilding cleared: array_write_target
		 * reads them the other way round (lock-free writers). */
		__atomic_store_n(&a->slot[role], m, __ATOMIC_RELEASE);
		__atomic_store_n(&a->rebuilding[role], NULL, __ATOMIC_RELEASE);
		a->rebuild_bitmap_only[role] = false;
		m->state = MEMBER_IN_SYNC;
		m->sb.recovery_offset = MD_RESYNC_NONE;
		m->sb.feature_map &= ~MD_FEATURE_RECOVERY_OFFSET;
		rc = array_super_sync(a, false);
	}
	pthread_mutex_unlock(&a->state_lock);
	/* Its sync error sticks: a retry would copy everything again and
	 * fail the same way. */
	if (sync_rc < 0)
		array_rebuild_target_failed(a, role, m, sync_rc);
	array_logf(a, "recovery of role %d onto %s %s", role, m->abs_path,
	           rc == 0 ? "finished: the member is in sync" : "could not be completed");
	if (rc == 0 && replaced)
		*replaced_out = replaced;
	return rc;
}

/* Why no member can be rebuilt online on this array now, or 0. */
int array_rebuild_refusal(const struct raid_array *a, char *err, size_t errlen)
{
	if (!a->ops->recover_unit)
		return errmsg_fail(-EOPNOTSUPP, err, errlen,
		                   "%s has no redundancy to rebuild a member from", a->ops->name);
	if (a->ops->can_recover && !a->ops->can_recover(a))
		return errmsg_fail(-EOPNOTSUPP, err, errlen,
		                   "online rebuilds of this %s layout (0x%x) are not supported: md's "
		                   "own mapping back from member to volume (raid10_find_virt) does "
		                   "not hold for it, and md warns that it does not keep data safe",
		                   a->ops->name, a->geo.layout);
	/* md disables recovery on a failed array: it would rebuild from
	 * members that missed a write, and every superblock update it makes
	 * leaves the member taken out further behind for a forced start. */
	if (atomic_load(&a->broken))
		return errmsg_fail(-EIO, err, errlen,
		                   "the array is failed (a write was lost): unmount it, check the "
		                   "members, and mount it again with --force");
	return 0;
}

/* Whether m waits in rebuilding[] for a role other than role (a re-added
 * member, or a replacement). Caller holds state_lock. */
static bool member_reserved_elsewhere(const struct raid_array *a, const struct member *m,
                                      int role)
{
	for (int r = 0; r < a->geo.raid_disks; r++)
		if (r != role && a->rebuilding[r] == m)
			return true;
	return false;
}

bool array_recovery_next(struct raid_array *a, int *role_out, struct member **m_out)
{
	if (a->read_only || !a->started || array_rebuild_refusal(a, NULL, 0) < 0)
		return false;
	pthread_mutex_lock(&a->state_lock);
	for (int role = 0; role < a->geo.raid_disks; role++) {
		if (a->slot[role] && !a->rebuilding[role])
			continue;
		struct member *m = a->rebuilding[role];
		if (m && m->state != MEMBER_SPARE && m->state != MEMBER_REBUILDING)
			m = NULL; /* removed while it waited */
		/* A spare re-added for another missing role waits for that
		 * role (its bitmap-only rebuild): taking it here would leave
		 * it reserved there too, and the rebuild of that role onto
		 * any later spare would be refused (EBUSY) for ever. */
		for (int i = 0; !m && i < a->nr_members; i++)
			if (a->members[i].state == MEMBER_SPARE &&
			    !member_reserved_elsewhere(a, &a->members[i], role))
				m = &a->members[i];
		if (!m)
			continue;
		*role_out = role;
		*m_out = m;
		pthread_mutex_unlock(&a->state_lock);
		return true;
	}
	pthread_mutex_unlock(&a->state_lock);
	return false;
}

void array_recovery_kick(struct raid_array *a)
{
	int role;
	struct member *m;

	/* One rebuild at a time; the sync thread goes on to the next. */
	if (array_recovery_next(a, &role, &m))
		array_sync_recover(a, role, m);
}

bool array_rebuild_needed(struct raid_array *a, int role, uint64_t sync_off, uint64_t len)
{
	if (!a->rebuild_bitmap_only[role] || !a->bitmap)
		return true;
	return bitmap_range_dirty(a->bitmap, sync_off, len);
}

void array_rebuild_target_failed(struct raid_array *a, int role, struct member *m, int err)
{
	struct member *serving = NULL;

	if (!rebuild_target_drop(a, role, m, &serving))
		return;
	if (serving)
		array_eventf(a, "FailSpare", m,
		             "replacement %s of role %d failed on write: %s; role %d stays on %s",
		           m->abs_path, role, strerror(-err), role, serving->abs_path);
	else
		array_eventf(a, "FailSpare", m,
		             "%s, being rebuilt for role %d, failed on write: %s; the rebuild "
		           "stops and role %d stays missing",
		           m->abs_path, role, strerror(-err), role);
}

int array_rebuild_lost(struct raid_array *a, int role, struct member *m, uint64_t data_off,
                       uint64_t len)
{
	int rc = member_badblocks_add(m, data_off, len);
	if (rc == 0)
		rc = member_sync(m); /* the log on the member first, */
	if (rc == 0) {
		/* then the bit that sends md to it, under the lock that
		 * superblock updates take (they rewrite feature_map); the next
		 * one (a checkpoint of the rebuild, its end) stores it. */
		pthread_mutex_lock(&a->state_lock);
		m->sb.feature_map |= MD_FEATURE_BAD_BLOCKS;
		pthread_mutex_unlock(&a->state_lock);
	}
	if (rc < 0) {
		array_logf(a, "rebuild of role %d: %" PRIu64 " bytes at member byte %" PRIu64
		           " are held by no member (md's bad block log), and %s cannot log them "
		           "as bad: %s",
		           role, len, data_off, m->abs_path,
		           rc == -ENOSPC ? "it has no room for md's bad block log, or it is full"
		                         : strerror(-rc));
		/* As md: a target that cannot record them is given up. */
		array_rebuild_target_failed(a, role, m, rc);
		return rc;
	}
	array_logf(a, "rebuild of role %d: %" PRIu64 " bytes at member byte %" PRIu64 " are held "
	           "by no member (md's bad block log): logged as bad on %s, as md does; reads "
	           "there fail until they are written",
	           role, len, data_off, m->abs_path);
	return 0;
}

/* ---- life cycle ----------------------------------------------------- */

void array_tuning_defaults(struct array_tuning *t)
{
	t->cache_bytes = (uint64_t)ARRAY_DEFAULT_CACHE_MIB << 20;
	t->write_back = true;
	t->flush_age_ms = ARRAY_DEFAULT_FLUSH_AGE_MS;
	t->readahead_rows = ARRAY_DEFAULT_READAHEAD_ROWS;
	t->io_threads = -1;
}

void array_note_write_error(struct raid_array *a, int err)
{
	if (err == -ENODATA)
		err = -EIO; /* md's bad block log: to the writer, an I/O error */
	pthread_mutex_lock(&a->state_lock);
	if (a->sticky_error == 0)
		a->sticky_error = err;
	pthread_mutex_unlock(&a->state_lock);
}

void array_free(struct raid_array *a)
{
	if (!a)
		return;
	array_sync_shutdown(a);
	if (a->bitmap_daemon_running) {
		atomic_store(&a->stopping, true);
		pthread_join(a->bitmap_daemon, NULL);
	}
	if (a->workers_ready && a->ops->detach)
		a->ops->detach(a);
	bitmap_free(a->bitmap);
	io_pool_destroy(a->io_pool);
	for (int i = 0; i < a->nr_members; i++)
		member_close(&a->members[i]);
	free(a->members);
	if (a->ops && a->level_priv)
		a->ops->geometry_free(a->level_priv);
	row_locks_destroy(&a->row_locks);
	pthread_mutex_destroy(&a->workers_lock);
	pthread_mutex_destroy(&a->log_lock);
	pthread_mutex_destroy(&a->state_lock);
	pthread_mutex_destroy(&a->member_add_lock);
	free(a->served_dir);
	free(a);
}

/* After an unclean stop: resync what the bitmap marks, or everything. */
static int array_resync_dirty(struct raid_array *a)
{
	struct write_bitmap *b = a->bitmap;
	int rc = 0;

	if (!b) {
		array_eventf(a, "RebuildStarted", NULL,
		             "array was not stopped cleanly: resyncing all of %s before use",
		             a->ops->name);
		rc = a->ops->resync(a, 0, raid_level_sync_bytes(a->ops, &a->geo));
	} else {
		uint64_t chunk = bitmap_chunk_bytes(b), nr_set = bitmap_count_set(b);
		array_eventf(a, "RebuildStarted", NULL,
		             "array was not stopped cleanly: resyncing the %" PRIu64 " of %" PRIu64
		             " regions the write-intent bitmap marks",
		             nr_set, bitmap_nr_bits(b));
		for (uint64_t bit = 0; bit < bitmap_nr_bits(b) && rc == 0; bit++)
			if (bitmap_test(b, bit))
				rc = a->ops->resync(a, bit * chunk, (bit + 1) * chunk);
		a->resynced_regions = nr_set;
		if (rc == 0)
			rc = bitmap_clear_idle(a, 0);
	}
	array_eventf(a, "RebuildFinished", NULL, "resync after the unclean stop: %s",
	             rc < 0 ? strerror(-rc) : "done");
	array_sync_note_resync(a, rc);
	return rc;
}

int array_start(struct raid_array *a, char *err, size_t errlen)
{
	const struct md_super *roles = NULL;
	int rc;

	if (a->started)
		return 0;
	int missing = array_missing_count(a);
	if (missing)
		array_eventf(a, "DegradedArray", NULL, "%s array runs degraded: %d of %d roles missing",
		             a->ops->name, missing, a->geo.raid_disks);
	if (a->read_only)
		return 0;
	for (int role = 0; role < a->geo.raid_disks && !roles; role++)
		if (a->slot[role])
			roles = &a->slot[role]->sb;
	/* Members left out or missing are faulty from now on: a later
	 * assembly must not take them back as current. */
	for (int i = 0; i < a->nr_members; i++) {
		struct member *m = &a->members[i];
		bool serving = false, dev_taken = false;
		for (int role = 0; role < a->geo.raid_disks; role++)
			serving = serving || a->slot[role] == m || a->rebuilding[role] == m;
		/* An old member's device number may belong to a member that
		 * took its place (add reuses free numbers, as md does): that
		 * entry is the live member's, not the old one's, to mark. */
		for (int j = 0; j < a->nr_members; j++)
			dev_taken = dev_taken ||
			            (j != i && member_is_live(&a->members[j]) &&
			             a->members[j].sb.dev_number == m->sb.dev_number);
		if (!serving && !dev_taken && md_super_role(&m->sb) < MD_ROLE_MAX)
			array_roles_mark_faulty(a, m->sb.dev_number);
	}
	for (uint32_t dev = 0; dev < roles->max_dev; dev++) {
		uint16_t role = roles->dev_roles[dev];
		if (role < (uint16_t)a->geo.raid_disks && !a->slot[role] &&
		    !(a->rebuilding[role] && a->rebuilding[role]->sb.dev_number == dev))
			array_roles_mark_faulty(a, dev);
	}
	/* Degraded, parity cannot be resynced; copies still can (the
	 * missing ones are skipped), and must be: reads would otherwise
	 * answer from whichever copy they hit. */
	if (a->was_dirty && a->ops->resync &&
	    (array_missing_count(a) == 0 || a->ops->max_parity == 0)) {
		rc = array_resync_dirty(a);
		if (rc < 0)
			return errmsg_fail(rc, err, errlen,
			                   "resync after an unclean stop failed: %s", strerror(-rc));
		/* A member failed during the resync: the rows it had not
		 * reached keep untrusted parity, and the array is now dirty
		 * and degraded. md keeps recovery_cp for that (the array
		 * stays dirty, a later start needs force): keep the debt,
		 * as a forced start does, rather than record it clean. */
		if (a->ops->max_parity > 0 && array_missing_count(a) > 0) {
			atomic_store(&a->resync_pending, true);
			array_logf(a, "a member failed during the resync: the parity of the regions "
			           "the bitmap marks stays untrusted until a start with every member "
			           "back or a repair once rebuilt");
		}
	} else if (a->was_dirty && a->ops->resync) {
		/* md keeps recovery_cp for later: the rows the crash may have
		 * torn stay marked (bits kept, superblocks dirty) until a
		 * start with every member resyncs them, or a full repair. */
		atomic_store(&a->resync_pending, true);
		array_logf(a, "started dirty and degraded (--force): the parity of the regions the "
		           "bitmap marks is resynced at the first start with every member back, "
		           "or by a repair once rebuilt");
	}
	pthread_mutex_lock(&a->state_lock);
	rc = array_super_sync(a, false);
	pthread_mutex_unlock(&a->state_lock);
	if (rc < 0)
		return errmsg_fail(rc, err, errlen, "cannot mark the array active: %s",
		                   strerror(-rc));
	a->started = true;
	return 0;
}

/* ---- I/O and stop --------------------------------------------------- */

/* md's bitmap daemon: clear the bits of regions idle for daemon_sleep. */
static void *array_bitmap_daemon(void *arg)
{
	struct raid_array *a = arg;
	const uint64_t idle_ms = BITMAP_DAEMON_SLEEP_S * 1000u;

	while (!atomic_load(&a->stopping)) {
		for (int tick = 0; tick < 10 && !atomic_load(&a->stopping); tick++) {
			struct timespec nap = { 0, 100 * 1000 * 1000 };
			nanosleep(&nap, NULL);
		}
		bitmap_clear_idle(a, idle_ms);
	}
	return NULL;
}

/* Threads (member I/O pool, stripe cache flusher and read-ahead) start
 * with the first request, not at assembly: a daemon forks after assembling
 * and only the forking thread would survive. */
int array_workers_start(struct raid_array *a)
{
	int rc = 0;

	if (atomic_load_explicit(&a->workers_ready, memory_order_acquire))
		return 0;
	pthread_mutex_lock(&a->workers_lock);
	if (!a->workers_ready) {
		int io_threads = a->tuning.io_threads >= 0 ? a->tuning.io_threads
		                                           : a->geo.raid_disks - 1;
		if (io_threads > 16)
			io_threads = 16;
		rc = io_pool_create(&a->io_pool, io_threads);
		if (rc == 0 && a->ops->attach)
			rc = a->ops->attach(a);
		if (rc == 0 && a->bitmap && a->started &&
		    pthread_create(&a->bitmap_daemon, NULL, array_bitmap_daemon, a) == 0)
			a->bitmap_daemon_running = true;
		if (rc < 0) {
			array_logf(a, "cannot start the I/O threads or the stripe cache: %s",
			          strerror(-rc));
			io_pool_destroy(a->io_pool);
			a->io_pool = NULL;
		} else {
			atomic_store_explicit(&a->workers_ready, true, memory_order_release);
		}
	}
	pthread_mutex_unlock(&a->workers_lock);
	return rc;
}

/* Sectors in md's bad block log that nothing else holds (-ENODATA):
 * to the caller, as to md's, an I/O error, logged with what failed (a
 * read, a write, a zeroing). Other results pass through. */
static int array_lost_sectors_eio(struct raid_array *a, int rc, const char *what, uint64_t len,
                                  uint64_t off)
{
	if (rc != -ENODATA)
		return rc;
	array_logf(a, "%s of %" PRIu64 " bytes at %" PRIu64 " failed: sectors in md's bad block "
	           "log that no other member holds",
	           what, len, off);
	return -EIO;
}

int array_read(struct raid_array *a, void *buf, size_t len, uint64_t off)
{
	if (off > a->geo.array_bytes || len > a->geo.array_bytes - off)
		return -EINVAL;
	if (len == 0)
		return 0;
	atomic_fetch_add_explicit(&a->user_bytes, len, memory_order_relaxed);
	int rc = array_workers_start(a);
	if (rc == 0)
		rc = a->ops->read(a, buf, len, off);
	return array_lost_sectors_eio(a, rc, "read", len, off);
}

/* What refuses a write (or a zeroing) of [off, off + len) before it
 * starts: 1 when there is nothing to do, 0 to go on, or -errno. */
static int array_write_admit(struct raid_array *a, uint64_t len, uint64_t off)
{
	if (a->read_only || !a->started)
		return -EROFS;
	if (off > a->geo.array_bytes || len > a->geo.array_bytes - off)
		return -ENOSPC;
	if (len == 0)
		return 1;
	if (atomic_load(&a->broken))
		return -EIO;
	return 0;
}

int array_write(struct raid_array *a, const void *buf, size_t len, uint64_t off)
{
	int admit = array_write_admit(a, len, off);
	if (admit != 0)
		return admit < 0 ? admit : 0;
	atomic_fetch_add_explicit(&a->user_bytes, len, memory_order_relaxed);
	int rc = array_workers_start(a);
	if (rc == 0)
		rc = a->ops->write(a, buf, len, off);
	rc = array_lost_sectors_eio(a, rc, "write", len, off);
	if (rc < 0)
		array_note_write_error(a, rc);
	return rc;
}

int array_zero(struct raid_array *a, uint64_t len, uint64_t off)
{
	/* Pieces the size of a large write, so that a discard of a whole
	 * volume does not hold rows or a bitmap count for long, ending on
	 * whole stripes (data chunks across the members), so that a parity
	 * level zeroes whole rows rather than writing zeros into parts of
	 * two rows at each seam. */
	uint64_t stripe_bytes = a->geo.chunk_bytes
	                                ? (uint64_t)a->geo.chunk_bytes *
	                                          (uint64_t)(a->geo.raid_disks - a->ops->max_parity)
	                                : 1;
	uint64_t piece_max = (64ull << 20) / stripe_bytes * stripe_bytes;
	if (piece_max == 0)
		piece_max = stripe_bytes;

	if (!a->ops->zero)
		return -EOPNOTSUPP;
	int admit = array_write_admit(a, len, off);
	if (admit != 0)
		return admit < 0 ? admit : 0;
	int rc = array_workers_start(a);
	for (uint64_t done = 0; done < len && rc == 0;) {
		uint64_t at = off + done, seam = (at / piece_max + 1) * piece_max;
		uint64_t piece = len - done < seam - at ? len - done : seam - at;
		atomic_fetch_add_explicit(&a->user_bytes, piece, memory_order_relaxed);
		rc = a->ops->zero(a, (size_t)piece, off + done);
		done += piece;
	}
	/* The parts of rows a parity level writes as zeros through its
	 * cache meet md's bad block log as any write does. */
	rc = array_lost_sectors_eio(a, rc, "zeroing", len, off);
	if (rc < 0)
		array_note_write_error(a, rc);
	return rc;
}

const struct member *array_member_writing_zeroes(struct raid_array *a)
{
	for (int role = 0; role < a->geo.raid_disks; role++) {
		/* Read once each: another thread may fail one out meanwhile. */
		const struct member *serving = a->slot[role], *rebuilding = a->rebuilding[role];
		if (serving && !member_zeroes_cheaply(serving))
			return serving;
		if (rebuilding && !member_zeroes_cheaply(rebuilding))
			return rebuilding;
	}
	return NULL;
}

int array_discard(struct raid_array *a, uint64_t len, uint64_t off)
{
	const struct member *writes_zeroes = array_member_writing_zeroes(a);

	if (writes_zeroes) {
		if (!atomic_exchange(&a->discard_refusal_logged, true))
			array_logf(a, "discard refused (not supported): %s zeroes a range only by "
			           "writing every byte of it (no write-zeroes), which for a discard "
			           "of the whole volume (mkfs) means writing every member; zeroing "
			           "a range (fallocate -z) still works",
			           writes_zeroes->abs_path);
		return -EOPNOTSUPP;
	}
	return array_zero(a, len, off);
}

int array_check(struct raid_array *a, uint64_t *mismatch_sectors)
{
	*mismatch_sectors = 0;
	if (!a->ops->check)
		return -EOPNOTSUPP;
	if (!array_has_redundancy(a))
		return -ENODEV;
	/* Dirty rows in the cache are newer than the members; write them
	 * first so the members are compared in a settled state. */
	if (!a->read_only && a->workers_ready && a->ops->flush) {
		int rc = a->ops->flush(a);
		if (rc < 0)
			return rc;
	}
	return a->ops->check(a, mismatch_sectors);
}

int array_flush(struct raid_array *a)
{
	int rc;

	if (a->read_only)
		return 0;
	if (a->ops->flush && a->workers_ready) {
		int frc = a->ops->flush(a);
		if (frc < 0)
			array_note_write_error(a, frc);
	}
	for (int role = 0; role < a->geo.raid_disks; role++) {
		/* A member being rebuilt or copied took the writes to what it
		 * has: a restart resumes after its last checkpoint and would
		 * not copy them again. Looked up before the member in sync
		 * (array_write_target's order): one that takes the role
		 * meanwhile is synced as one or the other. */
		struct member *target = __atomic_load_n(&a->rebuilding[role], __ATOMIC_ACQUIRE);
		struct member *m = __atomic_load_n(&a->slot[role], __ATOMIC_ACQUIRE);
		if (target == m)
			target = NULL;
		int src = m ? member_sync(m) : 0;
		if (src < 0)
			array_member_error(a, role, m, src, true);
		src = target ? member_sync(target) : 0;
		if (src < 0)
			array_rebuild_target_failed(a, role, target, src);
	}
	pthread_mutex_lock(&a->state_lock);
	rc = a->sticky_error;
	pthread_mutex_unlock(&a->state_lock);
	return rc;
}

int array_stop(struct raid_array *a)
{
	int rc = 0;

	if (!a)
		return 0;
	array_sync_shutdown(a);
	if (a->started) {
		rc = array_flush(a);
		if (rc == 0) {
			if (a->bitmap_daemon_running) {
				atomic_store(&a->stopping, true);
				pthread_join(a->bitmap_daemon, NULL);
				a->bitmap_daemon_running = false;
			}
			rc = bitmap_clear_idle(a, 0);
		}
		pthread_mutex_lock(&a->state_lock);
		/* An array that lost writes is left dirty, so the next assembly
		 * does not trust its parity. */
		int src = array_super_sync(a, rc == 0);
		pthread_mutex_unlock(&a->state_lock);
		if (rc == 0)
			rc = src;
	}
	array_free(a);
	return rc;
}

/* ---- status --------------------------------------------------------- */

void array_status_text(struct raid_array *a, char *buf, size_t len)
{
	char uuid[36], layout[64], chunk[32] = "";
	int nr_missing;
	struct sync_progress p;

	array_sync_progress(a, &p); /* before state_lock, which it takes */
	md_uuid_format(a->set_uuid, uuid);
	md_layout_name(a->geo.level, a->geo.layout, layout, sizeof(layout));
	if (a->geo.chunk_bytes)
		snprintf(chunk, sizeof(chunk), ", %uk chunk", a->geo.chunk_bytes / 1024);
	struct textbuf t = textbuf_init(buf, len);
	pthread_mutex_lock(&a->state_lock);
	nr_missing = array_missing_count(a);
	textbuf_appendf(&t, "%s : active%s%s %s", a->set_name[0] ? a->set_name : "raidfuse",
	              a->read_only ? " (read-only)" : "",
	              atomic_load(&a->broken) ? " (FAILED: a write was lost)" : "", a->ops->name);
	for (int role = 0; role < a->geo.raid_disks; role++)
		if (a->slot[role])
			textbuf_appendf(&t, " %s[%d]%s", a->slot[role]->abs_path, role,
			                atomic_load(&a->slot[role]->write_mostly) ? "(W)" : "");
	for (int i = 0; i < a->nr_members; i++) {
		const struct member *m = &a->members[i];
		if (m->state == MEMBER_FAULTY)
			textbuf_appendf(&t, " %s[%d](F)", m->abs_path, m->role);
		else if (m->state == MEMBER_SPARE)
			textbuf_appendf(&t, " %s(S)", m->abs_path);
		else if (m->state == MEMBER_REBUILDING)
			/* mdstat's (R) is a replacement (a copy of a member that
			 * still serves); a member rebuilt into a missing role
			 * has no mark there, its role shows '_' until it ends. */
			textbuf_appendf(&t, " %s[%d]%s", m->abs_path, m->role,
			                m->role >= 0 && a->slot[m->role] && a->slot[m->role] != m
			                        ? "(R)" : "");
	}
	textbuf_appendf(&t, "\n      %" PRIu64 " blocks super %s%s%s%s [%d/%d] [",
	              a->geo.array_bytes / 1024, array_metadata_name(a), chunk,
	              layout[0] ? ", layout " : "", layout,
	              a->geo.raid_disks, a->geo.raid_disks - nr_missing);
	for (int role = 0; role < a->geo.raid_disks; role++)
		textbuf_appendf(&t, "%c", a->slot[role] ? 'U' : '_');
	textbuf_appendf(&t, "]\n");
	/* mdstat's progress line (status_resync): md calls a repair "resync"
	 * there and counts in 1K blocks of a member. */
	if (p.action != SYNC_IDLE && p.total_sectors) {
		unsigned per_milli = (unsigned)(p.done_sectors * 1000 / p.total_sectors);
		unsigned x = per_milli / 50;
		textbuf_appendf(&t, "      [");
		for (unsigned i = 0; i <= 20; i++) /* 21, as md */
			textbuf_appendf(&t, "%s", i < x ? "=" : i == x ? ">" : ".");
		uint64_t left_s = p.rate_kib ? (p.total_sectors - p.done_sectors) / 2 / p.rate_kib : 0;
		textbuf_appendf(&t, "]  %s =%3u.%u%% (%" PRIu64 "/%" PRIu64 ") finish=%" PRIu64
		                ".%" PRIu64 "min speed=%" PRIu64 "K/sec\n",
		                p.action == SYNC_CHECK ? "check" :
		                p.action == SYNC_REPAIR ? "resync" : "recovery",
		                per_milli / 10, per_milli % 10, p.done_sectors / 2,
		                p.total_sectors / 2, left_s / 60, left_s % 60 / 6, p.rate_kib);
	}
	/* As mdstat's bitmap line, in regions rather than md's counter pages. */
	if (a->bitmap)
		textbuf_appendf(&t, "      bitmap: %" PRIu64 "/%" PRIu64 " regions dirty, %" PRIu64
		              "KB chunk\n",
		              bitmap_count_set(a->bitmap), bitmap_nr_bits(a->bitmap),
		              bitmap_chunk_bytes(a->bitmap) / 1024);
	textbuf_appendf(&t, "\nuuid: %s\nstate: %s\nevents: %" PRIu64 "\nsize_bytes: %" PRIu64
	              "\n",
	              uuid,
	              atomic_load(&a->broken)
	                      ? (nr_missing ? "failed, degraded" : "failed")
	                      : nr_missing ? (a->started ? "active, degraded" : "clean, degraded")
	                                   : (a->started ? "active" : "clean"),
	              a->events, a->geo.array_bytes);
	const struct member *writes_zeroes = array_member_writing_zeroes(a);
	if (writes_zeroes)
		textbuf_appendf(&t, "discard: no (%s zeroes only by writing)\n", writes_zeroes->abs_path);
	else
		textbuf_appendf(&t, "discard: yes\n");
	for (int role = 0; role < a->geo.raid_disks; role++) {
		struct member *m = a->slot[role];
		if (m)
			textbuf_appendf(&t, "member %d: %s in_sync read_bytes=%" PRIu64
			              " written_bytes=%" PRIu64 "\n",
			              role, m->abs_path, (uint64_t)atomic_load(&m->bytes_read),
			              (uint64_t)atomic_load(&m->bytes_written));
		else
			textbuf_appendf(&t, "member %d: missing\n", role);
		/* The member taking the role over, so that "missing" is not
		 * all a rebuild shows (md's mdstat lists it with the role). */
		struct member *target = a->rebuilding[role];
		if (target && a->geo.dev_bytes)
			textbuf_appendf(&t, "member %d: %s %s %.1f%% read_bytes=%" PRIu64
			              " written_bytes=%" PRIu64 "\n",
			              role, target->abs_path, m ? "replacing" : "rebuilding",
			              100.0 * (double)atomic_load(&a->rebuilt_bytes[role]) /
			                      (double)a->geo.dev_bytes,
			              (uint64_t)atomic_load(&target->bytes_read),
			              (uint64_t)atomic_load(&target->bytes_written));
	}
	pthread_mutex_unlock(&a->state_lock);
	if (a->ops->status && a->workers_ready && t.used < len)
		a->ops->status(a, buf + t.used, len - t.used);
}
