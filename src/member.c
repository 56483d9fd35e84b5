/* member.c - opening members safely and positioned I/O on them.
 *
 * A member named through a symbolic link (/dev/disk/by-id/..., an LVM or
 * /dev/mapper name) is resolved once, and what it points to is opened with
 * O_NOFOLLOW; members are identified by (st_dev, st_ino) from fstat on the
 * open descriptor, so a symlink swapped in after any path check cannot
 * redirect I/O, and the same file named twice is recognised.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/falloc.h>
#include <stdatomic.h>
#include <stdio.h>
#include <linux/fs.h>
#include <linux/loop.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <unistd.h>

#include "errmsg.h"
#include "member.h"
#include "member_badblocks.h"
#include "member_fault.h"
#include "partition.h"

/* Whether path is dir or below it, as spelled. */
static bool path_has_prefix_dir(const char *path, const char *dir)
{
	size_t dir_len = strlen(dir);

	return strncmp(path, dir, dir_len) == 0 &&
	       (path[dir_len] == '/' || path[dir_len] == '\0' || strcmp(dir, "/") == 0);
}

bool member_path_inside(const char *path, const char *dir_real)
{
	char real[PATH_MAX];

	/* Spelled inside it: said without realpath, which would ask the
	 * daemon itself about a path inside its own mount. */
	if (path_has_prefix_dir(path, dir_real))
		return true;
	if (!realpath(path, real)) {
		/* FILE@N: where FILE is. */
		char file_part[PATH_MAX];
		unsigned number;
		if (errno != ENOENT ||
		    !partition_spec_split(path, file_part, sizeof(file_part), &number))
			return false; /* opening it reports what is wrong */
		if (!realpath(file_part, real))
			return false;
	}
	return path_has_prefix_dir(real, dir_real);
}

char *member_resolve_path(const char *path)
{
	char dir[PATH_MAX], resolved[PATH_MAX], joined[PATH_MAX * 2];
	const char *slash = strrchr(path, '/');
	const char *base = slash ? slash + 1 : path;

	if (!slash)
		snprintf(dir, sizeof(dir), ".");
	else if (slash == path)
		snprintf(dir, sizeof(dir), "/");
	else
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path);
	if (!*base || !realpath(dir, resolved))
		return strdup(path);
	snprintf(joined, sizeof(joined), "%s%s%s", resolved,
	         resolved[strlen(resolved) - 1] == '/' ? "" : "/", base);
	return strdup(joined);
}

/* Whether the device zeroes ranges without writing them (the block
 * layer's write-zeroes, which may unmap). A disk without it has every
 * zeroed byte written: a discard of a whole volume (mkfs) would take as
 * long as filling every member. A partition's limits are its disk's. */
static bool device_writes_zeroes(dev_t rdev)
{
	static const char *const limits[] = { "queue/write_zeroes_max_bytes",
		                              "../queue/write_zeroes_max_bytes" };

	for (size_t i = 0; i < sizeof(limits) / sizeof(limits[0]); i++) {
		char path[128];
		unsigned long long max_bytes = 0;

		snprintf(path, sizeof(path), "/sys/dev/block/%u:%u/%s", major(rdev), minor(rdev),
		         limits[i]);
		FILE *f = fopen(path, "r");
		if (!f)
			continue;
		int got = fscanf(f, "%llu", &max_bytes);
		fclose(f);
		return got == 1 && max_bytes > 0;
	}
	return false;
}

/* Open open_path (path, or where the symbolic link path leads), named
 * path in messages. */
static int member_open_at(struct member *m, const char *path, const char *open_path,
                          bool read_only, char *err, size_t errlen)
{
	struct stat st;
	int fd;

	/* O_NONBLOCK: a FIFO named by mistake would block the open until a
	 * writer came; it is refused below instead, and dropped for I/O. */
	fd = open(open_path, (read_only ? O_RDONLY : O_RDWR) | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0) {
		int rc = -errno;
		if (errno == ELOOP)
			return errmsg_fail(rc, err, errlen,
			                   "%s: became a symbolic link while it was opened", path);
		return errmsg_fail(rc, err, errlen, "%s: cannot open: %s", path, strerror(errno));
	}
	if (fstat(fd, &st) < 0) {
		int rc = -errno;
		close(fd);
		return errmsg_fail(rc, err, errlen, "%s: fstat: %s", path, strerror(-rc));
	}
	if (S_ISREG(st.st_mode)) {
		m->file_bytes = (uint64_t)st.st_size;
		m->zeroes_cheaply = true;
	} else if (S_ISBLK(st.st_mode)) {
		uint64_t dev_bytes = 0;
		if (ioctl(fd, BLKGETSIZE64, &dev_bytes) < 0) {
			int rc = -errno;
			close(fd);
			return errmsg_fail(rc, err, errlen, "%s: cannot read the device size: %s",
			                   path, strerror(-rc));
		}
		if (!read_only) {
			int ro = 0;
			if (ioctl(fd, BLKROGET, &ro) == 0 && ro) {
				close(fd);
				return errmsg_fail(-EROFS, err, errlen,
				                   "%s: the block device is read-only; nothing was "
				                   "written (mount --readonly to read it)",
				                   path);
			}
		}
		m->file_bytes = dev_bytes;
		m->is_block_device = true;
		m->zeroes_cheaply = device_writes_zeroes(st.st_rdev);
	} else {
		close(fd);
		return errmsg_fail(-EINVAL, err, errlen,
		                   "%s: not a regular file or block device", path);
	}
	int flags = fcntl(fd, F_GETFL);
	if (flags < 0 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) < 0) {
		int rc = -errno;
		close(fd);
		return errmsg_fail(rc, err, errlen, "%s: fcntl: %s", path, strerror(-rc));
	}
	m->path = strdup(path);
	m->abs_path = member_resolve_path(open_path);
	if (!m->path || !m->abs_path) {
		free(m->path);
		free(m->abs_path);
		close(fd);
		return errmsg_fail(-ENOMEM, err, errlen, "out of memory");
	}
	m->fd = fd;
	m->read_only = read_only;
	m->st_dev = st.st_dev;
	m->st_ino = st.st_ino;
	m->st_rdev = st.st_rdev;
	return 0;
}

