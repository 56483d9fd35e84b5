/* cmd_create.c - `raidfuse create`: parse the md-like options and hand
 * them to array_create. */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "array.h"
#include "cli.h"
#include "size_parse.h"

#define CREATE_DEFAULT_CHUNK_BYTES (512u * 1024u) /* mdadm's default */

static void create_usage(FILE *out)
{
	fprintf(out,
	        "Usage: raidfuse create --level L --raid-devices N [--chunk SIZE] [--layout NAME]\n"
	        "                       [--name NAME] [--size SIZE] [--bitmap internal|none]\n"
	        "                       [--bitmap-chunk SIZE] [--metadata 1.0|1.1|1.2] [--force]\n"
	        "                       MEMBER...\n"
	        "  -l, --level L          linear (jbod), 0, 1, 10, 5 or 6\n"
	        "  -n, --raid-devices N   number of members (must match the members named)\n"
	        "  -c, --chunk SIZE       chunk size, a power of two from 4K to 1M (default 512K);\n"
	        "                         a bare number is KiB, as in mdadm\n"
	        "  -p, --layout NAME      raid5/6: left-symmetric (default), left-asymmetric,\n"
	        "                         right-symmetric, right-asymmetric, parity-first,\n"
	        "                         parity-last (ls, la, rs, ra; raid6 also the -6 forms);\n"
	        "                         raid10: n2 (default), n3, f2, o2 (nK, fK, oK copies)\n"
	        "  -N, --name NAME        array name stored in the superblock (default HOST:0)\n"
	        "  -z, --size SIZE        size of each member file; members that do not exist\n"
	        "                         are created at this size (e.g. 256M); a bare\n"
	        "                         number is KiB, as in mdadm\n"
	        "  -f, --force            overwrite members that already hold md superblocks\n"
	        "  -b, --bitmap internal|none  write-intent bitmap (default internal for\n"
	        "                         raid1/5/6/10: after an unclean stop only marked regions\n"
	        "                         resync)\n"
	        "      --bitmap-chunk SIZE  bytes one bitmap bit covers (of each member; of the\n"
	        "                         volume for raid10, as in md), a power of two from 4K\n"
	        "                         to 2G (default 64M as in mdadm, more above 512 GiB);\n"
	        "                         a bare number is KiB\n"
	        "  -e, --metadata VER     md superblock version: 1.2 (default: 4 KiB from the\n"
	        "                         start), 1.1 (at the start) or 1.0 (at the end, data\n"
	        "                         from sector 0: what bootloaders and some NAS firmwares\n"
	        "                         read)\n");
}

