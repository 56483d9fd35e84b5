/* level.h - the RAID level ops table.
 *
 * A level is a small file that answers geometry questions: how large the
 * array is, where a volume byte lives (all its copies), and for parity
 * levels which chunks form a row and where P and Q are. Generic code (the
 * engine, the CLI, the FUSE layer) never switches on the level number; it
 * looks the ops table up once and calls through it.
 */
#ifndef RAIDFUSE_LEVEL_H
#define RAIDFUSE_LEVEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RAID_MAX_MEMBERS 64
#define RAID_MAX_COPIES 8
#define SECTOR_BYTES 512u

struct raid_array;
struct member;

/* The shape of an array, as the superblocks describe it. */
struct raid_geometry {
	int32_t level;
	uint32_t layout;
	uint32_t feature_map;                    /* superblock features (md_super.h) */
	uint32_t chunk_bytes;                    /* 0 for levels without chunks */
	int raid_disks;
	uint64_t dev_bytes;                      /* bytes used on each member (sb size) */
	uint64_t member_bytes[RAID_MAX_MEMBERS]; /* data bytes of the member in each role */
	uint64_t array_bytes;                    /* filled in by geometry_init */
};

/* Where a run of volume bytes lives. The run [off, off + len_bytes) maps
 * linearly onto every copy; copies[0] is the primary. */
struct raid_extent {
	uint64_t len_bytes;
	int nr_copies;
	struct {
		int role;                        /* slot in the array */
		uint64_t member_off_bytes;       /* relative to the member's data area */
	} copies[RAID_MAX_COPIES];
};

/* One row (stripe) of a parity level: its data chunks in volume order, its
 * parity chunks, and the Q syndrome slot of each data chunk. All chunks of
 * a row sit at the same offset on their members. */
struct row_layout {
	int nr_data;
	int p_role;                              /* member holding P */
	int q_role;                              /* member holding Q, or -1 (RAID5) */
	int data_role[RAID_MAX_MEMBERS];         /* data chunk k -> member role */
	int data_qslot[RAID_MAX_MEMBERS];        /* data chunk k -> syndrome slot */
	uint64_t member_off_bytes;               /* offset of the row on each member */
};

struct raid_level_ops {
	const char *name;                        /* "raid5", as mdadm prints it */
	int32_t level;                           /* md level number */
	int min_disks;                           /* fewest raid_disks md accepts */
	int create_min_disks;                    /* fewest that `create` makes */
	uint32_t default_layout;                 /* layout `create` uses */
	uint32_t create_feature_map;             /* superblock features `create` sets */
	bool uniform_members;                    /* every member holds dev_bytes (sb size) */
	bool bitmap_capable;                     /* md keeps a write-intent bitmap here */
	/* md's resync address space, which the bitmap's bits cover: member
	 * bytes (raid1/4/5/6), or volume bytes (raid10, whose copies sit at
	 * different member offsets). */
	bool sync_by_array_bytes;
	bool uses_chunk;                         /* chunk size is meaningful */
	/* raid_disks can change with no byte moving (raid1: each member holds
	 * the whole volume), as mdadm --grow --raid-devices does for raid1;
	 * a new role waits for a member to be added and rebuilt. */
	bool copies_any_count;
	/* md reads a write-mostly member only when no other copy is there
	 * (raid1; md's other levels keep the flag and ignore it). */
	bool honours_write_mostly;
	int max_parity;                          /* parity chunks per row (0, 1, 2) */
	/* What md's check counts where a copy differs: the whole resync
	 * block it compared (raid1: 64 KiB, bytes of the volume), or 0 for a
	 * 4 KiB page (8 sectors), as md's raid5/6 count a stripe. */
	uint32_t mismatch_block_bytes;

	/* Check layout and chunk, compute geo->array_bytes, and build any
	 * private tables (raid0 zones). Returns 0 or -EINVAL with err set to a
	 * message naming the field that is wrong. */
	int (*geometry_init)(struct raid_geometry *geo, void **priv, char *err, size_t errlen);
	void (*geometry_free)(void *priv);

	/* Bytes each member needs for a given per-member size at create time
	 * (rounding down to whole chunks as md does). */
	uint64_t (*usable_dev_bytes)(const struct raid_geometry *geo, uint64_t member_data_bytes);

	/* Whether the members' used size can grow in place (mdadm --grow
	 * --size) with every byte already there keeping its place; NULL:
	 * never (linear and raid0, which md does not resize either). */
	bool (*can_resize)(const struct raid_geometry *geo);

	/* Map volume offset off (< array_bytes) to an extent. Extents never
	 * cross a chunk boundary. */
	void (*map)(const struct raid_geometry *geo, const void *priv, uint64_t off,
	            struct raid_extent *out);

