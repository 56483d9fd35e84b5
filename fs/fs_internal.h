/* fs_internal.h - what fs_main.c and fs_ops.c share: the inode table of
 * the fixed tree and the daemon state handed to every request. */
#ifndef RAIDFUSE_FS_INTERNAL_H
#define RAIDFUSE_FS_INTERNAL_H

#define FUSE_USE_VERSION FUSE_MAKE_VERSION(3, 12)
#include <fuse3/fuse_lowlevel.h>
#include <pthread.h>
#include <sys/types.h>
#include <time.h>

#include "fs.h"

enum fs_inode {
	FS_INO_ROOT = FUSE_ROOT_ID,
	FS_INO_VOLUME,
	FS_INO_CONTROL_DIR,
	FS_INO_STATUS,
	FS_INO_PID,
	FS_INO_COUNT,
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
};

extern const struct fuse_lowlevel_ops fs_lowlevel_ops;

#endif
