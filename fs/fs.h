/* fs.h - the FUSE daemon: presents an assembled array as MOUNT/volume.img
 * plus a small control tree (MOUNT/.raidfuse/). It sees the array only
 * through array.h's byte-range calls; it knows nothing about parity. */
#ifndef RAIDFUSE_FS_H
#define RAIDFUSE_FS_H

#include <stdbool.h>

struct raid_array;

#define FS_VOLUME_NAME "volume.img"
#define FS_CONTROL_DIR ".raidfuse"
#define FS_MAX_IO_BYTES (1024u * 1024u)

struct fs_options {
	const char *mountpoint;
	bool foreground;
	bool debug;             /* libfuse request tracing */
	bool allow_other;
	bool direct_io;         /* bypass the kernel page cache for volume.img */
	int max_threads;
	const char *extra_opts; /* more -o options for the mount */
	/* Called once mounted and detached, before serving (threads that
	 * must outlive the daemon's fork start here). NULL: none. */
	void (*on_serving)(void *ctx);
	void *on_serving_ctx;
};

/* Whether libfuse takes these options (-o ones above all), checked before
 * the array is started so that a typo changes no member: 0, or -EINVAL
 * with libfuse's message on stderr. */
int fs_check_options(const struct fs_options *opts);

/* Mount, daemonize unless foreground, serve until unmounted or signalled
 * (SIGTERM, SIGINT, SIGHUP), then unmount. The caller stops the array
 * afterwards. Returns 0, or -errno with a message printed to stderr. */
int fs_run(struct raid_array *array, const struct fs_options *opts);

/* Where log lines go once the daemon runs (stderr, or syslog when
 * daemonized). */
void fs_log(void *ctx, const char *msg);

#endif
