/* level_raid5.c - md RAID5 layouts (raid5.c raid5_compute_sector, level 5):
 * where the data chunks and the parity chunk of each row live.
 * The row I/O itself is the shared stripe engine (stripe_io.c). */
#include "config.h"

#include <errno.h>

#include "errmsg.h"
#include "level.h"
#include "stripe_io.h"

enum {
	RAID5_LEFT_ASYMMETRIC = 0,
	RAID5_RIGHT_ASYMMETRIC = 1,
	RAID5_LEFT_SYMMETRIC = 2,
	RAID5_RIGHT_SYMMETRIC = 3,
	RAID5_PARITY_0 = 4,
	RAID5_PARITY_N = 5,
};

static int raid5_geometry_init(struct raid_geometry *geo, void **priv, char *err, size_t errlen)
{
	*priv = NULL;
	if (geo->layout > RAID5_PARITY_N)
		return errmsg_fail(-EINVAL, err, errlen,
		                   "raid5 layout %u is not supported (0-5: left-asymmetric, "
		                   "right-asymmetric, left-symmetric, right-symmetric, parity-first, "
		                   "parity-last)",
		                   geo->layout);
	return stripe_geometry_init(geo, 1, err, errlen);
}

static void raid5_geometry_free(void *priv)
{
	(void)priv;
}

static void raid5_row_layout(const struct raid_geometry *geo, uint64_t row,
                             struct row_layout *out)
{
	int disks = geo->raid_disks;
	int data_disks = disks - 1;
	int stripe_mod = (int)(row % (uint64_t)disks);
	int pd;

	switch (geo->layout) {
	case RAID5_LEFT_ASYMMETRIC:
		pd = data_disks - stripe_mod;
		break;
	case RAID5_RIGHT_ASYMMETRIC:
		pd = stripe_mod;
		break;
	case RAID5_LEFT_SYMMETRIC:
		pd = data_disks - stripe_mod;
		break;
	case RAID5_RIGHT_SYMMETRIC:
		pd = stripe_mod;
		break;
	case RAID5_PARITY_0:
		pd = 0;
		break;
	default: /* RAID5_PARITY_N */
		pd = data_disks;
		break;
	}
	bool symmetric = geo->layout == RAID5_LEFT_SYMMETRIC || geo->layout == RAID5_RIGHT_SYMMETRIC;
	for (int k = 0; k < data_disks; k++) {
		int disk = symmetric ? (pd + 1 + k) % disks : (k >= pd ? k + 1 : k);
		out->data_role[k] = disk;
		out->data_qslot[k] = k;
	}
	out->nr_data = data_disks;
	out->p_role = pd;
	out->q_role = -1;
	out->member_off_bytes = row * geo->chunk_bytes;
}

static bool raid5_can_run(const struct raid_geometry *geo, const bool *missing)
{
	int nr_missing = 0;
	for (int role = 0; role < geo->raid_disks; role++)
		nr_missing += missing[role];
	return nr_missing <= 1;
}

const struct raid_level_ops raid_level_raid5 = {
	.name = "raid5",
	.level = 5,
	.min_disks = 2,
	.create_min_disks = 3,
	.default_layout = 2,
	.uniform_members = true,
	.bitmap_capable = true,
	.uses_chunk = true,
	.max_parity = 1,
	.geometry_init = raid5_geometry_init,
	.geometry_free = raid5_geometry_free,
	.usable_dev_bytes = stripe_usable_dev_bytes,
	.can_resize = raid_level_resizable,
	.map = stripe_map,
	.row_layout = raid5_row_layout,
	.can_run = raid5_can_run,
	.read = stripe_io_read,
	.write = stripe_io_write,
	.zero = stripe_io_zero,
	.check = stripe_io_check,
	.resync = stripe_io_resync,
	.attach = stripe_io_attach,
	.scrub_units = stripe_io_scrub_units,
	.scrub_begin = stripe_io_scrub_begin,
	.scrub_unit = stripe_io_scrub_unit,
	.scrub_end = stripe_io_scrub_end,
	.recover_unit = stripe_io_recover_unit,
	.flush = stripe_io_flush,
	.detach = stripe_io_detach,
	.status = stripe_io_status,
};
