/* cli_args.c - argument checks the verbs share (cli.h). Apart from
 * raidfuse.c, so that tests that run a verb link without the program's
 * main. */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "level.h"
#include "size_parse.h"

int cli_member_args(const char *verb, const char *usage, int argc, char **argv, int *first,
                    int *nr_paths)
{
	int nr = 0;
	bool options_end = false;

	if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
		fputs(usage, stdout);
		return 1;
	}

	for (int i = 1; i < argc; i++) {
		if (!options_end && strcmp(argv[i], "--") == 0) {
			options_end = true;
			continue;
		}
		if (!options_end && argv[i][0] == '-' && argv[i][1] != '\0') {
			cli_error(verb, "unrecognized option '%s' (a member whose name begins with "
			          "'-' goes after \"--\")", argv[i]);
			fputs(usage, stderr);
			return -EINVAL;
		}
		argv[1 + nr++] = argv[i];
	}
	if (nr == 0) {
		fputs(usage, stderr);
		return -EINVAL;
	}
	*first = 1;
	*nr_paths = nr;
	return 0;
}

int cli_bitmap_arg(const char *verb, const char *text, bool *internal)
{
	if (strcmp(text, "internal") != 0 && strcmp(text, "none") != 0) {
		cli_error(verb, "--bitmap '%s': use internal or none", text);
		return -EINVAL;
	}
	*internal = strcmp(text, "internal") == 0;
	return 0;
}

int cli_bitmap_chunk_arg(const char *verb, const char *text, uint64_t *bytes)
{
	if (size_parse(text, 1024, bytes) < 0 || *bytes == 0) {
		cli_error(verb, "--bitmap-chunk '%s' is not a size (e.g. 64M)", text);
		return -EINVAL;
	}
	return 0;
}

int cli_raid_devices_arg(const char *verb, const char *text, int *raid_disks)
{
	char *end;
	long n = strtol(text, &end, 10);

	if (*end || n < 1 || n > RAID_MAX_MEMBERS) {
		cli_error(verb, "--raid-devices '%s' is not a number from 1 to %d", text,
		          RAID_MAX_MEMBERS);
		return -EINVAL;
	}
	*raid_disks = (int)n;
	return 0;
}
