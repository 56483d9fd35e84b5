/* level_raid10.c - md RAID10: near, far and offset copies (raid10.c's
 * __raid10_find_phys), including md's "far sets" of layout versions 0-2.
 *
 * layout = near_copies | far_copies << 8 | offset flag << 16 | version << 17.
 * Near copies sit side by side in one row of chunks; far copies repeat the
 * whole pattern a stride further down each member (one chunk further with
 * the offset flag), shifted by near_copies members.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>

#include "array.h"
#include "errmsg.h"
#include "extent_io.h"
#include "level.h"

struct raid10_geo {
	int near_copies;
	int far_copies;
	bool far_offset;
	int far_set_size;
	uint64_t stride_chunks;   /* distance between far copies, in chunks */
	bool inverse_exact;       /* member_to_volume undoes map everywhere */
};

static bool raid10_inverse_exact(const struct raid_geometry *geo, const struct raid10_geo *r10);

static int raid10_decode_layout(const struct raid_geometry *geo, struct raid10_geo *r10,
                                char *err, size_t errlen)
{
	uint32_t layout = geo->layout;

	r10->near_copies = (int)(layout & 0xff);
	r10->far_copies = (int)((layout >> 8) & 0xff);
	r10->far_offset = (layout >> 16) & 1;
	if (r10->near_copies < 1 || r10->far_copies < 1)
		return errmsg_fail(-EINVAL, err, errlen,
		                   "raid10 layout 0x%x has no copies (near %d, far %d)", layout,
		                   r10->near_copies, r10->far_copies);
	switch (layout >> 17) {
	case 0:
		r10->far_set_size = geo->raid_disks;
		break;
	case 1:
		r10->far_set_size = geo->raid_disks / r10->far_copies;
		break;
	case 2:
		r10->far_set_size = r10->far_copies * r10->near_copies;
		break;
	default:
		return errmsg_fail(-EINVAL, err, errlen, "raid10 layout 0x%x: unknown version %u",
		                   layout, layout >> 17);
	}
	if (r10->far_set_size < 1)
		r10->far_set_size = 1;
	int copies = r10->near_copies * r10->far_copies;
	if (copies < 2 || copies > geo->raid_disks || copies > RAID_MAX_COPIES)
		return errmsg_fail(-EINVAL, err, errlen,
		                   "raid10 layout 0x%x gives %d copies; md needs 2 to %d with %d "
		                   "members",
		                   layout, copies,
		                   geo->raid_disks < RAID_MAX_COPIES ? geo->raid_disks
		                                                     : RAID_MAX_COPIES,
		                   geo->raid_disks);
	return 0;
}

static int raid10_geometry_init(struct raid_geometry *geo, void **priv, char *err, size_t errlen)
{
	struct raid10_geo *r10;
	int rc;

	*priv = NULL;
	uint32_t chunk = geo->chunk_bytes;
	if (chunk < 4096 || (chunk & (chunk - 1)))
		return errmsg_fail(-EINVAL, err, errlen,
		                   "chunk of %u bytes: md's raid10 needs a power of two of at least "
		                   "4 KiB",
		                   chunk);
	r10 = calloc(1, sizeof(*r10));
	if (!r10)
		return errmsg_fail(-ENOMEM, err, errlen, "out of memory");
	rc = raid10_decode_layout(geo, r10, err, errlen);
	if (rc < 0) {
		free(r10);
		return rc;
	}
	/* raid10.c calc_sectors(): array chunks, then the chunks each member
	 * uses (rounded up), which sets the far stride. */
	uint64_t dev_chunks = geo->dev_bytes / geo->chunk_bytes;
	uint64_t array_chunks = dev_chunks / (uint64_t)r10->far_copies * (uint64_t)geo->raid_disks /
	                        (uint64_t)r10->near_copies;
	uint64_t used_chunks = array_chunks * (uint64_t)(r10->near_copies * r10->far_copies);
	used_chunks = (used_chunks + (uint64_t)geo->raid_disks - 1) / (uint64_t)geo->raid_disks;
	r10->stride_chunks = r10->far_offset ? 1 : used_chunks / (uint64_t)r10->far_copies;
	geo->array_bytes = array_chunks * geo->chunk_bytes;
	if (geo->array_bytes == 0) {
		free(r10);
		return errmsg_fail(-EINVAL, err, errlen, "raid10 members are too small");
	}
	r10->inverse_exact = raid10_inverse_exact(geo, r10);
	*priv = r10;
	return 0;
}

