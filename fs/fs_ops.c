/* fs_ops.c - the FUSE low-level operations of the tree:
 *
 *   /volume.img               the array, read-write (or read-only)
 *   /.raidfuse/pid            the daemon's pid (for `raidfuse umount`)
 *   /.raidfuse/ATTR           the array's control attributes (array_ctl.h):
 *                             status, status.json, sync_action, ...
 *   /.raidfuse/devN/ATTR      each member's: state, slot, path, errors
 *
 * Inode numbers are computed from what they name, so lookups need no
 * table. The size of volume.img is the array size and cannot change.
 */
#include "config.h"

#include "fs_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "array.h"
#include "array_ctl.h"

#define FS_ATTR_TIMEOUT 3600.0

static struct fs_state *fs_state_of(fuse_req_t req)
{
	return fuse_req_userdata(req);
}

/* What an inode number stands for. */
enum fs_node_kind { NODE_NONE, NODE_ROOT, NODE_VOLUME, NODE_CTL_DIR, NODE_PID, NODE_ATTR,
	            NODE_DEV_DIR, NODE_DEV_ATTR };

struct fs_node {
	enum fs_node_kind kind;
	const struct array_attr *attr;
	struct member *member;
	int dev;
};

static int fs_attr_count(const struct array_attr *table)
{
	int n = 0;
	while (table[n].name)
		n++;
	return n;
}

static struct fs_node fs_node_of(struct fs_state *fs, fuse_ino_t ino)
{
	struct fs_node node = { NODE_NONE, NULL, NULL, -1 };

	switch (ino) {
	case FS_INO_ROOT: node.kind = NODE_ROOT; return node;
	case FS_INO_VOLUME: node.kind = NODE_VOLUME; return node;
	case FS_INO_CONTROL_DIR: node.kind = NODE_CTL_DIR; return node;
	case FS_INO_PID: node.kind = NODE_PID; return node;
	default: break;
	}
	if (ino >= FS_INO_ATTR_BASE && ino < FS_INO_ATTR_BASE + (fuse_ino_t)fs_attr_count(array_attrs)) {
		node.kind = NODE_ATTR;
		node.attr = &array_attrs[ino - FS_INO_ATTR_BASE];
		return node;
	}
	if (ino >= FS_INO_DEV_BASE) {
		int dev = (int)((ino - FS_INO_DEV_BASE) / FS_INO_DEV_STRIDE);
		int sub = (int)((ino - FS_INO_DEV_BASE) % FS_INO_DEV_STRIDE);
		struct member *m = array_member_at(fs->array, dev);
		if (!m || sub > fs_attr_count(member_attrs))
			return node;
		node.member = m;
		node.dev = dev;
		node.kind = sub == 0 ? NODE_DEV_DIR : NODE_DEV_ATTR;
		node.attr = sub == 0 ? NULL : &member_attrs[sub - 1];
	}
	return node;
}

static fuse_ino_t fs_dev_ino(int dev, int attr_index)
{
	return FS_INO_DEV_BASE + (fuse_ino_t)dev * FS_INO_DEV_STRIDE + (fuse_ino_t)(attr_index + 1);
}

static void fs_fill_attr(struct fs_state *fs, fuse_ino_t ino, struct stat *st)
{
	struct fs_node node = fs_node_of(fs, ino);

	memset(st, 0, sizeof(*st));
	st->st_ino = ino;
	st->st_uid = fs->uid;
	st->st_gid = fs->gid;
	st->st_atim = st->st_mtim = st->st_ctim = fs->mount_time;
	st->st_blksize = 4096;
	switch (node.kind) {
	case NODE_ROOT:
	case NODE_CTL_DIR:
	case NODE_DEV_DIR:
		st->st_mode = S_IFDIR | 0755;
		st->st_nlink = 2;
		break;
	case NODE_VOLUME:
		st->st_mode = S_IFREG | (fs->array->read_only ? 0444 : 0644);
		st->st_nlink = 1;
		st->st_size = (off_t)fs->array->geo.array_bytes;
		st->st_blocks = (blkcnt_t)(fs->array->geo.array_bytes / 512);
		pthread_mutex_lock(&fs->times_lock);
		st->st_mtim = st->st_ctim = fs->volume_mtime;
		st->st_atim = fs->volume_atime;
		pthread_mutex_unlock(&fs->times_lock);
		uint64_t written_ns = atomic_load_explicit(&fs->volume_written_ns,
		                                           memory_order_relaxed);
		if (written_ns && (st->st_mtim.tv_sec < 0 ||
		                   written_ns > (uint64_t)st->st_mtim.tv_sec * 1000000000u +
		                                    (uint64_t)st->st_mtim.tv_nsec)) {
			st->st_mtim.tv_sec = (time_t)(written_ns / 1000000000u);
			st->st_mtim.tv_nsec = (long)(written_ns % 1000000000u);
			st->st_ctim = st->st_mtim;
		}
		break;
	default:
		/* Only the user who mounted may write (default_permissions). */
		st->st_mode = S_IFREG | (node.attr && node.attr->writable ? 0644 : 0444);
		st->st_nlink = 1;
		/* Size 0, as procfs says of its generated files: their length
		 * is known only when read (direct_io reads reach us whatever
		 * the size), and a size that is not theirs sends tail(1) to
		 * the wrong place; with 0 it reads them through. */
		st->st_size = 0;
		break;
	}
}

