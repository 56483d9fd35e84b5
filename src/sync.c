/* sync.c - see sync.h.
 *
 * The scrub walks the level's units in order; each unit is done by the
 * level's scrub_unit, which holds the unit against user writes while it
 * reads and (for repair) rewrites, so a scrub never races a writer. The
 * walk sleeps as needed to stay under sync_speed_max, and above
 * sync_speed_min gives way while the array serves reads and writes.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "array.h"
#include "sync.h"

/* RebuildNN events come at multiples of this (mdadm's default). */
#define SYNC_EVENT_STEP_PERCENT 20u

struct array_sync {
	pthread_mutex_t lock;
	int recover_role;
	struct member *recover_target;
	pthread_t thread;
	bool thread_joinable;
	bool starting;             /* a sync_start between its check and its thread */
	bool cancel;
	struct sync_progress p;
};

const char *sync_action_name(enum sync_action action)
{
	switch (action) {
	case SYNC_CHECK: return "check";
	case SYNC_REPAIR: return "repair";
	case SYNC_RECOVER: return "recover";
	case SYNC_RESYNC: return "resync";
	default: return "idle";
	}
}

const char *sync_result_text(int rc)
{
	if (rc == -ENODEV)
		return "a member failed";
	return strerror(-rc);
}

int sync_action_parse(const char *text, enum sync_action *action)
{
	size_t len = strcspn(text, "\n");
	if (len == 5 && strncmp(text, "check", 5) == 0)
		*action = SYNC_CHECK;
	else if (len == 6 && strncmp(text, "repair", 6) == 0)
		*action = SYNC_REPAIR;
	else if (len == 4 && strncmp(text, "idle", 4) == 0)
		*action = SYNC_IDLE;
	else
		return -EINVAL;
	return 0;
}

static double now_seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static struct array_sync *array_sync_get(struct raid_array *a)
{
	pthread_mutex_lock(&a->state_lock);
	if (!a->sync) {
		a->sync = calloc(1, sizeof(*a->sync));
		if (a->sync) {
			pthread_mutex_init(&a->sync->lock, NULL);
			a->sync->p.speed_min_kib = SYNC_DEFAULT_SPEED_MIN_KIB;
			a->sync->p.speed_max_kib = SYNC_DEFAULT_SPEED_MAX_KIB;
		}
	}
	pthread_mutex_unlock(&a->state_lock);
	return a->sync;
}

/* md judges a sync's speed over its last few marks, not since it began:
 * a rebuild that ran fast while the array was idle must slow down within
 * seconds once users come back, and the rate it shows is the current one. */
#define SYNC_MARKS 5
#define SYNC_MARK_STEP_S 1.0
/* md's is_mddev_idle: the array is in use when users moved more than 64
 * sectors since the sync last looked, so a trickle (a log line, an atime
 * update) does not slow a rebuild. */
#define SYNC_USER_BUSY_BYTES (64u * 512u)
/* The longest a sync gives way after one unit. */
#define SYNC_GIVE_WAY_MAX_S 1.0

struct sync_rate {
	double mark_seconds[SYNC_MARKS];
	double mark_kib[SYNC_MARKS];
	unsigned oldest;             /* the mark overwritten next */
	uint64_t user_bytes_seen;    /* a->user_bytes when last looked at */
};

static void sync_rate_reset(struct raid_array *a, struct sync_rate *r, double now)
{
	for (unsigned i = 0; i < SYNC_MARKS; i++) {
		r->mark_seconds[i] = now;
		r->mark_kib[i] = 0;
	}
	r->oldest = 0;
	r->user_bytes_seen = atomic_load_explicit(&a->user_bytes, memory_order_relaxed);
}

static void sync_rate_mark(struct sync_rate *r, double now, double done_kib)
{
	unsigned newest = (r->oldest + SYNC_MARKS - 1) % SYNC_MARKS;
	if (now - r->mark_seconds[newest] < SYNC_MARK_STEP_S)
		return;
	r->mark_seconds[r->oldest] = now;
	r->mark_kib[r->oldest] = done_kib;
	r->oldest = (r->oldest + 1) % SYNC_MARKS;
}

