/* cli.h - the verbs of the raidfuse program. Each returns the process
 * exit status: 0 on success, 1 on an error the message explains, 2 on a
 * usage error. */
#ifndef RAIDFUSE_CLI_H
#define RAIDFUSE_CLI_H

#include <stdbool.h>
#include <stdint.h>

#define CLI_EXIT_OK 0
#define CLI_EXIT_ERROR 1
#define CLI_EXIT_USAGE 2

int cmd_create(int argc, char **argv);
int cmd_examine(int argc, char **argv);
int cmd_mount(int argc, char **argv);
int cmd_umount(int argc, char **argv);
int cmd_status(int argc, char **argv);
int cmd_verify(int argc, char **argv);
int cmd_grow(int argc, char **argv);
int cmd_fail(int argc, char **argv);
int cmd_remove(int argc, char **argv);
int cmd_check(int argc, char **argv);
int cmd_repair(int argc, char **argv);
int cmd_wait(int argc, char **argv);
int cmd_add(int argc, char **argv);
int cmd_replace(int argc, char **argv);

/* The form mount(8) runs for an fstab line of type fuse.raidfuse:
 * `raidfuse SOURCE MOUNTPOINT [-o OPTIONS]`, SOURCE the members joined by
 * ':'. cli_is_fstab_form tells it from a verb (MOUNTPOINT is a directory). */
bool cli_is_fstab_form(int argc, char **argv);
int cmd_fstab_mount(int argc, char **argv);

/* Whether path is a raidfuse mount point, alive or with its daemon gone,
 * as the kernel's mount table says (the mount point itself is not looked
 * at: a dead FUSE mount answers ENOTCONN). */
bool cli_is_raidfuse_mount(const char *path);

/* Read MOUNT/.raidfuse/NAME into buf (NUL-terminated). 0 or -errno. */
int cli_ctl_read(const char *mount, const char *name, char *buf, size_t len);

/* The member paths of a verb that takes only paths (examine, verify):
 * argv[1..argc) with a "--" skipped, after which a path may begin with
 * '-'. Any other argument that begins with '-' is an option the verb does
 * not know: reported with the usage, -EINVAL (exit 2), rather than opened
 * as a member. --help or -h first: the usage on stdout, 1 (exit 0). On
 * success (0) *first is the index of the first path and *nr_paths their
 * count (the paths are moved together over the "--"). */
int cli_member_args(const char *verb, const char *usage, int argc, char **argv, int *first,
                    int *nr_paths);

/* Option values create and grow share, checked as mdadm takes them (a
 * bare size is KiB): 0, or -EINVAL after saying what is wrong. */
int cli_bitmap_arg(const char *verb, const char *text, bool *internal);
int cli_bitmap_chunk_arg(const char *verb, const char *text, uint64_t *bytes);
int cli_raid_devices_arg(const char *verb, const char *text, int *raid_disks);

/* Print "raidfuse VERB: message" to stderr. */
void cli_error(const char *verb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
