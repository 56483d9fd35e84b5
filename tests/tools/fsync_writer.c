/* fsync_writer.c - a crash-test load for a volume: writes whose content can
 * be regenerated, fsync/fdatasync every few writes, and a log of what was
 * durable; and a checker that reads the volume back after the crash.
 *
 *   fsync_writer [-n WRITES] FILE SEED LOG     write until killed (or WRITES)
 *   fsync_writer --check [--acked] FILE LOG    check FILE against LOG
 *
 * Writer. FILE (e.g. MOUNT/volume.img) is opened O_RDWR and written with
 * pwrite(2): random offsets and sizes, a mix of 4 KiB-aligned writes (4 KiB
 * to 64 KiB, and large ones up to 512 KiB that span several RAID rows) and
 * unaligned ones (any byte offset, 1 byte to 96 KiB). Half of the writes go
 * to a small "hot" window (chosen from SEED) so that writes overlap and
 * overwrite each other often; the rest go anywhere in FILE. After every 1 to
 * 8 writes, now and then 9 to 64 (random), the writer calls fsync(2) or
 * fdatasync(2) (random).
 *
 * Every byte of write number SEQ (0, 1, 2, ...) at absolute offset OFF is a
 * function of (SEED, SEQ, OFF) only (see content_key), so the checker can
 * regenerate any part of any write, and data that landed at the wrong
 * offset, or stale data from another write, never matches by accident.
 *
 * LOG (on a normal file system, not on the volume) is opened O_APPEND and
 * holds text lines:
 *   H fsync_writer 1 SEED FILESIZE     header, once
 *   W SEQ OFF LEN                      written *before* write SEQ is issued
 *   S FIRST LAST fsync|fdatasync       written after fsync/fdatasync returned
 *                                      0: writes FIRST..LAST (every write up
 *                                      to LAST) are durable on FILE
 * LOG is fsynced after every S line. The W lines are written with a plain
 * write(2) before the pwrite to FILE: the test crashes the volume's daemon
 * and kills this process, not the machine, so whatever write(2) put in LOG
 * is there for the checker, and every write that may have reached FILE has
 * its W line. Any error from pwrite (or a short write) or from fsync ends
 * the writer with exit status 3 and no further line in LOG: a failed fsync
 * makes no promise, so no S line is written for it. After SIGUSR1 the
 * writer goes on writing but never calls fsync again (so a test can pile up
 * dirty, unsynced data before it crashes the volume).
 *
 * The rule the checker applies, for every byte B of FILE:
 *   Let W(B) be the writes in LOG whose range covers B, in sequence order,
 *   and S the last of them that is durable (SEQ <= the greatest LAST of
 *   any S line).
 *   - No durable write covers B: B is not checked (its content predates
 *     the run, or only writes that were never fsynced touched it).
 *   - No write after S covers B: B must read back exactly as written by S.
 *     This is the strict check ("the latest fsynced write of every byte
 *     not overwritten later reads back exactly").
 *   - Writes after S cover B (they were never fsynced; each may or may not
 *     have landed, wholly or in part): B must read back as written by S or
 *     by one of those later writes - never older data, never anything else
 *     ("old or new", checked byte by byte).
 * With --acked, every logged write but the last counts as durable: for a
 * volume that was stopped cleanly after the writer was killed (its
 * superblocks say clean), every write the writer saw acknowledged - all but
 * the one the kill may have cut short - must have reached it, fsynced or not.
 * Any other content is a mismatch; the checker prints each mismatching
 * range (offset, length, which write it expected, what it found: data of
 * an older write, zeros, or unknown) and exits 1. It exits 2 on usage or
 * I/O errors and on a malformed LOG, 0 when every checked byte is right,
 * printing how many bytes it checked under each rule.
 *
 * Build: cc -O2 -Wall -Wextra -o fsync_writer fsync_writer.c
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pattern.h"

#define LOG_VERSION 1
#define MAX_MISMATCH_REPORTS 12
#define CHECK_BUF (1u << 20)

static const char *prog = "fsync_writer";

static void die(int code, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(code);
}

/* ---- deterministic content ---------------------------------------------- */

