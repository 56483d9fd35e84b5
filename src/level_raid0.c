/* level_raid0.c - md RAID0: striping in zones.
 *
 * Members of unequal size give several zones (md's create_strip_zones):
 * zone 0 stripes over every member up to the smallest one's size, each
 * further zone over the members still larger than the previous zone's end
 * on the member. Within a zone, the member for a chunk is picked from the
 * chunk number counted from the start of the array (layout "original", 1)
 * or from the start of the zone (layout "alternate", 2); with one zone the
 * two agree. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>

#include "errmsg.h"
#include "extent_io.h"
#include "level.h"
#include "md_super.h"

#define RAID0_LAYOUT_ORIGINAL 1u
#define RAID0_LAYOUT_ALTERNATE 2u

struct raid0_zone {
	uint64_t zone_end_bytes;   /* end of this zone in the volume */
	uint64_t dev_start_bytes;  /* where the zone starts on its members */
	int nr_members;
	int roles[RAID_MAX_MEMBERS];
};

struct raid0_zones {
	int nr_zones;
	struct raid0_zone zones[RAID_MAX_MEMBERS];
};

static uint64_t raid0_member_bytes(const struct raid_geometry *geo, int role)
{
	return geo->member_bytes[role] - geo->member_bytes[role] % geo->chunk_bytes;
}

static int raid0_geometry_init(struct raid_geometry *geo, void **priv, char *err, size_t errlen)
{
	struct raid0_zones *zt;
	uint64_t zone_start_on_dev = 0, volume_end = 0;

	*priv = NULL;
	if (geo->chunk_bytes == 0)
		return errmsg_fail(-EINVAL, err, errlen, "raid0 needs a chunk size");
	zt = calloc(1, sizeof(*zt));
	if (!zt)
		return errmsg_fail(-ENOMEM, err, errlen, "out of memory");
	for (;;) {
		struct raid0_zone *zone = &zt->zones[zt->nr_zones];
		uint64_t smallest = UINT64_MAX;

		for (int role = 0; role < geo->raid_disks; role++) {
			uint64_t bytes = raid0_member_bytes(geo, role);
			if (bytes <= zone_start_on_dev)
				continue;
			zone->roles[zone->nr_members++] = role;
			if (bytes < smallest)
				smallest = bytes;
		}
		if (zone->nr_members == 0)
			break;
		zone->dev_start_bytes = zone_start_on_dev;
		volume_end += (smallest - zone_start_on_dev) * (uint64_t)zone->nr_members;
		zone->zone_end_bytes = volume_end;
		zone_start_on_dev = smallest;
		zt->nr_zones++;
	}
	if (zt->nr_zones == 0) {
		free(zt);
		return errmsg_fail(-EINVAL, err, errlen,
		                   "raid0 members are smaller than one chunk");
	}
	/* md reads the layout field of raid0 only when the superblock flags it
	 * as meaningful (MD_FEATURE_RAID0_LAYOUT). */
	bool layout_known = (geo->feature_map & MD_FEATURE_RAID0_LAYOUT) &&
	                    (geo->layout == RAID0_LAYOUT_ORIGINAL ||
	                     geo->layout == RAID0_LAYOUT_ALTERNATE);
	/* With one zone, or one member past the first zone, both layouts
	 * place every chunk alike (md then ignores the layout too). */
	bool layout_matters = zt->nr_zones > 1 && zt->zones[1].nr_members > 1;
	if (layout_matters && !layout_known) {
		int nr_zones = zt->nr_zones;
		free(zt);
		return errmsg_fail(-EINVAL, err, errlen,
		                   "raid0 with members of unequal size (%d zones) needs a known "
		                   "layout (original or alternate), but the superblock does not "
		                   "record one (layout %u, feature_map 0x%x), as Linux md refuses too",
		                   nr_zones, geo->layout, geo->feature_map);
	}
	geo->array_bytes = volume_end;
	*priv = zt;
	return 0;
}

static void raid0_geometry_free(void *priv)
{
	free(priv);
}

static uint64_t raid0_usable_dev_bytes(const struct raid_geometry *geo, uint64_t bytes)
{
	return bytes - bytes % geo->chunk_bytes;
}

static void raid0_map(const struct raid_geometry *geo, const void *priv, uint64_t off,
                      struct raid_extent *out)
{
	const struct raid0_zones *zt = priv;
	const struct raid0_zone *zone = &zt->zones[0];
	uint64_t zone_start = 0;
	int z = 0;

	while (z < zt->nr_zones - 1 && off >= zt->zones[z].zone_end_bytes) {
		zone_start = zt->zones[z].zone_end_bytes;
		z++;
	}
	zone = &zt->zones[z];

	uint64_t chunk = geo->chunk_bytes;
	uint64_t in_zone = off - zone_start;
	uint64_t in_chunk = off % chunk;
	/* "original" picks the member from the array-wide chunk number; the
	 * zone starts on a chunk boundary, so the offset inside the chunk is
	 * the same either way. */
	uint64_t pick_from = (zt->nr_zones > 1 && geo->layout == RAID0_LAYOUT_ALTERNATE) ?
	                             in_zone : off;
	uint64_t member_index = (pick_from / chunk) % (uint64_t)zone->nr_members;
	uint64_t row = in_zone / (chunk * (uint64_t)zone->nr_members);

	out->nr_copies = 1;
	out->copies[0].role = zone->roles[member_index];
	out->copies[0].member_off_bytes = zone->dev_start_bytes + row * chunk + in_chunk;
	out->len_bytes = chunk - in_chunk;
}

static bool raid0_can_run(const struct raid_geometry *geo, const bool *missing)
{
	for (int role = 0; role < geo->raid_disks; role++)
		if (missing[role])
			return false;
	return true;
}

const struct raid_level_ops raid_level_raid0 = {
	.name = "raid0",
	.level = 0,
	.min_disks = 1,
	.create_min_disks = 2,
	.default_layout = RAID0_LAYOUT_ALTERNATE,
	.create_feature_map = MD_FEATURE_RAID0_LAYOUT,
	.uniform_members = false,
	.uses_chunk = true,
	.max_parity = 0,
	.geometry_init = raid0_geometry_init,
	.geometry_free = raid0_geometry_free,
	.usable_dev_bytes = raid0_usable_dev_bytes,
	.map = raid0_map,
	.can_run = raid0_can_run,
	.read = extent_io_read,
	.write = extent_io_write,
	.zero = extent_io_zero,
};
