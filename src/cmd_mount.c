/* cmd_mount.c - `raidfuse mount`: check the mount point, assemble the
 * array (reporting any problem on the terminal, before daemonizing), run
 * the FUSE daemon, and stop the array cleanly when it ends. */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "array.h"
#include "cli.h"
#include "event_program.h"
#include "fs.h"
#include "member.h"

#define MOUNT_DEFAULT_THREADS 16

static void mount_usage(FILE *out)
{
	fprintf(out,
	        "Usage: raidfuse mount [OPTIONS] MEMBER... MOUNTPOINT\n"
	        "Assemble the array from its members (any order) and present it as\n"
	        "MOUNTPOINT/volume.img.\n"
	        "  -f, --foreground     stay in the foreground, log to stderr\n"
	        "  -R, --run            start the array even if members are missing (degraded)\n"
	        "      --force          start even if degraded and not stopped cleanly\n"
	        "                       (implies --run)\n"
	        "  -r, --readonly       open members read-only; volume.img is read-only\n"
	        "  -t, --threads N      FUSE worker threads (default %d)\n"
	        "      --cache-mib N    RAID5/6 stripe cache size in MiB (default %d; 0 = off:\n"
	        "                       no caching, every write goes straight to the members)\n"
	        "      --write-through  keep the cache for reads, but write each request out\n"
	        "                       before it returns\n"
	        "      --flush-age-ms N write out rows dirty for longer than N ms (default %d)\n"
	        "      --readahead N    rows to read ahead for a sequential reader (default %d;\n"
	        "                       0 = off)\n"
	        "      --page-cache     let the kernel page cache hold volume.img (default: off:\n"
	        "                       every request reaches the daemon, which README measured\n"
	        "                       faster for streaming)\n"
	        "      --direct-io      the default: bypass the kernel page cache\n"
	        "      --allow-other    let other users access the mount (needs user_allow_other)\n"
	        "      --program PROG   run PROG EVENT MOUNTPOINT [ARG] for each array event\n"
	        "                       (mdadm --monitor's names and arguments: Fail, ...)\n"
	        "      --test           send PROG a TestMessage event at mount\n"
	        "  -o OPTS              extra FUSE mount options (ro implies --readonly)\n"
	        "  -d, --debug          trace FUSE requests (implies --foreground)\n",
	        MOUNT_DEFAULT_THREADS, ARRAY_DEFAULT_CACHE_MIB, ARRAY_DEFAULT_FLUSH_AGE_MS,
	        ARRAY_DEFAULT_READAHEAD_ROWS);
}

/* A member inside the mount point would be reached through the daemon
 * itself and deadlock it. */
static int mount_check_paths(char **members, int nr_members, const char *mountpoint)
{
	char mount_real[PATH_MAX];
	struct stat st;

	if (stat(mountpoint, &st) < 0) {
		cli_error("mount", "mount point %s: %s", mountpoint, strerror(errno));
		return -errno;
	}
	if (!S_ISDIR(st.st_mode)) {
		cli_error("mount", "mount point %s is not a directory", mountpoint);
		return -ENOTDIR;
	}
	/* A second array there would hide the first, still running. */
	if (cli_is_raidfuse_mount(mountpoint)) {
		cli_error("mount", "%s is a raidfuse mount already: unmount it first (raidfuse "
		          "umount %s)",
		          mountpoint, mountpoint);
		return -EBUSY;
	}
	if (!realpath(mountpoint, mount_real)) {
		cli_error("mount", "mount point %s: %s", mountpoint, strerror(errno));
		return -errno;
	}
	for (int i = 0; i < nr_members; i++) {
		if (member_path_inside(members[i], mount_real)) {
			cli_error("mount", "member %s is inside the mount point %s; it would be "
			          "hidden by the mount and deadlock the daemon", members[i], mountpoint);
			return -EINVAL;
		}
	}
	return 0;
}

/* The event program's own troubles (a program that fails or hangs) go to
 * the array's log while the array runs, so MOUNT/.raidfuse/log shows
 * them; the lock keeps the array from being freed under a line. */
static pthread_mutex_t mount_log_lock = PTHREAD_MUTEX_INITIALIZER;
static struct raid_array *mount_log_array;

static void mount_event_log(void *ctx, const char *msg)
{
	(void)ctx;
	pthread_mutex_lock(&mount_log_lock);
	if (mount_log_array)
		array_logf(mount_log_array, "%s", msg);
	else
		fs_log(NULL, msg);
	pthread_mutex_unlock(&mount_log_lock);
}

static void mount_log_array_set(struct raid_array *a)
{
	pthread_mutex_lock(&mount_log_lock);
	mount_log_array = a;
	pthread_mutex_unlock(&mount_log_lock);
}