/* KiB/s since the oldest mark; over at least a second, so the first
 * units of a sync do not read as an enormous rate. */
static double sync_rate_current(const struct sync_rate *r, double now, double done_kib)
{
	double span = now - r->mark_seconds[r->oldest];
	return (done_kib - r->mark_kib[r->oldest]) / (span > 1.0 ? span : 1.0);
}

/* Sleep for seconds, in short naps so that idle or an unmount is not kept
 * waiting. */
static void sync_nap(struct array_sync *s, double seconds)
{
	const double nap_max = 0.1;
	double until = now_seconds() + seconds;

	for (;;) {
		pthread_mutex_lock(&s->lock);
		bool cancel = s->cancel;
		pthread_mutex_unlock(&s->lock);
		double left = until - now_seconds();
		if (cancel || left <= 0)
			return;
		double nap = left < nap_max ? left : nap_max;
		struct timespec ts = { 0, (long)(nap * 1e9) };
		nanosleep(&ts, NULL);
	}
}

/* Sleep until the rate since the oldest mark is back at sync_speed_max,
 * in short naps so that idle, an unmount or a raised limit is not kept
 * waiting: one unit at 1 KiB/s would otherwise sleep for minutes. Over
 * the marks, not since the start: a sync that gave way to users for an
 * hour must not then run unlimited until its average catches up. */
static void sync_throttle(struct array_sync *s, struct sync_rate *r, double done_kib)
{
	for (;;) {
		pthread_mutex_lock(&s->lock);
		bool cancel = s->cancel;
		unsigned max_kib = s->p.speed_max_kib;
		/* md_do_sync looks at speed_max only above speed_min: a floor
		 * set above the ceiling wins. */
		if (max_kib < s->p.speed_min_kib)
			max_kib = s->p.speed_min_kib;
		pthread_mutex_unlock(&s->lock);
		if (cancel || max_kib == 0)
			return;
		/* No new mark while asleep here: a unit larger than five
		 * seconds at the limit would get through every five seconds. */
		double now = now_seconds();
		double left = r->mark_seconds[r->oldest] +
		              (done_kib - r->mark_kib[r->oldest]) / max_kib - now;
		if (left <= 0)
			return;
		/* A tenth of a second at a time: the limit may be raised. */
		sync_nap(s, left < 0.1 ? left : 0.1);
	}
}

static bool sync_array_in_use(struct raid_array *a, struct sync_rate *r)
{
	uint64_t bytes = atomic_load_explicit(&a->user_bytes, memory_order_relaxed);
	uint64_t moved = bytes - r->user_bytes_seen;
	r->user_bytes_seen = bytes;
	return moved > SYNC_USER_BUSY_BYTES;
}

/* Give way to users as md does since Linux 4.1: above sync_speed_min, a
 * sync that sees other I/O on the array lets its own I/O in flight drain
 * before it issues more ("the faster the devices, the less we wait").
 * This sync has one unit in flight at a time, so the drain is a pause as
 * long as that unit took: users get the members at least half the time,
 * and the sync goes on at about half its speed, not at the floor (md
 * before 4.1 slept down to the floor, and a long rebuild under steady use
 * took weeks). At or below sync_speed_min it never pauses. */
static void sync_give_way(struct raid_array *a, struct array_sync *s, struct sync_rate *r,
                          double done_kib, double unit_seconds)
{
	pthread_mutex_lock(&s->lock);
	unsigned min_kib = s->p.speed_min_kib;
	pthread_mutex_unlock(&s->lock);
	double now = now_seconds();
	sync_rate_mark(r, now, done_kib);
	if (!sync_array_in_use(a, r) || sync_rate_current(r, now, done_kib) <= min_kib)
		return;
	sync_nap(s, unit_seconds < SYNC_GIVE_WAY_MAX_S ? unit_seconds : SYNC_GIVE_WAY_MAX_S);
}

