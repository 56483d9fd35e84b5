/* event_program.c - see event_program.h.
 *
 * The program is started with posix_spawn (no fork of a daemon holding a
 * stripe cache) and waited for by the event thread itself: nothing else
 * in the daemon starts children, and a SIGCHLD handler would be process
 * wide. A program that hangs is killed after EVENT_PROGRAM_TIMEOUT_S so
 * that later events (a second member failing) still get out.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "errmsg.h"
#include "event_program.h"

extern char **environ;

#define EVENT_QUEUE_LEN 64

struct queued_event {
	char *name;
	char *member;            /* NULL: the event concerns the whole array */
	char *disc;              /* the third argument, or NULL for none */
	char *message;
};

struct event_program {
	char *program;           /* absolute */
	char *array_name;
	void (*log)(void *ctx, const char *msg);
	void *log_ctx;

	pthread_mutex_t lock;
	pthread_cond_t wake;
	struct queued_event queue[EVENT_QUEUE_LEN];
	unsigned head, count;
	unsigned dropped;         /* since the last report */
	bool stopping;
	struct timespec drain_deadline;
	pthread_t thread;
	bool thread_running;
};

static void event_free(struct queued_event *e)
{
	free(e->name);
	free(e->member);
	free(e->disc);
	free(e->message);
	memset(e, 0, sizeof(*e));
}

static void ep_logf(struct event_program *ep, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void ep_logf(struct event_program *ep, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	if (!ep->log)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	ep->log(ep->log_ctx, msg);
}

int event_program_open(struct event_program **out, const char *program,
                       const char *array_name, void (*log)(void *ctx, const char *msg),
                       void *log_ctx, char *err, size_t errlen)
{
	char resolved[PATH_MAX];
	struct stat st;

	*out = NULL;
	if (!realpath(program, resolved))
		return errmsg_fail(-errno, err, errlen, "--program %s: %s", program,
		                   strerror(errno));
	if (stat(resolved, &st) < 0)
		return errmsg_fail(-errno, err, errlen, "--program %s: %s", program,
		                   strerror(errno));
	if (!S_ISREG(st.st_mode) || access(resolved, X_OK) < 0)
		return errmsg_fail(-EACCES, err, errlen,
		                   "--program %s: not an executable file", program);

	struct event_program *ep = calloc(1, sizeof(*ep));
	if (!ep)
		return errmsg_fail(-ENOMEM, err, errlen, "out of memory");
	ep->program = strdup(resolved);
	ep->array_name = strdup(array_name);
	if (!ep->program || !ep->array_name) {
		free(ep->program);
		free(ep->array_name);
		free(ep);
		return errmsg_fail(-ENOMEM, err, errlen, "out of memory");
	}
	ep->log = log;
	ep->log_ctx = log_ctx;
	pthread_mutex_init(&ep->lock, NULL);
	pthread_cond_init(&ep->wake, NULL);
	*out = ep;
	return 0;
}

void event_program_post(void *ctx, const char *event, const char *member, const char *disc,
                        const char *message)
{
	struct event_program *ep = ctx;
	struct queued_event e = {
		.name = strdup(event),
		.member = member ? strdup(member) : NULL,
		.disc = disc ? strdup(disc) : NULL,
		.message = strdup(message ? message : ""),
	};

	pthread_mutex_lock(&ep->lock);
	if (!e.name || !e.message || (member && !e.member) || (disc && !e.disc) ||
	    ep->count == EVENT_QUEUE_LEN ||
	    ep->stopping) {
		ep->dropped++;
		event_free(&e);
	} else {
		ep->queue[(ep->head + ep->count) % EVENT_QUEUE_LEN] = e;
		ep->count++;
		pthread_cond_signal(&ep->wake);
	}
	pthread_mutex_unlock(&ep->lock);
}

static double seconds_until(const struct timespec *deadline)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	return (double)(deadline->tv_sec - now.tv_sec) +
	       (double)(deadline->tv_nsec - now.tv_nsec) / 1e9;
}

/* The daemon's environment plus the event's RAIDFUSE_* variables. */
static char **event_environment(const struct event_program *ep, const struct queued_event *e)
{
	size_t nr_env = 0;
	while (environ && environ[nr_env])
		nr_env++;
	char **envp = calloc(nr_env + 5, sizeof(*envp));
	if (!envp)
		return NULL;
	size_t n = 0;
	for (size_t i = 0; i < nr_env; i++)
		if (strncmp(environ[i], "RAIDFUSE_", 9) != 0)
			envp[n++] = environ[i];
	const char *names[] = { "RAIDFUSE_EVENT", "RAIDFUSE_ARRAY", "RAIDFUSE_MEMBER",
	                        "RAIDFUSE_MESSAGE" };
	const char *values[] = { e->name, ep->array_name, e->member ? e->member : "",
	                         e->message };
	for (size_t i = 0; i < 4; i++) {
		size_t len = strlen(names[i]) + strlen(values[i]) + 2;
		envp[n] = malloc(len);
		if (!envp[n])
			break;
		snprintf(envp[n], len, "%s=%s", names[i], values[i]);
		n++;
	}
	envp[n] = NULL;
	return envp;
}

static void event_environment_free(char **envp)
{
	if (!envp)
		return;
	for (size_t i = 0; envp[i]; i++)
		if (strncmp(envp[i], "RAIDFUSE_", 9) == 0)
			free(envp[i]);
	free(envp);
}

/* Wait for pid, killing it once it has run for too long or the stop's
 * drain time is over. The status as waitpid gives it, or -1. */
