/* stress_rw.c - many threads writing and reading overlapping, unaligned
 * ranges of one file (a raidfuse volume.img), with content that stays
 * checkable: a concurrency test for the daemon's row locking, stripe cache,
 * eviction and read-ahead.
 *
 *   stress_rw [-t THREADS] [-s SECONDS] [-g REGION] [-S SEED] [-o STATE]
 *             FILE OFFSET LENGTH
 *   stress_rw --check FILE STATE
 *
 * The area [OFFSET, OFFSET+LENGTH) of FILE is cut into regions of REGION
 * bytes (default 2731: odd, so regions start at every byte alignment and
 * straddle 4 KiB pages, chunks and rows). Each region has a generation;
 * its content at generation G is a function of (SEED, region, G, absolute
 * offset), so stale data, data of a neighbour and misplaced data never
 * match. First the whole area is written at generation 1; then THREADS
 * threads (default 8), each with its own file descriptor, run for SECONDS
 * (default 10) doing random operations:
 *   - write (45%): a run of 1 to 64 consecutive regions (mostly short),
 *     every region's generation bumped, one pwrite(2) for the whole run;
 *   - checked read (35%): a run of regions read with one pread(2); every
 *     byte must be the region's current generation;
 *   - free read (15%): any byte range up to 256 KiB in the area, read with
 *     no lock and not checked (it races with the writes: it drives the
 *     stripe cache, eviction and read-ahead concurrently with them);
 *   - fsync or fdatasync (5%).
 * Writes and checked reads lock their regions (in ascending order, so the
 * program cannot deadlock itself): regions being written are never read
 * or written by another thread at the same time, but neighbouring regions,
 * which share pages, chunks and rows, are. So every checked read must see
 * exactly the latest write (read-after-write through the kernel page
 * cache, the daemon and its cache), and the final content is known. At the
 * end the whole area is read back and compared; with -o the generations
 * are saved to STATE, and `--check FILE STATE` compares the area again
 * (after an unmount and a new mount, say).
 *
 * Any I/O error, short I/O or wrong content: a message naming the region,
 * offset, expected generation and what was found (another generation of
 * that region, or unknown data), exit 1. Usage and setup errors: exit 2.
 * Prints a line of counters on success.
 *
 * Build: cc -O2 -Wall -Wextra -pthread -o stress_rw stress_rw.c
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "pattern.h"

#define MAX_RUN 64
#define FREE_READ_MAX (256u << 10)
#define STATE_VERSION 1

static const char *prog = "stress_rw";

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

/* ---- the area and its model ------------------------------------------------ */

struct area {
	const char *path;
	uint64_t seed;
	uint64_t off;           /* of region 0 */
	uint64_t region;        /* bytes per region */
	uint64_t nr;            /* regions */
	uint32_t *gen;
	pthread_mutex_t *lock;
};

/* Content of region R at generation G over [o, o+len) (absolute offsets):
 * the pattern (see pattern.h) keyed by seed, region and generation. */
static void content_fill(const struct area *a, uint64_t r, uint32_t g, unsigned char *buf,
                         uint64_t o, size_t len)
{
	pattern_fill(buf, mix64(a->seed ^ mix64((r << 32) | g)), o, len);
}

static uint64_t region_off(const struct area *a, uint64_t r)
{
	return a->off + r * a->region;
}

static void full_pwrite(int fd, const unsigned char *buf, size_t len, uint64_t off, const char *what)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n = pwrite(fd, buf + done, len - done, (off_t)(off + done));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			die(1, "%s: pwrite of %zu bytes at %" PRIu64 " failed: %s", what, len - done,
			    off + done, n < 0 ? strerror(errno) : "wrote nothing");
		done += (size_t)n;
	}
}

static void full_pread(int fd, unsigned char *buf, size_t len, uint64_t off, const char *what)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n = pread(fd, buf + done, len - done, (off_t)(off + done));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			die(1, "%s: pread of %zu bytes at %" PRIu64 " failed: %s", what, len - done,
			    off + done, n < 0 ? strerror(errno) : "end of file");
		done += (size_t)n;
	}
}

/* Compare regions [r0, r0+k) in BUF (read from their offset) with the
 * model (GEN, or a->gen when GEN is NULL); on a mismatch say what is wrong
 * and exit 1. */