static void fs_reply_entry(fuse_req_t req, fuse_ino_t ino)
{
	struct fuse_entry_param entry;

	memset(&entry, 0, sizeof(entry));
	entry.ino = ino;
	entry.attr_timeout = FS_ATTR_TIMEOUT;
	entry.entry_timeout = FS_ATTR_TIMEOUT;
	fs_fill_attr(fs_state_of(req), ino, &entry.attr);
	fuse_reply_entry(req, &entry);
}

static void fs_init(void *userdata, struct fuse_conn_info *conn)
{
	struct fs_state *fs = userdata;
	/* 1 MiB requests: a full row of a wide array in one call. */
	conn->max_write = FS_MAX_IO_BYTES;
	conn->max_read = FS_MAX_IO_BYTES; /* must match the max_read mount option */
	conn->max_readahead = FS_MAX_IO_BYTES;
	if (conn->capable & FUSE_CAP_ASYNC_DIO)
		conn->want |= FUSE_CAP_ASYNC_DIO;
	/* The kernel's write-back cache would make writes land in the page
	 * cache with no fsync ordering we control; keep it off. */
	conn->want &= ~FUSE_CAP_WRITEBACK_CACHE;
	/* With the page cache on (--page-cache), the kernel must not drop
	 * volume.img's pages when a GETATTR shows the mtime our own writes
	 * moved: a buffered write unlocks its pages, uptodate, before its
	 * WRITE reaches us, so a reader could drop them, READ the old bytes
	 * from the members ahead of that WRITE and keep them cached after
	 * the write returned (stale reads until the next invalidation).
	 * This daemon is the only writer of the volume, so the kernel's
	 * pages never need invalidating on an mtime change. */
	if (!fs->opts->direct_io)
		conn->want &= ~FUSE_CAP_AUTO_INVAL_DATA;
}

/* "devN" as readdir spells it: N in plain decimal, no sign, space or
 * leading zero, so that each member directory has one name (a directory
 * reachable under several names is an alias the dcache refuses). */
static int fs_parse_dev_name(const char *name)
{
	const char *digits = name + 3;
	long dev = 0;

	if (strncmp(name, "dev", 3) != 0 || !digits[0] || (digits[0] == '0' && digits[1]))
		return -1;
	for (const char *p = digits; *p; p++) {
		if (*p < '0' || *p > '9' || dev > 100000)
			return -1;
		dev = dev * 10 + (*p - '0');
	}
	return dev > 100000 ? -1 : (int)dev;
}

static void fs_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct fs_state *fs = fs_state_of(req);
	struct fs_node dir = fs_node_of(fs, parent);

	if (dir.kind == NODE_ROOT) {
		if (strcmp(name, FS_VOLUME_NAME) == 0)
			return fs_reply_entry(req, FS_INO_VOLUME);
		if (strcmp(name, FS_CONTROL_DIR) == 0)
			return fs_reply_entry(req, FS_INO_CONTROL_DIR);
	} else if (dir.kind == NODE_CTL_DIR) {
		if (strcmp(name, "pid") == 0)
			return fs_reply_entry(req, FS_INO_PID);
		for (int i = 0; array_attrs[i].name; i++)
			if (strcmp(name, array_attrs[i].name) == 0)
				return fs_reply_entry(req, FS_INO_ATTR_BASE + (fuse_ino_t)i);
		int dev = fs_parse_dev_name(name);
		if (dev >= 0 && array_member_at(fs->array, dev))
			return fs_reply_entry(req, fs_dev_ino(dev, -1));
	} else if (dir.kind == NODE_DEV_DIR) {
		for (int i = 0; member_attrs[i].name; i++)
			if (strcmp(name, member_attrs[i].name) == 0)
				return fs_reply_entry(req, fs_dev_ino(dir.dev, i));
	}
	fuse_reply_err(req, ENOENT);
}

