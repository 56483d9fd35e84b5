/* cmd_umount.c - `raidfuse umount MOUNT`: unmount, then wait until the
 * daemon has flushed and marked the array clean, so that when this returns
 * the member files are quiescent. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <mntent.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "level.h"
#include "md_super.h"
#include "member.h"

#define UMOUNT_WAIT_SECONDS 120

static pid_t umount_read_daemon_pid(const char *mountpoint)
{
	char path[4096];
	long pid = -1;

	snprintf(path, sizeof(path), "%s/.raidfuse/pid", mountpoint);
	FILE *f = fopen(path, "r");
	if (!f)
		return -1;
	if (fscanf(f, "%ld", &pid) != 1)
		pid = -1;
	fclose(f);
	return (pid_t)pid;
}

/* Whether a task's /proc stat line says it has exited (zombie or dead). */
static bool umount_stat_exited(const char *stat_path)
{
	char stat_line[512];
	FILE *f = fopen(stat_path, "r");

	if (!f)
		return true;
	size_t got = fread(stat_line, 1, sizeof(stat_line) - 1, f);
	fclose(f);
	stat_line[got] = '\0';
	const char *after_name = strrchr(stat_line, ')');
	return after_name && after_name[1] == ' ' && (after_name[2] == 'Z' || after_name[2] == 'X');
}

/* Gone: no such process, or every one of its threads has exited (a main
 * thread shows as a zombie while others may still be writing, and holding
 * the member locks). */
static bool umount_daemon_gone(pid_t pid)
{
	char path[64];

	if (kill(pid, 0) < 0 && errno == ESRCH)
		return true;
	snprintf(path, sizeof(path), "/proc/%ld/task", (long)pid);
	DIR *tasks = opendir(path);
	if (!tasks)
		return true;
	bool all_exited = true;
	for (struct dirent *d; all_exited && (d = readdir(tasks));) {
		char stat_path[300];
		if (d->d_name[0] == '.')
			continue;
		snprintf(stat_path, sizeof(stat_path), "/proc/%ld/task/%s/stat", (long)pid, d->d_name);
		all_exited = umount_stat_exited(stat_path);
	}
	closedir(tasks);
	return all_exited;
}

bool cli_is_raidfuse_mount(const char *mountpoint)
{
	char real[PATH_MAX], *resolved;
	bool found = false;

	/* A live mount resolves whole; a dead one (ENOTCONN) only up to its
	 * folder, named without trailing slashes. */
	if (realpath(mountpoint, real)) {
		resolved = strdup(real);
	} else {
		char *bare = strdup(mountpoint);
		if (!bare)
			return false;
		for (size_t len = strlen(bare); len > 1 && bare[len - 1] == '/';)
			bare[--len] = '\0';
		resolved = member_resolve_path(bare);
		free(bare);
	}
	if (!resolved)
		return false;
	FILE *mounts = setmntent("/proc/self/mounts", "r");
	for (struct mntent *e; mounts && !found && (e = getmntent(mounts));)
		found = strcmp(e->mnt_dir, resolved) == 0 && strcmp(e->mnt_type, "fuse.raidfuse") == 0;
	if (mounts)
		endmntent(mounts);
	free(resolved);
	return found;
}

/* Run fusermount3 -u: 0, -EBUSY (the mount is in use: only known when
 * its message is captured rather than shown), or -EIO. */
static int umount_run_fusermount_once(const char *mountpoint, bool capture_message)
{
	int err_pipe[2] = { -1, -1 };
	int status;

	if (capture_message && pipe(err_pipe) < 0)
		return -errno;
	pid_t child = fork();
	if (child < 0) {
		int rc = -errno;
		if (capture_message) {
			close(err_pipe[0]);
			close(err_pipe[1]);
		}
		return rc;
	}
	if (child == 0) {
		if (capture_message) {
			dup2(err_pipe[1], STDERR_FILENO);
			close(err_pipe[0]);
			close(err_pipe[1]);
		}
		execlp("fusermount3", "fusermount3", "-u", mountpoint, (char *)NULL);
		fprintf(stderr, "raidfuse umount: cannot run fusermount3: %s\n", strerror(errno));
		_exit(127);
	}
	char message[512];
	size_t got = 0;
	if (capture_message) {
		close(err_pipe[1]);
		ssize_t n;
		while ((n = read(err_pipe[0], message + got, sizeof(message) - 1 - got)) > 0)
			got += (size_t)n;
		close(err_pipe[0]);
	}
	message[got] = '\0';
	if (waitpid(child, &status, 0) < 0)
		return -errno;
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return 0;
	/* fusermount3 exits 1 for every failure; its message tells busy. */
	return capture_message && strstr(message, "busy") ? -EBUSY : -EIO;
}

