/* fs_main.c - the daemon's life: build the FUSE session with options sized
 * for throughput, mount, daemonize, run the multi-threaded loop, and leave
 * cleanly on unmount or SIGTERM/SIGINT/SIGHUP. */
#include "config.h"

#include "fs_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include "array.h"

static bool fs_daemonized;

void fs_log(void *ctx, const char *msg)
{
	(void)ctx;
	if (fs_daemonized)
		syslog(LOG_WARNING, "%s", msg);
	else
		fprintf(stderr, "raidfuse: %s\n", msg);
}

/* The options of the mount, for libfuse's parser. */
static int fs_session_args(const struct fs_options *opts, bool read_only, char *mount_opts,
                           size_t len, struct fuse_args *args)
{
	int need = snprintf(mount_opts, len,
	                    "fsname=raidfuse,subtype=raidfuse,default_permissions,max_read=%u%s%s%s%s",
	                    FS_MAX_IO_BYTES, read_only ? ",ro" : "",
	                    opts->allow_other ? ",allow_other" : "", opts->extra_opts ? "," : "",
	                    opts->extra_opts ? opts->extra_opts : "");
	if (need < 0 || (size_t)need >= len)
		return -E2BIG; /* cut short, the last option would be another */
	if (fuse_opt_add_arg(args, "raidfuse") || fuse_opt_add_arg(args, "-o") ||
	    fuse_opt_add_arg(args, mount_opts) || (opts->debug && fuse_opt_add_arg(args, "-d")))
		return -ENOMEM;
	return 0;
}

int fs_check_options(const struct fs_options *opts)
{
	static const struct fuse_lowlevel_ops no_ops;
	struct fuse_args args = FUSE_ARGS_INIT(0, NULL);
	char mount_opts[512];
	int rc = fs_session_args(opts, false, mount_opts, sizeof(mount_opts), &args);

	if (rc == 0) {
		/* libfuse names an option it does not know on stderr. */
		struct fuse_session *se = fuse_session_new(&args, &no_ops, sizeof(no_ops), NULL);
		if (se)
			fuse_session_destroy(se);
		else
			rc = -EINVAL;
	}
	fuse_opt_free_args(&args);
	return rc;
}

int fs_run(struct raid_array *array, const struct fs_options *opts)
{
	struct fs_state fs;
	struct fuse_args args = FUSE_ARGS_INIT(0, NULL);
	struct fuse_session *se = NULL;
	struct fuse_loop_config *loop_cfg = NULL;
	char mount_opts[512];
	int rc = -EIO;

	memset(&fs, 0, sizeof(fs));
	fs.array = array;
	fs.opts = opts;
	fs.uid = getuid();
	fs.gid = getgid();
	pthread_mutex_init(&fs.times_lock, NULL);
	clock_gettime(CLOCK_REALTIME, &fs.mount_time);
	fs.volume_mtime = fs.volume_atime = fs.mount_time;

	if (fs_session_args(opts, array->read_only, mount_opts, sizeof(mount_opts), &args) < 0) {
		fprintf(stderr, "raidfuse: out of memory\n");
		goto out;
	}
	se = fuse_session_new(&args, &fs_lowlevel_ops, sizeof(fs_lowlevel_ops), &fs);
	if (!se) {
		fprintf(stderr, "raidfuse: cannot set up the FUSE session (mount options: %s)\n",
		        mount_opts);
		goto out;
	}
	if (fuse_set_signal_handlers(se) != 0) {
		fprintf(stderr, "raidfuse: cannot install signal handlers\n");
		goto out_destroy;
	}
	if (fuse_session_mount(se, opts->mountpoint) != 0) {
		fprintf(stderr, "raidfuse: cannot mount on %s (is /dev/fuse available and "
		        "fusermount3 installed?)\n", opts->mountpoint);
		goto out_signals;
	}
	if (!opts->foreground) {
		openlog("raidfuse", LOG_PID, LOG_DAEMON);
		fs_daemonized = true;
	}
	/* Daemonize only after the mount succeeded, so the parent's exit
	 * status says whether the volume is there. */
	if (fuse_daemonize(opts->foreground) != 0) {
		fprintf(stderr, "raidfuse: cannot daemonize\n");
		goto out_unmount;
	}
	/* Threads started before the fork would be gone: start them now, and
	 * resume or begin a rebuild if a spare waits. */
	array_workers_start(array);
	if (opts->on_serving)
		opts->on_serving(opts->on_serving_ctx);
	array_recovery_kick(array);
	loop_cfg = fuse_loop_cfg_create();
	if (!loop_cfg)
		goto out_unmount;
	fuse_loop_cfg_set_max_threads(loop_cfg, (unsigned)opts->max_threads);
	fuse_loop_cfg_set_clone_fd(loop_cfg, 0);
	/* A signal that ends the loop (SIGTERM: a normal stop) comes back
	 * as its positive number; only a negative return is a failure. */
	rc = fuse_session_loop_mt(se, loop_cfg) < 0 ? -EIO : 0;
	fuse_loop_cfg_destroy(loop_cfg);
out_unmount:
	fuse_session_unmount(se);
out_signals:
	fuse_remove_signal_handlers(se);
out_destroy:
	fuse_session_destroy(se);
out:
	fuse_opt_free_args(&args);
	pthread_mutex_destroy(&fs.times_lock);
	return rc;
}
