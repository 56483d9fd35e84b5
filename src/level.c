/* level.c - the table of RAID levels, looked up by md level number. */
#include "config.h"

#include <stddef.h>

#include "level.h"

static const struct raid_level_ops *const raid_levels[] = {
	&raid_level_linear, &raid_level_raid0, &raid_level_raid1,
	&raid_level_raid10, &raid_level_raid5, &raid_level_raid6,
};

const struct raid_level_ops *raid_level_find(int32_t level)
{
	for (size_t i = 0; i < sizeof(raid_levels) / sizeof(raid_levels[0]); i++)
		if (raid_levels[i]->level == level)
			return raid_levels[i];
	return NULL;
}

uint64_t raid_level_sync_bytes(const struct raid_level_ops *ops, const struct raid_geometry *geo)
{
	return ops->sync_by_array_bytes ? geo->array_bytes : geo->dev_bytes;
}

bool raid_level_resizable(const struct raid_geometry *geo)
{
	(void)geo;
	return true;
}
