/* cmd_ctl.c - the verbs that drive a mounted array: thin clients of the
 * control files under MOUNT/.raidfuse/ (status, status.json, sync_action,
 * sync_completed, mismatch_cnt, devN/state). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "member.h"
#include "partition.h"

int cli_ctl_read(const char *mount, const char *name, char *buf, size_t len)
{
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/.raidfuse/%s", mount, name);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ssize_t got = read(fd, buf, len - 1);
	int rc = got < 0 ? -errno : 0;
	close(fd);
	buf[got > 0 ? got : 0] = '\0';
	return rc;
}

static int ctl_write(const char *mount, const char *name, const char *text)
{
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/.raidfuse/%s", mount, name);
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ssize_t put = write(fd, text, strlen(text));
	int rc = put < 0 ? -errno : 0;
	close(fd);
	return rc;
}

static bool ctl_is_mount(const char *verb, const char *mount)
{
	char pid[32];
	int rc = cli_ctl_read(mount, "pid", pid, sizeof(pid));
	if (rc == -ENOTCONN && cli_is_raidfuse_mount(mount))
		cli_error(verb, "the daemon serving %s is gone (killed or crashed): run "
		          "'raidfuse umount %s' to detach it, then mount the array again",
		          mount, mount);
	else if (rc < 0)
		cli_error(verb, "%s is not a raidfuse mount (%s)", mount, strerror(-rc));
	return rc == 0;
}

/* VERB --help or VERB -h alone: help on stdout, exit 0. */
static bool ctl_help_asked(int argc, char **argv)
{
	return argc == 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0);
}

int cmd_status(int argc, char **argv)
{
	static char buf[65536];
	bool json = argc == 3 && strcmp(argv[1], "--json") == 0;

	/* An option where the mount point belongs (status --json alone) is
	 * a usage error, not a mount point to look for. */
	if (!(argc == 2 || json) || argv[argc - 1][0] == '-' || ctl_help_asked(argc, argv)) {
		bool help = ctl_help_asked(argc, argv);
		fprintf(help ? stdout : stderr, "Usage: raidfuse status [--json] MOUNTPOINT\n");
		return help ? CLI_EXIT_OK : CLI_EXIT_USAGE;
	}
	const char *mount = argv[argc - 1];
	if (!ctl_is_mount("status", mount))
		return CLI_EXIT_ERROR;
	int rc = cli_ctl_read(mount, json ? "status.json" : "status", buf, sizeof(buf));
	if (rc < 0) {
		cli_error("status", "cannot read the status of %s: %s", mount, strerror(-rc));
		return CLI_EXIT_ERROR;
	}
	fputs(buf, stdout);
	return CLI_EXIT_OK;
}

/* The devN directory of a member named by path (any spelling that
 * resolves to the same file), by devN, or by the path the array knows. */
/* FILE@N (partition N of FILE) as the daemon names it: FILE resolved. */
static bool ctl_partition_realpath(const char *name, char *out, size_t outlen)
{
	char file_part[PATH_MAX], real[PATH_MAX];
	unsigned number;

	if (!partition_spec_split(name, file_part, sizeof(file_part), &number) ||
	    !realpath(file_part, real))
		return false;
	return (size_t)snprintf(out, outlen, "%s@%u", real, number) < outlen;
}

static int ctl_find_member(const char *mount, const char *name, char *dev, size_t devlen)
{
	char want[PATH_MAX] = "", path[PATH_MAX + 16], attr[32];

	if (strncmp(name, "dev", 3) == 0 && name[3] && strspn(name + 3, "0123456789") == strlen(name + 3)) {
		snprintf(attr, sizeof(attr), "%s/path", name);
		if (cli_ctl_read(mount, attr, path, sizeof(path)) == 0) {
			snprintf(dev, devlen, "%s", name);
			return 0;
		}
		return -ENOENT;
	}
	if (!realpath(name, want) && !ctl_partition_realpath(name, want, sizeof(want)))
		snprintf(want, sizeof(want), "%s", name);
	/* A file removed and added again has two entries: the live one is
	 * meant, the removed one only when it is all there is. */
	int removed_match = -1;
	for (int i = 0; i < 1024; i++) {
		char state[64];
		snprintf(attr, sizeof(attr), "dev%d/path", i);
		if (cli_ctl_read(mount, attr, path, sizeof(path)) < 0)
			break;
		path[strcspn(path, "\n")] = '\0';
		if (strcmp(path, want) != 0 && strcmp(path, name) != 0)
			continue;
		snprintf(attr, sizeof(attr), "dev%d/state", i);
		if (cli_ctl_read(mount, attr, state, sizeof(state)) == 0 &&
		    strncmp(state, "removed", 7) == 0) {
			if (removed_match < 0)
				removed_match = i;
			continue;
		}
		snprintf(dev, devlen, "dev%d", i);
		return 0;
	}
	if (removed_match >= 0) {
		snprintf(dev, devlen, "dev%d", removed_match);
		return 0;
	}
	return -ENOENT;
}