static int event_wait(struct event_program *ep, pid_t pid, const char *event)
{
	struct timespec run_deadline;
	struct timespec nap = { 0, 20 * 1000 * 1000 };
	int status;

	clock_gettime(CLOCK_MONOTONIC, &run_deadline);
	run_deadline.tv_sec += EVENT_PROGRAM_TIMEOUT_S;
	for (;;) {
		pid_t got = waitpid(pid, &status, WNOHANG);
		if (got == pid)
			return status;
		if (got < 0 && errno != EINTR)
			return -1;
		pthread_mutex_lock(&ep->lock);
		bool drain_over = ep->stopping && seconds_until(&ep->drain_deadline) <= 0;
		pthread_mutex_unlock(&ep->lock);
		if (drain_over || seconds_until(&run_deadline) <= 0) {
			ep_logf(ep, "event program %s (%s) still runs after %s: killed", ep->program,
			        event, drain_over ? "the array stopped" : "60 seconds");
			kill(-pid, SIGKILL); /* its process group: what it started too */
			while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
				;
			return status;
		}
		nanosleep(&nap, NULL);
	}
}

static void event_run(struct event_program *ep, const struct queued_event *e)
{
	char *argv[] = { ep->program, e->name, ep->array_name, e->disc, NULL };
	posix_spawn_file_actions_t actions;
	char **envp = event_environment(ep, e);
	pid_t pid;

	if (!envp) {
		ep_logf(ep, "event program %s (%s): out of memory", ep->program, e->name);
		return;
	}
	/* No terminal to read from once detached, nor ever a volume request. */
	posix_spawn_file_actions_init(&actions);
	posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
	/* Default signals and an empty mask (the daemon ignores SIGTERM and
	 * its kin while it stops), and a process group of its own, so that
	 * a kill reaches whatever the program started too. */
	posix_spawnattr_t attr;
	sigset_t all, none;
	sigfillset(&all);
	sigemptyset(&none);
	posix_spawnattr_init(&attr);
	posix_spawnattr_setsigdefault(&attr, &all);
	posix_spawnattr_setsigmask(&attr, &none);
	posix_spawnattr_setpgroup(&attr, 0);
	posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK |
	                                POSIX_SPAWN_SETPGROUP);
	int rc = posix_spawn(&pid, ep->program, &actions, &attr, argv, envp);
	posix_spawnattr_destroy(&attr);
	posix_spawn_file_actions_destroy(&actions);
	event_environment_free(envp);
	if (rc != 0) {
		ep_logf(ep, "event program %s (%s) cannot be started: %s", ep->program, e->name,
		        strerror(rc));
		return;
	}
	int status = event_wait(ep, pid, e->name);
	if (status == -1)
		ep_logf(ep, "event program %s (%s): cannot wait for it: %s", ep->program, e->name,
		        strerror(errno));
	else if (WIFEXITED(status) && WEXITSTATUS(status) != 0)
		ep_logf(ep, "event program %s (%s) exited with status %d", ep->program, e->name,
		        WEXITSTATUS(status));
	else if (WIFSIGNALED(status) && WTERMSIG(status) != SIGKILL)
		ep_logf(ep, "event program %s (%s) ended by signal %d", ep->program, e->name,
		        WTERMSIG(status));
}

static void *event_thread_main(void *arg)
{
	struct event_program *ep = arg;

	pthread_mutex_lock(&ep->lock);
	for (;;) {
		while (ep->count == 0 && !ep->stopping)
			pthread_cond_wait(&ep->wake, &ep->lock);
		if (ep->dropped) {
			unsigned dropped = ep->dropped;
			ep->dropped = 0;
			pthread_mutex_unlock(&ep->lock);
			ep_logf(ep, "event program %s: %u events dropped (queue full)", ep->program,
			        dropped);
			pthread_mutex_lock(&ep->lock);
		}
		if (ep->count == 0 || (ep->stopping && seconds_until(&ep->drain_deadline) <= 0))
			break;
		struct queued_event e = ep->queue[ep->head];
		ep->head = (ep->head + 1) % EVENT_QUEUE_LEN;
		ep->count--;
		pthread_mutex_unlock(&ep->lock);
		event_run(ep, &e);
		event_free(&e);
		pthread_mutex_lock(&ep->lock);
	}
	pthread_mutex_unlock(&ep->lock);
	return NULL;
}

int event_program_start(struct event_program *ep)
{
	int rc = pthread_create(&ep->thread, NULL, event_thread_main, ep);
	if (rc != 0)
		return -rc;
	ep->thread_running = true;
	return 0;
}

void event_program_close(struct event_program *ep)
{
	if (!ep)
		return;
	pthread_mutex_lock(&ep->lock);
	ep->stopping = true;
	clock_gettime(CLOCK_MONOTONIC, &ep->drain_deadline);
	ep->drain_deadline.tv_sec += EVENT_PROGRAM_DRAIN_S;
	pthread_cond_signal(&ep->wake);
	pthread_mutex_unlock(&ep->lock);
	if (ep->thread_running)
		pthread_join(ep->thread, NULL);
	if (ep->count && ep->thread_running)
		ep_logf(ep, "event program %s: %u events not run (the array stopped)", ep->program,
		        ep->count);
	while (ep->count) {
		event_free(&ep->queue[ep->head]);
		ep->head = (ep->head + 1) % EVENT_QUEUE_LEN;
		ep->count--;
	}
	pthread_cond_destroy(&ep->wake);
	pthread_mutex_destroy(&ep->lock);
	free(ep->program);
	free(ep->array_name);
	free(ep);
}