/* The partition table of the open member m (a whole disk, named name),
 * read with the device's logical sector size (a file's is guessed). */
static int member_partition_table_read(struct member *m, const char *name,
                                       struct partition_table *table, char *err, size_t errlen)
{
	unsigned sector_bytes = 0;
	int sector_ioctl = 0;

	if (m->is_block_device && ioctl(m->fd, BLKSSZGET, &sector_ioctl) == 0)
		sector_bytes = (unsigned)sector_ioctl;
	return partition_table_read(m->fd, m->file_bytes, sector_bytes, name, table, err, errlen);
}

/* Narrow the open member m (the whole disk file_name) to its partition
 * number: the size and base of it, and its name with @N. */
static int member_narrow_to_partition(struct member *m, const char *file_name, unsigned number,
                                      char *err, size_t errlen)
{
	struct partition_table *table = malloc(sizeof(*table));

	if (!table)
		return errmsg_fail(-ENOMEM, err, errlen, "out of memory");
	int rc = member_partition_table_read(m, file_name, table, err, errlen);
	if (rc == 0) {
		const struct partition *part = partition_find(table, number);
		if (!part) {
			char numbers[128];
			partition_numbers_text(table, numbers, sizeof(numbers));
			rc = errmsg_fail(-ENOENT, err, errlen,
			                 "%s: %s has no partition %u (its %s lists: %s)", m->path,
			                 file_name, number, table->scheme, numbers);
		} else {
			m->partition = number;
			m->partition_from_backup = table->from_backup;
			m->base_bytes = part->start_bytes;
			m->file_bytes = part->len_bytes;
		}
	} else if (rc == -ENOENT) {
		/* "holds no partition table": said of FILE, for FILE@N. */
		char why[256];
		snprintf(why, sizeof(why), "%s", err ? err : "");
		rc = errmsg_fail(-ENOENT, err, errlen, "%s does not exist, and as partition %u of "
		                 "%s: %s",
		                 m->path, number, file_name, why);
	}
	free(table);
	if (rc < 0)
		return rc;
	size_t abs_len = strlen(m->abs_path) + 16;
	char *abs_part = malloc(abs_len);
	if (!abs_part)
		return errmsg_fail(-ENOMEM, err, errlen, "out of memory");
	snprintf(abs_part, abs_len, "%s@%u", m->abs_path, number);
	free(m->abs_path);
	m->abs_path = abs_part;
	return 0;
}

bool member_names_partition(const char *path)
{
	char file_part[PATH_MAX];
	struct stat st;
	unsigned number;

	if (lstat(path, &st) == 0 || errno != ENOENT ||
	    !partition_spec_split(path, file_part, sizeof(file_part), &number))
		return false;
	return stat(file_part, &st) == 0;
}

int member_open(struct member *m, const char *path, bool read_only, char *err, size_t errlen)
{
	struct stat link_st;
	char *link_target = NULL, file_part[PATH_MAX];
	const char *open_name = path;
	unsigned partition = 0;

	memset(m, 0, sizeof(*m));
	m->fd = -1;
	m->backing_fd = -1;
	int stat_rc = lstat(path, &link_st);
	/* FILE@N where no file of that name exists: partition N of FILE. */
	if (stat_rc < 0 && errno == ENOENT &&
	    partition_spec_split(path, file_part, sizeof(file_part), &partition)) {
		open_name = file_part;
		stat_rc = lstat(open_name, &link_st);
	}
	if (stat_rc == 0 && S_ISLNK(link_st.st_mode)) {
		link_target = realpath(open_name, NULL);
		if (!link_target)
			return errmsg_fail(-errno, err, errlen,
			                   "%s: a symbolic link that leads nowhere: %s", open_name,
			                   strerror(errno));
	}
	int rc = member_open_at(m, path, link_target ? link_target : open_name, read_only, err,
	                        errlen);
	free(link_target);
	if (rc == 0 && partition) {
		rc = member_narrow_to_partition(m, file_part, partition, err, errlen);
		if (rc < 0)
			member_close(m);
	}
	return rc;
}

const char *member_state_name(enum member_state state)
{
	switch (state) {
	case MEMBER_IN_SYNC: return "in_sync";
	case MEMBER_FAULTY: return "faulty";
	case MEMBER_SPARE: return "spare";
	case MEMBER_REBUILDING: return "rebuilding";
	case MEMBER_STALE: return "stale";
	default: return "removed";
	}
}

