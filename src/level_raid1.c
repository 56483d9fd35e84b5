/* level_raid1.c - md RAID1: every active member holds the whole volume. */
#include "config.h"

#include <errno.h>

#include "errmsg.h"
#include "extent_io.h"
#include "level.h"

static int raid1_geometry_init(struct raid_geometry *geo, void **priv, char *err, size_t errlen)
{
	*priv = NULL;
	if (geo->raid_disks > RAID_MAX_COPIES)
		return errmsg_fail(-EINVAL, err, errlen,
		                   "raid1 with %d members: at most %d are supported",
		                   geo->raid_disks, RAID_MAX_COPIES);
	geo->array_bytes = geo->dev_bytes;
	if (geo->array_bytes == 0)
		return errmsg_fail(-EINVAL, err, errlen, "raid1 member size is 0");
	return 0;
}

static void raid1_geometry_free(void *priv)
{
	(void)priv;
}

static uint64_t raid1_usable_dev_bytes(const struct raid_geometry *geo, uint64_t bytes)
{
	/* mdadm rounds mirror sizes down to 64 KiB; md itself does not care. */
	(void)geo;
	return bytes & ~(uint64_t)(64 * 1024 - 1);
}

static void raid1_map(const struct raid_geometry *geo, const void *priv, uint64_t off,
                      struct raid_extent *out)
{
	(void)priv;
	out->nr_copies = geo->raid_disks;
	for (int role = 0; role < geo->raid_disks; role++) {
		out->copies[role].role = role;
		out->copies[role].member_off_bytes = off;
	}
	out->len_bytes = geo->array_bytes - off;
}

static bool raid1_can_run(const struct raid_geometry *geo, const bool *missing)
{
	for (int role = 0; role < geo->raid_disks; role++)
		if (!missing[role])
			return true;
	return false;
}

/* Every member holds the volume at the same offsets. */
static bool raid1_member_to_volume(const struct raid_geometry *geo, const void *priv, int role,
                                   uint64_t member_off, uint64_t *off)
{
	(void)priv;
	(void)role;
	*off = member_off;
	return member_off < geo->array_bytes;
}

const struct raid_level_ops raid_level_raid1 = {
	.name = "raid1",
	.level = 1,
	.min_disks = 1,
	.create_min_disks = 2,
	.default_layout = 0,
	.uniform_members = true,
	.bitmap_capable = true,
	.uses_chunk = false,
	.copies_any_count = true,
	.honours_write_mostly = true,
	.max_parity = 0,
	.mismatch_block_bytes = 64 * 1024, /* md's RESYNC_BLOCK_SIZE: r1_bio->sectors */
	.geometry_init = raid1_geometry_init,
	.geometry_free = raid1_geometry_free,
	.usable_dev_bytes = raid1_usable_dev_bytes,
	.can_resize = raid_level_resizable,
	.map = raid1_map,
	.can_run = raid1_can_run,
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
	.member_to_volume = raid1_member_to_volume,
	.resync = extent_io_resync,
};
