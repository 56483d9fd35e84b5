/* test_event_program.c - event_program.c: the program is refused at open
 * when it cannot run; events queued before the thread starts are run
 * first, in order, with mdadm's arguments (EVENT ARRAY [MEMBER]) and the
 * RAIDFUSE_* environment; a full queue drops events and says how many;
 * an event program never started runs nothing.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "event_program.h"

static char dir[64], script[128], out_path[128];
static char logged[8192];

static void capture_log(void *ctx, const char *msg)
{
	(void)ctx;
	strncat(logged, msg, sizeof(logged) - strlen(logged) - 2);
	strcat(logged, "\n");
}

static void setup(void)
{
	strcpy(dir, "/tmp/test_event_program.XXXXXX");
	cr_assert_not_null(mkdtemp(dir));
	snprintf(script, sizeof(script), "%s/prog.sh", dir);
	snprintf(out_path, sizeof(out_path), "%s/out", dir);
	FILE *f = fopen(script, "w");
	cr_assert_not_null(f);
	fprintf(f, "#!/bin/sh\necho \"$# $1 $2 ${3-} $RAIDFUSE_EVENT $RAIDFUSE_MEMBER "
	           "$RAIDFUSE_MESSAGE\" >>%s\n", out_path);
	fclose(f);
	cr_assert_eq(chmod(script, 0755), 0);
	logged[0] = '\0';
}

static void teardown(void)
{
	unlink(script);
	unlink(out_path);
	char other[160];
	snprintf(other, sizeof(other), "%s/plain", dir);
	unlink(other);
	rmdir(dir);
}

/* The lines the program wrote, or "" if it never ran. */
static char *read_out(void)
{
	static char buf[16384];
	FILE *f = fopen(out_path, "r");
	size_t n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;
	buf[n] = '\0';
	if (f)
		fclose(f);
	return buf;
}

TestSuite(event_program, .init = setup, .fini = teardown);

Test(event_program, refuses_a_program_that_cannot_run)
{
	struct event_program *ep = NULL;
	char err[256], plain[160];

	cr_assert_eq(event_program_open(&ep, "/nonexistent/prog", "/mnt", NULL, NULL, err,
	                                sizeof(err)), -ENOENT);
	cr_assert_null(ep);
	cr_assert(strstr(err, "/nonexistent/prog"), "error does not name the program: %s", err);

	snprintf(plain, sizeof(plain), "%s/plain", dir);
	FILE *f = fopen(plain, "w");
	cr_assert_not_null(f);
	fclose(f);
	cr_assert_eq(event_program_open(&ep, plain, "/mnt", NULL, NULL, err, sizeof(err)),
	             -EACCES);
	cr_assert(strstr(err, "not an executable"), "%s", err);
	cr_assert_eq(event_program_open(&ep, dir, "/mnt", NULL, NULL, err, sizeof(err)),
	             -EACCES, "a directory is not a program");
}

Test(event_program, runs_queued_events_in_order_with_mdadm_arguments)
{
	struct event_program *ep = NULL;
	char err[256];

	cr_assert_eq(event_program_open(&ep, script, "/mnt/raid", capture_log, NULL, err,
	                                sizeof(err)), 0, "%s", err);
	event_program_post(ep, "NewArray", NULL, NULL, "array mounted");
	event_program_post(ep, "Fail", "/srv/m1.img", "/srv/m1.img", "member failed");
	cr_assert_str_empty(read_out(), "nothing runs before the thread starts");
	cr_assert_eq(event_program_start(ep), 0);
	/* As mdadm: no third argument for a rebuild (the member is in the
	 * environment), a check's mismatches there when it found some. */
	event_program_post(ep, "RebuildStarted", "/srv/m4.img", NULL, "recovery started");
	event_program_post(ep, "RebuildFinished", NULL, " mismatches found: 8 (on raid level 5)",
	                   "check: done, mismatch_cnt 8");
	event_program_post(ep, "SpareActive", "/srv/m4.img", "/srv/m4.img", "in sync");
	event_program_close(ep);
	cr_assert_str_eq(read_out(),
	                 "2 NewArray /mnt/raid  NewArray  array mounted\n"
	                 "3 Fail /mnt/raid /srv/m1.img Fail /srv/m1.img member failed\n"
	                 "2 RebuildStarted /mnt/raid  RebuildStarted /srv/m4.img recovery started\n"
	                 "3 RebuildFinished /mnt/raid  mismatches found: 8 (on raid level 5) "
	                 "RebuildFinished  check: done, mismatch_cnt 8\n"
	                 "3 SpareActive /mnt/raid /srv/m4.img SpareActive /srv/m4.img in sync\n");
	cr_assert_str_empty(logged, "a program that succeeds logs nothing: %s", logged);
}

Test(event_program, a_full_queue_drops_and_says_how_many)
{
	struct event_program *ep = NULL;
	char err[256], name[16];

	cr_assert_eq(event_program_open(&ep, script, "/mnt/raid", capture_log, NULL, err,
	                                sizeof(err)), 0, "%s", err);
	for (int i = 0; i < 70; i++) {
		snprintf(name, sizeof(name), "E%d", i);
		event_program_post(ep, name, NULL, NULL, "x");
	}
	cr_assert_eq(event_program_start(ep), 0);
	event_program_close(ep);
	char *out = read_out();
	int lines = 0;
	for (char *p = out; *p; p++)
		lines += *p == '\n';
	cr_assert_eq(lines, 64, "the queue holds 64 events, %d ran", lines);
	cr_assert(strncmp(out, "2 E0 ", 5) == 0, "%s", out);
	cr_assert(strstr(out, "2 E63 /mnt/raid"), "the 64th event ran last");
	cr_assert_null(strstr(out, "E64"), "a dropped event ran");
	cr_assert(strstr(logged, "6 events dropped"), "drops not reported: %s", logged);
}

Test(event_program, never_started_runs_nothing)
{
	struct event_program *ep = NULL;
	char err[256];

	cr_assert_eq(event_program_open(&ep, script, "/mnt/raid", capture_log, NULL, err,
	                                sizeof(err)), 0, "%s", err);
	event_program_post(ep, "NewArray", NULL, NULL, "array mounted");
	event_program_close(ep); /* a mount that failed after assembly */
	cr_assert_str_empty(read_out());
	cr_assert_str_empty(logged, "%s", logged);
}