/* A file system just unmounted from volume.img (fuse2fs, a loop device)
 * can keep it open for a moment after its own umount returned: the mount
 * is busy until then. Try again for a few seconds before giving up; any
 * other failure is reported at once. */
static int umount_run_fusermount(const char *mountpoint)
{
	for (int tries = 0; tries < 50; tries++) {
		int rc = umount_run_fusermount_once(mountpoint, true);
		if (rc == 0)
			return 0;
		if (rc != -EBUSY)
			break;
		if (tries == 10)
			fprintf(stderr, "raidfuse umount: %s is busy (volume.img still open?); "
			        "waiting up to 5 s\n", mountpoint);
		struct timespec nap = { 0, 100 * 1000 * 1000 };
		nanosleep(&nap, NULL);
	}
	return umount_run_fusermount_once(mountpoint, false);
}

/* What the daemon says of itself before it goes: the members that carry
 * the array's state (in sync or being rebuilt), and whether a dirty end
 * is expected. */
struct umount_expect {
	char paths[RAID_MAX_MEMBERS][PATH_MAX];
	int nr_paths;
	bool read_only;
	bool resync_pending;   /* started dirty and degraded: stays dirty */
	bool failed;           /* a write was lost: the array failed */
};

/* One line of a control file, without its newline. */
static bool umount_read_ctl(const char *mountpoint, const char *name, char *buf, size_t len)
{
	if (cli_ctl_read(mountpoint, name, buf, len) < 0)
		return false;
	buf[strcspn(buf, "\n")] = '\0';
	return true;
}

static void umount_collect(const char *mountpoint, struct umount_expect *ex)
{
	static char json[65536];
	char attr[64], state[64];

	memset(ex, 0, sizeof(*ex));
	if (umount_read_ctl(mountpoint, "status.json", json, sizeof(json))) {
		ex->read_only = strstr(json, "\"read_only\":true") != NULL;
		ex->resync_pending = strstr(json, "\"resync_pending\":true") != NULL;
		ex->failed = strstr(json, "\"state\":\"failed\"") != NULL;
	}
	for (int dev = 0; dev < 1024 && ex->nr_paths < RAID_MAX_MEMBERS; dev++) {
		snprintf(attr, sizeof(attr), "dev%d/state", dev);
		if (!umount_read_ctl(mountpoint, attr, state, sizeof(state)))
			break;
		/* In sync, or being rebuilt: md's words call the latter a
		 * spare, one that holds a slot (a waiting spare has none). */
		if (strncmp(state, "spare", 5) == 0) {
			char slot[32];
			snprintf(attr, sizeof(attr), "dev%d/slot", dev);
			if (!umount_read_ctl(mountpoint, attr, slot, sizeof(slot)) ||
			    strcmp(slot, "none") == 0)
				continue;
		} else if (strncmp(state, "in_sync", 7) != 0) {
			continue;
		}
		snprintf(attr, sizeof(attr), "dev%d/path", dev);
		if (umount_read_ctl(mountpoint, attr, ex->paths[ex->nr_paths], PATH_MAX))
			ex->nr_paths++;
	}
}

/* After the daemon has gone: whether every member it named says clean. A
 * stop that could not flush (a member write error) leaves the array
 * dirty, and only the daemon's log said so. */
