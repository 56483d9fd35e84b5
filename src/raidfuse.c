/* raidfuse.c - the program's entry: dispatch to a verb, --help, --version. */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

static const struct {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *summary;
} cli_verbs[] = {
	{ "create", cmd_create, "write md 1.x superblocks: make a new array" },
	{ "examine", cmd_examine, "print the superblock of members (like mdadm --examine)" },
	{ "mount", cmd_mount, "assemble an array and present it as MOUNT/volume.img" },
	{ "umount", cmd_umount, "flush, mark clean and unmount a mounted array" },
	{ "status", cmd_status, "print a mounted array's status (mdstat-like)" },
	{ "grow", cmd_grow, "bitmap, size or raid1 copies of an unmounted array" },
	{ "verify", cmd_verify, "check parity of an unmounted array, read-only (mismatch_cnt)" },
	{ "fail", cmd_fail, "mark a member of a mounted array faulty (a drill)" },
	{ "remove", cmd_remove, "remove a faulty (or spare) member from a mounted array" },
	{ "add", cmd_add, "add a member: rebuilt into a missing role, or a spare" },
	{ "replace", cmd_replace, "copy a member onto a new one while it still serves" },
	{ "check", cmd_check, "start md's check: count parity/mirror mismatches, change nothing" },
	{ "repair", cmd_repair, "start md's repair: rewrite mismatched parity/mirrors" },
	{ "wait", cmd_wait, "wait for a check, repair or rebuild to end, with progress" },
};

void cli_error(const char *verb, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "raidfuse %s: ", verb);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static void usage(FILE *out)
{
	fprintf(out, "Usage: raidfuse VERB [OPTIONS] ARGS...\n"
	             "Software RAID in user space, in Linux md's on-disk format (metadata 1.x;\n"
	             "0.90 read-only).\n\n"
	             "Verbs:\n");
	for (size_t i = 0; i < sizeof(cli_verbs) / sizeof(cli_verbs[0]); i++)
		fprintf(out, "  %-8s %s\n", cli_verbs[i].name, cli_verbs[i].summary);
	fprintf(out, "\n'raidfuse VERB --help' describes a verb; 'raidfuse --version' prints the\n"
	             "version; see also raidfuse(8).\n"
	             "From fstab (type fuse.raidfuse), mount runs 'raidfuse M0:M1:... MOUNTPOINT\n"
	             "-o OPTIONS', with the options raidfuse(8) lists under FSTAB (run, ro,\n"
	             "cache-mib=N, ...).\n");
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return CLI_EXIT_USAGE;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
		usage(stdout);
		return CLI_EXIT_OK;
	}
	if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "-V") == 0) {
		printf("raidfuse %s\n", PACKAGE_VERSION);
		return CLI_EXIT_OK;
	}
	for (size_t i = 0; i < sizeof(cli_verbs) / sizeof(cli_verbs[0]); i++)
		if (strcmp(argv[1], cli_verbs[i].name) == 0)
			return cli_verbs[i].run(argc - 1, argv + 1);
	if (cli_is_fstab_form(argc, argv))
		return cmd_fstab_mount(argc, argv);
	fprintf(stderr, "raidfuse: unknown verb '%s'\n", argv[1]);
	usage(stderr);
	return CLI_EXIT_USAGE;
}
