/* cmd_examine.c - `raidfuse examine`: print members' superblocks in the
 * shape of `mdadm --examine`, so the two can be read side by side. */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "array.h"
#include "cli.h"
#include "member_badblocks.h"

static void examine_time(const char *label, uint64_t md_time)
{
	/* md keeps seconds in the low 40 bits (microseconds above). */
	time_t t = (time_t)(md_time & 0xffffffffffull);
	char text[64];
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(text, sizeof(text), "%a %b %e %H:%M:%S %Y UTC", &tm);
	printf("%15s : %s\n", label, text);
}

static void examine_sectors(const char *label, uint64_t sectors)
{
	printf("%15s : %" PRIu64 " sectors (%.2f MiB)\n", label, sectors,
	       (double)sectors / 2048.0);
}

static void examine_member(struct member *m)
{
	const struct md_super *sb = &m->sb;
	const struct raid_level_ops *ops = raid_level_find(sb->level);
	char uuid[36], layout[64];
	uint16_t role = md_super_role(sb);

	printf("%s:\n", m->path);
	printf("%15s : %08x\n", "Magic", MD_SB_MAGIC);
	printf("%15s : %s\n", "Version", m->super_090 ? "0.90.00" : member_metadata_name(m));
	if (m->super_090_big_endian)
		printf("%15s : big-endian (written by a big-endian host)\n", "Byte Order");
	/* 0.90 has no feature map, name or device UUID; mdadm calls its
	 * array UUID "UUID". */
	if (!m->super_090)
		printf("%15s : 0x%x\n", "Feature Map", sb->feature_map);
	md_uuid_format(sb->set_uuid, uuid);
	printf("%15s : %s\n", m->super_090 ? "UUID" : "Array UUID", uuid);
	if (!m->super_090)
		printf("%15s : %s\n", "Name", sb->set_name);
	examine_time("Creation Time", sb->ctime);
	printf("%15s : %s\n", "Raid Level", md_level_name(sb->level) ? md_level_name(sb->level)
	                                                              : "unknown");
	printf("%15s : %u\n", "Raid Devices", sb->raid_disks);
	putchar('\n');
	examine_sectors("Avail Dev Size", sb->data_size);
	if (ops && ops->uniform_members) {
		struct raid_geometry geo;
		void *priv = NULL;
		if (array_geometry_from_super(&geo, sb, NULL, 0) == 0 &&
		    ops->geometry_init(&geo, &priv, NULL, 0) == 0) {
			printf("%15s : %" PRIu64 " KiB\n", "Array Size", geo.array_bytes / 1024);
			ops->geometry_free(priv);
		}
		examine_sectors("Used Dev Size", sb->size);
	}
	printf("%15s : %" PRIu64 " sectors\n", "Data Offset", sb->data_offset);
	printf("%15s : %" PRIu64 " sectors\n", "Super Offset", sb->super_offset);
	if (sb->feature_map & MD_FEATURE_RECOVERY_OFFSET)
		printf("%15s : %" PRIu64 " sectors\n", "Recovery Offset", sb->recovery_offset);
	printf("%15s : %s\n", "State", sb->resync_offset == MD_RESYNC_NONE ? "clean" : "active");
	if (!m->super_090) {
		md_uuid_format(sb->device_uuid, uuid);
		printf("%15s : %s\n", "Device UUID", uuid);
	}
	if (sb->feature_map & MD_FEATURE_BITMAP_OFFSET)
		printf("%15s : %d sectors from superblock\n", "Internal Bitmap", sb->bitmap_offset);
	if (sb->bblog_size)
		printf("%15s : %u entries available at offset %" PRId32 " sectors%s\n",
		       "Bad Block Log", sb->bblog_size * 512u / 8u, sb->bblog_offset,
		       sb->feature_map & MD_FEATURE_BAD_BLOCKS ? " - bad blocks present." : "");
	uint64_t bad_bytes;
	size_t bad_ranges = member_badblocks_count(m, &bad_bytes);
	if (bad_ranges)
		printf("%15s : %zu ranges, %" PRIu64 " sectors (md's log: never read, answered "
		       "from redundancy)\n",
		       "Bad Blocks", bad_ranges, bad_bytes / 512);
	putchar('\n');
	if (sb->devflags)
		printf("%15s :%s%s\n", "Flags",
		       sb->devflags & MD_DEVFLAG_WRITE_MOSTLY ? " write-mostly" : "",
		       sb->devflags & MD_DEVFLAG_FAILFAST ? " failfast" : "");
	examine_time("Update Time", sb->utime);
	printf("%15s : %x - correct\n", "Checksum", sb->sb_csum); /* mdadm's %x */
	printf("%15s : %" PRIu64 "\n", "Events", sb->events);
	putchar('\n');
	/* As mdadm: linear has no layout, and its chunk is a rounding. */
	md_layout_name(sb->level, sb->layout, layout, sizeof(layout));
	if (sb->level == MD_LEVEL_LINEAR) {
		printf("%15s : %uK\n", "Rounding", sb->chunksize / 2);
	} else {
		if (layout[0] && strcmp(layout, "-") != 0)
			printf("%15s : %s\n", "Layout", layout);
		if (sb->chunksize)
			printf("%15s : %uK\n", "Chunk Size", sb->chunksize / 2);
	}
	putchar('\n');
	if (role < MD_ROLE_MAX)
		printf("%15s : %s device %u\n", "Device Role",
		       sb->feature_map & MD_FEATURE_REPLACEMENT ? "Replacement" : "Active", role);
	else
		printf("%15s : %s\n", "Device Role", role == MD_ROLE_FAULTY ? "faulty" : "spare");
	printf("%15s : ", "Array State");
	for (uint32_t r = 0; r < sb->raid_disks; r++) {
		char state = '.';
		for (uint32_t d = 0; d < sb->max_dev; d++)
			if (sb->dev_roles[d] == r)
				state = 'A';
		putchar(state);
	}
	printf(" ('A' == active, '.' == missing, 'R' == replacing)\n");
}

int cmd_examine(int argc, char **argv)
{
	int status = CLI_EXIT_OK;

	static const char usage[] = "Usage: raidfuse examine MEMBER...\n";
	int first, nr_paths;

	int args_rc = cli_member_args("examine", usage, argc, argv, &first, &nr_paths);
	if (args_rc != 0)
		return args_rc > 0 ? CLI_EXIT_OK : CLI_EXIT_USAGE;
	for (int i = first; i < first + nr_paths; i++) {
		struct member m;
		char err[512];

		if (member_open(&m, argv[i], true, err, sizeof(err)) < 0 ||
		    member_super_load(&m, err, sizeof(err)) < 0 ||
		    member_badblocks_load(&m, err, sizeof(err)) < 0) {
			cli_error("examine", "%s", err);
			member_close(&m);
			status = CLI_EXIT_ERROR;
			continue;
		}
		if (i > first)
			putchar('\n');
		if (m.partition_from_backup)
			fprintf(stderr, "raidfuse examine: warning: %s: the primary GPT of its disk is "
			        "damaged; the partition was found through the backup GPT\n", argv[i]);
		examine_member(&m);
		member_close(&m);
	}
	return status;
}
