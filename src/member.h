/* member.h - one member (component) of an array: a regular file or block
 * device, its md superblock, and positioned I/O relative to its data area.
 * Every member access in the engine goes through here, so counters and
 * (later) fault injection live in one place.
 */
#ifndef RAIDFUSE_MEMBER_H
#define RAIDFUSE_MEMBER_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "md_super.h"

/* What a member is to its array (md's dev-NAME/state file). */
enum member_state {
	MEMBER_IN_SYNC = 0,          /* serving its role */
	MEMBER_FAULTY,               /* failed; still open until removed */
	MEMBER_SPARE,                /* no role */
	MEMBER_REBUILDING,           /* recovery onto it runs (rebuilt_bytes of its role) */
	MEMBER_STALE,                /* left out at assembly (events behind, or faulty) */
	MEMBER_REMOVED,              /* closed */
};

const char *member_state_name(enum member_state state);

struct member {
	char *path;                  /* as the user named it (for messages) */
	char *abs_path;              /* its folder resolved (status, matching) */
	enum member_state state;
	int role;                    /* slot served, or -1 */
	int fd;                      /* -1 when closed */
	/* A loop device's backing file, held open to claim it too: the
	 * same member named as the file elsewhere must find it in use. */
	int backing_fd;              /* -1 when none */
	bool read_only;
	bool is_block_device;
	/* Zeroes a range without writing it: a member file (holes), or a
	 * device with write-zeroes (which may unmap). Read at open. */
	bool zeroes_cheaply;
	dev_t st_dev;                /* identity, to refuse the same member twice */
	ino_t st_ino;
	dev_t st_rdev;
	uint64_t file_bytes;         /* size of the file or device (of the partition) */
	/* FILE@N: partition N of a disk image or device. Every offset here
	 * is the partition's, as md's are; base_bytes is where it starts. */
	unsigned partition;          /* 0: the whole file or device */
	bool partition_from_backup;  /* found through the GPT's backup: the primary is damaged */
	uint64_t base_bytes;
	struct md_super sb;          /* last superblock read or written */
	/* Metadata 1.x: 0 (superblock near the end), 1 (at the start) or 2
	 * (at 4 KiB): where md looks for it, which it does not record. */
	int super_minor;
	/* Metadata 0.90 (md_super090.c), decoded into sb; read-only. */
	bool super_090;
	bool super_090_big_endian;   /* written by a big-endian host */
	uint64_t data_offset_bytes;  /* sb.data_offset in bytes */

	struct member_fault *fault;  /* injected faults (drills), or NULL */
	struct member_badblocks *badblocks; /* md's bad block log, or NULL */

	atomic_uint_fast64_t bytes_read;
	atomic_uint_fast64_t bytes_written;
	atomic_uint_fast64_t read_errors;
	atomic_uint_fast64_t write_errors;
	atomic_int sync_error;       /* first failed fdatasync (-errno), or 0 */

	/* Read balancing over mirrors (read_balance.c). */
	atomic_uint_fast64_t read_head_bytes; /* where the last read picked here ends */
	atomic_bool write_mostly;    /* md's WriteMostly flag (sb.devflags) */
};

/* Whether path (resolved) is dir_real, an absolute path without links,
 * or lies inside it. */
bool member_path_inside(const char *path, const char *dir_real);

/* path with its folder resolved to an absolute one; the file itself is
 * not followed. malloc'd; NULL on ENOMEM. */
char *member_resolve_path(const char *path);

/* Open path for reading (and writing unless read_only). A symbolic link
 * is resolved once and its target opened with O_NOFOLLOW; anything that
 * is neither a regular file nor a block device is refused, and so is a
 * read-only block device unless read_only. A path that does not exist but
 * is FILE@N names partition N of FILE (partition.h). On error returns
 * -errno and describes it in err. */
int member_open(struct member *m, const char *path, bool read_only, char *err, size_t errlen);
void member_close(struct member *m);
/* Whether path names a partition (FILE@N, FILE there, no file named path):
 * create must open it, not make a new file of that name. */
bool member_names_partition(const char *path);
/* Whether a and b (both open) are one member: the same file or device
 * (overlapping partitions of it), or a loop device and the file under it. */
bool member_same_file(const struct member *a, const struct member *b);
/* The file under a loop device member (false for anything else). */
bool member_loop_backing_id(const struct member *m, dev_t *dev, ino_t *ino);
/* Give up the claim (a removed member: others may use the file now). */
void member_unclaim(struct member *m);