static void fs_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct stat st;

	(void)fi;
	if (fs_node_of(fs_state_of(req), ino).kind == NODE_NONE) {
		fuse_reply_err(req, ENOENT);
		return;
	}
	fs_fill_attr(fs_state_of(req), ino, &st);
	fuse_reply_attr(req, &st, FS_ATTR_TIMEOUT);
}

static void fs_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr, int to_set,
                       struct fuse_file_info *fi)
{
	struct fs_state *fs = fs_state_of(req);
	struct fs_node node = fs_node_of(fs, ino);
	struct timespec now;

	if ((node.kind == NODE_ATTR || node.kind == NODE_DEV_ATTR) && node.attr->writable &&
	    !(to_set & ~(FUSE_SET_ATTR_SIZE | FUSE_SET_ATTR_MTIME | FUSE_SET_ATTR_MTIME_NOW |
	                 FUSE_SET_ATTR_ATIME | FUSE_SET_ATTR_ATIME_NOW | FUSE_SET_ATTR_CTIME))) {
		/* `echo check > sync_action` truncates first: nothing to do. */
		fs_getattr(req, ino, fi);
		return;
	}
	if (node.kind != NODE_VOLUME) {
		fuse_reply_err(req, EPERM);
		return;
	}
	/* The volume is as large as the array: no truncate, no growth. */
	if ((to_set & FUSE_SET_ATTR_SIZE) &&
	    (uint64_t)attr->st_size != fs->array->geo.array_bytes) {
		fuse_reply_err(req, EPERM);
		return;
	}
	if (to_set & (FUSE_SET_ATTR_MODE | FUSE_SET_ATTR_UID | FUSE_SET_ATTR_GID)) {
		fuse_reply_err(req, EPERM);
		return;
	}
	clock_gettime(CLOCK_REALTIME, &now);
	pthread_mutex_lock(&fs->times_lock);
	if (to_set & (FUSE_SET_ATTR_MTIME | FUSE_SET_ATTR_MTIME_NOW))
		atomic_store(&fs->volume_written_ns, 0); /* touch -d goes back in time */
	if (to_set & FUSE_SET_ATTR_MTIME)
		fs->volume_mtime = attr->st_mtim;
	if (to_set & FUSE_SET_ATTR_MTIME_NOW)
		fs->volume_mtime = now;
	if (to_set & FUSE_SET_ATTR_ATIME)
		fs->volume_atime = attr->st_atim;
	if (to_set & FUSE_SET_ATTR_ATIME_NOW)
		fs->volume_atime = now;
	pthread_mutex_unlock(&fs->times_lock);
	fs_getattr(req, ino, fi);
}

/* An open control file: its text rendered at open, so one read sees one
 * snapshot, and what it is, for writes. */
struct fs_control_file {
	struct fs_node node;
	size_t len;
	char text[];
};

#define FS_CONTROL_TEXT_BYTES 65536

static void fs_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct fs_state *fs = fs_state_of(req);
	struct fs_node node = fs_node_of(fs, ino);
	int accmode = fi->flags & O_ACCMODE;

	switch (node.kind) {
	case NODE_NONE:
		fuse_reply_err(req, ENOENT);
		return;
	case NODE_ROOT:
	case NODE_CTL_DIR:
	case NODE_DEV_DIR:
		fuse_reply_err(req, EISDIR);
		return;
	case NODE_VOLUME:
		if (accmode != O_RDONLY && fs->array->read_only) {
			fuse_reply_err(req, EROFS);
			return;
		}
		fi->direct_io = fs->opts->direct_io;
		/* Only this daemon changes the volume, so cached pages stay
		 * valid across opens. */
		fi->keep_cache = !fs->opts->direct_io;
		fuse_reply_open(req, fi);
		return;
	default:
		break;
	}
	if (accmode != O_RDONLY && !(node.attr && node.attr->writable)) {
		fuse_reply_err(req, EACCES);
		return;
	}
	struct fs_control_file *cf = malloc(sizeof(*cf) + FS_CONTROL_TEXT_BYTES);
	if (!cf) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	cf->node = node;
	cf->text[0] = '\0';
	int rc = 0;
	if (accmode != O_WRONLY) {
		if (node.kind == NODE_PID)
			snprintf(cf->text, FS_CONTROL_TEXT_BYTES, "%ld\n", (long)getpid());
		else
			rc = node.attr->show(fs->array, node.member, cf->text, FS_CONTROL_TEXT_BYTES);
	}
	if (rc < 0) {
		free(cf);
		fuse_reply_err(req, -rc);
		return;
	}
	cf->len = strlen(cf->text);
	fi->fh = (uint64_t)(uintptr_t)cf;
	fi->direct_io = 1;
	fuse_reply_open(req, fi);
}