/* An argument of a verb that takes no options beyond -h that looks like
 * one: a usage error, not a mount point or member to look for. A member
 * whose name begins with '-' is named ./-NAME. */
static bool ctl_option_given(int argc, char **argv)
{
	for (int i = 1; i < argc; i++)
		if (argv[i][0] == '-' && argv[i][1] != '\0')
			return true;
	return false;
}

/* A control write refused with EROFS: the mount is read-only. */
static void ctl_say_read_only(const char *verb, const char *mount)
{
	cli_error(verb, "%s is mounted read-only (--readonly or -o ro): its members cannot change",
	          mount);
}

static int ctl_member_verb(const char *verb, const char *action, int argc, char **argv)
{
	char dev[32], attr[64];

	if (argc != 3 || ctl_help_asked(argc, argv) || ctl_option_given(argc, argv)) {
		bool help = ctl_help_asked(argc, argv);
		fprintf(help ? stdout : stderr, "Usage: raidfuse %s MOUNTPOINT MEMBER\n"
		        "MEMBER is the member's path or devN (see MOUNTPOINT/.raidfuse/).\n", verb);
		return help ? CLI_EXIT_OK : CLI_EXIT_USAGE;
	}
	if (!ctl_is_mount(verb, argv[1]))
		return CLI_EXIT_ERROR;
	if (ctl_find_member(argv[1], argv[2], dev, sizeof(dev)) < 0) {
		cli_error(verb, "%s is not a member of the array mounted at %s", argv[2], argv[1]);
		return CLI_EXIT_ERROR;
	}
	snprintf(attr, sizeof(attr), "%s/state", dev);
	int rc = ctl_write(argv[1], attr, action);
	if (rc == -EBUSY)
		cli_error(verb, "%s: refused: %s", argv[2],
		          strcmp(action, "faulty") == 0 ?
		                  "the array cannot run without it (no redundancy left)" :
		                  "it is in sync or being rebuilt; fail it first");
	else if (rc == -EINVAL && strcmp(action, "faulty") == 0) {
		/* Only a member serving a role (or being rebuilt for one)
		 * can be failed: say what this one is instead. */
		char state[64] = "";
		cli_ctl_read(argv[1], attr, state, sizeof(state));
		state[strcspn(state, "\n")] = '\0';
		if (strncmp(state, "removed", 7) == 0)
			cli_error(verb, "%s: refused: it was removed from the array already",
			          argv[2]);
		else
			cli_error(verb, "%s: refused: it is %s, not serving a role (%s/.raidfuse/%s); "
			          "remove it instead", argv[2], state[0] ? state : "not in the array",
			          argv[1], attr);
	} else if (rc == -EROFS)
		ctl_say_read_only(verb, argv[1]);
	else if (rc < 0)
		cli_error(verb, "%s: %s", argv[2], strerror(-rc));
	return rc < 0 ? CLI_EXIT_ERROR : CLI_EXIT_OK;
}

/* The daemon's last log line (time stamp and all) into out, or "". */
static void ctl_last_log_line(const char *mount, char *out, size_t outlen)
{
	static char log[65536];
	out[0] = '\0';
	if (cli_ctl_read(mount, "log", log, sizeof(log)) < 0 || !log[0])
		return;
	size_t n = strlen(log);
	if (log[n - 1] == '\n')
		log[--n] = '\0';
	const char *last = strrchr(log, '\n');
	snprintf(out, outlen, "%s", last ? last + 1 : log);
}

/* A refused control write: the daemon logs why, unless it refused before
 * getting that far (a path too long to take, say); then the write's own
 * error is all there is, and an older line would mislead. */
static void ctl_report_refusal(const char *verb, const char *mount, const char *line_before,
                               int write_rc)
{
	char line[4096];
	ctl_last_log_line(mount, line, sizeof(line));
	if (write_rc == -EROFS) {
		ctl_say_read_only(verb, mount);
		return;
	}
	if (!line[0] || strcmp(line, line_before) == 0) {
		cli_error(verb, "the array refused it: %s", strerror(-write_rc));
		return;
	}
	const char *msg = strchr(line, ' '); /* after the time stamp */
	cli_error(verb, "%s", msg ? msg + 1 : line);
}

/* Write text to the control file name; on a refusal, say why. 0 or
 * -errno. */
static int ctl_write_or_report(const char *verb, const char *mount, const char *name,
                               const char *text)
{
	char line_before[4096];
	ctl_last_log_line(mount, line_before, sizeof(line_before));
	int rc = ctl_write(mount, name, text);
	if (rc < 0)
		ctl_report_refusal(verb, mount, line_before, rc);
	return rc;
}

