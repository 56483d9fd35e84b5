/* array_internal.h - what array.c and array_assemble.c share and nothing
 * else uses: the array's own life cycle, not part of the engine's API.
 */
#ifndef RAIDFUSE_ARRAY_INTERNAL_H
#define RAIDFUSE_ARRAY_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "array.h"

/* A member whose superblock follows the array's state: in sync, being
 * rebuilt, or a spare; not one left out or failed. */
bool member_is_live(const struct member *m);

/* Log that a member's partition was found through its disk's backup GPT. */
void array_note_partition_backup(struct raid_array *a, const struct member *m);

/* Write the array state to every live member: events bumped, dirty or
 * clean, roles. Caller holds state_lock. */
int array_super_sync(struct raid_array *a, bool clean);

/* Set dev_roles[dev_number] in every live member's superblock (written
 * by the next array_super_sync). Caller holds state_lock. */
void array_roles_set(struct raid_array *a, uint32_t dev_number, uint16_t role);

/* Why no member can be rebuilt online on this array now (an error with
 * a message in err), or 0. */
int array_rebuild_refusal(const struct raid_array *a, char *err, size_t errlen);

/* Stop the threads, close the members and free the array: a failed
 * assembly's undo, and array_stop's last step. */
void array_free(struct raid_array *a);

#endif