/* One read buffer per worker thread, kept for the thread's life: a 1 MiB
 * malloc per request would be mapped and unmapped every time. */
static pthread_key_t fs_read_buffer_key;
static pthread_once_t fs_read_buffer_once = PTHREAD_ONCE_INIT;

static void fs_read_buffer_key_create(void)
{
	pthread_key_create(&fs_read_buffer_key, free);
}

static char *fs_read_buffer(size_t size)
{
	pthread_once(&fs_read_buffer_once, fs_read_buffer_key_create);
	char *buf = pthread_getspecific(fs_read_buffer_key);
	if (!buf) {
		buf = malloc(FS_MAX_IO_BYTES);
		if (!buf)
			return NULL;
		pthread_setspecific(fs_read_buffer_key, buf);
	}
	return size <= FS_MAX_IO_BYTES ? buf : NULL;
}

static void fs_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
                    struct fuse_file_info *fi)
{
	struct fs_state *fs = fs_state_of(req);

	if (ino != FS_INO_VOLUME) {
		const struct fs_control_file *cf = (const void *)(uintptr_t)fi->fh;
		if ((size_t)off >= cf->len) {
			fuse_reply_buf(req, NULL, 0);
			return;
		}
		size_t n = size < cf->len - (size_t)off ? size : cf->len - (size_t)off;
		/* Reply from this thread's buffer, not from cf: once the kernel
		 * has copied the reply, the reader may close the file and
		 * another worker free cf (fs_release) before writev returns
		 * here. The kernel is done with the bytes by then, but
		 * AddressSanitizer checks writev's iovec after the call and
		 * aborts an ASan build of the daemon with a use-after-free. */
		char *buf = fs_read_buffer(n);
		if (!buf) {
			fuse_reply_err(req, ENOMEM);
			return;
		}
		memcpy(buf, cf->text + off, n);
		fuse_reply_buf(req, buf, n);
		return;
	}
	uint64_t end = fs->array->geo.array_bytes;
	if (off < 0 || (uint64_t)off >= end) {
		fuse_reply_buf(req, NULL, 0);
		return;
	}
	if (size > end - (uint64_t)off)
		size = (size_t)(end - (uint64_t)off);
	char *buf = fs_read_buffer(size);
	if (!buf) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	int rc = array_read(fs->array, buf, size, (uint64_t)off);
	if (rc < 0)
		fuse_reply_err(req, -rc);
	else
		fuse_reply_buf(req, buf, size);
}

static void fs_write(fuse_req_t req, fuse_ino_t ino, const char *buf, size_t size, off_t off,
                     struct fuse_file_info *fi)
{
	struct fs_state *fs = fs_state_of(req);
	uint64_t end = fs->array->geo.array_bytes;

