/* cmd_grow.c - `raidfuse grow --bitmap internal|none | --size SIZE|max
 * MEMBER...`: add or remove the write-intent bitmap of an unmounted array,
 * or let it use more of its members, as mdadm --grow does on a running
 * one. mdadm's reshape options are named and refused rather than taken
 * for unknown ones. */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "array.h"
#include "bitmap.h"
#include "cli.h"
#include "fs.h"
#include "size_parse.h"

static void grow_usage(FILE *out)
{
	fprintf(out,
	        "Usage: raidfuse grow --bitmap internal|none [--bitmap-chunk SIZE] MEMBER...\n"
	        "       raidfuse grow --size SIZE|max MEMBER...\n"
	        "       raidfuse grow --raid-devices N MEMBER...\n"
	        "Change an unmounted array as mdadm --grow does a running one. The array must\n"
	        "be clean, with every member in sync.\n"
	        "  -b, --bitmap internal|none  add a write-intent bitmap (all bits clear), or\n"
	        "                         remove it\n"
	        "      --bitmap-chunk SIZE  bytes one bit covers, a power of two from 4K to 2G\n"
	        "                         (default 64M as in mdadm, more above 512 GiB); a bare\n"
	        "                         number is KiB\n"
	        "  -z, --size SIZE|max    bytes each member gives the array (a bare number is\n"
	        "                         KiB, as in mdadm); max: all the smallest member has,\n"
	        "                         after the members grew (raid1, raid5, raid6, raid10\n"
	        "                         near/offset; metadata 1.1 and 1.2). The new room is\n"
	        "                         zeroed; the volume grows, its data stays in place\n"
	        "  -n, --raid-devices N   raid1: the number of copies; new roles wait for\n"
	        "                         members to be added, roles dropped must be empty\n"
	        "Changing the level, the chunk or the layout, or the number of members of\n"
	        "other levels (a reshape) is not supported.\n");
}

