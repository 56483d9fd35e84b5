/* fs_ops.c - the FUSE low-level operations of the fixed tree:
 *
 *   /volume.img          the array, read-write (or read-only)
 *   /.raidfuse/status    mdstat-like status text
 *   /.raidfuse/pid       the daemon's pid (for `raidfuse umount`)
 *
 * Inode numbers are fixed, so lookups need no table and never expire.
 * The size of volume.img is the array size and cannot change.
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

#define FS_ATTR_TIMEOUT 3600.0
#define FS_CONTROL_FILE_BYTES 4096

static struct fs_state *fs_state_of(fuse_req_t req)
{
	return fuse_req_userdata(req);
}

static void fs_fill_attr(struct fs_state *fs, fuse_ino_t ino, struct stat *st)
{
	memset(st, 0, sizeof(*st));
	st->st_ino = ino;
	st->st_uid = fs->uid;
	st->st_gid = fs->gid;
	st->st_atim = st->st_mtim = st->st_ctim = fs->mount_time;
	st->st_blksize = 4096;
	switch (ino) {
	case FS_INO_ROOT:
	case FS_INO_CONTROL_DIR:
		st->st_mode = S_IFDIR | 0755;
		st->st_nlink = ino == FS_INO_ROOT ? 3 : 2;
		break;
	case FS_INO_VOLUME:
		st->st_mode = S_IFREG | (fs->array->read_only ? 0444 : 0644);
		st->st_nlink = 1;
		st->st_size = (off_t)fs->array->geo.array_bytes;
		st->st_blocks = (blkcnt_t)(fs->array->geo.array_bytes / 512);
		pthread_mutex_lock(&fs->times_lock);
		st->st_mtim = st->st_ctim = fs->volume_mtime;
		st->st_atim = fs->volume_atime;
		pthread_mutex_unlock(&fs->times_lock);
		break;
	default:
		st->st_mode = S_IFREG | 0444;
		st->st_nlink = 1;
		st->st_size = FS_CONTROL_FILE_BYTES;
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
	(void)userdata;
	/* 1 MiB requests: a full row of a wide array in one call. */
	conn->max_write = FS_MAX_IO_BYTES;
	conn->max_read = FS_MAX_IO_BYTES; /* must match the max_read mount option */
	conn->max_readahead = FS_MAX_IO_BYTES;
	if (conn->capable & FUSE_CAP_ASYNC_DIO)
		conn->want |= FUSE_CAP_ASYNC_DIO;
	/* The kernel's write-back cache would make writes land in the page
	 * cache with no fsync ordering we control; keep it off. */
	conn->want &= ~FUSE_CAP_WRITEBACK_CACHE;
}

static void fs_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	if (parent == FS_INO_ROOT && strcmp(name, FS_VOLUME_NAME) == 0)
		fs_reply_entry(req, FS_INO_VOLUME);
	else if (parent == FS_INO_ROOT && strcmp(name, FS_CONTROL_DIR) == 0)
		fs_reply_entry(req, FS_INO_CONTROL_DIR);
	else if (parent == FS_INO_CONTROL_DIR && strcmp(name, "status") == 0)
		fs_reply_entry(req, FS_INO_STATUS);
	else if (parent == FS_INO_CONTROL_DIR && strcmp(name, "pid") == 0)
		fs_reply_entry(req, FS_INO_PID);
	else
		fuse_reply_err(req, ENOENT);
}