static void check_run(const struct area *a, uint64_t r0, uint64_t k, const unsigned char *buf,
                      unsigned char *scratch, const char *what)
{
	for (uint64_t r = r0; r < r0 + k; r++) {
		const unsigned char *got = buf + (r - r0) * a->region;
		uint32_t g = a->gen[r];
		uint64_t o = region_off(a, r);
		content_fill(a, r, g, scratch, o, a->region);
		if (memcmp(got, scratch, a->region) == 0)
			continue;
		size_t first = 0, last = a->region - 1, nbad = 0;
		while (got[first] == scratch[first])
			first++;
		while (got[last] == scratch[last])
			last--;
		for (size_t i = first; i <= last; i++)
			nbad += got[i] != scratch[i];
		/* Which generation of this region is there instead? */
		char found[96] = "unknown data";
		size_t n = last - first + 1 < 16 ? last - first + 1 : 16;
		for (int64_t cand = (int64_t)g + 2; cand >= 0 && cand >= (int64_t)g - 64; cand--) {
			unsigned char c[16];
			if ((uint32_t)cand == g)
				continue;
			content_fill(a, r, (uint32_t)cand, c, o + first, n);
			if (memcmp(c, got + first, n) == 0) {
				snprintf(found, sizeof(found), "generation %" PRId64 " (%s)", cand,
				         cand < (int64_t)g ? "stale" : "from the future");
				break;
			}
		}
		if (strcmp(found, "unknown data") == 0) {
			size_t z = first;
			while (z <= last && got[z] == 0)
				z++;
			if (z > last)
				snprintf(found, sizeof(found), "zeros");
		}
		die(1, "%s: MISMATCH in region %" PRIu64 " (%" PRIu64 " bytes at %" PRIu64 "): bytes %"
		    PRIu64 "..%" PRIu64 " (%zu wrong) should be generation %" PRIu32
		    ", found %s at the first wrong byte", what, r, a->region, o, o + first, o + last,
		    nbad, g, found);
	}
}

/* ---- the threads ------------------------------------------------------------- */

struct counters {
	atomic_uint_fast64_t writes, checked_reads, free_reads, syncs, bytes_written, bytes_read;
};

static struct area A;
static struct counters C;
static uint64_t deadline_ns;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

struct thread_arg {
	int id;
	uint64_t rng;
};

static uint64_t trng(struct thread_arg *t)
{
	t->rng += 0x9e3779b97f4a7c15ull;
	return mix64(t->rng);
}

/* A run length: mostly 1-4 regions, sometimes up to MAX_RUN. */
static uint64_t run_len(struct thread_arg *t)
{
	uint64_t k = trng(t) % 4 ? 1 + trng(t) % 4 : 1 + trng(t) % MAX_RUN;
	return k > A.nr ? A.nr : k;
}

static void *thread_main(void *p)
{
	struct thread_arg *t = p;
	char what[32];
	int fd = open(A.path, O_RDWR);

	snprintf(what, sizeof(what), "thread %d", t->id);
	if (fd < 0)
		die(2, "%s: cannot open %s: %s", what, A.path, strerror(errno));
	size_t bufsz = MAX_RUN * A.region > FREE_READ_MAX ? MAX_RUN * A.region : FREE_READ_MAX;
	unsigned char *buf = malloc(bufsz), *scratch = malloc(A.region);
	if (!buf || !scratch)
		die(2, "out of memory");
	uint64_t ops = 0;
	for (;;) {
		if ((++ops & 15) == 0 && now_ns() >= deadline_ns)
			break;
		unsigned op = (unsigned)(trng(t) % 100);
		if (op < 80) {
			uint64_t k = run_len(t);
			uint64_t r0 = trng(t) % (A.nr - k + 1);
			uint64_t o = region_off(&A, r0);
			size_t len = (size_t)(k * A.region);
			for (uint64_t r = r0; r < r0 + k; r++)
				pthread_mutex_lock(&A.lock[r]);
			if (op < 45) {
				for (uint64_t r = r0; r < r0 + k; r++)
					content_fill(&A, r, A.gen[r] + 1, buf + (r - r0) * A.region,
					             region_off(&A, r), A.region);
				full_pwrite(fd, buf, len, o, what);
				for (uint64_t r = r0; r < r0 + k; r++)
					A.gen[r]++;
				atomic_fetch_add(&C.writes, 1);
				atomic_fetch_add(&C.bytes_written, len);
			} else {
				full_pread(fd, buf, len, o, what);
				check_run(&A, r0, k, buf, scratch, what);
				atomic_fetch_add(&C.checked_reads, 1);
				atomic_fetch_add(&C.bytes_read, len);
			}
			for (uint64_t r = r0 + k; r-- > r0;)
				pthread_mutex_unlock(&A.lock[r]);
		} else if (op < 95) {
			uint64_t span = A.nr * A.region;
			size_t len = (size_t)(1 + trng(t) % (span < FREE_READ_MAX ? span : FREE_READ_MAX));
			uint64_t o = A.off + trng(t) % (span - len + 1);
			full_pread(fd, buf, len, o, what);
			atomic_fetch_add(&C.free_reads, 1);
			atomic_fetch_add(&C.bytes_read, len);
		} else {
			int rc;
			bool data = trng(t) & 1;
			do
				rc = data ? fdatasync(fd) : fsync(fd);
			while (rc < 0 && errno == EINTR);
			if (rc < 0)
				die(1, "%s: %s failed: %s", what, data ? "fdatasync" : "fsync", strerror(errno));
			atomic_fetch_add(&C.syncs, 1);
		}
	}
	free(buf);
	free(scratch);
	close(fd);
	return NULL;
}

