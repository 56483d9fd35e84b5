/* array.h - an assembled array: its members by role, its geometry and
 * level, its state (events, clean/dirty, degraded), and the entry points
 * the FUSE layer and the tests use. Knows nothing about FUSE. */
#ifndef RAIDFUSE_ARRAY_H
#define RAIDFUSE_ARRAY_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "level.h"
#include "member.h"
#include "row_lock.h"

struct io_pool;
struct stripe_cache;
struct write_bitmap;
struct array_sync;

/* Run-time knobs, from mount options. */
struct array_tuning {
	uint64_t cache_bytes;        /* stripe cache; 0 = off (no caching, write-through) */
	bool write_back;             /* writes return once in the cache */
	unsigned flush_age_ms;       /* dirty rows older than this are written out */
	unsigned readahead_rows;     /* rows read ahead for a sequential reader */
	int io_threads;              /* member I/O workers; -1 = one per member */
};

#define ARRAY_DEFAULT_CACHE_MIB 64
#define ARRAY_DEFAULT_FLUSH_AGE_MS 3000
#define ARRAY_DEFAULT_READAHEAD_ROWS 4

/* The defaults, for callers that build their own options. */
void array_tuning_defaults(struct array_tuning *t);

struct raid_array {
	struct raid_geometry geo;
	const struct raid_level_ops *ops;
	void *level_priv;

	int super_minor;                         /* metadata 1.x: x (member.h) */
	bool super_090;                          /* metadata 0.90: mounted read-only */
	struct member *members;                  /* every member opened */
	int nr_members;
	struct member *slot[RAID_MAX_MEMBERS];   /* member serving each role; NULL if gone */
	int members_capacity;                    /* room in members[] for added ones */
	/* Recovery (md's "recover"): a member being rebuilt into a missing
	 * role. It takes writes for member bytes below rebuilt_bytes (rebuilt
	 * already) and no reads until it is in sync. */
	struct member *rebuilding[RAID_MAX_MEMBERS];
	atomic_uint_fast64_t rebuilt_bytes[RAID_MAX_MEMBERS];
	/* A returning member: only what the write-intent bitmap marks is
	 * rebuilt (md's re-add). */
	bool rebuild_bitmap_only[RAID_MAX_MEMBERS];

	uint8_t set_uuid[16];
	char set_name[33];
	uint64_t events;
	bool read_only;
	bool was_dirty;                          /* not stopped cleanly last time */
	bool started;                            /* superblocks say active */
	/* Started dirty and degraded (--force): parity may be torn where the
	 * bitmap marks; the array stays dirty until resynced. */
	atomic_bool resync_pending;
	/* A write was lost with no redundancy left to fail its member (md's
	 * MD_BROKEN): every later write fails, the array stays dirty. */
	atomic_bool broken;
	/* Bytes read and written through the volume, counted so a background
	 * sync can see the array is in use and give way (md's is_mddev_idle). */
	atomic_uint_fast64_t user_bytes;
	uint64_t resynced_regions;               /* bitmap regions resynced at start */

	pthread_mutex_t state_lock;              /* slot[], events, superblock writes */
	/* One add or replace at a time: each prepares the next free entry of
	 * members[] before it takes state_lock to count it in, and the two
	 * come from different control files, which the kernel does not
	 * serialise. */
	pthread_mutex_t member_add_lock;
	/* A superblock update failed a member out: the caller kicks the
	 * rebuild once it has let go of state_lock (under which it is set). */
	bool kick_wanted;
	/* Members in sync that took the last superblock update (state_lock). */
	int super_recorded;
	struct row_locks row_locks;
	int sticky_error;                        /* first member write error, for fsync */

	struct array_tuning tuning;
	pthread_mutex_t workers_lock;
	atomic_bool workers_ready;               /* io_pool and level state running */
	struct io_pool *io_pool;                 /* parallel member I/O */
	struct stripe_cache *cache;              /* RAID5/6 only (ops->attach) */
	struct write_bitmap *bitmap;             /* md internal bitmap, or NULL */
	struct array_sync *sync;                 /* check/repair (sync.c) */
	pthread_t bitmap_daemon;                 /* clears idle bits */
	bool bitmap_daemon_running;
	atomic_bool stopping;
	atomic_bool discard_refusal_logged;      /* array_discard said why, once */

	void (*log)(void *ctx, const char *msg); /* warnings and state changes */
	void *log_ctx;
	/* Events in mdadm --monitor's terms (array_assemble_opts.event). */
	void (*event)(void *ctx, const char *event, const char *member, const char *disc,
	              const char *message);
	void *event_ctx;
	char *served_dir;                        /* array_assemble_opts.served_dir */
	/* The last lines logged, for MOUNT/.raidfuse/log (md's dmesg lines). */
	pthread_mutex_t log_lock;
	char log_ring[64][256];
	unsigned log_next;
};

