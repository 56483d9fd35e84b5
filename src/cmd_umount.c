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

static int umount_run_fusermount(const char *mountpoint)
{
	pid_t child = fork();
	int status;

	if (child < 0)
		return -errno;
	if (child == 0) {
		execlp("fusermount3", "fusermount3", "-u", mountpoint, (char *)NULL);
		fprintf(stderr, "raidfuse umount: cannot run fusermount3: %s\n", strerror(errno));
		_exit(127);
	}
	if (waitpid(child, &status, 0) < 0)
		return -errno;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -EIO;
}

int cmd_umount(int argc, char **argv)
{
	if (argc != 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
		fprintf(argc == 2 ? stdout : stderr, "Usage: raidfuse umount MOUNTPOINT\n");
		return argc == 2 ? CLI_EXIT_OK : CLI_EXIT_USAGE;
	}
	const char *mountpoint = argv[1];
	/* root's fusermount3 would unmount anything */
	if (!cli_is_raidfuse_mount(mountpoint)) {
		cli_error("umount", "%s is not a raidfuse mount point", mountpoint);
		return CLI_EXIT_ERROR;
	}
	pid_t daemon_pid = umount_read_daemon_pid(mountpoint);

	if (umount_run_fusermount(mountpoint) < 0) {
		cli_error("umount", "cannot unmount %s (is it a raidfuse mount, and not busy?)",
		          mountpoint);
		return CLI_EXIT_ERROR;
	}
	if (daemon_pid <= 0)
		return CLI_EXIT_OK;
	for (int waited_ms = 0; waited_ms < UMOUNT_WAIT_SECONDS * 1000; waited_ms += 20) {
		if (umount_daemon_gone(daemon_pid))
			return CLI_EXIT_OK;
		struct timespec nap = { 0, 20 * 1000 * 1000 };
		nanosleep(&nap, NULL);
	}
	cli_error("umount", "the daemon (pid %ld) is still writing after %d s; it will finish "
	          "on its own", (long)daemon_pid, UMOUNT_WAIT_SECONDS);
	return CLI_EXIT_ERROR;
}