/* action begins (from sync_start, or a check going on to a rebuild):
 * its role and target, and its progress from nothing. Caller holds
 * s->lock. */
static void sync_begin_locked(struct raid_array *a, struct array_sync *s,
                              enum sync_action action, int recover_role,
                              struct member *recover_target)
{
	s->recover_role = recover_role;
	s->recover_target = recover_target;
	s->p.action = action;
	s->p.last_action = action;
	s->p.done_sectors = 0;
	s->p.total_sectors = a->geo.dev_bytes ? a->geo.dev_bytes / SECTOR_BYTES
	                                      : a->geo.array_bytes / SECTOR_BYTES;
	/* md zeroes mismatch_cnt when a resync, check or repair starts, not
	 * for a recovery (md_sync_max_sectors): what the last check found
	 * stays readable through a rebuild that follows it. */
	if (action != SYNC_RECOVER)
		s->p.mismatch_sectors = 0;
	s->p.rate_kib = 0;
	s->p.last_result = 0;
	s->p.interrupted = false;
}

static void *sync_main(void *arg)
{
	struct raid_array *a = arg;
	struct array_sync *s = a->sync;
	bool repair = s->p.action == SYNC_REPAIR;
	bool recover = s->p.action == SYNC_RECOVER;
	const char *action_name = sync_action_name(s->p.action);
	uint64_t units = recover && a->ops->recover_units ? a->ops->recover_units(a)
	                                                  : a->ops->scrub_units(a);
	int role = s->recover_role;
	void *ctx = a->ops->scrub_begin ? a->ops->scrub_begin(a) : NULL;
	double start = now_seconds(), last_checkpoint = start;
	/* A check of a degraded array runs over what is left; only a
	 * member failing after it began stops it. */
	int missing_at_start = array_missing_count(a);
	struct sync_rate rate;
	int rc = 0;

next_recovery:
	sync_rate_reset(a, &rate, start);
	bool begin_refused = false;
	if (recover) {
		rc = array_recovery_begin(a, role, s->recover_target);
		begin_refused = rc < 0;
	} else
		array_eventf(a, "RebuildStarted", NULL, "%s %s started", a->ops->name, action_name);
	unsigned progress_reported = 0; /* RebuildNN events sent, in steps of 20% */
	/* What was read and written: md's io_sectors, which leaves out what a
	 * recovery skipped, so a bitmap re-add is not held to sync_speed_max
	 * over the clean regions it does not copy. */
	uint64_t prev_done = 0;
	double io_kib = 0;

	for (uint64_t unit = 0; unit < units && rc == 0; unit++) {
		uint64_t mismatch = 0;

		pthread_mutex_lock(&s->lock);
		bool cancel = s->cancel;
		pthread_mutex_unlock(&s->lock);
		if (cancel)
			break;
		/* A member failed: as md_error's MD_RECOVERY_INTR, a check or
		 * repair stops, and a spare waiting for the role begins its
		 * rebuild. A scrub that went on would compare less and less
		 * (parity with data rebuilt from it) while the spare waited. */
		if (!recover && (array_missing_count(a) > missing_at_start ||
		                 !array_has_redundancy(a))) {
			rc = -ENODEV;
			break;
		}
		/* Given up (a write to it failed): no use copying on. */
		if (recover && a->rebuilding[role] != s->recover_target) {
			rc = -ENODEV;
			break;
		}
		double unit_start = now_seconds();
		if (recover)
			rc = a->ops->recover_unit(a, ctx, unit, role, s->recover_target);
		else
			rc = a->ops->scrub_unit(a, ctx, unit, repair, &mismatch);
		double unit_seconds = now_seconds() - unit_start;
		bool skipped = rc > 0;
		if (rc > 0)
			rc = 0;
		if (rc < 0)
			break;
		/* md keeps recovery_offset current so a restart resumes. */
		if (recover && now_seconds() - last_checkpoint >= 2.0) {
			array_recovery_checkpoint(a, role, s->recover_target);
			last_checkpoint = now_seconds();
		}
		/* In 128 bits: units times sectors passes 2^64 on members of a
		 * few TiB with small units. */
		uint64_t done =
			(uint64_t)((unsigned __int128)(unit + 1) * s->p.total_sectors / units);
		if (!skipped)
			io_kib += (double)(done - prev_done) / 2.0;
		prev_done = done;
		sync_throttle(s, &rate, io_kib);
		sync_give_way(a, s, &rate, io_kib, unit_seconds);
		double rate_kib = sync_rate_current(&rate, now_seconds(), io_kib);
		pthread_mutex_lock(&s->lock);
		s->p.done_sectors = done;
		s->p.mismatch_sectors += mismatch;
		s->p.rate_kib = rate_kib > 0 ? (uint64_t)rate_kib : 0;
		pthread_mutex_unlock(&s->lock);
		/* mdadm --monitor's RebuildNN, at its default step of 20. */
		unsigned steps = s->p.total_sectors ?
		                 (unsigned)(done * 100 / s->p.total_sectors / SYNC_EVENT_STEP_PERCENT) : 0;
		while (progress_reported < steps &&
		       (progress_reported + 1) * SYNC_EVENT_STEP_PERCENT < 100) {
			char event[16];
			progress_reported++;
			snprintf(event, sizeof(event), "Rebuild%02u",
			         progress_reported * SYNC_EVENT_STEP_PERCENT);
			array_eventf(a, event, recover ? s->recover_target : NULL,
			             "%s %s: %u%% done", a->ops->name, action_name,
			             progress_reported * SYNC_EVENT_STEP_PERCENT);
		}
	}
	pthread_mutex_lock(&s->lock);
	bool cancelled = s->cancel;
	pthread_mutex_unlock(&s->lock);
	if (recover) {
		struct member *replaced = NULL;
		if (rc == 0 && !cancelled)
			rc = array_recovery_finish(a, role, s->recover_target, &replaced);
		else
			array_recovery_checkpoint(a, role, s->recover_target);
		/* A target given up (a write or sync to it failed) leaves its
		 * role to the next spare, as a finished rebuild does. A rebuild
		 * that could not begin gave nothing up: going on to "the next
		 * spare" would offer the same one for ever. */
		bool given_up = !begin_refused && a->rebuilding[role] != s->recover_target &&
		                a->slot[role] != s->recover_target;
		array_eventf(a, "RebuildFinished", s->recover_target, "%s recover of role %d: %s",
		             a->ops->name, role,
		           given_up ? "the member being rebuilt failed" :
		           rc < 0 ? sync_result_text(rc) : cancelled ? "paused" : "done");
		/* mdadm sees the rebuild end, then the member active. */
		if (rc == 0 && !cancelled && !given_up)
			array_eventf(a, "SpareActive", s->recover_target,
			             "%s is active in role %d", s->recover_target->abs_path, role);
		/* The member a replace copied is faulty now: md marks it so,
		 * and mdadm --monitor reports that as Fail. */
		if (replaced)
			array_eventf(a, "Fail", replaced, "%s replaced %s, which is now faulty: remove it",
			             s->recover_target->abs_path, replaced->abs_path);
		/* The next missing role, if a spare waits for it. */
		struct member *next = NULL;
		if ((rc == 0 || given_up) && !cancelled && array_recovery_next(a, &role, &next)) {
			rc = 0;
			pthread_mutex_lock(&s->lock);
			s->recover_role = role;
			s->recover_target = next;
			s->p.done_sectors = 0;
			pthread_mutex_unlock(&s->lock);
			start = last_checkpoint = now_seconds();
			goto next_recovery;
		}
	}
	/* A whole repair made every row's redundancy agree with its data:
	 * the debt of a forced dirty start is paid. */
	if (repair && rc == 0 && !cancelled) {
		if (atomic_exchange(&a->resync_pending, false))
			array_logf(a, "the repair resynced what the forced dirty start left: the bitmap "
			           "may clear and the array stop clean");
	}
	/* A member that failed during a check or repair found this thread
	 * busy when it kicked the rebuild: a spare waiting for its role
	 * starts now, here, as a finished rebuild goes on to the next. */
	struct member *waiting = NULL;
	bool to_recover = !recover && !cancelled && array_recovery_next(a, &role, &waiting);
	pthread_mutex_lock(&s->lock);
	/* A stop (idle, unmount) that came after the look above: no rebuild
	 * begins under it; idle kicks it once this thread is gone. */
	if (s->cancel)
		to_recover = false;
	s->p.last_result = rc;
	s->p.interrupted = cancelled || rc < 0;
	enum sync_action ended = s->p.last_action;
	uint64_t ended_mismatch = s->p.mismatch_sectors;
	/* The rebuild takes over in this same hold of the lock: an idle
	 * that comes after it is refused (EBUSY) as for any rebuild, rather
	 * than seeing the check still running, stopping the rebuild as it
	 * begins and kicking it again. */
	if (to_recover)
		sync_begin_locked(a, s, SYNC_RECOVER, role, waiting);
	else
		s->p.action = SYNC_IDLE;
	pthread_mutex_unlock(&s->lock);
	if (!recover) {
		/* mdadm --monitor's third argument after a sync that found
		 * mismatches, word for word: mail scripts quote it. */
		char mismatches[80] = "";
		if (ended_mismatch)
			snprintf(mismatches, sizeof(mismatches),
			         " mismatches found: %llu (on raid level %d)",
			         (unsigned long long)ended_mismatch, (int)a->ops->level);
		array_eventf_disc(a, "RebuildFinished", NULL, mismatches[0] ? mismatches : NULL,
		                  "%s %s: %s, mismatch_cnt %llu", a->ops->name,
		                  sync_action_name(ended),
		                  rc < 0 ? sync_result_text(rc) : cancelled ? "interrupted" : "done",
		                  (unsigned long long)ended_mismatch);
	}
	if (to_recover) {
		recover = true;
		repair = false;
		action_name = sync_action_name(SYNC_RECOVER);
		units = a->ops->recover_units ? a->ops->recover_units(a) : a->ops->scrub_units(a);
		rc = 0;
		start = last_checkpoint = now_seconds();
		goto next_recovery;
	}
	if (a->ops->scrub_end)
		a->ops->scrub_end(a, ctx);
	return NULL;
}