/* The lines in the log ring, oldest first, into buf. */
void array_log_text(struct raid_array *a, char *buf, size_t len);

struct array_assemble_opts {
	bool run_degraded;   /* --run: start with members missing */
	bool force;          /* start even if dirty and degraded */
	bool read_only;      /* open members read-only, write no superblock */
	bool tuning_set;     /* use tuning below; else array_tuning_defaults() */
	struct array_tuning tuning;
	void (*log)(void *ctx, const char *msg);
	void *log_ctx;
	/* Called for the events mdadm --monitor reports (Fail, FailSpare,
	 * SpareActive, DegradedArray, RebuildStarted, RebuildNN,
	 * RebuildFinished), with the member's path or NULL, what mdadm passes
	 * its program as third argument (disc: the member's path for Fail,
	 * FailSpare and SpareActive, a check's " mismatches found: N (on raid
	 * level L)", else NULL) and the log line that goes with it. It must
	 * not block: it may be called with the array's locks held. NULL: none. */
	void (*event)(void *ctx, const char *event, const char *member, const char *disc,
	              const char *message);
	void *event_ctx;
	/* A directory this process serves (the mount point, absolute, no
	 * links): a member added later may not lie inside it, or the daemon
	 * would wait on itself. NULL: none. */
	const char *served_dir;
};

/* Assemble from member paths (any order). On success *out can be read;
 * on failure returns -errno with err naming what is wrong. Assembly writes
 * nothing to any member. */
int array_assemble(struct raid_array **out, const char *const *paths, int nr_paths,
                   const struct array_assemble_opts *opts, char *err, size_t errlen);

/* Make an assembled array writable: resync if it was stopped uncleanly,
 * record missing members as faulty, mark it active (dirty) in the
 * superblocks. A no-op for read-only arrays. 0 or -errno with err set. */
int array_start(struct raid_array *a, char *err, size_t errlen);

/* Stop: flush, mark clean in the superblocks (unless read-only), close. */
int array_stop(struct raid_array *a);

/* mdadm --grow --bitmap on an assembled array that was not started (the
 * array clean, every member in sync): add an internal write-intent bitmap
 * (internal; chunk_wanted_bytes 0 for create's default) or remove it.
 * The superblocks are written before it returns. 0, or -errno with err
 * saying what is wrong (nothing written then, unless a write failed). */
int array_grow_bitmap(struct raid_array *a, bool internal, uint64_t chunk_wanted_bytes,
                      char *err, size_t errlen);

/* mdadm --grow --size, on the same terms: each member gives want_bytes
 * (0: the most the smallest member offers, mdadm's max) to the array,
 * more than now; the new room is zeroed, any bitmap rewritten for the new
 * size. Metadata 1.1 and 1.2, levels whose layout keeps its place (not
 * linear, raid0, raid10 far). *new_array_bytes: the volume's new size. */
int array_grow_size(struct raid_array *a, uint64_t want_bytes, uint64_t *new_array_bytes,
                    char *err, size_t errlen);

/* mdadm --grow --raid-devices, for levels where no byte moves (raid1):
 * new roles are left for members to be added (the array mounts with
 * --run until then); roles dropped must have no member. Same terms. */
int array_grow_raid_disks(struct raid_array *a, int new_disks, char *err, size_t errlen);

/* Volume I/O; off + len must be within the array. 0 or -errno. */
int array_read(struct raid_array *a, void *buf, size_t len, uint64_t off);
int array_write(struct raid_array *a, const void *buf, size_t len, uint64_t off);
/* Zeros over [off, off + len) of the volume, freeing member space where
 * the members can (holes punched in member files, a device's
 * write-zeroes), written where they cannot (fallocate's ZERO_RANGE).
 * -EOPNOTSUPP where the level does not offer it, else as array_write
 * (-EIO, not -ENODATA, where md's bad block log leaves a part of a row
 * unwritable). */
int array_zero(struct raid_array *a, uint64_t len, uint64_t off);
/* A discard of [off, off + len) (fallocate's PUNCH_HOLE: fstrim, mkfs):
 * array_zero where every member zeroes without writing; otherwise
 * -EOPNOTSUPP, said once in the log, as md offers no discard over disks
 * without it: a discard of a whole volume would write every member. */
int array_discard(struct raid_array *a, uint64_t len, uint64_t off);
/* The first member, serving or being rebuilt, that can zero only by
 * writing every byte (discards are refused while there is one), or NULL. */
const struct member *array_member_writing_zeroes(struct raid_array *a);
/* Make everything written so far durable on every member. Reports (and
 * keeps reporting) any write error seen since assembly. */
int array_flush(struct raid_array *a);