static bool umount_members_clean(const struct umount_expect *ex, char *dirty_path, size_t len)
{
	for (int i = 0; i < ex->nr_paths; i++) {
		struct member m;
		char err[256];
		if (member_open(&m, ex->paths[i], true, err, sizeof(err)) < 0)
			continue;
		bool dirty = member_super_load(&m, err, sizeof(err)) == 0 &&
		             m.sb.resync_offset != MD_RESYNC_NONE;
		member_close(&m);
		if (dirty) {
			snprintf(dirty_path, len, "%s", ex->paths[i]);
			return false;
		}
	}
	return true;
}

static int umount_verdict(const char *mountpoint, const struct umount_expect *ex)
{
	char dirty_path[PATH_MAX];

	if (ex->failed && !ex->read_only) {
		cli_error("umount", "the array at %s had failed (a write was lost where no "
		          "redundancy was left): it was not stopped cleanly; check the members, "
		          "then mount again with --force",
		          mountpoint);
		return CLI_EXIT_ERROR;
	}
	if (ex->read_only || umount_members_clean(ex, dirty_path, sizeof(dirty_path)))
		return CLI_EXIT_OK;
	if (ex->resync_pending) {
		fprintf(stderr, "raidfuse umount: %s stays marked dirty, as expected after a forced "
		        "start: its parity is resynced at the next start with every member\n",
		        mountpoint);
		return CLI_EXIT_OK;
	}
	cli_error("umount", "the array at %s was not stopped cleanly (%s is still marked active): "
	          "a member write or the final flush failed; the daemon logged why (to syslog, "
	          "or to its standard error with --foreground). It is resynced (or, being "
	          "rebuilt, its rebuild resumed or restarted) at the next mount",
	          mountpoint, dirty_path);
	return CLI_EXIT_ERROR;
}

int cmd_umount(int argc, char **argv)
{
	bool help = argc == 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0);
	/* An option where the mount point belongs is a usage error, not a
	 * mount point to look for. */
	if (argc != 2 || help || argv[1][0] == '-') {
		fprintf(help ? stdout : stderr, "Usage: raidfuse umount MOUNTPOINT\n");
		return help ? CLI_EXIT_OK : CLI_EXIT_USAGE;
	}
	const char *mountpoint = argv[1];
	/* root's fusermount3 would unmount anything */
	if (!cli_is_raidfuse_mount(mountpoint)) {
		cli_error("umount", "%s is not a raidfuse mount point", mountpoint);
		return CLI_EXIT_ERROR;
	}
	pid_t daemon_pid = umount_read_daemon_pid(mountpoint);
	static struct umount_expect expect;
	umount_collect(mountpoint, &expect);

	if (umount_run_fusermount(mountpoint) < 0) {
		cli_error("umount", "cannot unmount %s: is volume.img still in use (a file system "
		          "mounted from it, a loop device over it: losetup -j %s/volume.img, or a "
		          "process: fuser -vm %s)? The array keeps running",
		          mountpoint, mountpoint, mountpoint);
		return CLI_EXIT_ERROR;
	}
	/* No pid from the control tree: nobody answers under the mount (its
	 * daemon was killed or crashed); it is detached now, but nothing
	 * stopped the array. */
	if (daemon_pid <= 0) {
		cli_error("umount", "the daemon serving %s was gone (killed or crashed): the mount is "
		          "detached, but the array was not stopped cleanly unless it was idle; the "
		          "next mount resyncs it (only the regions its write-intent bitmap marks, "
		          "if it has one; all of it otherwise)",
		          mountpoint);
		return CLI_EXIT_ERROR;
	}
	for (int waited_ms = 0; waited_ms < UMOUNT_WAIT_SECONDS * 1000; waited_ms += 20) {
		if (umount_daemon_gone(daemon_pid))
			return umount_verdict(mountpoint, &expect);
		struct timespec nap = { 0, 20 * 1000 * 1000 };
		nanosleep(&nap, NULL);
	}
	cli_error("umount", "the daemon (pid %ld) is still writing after %d s; it will finish "
	          "on its own", (long)daemon_pid, UMOUNT_WAIT_SECONDS);
	return CLI_EXIT_ERROR;
}
