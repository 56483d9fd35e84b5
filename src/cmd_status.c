/* cmd_status.c - `raidfuse status MOUNT`: print the mounted array's status,
 * a thin client of MOUNT/.raidfuse/status. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

int cmd_status(int argc, char **argv)
{
	char path[4096], buf[8192];
	size_t got;

	if (argc != 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
		fprintf(argc == 2 ? stdout : stderr, "Usage: raidfuse status MOUNTPOINT\n");
		return argc == 2 ? CLI_EXIT_OK : CLI_EXIT_USAGE;
	}
	snprintf(path, sizeof(path), "%s/.raidfuse/status", argv[1]);
	FILE *f = fopen(path, "r");
	if (!f) {
		cli_error("status", "%s is not a raidfuse mount (cannot read %s: %s)", argv[1], path,
		          strerror(errno));
		return CLI_EXIT_ERROR;
	}
	while ((got = fread(buf, 1, sizeof(buf), f)) > 0)
		fwrite(buf, 1, got, stdout);
	fclose(f);
	return CLI_EXIT_OK;
}