int cmd_grow(int argc, char **argv)
{
	static const struct option long_opts[] = {
		{ "bitmap", required_argument, NULL, 'b' },
		{ "bitmap-chunk", required_argument, NULL, 'B' },
		{ "help", no_argument, NULL, 'h' },
		/* mdadm --grow's reshapes, named so that the refusal is clear */
		{ "level", required_argument, NULL, 'R' },
		{ "raid-devices", required_argument, NULL, 'n' },
		{ "chunk", required_argument, NULL, 'R' },
		{ "layout", required_argument, NULL, 'R' },
		{ "size", required_argument, NULL, 'z' },
		{ "array-size", required_argument, NULL, 'R' },
		{ NULL, 0, NULL, 0 },
	};
	const char *bitmap_text = NULL, *size_text = NULL, *disks_text = NULL;
	int new_disks = 0;
	bool internal = false;
	uint64_t chunk_wanted_bytes = 0, size_wanted_bytes = 0;
	char err[1024];
	int opt, opt_index = 0;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "b:hl:n:c:p:z:", long_opts, &opt_index)) != -1) {
		switch (opt) {
		case 'b':
			if (cli_bitmap_arg("grow", optarg, &internal) < 0)
				return CLI_EXIT_USAGE;
			bitmap_text = optarg;
			break;
		case 'B':
			if (cli_bitmap_chunk_arg("grow", optarg, &chunk_wanted_bytes) < 0)
				return CLI_EXIT_USAGE;
			break;
		case 'z':
			if (strcmp(optarg, "max") != 0 &&
			    (size_parse(optarg, 1024, &size_wanted_bytes) < 0 ||
			     size_wanted_bytes == 0)) {
				cli_error("grow", "--size '%s' is not a size (e.g. 2G) or max", optarg);
				return CLI_EXIT_USAGE;
			}
			size_text = optarg;
			break;
		case 'n':
			if (cli_raid_devices_arg("grow", optarg, &new_disks) < 0)
				return CLI_EXIT_USAGE;
			disks_text = optarg;
			break;
		case 'R':
		case 'l':
		case 'c':
		case 'p':
			if (opt == 'R')
				cli_error("grow", "--%s: raidfuse cannot reshape an array (change its "
				          "level, chunk or layout)",
				          long_opts[opt_index].name);
			else
				cli_error("grow", "-%c: raidfuse cannot reshape an array (change its "
				          "level, chunk or layout)",
				          opt);
			return CLI_EXIT_USAGE;
		case 'h':
			grow_usage(stdout);
			return CLI_EXIT_OK;
		default:
			grow_usage(stderr);
			return CLI_EXIT_USAGE;
		}
	}
	int nr_changes = !!bitmap_text + !!size_text + !!disks_text;
	if (nr_changes != 1) {
		cli_error("grow", nr_changes ? "--bitmap, --size and --raid-devices: one change at "
		                               "a time"
		                             : "--bitmap internal|none, --size SIZE|max or "
		                               "--raid-devices N is required");
		grow_usage(stderr);
		return CLI_EXIT_USAGE;
	}
	if (!bitmap_text && chunk_wanted_bytes) {
		cli_error("grow", "--bitmap-chunk goes with --bitmap internal (a bitmap's chunk "
		          "follows a new size by itself)");
		return CLI_EXIT_USAGE;
	}
	if (bitmap_text && !internal && chunk_wanted_bytes) {
		cli_error("grow", "--bitmap-chunk given, but --bitmap none removes the bitmap");
		return CLI_EXIT_USAGE;
	}
	int nr_paths = argc - optind;
	if (nr_paths < 1) {
		cli_error("grow", "no members named");
		grow_usage(stderr);
		return CLI_EXIT_USAGE;
	}

	struct array_assemble_opts opts;
	struct raid_array *a = NULL;
	memset(&opts, 0, sizeof(opts));
	/* Assembled even degraded or dirty, so that the refusal says why
	 * grow needs the array whole and clean, not how to mount it. */
	opts.run_degraded = true;
	opts.force = true;
	opts.log = fs_log;
	if (array_assemble(&a, (const char *const *)argv + optind, nr_paths, &opts, err,
	                   sizeof(err)) < 0) {
		cli_error("grow", "%s", err);
		return CLI_EXIT_ERROR;
	}
	uint64_t old_array_bytes = a->geo.array_bytes, new_array_bytes = 0;
	int old_disks = a->geo.raid_disks, rc;
	if (size_text)
		rc = array_grow_size(a, size_wanted_bytes, &new_array_bytes, err, sizeof(err));
	else if (disks_text)
		rc = array_grow_raid_disks(a, new_disks, err, sizeof(err));
	else
		rc = array_grow_bitmap(a, internal, chunk_wanted_bytes, err, sizeof(err));
	uint64_t chunk_bytes = rc == 0 && a->bitmap ? bitmap_chunk_bytes(a->bitmap) : 0;
	int32_t offset = a->slot[0] ? a->slot[0]->sb.bitmap_offset : 0;
	char level[32];
	snprintf(level, sizeof(level), "%s", a->ops->name);
	/* Spares given here are rebuilt into the new roles when the array
	 * is mounted with them, as md's recovery takes spares. */
	int nr_spares = 0;
	for (int i = 0; i < a->nr_members; i++)
		nr_spares += a->members[i].state == MEMBER_SPARE;
	int stop_rc = array_stop(a);
	if (rc < 0) {
		cli_error("grow", "%s", err);
		return CLI_EXIT_ERROR;
	}
	if (stop_rc < 0) {
		cli_error("grow", "cannot close the members: %s", strerror(-stop_rc));
		return CLI_EXIT_ERROR;
	}
	int nr_waiting = new_disks - old_disks;
	if (disks_text && nr_waiting > 0 && nr_spares >= nr_waiting)
		printf("raidfuse: the %s array has %d roles now (%d before); mount it with --run "
		       "and %s rebuilt into the new role%s\n",
		       level, new_disks, old_disks, nr_waiting > 1 ? "spares are" : "a spare is",
		       nr_waiting > 1 ? "s" : "");
	else if (disks_text && nr_waiting == 1)
		printf("raidfuse: the %s array has %d roles now (%d before); role %d waits for a "
		       "member: mount it with --run and add one (raidfuse add), which is rebuilt\n",
		       level, new_disks, old_disks, old_disks);
	else if (disks_text && nr_waiting > 1) {
		char spares_text[96] = "";
		if (nr_spares)
			snprintf(spares_text, sizeof(spares_text), " (its %d spare%s take%s %d of them)",
			         nr_spares, nr_spares > 1 ? "s" : "", nr_spares > 1 ? "" : "s",
			         nr_spares);
		printf("raidfuse: the %s array has %d roles now (%d before); roles %d to %d wait for "
		       "members: mount it with --run and add them (raidfuse add), each is rebuilt%s\n",
		       level, new_disks, old_disks, old_disks, new_disks - 1, spares_text);
	} else if (disks_text)
		printf("raidfuse: the %s array has %d roles now (%d before)\n", level, new_disks,
		       old_disks);
	else if (size_text)
		printf("raidfuse: the %s array grew from %" PRIu64 " to %" PRIu64 " bytes (the new "
		       "room reads as zeros); grow the file system on it next (resize2fs)\n",
		       level, old_array_bytes, new_array_bytes);
	else if (internal)
		printf("raidfuse: added an internal bitmap to the %s array: %" PRIu64 " KiB chunks, "
		       "%" PRId32 " sectors from the superblock\n",
		       level, chunk_bytes / 1024, offset);
	else
		printf("raidfuse: removed the internal bitmap of the %s array\n", level);
	return CLI_EXIT_OK;
}