	/* Parity levels only (NULL otherwise): rows of nr_data chunks. */
	void (*row_layout)(const struct raid_geometry *geo, uint64_t row, struct row_layout *out);

	/* Whether the array can serve data with the roles in missing[] gone. */
	bool (*can_run)(const struct raid_geometry *geo, const bool *missing);

	/* Engine entry points; off + len <= array_bytes. 0 or -errno. */
	int (*read)(struct raid_array *a, void *buf, size_t len, uint64_t off);
	int (*write)(struct raid_array *a, const void *buf, size_t len, uint64_t off);
	/* Zeros over [off, off + len), as a write of zeros would leave them,
	 * with member space freed where the members can (a discard of the
	 * volume: fstrim, mkfs). NULL: not offered (EOPNOTSUPP). */
	int (*zero)(struct raid_array *a, size_t len, uint64_t off);
	/* Recompute redundancy from the data for everything at offsets
	 * [sync_lo, sync_hi) of the resync address space (see
	 * sync_by_array_bytes), after an unclean stop. NULL for levels
	 * without redundancy. */
	int (*resync)(struct raid_array *a, uint64_t sync_lo, uint64_t sync_hi);

	/* Compare redundancy with data over the whole array, reading the
	 * members (not any cache); count mismatched sectors, 8 per 4 KiB
	 * page (md's raid5/6 count so; its raid1/raid10 count their whole
	 * resync block). A degraded array is compared over the redundancy it
	 * has left. NULL for levels without redundancy. */
	int (*check)(struct raid_array *a, uint64_t *mismatch_sectors);

	/* Online scrub (md's check/repair) in units the level chooses (rows,
	 * regions): how many there are; one unit checked (and, with repair,
	 * its redundancy rewritten from the data) while user I/O to it waits.
	 * ctx comes from scrub_begin and goes to scrub_end. NULL for levels
	 * without redundancy. */
	uint64_t (*scrub_units)(const struct raid_array *a);
	void *(*scrub_begin)(struct raid_array *a);
	int (*scrub_unit)(struct raid_array *a, void *ctx, uint64_t unit, bool repair,
	                  uint64_t *mismatch_sectors);
	void (*scrub_end)(struct raid_array *a, void *ctx);
	/* Recovery: rebuild role's part of a unit onto target (its member
	 * bytes that are not rebuilt yet), then raise rebuilt_bytes[role].
	 * Units run in member order, so rebuilt bytes only grow (md's
	 * recovery_offset); recover_units counts them (NULL: scrub_units).
	 * 1: nothing needed copying (rebuilt before a restart, or clean in
	 * the bitmap of a re-added member), not counted in the sync's rate,
	 * as md does not count skipped sectors in its speed. */
	int (*recover_unit)(struct raid_array *a, void *ctx, uint64_t unit, int role,
	                    struct member *target);
	uint64_t (*recover_units)(const struct raid_array *a);
	/* Whether recovery onto this layout is offered online. NULL: yes. */
	bool (*can_recover)(const struct raid_array *a);

	/* Copy levels (raid1, raid10): the volume offset whose copy lies at
	 * member_off of role's data area (md's raid10_find_virt), or false
	 * where that member byte holds no copy (the unused tail). */
	bool (*member_to_volume)(const struct raid_geometry *geo, const void *priv, int role,
	                         uint64_t member_off, uint64_t *off);

	/* Run-time state of the level (the stripe cache of RAID5/6): made at
	 * assembly, written out by flush (fsync), freed by detach; status
	 * appends "key: value" lines. All NULL for levels without any. */
	int (*attach)(struct raid_array *a);
	int (*flush)(struct raid_array *a);
	void (*detach)(struct raid_array *a);
	size_t (*status)(struct raid_array *a, char *buf, size_t len);
};

const struct raid_level_ops *raid_level_find(int32_t level);

/* can_resize for levels whose layout does not depend on the size. */
bool raid_level_resizable(const struct raid_geometry *geo);

/* Bytes of md's resync address space (what a write-intent bitmap covers):
 * the volume for raid10, each member's data area otherwise. */
uint64_t raid_level_sync_bytes(const struct raid_level_ops *ops, const struct raid_geometry *geo);

extern const struct raid_level_ops raid_level_linear;
extern const struct raid_level_ops raid_level_raid0;
extern const struct raid_level_ops raid_level_raid1;
extern const struct raid_level_ops raid_level_raid10;
extern const struct raid_level_ops raid_level_raid5;
extern const struct raid_level_ops raid_level_raid6;

#endif