static void raid10_geometry_free(void *priv)
{
	free(priv);
}

static uint64_t raid10_usable_dev_bytes(const struct raid_geometry *geo, uint64_t bytes)
{
	return bytes - bytes % geo->chunk_bytes;
}

/* Far copies sit a fraction of the member apart: a new size moves them
 * (md's raid10_resize refuses far layouts too). Near and offset copies
 * keep their places. */
static bool raid10_can_resize(const struct raid_geometry *geo)
{
	int far_copies = (int)((geo->layout >> 8) & 0xff);
	bool far_offset = (geo->layout >> 16) & 1;
	return far_copies <= 1 || far_offset;
}

static void raid10_map(const struct raid_geometry *geo, const void *priv, uint64_t off,
                       struct raid_extent *out)
{
	const struct raid10_geo *r10 = priv;
	uint64_t chunk = geo->chunk_bytes;
	uint64_t in_chunk = off % chunk;
	uint64_t first = (off / chunk) * (uint64_t)r10->near_copies;
	uint64_t stripe = first / (uint64_t)geo->raid_disks;
	int dev = (int)(first % (uint64_t)geo->raid_disks);
	int last_set_start = (geo->raid_disks / r10->far_set_size - 1) * r10->far_set_size;
	int last_set_size = r10->far_set_size + geo->raid_disks % r10->far_set_size;
	int slot = 0;

	if (r10->far_offset)
		stripe *= (uint64_t)r10->far_copies;
	uint64_t member_off = stripe * chunk + in_chunk;

	for (int n = 0; n < r10->near_copies; n++) {
		int d = dev;
		uint64_t s = member_off;

		out->copies[slot].role = d;
		out->copies[slot].member_off_bytes = s;
		slot++;
		for (int f = 1; f < r10->far_copies; f++) {
			int set = d / r10->far_set_size;

			d += r10->near_copies;
			if ((geo->raid_disks % r10->far_set_size) && d > last_set_start) {
				d -= last_set_start;
				d %= last_set_size;
				d += last_set_start;
			} else {
				d %= r10->far_set_size;
				d += r10->far_set_size * set;
			}
			s += r10->stride_chunks * chunk;
			out->copies[slot].role = d;
			out->copies[slot].member_off_bytes = s;
			slot++;
		}
		dev++;
		if (dev >= geo->raid_disks) {
			dev = 0;
			member_off += chunk;
		}
	}
	out->nr_copies = slot;
	out->len_bytes = chunk - in_chunk;
}

/* The array runs while every chunk keeps at least one copy: try each chunk
 * position of one full cycle of the pattern. */
static bool raid10_can_run(const struct raid_geometry *geo, const bool *missing)
{
	struct raid10_geo r10;
	struct raid_extent ext;
	char err[8];
	int nr_missing = 0;

	for (int role = 0; role < geo->raid_disks; role++)
		nr_missing += missing[role];
	if (nr_missing == 0)
		return true;
	if (raid10_decode_layout(geo, &r10, err, sizeof(err)) < 0)
		return false;
	r10.stride_chunks = 1; /* the member pattern does not depend on the stride */
	uint64_t cycle = (uint64_t)geo->raid_disks * (uint64_t)r10.far_set_size;
	for (uint64_t c = 0; c < cycle; c++) {
		struct raid_geometry probe = *geo;
		bool alive = false;

		probe.array_bytes = UINT64_MAX;
		raid10_map(&probe, &r10, c * geo->chunk_bytes, &ext);
		for (int i = 0; i < ext.nr_copies; i++)
			if (!missing[ext.copies[i].role])
				alive = true;
		if (!alive)
			return false;
	}
	return true;
}

/* The volume offset whose copy lies at member_off of role: raid10_map
 * undone, step by step (md's raid10_find_virt). Positions past what the
 * copies use come out as some other chunk's place or past the volume's
 * end; mapping the answer forward again tells them apart, since every
 * used position maps back onto itself. */
