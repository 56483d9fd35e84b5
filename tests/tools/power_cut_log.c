/* power_cut_log.c - an LD_PRELOAD library for the crash test's power-cut
 * mode. A SIGKILL of the daemon loses nothing it already handed to the
 * kernel, so it cannot show a missing fdatasync; a power cut can. This
 * library logs, in order, every write, hole punch and sync raidfuse makes
 * on the member files, so that power_cut_replay.py can rebuild the members
 * as a power cut at the kill could have left them: with what a sync made
 * durable, and any cut of the rest.
 *
 * Environment: POWER_CUT_LOG (the log; nothing is logged without it) and
 * POWER_CUT_PREFIX (only files whose path starts with it are logged).
 *
 * Record: "PC", type, mode byte, path length (u32), sequence number,
 * offset, length (u64, native order), then the path and, for W, the bytes.
 *   W  a write, logged before it is issued (a new sequence number);
 *   C  that write returned having written something (its W's number;
 *      length: the bytes it wrote, fewer than W's for a short write;
 *      mode 1: it was an RWF_DSYNC write, durable by itself);
 *   B  an fdatasync or fsync of the file begins (a new number);
 *   S  that sync returned 0 (its B's number): every write whose C came
 *      before its B is durable;
 *   Z  fallocate (mode: its low 8 bits), logged before it is issued; a C
 *      with its number follows when it returned 0.
 * A write that returns while a sync runs may or may not be covered by it;
 * B and C together let the replay count only what surely is. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

struct power_cut_record {
	char magic[2];
	char type;
	unsigned char mode;
	uint32_t path_len;
	uint64_t seq;
	uint64_t offset_bytes;
	uint64_t len_bytes;
};

static int log_fd = -1;
static const char *path_prefix;
static uint64_t next_seq; /* under log_lock */
static pthread_once_t log_once = PTHREAD_ONCE_INIT;