static void sync_join(struct array_sync *s)
{
	pthread_mutex_lock(&s->lock);
	bool joinable = s->thread_joinable;
	s->thread_joinable = false;
	pthread_mutex_unlock(&s->lock);
	if (joinable)
		pthread_join(s->thread, NULL);
}

static int sync_start(struct raid_array *a, struct array_sync *s, enum sync_action action,
                      int recover_role, struct member *recover_target);

int array_sync_recover(struct raid_array *a, int role, struct member *m)
{
	struct array_sync *s = array_sync_get(a);

	if (!s)
		return -ENOMEM;
	return sync_start(a, s, SYNC_RECOVER, role, m);
}

void array_sync_note_resync(struct raid_array *a, int result)
{
	struct array_sync *s = array_sync_get(a);

	if (!s)
		return;
	pthread_mutex_lock(&s->lock);
	s->p.last_action = SYNC_RESYNC;
	s->p.last_result = result;
	s->p.interrupted = result < 0;
	pthread_mutex_unlock(&s->lock);
}

int array_sync_request(struct raid_array *a, enum sync_action action)
{
	struct array_sync *s = array_sync_get(a);

	if (!s)
		return -ENOMEM;
	if (action == SYNC_IDLE) {
		/* Looked at and stopped under one lock: a check that goes on to
		 * a rebuild in between must not take the stop with it. */
		pthread_mutex_lock(&s->lock);
		bool recovering = s->p.action == SYNC_RECOVER;
		if (!recovering)
			s->cancel = true;
		pthread_mutex_unlock(&s->lock);
		if (recovering)
			return -EBUSY; /* a rebuild is not stopped by hand */
		sync_join(s);
		/* As md after idle (md_check_recovery): a member that failed
		 * while the check ran found the thread busy; its spare starts
		 * now rather than waiting for the next remount. */
		array_recovery_kick(a);
		return 0;
	}
	if (!a->ops->scrub_unit)
		return -EOPNOTSUPP;
	/* A rebuild running is the reason to give (md: EBUSY), before the
	 * redundancy it has not yet restored. */
	pthread_mutex_lock(&s->lock);
	bool busy = s->p.action != SYNC_IDLE || s->starting;
	pthread_mutex_unlock(&s->lock);
	if (busy)
		return -EBUSY;
	/* As md: a degraded array is checked over the redundancy it has
	 * left (RAID6 less one, a RAID10's whole pairs); with none left
	 * there is nothing to compare. */
	if (!array_has_redundancy(a))
		return -ENODEV;
	if (action == SYNC_REPAIR && a->read_only)
		return -EROFS;
	return sync_start(a, s, action, -1, NULL);
}