/* The pattern key of write SEQ (see pattern.h). */
static uint64_t content_key(uint64_t seed, uint64_t seq)
{
	return mix64(seed ^ (seq * 0xd1b54a32d192ed03ull));
}

/* Fill BUF with the content write SEQ puts at [OFF, OFF+LEN). */
static void content_fill(unsigned char *buf, uint64_t seed, uint64_t seq, uint64_t off, size_t len)
{
	pattern_fill(buf, content_key(seed, seq), off, len);
}

/* ---- small helpers ------------------------------------------------------- */

static uint64_t rng_state;

static uint64_t rng_next(void)
{
	rng_state += 0x9e3779b97f4a7c15ull;
	return mix64(rng_state);
}

/* Uniform in [lo, hi]. */
static uint64_t rng_range(uint64_t lo, uint64_t hi)
{
	return lo + rng_next() % (hi - lo + 1);
}

static void write_all(int fd, const char *what, const char *buf, size_t len)
{
	while (len) {
		ssize_t n = write(fd, buf, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			die(2, "cannot write %s: %s", what, n < 0 ? strerror(errno) : "short write");
		buf += n;
		len -= (size_t)n;
	}
}

static void log_line(int fd, const char *fmt, ...)
{
	char line[256];
	va_list ap;

	va_start(ap, fmt);
	int n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(line))
		die(2, "log line too long");
	write_all(fd, "the log", line, (size_t)n);
}

static uint64_t file_size(int fd, const char *path)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		die(2, "cannot stat %s: %s", path, strerror(errno));
	return (uint64_t)st.st_size;
}

/* ---- writer -------------------------------------------------------------- */

static volatile sig_atomic_t no_more_syncs;

static void on_usr1(int sig)
{
	(void)sig;
	no_more_syncs = 1;
}

/* Writes until the next fsync: mostly 1-8; one time in four a burst of
 * 9-64, which fills a small stripe cache so rows are flushed and evicted
 * while the crash can strike. */
static unsigned next_sync_interval(void)
{
	return (unsigned)(rng_range(0, 3) ? rng_range(1, 8) : rng_range(9, 64));
}

