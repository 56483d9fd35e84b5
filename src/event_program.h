/* event_program.h - runs the administrator's program for array events, as
 * mdadm --monitor runs its PROGRAM: PROGRAM EVENT ARRAY [MEMBER], with
 * mdadm's event names (Fail, FailSpare, SpareActive, NewArray,
 * DegradedArray, RebuildStarted, RebuildNN, RebuildFinished,
 * DeviceDisappeared, TestMessage). Events are queued by whoever notices
 * them (engine threads, holding their locks) and run one at a time, in
 * order, by a thread of their own, so a slow program delays no I/O. */
#ifndef RAIDFUSE_EVENT_PROGRAM_H
#define RAIDFUSE_EVENT_PROGRAM_H

#include <stddef.h>

struct event_program;

/* Seconds one run of the program may take before it is killed, and how
 * long a stop waits for the queue to drain. */
#define EVENT_PROGRAM_TIMEOUT_S 60
#define EVENT_PROGRAM_DRAIN_S 10

/* Check that program names an executable file (resolved to an absolute
 * path: the daemon changes to / when it detaches) and set up the queue.
 * array_name is passed as the program's second argument (the mount
 * point). log, if set, gets a line for a program that fails. 0, or
 * -errno with err naming the problem. */
int event_program_open(struct event_program **out, const char *program,
                       const char *array_name, void (*log)(void *ctx, const char *msg),
                       void *log_ctx, char *err, size_t errlen);

/* Queue one event (the engine's array event callback). member (passed in
 * RAIDFUSE_MEMBER) and disc (the program's third argument, as mdadm's)
 * may be NULL; message is the log line that goes with the event, passed
 * in RAIDFUSE_MESSAGE. Never blocks on the program; when the queue is
 * full the event is dropped and counted. */
void event_program_post(void *ctx, const char *event, const char *member, const char *disc,
                        const char *message);

/* Start the thread that runs the queued events (after the daemon forked:
 * threads do not survive a fork). Events queued before are run first.
 * 0 or -errno. */
int event_program_start(struct event_program *ep);

/* Run what is queued (for at most EVENT_PROGRAM_DRAIN_S seconds), stop
 * the thread and free. NULL is a no-op. */
void event_program_close(struct event_program *ep);

#endif