/* path with its folder made absolute: the daemon runs from /. */
static int ctl_absolute(const char *path, char *out, size_t outlen)
{
	char *resolved = member_resolve_path(path);
	if (!resolved)
		return -ENOMEM;
	/* The daemon takes no path it could not open. */
	bool too_long = strlen(resolved) >= PATH_MAX;
	snprintf(out, outlen, "%s", resolved);
	free(resolved);
	if (too_long)
		return -ENAMETOOLONG;
	return out[0] == '/' ? 0 : -ENOENT;
}

int cmd_add(int argc, char **argv)
{
	char abs_path[PATH_MAX * 2];

	if (argc != 3 || ctl_help_asked(argc, argv) || ctl_option_given(argc, argv)) {
		bool help = ctl_help_asked(argc, argv);
		fprintf(help ? stdout : stderr,
		        "Usage: raidfuse add MOUNTPOINT MEMBER\n"
		        "Adds MEMBER (a file or block device at least as large as the others):\n"
		        "it replaces a missing member and is rebuilt in the background, or\n"
		        "becomes a spare that takes over when a member fails.\n");
		return help ? CLI_EXIT_OK : CLI_EXIT_USAGE;
	}
	if (!ctl_is_mount("add", argv[1]))
		return CLI_EXIT_ERROR;
	int rc = ctl_absolute(argv[2], abs_path, sizeof(abs_path));
	if (rc < 0) {
		cli_error("add", "%s: %s", argv[2], strerror(-rc));
		return CLI_EXIT_ERROR;
	}
	if (ctl_write_or_report("add", argv[1], "new_dev", abs_path) < 0)
		return CLI_EXIT_ERROR;
	return CLI_EXIT_OK;
}

int cmd_replace(int argc, char **argv)
{
	char abs_path[PATH_MAX * 2], dev[32], attr[64];

	if (argc != 4 || ctl_help_asked(argc, argv) || ctl_option_given(argc, argv)) {
		bool help = ctl_help_asked(argc, argv);
		fprintf(help ? stdout : stderr,
		        "Usage: raidfuse replace MOUNTPOINT OLD NEW\n"
		        "Copies OLD's role onto NEW while OLD keeps serving (md's\n"
		        "want_replacement); then NEW takes the role and OLD is faulty.\n");
		return help ? CLI_EXIT_OK : CLI_EXIT_USAGE;
	}
	if (!ctl_is_mount("replace", argv[1]))
		return CLI_EXIT_ERROR;
	if (ctl_find_member(argv[1], argv[2], dev, sizeof(dev)) < 0) {
		cli_error("replace", "%s is not a member of the array mounted at %s", argv[2],
		          argv[1]);
		return CLI_EXIT_ERROR;
	}
	int rc = ctl_absolute(argv[3], abs_path, sizeof(abs_path));
	if (rc < 0) {
		cli_error("replace", "%s: %s", argv[3], strerror(-rc));
		return CLI_EXIT_ERROR;
	}
	snprintf(attr, sizeof(attr), "%s/replace_with", dev);
	if (ctl_write_or_report("replace", argv[1], attr, abs_path) < 0)
		return CLI_EXIT_ERROR;
	return CLI_EXIT_OK;
}

int cmd_fail(int argc, char **argv)
{
	return ctl_member_verb("fail", "faulty", argc, argv);
}

int cmd_remove(int argc, char **argv)
{
	return ctl_member_verb("remove", "remove", argc, argv);
}

static int ctl_sync_verb(const char *verb, int argc, char **argv)
{
	if (argc != 2 || ctl_help_asked(argc, argv) || ctl_option_given(argc, argv)) {
		bool help = ctl_help_asked(argc, argv);
		fprintf(help ? stdout : stderr,
		        "Usage: raidfuse %s MOUNTPOINT\nStarts md's \"%s\" in the background; "
		        "'raidfuse wait MOUNTPOINT' follows it.\n", verb, verb);
		return help ? CLI_EXIT_OK : CLI_EXIT_USAGE;
	}
	if (!ctl_is_mount(verb, argv[1]))
		return CLI_EXIT_ERROR;
	int rc = ctl_write(argv[1], "sync_action", verb);
	if (rc < 0) {
		cli_error(verb, "%s: %s", argv[1],
		          /* EBUSY also while a rebuild or replace copies: the
		           * sync thread runs one action at a time. */
		          rc == -EBUSY ? "another check, repair or rebuild is running" :
		          rc == -ENODEV ? "the array is degraded with no redundancy left: nothing "
		                          "to compare against" :
		          rc == -EOPNOTSUPP ? "this level has no redundancy to check" :
		          rc == -EROFS ? "mounted read-only (--readonly or -o ro), where the "
		                         "control files cannot be written; unmount it and run "
		                         "raidfuse verify, which checks without writing" :
		                               strerror(-rc));
		return CLI_EXIT_ERROR;
	}
	return CLI_EXIT_OK;
}

