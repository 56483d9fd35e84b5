/* cli_args.c - argument checks the verbs share (cli.h). Apart from
 * raidfuse.c, so that tests that run a verb link without the program's
 * main. */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

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
