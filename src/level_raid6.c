/* level_raid6.c - md RAID6 layouts (raid5.c raid5_compute_sector, level 6)
 * and the Q syndrome order of each row (raid6_d0 / raid6_idx_to_slot):
 * data slots are numbered from the member after Q, cyclically, skipping P
 * and Q, so Q = sum over data of g^slot * D. The DDF layouts (8-10) number
 * slots differently and are refused. */
#include "config.h"

#include <errno.h>

#include "errmsg.h"
#include "level.h"
#include "stripe_io.h"

enum {
	RAID6_LEFT_ASYMMETRIC = 0,
	RAID6_RIGHT_ASYMMETRIC = 1,
	RAID6_LEFT_SYMMETRIC = 2,
	RAID6_RIGHT_SYMMETRIC = 3,
	RAID6_PARITY_0 = 4,
	RAID6_PARITY_N = 5,
	RAID6_LEFT_ASYMMETRIC_6 = 16,
	RAID6_RIGHT_ASYMMETRIC_6 = 17,
	RAID6_LEFT_SYMMETRIC_6 = 18,
	RAID6_RIGHT_SYMMETRIC_6 = 19,
	RAID6_PARITY_0_6 = 20,
};

static bool raid6_layout_known(uint32_t layout)
{
	return layout <= RAID6_PARITY_N ||
	       (layout >= RAID6_LEFT_ASYMMETRIC_6 && layout <= RAID6_PARITY_0_6);
}

static int raid6_geometry_init(struct raid_geometry *geo, void **priv, char *err, size_t errlen)
{
	*priv = NULL;
	if (!raid6_layout_known(geo->layout))
		return errmsg_fail(-EINVAL, err, errlen,
		                   "raid6 layout %u is not supported (0-5 and 16-20; the DDF "
		                   "layouts 8-10 are not)",
		                   geo->layout);
	return stripe_geometry_init(geo, 2, err, errlen);
}

static void raid6_geometry_free(void *priv)
{
	(void)priv;
}

/* Member of data chunk dd in a row, and the P and Q members. */
static int raid6_place(uint32_t layout, int disks, uint64_t row, int dd, int *pd, int *qd)
{
	int data_disks = disks - 2;
	int stripe_mod = (int)(row % (uint64_t)disks);
	int stripe_mod_5 = (int)(row % (uint64_t)(disks - 1)); /* the "_6" layouts */

	switch (layout) {
	case RAID6_LEFT_ASYMMETRIC:
	case RAID6_RIGHT_ASYMMETRIC:
		*pd = layout == RAID6_LEFT_ASYMMETRIC ? disks - 1 - stripe_mod : stripe_mod;
		*qd = *pd + 1;
		if (*pd == disks - 1) {
			*qd = 0;
			return dd + 1;
		}
		return dd >= *pd ? dd + 2 : dd;
	case RAID6_LEFT_SYMMETRIC:
	case RAID6_RIGHT_SYMMETRIC:
		*pd = layout == RAID6_LEFT_SYMMETRIC ? disks - 1 - stripe_mod : stripe_mod;
		*qd = (*pd + 1) % disks;
		return (*pd + 2 + dd) % disks;
	case RAID6_PARITY_0:
		*pd = 0;
		*qd = 1;
		return dd + 2;
	case RAID6_PARITY_N:
		*pd = data_disks;
		*qd = data_disks + 1;
		return dd;
	case RAID6_LEFT_ASYMMETRIC_6:
	case RAID6_RIGHT_ASYMMETRIC_6:
		*pd = layout == RAID6_LEFT_ASYMMETRIC_6 ? data_disks - stripe_mod_5 : stripe_mod_5;
		*qd = disks - 1;
		return dd >= *pd ? dd + 1 : dd;
	case RAID6_LEFT_SYMMETRIC_6:
	case RAID6_RIGHT_SYMMETRIC_6:
		*pd = layout == RAID6_LEFT_SYMMETRIC_6 ? data_disks - stripe_mod_5 : stripe_mod_5;
		*qd = disks - 1;
		return (*pd + 1 + dd) % (disks - 1);
	default: /* RAID6_PARITY_0_6 */
		*pd = 0;
		*qd = disks - 1;
		return dd + 1;
	}
}

static void raid6_row_layout(const struct raid_geometry *geo, uint64_t row,
                             struct row_layout *out)
{
	int disks = geo->raid_disks;
	int slot_of_disk[RAID_MAX_MEMBERS];
	int pd = 0, qd = 0;

	out->nr_data = disks - 2;
	for (int k = 0; k < out->nr_data; k++)
		out->data_role[k] = raid6_place(geo->layout, disks, row, k, &pd, &qd);
	out->p_role = pd;
	out->q_role = qd;
	out->member_off_bytes = row * geo->chunk_bytes;

	int first = qd == disks - 1 ? 0 : qd + 1;
	int slot = 0;
	for (int i = 0, disk = first; i < disks; i++, disk = (disk + 1) % disks)
		if (disk != pd && disk != qd)
			slot_of_disk[disk] = slot++;
	for (int k = 0; k < out->nr_data; k++)
		out->data_qslot[k] = slot_of_disk[out->data_role[k]];
}

static bool raid6_can_run(const struct raid_geometry *geo, const bool *missing)
{
	int nr_missing = 0;
	for (int role = 0; role < geo->raid_disks; role++)
		nr_missing += missing[role];
	return nr_missing <= 2;
}

const struct raid_level_ops raid_level_raid6 = {
	.name = "raid6",
	.level = 6,
	.min_disks = 4,
	.create_min_disks = 4,
	.default_layout = 2,
	.uniform_members = true,
	.bitmap_capable = true,
	.uses_chunk = true,
	.max_parity = 2,
	.geometry_init = raid6_geometry_init,
	.geometry_free = raid6_geometry_free,
	.usable_dev_bytes = stripe_usable_dev_bytes,
	.can_resize = raid_level_resizable,
	.map = stripe_map,
	.row_layout = raid6_row_layout,
	.can_run = raid6_can_run,
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