/* Start action in a new sync thread, or -EBUSY while one runs or another
 * start is under way: a check and an add come through different control
 * files at once, and the thread handle has room for one. */
static int sync_start(struct raid_array *a, struct array_sync *s, enum sync_action action,
                      int recover_role, struct member *recover_target)
{
	pthread_mutex_lock(&s->lock);
	if (s->p.action != SYNC_IDLE || s->starting) {
		pthread_mutex_unlock(&s->lock);
		return -EBUSY;
	}
	s->starting = true;
	pthread_mutex_unlock(&s->lock);
	sync_join(s); /* reap a finished one */
	int rc = array_workers_start(a);
	pthread_mutex_lock(&s->lock);
	s->starting = false;
	if (rc < 0) {
		pthread_mutex_unlock(&s->lock);
		return rc;
	}
	s->cancel = false;
	sync_begin_locked(a, s, action, recover_role, recover_target);
	rc = pthread_create(&s->thread, NULL, sync_main, a) == 0 ? 0 : -EAGAIN;
	if (rc == 0)
		s->thread_joinable = true;
	else
		s->p.action = SYNC_IDLE;
	pthread_mutex_unlock(&s->lock);
	return rc;
}

void array_sync_progress(struct raid_array *a, struct sync_progress *out)
{
	struct array_sync *s = array_sync_get(a);

	memset(out, 0, sizeof(*out));
	if (!s)
		return;
	pthread_mutex_lock(&s->lock);
	*out = s->p;
	pthread_mutex_unlock(&s->lock);
}

int array_sync_set_speed(struct raid_array *a, bool max, unsigned kib_per_s)
{
	struct array_sync *s = array_sync_get(a);

	if (!s)
		return -ENOMEM;
	pthread_mutex_lock(&s->lock);
	if (max) {
		s->p.speed_max_kib = kib_per_s ? kib_per_s : SYNC_DEFAULT_SPEED_MAX_KIB;
		s->p.speed_max_set = kib_per_s != 0;
	} else {
		s->p.speed_min_kib = kib_per_s ? kib_per_s : SYNC_DEFAULT_SPEED_MIN_KIB;
		s->p.speed_min_set = kib_per_s != 0;
	}
	pthread_mutex_unlock(&s->lock);
	return 0;
}

void array_sync_shutdown(struct raid_array *a)
{
	struct array_sync *s = a->sync;
	if (!s)
		return;
	pthread_mutex_lock(&s->lock);
	s->cancel = true;
	pthread_mutex_unlock(&s->lock);
	sync_join(s);
	pthread_mutex_destroy(&a->sync->lock);
	free(a->sync);
	a->sync = NULL;
}