int cmd_check(int argc, char **argv)
{
	return ctl_sync_verb("check", argc, argv);
}

int cmd_repair(int argc, char **argv)
{
	return ctl_sync_verb("repair", argc, argv);
}

static double ctl_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int cmd_wait(int argc, char **argv)
{
	char action[64], completed[64], mismatch[64], base_action[64] = "";
	char result[128] = "done\n";
	bool tty = isatty(STDOUT_FILENO);
	double start = ctl_now(), last_line = 0;
	uint64_t base_done = 0; /* done at start, for this action */

	if (argc != 2 || ctl_help_asked(argc, argv) || ctl_option_given(argc, argv)) {
		bool help = ctl_help_asked(argc, argv);
		fprintf(help ? stdout : stderr, "Usage: raidfuse wait MOUNTPOINT\n"
		        "Waits until the running check, repair or rebuild ends, showing progress;\n"
		        "exits 1 if it failed or was interrupted, or if none has run since the mount.\n");
		return help ? CLI_EXIT_OK : CLI_EXIT_USAGE;
	}
	const char *mount = argv[1];
	if (!ctl_is_mount("wait", mount))
		return CLI_EXIT_ERROR;
	for (;;) {
		if (cli_ctl_read(mount, "sync_action", action, sizeof(action)) < 0 ||
		    cli_ctl_read(mount, "sync_completed", completed, sizeof(completed)) < 0) {
			cli_error("wait", "%s went away", mount);
			return CLI_EXIT_ERROR;
		}
		action[strcspn(action, "\n")] = '\0';
		if (strcmp(action, "idle") == 0) {
			/* An action that began after sync_action was read says
			 * "running" here: wait for it too. */
			if (cli_ctl_read(mount, "last_sync_result", result, sizeof(result)) < 0)
				snprintf(result, sizeof(result), "done\n");
			if (strncmp(result, "running", 7) != 0)
				break;
			continue;
		}
		uint64_t done = 0, total = 0;
		if (sscanf(completed, "%" SCNu64 " / %" SCNu64, &done, &total) == 2 && total) {
			double now = ctl_now();
			/* The speed of what was done while we watched: a wait
			 * begun halfway must not count the first half as done in
			 * no time, and a check going on to a rebuild starts the
			 * count again. */
			if (strcmp(action, base_action) != 0 || done < base_done) {
				snprintf(base_action, sizeof(base_action), "%s", action);
				base_done = done;
				start = now;
			}
			double elapsed = now - start;
			double pct = 100.0 * (double)done / (double)total;
			double mib_s = elapsed >= 1.0 ? (double)(done - base_done) / 2048.0 / elapsed : 0;
			double eta = mib_s > 0 ? (double)(total - done) / 2048.0 / mib_s : 0;
			if (tty) {
				int filled = (int)(pct / 2.5);
				/* No rate yet (the first second): dashes, not a
				 * rate of 0 and an ETA of 0 s. */
				char rate_text[24] = "   -- MiB/s", eta_text[24] = "ETA   -- s";
				if (mib_s > 0) {
					snprintf(rate_text, sizeof(rate_text), "%7.1f MiB/s", mib_s);
					snprintf(eta_text, sizeof(eta_text), "ETA %4.0f s", eta);
				}
				printf("\r%s [%-40.*s] %5.1f%% %s %s\033[K", action, filled,
				       "########################################", pct, rate_text, eta_text);
				fflush(stdout);
			} else if (now - last_line >= 2.0 && elapsed >= 1.0) {
				printf("%s: %.1f%% (%" PRIu64 "/%" PRIu64 " sectors), %.1f MiB/s, ETA %.0f s\n",
				       action, pct, done, total, mib_s, eta);
				fflush(stdout);
				last_line = now;
			}
		}
		struct timespec nap = { 0, 200 * 1000 * 1000 };
		nanosleep(&nap, NULL);
	}
	if (tty)
		printf("\r%-78s\r", "");
	cli_ctl_read(mount, "mismatch_cnt", mismatch, sizeof(mismatch));
	result[strcspn(result, "\n")] = '\0';
	/* As mdadm --wait fails when there was nothing to wait for; an action
	 * that ended before we looked still reports its result. */
	if (strcmp(result, "none") == 0) {
		cli_error("wait", "nothing to wait for: no check, repair, rebuild or resync "
		          "has run since %s was mounted", mount);
		return CLI_EXIT_ERROR;
	}
	if (strcmp(result, "done") != 0) {
		printf("%s: mismatch_cnt %s", result, mismatch);
		return CLI_EXIT_ERROR;
	}
	printf("done: mismatch_cnt %s", mismatch);
	return CLI_EXIT_OK;
}