/* An I/O error of member m on role: fail m if the array can run without
 * it (superblocks of the others record it), else keep it. Returns true if
 * m no longer serves the role (failed now, or already replaced: the caller
 * can retry from redundancy). m is the member the failed I/O went to,
 * compared with the one serving now: a slow write or sync may end after a
 * rebuilt member took the role over, which must not pay for it. */
bool array_member_error(struct raid_array *a, int role, struct member *m, int err,
                        bool is_write);

/* Start the I/O pool and the level's threads (the stripe cache) if not
 * running yet; the I/O calls do it on first use. 0 or -errno. */
int array_workers_start(struct raid_array *a);

/* Fail m, which is being rebuilt or copied to (md's "faulty" on a
 * recovering device): the rebuild stops. -EINVAL if it is not. */
int array_fail_rebuilding(struct raid_array *a, struct member *m);

/* Set or clear md's write-mostly flag of m (recorded in its superblock):
 * raid1 reads it only when no other copy is there. -EOPNOTSUPP on levels
 * that ignore the flag, -EROFS read-only. */
int array_set_write_mostly(struct raid_array *a, struct member *m, bool on);

/* A line for the log (state changes, warnings). */
void array_logf(struct raid_array *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The same line, also reported as event (mdadm's name) concerning member
 * (NULL: the array) to the event callback; its disc is the member's path,
 * but none for the Rebuild events (mdadm passes none there). */
void array_eventf(struct raid_array *a, const char *event, const struct member *member,
                  const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* The same with disc given. */
void array_eventf_disc(struct raid_array *a, const char *event, const struct member *member,
                       const char *disc, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

/* Fail the member serving role on purpose (a drill): refused with -EBUSY
 * when the array could not run without it. */
int array_fail_role(struct raid_array *a, int role);
/* Close a faulty, stale or spare member (md's "remove"). -EBUSY if in sync. */
int array_remove_member(struct raid_array *a, struct member *m);

/* The member to write role's bytes [dev_off, dev_off + len) to: the one in
 * sync, or the one being rebuilt when that range is rebuilt already. */
static inline struct member *array_write_target(const struct raid_array *a, int role,
                                                uint64_t dev_off, uint64_t len)
{
	/* Read once: another thread may fail the member out meanwhile. The
	 * member being rebuilt first: array_recovery_finish sets slot before
	 * it clears rebuilding (md's raid5_remove_disk order), so a reader
	 * that finds rebuilding cleared finds the slot set, never neither. */
	struct member *m = __atomic_load_n(&a->rebuilding[role], __ATOMIC_ACQUIRE);
	struct member *serving = __atomic_load_n(&a->slot[role], __ATOMIC_ACQUIRE);
	if (serving)
		return serving;
	return m && dev_off + len <= atomic_load(&a->rebuilt_bytes[role]) ? m : NULL;
}

/* The member that answers reads of role's bytes [dev_off, dev_off + len):
 * the one in sync, else the member being rebuilt for the role where its
 * rebuild has passed (md reads a recovering device below its
 * recovery_offset too: after a crash its copy is the role's data, while
 * parity a torn row left behind would rebuild it wrongly). NULL if none. */
static inline struct member *array_read_source(const struct raid_array *a, int role,
                                               uint64_t dev_off, uint64_t len)
{
	return array_write_target(a, role, dev_off, len);
}

/* Add a member to a mounted array (md's --add): a replacement for a
 * missing role, rebuilt in the background, or a spare. 0 or -errno with
 * err naming what is wrong. */
int array_add_member(struct raid_array *a, const char *path, char *err, size_t errlen);

/* Copy role of old onto a new member while old keeps serving (md's
 * want_replacement); at the end the new one takes the role and old is
 * faulty. */
int array_replace_member(struct raid_array *a, struct member *old, const char *path, char *err,
                         size_t errlen);

/* During a rebuild of role: whether what lies at [sync_off, +len) of the
 * resync address space needs it (false for a returning member where the
 * bitmap says nothing changed). */
bool array_rebuild_needed(struct raid_array *a, int role, uint64_t sync_off, uint64_t len);

/* A replacement being copied for role: it takes writes for what it has
 * already (besides the member in sync). */
static inline struct member *array_replacement_target(struct raid_array *a, int role,
                                                      uint64_t dev_off, uint64_t len)
{
	/* Same order as array_write_target. Once the copy serves the role
	 * it is no replacement of itself. Callers look here before they look
	 * at array_write_target: the copy taking over in between then makes
	 * both the same member (write it once), never the old member alone. */
	struct member *m = __atomic_load_n(&a->rebuilding[role], __ATOMIC_ACQUIRE);
	struct member *serving = __atomic_load_n(&a->slot[role], __ATOMIC_ACQUIRE);
	if (!serving || !m || serving == m)
		return NULL;
	return dev_off + len <= atomic_load(&a->rebuilt_bytes[role]) ? m : NULL;
}

/* A write to m, the member being rebuilt or copied for role, failed: give
 * it up (faulty), so it is never declared in sync with a hole in it. A
 * replacement's role stays on the member in sync; a rebuilt role stays
 * missing. Nothing happens if m is no longer that member. */
void array_rebuild_target_failed(struct raid_array *a, int role, struct member *m, int err);

/* Member bytes [data_off, data_off + len) of role, which the rebuild onto
 * m (its target) found on no other member (sectors in md's bad block log
 * where no redundancy is left): logged as bad on m, durably, as md's
 * recovery does, so that reads there fail instead of returning bytes the
 * array never held. 0, or -errno when m cannot log them (no room for a
 * log, or a full one): m is then given up (faulty), as md does. */
int array_rebuild_lost(struct raid_array *a, int role, struct member *m, uint64_t data_off,
                       uint64_t len);

/* Recovery bookkeeping for sync.c: start rebuilding role onto m (the
 * superblocks record it), note progress, finish. Each does nothing
 * (-ENODEV) once m is no longer the member rebuilt for role: given up
 * after a write error, perhaps with another added in its place. */
int array_recovery_begin(struct raid_array *a, int role, struct member *m);
/* Member bytes below end of role are rebuilt on m. */
void array_recovery_advance(struct raid_array *a, int role, struct member *m, uint64_t end);
void array_recovery_checkpoint(struct raid_array *a, int role, struct member *m);
/* On success *replaced (may be NULL) is the member m took the role from
 * (a replace), now faulty, or NULL. */
int array_recovery_finish(struct raid_array *a, int role, struct member *m,
                          struct member **replaced);
/* A role missing and a spare (or a half-rebuilt member) present: start
 * recovery. Called when the array starts and when a member fails. */
void array_recovery_kick(struct raid_array *a);
/* The next role to rebuild and the member to rebuild it onto; false when
 * none (or recovery cannot run here). */
bool array_recovery_next(struct raid_array *a, int *role, struct member **m);

/* Remember a write error that could not be absorbed, for fsync. */
void array_note_write_error(struct raid_array *a, int err);

/* Check redundancy against data over the whole array, reading the members
 * (md's "check"): *mismatch_sectors as md's mismatch_cnt. -EOPNOTSUPP for
 * levels without redundancy, -ENODEV when the members missing leave none
 * (a degraded array is checked over the redundancy it has left). */
int array_check(struct raid_array *a, uint64_t *mismatch_sectors);

/* Whether the array could still serve data without role (and the roles
 * already missing), e.g. to rebuild it after a read error. */
bool array_can_spare(struct raid_array *a, int role, const int *also, int nr_also);

/* Whether some row still has redundancy to compare: a serving member
 * could be lost too (RAID6 with one role missing, RAID10 with a whole
 * pair left, RAID1 with two copies), or some extent still has two copies
 * (a RAID10 of an odd member count less one). md runs check and repair
 * on a degraded array while this holds, over what is left. */
bool array_has_redundancy(struct raid_array *a);

/* Count of roles without a serving member. */
int array_missing_count(const struct raid_array *a);
/* The array's metadata version: "0.90", "1.0", "1.1" or "1.2". */
const char *array_metadata_name(const struct raid_array *a);
/* The missing roles as text ("1, 3"; empty when none), into out. */
void array_missing_text(const struct raid_array *a, char *out, size_t outlen);

/* mdstat-like status text. */
void array_status_text(struct raid_array *a, char *buf, size_t len);

/* Create a new array: write superblocks to the members (creating missing
 * member files of member_file_bytes), zero their data areas. */
struct array_create_opts {
	int32_t level;
	uint32_t layout;
	bool layout_set;
	uint32_t chunk_bytes;
	int raid_disks;
	const char *name;
	uint64_t member_file_bytes;   /* --size; 0 = use the existing file size */
	bool no_bitmap;               /* --bitmap none */
	bool want_bitmap;             /* --bitmap internal, said explicitly */
	uint64_t bitmap_chunk_bytes;  /* --bitmap-chunk; 0 = mdadm's default */
	bool force;                   /* overwrite members that hold md superblocks */
	enum array_metadata {         /* --metadata: 1.2 unless said (zeroed opts too) */
		ARRAY_METADATA_DEFAULT,
		ARRAY_METADATA_1_0,
		ARRAY_METADATA_1_1,
		ARRAY_METADATA_1_2,
	} metadata;
};
int array_create(const char *const *paths, int nr_paths, const struct array_create_opts *opts,
                 char *err, size_t errlen);

/* Build the geometry of an array from a superblock and per-role data sizes
 * (shared by create and assemble). */
int array_geometry_from_super(struct raid_geometry *geo, const struct md_super *sb,
                              char *err, size_t errlen);

#endif