	if (ino != FS_INO_VOLUME) {
		const struct fs_control_file *cf = (const void *)(uintptr_t)fi->fh;
		if (!cf->node.attr || !cf->node.attr->store) {
			fuse_reply_err(req, EACCES);
			return;
		}
		int rc = array_attr_store(cf->node.attr, fs->array, cf->node.member, buf, size);
		if (rc < 0)
			fuse_reply_err(req, -rc);
		else
			fuse_reply_write(req, size);
		return;
	}
	if (off < 0 || (uint64_t)off >= end) {
		if (size)
			fuse_reply_err(req, ENOSPC);
		else
			fuse_reply_write(req, 0);
		return;
	}
	/* A write running past the end is cut short, like a block device. */
	if (size > end - (uint64_t)off)
		size = (size_t)(end - (uint64_t)off);
	int rc = array_write(fs->array, buf, size, (uint64_t)off);
	if (rc < 0) {
		fuse_reply_err(req, -rc);
		return;
	}
	struct timespec now;
	clock_gettime(CLOCK_REALTIME_COARSE, &now); /* vDSO, no syscall */
	atomic_store_explicit(&fs->volume_written_ns,
	                      (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec,
	                      memory_order_relaxed);
	/* O_DSYNC or O_SYNC (the file's flags, or RWF_DSYNC/RWF_SYNC on
	 * this write, which the kernel folds into them): the write must be
	 * durable when it returns. With direct_io the kernel sends no fsync
	 * after it (fuse_direct_write_iter has no generic_write_sync), so
	 * the cache is written out here, as fdatasync would. */
	if (fi && (fi->flags & O_DSYNC)) {
		rc = array_flush(fs->array);
		if (rc == -ENOSYS || rc == -EOPNOTSUPP)
			rc = -EIO;
		if (rc < 0) {
			fuse_reply_err(req, -rc);
			return;
		}
	}
	fuse_reply_write(req, size);
}

static void fs_flush(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	/* flush (close) is not fsync: the cache keeps its rows; data becomes
	 * durable on fsync, after the flush age, or at unmount. */
	(void)ino;
	(void)fi;
	fuse_reply_err(req, 0);
}

static void fs_fsync(fuse_req_t req, fuse_ino_t ino, int datasync, struct fuse_file_info *fi)
{
	(void)datasync;
	(void)fi;
	if (ino != FS_INO_VOLUME) {
		fuse_reply_err(req, 0);
		return;
	}
	int rc = array_flush(fs_state_of(req)->array);
	/* ENOSYS (or EOPNOTSUPP) from fsync would make the kernel stop
	 * sending fsyncs for good, every later one a silent success. */
	if (rc == -ENOSYS || rc == -EOPNOTSUPP)
		rc = -EIO;
	fuse_reply_err(req, rc < 0 ? -rc : 0);
}

static void fs_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	if (ino != FS_INO_VOLUME)
		free((void *)(uintptr_t)fi->fh);
	fuse_reply_err(req, 0);
}

static void fs_opendir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	enum fs_node_kind kind = fs_node_of(fs_state_of(req), ino).kind;
	if (kind != NODE_ROOT && kind != NODE_CTL_DIR && kind != NODE_DEV_DIR) {
		fuse_reply_err(req, ENOTDIR);
		return;
	}
	fuse_reply_open(req, fi);
}

struct fs_dirbuf {
	fuse_req_t req;
	struct fs_state *fs;
	char *buf;
	size_t size, used;
	off_t index, from;
	bool full;
};

static void fs_dir_add(struct fs_dirbuf *d, const char *name, fuse_ino_t ino)
{
	struct stat st;

	if (d->full || d->index++ < d->from)
		return;
	fs_fill_attr(d->fs, ino, &st);
	size_t need = fuse_add_direntry(d->req, d->buf + d->used, d->size - d->used, name, &st,
	                                d->index);
	if (need > d->size - d->used)
		d->full = true;
	else
		d->used += need;
}

static void fs_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
                       struct fuse_file_info *fi)
{
	struct fs_state *fs = fs_state_of(req);
	struct fs_node node = fs_node_of(fs, ino);
	struct fs_dirbuf d = { req, fs, calloc(1, size), size, 0, 0, off, false };

	(void)fi;
	if (!d.buf) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	fs_dir_add(&d, ".", ino);
	fs_dir_add(&d, "..", node.kind == NODE_DEV_DIR ? FS_INO_CONTROL_DIR : FS_INO_ROOT);
	if (node.kind == NODE_ROOT) {
		fs_dir_add(&d, FS_VOLUME_NAME, FS_INO_VOLUME);
		fs_dir_add(&d, FS_CONTROL_DIR, FS_INO_CONTROL_DIR);
	} else if (node.kind == NODE_CTL_DIR) {
		fs_dir_add(&d, "pid", FS_INO_PID);
		for (int i = 0; array_attrs[i].name; i++)
			fs_dir_add(&d, array_attrs[i].name, FS_INO_ATTR_BASE + (fuse_ino_t)i);
		for (int dev = 0; dev < array_member_count(fs->array); dev++) {
			char name[32];
			snprintf(name, sizeof(name), "dev%d", dev);
			fs_dir_add(&d, name, fs_dev_ino(dev, -1));
		}
	} else if (node.kind == NODE_DEV_DIR) {
		for (int i = 0; member_attrs[i].name; i++)
			fs_dir_add(&d, member_attrs[i].name, fs_dev_ino(node.dev, i));
	}
	fuse_reply_buf(req, d.buf, d.used);
	free(d.buf);
}