/* fs_run's hook once the daemon has detached: the event thread starts
 * only now, as a thread started before the fork would be gone. */
static void mount_events_start(void *ctx)
{
	if (event_program_start(ctx) < 0)
		fs_log(NULL, "cannot start the event program's thread: events will not be run");
}

static const char *long_opts_name(const struct option *opts, int val)
{
	for (; opts->name; opts++)
		if (opts->val == val)
			return opts->name;
	return "?";
}

int cmd_mount(int argc, char **argv)
{
	enum {
		OPT_FORCE = 256,
		OPT_DIRECT_IO,
		OPT_ALLOW_OTHER,
		OPT_CACHE_MIB,
		OPT_WRITE_THROUGH,
		OPT_FLUSH_AGE,
		OPT_READAHEAD,
		OPT_PAGE_CACHE,
		OPT_PROGRAM,
		OPT_TEST,
	};
	static const struct option long_opts[] = {
		{ "foreground", no_argument, NULL, 'f' },
		{ "run", no_argument, NULL, 'R' },
		{ "force", no_argument, NULL, OPT_FORCE },
		{ "readonly", no_argument, NULL, 'r' },
		{ "threads", required_argument, NULL, 't' },
		{ "direct-io", no_argument, NULL, OPT_DIRECT_IO },
		{ "page-cache", no_argument, NULL, OPT_PAGE_CACHE },
		{ "allow-other", no_argument, NULL, OPT_ALLOW_OTHER },
		{ "debug", no_argument, NULL, 'd' },
		{ "cache-mib", required_argument, NULL, OPT_CACHE_MIB },
		{ "write-through", no_argument, NULL, OPT_WRITE_THROUGH },
		{ "flush-age-ms", required_argument, NULL, OPT_FLUSH_AGE },
		{ "readahead", required_argument, NULL, OPT_READAHEAD },
		{ "program", required_argument, NULL, OPT_PROGRAM },
		{ "test", no_argument, NULL, OPT_TEST },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct array_assemble_opts aopts;
	struct fs_options fopts;
	struct raid_array *array = NULL;
	struct event_program *events = NULL;
	const char *program = NULL;
	bool test_event = false;
	char err[1024];
	int opt;

	memset(&aopts, 0, sizeof(aopts));
	memset(&fopts, 0, sizeof(fopts));
	fopts.max_threads = MOUNT_DEFAULT_THREADS;
	/* Measured (README, "Kernel page cache"): bypassing it is faster for
	 * streaming and no slower for small random reads, and the stripe
	 * cache and read-ahead do the caching in one place. */
	fopts.direct_io = true;
	array_tuning_defaults(&aopts.tuning);
	aopts.tuning_set = true;
	optind = 1;
	while ((opt = getopt_long(argc, argv, "fRrt:o:dh", long_opts, NULL)) != -1) {
		switch (opt) {
		case 'f':
			fopts.foreground = true;
			break;
		case 'R':
			aopts.run_degraded = true;
			break;
		case OPT_FORCE:
			aopts.force = true;
			aopts.run_degraded = true;
			break;
		case 'r':
			aopts.read_only = true;
			break;
		case 't': {
			char *end;
			long n = strtol(optarg, &end, 10);
			if (end == optarg || *end || n < 1 || n > 1024) {
				cli_error("mount", "--threads '%s' is not a number from 1 to 1024",
				          optarg);
				return CLI_EXIT_USAGE;
			}
			fopts.max_threads = (int)n;
			break;
		}
		case 'o': {
			/* Several -o add up, as with mount(8) and libfuse. */
			static char extra[4096];
			size_t used = strlen(extra), add = strlen(optarg);
			if (used + 1 + add >= sizeof(extra)) {
				cli_error("mount", "the mount options are too long: nothing was "
				          "changed");
				return CLI_EXIT_USAGE;
			}
			if (used)
				extra[used++] = ',';
			memcpy(extra + used, optarg, add + 1);
			fopts.extra_opts = extra;
			/* -o ro makes only the kernel's mount read-only: the
			 * daemon would still write superblocks (and resync) on
			 * the members. Take it as --readonly, as the fstab form
			 * does. */
			for (const char *p = optarg; *p;) {
				size_t n = strcspn(p, ",");
				if (n == 2 && strncmp(p, "ro", 2) == 0)
					aopts.read_only = true;
				p += n + (p[n] == ',');
			}
			break;
		}
		case OPT_CACHE_MIB:
		case OPT_FLUSH_AGE:
		case OPT_READAHEAD: {
			char *end;
			long n = strtol(optarg, &end, 10);
			if (end == optarg || *end || n < 0 || n > 1000000) {
				cli_error("mount", "--%s '%s' is not a number from 0 to 1000000",
				          long_opts_name(long_opts, opt), optarg);
				return CLI_EXIT_USAGE;
			}
			if (opt == OPT_CACHE_MIB)
				aopts.tuning.cache_bytes = (uint64_t)n << 20;
			else if (opt == OPT_FLUSH_AGE)
				aopts.tuning.flush_age_ms = (unsigned)n;
			else
				aopts.tuning.readahead_rows = (unsigned)n;
			break;
		}
		case OPT_WRITE_THROUGH:
			aopts.tuning.write_back = false;
			break;
		case OPT_DIRECT_IO:
			fopts.direct_io = true;
			break;
		case OPT_PAGE_CACHE:
			fopts.direct_io = false;
			break;
		case OPT_ALLOW_OTHER:
			fopts.allow_other = true;
			break;
		case OPT_PROGRAM:
			program = optarg;
			break;
		case OPT_TEST:
			test_event = true;
			break;
		case 'd':
			fopts.debug = true;
			fopts.foreground = true;
			break;
		case 'h':
			mount_usage(stdout);
			return CLI_EXIT_OK;
		default:
			mount_usage(stderr);
			return CLI_EXIT_USAGE;
		}
	}
	if (argc - optind < 2) {
		cli_error("mount", "name the members and then the mount point");
		mount_usage(stderr);
		return CLI_EXIT_USAGE;
	}
	int nr_members = argc - optind - 1;
	char **members = argv + optind;
	if (mount_check_paths(members, nr_members, argv[argc - 1]) < 0)
		return CLI_EXIT_ERROR;
	/* The daemon changes to / when it detaches: keep an absolute path so
	 * it can still unmount on SIGTERM. */
	char mount_real[PATH_MAX];
	if (!realpath(argv[argc - 1], mount_real)) {
		cli_error("mount", "mount point %s: %s", argv[argc - 1], strerror(errno));
		return CLI_EXIT_ERROR;
	}
	fopts.mountpoint = mount_real;
	aopts.served_dir = mount_real;
	int opts_rc = fs_check_options(&fopts);
	if (opts_rc < 0) {
		cli_error("mount", "the mount options are %s%s%s%s: nothing was changed",
		          opts_rc == -E2BIG ? "too long" : "not valid",
		          fopts.extra_opts ? " (-o " : "", fopts.extra_opts ? fopts.extra_opts : "",
		          fopts.extra_opts ? ")" : "");
		return CLI_EXIT_USAGE;
	}

	if (test_event && !program) {
		cli_error("mount", "--test sends a TestMessage to the --program: name the program");
		return CLI_EXIT_USAGE;
	}
	if (program && event_program_open(&events, program, mount_real, mount_event_log, NULL, err,
	                                  sizeof(err)) < 0) {
		cli_error("mount", "%s: nothing was changed", err);
		return CLI_EXIT_USAGE;
	}

	aopts.log = fs_log;
	if (events) {
		aopts.event = event_program_post;
		aopts.event_ctx = events;
		/* Run only once the volume is served: a mount that fails
		 * reports on the terminal, not to the program. */
		fopts.on_serving = mount_events_start;
		fopts.on_serving_ctx = events;
		char msg[PATH_MAX + 64];
		snprintf(msg, sizeof(msg), "array mounted at %s", mount_real);
		event_program_post(events, "NewArray", NULL, NULL, msg);
		if (test_event)
			event_program_post(events, "TestMessage", NULL, NULL,
			                   "a test event, asked for with --test");
	}
	int assembled = array_assemble(&array, (const char *const *)members, nr_members, &aopts,
	                               err, sizeof(err));
	if (assembled < 0) {
		cli_error("mount", "%s", err);
		event_program_close(events);
		return CLI_EXIT_ERROR;
	}
	if (array_start(array, err, sizeof(err)) < 0) {
		cli_error("mount", "%s", err);
		array_stop(array);
		event_program_close(events);
		return CLI_EXIT_ERROR;
	}
	mount_log_array_set(array);
	int rc = fs_run(array, &fopts);
	/* A second SIGTERM or SIGINT during the last flush would leave the
	 * array dirty (a resync at the next start): it stops once, cleanly. */
	signal(SIGTERM, SIG_IGN);
	signal(SIGINT, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	mount_log_array_set(NULL);
	int stop_rc = array_stop(array);
	if (stop_rc < 0)
		fs_log(NULL, "stopping the array reported an error; it stays marked dirty");
	if (events) {
		char msg[PATH_MAX + 64];
		snprintf(msg, sizeof(msg), "array at %s stopped%s", mount_real,
		         stop_rc < 0 ? " (marked dirty: it failed to stop cleanly)" : "");
		event_program_post(events, "DeviceDisappeared", NULL, NULL, msg);
		event_program_close(events);
	}
	return rc == 0 && stop_rc == 0 ? CLI_EXIT_OK : CLI_EXIT_ERROR;
}
