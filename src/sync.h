/* sync.h - background sync actions of a mounted array (md's sync_action):
 * check counts mismatched redundancy (mismatch_cnt) and changes nothing;
 * repair rewrites it. One action runs at a time, in its own thread, at
 * most at sync_speed_max; above sync_speed_min it gives way while the
 * array serves reads and writes (md's rule); progress is sync_completed. */
#ifndef RAIDFUSE_SYNC_H
#define RAIDFUSE_SYNC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct raid_array;

enum sync_action {
	SYNC_IDLE = 0,
	SYNC_CHECK,
	SYNC_REPAIR,
	SYNC_RECOVER,                  /* rebuilding a member (not started by hand) */
	/* The resync of what an unclean stop left, run at mount before the
	 * array serves: never running as seen from sync_action, only the
	 * last action (raidfuse wait after the mount reports it). */
	SYNC_RESYNC,
};

#define SYNC_DEFAULT_SPEED_MIN_KIB 1000u     /* md's defaults, KiB/s */
#define SYNC_DEFAULT_SPEED_MAX_KIB 200000u

struct sync_progress {
	enum sync_action action;       /* running now (idle when none) */
	enum sync_action last_action;  /* the last one started */
	uint64_t done_sectors;         /* of total_sectors (member space) */
	uint64_t total_sectors;
	uint64_t mismatch_sectors;     /* of the last or current check/repair */
	uint64_t rate_kib;             /* speed over the last few seconds */
	int last_result;               /* 0, or -errno of a failed action */
	bool interrupted;              /* the last one was stopped before the end */
	bool speed_min_set, speed_max_set; /* set by hand (md's "local") */
	unsigned speed_min_kib;
	unsigned speed_max_kib;
};

const char *sync_action_name(enum sync_action action);
/* Why a sync ended with rc < 0, in words: -ENODEV is a member that failed
 * (or the one being rebuilt given up) under it, not a missing device. */
const char *sync_result_text(int rc);
/* "check", "repair", "idle" -> action; -EINVAL otherwise. */
int sync_action_parse(const char *text, enum sync_action *action);

/* Start check or repair: -EBUSY if one runs, -EOPNOTSUPP without
 * redundancy, -ENODEV when degraded, -EROFS for repair on a read-only
 * array. SYNC_IDLE stops a running action and waits for it. */
int array_sync_request(struct raid_array *a, enum sync_action action);
void array_sync_progress(struct raid_array *a, struct sync_progress *out);
/* kib_per_s 0: back to the default (md's "system"). */
int array_sync_set_speed(struct raid_array *a, bool max, unsigned kib_per_s);
/* Start rebuilding role onto member m (array_recovery_kick calls this).
 * -EBUSY while another action runs. */
struct member;
int array_sync_recover(struct raid_array *a, int role, struct member *m);
/* Record the resync at mount as the last action, with its result. */
void array_sync_note_resync(struct raid_array *a, int result);
/* Stop and join the thread (array stop). */
void array_sync_shutdown(struct raid_array *a);

#endif