/* The file under a loop device, as the loop driver names it. */
bool member_loop_backing_id(const struct member *m, dev_t *dev, ino_t *ino)
{
	struct loop_info64 info;

	if (!m->is_block_device || m->fd < 0 || ioctl(m->fd, LOOP_GET_STATUS64, &info) < 0)
		return false;
	*dev = (dev_t)info.lo_device;
	*ino = (ino_t)info.lo_inode;
	return true;
}

/* The file under a loop device (its sysfs backing_file, checked against
 * the device and inode the loop driver reports), opened to be locked, or
 * -1 when m is no loop device or the file cannot be found. */
static int loop_backing_open(const struct member *m, bool exclusive)
{
	char path[128], backing[PATH_MAX];
	struct stat st;
	dev_t backing_dev;
	ino_t backing_ino;

	if (!member_loop_backing_id(m, &backing_dev, &backing_ino))
		return -1;
	snprintf(path, sizeof(path), "/sys/dev/block/%u:%u/loop/backing_file",
	         major(m->st_rdev), minor(m->st_rdev));
	FILE *f = fopen(path, "r");
	if (!f)
		return -1;
	char *line = fgets(backing, sizeof(backing), f);
	fclose(f);
	if (!line)
		return -1;
	backing[strcspn(backing, "\n")] = '\0';
	/* An exclusive flock emulated as a POSIX write lock (NFS, SMB)
	 * needs a descriptor open for writing; read-only where that is all
	 * there is (a read-only file system or file). */
	int fd = exclusive ? open(backing, O_RDWR | O_CLOEXEC | O_NONBLOCK) : -1;
	if (fd < 0)
		fd = open(backing, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) < 0 || st.st_ino != backing_ino || st.st_dev != backing_dev) {
		close(fd);
		return -1;
	}
	return fd;
}

bool member_same_file(const struct member *a, const struct member *b)
{
	dev_t ad = a->st_dev, bd = b->st_dev;
	ino_t ai = a->st_ino, bi = b->st_ino;

	bool same_device = a->is_block_device && b->is_block_device && a->st_rdev == b->st_rdev;
	if ((ad == bd && ai == bi) || same_device) {
		/* Two partitions of one image are two members unless they
		 * overlap (a damaged table). */
		if (!a->partition || !b->partition)
			return true;
		return a->base_bytes < b->base_bytes + b->file_bytes &&
		       b->base_bytes < a->base_bytes + a->file_bytes;
	}
	/* A loop device and the file under it, or two loop devices over
	 * one file: one member, whose flock would find itself in use. */
	bool a_loop = member_loop_backing_id(a, &ad, &ai),
	     b_loop = member_loop_backing_id(b, &bd, &bi);
	if (!a_loop && !b_loop)
		return false;
	return ad == bd && ai == bi;
}

int member_claim(struct member *m, bool exclusive, char *err, size_t errlen)
{
	int op = (exclusive ? LOCK_EX : LOCK_SH) | LOCK_NB;

	if (m->backing_fd < 0)
		m->backing_fd = loop_backing_open(m, exclusive);
	if (m->backing_fd >= 0 && flock(m->backing_fd, op) < 0) {
		int e = errno;
		close(m->backing_fd);
		m->backing_fd = -1;
		if (e == EWOULDBLOCK)
			return errmsg_fail(-EBUSY, err, errlen,
			                   "%s: its backing file is in use by another raidfuse "
			                   "(mounted or being created); unmount it first",
			                   m->path);
		/* The backing file's claim is a safeguard on top of the
		 * device's own: a file system that cannot flock it (EBADF,
		 * ENOLCK) must not make the device unusable. */
		if (e != EBADF && e != ENOLCK && e != EOPNOTSUPP && e != EINVAL)
			return errmsg_fail(-e, err, errlen, "%s: cannot lock its backing file: %s",
			                   m->path, strerror(e));
	}
	if (m->partition) {
		/* A lock on the partition's bytes: a flock covers the whole
		 * file, and would find a second partition of the same image,
		 * opened for the same array, in use. Open file description
		 * locks follow the descriptor into the daemon, as flock does. */
		struct flock range = {
			.l_type = exclusive ? F_WRLCK : F_RDLCK,
			.l_whence = SEEK_SET,
			.l_start = (off_t)m->base_bytes,
			.l_len = (off_t)m->file_bytes,
		};
		if (fcntl(m->fd, F_OFD_SETLK, &range) == 0)
			return 0;
		if (errno == EAGAIN || errno == EACCES)
			return errmsg_fail(-EBUSY, err, errlen,
			                   "%s is in use by another raidfuse (mounted or being "
			                   "created); unmount it first",
			                   m->path);
		return errmsg_fail(-errno, err, errlen, "%s: cannot lock: %s", m->path,
		                   strerror(errno));
	}
	if (flock(m->fd, op) == 0)
		return 0;
	if (errno == EWOULDBLOCK)
		return errmsg_fail(-EBUSY, err, errlen,
		                   "%s is in use by another raidfuse (mounted or being created); "
		                   "unmount it first",
		                   m->path);
	return errmsg_fail(-errno, err, errlen, "%s: cannot lock: %s", m->path, strerror(errno));
}

