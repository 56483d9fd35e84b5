/* bitmap.c - see bitmap.h.
 *
 * In memory each bit has a count of writes in flight, the time of the
 * last one, and the generation of the store that must carry it. The
 * on-disk bits are rewritten whole (a few sectors) on every member,
 * durably, whenever a bit goes from clear to set; clearing is batched by
 * bitmap_clear_idle. A writer waits until the store of its bits' own
 * generation has finished, not merely until they are set in memory: a
 * bit another writer set a moment ago may still be on its way.
 *
 * One store runs at a time, so the members never see an older picture
 * after a newer one. Writers that set bits while a store is running wait
 * for the next one, which carries all their bits at once (md's bitmap
 * unplug batches the same way): a burst of writes into idle regions costs
 * two stores, not one per region.
 *
 * A member the bitmap cannot be written to is failed out, as md does,
 * and the store counts as done when the others took it: their copies
 * carry the bits. Only when no member can be spared does the writer get
 * the error.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "array.h"
#include "bitmap.h"
#include "errmsg.h"
#include "parity.h"

#define BITMAP_VERSION 4u

struct write_bitmap {
	pthread_mutex_t lock;
	struct md_bitmap_super sb;
	uint64_t chunk_bytes;
	uint64_t nr_bits;
	uint64_t bits_abs_off;       /* byte offset of the bits on the member read */
	size_t bits_bytes;           /* rounded up to whole sectors */
	uint8_t *bits;               /* as on disk (little-endian bit order) */
	uint32_t *in_flight;
	uint64_t *last_write_ms;
	uint64_t *set_gen;           /* store generation that must carry the bit */
	/* Stores: generation wanted by the latest bit change, generation the
	 * newest finished store carried, and its result. */
	pthread_cond_t store_done;
	bool storing;
	uint8_t *store_buf;          /* superblock + bits as the running store writes them */
	uint64_t gen_wanted;
	uint64_t gen_stored;
	int last_store_rc;
	/* Newest generation a store carried with success: a writer whose
	 * bits that store carried is not told of a later one's failure. */
	uint64_t gen_stored_ok;
};