/* ---- whole-area passes and the state file ------------------------------------ */

#define PASS_REGIONS 256

static void write_all_regions(int fd)
{
	unsigned char *buf = malloc(PASS_REGIONS * A.region);
	if (!buf)
		die(2, "out of memory");
	for (uint64_t r0 = 0; r0 < A.nr; r0 += PASS_REGIONS) {
		uint64_t k = A.nr - r0 < PASS_REGIONS ? A.nr - r0 : PASS_REGIONS;
		for (uint64_t r = r0; r < r0 + k; r++)
			content_fill(&A, r, A.gen[r], buf + (r - r0) * A.region, region_off(&A, r), A.region);
		full_pwrite(fd, buf, (size_t)(k * A.region), region_off(&A, r0), "initial write");
	}
	free(buf);
}

static void check_all_regions(int fd, const char *what)
{
	unsigned char *buf = malloc(PASS_REGIONS * A.region), *scratch = malloc(A.region);
	if (!buf || !scratch)
		die(2, "out of memory");
	for (uint64_t r0 = 0; r0 < A.nr; r0 += PASS_REGIONS) {
		uint64_t k = A.nr - r0 < PASS_REGIONS ? A.nr - r0 : PASS_REGIONS;
		full_pread(fd, buf, (size_t)(k * A.region), region_off(&A, r0), what);
		check_run(&A, r0, k, buf, scratch, what);
	}
	free(buf);
	free(scratch);
}

static void save_state(const char *path)
{
	FILE *f = fopen(path, "w");
	if (!f)
		die(2, "cannot create %s: %s", path, strerror(errno));
	fprintf(f, "stress_rw %d %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 "\n", STATE_VERSION,
	        A.seed, A.off, A.region, A.nr);
	for (uint64_t r = 0; r < A.nr; r++)
		fprintf(f, "%" PRIu32 "\n", A.gen[r]);
	if (fflush(f) != 0 || fsync(fileno(f)) != 0 || fclose(f) != 0)
		die(2, "cannot write %s: %s", path, strerror(errno));
}

static void load_state(const char *path)
{
	FILE *f = fopen(path, "r");
	int version = 0;

	if (!f)
		die(2, "cannot open %s: %s", path, strerror(errno));
	if (fscanf(f, "stress_rw %d %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64, &version, &A.seed,
	           &A.off, &A.region, &A.nr) != 5 ||
	    version != STATE_VERSION || A.region == 0 || A.nr == 0)
		die(2, "%s: not a stress_rw state file (version %d)", path, STATE_VERSION);
	A.gen = calloc(A.nr, sizeof(*A.gen));
	if (!A.gen)
		die(2, "out of memory");
	for (uint64_t r = 0; r < A.nr; r++)
		if (fscanf(f, "%" SCNu32, &A.gen[r]) != 1)
			die(2, "%s: truncated at region %" PRIu64, path, r);
	fclose(f);
}

static uint64_t parse_u64(const char *s, const char *what)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 0);
	if (errno || end == s)
		die(2, "%s '%s' is not a number", what, s);
	switch (*end) {
	case 'k': case 'K': v <<= 10; end++; break;
	case 'm': case 'M': v <<= 20; end++; break;
	case 'g': case 'G': v <<= 30; end++; break;
	}
	if (*end)
		die(2, "%s '%s' is not a number", what, s);
	return v;
}

static void usage(FILE *out)
{
	fprintf(out,
	        "Usage: %s [-t THREADS] [-s SECONDS] [-g REGION] [-S SEED] [-o STATE] FILE OFFSET LENGTH\n"
	        "       %s --check FILE STATE\n",
	        prog, prog);
}