void member_unclaim(struct member *m)
{
	if (m->fd >= 0 && m->partition) {
		struct flock range = {
			.l_type = F_UNLCK,
			.l_whence = SEEK_SET,
			.l_start = (off_t)m->base_bytes,
			.l_len = (off_t)m->file_bytes,
		};
		fcntl(m->fd, F_OFD_SETLK, &range);
	} else if (m->fd >= 0) {
		flock(m->fd, LOCK_UN);
	}
	if (m->backing_fd >= 0) {
		close(m->backing_fd);
		m->backing_fd = -1;
	}
}

void member_close(struct member *m)
{
	if (m->fd >= 0)
		close(m->fd);
	m->fd = -1;
	if (m->backing_fd >= 0)
		close(m->backing_fd);
	m->backing_fd = -1;
	free(m->path);
	free(m->abs_path);
	m->path = NULL;
	m->abs_path = NULL;
	free(m->fault);
	m->fault = NULL;
	member_badblocks_free(m);
}

int member_pread_abs(struct member *m, void *buf, size_t len_bytes, uint64_t off_bytes)
{
	char *cursor = buf;

	while (len_bytes > 0) {
		ssize_t got = pread(m->fd, cursor, len_bytes, (off_t)(m->base_bytes + off_bytes));
		if (got < 0) {
			if (errno == EINTR)
				continue;
			atomic_fetch_add(&m->read_errors, 1);
			/* ENODATA stands for a range in md's bad block log
			 * (member_read): the device's own (a medium error, a
			 * member on a network file system) is an I/O error. */
			return errno == ENODATA ? -EIO : -errno;
		}
		if (got == 0) {
			/* Past the end of a member that shrank under us. */
			atomic_fetch_add(&m->read_errors, 1);
			return -EIO;
		}
		atomic_fetch_add(&m->bytes_read, (uint64_t)got);
		cursor += got;
		len_bytes -= (size_t)got;
		off_bytes += (uint64_t)got;
	}
	return 0;
}

/* Write every byte of iov[0..nr_iov) at off_bytes, retrying short
 * writes (iov is consumed: a short write advances it); rwf_flags as for
 * pwritev2 (0, or RWF_DSYNC). -EOPNOTSUPP, counted as no error, when the
 * kernel or file system does not take the flags. */
static int member_pwritev_all(struct member *m, struct iovec *iov, int nr_iov,
                              uint64_t off_bytes, int rwf_flags)
{
	if (m->read_only)
		return -EROFS;
	if (m->fault && m->fault->vanished)
		return -EIO;
	while (nr_iov > 0) {
		if (iov->iov_len == 0) {
			iov++;
			nr_iov--;
			continue;
		}
		int batch = nr_iov < IOV_MAX ? nr_iov : IOV_MAX;
		ssize_t put = pwritev2(m->fd, iov, batch, (off_t)(m->base_bytes + off_bytes),
		                       rwf_flags);
		if (put < 0) {
			if (errno == EINTR)
				continue;
			if (rwf_flags && (errno == EOPNOTSUPP || errno == ENOSYS))
				return -EOPNOTSUPP;
			atomic_fetch_add(&m->write_errors, 1);
			return -errno;
		}
		if (put == 0) {
			atomic_fetch_add(&m->write_errors, 1);
			return -EIO;
		}
		atomic_fetch_add(&m->bytes_written, (uint64_t)put);
		off_bytes += (uint64_t)put;
		for (size_t left = (size_t)put; left > 0;) {
			size_t step = left < iov->iov_len ? left : iov->iov_len;
			iov->iov_base = (char *)iov->iov_base + step;
			iov->iov_len -= step;
			left -= step;
			if (iov->iov_len == 0) {
				iov++;
				nr_iov--;
			}
		}
	}
	return 0;
}

static int member_pwrite_all(struct member *m, const void *buf, size_t len_bytes,
                             uint64_t off_bytes, int rwf_flags)
{
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len_bytes };
	return member_pwritev_all(m, &iov, 1, off_bytes, rwf_flags);
}

int member_pwrite_abs(struct member *m, const void *buf, size_t len_bytes, uint64_t off_bytes)
{
	return member_pwrite_all(m, buf, len_bytes, off_bytes, 0);
}

int member_read(struct member *m, void *buf, size_t len_bytes, uint64_t data_off_bytes)
{
	if (member_badblocks_hit(m, data_off_bytes, len_bytes))
		return -ENODATA; /* not the device's fault: not counted */
	int rc = m->fault ? member_fault_before(m, false, data_off_bytes, len_bytes) : 0;
	if (rc < 0) {
		atomic_fetch_add(&m->read_errors, 1);
		return rc;
	}
	rc = member_pread_abs(m, buf, len_bytes, m->data_offset_bytes + data_off_bytes);
	if (rc == 0 && m->fault)
		member_fault_after_read(m, buf, data_off_bytes, len_bytes);
	return rc;
}

/* Logged bad sectors a write covered now hold the array's bytes. */
static int member_wrote(struct member *m, int rc, uint64_t data_off_bytes, size_t len_bytes)
{
	if (rc == 0 && m->badblocks)
		member_badblocks_clear(m, data_off_bytes, len_bytes);
	return rc;
}