static void fs_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct stat st;

	(void)fi;
	if (ino >= FS_INO_COUNT) {
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
	struct timespec now;

	if (ino != FS_INO_VOLUME) {
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

/* Control files are rendered at open, so one read sees one snapshot. */
struct fs_control_text {
	size_t len;
	char text[];
};

static struct fs_control_text *fs_render_control(struct fs_state *fs, fuse_ino_t ino)
{
	const size_t cap = 16384;
	struct fs_control_text *ct = malloc(sizeof(*ct) + cap);

	if (!ct)
		return NULL;
	if (ino == FS_INO_STATUS)
		array_status_text(fs->array, ct->text, cap);
	else
		snprintf(ct->text, cap, "%ld\n", (long)getpid());
	ct->len = strlen(ct->text);
	return ct;
}

static void fs_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct fs_state *fs = fs_state_of(req);
	int accmode = fi->flags & O_ACCMODE;

	if (ino == FS_INO_ROOT || ino == FS_INO_CONTROL_DIR) {
		fuse_reply_err(req, EISDIR);
		return;
	}
	if (ino == FS_INO_VOLUME) {
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
	}
	if (ino >= FS_INO_COUNT) {
		fuse_reply_err(req, ENOENT);
		return;
	}
	if (accmode != O_RDONLY) {
		fuse_reply_err(req, EACCES);
		return;
	}
	struct fs_control_text *ct = fs_render_control(fs, ino);
	if (!ct) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	fi->fh = (uint64_t)(uintptr_t)ct;
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
		const struct fs_control_text *ct = (const void *)(uintptr_t)fi->fh;
		if ((size_t)off >= ct->len)
			fuse_reply_buf(req, NULL, 0);
		else
			fuse_reply_buf(req, ct->text + off,
			               size < ct->len - (size_t)off ? size : ct->len - (size_t)off);
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

	(void)fi;
	if (ino != FS_INO_VOLUME) {
		fuse_reply_err(req, EBADF);
		return;
	}
	if (off < 0 || (uint64_t)off >= end) {
		fuse_reply_err(req, size ? ENOSPC : 0);
		return;
	}
	/* A write running past the end is cut short, like a block device. */
	if (size > end - (uint64_t)off)
		size = (size_t)(end - (uint64_t)off);
	int rc = array_write(fs->array, buf, size, (uint64_t)off);
	if (rc < 0)
		fuse_reply_err(req, -rc);
	else
		fuse_reply_write(req, size);
}

static void fs_flush(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	/* Writes go through to the members; flush (close) is not fsync and
	 * has nothing left to push. */
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
	if (ino != FS_INO_ROOT && ino != FS_INO_CONTROL_DIR) {
		fuse_reply_err(req, ENOTDIR);
		return;
	}
	fuse_reply_open(req, fi);
}

static void fs_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
                       struct fuse_file_info *fi)
{
	static const struct {
		fuse_ino_t dir, ino;
		const char *name;
	} entries[] = {
		{ FS_INO_ROOT, FS_INO_ROOT, "." },
		{ FS_INO_ROOT, FS_INO_ROOT, ".." },
		{ FS_INO_ROOT, FS_INO_VOLUME, FS_VOLUME_NAME },
		{ FS_INO_ROOT, FS_INO_CONTROL_DIR, FS_CONTROL_DIR },
		{ FS_INO_CONTROL_DIR, FS_INO_CONTROL_DIR, "." },
		{ FS_INO_CONTROL_DIR, FS_INO_ROOT, ".." },
		{ FS_INO_CONTROL_DIR, FS_INO_STATUS, "status" },
		{ FS_INO_CONTROL_DIR, FS_INO_PID, "pid" },
	};
	struct fs_state *fs = fs_state_of(req);
	char *buf = calloc(1, size);
	size_t used = 0;
	off_t index = 0;

	(void)fi;
	if (!buf) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	for (size_t i = 0; i < sizeof(entries) / sizeof(entries[0]); i++) {
		struct stat st;
		if (entries[i].dir != ino)
			continue;
		if (index++ < off)
			continue;
		fs_fill_attr(fs, entries[i].ino, &st);
		size_t need = fuse_add_direntry(req, buf + used, size - used, entries[i].name, &st,
		                                index);
		if (need > size - used)
			break;
		used += need;
	}
	fuse_reply_buf(req, buf, used);
	free(buf);
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
	sv.f_files = FS_INO_COUNT - 1;
	sv.f_namemax = 255;
	fuse_reply_statfs(req, &sv);
}

/* The volume is fully allocated already: plain fallocate inside it is a
 * no-op; punching or zeroing ranges is not offered. */
static void fs_fallocate(fuse_req_t req, fuse_ino_t ino, int mode, off_t off, off_t len,
                         struct fuse_file_info *fi)
{
	uint64_t end = fs_state_of(req)->array->geo.array_bytes;

	(void)fi;
	if (ino != FS_INO_VOLUME || mode != 0)
		fuse_reply_err(req, EOPNOTSUPP);
	else if (off < 0 || len < 0 || (uint64_t)off + (uint64_t)len > end)
		fuse_reply_err(req, EFBIG);
	else
		fuse_reply_err(req, 0);
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
	.fallocate = fs_fallocate,
};