static int run_writer(const char *path, uint64_t seed, const char *log_path, uint64_t max_writes)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGUSR1, &sa, NULL);

	int fd = open(path, O_RDWR);
	if (fd < 0)
		die(2, "cannot open %s: %s", path, strerror(errno));
	uint64_t size = file_size(fd, path);
	if (size < (1u << 20))
		die(2, "%s is only %" PRIu64 " bytes; need at least 1 MiB", path, size);
	int lfd = open(log_path, O_WRONLY | O_CREAT | O_APPEND | O_TRUNC, 0644);
	if (lfd < 0)
		die(2, "cannot open log %s: %s", log_path, strerror(errno));
	log_line(lfd, "H fsync_writer %d %" PRIu64 " %" PRIu64 "\n", LOG_VERSION, seed, size);
	if (fsync(lfd) < 0)
		die(2, "cannot fsync the log: %s", strerror(errno));

	rng_state = seed ^ 0x5eed5eed5eedull;
	/* The hot window: 4 MiB (or the whole file if smaller), 4 KiB aligned. */
	uint64_t hot_len = size < (4u << 20) ? size : (4u << 20);
	uint64_t hot_off = (rng_next() % (size - hot_len + 1)) & ~4095ull;
	const size_t max_len = 512u << 10;
	unsigned char *buf = malloc(max_len);
	if (!buf)
		die(2, "out of memory");

	uint64_t seq = 0, first_unsynced = 0;
	unsigned until_sync = next_sync_interval();
	while (max_writes == 0 || seq < max_writes) {
		uint64_t base = 0, span = size;
		if (rng_next() & 1) {
			base = hot_off;
			span = hot_len;
		}
		uint64_t off, len;
		unsigned kind = (unsigned)rng_range(0, 9);
		if (kind < 4) { /* 4 KiB aligned, 4-64 KiB */
			len = rng_range(1, 16) * 4096;
		} else if (kind < 6) { /* 4 KiB aligned, large: several rows */
			len = rng_range(17, max_len / 4096) * 4096;
		} else { /* unaligned: any offset, any length */
			len = rng_range(1, 96 * 1024);
		}
		if (len > span)
			len = span;
		off = base + rng_range(0, span - len);
		if (kind < 6)
			off &= ~4095ull;
		content_fill(buf, seed, seq, off, (size_t)len);
		log_line(lfd, "W %" PRIu64 " %" PRIu64 " %" PRIu64 "\n", seq, off, len);
		size_t done = 0;
		while (done < len) {
			ssize_t n = pwrite(fd, buf + done, (size_t)len - done, (off_t)(off + done));
			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0) {
				fprintf(stderr, "%s: pwrite of write %" PRIu64 " (%" PRIu64 " bytes at %" PRIu64
				        ") failed: %s\n", prog, seq, len, off,
				        n < 0 ? strerror(errno) : "wrote nothing");
				return 3;
			}
			done += (size_t)n;
		}
		seq++;
		if (no_more_syncs)
			continue;
		if (--until_sync == 0 || (max_writes && seq == max_writes)) {
			bool data = rng_next() & 1;
			int rc;
			do
				rc = data ? fdatasync(fd) : fsync(fd);
			while (rc < 0 && errno == EINTR);
			if (rc < 0) {
				fprintf(stderr, "%s: %s after write %" PRIu64 " failed: %s\n", prog,
				        data ? "fdatasync" : "fsync", seq - 1, strerror(errno));
				return 3;
			}
			log_line(lfd, "S %" PRIu64 " %" PRIu64 " %s\n", first_unsynced, seq - 1,
			         data ? "fdatasync" : "fsync");
			if (fsync(lfd) < 0)
				die(2, "cannot fsync the log: %s", strerror(errno));
			first_unsynced = seq;
			until_sync = next_sync_interval();
		}
	}
	free(buf);
	close(fd);
	close(lfd);
	return 0;
}

/* ---- checker ------------------------------------------------------------- */

struct wrec {
	uint64_t off, len;
};

struct event {
	uint64_t pos;
	uint64_t seq;
	int start; /* 1: the write starts here, 0: it ends here */
};