static uint64_t monotonic_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* The smallest chunk from `chunk` up (doubling, to md's 2 GiB at most)
 * whose bits number no more than max_bits, or 0 if there is none: md
 * keeps the chunk size in 32 bits, so it must not double past that. */
static uint64_t chunk_that_fits(uint64_t sync_bytes, uint64_t chunk, uint64_t max_bits)
{
	while ((sync_bytes + chunk - 1) / chunk > max_bits) {
		if (chunk >= BITMAP_MAX_CHUNK_BYTES)
			return 0;
		chunk *= 2;
	}
	return chunk;
}

uint64_t bitmap_chunk_for(uint64_t sync_bytes, uint64_t chunk_bytes)
{
	return chunk_that_fits(sync_bytes, chunk_bytes, BITMAP_ROOM_BITS);
}

int bitmap_pick_chunk(uint64_t sync_bytes, uint64_t wanted_bytes, uint64_t *chunk_bytes,
                      char *err, size_t errlen)
{
	if (!wanted_bytes) {
		uint64_t chunk =
			chunk_that_fits(sync_bytes, BITMAP_DEFAULT_CHUNK_BYTES, BITMAP_MAX_BITS);
		if (!chunk)
			chunk = chunk_that_fits(sync_bytes, BITMAP_MAX_CHUNK_BYTES, BITMAP_ROOM_BITS);
		if (!chunk)
			return errmsg_fail(-EINVAL, err, errlen,
			                   "a write-intent bitmap for %" PRIu64 " GiB per member needs "
			                   "more than the %u bits there is room for, even with md's "
			                   "largest chunk (2G): use --bitmap none",
			                   sync_bytes >> 30, BITMAP_ROOM_BITS);
		*chunk_bytes = chunk;
		return 0;
	}
	/* md keeps the chunk size in 32 bits of the bitmap superblock. */
	if (wanted_bytes < BITMAP_MIN_CHUNK_BYTES || wanted_bytes > BITMAP_MAX_CHUNK_BYTES ||
	    (wanted_bytes & (wanted_bytes - 1)))
		return errmsg_fail(-EINVAL, err, errlen,
		                   "bitmap chunk of %" PRIu64 " bytes: it must be a power of two "
		                   "from 4K to 2G",
		                   wanted_bytes);
	uint64_t least = chunk_that_fits(sync_bytes, wanted_bytes, BITMAP_ROOM_BITS);
	if (least != wanted_bytes) {
		char advice[64] = "use --bitmap none";
		if (least)
			snprintf(advice, sizeof(advice), "use %" PRIu64 "K or more", least / 1024);
		return errmsg_fail(-EINVAL, err, errlen,
		                   "bitmap chunk of %" PRIu64 " KiB needs %" PRIu64 " bits to cover "
		                   "%" PRIu64 " MiB, more than the %u that fit: %s",
		                   wanted_bytes / 1024, (sync_bytes + wanted_bytes - 1) / wanted_bytes,
		                   sync_bytes >> 20, BITMAP_ROOM_BITS, advice);
	}
	*chunk_bytes = wanted_bytes;
	return 0;
}

static uint64_t bitmap_sb_abs_off(const struct md_super *sb)
{
	return (uint64_t)((int64_t)sb->super_offset + sb->bitmap_offset) * SECTOR_BYTES;
}

static void bitmap_super_fill(struct md_bitmap_super *bsb, const uint8_t uuid[16],
                              uint64_t sync_bytes, uint64_t chunk_bytes, uint64_t events)
{
	memset(bsb, 0, sizeof(*bsb));
	bsb->magic = MD_BITMAP_MAGIC;
	bsb->version = BITMAP_VERSION;
	memcpy(bsb->uuid, uuid, 16);
	bsb->events = events;
	bsb->events_cleared = events;
	bsb->sync_size = sync_bytes / SECTOR_BYTES;
	bsb->chunksize = (uint32_t)chunk_bytes;
	bsb->daemon_sleep = BITMAP_DAEMON_SLEEP_S;
}

static const char *bitmap_clash(const struct member *m, uint64_t start, uint64_t end,
                                bool with_bblog);

/* The bytes a fresh bitmap takes: its superblock and bits, in whole
 * sectors, as md reads them; no more, for a bitmap md placed with less
 * room than create keeps. */
static size_t bitmap_fresh_bytes(uint64_t sync_bytes, uint64_t chunk_bytes)
{
	uint64_t nr_bits = (sync_bytes + chunk_bytes - 1) / chunk_bytes;
	return (size_t)((MD_BITMAP_SB_BYTES + (nr_bits + 7) / 8 + SECTOR_BYTES - 1) /
	                SECTOR_BYTES * SECTOR_BYTES);
}

bool bitmap_fits(const struct member *m, uint64_t sync_bytes, uint64_t chunk_bytes)
{
	size_t len = bitmap_fresh_bytes(sync_bytes, chunk_bytes);
	uint64_t at = bitmap_sb_abs_off(&m->sb);
	return len <= BITMAP_WRITTEN_SECTORS * SECTOR_BYTES &&
	       !bitmap_clash(m, at, at + len, m->sb.bblog_size != 0);
}

int bitmap_format_member(struct member *m, const uint8_t uuid[16], uint64_t sync_bytes,
                         uint64_t bitmap_chunk_bytes, uint64_t events)
{
	uint8_t raw[BITMAP_WRITTEN_SECTORS * SECTOR_BYTES];
	struct md_bitmap_super bsb;
	size_t len = bitmap_fresh_bytes(sync_bytes, bitmap_chunk_bytes);
	uint64_t at = bitmap_sb_abs_off(&m->sb);

	if (!bitmap_fits(m, sync_bytes, bitmap_chunk_bytes))
		return -ENOSPC;
	/* The bits too: grow writes where an older array may have left
	 * bytes (create has zeroed them already). */
	memset(raw, 0, len);
	bitmap_super_fill(&bsb, uuid, sync_bytes, bitmap_chunk_bytes, events);
	md_bitmap_super_encode(&bsb, raw);
	return member_pwrite_abs(m, raw, len, at);
}

void bitmap_free(struct write_bitmap *b)
{
	if (!b)
		return;
	pthread_mutex_destroy(&b->lock);
	pthread_cond_destroy(&b->store_done);
	free(b->bits);
	free(b->store_buf);
	free(b->in_flight);
	free(b->last_write_ms);
	free(b->set_gen);
	free(b);
}

/* Every set bit waits for a new store: after one that left some member
 * without the bits (a torn copy may have lost any of them), or for bits
 * set in memory only. Caller holds b->lock (or owns b). */
static void bitmap_all_set_need_store(struct write_bitmap *b)
{
	uint64_t gen = ++b->gen_wanted;
	for (uint64_t i = 0; i < b->nr_bits; i++)
		if (bitmap_test(b, i))
			b->set_gen[i] = gen;
}

/* Whether [start, end) (bytes) overlaps [lo, lo + len). */
static bool bytes_overlap(uint64_t start, uint64_t end, uint64_t lo, uint64_t len)
{
	return start < lo + len && lo < end;
}

/* What of m the bytes [start, end) would overwrite (its superblock, its
 * data, its bad block log if with_bblog) or run past, or NULL. */
static const char *bitmap_clash(const struct member *m, uint64_t start, uint64_t end,
                                bool with_bblog)
{
	const struct md_super *sb = &m->sb;
	uint64_t sb_at = sb->super_offset * SECTOR_BYTES;
	/* Whole sectors, as member_super_store writes them. */
	uint64_t sb_len = (md_super_bytes(sb->max_dev) + SECTOR_BYTES - 1) / SECTOR_BYTES *
	                  SECTOR_BYTES;

	if (bytes_overlap(start, end, sb_at, sb_len))
		return "its superblock";
	if (bytes_overlap(start, end, m->data_offset_bytes, sb->data_size * SECTOR_BYTES))
		return "its data area";
	if (end > m->file_bytes)
		return "the end of the member";
	if (with_bblog &&
	    bytes_overlap(start, end,
	                  (uint64_t)((int64_t)sb->super_offset + sb->bblog_offset) * SECTOR_BYTES,
	                  (uint64_t)sb->bblog_size * SECTOR_BYTES))
		return "its bad block log";
	return NULL;
}

/* The bitmap is written at [start, end) of every member in sync or being
 * rebuilt (bitmap_offset from each one's own superblock, as md does: in
 * metadata 1.0 members of different sizes keep it in different places): it
 * must stay clear of each one's superblock, bad block log and data, or
 * the writes of one would wreck the other. 0, or -EINVAL naming the
 * member. */
static int bitmap_region_check(const struct member *m, uint64_t start, uint64_t end, char *err,
                               size_t errlen)
{
	const char *what = bitmap_clash(m, start, end, m->badblocks != NULL);
	if (!what)
		return 0;
	return errmsg_fail(-EINVAL, err, errlen,
	                   "%s: the write-intent bitmap (bytes %" PRIu64 " to %" PRIu64 ") overlaps "
	                   "%s: the superblock's bitmap_offset, data_offset or bblog_offset is "
	                   "corrupt",
	                   m->path, start, end, what);
}

int bitmap_place_added(const struct member *m, int32_t *offset_sectors, char *err,
                       size_t errlen)
{
	const struct md_super *sb = &m->sb;
	int32_t offset;

	if (sb->super_offset < sb->data_offset) {
		offset = BITMAP_OFFSET_SECTORS;
	} else {
		/* Before the log, or before the 4 KiB md keeps for one. */
		int32_t log_at = sb->bblog_size && sb->bblog_offset < 0 ? sb->bblog_offset
		                                                          : -BITMAP_BBLOG_ROOM_SECTORS;
		offset = log_at - (int32_t)BITMAP_WRITTEN_SECTORS;
	}
	int64_t start_sector = (int64_t)sb->super_offset + offset;
	const char *what = "the start of the member";
	if (start_sector >= 0)
		what = bitmap_clash(m, (uint64_t)start_sector * SECTOR_BYTES,
		                    ((uint64_t)start_sector + BITMAP_WRITTEN_SECTORS) * SECTOR_BYTES,
		                    sb->bblog_size != 0);
	if (what)
		return errmsg_fail(-ENOSPC, err, errlen,
		                   "%s: no room for a write-intent bitmap: md's place for one, the "
		                   "%u KiB %" PRId32 " sectors from the superblock, would overlap %s",
		                   m->path, BITMAP_WRITTEN_SECTORS / 2, offset, what);
	*offset_sectors = offset;
	return 0;
}

/* Each member's bitmap, len bytes from its superblock's bitmap_offset. */
static int bitmap_regions_check(const struct raid_array *a, uint64_t len, char *err,
                                size_t errlen)
{
	for (int role = 0; role < a->geo.raid_disks; role++) {
		const struct member *serving[2] = { a->slot[role], a->rebuilding[role] };
		for (int i = 0; i < 2; i++) {
			const struct member *m = serving[i];
			uint64_t start = m ? bitmap_sb_abs_off(&m->sb) : 0;
			int rc = m ? bitmap_region_check(m, start, start + len, err, errlen) : 0;
			if (rc < 0)
				return rc;
		}
	}
	return 0;
}

int bitmap_load(struct raid_array *a, const struct member *fresh, char *err, size_t errlen)
{
	uint8_t raw[MD_BITMAP_SB_BYTES];
	char why[200];
	struct write_bitmap *b;
	int rc;

	a->bitmap = NULL;
	if (!(fresh->sb.feature_map & MD_FEATURE_BITMAP_OFFSET))
		return 0;
	if ((int64_t)fresh->sb.super_offset + fresh->sb.bitmap_offset < 0)
		return errmsg_fail(-EINVAL, err, errlen,
		                   "%s: bitmap_offset %" PRId32 " sectors puts the write-intent bitmap "
		                   "before the start of the member",
		                   fresh->path, fresh->sb.bitmap_offset);
	uint64_t sb_off = bitmap_sb_abs_off(&fresh->sb);
	/* Metadata 1.2 keeps the bitmap between the superblock and the data,
	 * 1.0 between the data and the superblock at the end: one that
	 * starts in the data or past the member's end is a corrupt field,
	 * not a read error to report as EIO. */
	if (bytes_overlap(sb_off, sb_off + MD_BITMAP_SB_BYTES, fresh->data_offset_bytes,
	                  fresh->sb.data_size * SECTOR_BYTES) ||
	    sb_off + MD_BITMAP_SB_BYTES > fresh->file_bytes)
		return errmsg_fail(-EINVAL, err, errlen,
		                   "%s: bitmap_offset %" PRId32 " sectors puts the write-intent bitmap "
		                   "at byte %" PRIu64 ", in the data (sectors %" PRIu64 " + %" PRIu64
		                   ") or past the end of the member: the superblock is corrupt",
		                   fresh->path, fresh->sb.bitmap_offset, sb_off,
		                   (uint64_t)fresh->sb.data_offset, (uint64_t)fresh->sb.data_size);
	rc = member_pread_abs((struct member *)fresh, raw, sizeof(raw), sb_off);
	if (rc < 0)
		return errmsg_fail(rc, err, errlen, "%s: cannot read the write-intent bitmap: %s",
		                   fresh->path, strerror(-rc));
	b = calloc(1, sizeof(*b));
	if (!b)
		return errmsg_fail(-ENOMEM, err, errlen, "out of memory");
	pthread_mutex_init(&b->lock, NULL);
	pthread_cond_init(&b->store_done, NULL);
	rc = md_bitmap_super_decode(raw, sizeof(raw), &b->sb, why, sizeof(why));
	if (rc < 0) {
		bitmap_free(b);
		return errmsg_fail(rc, err, errlen, "%s: bad write-intent bitmap: %s", fresh->path,
		                   why);
	}
	uint8_t array_uuid[16];
	memcpy(array_uuid, fresh->sb.set_uuid, sizeof(array_uuid));
	if (fresh->super_090)
		md_super090_bitmap_uuid(fresh->sb.set_uuid, fresh->super_090_big_endian, array_uuid);
	if (memcmp(b->sb.uuid, array_uuid, 16) != 0) {
		bitmap_free(b);
		return errmsg_fail(-EINVAL, err, errlen,
		                   "%s: the write-intent bitmap belongs to another array",
		                   fresh->path);
	}
	/* md sizes the bitmap by the array's resync space, not by the
	 * superblock's sync_size (which it rewrites from it), so a write past
	 * an understated sync_size still has its bit. */
	uint64_t sync_bytes = raid_level_sync_bytes(a->ops, &a->geo);
	b->sb.sync_size = sync_bytes / SECTOR_BYTES;
	b->chunk_bytes = b->sb.chunksize;
	b->nr_bits = (sync_bytes + b->chunk_bytes - 1) / b->chunk_bytes;
	b->bits_abs_off = sb_off + MD_BITMAP_SB_BYTES;
	b->bits_bytes = (size_t)(((b->nr_bits + 7) / 8 + MD_BITMAP_SB_BYTES + SECTOR_BYTES - 1) /
	                         SECTOR_BYTES * SECTOR_BYTES) - MD_BITMAP_SB_BYTES;
	uint64_t bits_end = b->bits_abs_off + b->bits_bytes;
	if (b->nr_bits == 0 || b->nr_bits > 64u * 1024 * 1024 ||
	    bytes_overlap(sb_off, bits_end, fresh->data_offset_bytes,
	                  fresh->sb.data_size * SECTOR_BYTES) ||
	    bits_end > fresh->file_bytes) {
		uint64_t nr_bits = b->nr_bits;
		bitmap_free(b);
		return errmsg_fail(-EINVAL, err, errlen,
		                   "%s: write-intent bitmap of %" PRIu64 " bits does not fit between "
		                   "the superblock and the data",
		                   fresh->path, nr_bits);
	}
	rc = bitmap_regions_check(a, bits_end - sb_off, err, errlen);
	if (rc < 0) {
		bitmap_free(b);
		return rc;
	}
	b->bits = calloc(1, b->bits_bytes);
	b->store_buf = parity_buf_alloc(MD_BITMAP_SB_BYTES + b->bits_bytes);
	b->in_flight = calloc(b->nr_bits, sizeof(*b->in_flight));
	b->last_write_ms = calloc(b->nr_bits, sizeof(*b->last_write_ms));
	b->set_gen = calloc(b->nr_bits, sizeof(*b->set_gen));
	if (!b->bits || !b->store_buf || !b->in_flight || !b->last_write_ms || !b->set_gen) {
		bitmap_free(b);
		return errmsg_fail(-ENOMEM, err, errlen, "out of memory");
	}
	rc = member_pread_abs((struct member *)fresh, b->bits, b->bits_bytes, b->bits_abs_off);
	if (rc < 0) {
		bitmap_free(b);
		return errmsg_fail(rc, err, errlen, "%s: cannot read the bitmap bits: %s",
		                   fresh->path, strerror(-rc));
	}
	/* md: a bitmap older than the array cannot say what is out of sync. */
	if (b->sb.events < fresh->sb.events && fresh->sb.resync_offset != MD_RESYNC_NONE) {
		for (uint64_t i = 0; i < b->nr_bits; i++)
			b->bits[i / 8] |= (uint8_t)(1u << (i % 8));
		bitmap_all_set_need_store(b);
	}
	a->bitmap = b;
	return 0;
}

uint64_t bitmap_nr_bits(const struct write_bitmap *b)
{
	return b->nr_bits;
}

uint64_t bitmap_chunk_bytes(const struct write_bitmap *b)
{
	return b->chunk_bytes;
}

bool bitmap_test(const struct write_bitmap *b, uint64_t bit)
{
	return b->bits[bit / 8] & (1u << (bit % 8));
}

bool bitmap_range_dirty(struct write_bitmap *b, uint64_t sync_off, uint64_t len)
{
	bool dirty = false;
	uint64_t first = sync_off / b->chunk_bytes, last = (sync_off + len - 1) / b->chunk_bytes;

	pthread_mutex_lock(&b->lock);
	for (uint64_t i = first; i <= last && i < b->nr_bits && !dirty; i++)
		dirty = bitmap_test(b, i);
	pthread_mutex_unlock(&b->lock);
	return dirty;
}

uint64_t bitmap_events_cleared(const struct write_bitmap *b)
{
	return b->sb.events_cleared;
}

uint64_t bitmap_count_set(struct write_bitmap *b)
{
	uint64_t n = 0;
	pthread_mutex_lock(&b->lock);
	for (uint64_t i = 0; i < b->nr_bits; i++)
		n += bitmap_test(b, i);
	pthread_mutex_unlock(&b->lock);
	return n;
}

/* Write the bitmap superblock and bits as they are now to every serving
 * member, durably. Caller holds b->lock, which is dropped during the I/O;
 * waits for a store already running first. With may_fail_members, a
 * member that cannot take the store is failed out (so the caller must
 * not hold the array's state lock) and the store succeeds if the array
 * can spare it. Returns its result. */
static int bitmap_store_now_locked(struct raid_array *a, struct write_bitmap *b,
                                   bool may_fail_members)
{
	size_t len = MD_BITMAP_SB_BYTES + b->bits_bytes;
	int role_rc[RAID_MAX_MEMBERS] = { 0 };
	struct member *stored_to[RAID_MAX_MEMBERS] = { NULL };
	int rc = 0;

	while (b->storing)
		pthread_cond_wait(&b->store_done, &b->lock);
	uint8_t *buf = b->store_buf; /* only the running store touches it */
	b->storing = true;
	uint64_t gen = b->gen_wanted;
	b->sb.events = a->events;
	md_bitmap_super_encode(&b->sb, buf);
	memcpy(buf + MD_BITMAP_SB_BYTES, b->bits, b->bits_bytes);
	pthread_mutex_unlock(&b->lock);

	for (int role = 0; role < a->geo.raid_disks; role++) {
		struct member *m = a->slot[role];
		if (!m)
			continue;
		stored_to[role] = m;
		role_rc[role] = member_pwrite_abs_durable(m, buf, len, bitmap_sb_abs_off(&m->sb));
		if (role_rc[role] < 0 && rc == 0)
			rc = role_rc[role];
	}
	/* md writes the bitmap to members being rebuilt too, so that mdadm
	 * -X reads one there. Best effort: the rebuild's own writes find a
	 * failing target (and the caller may hold the state lock). */
	for (int role = 0; role < a->geo.raid_disks; role++) {
		struct member *target = a->rebuilding[role];
		if (target && target != a->slot[role])
			(void)member_pwrite_abs_durable(target, buf, len,
			                                bitmap_sb_abs_off(&target->sb));
	}

	pthread_mutex_lock(&b->lock);
	b->storing = false;
	/* Failing a member stores the superblocks and this bitmap again: the
	 * next store may start meanwhile (it goes to the others only). */
	pthread_cond_broadcast(&b->store_done);
	if (rc < 0 && may_fail_members) {
		bool absorbed = true;
		pthread_mutex_unlock(&b->lock);
		for (int role = 0; role < a->geo.raid_disks; role++)
			if (role_rc[role] < 0 &&
			    !array_member_error(a, role, stored_to[role], role_rc[role], true))
				absorbed = false;
		pthread_mutex_lock(&b->lock);
		if (absorbed)
			rc = 0;
	}
	/* A failure that may not fail members out (bitmap_store, under the
	 * state lock) is not the last word for writers waiting on this
	 * generation: they store again themselves, and may. */
	if (gen > b->gen_stored && (rc == 0 || may_fail_members)) {
		b->gen_stored = gen;
		b->last_store_rc = rc;
	}
	if (rc == 0 && gen > b->gen_stored_ok)
		b->gen_stored_ok = gen;
	if (rc < 0)
		bitmap_all_set_need_store(b); /* the next writer tries again */
	pthread_cond_broadcast(&b->store_done);
	return rc;
}

int bitmap_store(struct raid_array *a)
{
	struct write_bitmap *b = a->bitmap;
	if (!b || a->read_only)
		return 0;
	pthread_mutex_lock(&b->lock);
	b->gen_wanted++;
	/* Called with the state lock held (superblock updates): a failing
	 * member is left to the caller. */
	int rc = bitmap_store_now_locked(a, b, false);
	pthread_mutex_unlock(&b->lock);
	return rc;
}

int bitmap_start_write(struct raid_array *a, uint64_t sync_off, uint64_t len)
{
	struct write_bitmap *b = a->bitmap;
	uint64_t new_gen = 0, want = 0;
	int rc = 0;

	if (!b || len == 0)
		return 0;
	uint64_t first = sync_off / b->chunk_bytes, last = (sync_off + len - 1) / b->chunk_bytes;
	if (last >= b->nr_bits)
		last = b->nr_bits - 1;
	pthread_mutex_lock(&b->lock);
	for (uint64_t i = first; i <= last; i++) {
		b->in_flight[i]++;
		if (!bitmap_test(b, i)) {
			if (!new_gen)
				new_gen = ++b->gen_wanted; /* one for all bits set here */
			b->bits[i / 8] |= (uint8_t)(1u << (i % 8));
			b->set_gen[i] = new_gen;
		}
		if (b->set_gen[i] > want)
			want = b->set_gen[i];
	}
	/* Every store writes all bits, so any store that started after ours
	 * were set carries them. */
	if (b->gen_stored < want) {
		while (b->gen_stored < want) {
			if (b->storing)
				pthread_cond_wait(&b->store_done, &b->lock);
			else
				bitmap_store_now_locked(a, b, true);
		}
		/* The newest store may be a later one than the store that
		 * carried these bits, and may have failed where that one did
		 * not. */
		if (b->gen_stored_ok < want)
			rc = b->last_store_rc < 0 ? b->last_store_rc : -EIO;
	}
	pthread_mutex_unlock(&b->lock);
	return rc;
}

void bitmap_end_write(struct raid_array *a, uint64_t sync_off, uint64_t len)
{
	struct write_bitmap *b = a->bitmap;

	if (!b || len == 0)
		return;
	uint64_t first = sync_off / b->chunk_bytes, last = (sync_off + len - 1) / b->chunk_bytes;
	if (last >= b->nr_bits)
		last = b->nr_bits - 1;
	uint64_t now = monotonic_ms();
	pthread_mutex_lock(&b->lock);
	for (uint64_t i = first; i <= last; i++) {
		b->in_flight[i]--;
		b->last_write_ms[i] = now;
	}
	pthread_mutex_unlock(&b->lock);
}

/* Bit i may go: set, no write in flight, and its last write ended idle_ms
 * before `before_ms` (so that write was in the sync that preceded). */
static bool bit_clearable(const struct write_bitmap *b, uint64_t i, uint64_t idle_ms,
                          uint64_t before_ms)
{
	return bitmap_test(b, i) && b->in_flight[i] == 0 &&
	       b->last_write_ms[i] + idle_ms <= before_ms;
}

int bitmap_clear_idle(struct raid_array *a, uint64_t idle_ms)
{
	struct write_bitmap *b = a->bitmap;
	uint64_t sync_start_ms = monotonic_ms();
	bool any = false;

	if (!b || a->read_only || array_missing_count(a) > 0 || atomic_load(&a->resync_pending))
		return 0;
	pthread_mutex_lock(&b->lock);
	for (uint64_t i = 0; i < b->nr_bits && !any; i++)
		any = bit_clearable(b, i, idle_ms, sync_start_ms);
	pthread_mutex_unlock(&b->lock);
	if (!any)
		return 0;
	/* The data must be durable before the bits that cover it go. Writes
	 * go on meanwhile: a region written since sync_start_ms keeps its
	 * bit, which the check below sees. A member that cannot sync may
	 * have lost some of it: it is failed out and every bit stays. */
	bool synced = true, absorbed = true;
	for (int role = 0; role < a->geo.raid_disks; role++) {
		struct member *m = a->slot[role];
		int src = m ? member_sync(m) : 0;
		if (src < 0) {
			synced = false;
			absorbed &= array_member_error(a, role, m, src, true);
		}
		/* A replacement takes the writes below its copy point, and will
		 * answer for them after a crash by its recovery_offset alone. */
		struct member *copy = a->rebuilding[role];
		int crc = copy ? member_sync(copy) : 0;
		if (crc < 0) {
			synced = false;
			array_rebuild_target_failed(a, role, copy, crc);
		}
	}
	if (!synced)
		return absorbed ? 0 : -EIO; /* failed out: the array runs degraded */
	/* The check at the start, again and now for good: a member failed
	 * out since (another thread's write) was passed over by the syncs
	 * above, and its bits are what a re-add copies back. Under the state
	 * lock a failure is seen whole, the events it moved included, so
	 * events_cleared is not older than the failure either. */
	pthread_mutex_lock(&a->state_lock);
	bool degraded = array_missing_count(a) > 0;
	uint64_t events = a->events;
	pthread_mutex_unlock(&a->state_lock);
	if (degraded)
		return 0;
	pthread_mutex_lock(&b->lock);
	for (uint64_t i = 0; i < b->nr_bits; i++)
		if (bit_clearable(b, i, idle_ms, sync_start_ms))
			b->bits[i / 8] &= (uint8_t)~(1u << (i % 8));
	b->sb.events_cleared = events;
	b->gen_wanted++;
	int rc = bitmap_store_now_locked(a, b, true);
	pthread_mutex_unlock(&b->lock);
	return rc;
}