static void log_open(void)
{
	const char *log_path = getenv("POWER_CUT_LOG");
	if (!log_path)
		return;
	path_prefix = getenv("POWER_CUT_PREFIX");
	log_fd = open(log_path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	if (log_fd < 0) {
		fprintf(stderr, "power_cut_log: cannot open %s: %s\n", log_path, strerror(errno));
		abort();
	}
}

/* The path of FD when it is one to log, else -1. */
static int logged_path(int fd, char *path, size_t size)
{
	pthread_once(&log_once, log_open);
	if (log_fd < 0)
		return -1;
	char link[64];
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	ssize_t len = readlink(link, path, size - 1);
	if (len <= 0)
		return -1;
	path[len] = '\0';
	if (path_prefix && strncmp(path, path_prefix, strlen(path_prefix)) != 0)
		return -1;
	return (int)len;
}

/* Writes all of PARTS to the log. */
static void log_put(struct iovec *parts, int nr_parts)
{
	while (nr_parts > 0) {
		int batch = nr_parts < IOV_MAX ? nr_parts : IOV_MAX;
		ssize_t put = writev(log_fd, parts, batch);
		if (put < 0 && errno == EINTR)
			continue;
		if (put <= 0) {
			fprintf(stderr, "power_cut_log: cannot write the log: %s\n",
			        put < 0 ? strerror(errno) : "no progress");
			abort();
		}
		for (size_t left = (size_t)put; left > 0;) {
			size_t step = left < parts->iov_len ? left : parts->iov_len;
			parts->iov_base = (char *)parts->iov_base + step;
			parts->iov_len -= step;
			left -= step;
			if (parts->iov_len == 0) {
				parts++;
				nr_parts--;
			}
		}
		while (nr_parts > 0 && parts->iov_len == 0) {
			parts++;
			nr_parts--;
		}
	}
}

/* Appends one record. The lock keeps records whole when a write's bytes
 * take more than one writev; a log that lies would make the replay lie, so
 * a failure stops the process. errno is kept for the caller's caller. */
static uint64_t record_emit(char type, unsigned char mode, const char *path, int path_len,
                            uint64_t offset_bytes, uint64_t len_bytes, uint64_t seq,
                            const struct iovec *data, int nr_data)
{
	static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
	int saved_errno = errno;
	struct power_cut_record rec = {
		.magic = { 'P', 'C' },
		.type = type,
		.mode = mode,
		.path_len = (uint32_t)path_len,
		.offset_bytes = offset_bytes,
		.len_bytes = len_bytes,
	};
	struct iovec *parts = calloc((size_t)nr_data + 2, sizeof(*parts));
	if (!parts) {
		fprintf(stderr, "power_cut_log: out of memory\n");
		abort();
	}
	parts[0] = (struct iovec){ &rec, sizeof(rec) };
	parts[1] = (struct iovec){ (void *)path, (size_t)path_len };
	for (int i = 0; i < nr_data; i++)
		parts[2 + i] = data[i];
	pthread_mutex_lock(&log_lock);
	rec.seq = seq ? seq : ++next_seq;
	log_put(parts, nr_data + 2);
	pthread_mutex_unlock(&log_lock);
	free(parts);
	errno = saved_errno;
	return rec.seq;
}

ssize_t pwritev2(int fd, const struct iovec *iov, int iovcnt, off_t offset, int flags)
{
	static ssize_t (*real_pwritev2)(int, const struct iovec *, int, off_t, int);
	if (!real_pwritev2)
		real_pwritev2 = (ssize_t (*)(int, const struct iovec *, int, off_t, int))dlsym(
			RTLD_NEXT, "pwritev2");
	char path[PATH_MAX];
	int path_len = logged_path(fd, path, sizeof(path));
	if (path_len < 0)
		return real_pwritev2(fd, iov, iovcnt, offset, flags);
	size_t len_bytes = 0;
	for (int i = 0; i < iovcnt; i++)
		len_bytes += iov[i].iov_len;
	/* Logged whole before it is issued. A short write's C says how much
	 * it wrote: those bytes are as done as a whole write's (a sync that
	 * begins after it covers them), and the caller retries the rest as a
	 * new write, logged again. */
	uint64_t seq = record_emit('W', 0, path, path_len, (uint64_t)offset, len_bytes, 0, iov, iovcnt);
	ssize_t put = real_pwritev2(fd, iov, iovcnt, offset, flags);
	if (put > 0)
		record_emit('C', (flags & RWF_DSYNC) ? 1 : 0, path, path_len, (uint64_t)offset,
		            (uint64_t)put, seq, NULL, 0);
	return put;
}

static int sync_logged(int fd, int (*real_sync)(int))
{
	char path[PATH_MAX];
	int path_len = logged_path(fd, path, sizeof(path));
	if (path_len < 0)
		return real_sync(fd);
	uint64_t seq = record_emit('B', 0, path, path_len, 0, 0, 0, NULL, 0);
	int rc = real_sync(fd);
	if (rc == 0)
		record_emit('S', 0, path, path_len, 0, 0, seq, NULL, 0);
	return rc;
}

int fdatasync(int fd)
{
	static int (*real_fdatasync)(int);
	if (!real_fdatasync)
		real_fdatasync = (int (*)(int))dlsym(RTLD_NEXT, "fdatasync");
	return sync_logged(fd, real_fdatasync);
}

int fsync(int fd)
{
	static int (*real_fsync)(int);
	if (!real_fsync)
		real_fsync = (int (*)(int))dlsym(RTLD_NEXT, "fsync");
	return sync_logged(fd, real_fsync);
}

int fallocate(int fd, int mode, off_t offset, off_t len)
{
	static int (*real_fallocate)(int, int, off_t, off_t);
	if (!real_fallocate)
		real_fallocate = (int (*)(int, int, off_t, off_t))dlsym(RTLD_NEXT, "fallocate");
	char path[PATH_MAX];
	int path_len = logged_path(fd, path, sizeof(path));
	if (path_len < 0)
		return real_fallocate(fd, mode, offset, len);
	uint64_t seq = record_emit('Z', (unsigned char)mode, path, path_len, (uint64_t)offset,
	                           (uint64_t)len, 0, NULL, 0);
	int rc = real_fallocate(fd, mode, offset, len);
	if (rc == 0)
		record_emit('C', 0, path, path_len, (uint64_t)offset, (uint64_t)len, seq, NULL, 0);
	return rc;
}

int fallocate64(int fd, int mode, off_t offset, off_t len) __attribute__((alias("fallocate")));