int member_zero_abs(struct member *m, uint64_t off_bytes, uint64_t len_bytes)
{
	/* Freed rather than written where the member can: a hole in a
	 * sparse member file gives the space back (fstrim of a file system
	 * on the volume), and a device may unmap the blocks. Both read back
	 * as zeros, which is what a discard of the volume promises. */
	static const char zeros[64 * 1024];

	if (m->read_only)
		return -EROFS;
	if (m->fault && m->fault->vanished)
		return -EIO;
	if (len_bytes == 0)
		return 0;
	/* On a device, a punched hole is the block layer's write-zeroes
	 * with unmapping allowed, and never written out (it fails instead);
	 * BLKZEROOUT does not unmap, and writes zeros where the device has
	 * no write-zeroes. */
	uint64_t file_off = m->base_bytes + off_bytes;
	if (fallocate(m->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)file_off,
	              (off_t)len_bytes) == 0)
		return 0;
	if (m->is_block_device) {
		uint64_t range[2] = { file_off, len_bytes };
		if ((file_off | len_bytes) % 512 == 0 && ioctl(m->fd, BLKZEROOUT, range) == 0)
			return 0;
	}
	for (uint64_t done = 0; done < len_bytes;) {
		size_t n = len_bytes - done < sizeof(zeros) ? (size_t)(len_bytes - done) : sizeof(zeros);
		int rc = member_pwrite_abs(m, zeros, n, off_bytes + done);
		if (rc < 0)
			return rc;
		done += n;
	}
	return 0;
}

int member_zero(struct member *m, uint64_t len_bytes, uint64_t data_off_bytes)
{
	int rc = m->fault ? member_fault_before(m, true, data_off_bytes, len_bytes) : 0;
	if (rc < 0) {
		atomic_fetch_add(&m->write_errors, 1);
		return rc;
	}
	rc = member_zero_abs(m, m->data_offset_bytes + data_off_bytes, len_bytes);
	return member_wrote(m, rc, data_off_bytes, len_bytes);
}

bool member_zeroes_cheaply(const struct member *m)
{
	return m->zeroes_cheaply && !(m->fault && m->fault->no_write_zeroes);
}

int member_write(struct member *m, const void *buf, size_t len_bytes, uint64_t data_off_bytes)
{
	int rc = m->fault ? member_fault_before(m, true, data_off_bytes, len_bytes) : 0;
	if (rc < 0) {
		atomic_fetch_add(&m->write_errors, 1);
		return rc;
	}
	rc = member_pwrite_abs(m, buf, len_bytes, m->data_offset_bytes + data_off_bytes);
	return member_wrote(m, rc, data_off_bytes, len_bytes);
}

int member_writev(struct member *m, const struct iovec *iov, int nr_iov, uint64_t data_off_bytes)
{
	size_t len_bytes = 0;
	struct iovec left[MEMBER_WRITEV_MAX];

	/* A caller's mistake, not the member's: checked before anything is
	 * counted against it. */
	if (nr_iov > MEMBER_WRITEV_MAX)
		return -EINVAL;
	for (int i = 0; i < nr_iov; i++)
		len_bytes += iov[i].iov_len;
	int rc = m->fault ? member_fault_before(m, true, data_off_bytes, len_bytes) : 0;
	if (rc < 0) {
		atomic_fetch_add(&m->write_errors, 1);
		return rc;
	}
	/* The caller's vector stays as it was: short writes consume a copy. */
	memcpy(left, iov, (size_t)nr_iov * sizeof(*iov));
	rc = member_pwritev_all(m, left, nr_iov, m->data_offset_bytes + data_off_bytes, 0);
	return member_wrote(m, rc, data_off_bytes, len_bytes);
}

/* Set once a kernel or file system has refused RWF_DSYNC. */
static atomic_bool rwf_dsync_unsupported;

/* The kernel reports a lost writeback once per open file: the error is
 * kept here so that every later sync of the member reports it too. */
static void member_sync_failed(struct member *m, int err)
{
	int none = 0;
	atomic_compare_exchange_strong(&m->sync_error, &none, err);
}

int member_pwrite_abs_durable(struct member *m, const void *buf, size_t len_bytes,
                              uint64_t off_bytes)
{
	/* RWF_DSYNC syncs just this range (and what the file system needs to
	 * find it); fdatasync would first write out every dirty page of a
	 * member file, which under random writes is most of the cache. */
	if (!atomic_load(&rwf_dsync_unsupported)) {
		int rc = member_pwrite_all(m, buf, len_bytes, off_bytes, RWF_DSYNC);
		/* Its sync checks the whole file's writeback errors and marks
		 * them seen, so a failed writeback of data pages surfaces here
		 * and never at the next fdatasync: it is kept as one. */
		if (rc < 0 && rc != -EOPNOTSUPP)
			member_sync_failed(m, rc);
		if (rc != -EOPNOTSUPP)
			return rc;
		atomic_store(&rwf_dsync_unsupported, true);
	}
	int rc = member_pwrite_abs(m, buf, len_bytes, off_bytes);
	return rc < 0 ? rc : member_sync(m);
}

static int member_sync_data(struct member *m)
{
	if (m->read_only)
		return 0;
	int sticky = atomic_load(&m->sync_error);
	if (sticky)
		return sticky;
	int rc = 0;
	if (m->fault && m->fault->vanished)
		rc = -EIO;
	else if (fdatasync(m->fd) < 0)
		rc = -errno;
	if (rc < 0) {
		atomic_fetch_add(&m->write_errors, 1);
		member_sync_failed(m, rc);
	}
	return rc;
}

