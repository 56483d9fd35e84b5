/* cmd_verify.c - `raidfuse verify MEMBER...`: assemble an unmounted array
 * read-only and compare every row's parity (or every mirror copy) with its
 * data, as md's "check" does; report mismatch_cnt. Nothing is written. A
 * degraded array is compared over the redundancy it has left. */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "array.h"
#include "cli.h"
#include "fs.h"
#include "member_badblocks.h"

int cmd_verify(int argc, char **argv)
{
	struct array_assemble_opts opts;
	struct raid_array *a = NULL;
	uint64_t mismatch_sectors = 0;
	char err[1024];

	static const char usage[] =
		"Usage: raidfuse verify MEMBER...\n"
		"Check parity (or mirror copies) of an unmounted array, read-only.\n"
		"Prints mismatch_cnt in sectors, as md; exits 1 when it is not 0.\n";
	int first, nr_paths;

	int args_rc = cli_member_args("verify", usage, argc, argv, &first, &nr_paths);
	if (args_rc != 0)
		return args_rc > 0 ? CLI_EXIT_OK : CLI_EXIT_USAGE;
	memset(&opts, 0, sizeof(opts));
	opts.read_only = true;
	/* Assembled even with a member missing, so that the refusal below
	 * says what verify needs rather than how to mount degraded. */
	opts.run_degraded = true;
	opts.force = true; /* nor how to start it dirty and degraded */
	opts.log = fs_log;
	if (array_assemble(&a, (const char *const *)argv + first, nr_paths, &opts, err,
	                   sizeof(err)) < 0) {
		cli_error("verify", "%s", err);
		return CLI_EXIT_ERROR;
	}
	/* Logged bad sectors hold no data: comparing them would report
	 * mismatches that are not there. */
	for (int i = 0; i < a->nr_members; i++) {
		uint64_t bad_bytes;
		size_t ranges = member_badblocks_count(&a->members[i], &bad_bytes);
		if (ranges) {
			cli_error("verify", "%s: md's bad block log marks %zu range(s), %" PRIu64
			          " sectors, which hold no data to compare: mount the array and "
			          "run raidfuse check on it, which rewrites them from redundancy "
			          "and empties the log (as md's check does)",
			          a->members[i].path, ranges, bad_bytes / 512);
			array_stop(a);
			return CLI_EXIT_ERROR;
		}
	}
	char missing[256];
	array_missing_text(a, missing, sizeof(missing));
	int rc = array_check(a, &mismatch_sectors);
	const char *level = a->ops->name;
	array_stop(a);
	if (rc == -ENODEV && missing[0]) {
		cli_error("verify", "the array is degraded (missing role(s) %s) with no redundancy "
		          "left: nothing to compare against", missing);
		return CLI_EXIT_ERROR;
	}
	if (rc == -EOPNOTSUPP) {
		printf("%s has no redundancy to check\n", level);
		return CLI_EXIT_OK;
	}
	if (rc < 0) {
		cli_error("verify", "check failed: %s", strerror(-rc));
		return CLI_EXIT_ERROR;
	}
	/* As md's check of a degraded array: what is left was compared. */
	if (missing[0])
		fprintf(stderr, "raidfuse verify: the array is degraded (missing role(s) %s): "
		        "compared the redundancy it has left\n", missing);
	printf("mismatch_cnt: %" PRIu64 "\n", mismatch_sectors);
	return mismatch_sectors ? CLI_EXIT_ERROR : CLI_EXIT_OK;
}