static bool raid10_member_to_volume(const struct raid_geometry *geo, const void *priv, int role,
                                    uint64_t member_off, uint64_t *off)
{
	const struct raid10_geo *r10 = priv;
	uint64_t chunk = geo->chunk_bytes;
	uint64_t member_chunk = member_off / chunk;
	int set_size = r10->far_set_size;
	int set_start = role / set_size * set_size;
	int dev = role;

	if (geo->raid_disks % r10->far_set_size) {
		int last_set_start = (geo->raid_disks / r10->far_set_size - 1) * r10->far_set_size;
		if (dev >= last_set_start) {
			set_start = last_set_start;
			set_size = r10->far_set_size + geo->raid_disks % r10->far_set_size;
		}
	}
	if (r10->far_offset) {
		/* Far copies of a stripe sit in the chunks right below it. */
		int far = (int)(member_chunk % (uint64_t)r10->far_copies);
		member_chunk /= (uint64_t)r10->far_copies;
		dev -= far * r10->near_copies;
		if (dev < set_start)
			dev += set_size;
	} else {
		while (member_chunk >= r10->stride_chunks) {
			member_chunk -= r10->stride_chunks;
			if (dev < r10->near_copies + set_start)
				dev += set_size - r10->near_copies;
			else
				dev -= r10->near_copies;
		}
	}
	uint64_t volume_chunk = (member_chunk * (uint64_t)geo->raid_disks + (uint64_t)dev) /
	                        (uint64_t)r10->near_copies;
	uint64_t at = volume_chunk * chunk + member_off % chunk;
	if (at >= geo->array_bytes)
		return false;
	struct raid_extent ext;
	raid10_map(geo, priv, at, &ext);
	for (int c = 0; c < ext.nr_copies; c++)
		if (ext.copies[c].role == role && ext.copies[c].member_off_bytes == member_off) {
			*off = at;
			return true;
		}
	return false;
}

/* Whether member_to_volume finds every copy map places. md's inverse
 * does not hold for every layout it accepts (version-1 offset layouts
 * whose far sets are smaller than the copies, which md warns about): a
 * rebuild walking such a member would take a used chunk for an unused
 * one and skip it. The pattern repeats within a few cycles of the
 * members, so its start and its end (where the far stride ends) are
 * enough to tell. */
static bool raid10_inverse_exact(const struct raid_geometry *geo, const struct raid10_geo *r10)
{
	uint64_t chunks = geo->array_bytes / geo->chunk_bytes;
	uint64_t span = 64u * (uint64_t)geo->raid_disks * (uint64_t)r10->far_copies *
	                (uint64_t)r10->near_copies;

	for (uint64_t c = 0; c < chunks; c++) {
		if (c == span && chunks > 2 * span)
			c = chunks - span;
		struct raid_extent ext;
		uint64_t at = c * geo->chunk_bytes, off;
		raid10_map(geo, r10, at, &ext);
		for (int i = 0; i < ext.nr_copies; i++)
			if (!raid10_member_to_volume(geo, r10, ext.copies[i].role,
			                             ext.copies[i].member_off_bytes, &off) ||
			    off != at)
				return false;
	}
	return true;
}

static bool raid10_can_recover(const struct raid_array *a)
{
	const struct raid10_geo *r10 = a->level_priv;
	return r10->inverse_exact;
}

const struct raid_level_ops raid_level_raid10 = {
	.name = "raid10",
	.level = 10,
	.min_disks = 2,
	.create_min_disks = 2,
	.default_layout = 0x102,
	.uniform_members = true,
	.bitmap_capable = true,
	.sync_by_array_bytes = true,
	.uses_chunk = true,
	.max_parity = 0,
	/* md's r10_bio: 64 KiB, and no more than the chunk (extents end there) */
	.mismatch_block_bytes = 64 * 1024,
	.geometry_init = raid10_geometry_init,
	.geometry_free = raid10_geometry_free,
	.usable_dev_bytes = raid10_usable_dev_bytes,
	.can_resize = raid10_can_resize,
	.map = raid10_map,
	.can_run = raid10_can_run,
	.read = extent_io_read,
	.write = extent_io_write,
	.zero = extent_io_zero,
	.check = extent_io_check,
	.scrub_units = extent_io_scrub_units,
	.scrub_begin = extent_io_scrub_begin,
	.scrub_unit = extent_io_scrub_unit,
	.scrub_end = extent_io_scrub_end,
	.recover_unit = extent_io_recover_unit,
	.recover_units = extent_io_recover_units,
	.member_to_volume = raid10_member_to_volume,
	.can_recover = raid10_can_recover,
	.resync = extent_io_resync,
};