int member_sync(struct member *m)
{
	return m->badblocks ? member_badblocks_sync(m, member_sync_data) : member_sync_data(m);
}

/* An md superblock of another metadata version than 1.2, where mdadm
 * looks for it: 1.1 at the start, 1.0 and 0.90 near the end (mdadm's
 * super1.c and super0.c). Such a member is an md member even where
 * raidfuse does not read it (0.90, or a damaged 1.x): create and add must
 * not take it for a blank one, and a refusal names its version. */
int member_other_md_super(struct member *m, const char **version)
{
	const uint64_t sectors = m->file_bytes / 512u;
	const struct {
		const char *version;
		uint32_t major;
		uint64_t sector;
	} places[] = {
		{ "1.1", 1, member_super1_offset_sectors(1, sectors) },
		{ "1.0", 1, member_super1_offset_sectors(0, sectors) },
		{ "0.90", 0, member_super090_offset_sectors(sectors) },
	};

	for (size_t i = 0; i < sizeof(places) / sizeof(places[0]); i++) {
		uint8_t head[8];
		if (places[i].sector == UINT64_MAX ||
		    member_pread_abs(m, head, sizeof(head), places[i].sector * 512u) < 0)
			continue;
		if (md_super_head_is(head, places[i].major)) {
			if (version)
				*version = places[i].version;
			return 1;
		}
	}
	return 0;
}

/* For a whole disk without an md superblock of its own: the partitions
 * that hold one, as advice to name them FILE@N ("" if none). */
static void member_partition_hint(struct member *m, char *hint, size_t len)
{
	hint[0] = '\0';
	if (m->partition)
		return;
	struct partition_table *table = malloc(sizeof(*table));
	if (!table)
		return;
	if (member_partition_table_read(m, m->path, table, NULL, 0) == 0) {
		size_t used = 0;
		for (unsigned i = 0; i < table->nr && used < len; i++) {
			const struct partition *part = &table->parts[i];
			bool holds_md = false;
			/* 1.0, 1.1, 1.2, then 0.90 (a NAS's system mirror). */
			for (int version = 0; version <= 3 && !holds_md; version++) {
				uint8_t head[8];
				uint64_t sectors = part->len_bytes / 512u;
				uint64_t at = version == 3 ? member_super090_offset_sectors(sectors)
				                           : member_super1_offset_sectors(version, sectors);
				holds_md = at != UINT64_MAX &&
				           (at + 1) * 512u <= part->len_bytes &&
				           pread(m->fd, head, sizeof(head),
				                 (off_t)(part->start_bytes + at * 512u)) ==
				                   (ssize_t)sizeof(head) &&
				           md_super_head_is(head, version == 3 ? 0 : 1);
			}
			if (!holds_md)
				continue;
			int n = snprintf(hint + used, len - used, "%s%s@%u",
			                 used ? ", " : "; it is a partitioned disk with md members "
			                               "in partitions: name them ",
			                 m->path, part->number);
			if (n < 0)
				break;
			used += (size_t)n;
		}
	}
	free(table);
}

uint64_t member_super1_offset_sectors(int super_minor, uint64_t file_sectors)
{
	switch (super_minor) {
	case 0:
		return file_sectors >= 24 ? (file_sectors - 16) & ~(uint64_t)7 : UINT64_MAX;
	case 1:
		return 0;
	default:
		return MD_SB_V12_OFFSET_SECTORS;
	}
}

uint64_t member_room_after_data_offset(const struct member *m)
{
	return m->file_bytes > m->data_offset_bytes ? m->file_bytes - m->data_offset_bytes : 0;
}

uint64_t member_super090_offset_sectors(uint64_t file_sectors)
{
	/* mdadm's load_super0 refuses below 64 KiB (MD_RESERVED_SECTORS *
	 * 512 bytes); from there the superblock may be at sector 0. */
	return file_sectors >= 128 ? (file_sectors & ~(uint64_t)127) - 128 : UINT64_MAX;
}

/* Decode the 1.x superblock of minor version super_minor into m->sb: 0,
 * -ENOENT when its magic is not there, or the decoder's -errno with why
 * set. */
static int member_super1_try(struct member *m, int super_minor, char *why, size_t whylen)
{
	uint8_t raw[MD_SB_MAX_BYTES];
	uint64_t at = member_super1_offset_sectors(super_minor, m->file_bytes / 512u);

	if (at == UINT64_MAX || at * 512u + MD_SB_FIXED_BYTES > m->file_bytes) {
		snprintf(why, whylen, "the member is too small");
		return -ENOENT;
	}
	size_t want = sizeof(raw);
	if (m->file_bytes - at * 512u < want)
		want = (size_t)(m->file_bytes - at * 512u);
	memset(raw, 0, sizeof(raw));
	int rc = member_pread_abs(m, raw, want, at * 512u);
	if (rc < 0) {
		snprintf(why, whylen, "cannot read it: %s", strerror(-rc));
		return rc;
	}
	if (super_minor != 2 && !md_super_head_is(raw, 1)) {
		snprintf(why, whylen, "no magic");
		return -ENOENT;
	}
	return md_super_decode(raw, want, &m->sb, why, whylen);
}