static void fs_statfs(fuse_req_t req, fuse_ino_t ino)
{
	struct statvfs sv;
	uint64_t bytes = fs_state_of(req)->array->geo.array_bytes;

	(void)ino;
	memset(&sv, 0, sizeof(sv));
	sv.f_bsize = 4096;
	sv.f_frsize = 4096;
	sv.f_blocks = (fsblkcnt_t)((bytes + 4095) / 4096);
	sv.f_files = 2;
	sv.f_namemax = 255;
	fuse_reply_statfs(req, &sv);
}

/* The volume is fully allocated already: plain fallocate inside it is a
 * no-op. Punching a hole (a loop device's discard: fstrim, mkfs) or
 * zeroing a range (its write-zeroes) zeroes it in the engine, which frees
 * member space where it can; a hole only where every member can zero
 * without writing. The size never changes. */
static void fs_fallocate(fuse_req_t req, fuse_ino_t ino, int mode, off_t off, off_t len,
                         struct fuse_file_info *fi)
{
	struct fs_state *fs = fs_state_of(req);
	uint64_t end = fs->array->geo.array_bytes;
	bool keep_size = mode & FALLOC_FL_KEEP_SIZE;
	int zero_mode = mode & ~FALLOC_FL_KEEP_SIZE;

	(void)fi;
	/* Allocating (mode 0, or KEEP_SIZE alone) has nothing to do. */
	bool allocate = zero_mode == 0;
	if (ino != FS_INO_VOLUME ||
	    (!allocate && mode != (FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE) &&
	     zero_mode != FALLOC_FL_ZERO_RANGE)) {
		fuse_reply_err(req, EOPNOTSUPP);
		return;
	}
	if (off < 0 || len <= 0) {
		fuse_reply_err(req, EINVAL);
		return;
	}
	uint64_t first = (uint64_t)off, last = (uint64_t)off + (uint64_t)len;
	/* Past the end: growing is refused; with KEEP_SIZE nothing is there
	 * to zero, as for a regular file. */
	if (last > end && !keep_size) {
		fuse_reply_err(req, EFBIG);
		return;
	}
	if (last > end)
		last = end;
	if (allocate || first >= last) {
		fuse_reply_err(req, 0);
		return;
	}
	int rc = zero_mode == FALLOC_FL_ZERO_RANGE ? array_zero(fs->array, last - first, first)
	                                           : array_discard(fs->array, last - first, first);
	fuse_reply_err(req, rc < 0 ? -rc : 0);
}

/* The tree is fixed: nothing may be created, removed or renamed. */
static void fs_mknod(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode,
                     dev_t rdev)
{
	fuse_reply_err(req, EPERM);
}

static void fs_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode)
{
	fuse_reply_err(req, EPERM);
}

static void fs_unlink(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	fuse_reply_err(req, EPERM);
}

static void fs_create(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode,
                      struct fuse_file_info *fi)
{
	fuse_reply_err(req, EPERM);
}

static void fs_rename(fuse_req_t req, fuse_ino_t parent, const char *name, fuse_ino_t newparent,
                      const char *newname, unsigned int flags)
{
	fuse_reply_err(req, EPERM);
}

static void fs_symlink(fuse_req_t req, const char *link, fuse_ino_t parent, const char *name)
{
	fuse_reply_err(req, EPERM);
}

static void fs_link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t newparent, const char *newname)
{
	fuse_reply_err(req, EPERM);
}

const struct fuse_lowlevel_ops fs_lowlevel_ops = {
	.init = fs_init,
	.lookup = fs_lookup,
	.getattr = fs_getattr,
	.setattr = fs_setattr,
	.open = fs_open,
	.read = fs_read,
	.write = fs_write,
	.flush = fs_flush,
	.fsync = fs_fsync,
	.release = fs_release,
	.opendir = fs_opendir,
	.readdir = fs_readdir,
	.statfs = fs_statfs,
	.mknod = fs_mknod,
	.mkdir = fs_mkdir,
	.unlink = fs_unlink,
	.rmdir = fs_unlink,
	.create = fs_create,
	.rename = fs_rename,
	.symlink = fs_symlink,
	.link = fs_link,
	.fallocate = fs_fallocate,
};