int cmd_create(int argc, char **argv)
{
	static const struct option long_opts[] = {
		{ "level", required_argument, NULL, 'l' },
		{ "raid-devices", required_argument, NULL, 'n' },
		{ "chunk", required_argument, NULL, 'c' },
		{ "layout", required_argument, NULL, 'p' },
		{ "name", required_argument, NULL, 'N' },
		{ "size", required_argument, NULL, 'z' },
		{ "force", no_argument, NULL, 'f' },
		{ "bitmap", required_argument, NULL, 'b' },
		{ "bitmap-chunk", required_argument, NULL, 'B' },
		{ "metadata", required_argument, NULL, 'e' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct array_create_opts opts;
	const char *level_text = NULL, *layout_text = NULL;
	uint64_t chunk_bytes = CREATE_DEFAULT_CHUNK_BYTES;
	bool chunk_given = false;
	char err[512];
	int opt;

	memset(&opts, 0, sizeof(opts));
	opts.raid_disks = -1;
	optind = 1;
	while ((opt = getopt_long(argc, argv, "l:n:c:p:N:z:fb:e:h", long_opts, NULL)) != -1) {
		switch (opt) {
		case 'l':
			level_text = optarg;
			break;
		case 'n':
			if (cli_raid_devices_arg("create", optarg, &opts.raid_disks) < 0)
				return CLI_EXIT_USAGE;
			break;
		case 'c':
			if (size_parse(optarg, 1024, &chunk_bytes) < 0 || chunk_bytes > UINT32_MAX) {
				cli_error("create", "--chunk '%s' is not a size (e.g. 64K, 1M)", optarg);
				return CLI_EXIT_USAGE;
			}
			chunk_given = true;
			break;
		case 'p':
			layout_text = optarg;
			break;
		case 'N':
			if (strlen(optarg) > 32) {
				cli_error("create", "--name '%s' is longer than md's 32 bytes", optarg);
				return CLI_EXIT_USAGE;
			}
			opts.name = optarg;
			break;
		case 'z':
			/* A bare number is KiB, as for --chunk and as in mdadm. */
			if (size_parse(optarg, 1024, &opts.member_file_bytes) < 0 ||
			    opts.member_file_bytes == 0) {
				cli_error("create", "--size '%s' is not a size (e.g. 256M, 2G)", optarg);
				return CLI_EXIT_USAGE;
			}
			break;
		case 'f':
			opts.force = true;
			break;
		case 'b': {
			bool internal;
			if (cli_bitmap_arg("create", optarg, &internal) < 0)
				return CLI_EXIT_USAGE;
			opts.want_bitmap = internal;
			opts.no_bitmap = !internal;
			break;
		}
		case 'B':
			if (cli_bitmap_chunk_arg("create", optarg, &opts.bitmap_chunk_bytes) < 0)
				return CLI_EXIT_USAGE;
			break;
		case 'e':
			/* mdadm's spellings: 1.0 or 1.00, 1.1 or 1.01, 1.2, 1.02 or
			 * default. */
			if (strcmp(optarg, "1.0") == 0 || strcmp(optarg, "1.00") == 0) {
				opts.metadata = ARRAY_METADATA_1_0;
			} else if (strcmp(optarg, "1.1") == 0 || strcmp(optarg, "1.01") == 0) {
				opts.metadata = ARRAY_METADATA_1_1;
			} else if (strcmp(optarg, "1.2") == 0 || strcmp(optarg, "1.02") == 0 ||
			           strcmp(optarg, "default") == 0) {
				opts.metadata = ARRAY_METADATA_1_2;
			} else {
				cli_error("create", "--metadata '%s': raidfuse writes md metadata 1.0, "
				          "1.1 or 1.2%s", optarg,
				          strncmp(optarg, "0.9", 3) == 0 || strcmp(optarg, "0") == 0
				                  ? " (0.90, md's legacy format, is read by mount "
				                    "--readonly but not written)" : "");
				return CLI_EXIT_USAGE;
			}
			break;
		case 'h':
			create_usage(stdout);
			return CLI_EXIT_OK;
		default:
			create_usage(stderr);
			return CLI_EXIT_USAGE;
		}
	}
	if (!level_text) {
		cli_error("create", "--level is required (linear, 0, 1, 10, 5 or 6)");
		return CLI_EXIT_USAGE;
	}
	if (md_level_parse(level_text, &opts.level) < 0 || !raid_level_find(opts.level)) {
		cli_error("create", "unknown or unsupported level '%s' (linear, 0, 1, 10, 5, 6)",
		          level_text);
		return CLI_EXIT_USAGE;
	}
	if (layout_text) {
		if (md_layout_parse(opts.level, layout_text, &opts.layout) < 0) {
			cli_error("create", "layout '%s' is not a %s layout", layout_text,
			          raid_level_find(opts.level)->name);
			return CLI_EXIT_USAGE;
		}
		opts.layout_set = true;
	}
	int nr_members = argc - optind;
	if (nr_members < 1) {
		cli_error("create", "no members named");
		create_usage(stderr);
		return CLI_EXIT_USAGE;
	}
	if (opts.raid_disks < 0) {
		cli_error("create", "--raid-devices is required");
		return CLI_EXIT_USAGE;
	}
	opts.chunk_bytes = (uint32_t)chunk_bytes;
	/* Harmless, so not refused (scripts pass one --chunk to every level),
	 * but said: mdadm refuses it for raid1. */
	if (chunk_given && !raid_level_find(opts.level)->uses_chunk)
		fprintf(stderr, "raidfuse create: warning: --chunk has no effect on %s, which has "
		                "no chunks\n",
		        raid_level_find(opts.level)->name);
	if (array_create((const char *const *)argv + optind, nr_members, &opts, err,
	                 sizeof(err)) < 0) {
		cli_error("create", "%s", err);
		return CLI_EXIT_ERROR;
	}
	/* By enum array_metadata: the default is 1.2. */
	static const char *const versions[] = { "1.2", "1.0", "1.1", "1.2" };
	_Static_assert(ARRAY_METADATA_1_2 == 3, "versions[] follows enum array_metadata");
	printf("raidfuse: created %s array of %d members, md metadata %s\n",
	       raid_level_find(opts.level)->name, nr_members, versions[opts.metadata]);
	return CLI_EXIT_OK;
}