/* Decode a metadata 0.90 superblock of m into sb (and whether a
 * big-endian host wrote it): 0, -ENOENT when its
 * magic is not where 0.90 keeps it, -ENOTUNIQ when it is the superblock of
 * the disk's last partition (why says which to name), or the decoder's
 * -errno with why set. */
static int member_super090_try(struct member *m, struct md_super *sb, bool *big_endian,
                               char *why, size_t whylen)
{
	uint8_t raw[MD_SB090_BYTES];
	uint64_t at = member_super090_offset_sectors(m->file_bytes / 512u);

	if (at == UINT64_MAX)
		return -ENOENT;
	int rc = member_pread_abs(m, raw, sizeof(raw), at * 512u);
	if (rc < 0) {
		snprintf(why, whylen, "cannot read it: %s", strerror(-rc));
		return rc;
	}
	if (!md_super_head_is(raw, 0))
		return -ENOENT;
	rc = md_super090_decode(raw, at, sb, why, whylen);
	if (rc < 0)
		return rc;
	*big_endian = md_super090_is_big_endian(raw);
	/* 0.90 records no offset: on a whole disk whose last partition ends
	 * at the disk's end, the partition's superblock also sits where the
	 * disk's would, and taking the disk for the member would read its
	 * partition table as array data. It is the partition's when the
	 * partition's own 0.90 place is this sector and its room holds the
	 * size the superblock gives (0 for linear and raid0: those cannot
	 * tell). A raid1 member's own partitions (the array's contents) end
	 * before its superblock and never match. */
	if (m->partition == 0) {
		struct partition_table *table = malloc(sizeof(*table));
		if (!table)
			return -ENOMEM;
		unsigned holder = 0;
		if (member_partition_table_read(m, m->path, table, NULL, 0) == 0) {
			for (unsigned i = 0; i < table->nr && !holder; i++) {
				const struct partition *part = &table->parts[i];
				uint64_t own = member_super090_offset_sectors(part->len_bytes / 512u);
				if (own != UINT64_MAX && part->start_bytes + own * 512u == at * 512u &&
				    sb->size <= own)
					holder = part->number;
			}
		}
		free(table);
		if (holder) {
			snprintf(why, whylen,
			         "the md metadata 0.90 superblock at sector %" PRIu64 " is partition "
			         "%u's (0.90 cannot tell a whole disk from its last partition): name "
			         "the member %s@%u",
			         at, holder, m->path, holder);
			return -ENOTUNIQ;
		}
	}
	return 0;
}

const char *metadata_version_name(bool super_090, int super_minor)
{
	static const char *const minors[] = { "1.0", "1.1", "1.2" };
	if (super_090)
		return "0.90";
	return super_minor >= 0 && super_minor <= 2 ? minors[super_minor] : "1.?";
}

const char *member_metadata_name(const struct member *m)
{
	return metadata_version_name(m->super_090, m->super_minor);
}

