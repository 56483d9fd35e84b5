/* level_linear.c - md "linear" (JBOD): members concatenated in role order,
 * each contributing its whole data area (rounded to the chunk when the
 * superblock sets one, as md's linear.c does). No redundancy. */
#include "config.h"

#include <errno.h>

#include "errmsg.h"
#include "extent_io.h"
#include "level.h"

static uint64_t linear_member_bytes(const struct raid_geometry *geo, int role)
{
	uint64_t bytes = geo->member_bytes[role];
	if (geo->chunk_bytes)
		bytes -= bytes % geo->chunk_bytes;
	return bytes;
}

static int linear_geometry_init(struct raid_geometry *geo, void **priv, char *err, size_t errlen)
{
	*priv = NULL;
	geo->array_bytes = 0;
	for (int role = 0; role < geo->raid_disks; role++)
		geo->array_bytes += linear_member_bytes(geo, role);
	if (geo->array_bytes == 0)
		return errmsg_fail(-EINVAL, err, errlen, "linear array has no data space");
	return 0;
}

static void linear_geometry_free(void *priv)
{
	(void)priv;
}

static uint64_t linear_usable_dev_bytes(const struct raid_geometry *geo, uint64_t bytes)
{
	return geo->chunk_bytes ? bytes - bytes % geo->chunk_bytes : bytes;
}

static void linear_map(const struct raid_geometry *geo, const void *priv, uint64_t off,
                       struct raid_extent *out)
{
	uint64_t start = 0;
	int role = 0;

	(void)priv;
	for (; role < geo->raid_disks - 1; role++) {
		uint64_t bytes = linear_member_bytes(geo, role);
		if (off < start + bytes)
			break;
		start += bytes;
	}
	out->nr_copies = 1;
	out->copies[0].role = role;
	out->copies[0].member_off_bytes = off - start;
	out->len_bytes = linear_member_bytes(geo, role) - (off - start);
}

static bool linear_can_run(const struct raid_geometry *geo, const bool *missing)
{
	for (int role = 0; role < geo->raid_disks; role++)
		if (missing[role])
			return false;
	return true;
}

const struct raid_level_ops raid_level_linear = {
	.name = "linear",
	.level = -1,
	.min_disks = 1,
	.create_min_disks = 1,
	.default_layout = 0,
	.uniform_members = false,
	.uses_chunk = false,
	.max_parity = 0,
	.geometry_init = linear_geometry_init,
	.geometry_free = linear_geometry_free,
	.usable_dev_bytes = linear_usable_dev_bytes,
	.map = linear_map,
	.can_run = linear_can_run,
	.read = extent_io_read,
	.write = extent_io_write,
	.zero = extent_io_zero,
};
