/* array_ctl.h - the control attributes of an array, in the spirit of md's
 * sysfs: named values to read and, for some, write. The FUSE layer shows
 * them as files under MOUNT/.raidfuse/; the CLI's verbs read and write
 * those files. Nothing here knows about FUSE. */
#ifndef RAIDFUSE_ARRAY_CTL_H
#define RAIDFUSE_ARRAY_CTL_H

#include <stdbool.h>
#include <stddef.h>

struct raid_array;
struct member;

struct array_attr {
	const char *name;
	bool writable;
	/* Text of the attribute (NUL-terminated, in buf); 0 or -errno. */
	int (*show)(struct raid_array *a, struct member *m, char *buf, size_t len);
	/* Take text written to it; 0, or -EINVAL for text it does not take,
	 * or another -errno for an action that cannot be done now. */
	int (*store)(struct raid_array *a, struct member *m, const char *text, size_t len);
};

/* Text written to attr, through its store: -EINVAL for text with a NUL
 * byte in it (the values are text; the parsers would stop at the NUL and
 * take a prefix), else what store returns. */
int array_attr_store(const struct array_attr *attr, struct raid_array *a, struct member *m,
                     const char *text, size_t len);

/* NULL-terminated tables: of the array, and of each member. */
extern const struct array_attr array_attrs[];
extern const struct array_attr member_attrs[];

/* Members known to the array (opened at assembly), by index. */
int array_member_count(const struct raid_array *a);
struct member *array_member_at(struct raid_array *a, int index);

#endif