int member_super_load(struct member *m, char *err, size_t errlen)
{
	char why[200];
	int rc;

	if (m->file_bytes < MD_SB_V12_OFFSET_BYTES + MD_SB_FIXED_BYTES)
		return errmsg_fail(-EINVAL, err, errlen,
		                   "%s: too small (%llu bytes) to hold an md 1.2 superblock at 4 KiB",
		                   m->path, (unsigned long long)m->file_bytes);
	/* 1.2 first, as mdadm's default; then where 1.1 and 1.0 keep theirs.
	 * The reason 1.2 failed is the one reported when none is found. */
	rc = member_super1_try(m, 2, why, sizeof(why));
	m->super_minor = 2;
	m->super_090 = false;
	if (rc < 0) {
		static const int other_minors[] = { 1, 0 };
		for (size_t i = 0; i < sizeof(other_minors) / sizeof(other_minors[0]); i++) {
			char other_why[200];
			int orc = member_super1_try(m, other_minors[i], other_why, sizeof(other_why));
			if (orc == 0) {
				rc = 0;
				m->super_minor = other_minors[i];
				break;
			}
			if (orc != -ENOENT)
				return errmsg_fail(orc, err, errlen,
				                   "%s: the md metadata 1.%d superblock at sector "
				                   "%" PRIu64 " is not valid: %s",
				                   m->path, other_minors[i],
				                   member_super1_offset_sectors(other_minors[i],
				                                                m->file_bytes / 512u),
				                   other_why);
		}
	}
	/* Last, the legacy 0.90 (mdadm's default until 3.1, in 2010): old
	 * servers' arrays and NAS system partitions. A member that holds a
	 * 1.x superblock and a 0.90 one (a disk reused without a wipe) is
	 * taken as mdadm takes it (guess_super_type): the newer ctime wins. */
	struct md_super sb090;
	bool big_endian = false;
	m->super_090_big_endian = false;
	if (rc == 0) {
		char ignored[200];
		if (member_super090_try(m, &sb090, &big_endian, ignored, sizeof(ignored)) == 0 &&
		    sb090.ctime > (m->sb.ctime & 0xffffffffffull)) {
			m->sb = sb090;
			m->super_090 = true;
			m->super_090_big_endian = big_endian;
		}
	} else {
		char why090[200];
		int rc090 = member_super090_try(m, &sb090, &big_endian, why090, sizeof(why090));
		if (rc090 == 0) {
			rc = 0;
			m->sb = sb090;
			m->super_090 = true;
			m->super_090_big_endian = big_endian;
		} else if (rc090 == -ENOTUNIQ) {
			return errmsg_fail(-EINVAL, err, errlen, "%s: %s", m->path, why090);
		} else if (rc090 != -ENOENT) {
			return errmsg_fail(rc090, err, errlen,
			                   "%s: the md metadata 0.90 superblock at sector %" PRIu64
			                   "%s: %s",
			                   m->path, member_super090_offset_sectors(m->file_bytes / 512u),
			                   rc090 == -EOPNOTSUPP ? "" : " is not valid", why090);
		}
	}
	if (m->super_090)
		m->super_minor = -1; /* no 1.x minor: member_metadata_name says 0.90 */
	if (rc < 0) {
		const char *version;
		if (err && member_other_md_super(m, &version))
			return errmsg_fail(rc, err, errlen,
			                   "%s: holds an md metadata %s superblock that cannot be read; "
			                   "raidfuse reads metadata 0.90, 1.0, 1.1 and 1.2",
			                   m->path, version);
		char hint[512] = "";
		if (err)
			member_partition_hint(m, hint, sizeof(hint));
		return errmsg_fail(rc, err, errlen,
		                   "%s: no valid md superblock (metadata 1.2 at 4 KiB: %s; none "
		                   "of 1.1 at sector 0, of 1.0 near the end or of 0.90 in the last "
		                   "64 KiB either)%s",
		                   m->path, why, hint);
	}
	uint64_t want_offset = m->super_090
	                               ? member_super090_offset_sectors(m->file_bytes / 512u)
	                               : member_super1_offset_sectors(m->super_minor,
	                                                              m->file_bytes / 512u);
	if (m->sb.super_offset != want_offset)
		return errmsg_fail(-EINVAL, err, errlen,
		                   "%s: super_offset is %llu sectors (expected %llu for metadata 1.%d)",
		                   m->path, (unsigned long long)m->sb.super_offset,
		                   (unsigned long long)want_offset, m->super_minor);
	/* Every role needs a device slot, and a superblock read here has at
	 * most MD_SB_MAX_DEV of them; a larger count is corrupt, and would
	 * have examine and assembly loop over billions of roles. */
	if (m->sb.raid_disks > MD_SB_MAX_DEV)
		return errmsg_fail(-EINVAL, err, errlen,
		                   "%s: raid_disks is %u (expected at most %u, the device slots a "
		                   "superblock holds): the superblock is corrupt",
		                   m->path, m->sb.raid_disks, MD_SB_MAX_DEV);

	/* Compared in sectors first: a forged data_offset or data_size
	 * must not wrap around to a small byte count. */
	uint64_t file_sectors = m->file_bytes / 512u;
	if (m->sb.data_offset > file_sectors || m->sb.data_size > file_sectors - m->sb.data_offset)
		return errmsg_fail(-EINVAL, err, errlen,
		                   "%s: truncated or corrupt: the superblock puts the data area at "
		                   "sectors %llu + %llu, but the member has %llu sectors",
		                   m->path, (unsigned long long)m->sb.data_offset,
		                   (unsigned long long)m->sb.data_size,
		                   (unsigned long long)file_sectors);
	uint64_t end_bytes = (m->sb.data_offset + m->sb.data_size) * 512u;
	if (end_bytes > m->file_bytes)
		return errmsg_fail(-EINVAL, err, errlen,
		                   "%s: truncated: the superblock says the data area ends at %llu "
		                   "bytes (data_offset %llu + data_size %llu sectors) but the member "
		                   "is only %llu bytes",
		                   m->path, (unsigned long long)end_bytes,
		                   (unsigned long long)m->sb.data_offset,
		                   (unsigned long long)m->sb.data_size,
		                   (unsigned long long)m->file_bytes);
	/* The superblock's sectors (md reserves 4 KiB for it) are no data. */
	uint64_t sb_end = m->sb.super_offset + MD_SB_MAX_BYTES / 512u;
	if (m->sb.data_offset < sb_end && m->sb.super_offset < m->sb.data_offset + m->sb.data_size)
		return errmsg_fail(-EINVAL, err, errlen,
		                   "%s: the data area (sectors %llu + %llu) overlaps the superblock "
		                   "(sector %llu): the superblock is corrupt",
		                   m->path, (unsigned long long)m->sb.data_offset,
		                   (unsigned long long)m->sb.data_size,
		                   (unsigned long long)m->sb.super_offset);
	m->data_offset_bytes = m->sb.data_offset * 512u;
	atomic_store(&m->write_mostly, (m->sb.devflags & MD_DEVFLAG_WRITE_MOSTLY) != 0);
	return 0;
}

int member_super_store(struct member *m)
{
	uint8_t raw[MD_SB_MAX_BYTES];
	size_t len = md_super_encode(&m->sb, raw);
	/* Write whole 512-byte sectors, as md does, so block devices with
	 * O_DIRECT-like constraints and md's own reader agree on the bytes. */
	size_t sector_len = (len + 511u) & ~(size_t)511u;
	/* Metadata 0.90 is read, never written: its arrays mount read-only
	 * (array_assemble), so nothing should get here. */
	if (m->super_090)
		return -EROFS;
	if (m->fault && m->fault->super_error)
		return -EIO;
	return member_pwrite_abs(m, raw, sector_len, m->sb.super_offset * 512u);
}
