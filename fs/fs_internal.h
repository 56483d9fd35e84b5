/* fs_internal.h - what fs_main.c and fs_ops.c share: the inode table of
 * the fixed tree and the daemon state handed to every request. */
#ifndef RAIDFUSE_FS_INTERNAL_H
#define RAIDFUSE_FS_INTERNAL_H

#define FUSE_USE_VERSION FUSE_MAKE_VERSION(3, 12)
#include <fuse3/fuse_lowlevel.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "fs.h"

/* Inode numbers are computed, not allocated: fixed ones for the tree's
 * skeleton, then a range for the array's attributes and one block per
 * member (its directory, then its attributes). */
enum fs_inode {
	FS_INO_ROOT = FUSE_ROOT_ID,
	FS_INO_VOLUME,
	FS_INO_CONTROL_DIR,
	FS_INO_PID,
	FS_INO_ATTR_BASE = 16,       /* + index in array_attrs */
	FS_INO_DEV_BASE = 1024,      /* + member index * FS_INO_DEV_STRIDE */
	FS_INO_DEV_STRIDE = 16,      /* dir, then + 1 + index in member_attrs */
};

struct fs_state {
	struct raid_array *array;
	const struct fs_options *opts;
	uid_t uid;
	gid_t gid;
	pthread_mutex_t times_lock;
	struct timespec volume_mtime;
	struct timespec volume_atime;
	struct timespec mount_time;
	/* The last write to volume.img (CLOCK_REALTIME_COARSE, ns; 0 none
	 * since the mtime was last set): kept without the lock, since every
	 * write stores it; getattr shows the later of the two. */
	_Atomic uint64_t volume_written_ns;
};

extern const struct fuse_lowlevel_ops fs_lowlevel_ops;

#endif
