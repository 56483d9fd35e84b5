/* cmd_fstab.c - `raidfuse SOURCE MOUNTPOINT -o OPTIONS`: the form mount(8)
 * runs for an fstab line of type fuse.raidfuse (through mount.fuse3):
 *
 *   /srv/m0:/srv/m1:/srv/m2  /mnt/raid  fuse.raidfuse  run,cache-mib=128  0 0
 *
 * SOURCE names the members, separated by ':'. The options are mount's own
 * words for the mount verb's flags (run, force, ro, cache-mib=N, ...);
 * what fstab and systemd use for themselves (defaults, nofail, x-...) is
 * dropped; anything else goes to FUSE as -o, which says if it is unknown.
 * Then it is `raidfuse mount`, with every check and message it has. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"

/* fstab options that mount(8), systemd or mount.fuse act on, not us. */
static bool fstab_option_is_mounts(const char *opt)
{
	static const char *const mounts_own[] = {
		"defaults", "auto", "noauto", "nofail", "_netdev", "user", "users", "nouser",
		"owner", "group", "rw",
	};
	for (size_t i = 0; i < sizeof(mounts_own) / sizeof(mounts_own[0]); i++)
		if (strcmp(opt, mounts_own[i]) == 0)
			return true;
	return strncmp(opt, "x-", 2) == 0 || strncmp(opt, "comment=", 8) == 0;
}

/* The mount verb's flag for one fstab option, with its value split off
 * into *value (NULL for a flag without one): 1 if the option is one of
 * ours, 0 if not (it goes to FUSE), -EINVAL, said, if it is ours with a
 * value it does not take or without the one it needs ("run=1", a bare
 * "cache-mib"), which FUSE would refuse as an option unknown to it. */
static int fstab_option_flag(const char *opt, const char **flag, const char **value)
{
	static const struct {
		const char *name;
		const char *flag;
		bool takes_value;
	} ours[] = {
		{ "run", "--run", false },
		{ "force", "--force", false },
		{ "ro", "--readonly", false },
		{ "readonly", "--readonly", false },
		{ "threads", "--threads", true },
		{ "cache-mib", "--cache-mib", true },
		{ "write-through", "--write-through", false },
		{ "flush-age-ms", "--flush-age-ms", true },
		{ "readahead", "--readahead", true },
		{ "page-cache", "--page-cache", false },
		{ "direct-io", "--direct-io", false },
		{ "allow_other", "--allow-other", false },
		{ "allow-other", "--allow-other", false },
		{ "program", "--program", true },
		{ "test", "--test", false },
	};
	size_t name_len = strcspn(opt, "=");

	*flag = *value = NULL;
	for (size_t i = 0; i < sizeof(ours) / sizeof(ours[0]); i++) {
		if (strlen(ours[i].name) != name_len || strncmp(opt, ours[i].name, name_len) != 0)
			continue;
		if (ours[i].takes_value && opt[name_len] != '=') {
			cli_error("mount", "fstab option '%s' takes a value (%s=VALUE)", opt,
			          ours[i].name);
			return -EINVAL;
		}
		if (!ours[i].takes_value && opt[name_len] == '=') {
			cli_error("mount", "fstab option '%s': %s takes no value", opt, ours[i].name);
			return -EINVAL;
		}
		*flag = ours[i].flag;
		if (ours[i].takes_value)
			*value = opt + name_len + 1;
		return 1;
	}
	return 0;
}

bool cli_is_fstab_form(int argc, char **argv)
{
	struct stat st;
	if (argc < 3 || argv[1][0] == '-')
		return false;
	/* A bare word that names no file (raidfuse unmount MNT, raidfuse
	 * stop MNT) is a mistyped verb, not a one-member source: fstab
	 * names members by path. */
	if (!strchr(argv[1], ':') && !strchr(argv[1], '/') && stat(argv[1], &st) < 0)
		return false;
	/* Members joined by ':' or an -o after the mount point say it is the
	 * fstab form even when the mount point is missing: the mount verb
	 * then names what is wrong instead of "unknown verb". */
	return (stat(argv[2], &st) == 0 && S_ISDIR(st.st_mode)) || strchr(argv[1], ':') ||
	       (argc >= 4 && strcmp(argv[3], "-o") == 0);
}

int cmd_fstab_mount(int argc, char **argv)
{
	const char *source = argv[1], *mountpoint = argv[2], *options = "";
	int rc = CLI_EXIT_USAGE;

	for (int i = 3; i < argc; i++) {
		if (strcmp(argv[i], "-o") == 0 && i + 1 < argc) {
			options = argv[++i];
		} else {
			cli_error("mount", "'%s': the fstab form is SOURCE MOUNTPOINT [-o OPTIONS]",
			          argv[i]);
			return CLI_EXIT_USAGE;
		}
	}
	/* Every word of source and options becomes at most one argument, and
	 * a flag with a value two. */
	size_t max_args = 4 + 2 * (strlen(source) + strlen(options) + 2);
	char **mount_argv = calloc(max_args, sizeof(*mount_argv));
	char *source_copy = strdup(source), *options_copy = strdup(options);
	char *fuse_opts = calloc(1, strlen(options) + 1);
	int n = 0;

	if (!mount_argv || !source_copy || !options_copy || !fuse_opts) {
		cli_error("mount", "out of memory");
		rc = CLI_EXIT_ERROR;
		goto out;
	}
	mount_argv[n++] = "mount";
	char *save = NULL;
	for (char *opt = strtok_r(options_copy, ",", &save); opt; opt = strtok_r(NULL, ",", &save)) {
		const char *flag, *value;
		int ours = fstab_option_flag(opt, &flag, &value);
		if (ours < 0) {
			rc = CLI_EXIT_USAGE;
			goto out;
		}
		if (ours) {
			mount_argv[n++] = (char *)flag;
			if (value)
				mount_argv[n++] = (char *)value;
		} else if (!fstab_option_is_mounts(opt)) {
			if (fuse_opts[0])
				strcat(fuse_opts, ",");
			strcat(fuse_opts, opt);
		}
	}
	if (fuse_opts[0]) {
		mount_argv[n++] = "-o";
		mount_argv[n++] = fuse_opts;
	}
	int nr_members = 0;
	for (char *member = strtok_r(source_copy, ":", &save); member;
	     member = strtok_r(NULL, ":", &save)) {
		mount_argv[n++] = member;
		nr_members++;
	}
	if (nr_members == 0 || source[0] == ':' || strstr(source, "::") ||
	    source[strlen(source) - 1] == ':') {
		cli_error("mount", "source '%s' must name the members, separated by ':' "
		          "(/srv/m0:/srv/m1:/srv/m2)", source);
		goto out;
	}
	mount_argv[n++] = (char *)mountpoint;
	rc = cmd_mount(n, mount_argv);
out:
	free(mount_argv);
	free(source_copy);
	free(options_copy);
	free(fuse_opts);
	return rc;
}