/* Claim the member for this process: exclusively to write, shared to only
 * read (flock, so the claim follows the descriptor into a forked daemon;
 * a partition's is an open file description lock on its bytes, so that
 * partitions of one image are claimed apart). Another raidfuse using it
 * makes this fail with -EBUSY, described in err. */
int member_claim(struct member *m, bool exclusive, char *err, size_t errlen);

/* Read and decode the md superblock into m->sb: metadata 1.2 at 4 KiB,
 * else 1.1 at the start or 1.0 near the end (super_minor says which),
 * else 0.90 in the last 64 KiB (super_090, read-only); sets
 * data_offset_bytes. Returns 0 or -errno with err naming the member and
 * the field that is wrong. Checks that the member is long enough for its
 * data area (data_offset + data_size), which must not overlap the
 * superblock. md's bad block log is loaded apart (member_badblocks_load),
 * so a corrupt log still leaves the superblock to say whose member this
 * is. */
int member_super_load(struct member *m, char *err, size_t errlen);

/* A metadata version's name: "0.90", "1.0", "1.1" or "1.2". */
const char *metadata_version_name(bool super_090, int super_minor);
/* The metadata version m's superblock has. */
const char *member_metadata_name(const struct member *m);

/* Where md's 1.x superblock of minor version super_minor sits on a member
 * of file_sectors sectors (md's super_1_load); UINT64_MAX if too small. */
uint64_t member_super1_offset_sectors(int super_minor, uint64_t file_sectors);
/* Bytes from m's data offset to its end: all the data room a member of
 * metadata 1.1 or 1.2 has (0 if the offset lies past the end). */
uint64_t member_room_after_data_offset(const struct member *m);
/* Where metadata 0.90 keeps its superblock on a member of file_sectors:
 * the last 64 KiB-aligned 64 KiB; UINT64_MAX when it is too small. */
uint64_t member_super090_offset_sectors(uint64_t file_sectors);

/* 1 if the member holds an md superblock of metadata 0.90, 1.0 or 1.1
 * (where mdadm looks for them), with *version its name; 0 if not. */
int member_other_md_super(struct member *m, const char **version);

/* Encode m->sb (with a fresh checksum) and write it at its super_offset.
 * Does not sync; call member_sync. */
int member_super_store(struct member *m);

/* Whole-buffer I/O at a byte offset relative to the data area (data_offset).
 * Short transfers are retried; returns 0 or a negative errno. A read that
 * touches a range of md's bad block log fails with -ENODATA without
 * reading (member_badblocks.h): stale bytes, not a failing device. */
int member_read(struct member *m, void *buf, size_t len_bytes, uint64_t data_off_bytes);
int member_write(struct member *m, const void *buf, size_t len_bytes, uint64_t data_off_bytes);
/* member_write of the buffers of iov[0..nr_iov) (at most
 * MEMBER_WRITEV_MAX), back to back from data_off_bytes: one system call
 * for what would be several writes of neighbouring ranges. */
#define MEMBER_WRITEV_MAX 64
struct iovec;
int member_writev(struct member *m, const struct iovec *iov, int nr_iov, uint64_t data_off_bytes);
/* member_write of len_bytes of zeros: a hole punched in a member file, the
 * range zeroed on a device (BLKZEROOUT, which may unmap it), zeros written
 * where neither works. member_zero_abs: at an absolute byte offset. */
int member_zero(struct member *m, uint64_t len_bytes, uint64_t data_off_bytes);
/* Whether member_zero frees or zeroes without writing every byte (see
 * zeroes_cheaply; a drill can take it away: fault no-write-zeroes). */
bool member_zeroes_cheaply(const struct member *m);
int member_zero_abs(struct member *m, uint64_t off_bytes, uint64_t len_bytes);
/* The same at an absolute byte offset of the file or device. */
int member_pread_abs(struct member *m, void *buf, size_t len_bytes, uint64_t off_bytes);
int member_pwrite_abs(struct member *m, const void *buf, size_t len_bytes, uint64_t off_bytes);
/* member_pwrite_abs that returns once those bytes are on stable storage,
 * without writing out the rest of the member's dirty pages (metadata
 * that must be durable before data follows it: the write-intent bits). */
int member_pwrite_abs_durable(struct member *m, const void *buf, size_t len_bytes,
                              uint64_t off_bytes);
/* fdatasync the member. A failure sticks: the kernel reports a lost
 * writeback once per open file, to whichever caller syncs first (the
 * bitmap daemon, say), so every later member_sync returns it too until
 * the member is replaced, and a user's fsync cannot miss it. */
int member_sync(struct member *m);

#endif