int main(int argc, char **argv)
{
	if (argc == 4 && strcmp(argv[1], "--check") == 0) {
		A.path = argv[2];
		load_state(argv[3]);
		int fd = open(A.path, O_RDONLY);
		if (fd < 0)
			die(2, "cannot open %s: %s", A.path, strerror(errno));
		check_all_regions(fd, "check");
		close(fd);
		printf("%s: %" PRIu64 " regions of %" PRIu64 " bytes at %" PRIu64 " read back as saved\n",
		       prog, A.nr, A.region, A.off);
		return 0;
	}
	int threads = 8, opt;
	uint64_t seconds = 10, seed = (uint64_t)time(NULL);
	const char *state = NULL;
	A.region = 2731;
	while ((opt = getopt(argc, argv, "t:s:g:S:o:h")) != -1) {
		switch (opt) {
		case 't': threads = (int)parse_u64(optarg, "-t"); break;
		case 's': seconds = parse_u64(optarg, "-s"); break;
		case 'g': A.region = parse_u64(optarg, "-g"); break;
		case 'S': seed = parse_u64(optarg, "-S"); break;
		case 'o': state = optarg; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (argc - optind != 3) {
		usage(stderr);
		return 2;
	}
	if (threads < 1 || threads > 256 || A.region == 0 || A.region > (1u << 20))
		die(2, "bad -t or -g");
	A.path = argv[optind];
	A.seed = seed;
	A.off = parse_u64(argv[optind + 1], "OFFSET");
	uint64_t length = parse_u64(argv[optind + 2], "LENGTH");
	A.nr = length / A.region;
	if (A.nr < MAX_RUN)
		die(2, "LENGTH holds only %" PRIu64 " regions; need at least %d", A.nr, MAX_RUN);

	int fd = open(A.path, O_RDWR);
	if (fd < 0)
		die(2, "cannot open %s: %s", A.path, strerror(errno));
	struct stat st;
	if (fstat(fd, &st) < 0)
		die(2, "cannot stat %s: %s", A.path, strerror(errno));
	if (A.off + A.nr * A.region > (uint64_t)st.st_size)
		die(2, "the area ends past the end of %s (%lld bytes)", A.path, (long long)st.st_size);
	A.gen = malloc(A.nr * sizeof(*A.gen));
	A.lock = malloc(A.nr * sizeof(*A.lock));
	if (!A.gen || !A.lock)
		die(2, "out of memory");
	for (uint64_t r = 0; r < A.nr; r++) {
		A.gen[r] = 1;
		pthread_mutex_init(&A.lock[r], NULL);
	}
	write_all_regions(fd);

	uint64_t t0 = now_ns();
	deadline_ns = t0 + seconds * 1000000000ull;
	pthread_t *tid = malloc((size_t)threads * sizeof(*tid));
	struct thread_arg *ta = malloc((size_t)threads * sizeof(*ta));
	if (!tid || !ta)
		die(2, "out of memory");
	for (int i = 0; i < threads; i++) {
		ta[i].id = i;
		ta[i].rng = mix64(seed ^ (uint64_t)(i + 1) * 0x1234567ull);
		if (pthread_create(&tid[i], NULL, thread_main, &ta[i]) != 0)
			die(2, "cannot start thread %d", i);
	}
	for (int i = 0; i < threads; i++)
		pthread_join(tid[i], NULL);
	double secs = (double)(now_ns() - t0) / 1e9;

	check_all_regions(fd, "final check");
	if (fsync(fd) < 0)
		die(1, "final fsync failed: %s", strerror(errno));
	close(fd);
	if (state)
		save_state(state);
	uint64_t maxgen = 0;
	for (uint64_t r = 0; r < A.nr; r++)
		if (A.gen[r] > maxgen)
			maxgen = A.gen[r];
	printf("%s: %d threads, %.1f s: %" PRIu64 " writes, %" PRIu64 " checked reads, %" PRIu64
	       " free reads, %" PRIu64 " syncs, %" PRIu64 " MiB written, %" PRIu64
	       " MiB read; %" PRIu64 " regions of %" PRIu64 " bytes (max generation %" PRIu64
	       ") all correct\n",
	       prog, threads, secs, (uint64_t)C.writes, (uint64_t)C.checked_reads,
	       (uint64_t)C.free_reads, (uint64_t)C.syncs, (uint64_t)C.bytes_written >> 20,
	       (uint64_t)C.bytes_read >> 20, A.nr, A.region, maxgen);
	return 0;
}