static int event_cmp(const void *pa, const void *pb)
{
	const struct event *a = pa, *b = pb;

	if (a->pos != b->pos)
		return a->pos < b->pos ? -1 : 1;
	if (a->start != b->start)
		return a->start - b->start; /* ends before starts */
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

struct check_state {
	int fd;
	const char *path;
	uint64_t seed;
	struct wrec *w;
	uint64_t nr_w;
	int64_t last_synced;    /* greatest durable SEQ, -1: none */
	int64_t last_fsynced;   /* the same, from S lines alone (not --acked) */
	uint64_t *later;        /* scratch: room for every write */
	uint64_t strict_bytes, either_bytes, unchecked_bytes;
	uint64_t bad_bytes, bad_ranges;
	/* the mismatch range being collected */
	bool in_bad;
	uint64_t bad_start, bad_len, bad_count, bad_expect;
	char bad_found[160];
};

/* Describe what FILE holds at OFF (the N >= 1 bytes GOT, at most 16 are
 * looked at), among the writes ACTIVE covering it. */
static void describe_found(struct check_state *cs, const uint64_t *active, size_t nr_active,
                           uint64_t off, const unsigned char *got, size_t n, char *out,
                           size_t outlen)
{
	unsigned char b[16];
	size_t k;

	if (n > sizeof(b))
		n = sizeof(b);
	for (k = 0; k < nr_active; k++) {
		content_fill(b, cs->seed, active[k], off, n);
		if (memcmp(b, got, n) == 0) {
			snprintf(out, outlen, "data of write %" PRIu64 " (%s)", active[k],
			         active[k] > cs->bad_expect ? "later, not durable" : "older");
			return;
		}
	}
	for (k = 0; k < n && !got[k]; k++)
		;
	if (k == n) {
		snprintf(out, outlen, "zeros");
		return;
	}
	int used = snprintf(out, outlen, "unknown data (");
	for (k = 0; k < n && k < 8 && used > 0 && (size_t)used < outlen; k++)
		used += snprintf(out + used, outlen - (size_t)used, "%02x", got[k]);
	if (used > 0 && (size_t)used < outlen)
		snprintf(out + used, outlen - (size_t)used, "...)");
}

static void bad_flush(struct check_state *cs)
{
	if (!cs->in_bad)
		return;
	cs->bad_ranges++;
	if (cs->bad_ranges <= MAX_MISMATCH_REPORTS)
		fprintf(stderr, "%s: MISMATCH at %" PRIu64 " (+%" PRIu64 ", %" PRIu64 " bytes wrong): "
		        "expected write %" PRIu64 " (%s, %" PRIu64 " bytes at %" PRIu64 "), "
		        "found %s\n",
		        prog, cs->bad_start, cs->bad_len, cs->bad_count, cs->bad_expect,
		        (int64_t)cs->bad_expect <= cs->last_fsynced ? "fsynced" : "acknowledged",
		        cs->w[cs->bad_expect].len, cs->w[cs->bad_expect].off, cs->bad_found);
	cs->in_bad = false;
}

/* Byte OFF (GOT[0], with N bytes of the segment available from there) is
 * wrong. Wrong bytes less than BAD_GAP apart (random data matches by chance
 * now and then) make one reported range. */
#define BAD_GAP 256
static void note_bad(struct check_state *cs, uint64_t off, uint64_t expect, const uint64_t *active,
                     size_t nr_active, const unsigned char *got, size_t n)
{
	cs->bad_bytes++;
	if (cs->in_bad && off - (cs->bad_start + cs->bad_len) < BAD_GAP && cs->bad_expect == expect) {
		cs->bad_len = off + 1 - cs->bad_start;
		cs->bad_count++;
		return;
	}
	bad_flush(cs);
	cs->in_bad = true;
	cs->bad_start = off;
	cs->bad_len = 1;
	cs->bad_count = 1;
	cs->bad_expect = expect;
	describe_found(cs, active, nr_active, off, got, n, cs->bad_found, sizeof(cs->bad_found));
}

static void check_segment(struct check_state *cs, uint64_t start, uint64_t end,
                          const uint64_t *active, size_t nr_active, unsigned char *got,
                          unsigned char *exp, unsigned char *alt)
{
	int64_t s = -1;

	for (size_t k = 0; k < nr_active; k++)
		if ((int64_t)active[k] <= cs->last_synced && (int64_t)active[k] > s)
			s = (int64_t)active[k];
	if (s < 0) {
		cs->unchecked_bytes += end - start;
		return;
	}
	/* The later (never fsynced) writes covering this segment. */
	uint64_t *later = cs->later;
	size_t nr_later = 0;
	for (size_t k = 0; k < nr_active; k++)
		if ((int64_t)active[k] > s)
			later[nr_later++] = active[k];
	for (uint64_t pos = start; pos < end;) {
		size_t n = end - pos < CHECK_BUF ? (size_t)(end - pos) : CHECK_BUF;
		size_t done = 0;
		while (done < n) {
			ssize_t r = pread(cs->fd, got + done, n - done, (off_t)(pos + done));
			if (r < 0 && errno == EINTR)
				continue;
			if (r < 0)
				die(2, "cannot read %s at %" PRIu64 ": %s", cs->path, pos + done, strerror(errno));
			if (r == 0)
				die(2, "%s ends at %" PRIu64 ", before a logged write", cs->path, pos + done);
			done += (size_t)r;
		}
		content_fill(exp, cs->seed, (uint64_t)s, pos, n);
		if (nr_later == 0) {
			cs->strict_bytes += n;
			if (memcmp(got, exp, n) != 0)
				for (size_t i = 0; i < n; i++)
					if (got[i] != exp[i])
						note_bad(cs, pos + i, (uint64_t)s, active, nr_active, got + i, n - i);
		} else {
			cs->either_bytes += n;
			/* ok[i]: byte i matches S or one of the later writes. */
			unsigned char *ok = alt + CHECK_BUF;
			for (size_t i = 0; i < n; i++)
				ok[i] = got[i] == exp[i];
			for (size_t l = 0; l < nr_later; l++) {
				content_fill(alt, cs->seed, later[l], pos, n);
				for (size_t i = 0; i < n; i++)
					ok[i] |= got[i] == alt[i];
			}
			for (size_t i = 0; i < n; i++)
				if (!ok[i])
					note_bad(cs, pos + i, (uint64_t)s, active, nr_active, got + i, n - i);
		}
		pos += n;
	}
}

static int run_check(const char *path, const char *log_path, bool acked)
{
	struct check_state cs;
	FILE *lf = fopen(log_path, "r");
	char line[512];
	uint64_t size = 0, cap = 0;
	int version = 0;
	unsigned long lineno = 0;

	memset(&cs, 0, sizeof(cs));
	cs.path = path;
	cs.last_synced = -1;
	cs.last_fsynced = -1;
	if (!lf)
		die(2, "cannot open log %s: %s", log_path, strerror(errno));
	if (!fgets(line, sizeof(line), lf) ||
	    sscanf(line, "H fsync_writer %d %" SCNu64 " %" SCNu64, &version, &cs.seed, &size) != 3 ||
	    version != LOG_VERSION)
		die(2, "%s: no fsync_writer header (version %d) on the first line", log_path,
		    LOG_VERSION);
	lineno = 1;
	while (fgets(line, sizeof(line), lf)) {
		lineno++;
		size_t ll = strlen(line);
		if (ll == 0 || line[ll - 1] != '\n') {
			/* A last line cut short by the kill: the writer died before it
			 * issued anything this line would describe. */
			if (feof(lf))
				break;
			die(2, "%s:%lu: line too long", log_path, lineno);
		}
		uint64_t a, b, c;
		char kind[16];
		if (line[0] == 'W' && sscanf(line, "W %" SCNu64 " %" SCNu64 " %" SCNu64, &a, &b, &c) == 3) {
			if (a != cs.nr_w)
				die(2, "%s:%lu: write %" PRIu64 " out of sequence (expected %" PRIu64 ")",
				    log_path, lineno, a, cs.nr_w);
			if (c == 0 || b + c > size || b + c < b)
				die(2, "%s:%lu: write %" PRIu64 " outside the file", log_path, lineno, a);
			if (cs.nr_w == cap) {
				cap = cap ? 2 * cap : 1024;
				cs.w = realloc(cs.w, cap * sizeof(*cs.w));
				if (!cs.w)
					die(2, "out of memory");
			}
			cs.w[cs.nr_w].off = b;
			cs.w[cs.nr_w].len = c;
			cs.nr_w++;
		} else if (line[0] == 'S' &&
		           sscanf(line, "S %" SCNu64 " %" SCNu64 " %15s", &a, &b, kind) == 3) {
			if (b >= cs.nr_w || a > b || (int64_t)a != cs.last_synced + 1)
				die(2, "%s:%lu: sync record for writes %" PRIu64 "..%" PRIu64
				    " does not follow the writes logged", log_path, lineno, a, b);
			cs.last_synced = (int64_t)b;
		} else {
			die(2, "%s:%lu: malformed line: %s", log_path, lineno, line);
		}
	}
	fclose(lf);
	cs.last_fsynced = cs.last_synced;
	if (acked && (int64_t)cs.nr_w - 2 > cs.last_synced)
		cs.last_synced = (int64_t)cs.nr_w - 2;

	cs.fd = open(path, O_RDONLY);
	if (cs.fd < 0)
		die(2, "cannot open %s: %s", path, strerror(errno));
	uint64_t now_size = file_size(cs.fd, path);
	if (now_size != size)
		die(1, "MISMATCH: %s is %" PRIu64 " bytes, the log says %" PRIu64, path, now_size, size);

	struct event *ev = malloc((cs.nr_w ? cs.nr_w : 1) * 2 * sizeof(*ev));
	uint64_t *active = malloc((cs.nr_w ? cs.nr_w : 1) * sizeof(*active));
	size_t *where = malloc((cs.nr_w ? cs.nr_w : 1) * sizeof(*where));
	unsigned char *got = malloc(CHECK_BUF), *exp = malloc(CHECK_BUF);
	unsigned char *alt = malloc(2 * (size_t)CHECK_BUF);
	cs.later = malloc((cs.nr_w ? cs.nr_w : 1) * sizeof(*cs.later));
	if (!ev || !active || !where || !got || !exp || !alt || !cs.later)
		die(2, "out of memory");
	for (uint64_t i = 0; i < cs.nr_w; i++) {
		ev[2 * i] = (struct event){ cs.w[i].off, i, 1 };
		ev[2 * i + 1] = (struct event){ cs.w[i].off + cs.w[i].len, i, 0 };
	}
	qsort(ev, (size_t)(2 * cs.nr_w), sizeof(*ev), event_cmp);
	/* Sweep: between consecutive event positions the set of writes covering
	 * every byte is the same. */
	size_t nr_active = 0;
	for (uint64_t e = 0; e < 2 * cs.nr_w; e++) {
		if (e > 0 && nr_active > 0 && ev[e].pos > ev[e - 1].pos)
			check_segment(&cs, ev[e - 1].pos, ev[e].pos, active, nr_active, got, exp, alt);
		uint64_t q = ev[e].seq;
		if (ev[e].start) {
			where[q] = nr_active;
			active[nr_active++] = q;
		} else {
			size_t at = where[q];
			active[at] = active[--nr_active];
			where[active[at]] = at;
		}
	}
	bad_flush(&cs);
	close(cs.fd);

	printf("%s: %" PRIu64 " writes logged, %" PRId64 " durable%s; bytes checked exactly: %" PRIu64
	       ", old-or-new: %" PRIu64 ", unchecked (never durably written): %" PRIu64 "\n",
	       prog, cs.nr_w, cs.last_synced + 1, acked ? " (or acknowledged)" : "", cs.strict_bytes, cs.either_bytes,
	       cs.unchecked_bytes);
	fflush(stdout);
	free(ev);
	free(active);
	free(where);
	free(got);
	free(exp);
	free(alt);
	free(cs.w);
	free(cs.later);
	if (cs.bad_bytes) {
		fprintf(stderr, "%s: FAIL: %" PRIu64 " bytes in %" PRIu64
		        " ranges of %s differ from what the log says was durable%s\n",
		        prog, cs.bad_bytes, cs.bad_ranges, path,
		        cs.bad_ranges > MAX_MISMATCH_REPORTS ? " (first ranges shown)" : "");
		return 1;
	}
	return 0;
}

static void usage(FILE *out)
{
	fprintf(out, "Usage: %s [-n WRITES] FILE SEED LOG   write until killed (or WRITES writes)\n"
	             "       %s --check [--acked] FILE LOG  check FILE against LOG\n",
	        prog, prog);
}

int main(int argc, char **argv)
{
	if (argc == 4 && strcmp(argv[1], "--check") == 0)
		return run_check(argv[2], argv[3], false);
	if (argc == 5 && strcmp(argv[1], "--check") == 0 && strcmp(argv[2], "--acked") == 0)
		return run_check(argv[3], argv[4], true);
	uint64_t max_writes = 0;
	int a = 1;
	if (argc == 6 && strcmp(argv[1], "-n") == 0) {
		char *end;
		max_writes = strtoull(argv[2], &end, 10);
		if (*end || max_writes == 0) {
			usage(stderr);
			return 2;
		}
		a = 3;
	}
	if (argc - a != 3) {
		usage(stderr);
		return 2;
	}
	char *end;
	uint64_t seed = strtoull(argv[a + 1], &end, 0);
	if (*end || !*argv[a + 1]) {
		usage(stderr);
		return 2;
	}
	return run_writer(argv[a], seed, argv[a + 2], max_writes);
}
