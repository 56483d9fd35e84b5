/* array_ctl.c - see array_ctl.h. Values are plain text with a newline, as
 * in sysfs; status.json is one JSON object. */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "array_ctl.h"
#include "bitmap.h"
#include "member_badblocks.h"
#include "member_fault.h"
#include "sync.h"
#include "textbuf.h"

int array_member_count(const struct raid_array *a)
{
	return a->nr_members;
}

struct member *array_member_at(struct raid_array *a, int index)
{
	return index >= 0 && index < a->nr_members ? &a->members[index] : NULL;
}

static int show_printf(char *buf, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int show_printf(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(buf, len, fmt, ap);
	va_end(ap);
	return n < 0 ? -EIO : 0;
}

/* The first word of text (up to a newline or space). */
static bool text_is(const char *text, size_t len, const char *word)
{
	size_t w = strlen(word);
	while (len > 0 && (text[len - 1] == '\n' || text[len - 1] == ' '))
		len--;
	return len == w && memcmp(text, word, w) == 0;
}

int array_attr_store(const struct array_attr *attr, struct raid_array *a, struct member *m,
                     const char *text, size_t len)
{
	if (!attr->store)
		return -EACCES;
	if (memchr(text, '\0', len))
		return -EINVAL;
	return attr->store(a, m, text, len);
}

static int parse_uint(const char *text, size_t len, unsigned *out)
{
	char tmp[32];
	char *end;

	if (len == 0 || len >= sizeof(tmp))
		return -EINVAL;
	memcpy(tmp, text, len);
	tmp[len] = '\0';
	unsigned long v = strtoul(tmp, &end, 10);
	while (*end == '\n' || *end == ' ')
		end++;
	if (*end || end == tmp || v > 100000000ul)
		return -EINVAL;
	*out = (unsigned)v;
	return 0;
}

/* An absolute path written to an attribute (a trailing newline is fine). */
static int ctl_path_from_text(const char *text, size_t len, char *path, size_t pathlen)
{
	while (len > 0 && (text[len - 1] == '\n' || text[len - 1] == ' '))
		len--;
	if (len == 0 || len >= pathlen || text[0] != '/')
		return -EINVAL;
	memcpy(path, text, len);
	path[len] = '\0';
	return 0;
}

/* ---- array attributes ------------------------------------------------ */

static int show_status(struct raid_array *a, struct member *m, char *buf, size_t len)
{
	(void)m;
	array_status_text(a, buf, len);
	return 0;
}

/* "key: value" lines from the level's status, as JSON members. */
static size_t json_from_lines(const char *lines, char *out, size_t len)
{
	size_t used = 0;
	const char *line = lines;

	while (*line && used < len) {
		const char *eol = strchr(line, '\n');
		size_t line_len = eol ? (size_t)(eol - line) : strlen(line);
		const char *colon = memchr(line, ':', line_len);
		if (colon && colon[1] == ' ') {
			int key_len = (int)(colon - line);
			const char *value = colon + 2;
			int value_len = (int)(line_len - (size_t)(value - line));
			bool numeric = value_len > 0 && strspn(value, "0123456789") == (size_t)value_len;
			int n = snprintf(out + used, len - used, numeric ? ",\"%.*s\":%.*s" :
			                 ",\"%.*s\":\"%.*s\"",
			                 key_len, line, value_len, value);
			if (n > 0)
				used += (size_t)n;
		}
		line += line_len + (eol ? 1 : 0);
	}
	return used < len ? used : len;
}

/* in as the inside of a JSON string: names and paths come from users and
 * from foreign disk images. Cut short (never inside an escape) if out is
 * too small. */
static const char *json_escape(const char *in, char *out, size_t len)
{
	size_t used = 0;

	for (; *in; in++) {
		unsigned char ch = (unsigned char)*in;
		char piece[8];
		if (ch == '"' || ch == '\\')
			snprintf(piece, sizeof(piece), "\\%c", ch);
		else if (ch < 0x20)
			snprintf(piece, sizeof(piece), "\\u%04x", ch);
		else
			snprintf(piece, sizeof(piece), "%c", ch);
		size_t n = strlen(piece);
		if (used + n >= len)
			break;
		memcpy(out + used, piece, n);
		used += n;
	}
	out[used] = '\0';
	return out;
}

/* Whether m is the copy of a replace (rebuilt for a role another member
 * still serves) and whether it is the member such a copy replaces, as
 * md's state words them. Caller holds state_lock. */
static void member_replace_flags(const struct raid_array *a, const struct member *m,
                                 bool *replacement, bool *wants_replacement)
{
	bool in_role = m->role >= 0 && m->role < a->geo.raid_disks;
	*replacement = in_role && m->state == MEMBER_REBUILDING && a->slot[m->role] &&
	               a->slot[m->role] != m;
	*wants_replacement = in_role && m->state == MEMBER_IN_SYNC && a->slot[m->role] == m &&
	                     a->rebuilding[m->role];
}

static int show_status_json(struct raid_array *a, struct member *unused, char *buf, size_t len)
{
	struct sync_progress p;
	char uuid[36], layout[64], level_lines[2048] = "";
	char name[6 * sizeof(a->set_name)], path[8192];

	(void)unused;
	array_sync_progress(a, &p);
	md_uuid_format(a->set_uuid, uuid);
	md_layout_name(a->geo.level, a->geo.layout, layout, sizeof(layout));
	if (a->ops->status && a->workers_ready)
		a->ops->status(a, level_lines, sizeof(level_lines));
	struct textbuf t = textbuf_init(buf, len);
	pthread_mutex_lock(&a->state_lock);
	int missing = array_missing_count(a);
	textbuf_appendf(&t, "{\"name\":\"%s\",\"uuid\":\"%s\",\"metadata\":\"%s\",\"level\":\"%s\","
	     "\"layout\":\"%s\","
	     "\"chunk_bytes\":%u,\"raid_disks\":%d,\"array_bytes\":%" PRIu64 ","
	     "\"state\":\"%s\",\"degraded\":%d,\"read_only\":%s,\"resync_pending\":%s,"
	     "\"events\":%" PRIu64 ",\"sync_action\":\"%s\",\"sync_completed_sectors\":%" PRIu64
	     ",\"sync_total_sectors\":%" PRIu64 ",\"sync_rate_kib\":%" PRIu64
	     ",\"mismatch_cnt\":%" PRIu64 ",\"discard\":%s,",
	     json_escape(a->set_name, name, sizeof(name)), uuid, array_metadata_name(a),
	     a->ops->name, layout,
	     a->geo.chunk_bytes, a->geo.raid_disks,
	     a->geo.array_bytes,
	     atomic_load(&a->broken) ? "failed" : a->started ? "active" : "clean", missing,
	     a->read_only ? "true" : "false",
	     atomic_load(&a->resync_pending) ? "true" : "false", a->events,
	     sync_action_name(p.action),
	     p.done_sectors, p.total_sectors, p.action == SYNC_IDLE ? 0 : p.rate_kib,
	     p.mismatch_sectors, array_member_writing_zeroes(a) ? "false" : "true");
	if (a->bitmap)
		textbuf_appendf(&t, "\"bitmap\":{\"chunk_bytes\":%" PRIu64 ",\"regions\":%" PRIu64
		                ",\"dirty_regions\":%" PRIu64 "},",
		                bitmap_chunk_bytes(a->bitmap), bitmap_nr_bits(a->bitmap),
		                bitmap_count_set(a->bitmap));
	else
		textbuf_appendf(&t, "\"bitmap\":null,");
	textbuf_appendf(&t, "\"members\":[");
	for (int i = 0; i < a->nr_members; i++) {
		struct member *m = &a->members[i];
		uint64_t bad_bytes;
		member_badblocks_count(m, &bad_bytes);
		/* role is the one it has or had; slot, as devN/slot, the one it
		 * serves or is rebuilt for (null for none), and the two flags
		 * of a replace as devN/state words them. */
		bool serves = m->role >= 0 && m->role < a->geo.raid_disks &&
		              (m->state == MEMBER_IN_SYNC || m->state == MEMBER_REBUILDING);
		char slot[16] = "null";
		if (serves)
			snprintf(slot, sizeof(slot), "%d", m->role);
		bool replacement, wants_replacement;
		member_replace_flags(a, m, &replacement, &wants_replacement);
		textbuf_appendf(&t, "%s{\"dev\":%d,\"path\":\"%s\",\"role\":%d,\"slot\":%s,"
		     "\"state\":\"%s\",\"replacement\":%s,\"want_replacement\":%s,"
		     "\"read_bytes\":%" PRIu64 ",\"written_bytes\":%" PRIu64
		     ",\"read_errors\":%" PRIu64 ",\"write_errors\":%" PRIu64
		     ",\"write_mostly\":%s,\"bad_block_sectors\":%" PRIu64 "}",
		     i ? "," : "", i, json_escape(m->abs_path, path, sizeof(path)), m->role, slot,
		     member_state_name(m->state), replacement ? "true" : "false",
		     wants_replacement ? "true" : "false",
		     (uint64_t)atomic_load(&m->bytes_read), (uint64_t)atomic_load(&m->bytes_written),
		     (uint64_t)atomic_load(&m->read_errors), (uint64_t)atomic_load(&m->write_errors),
		     atomic_load(&m->write_mostly) ? "true" : "false", bad_bytes / SECTOR_BYTES);
	}
	pthread_mutex_unlock(&a->state_lock);
	textbuf_appendf(&t, "]");
	if (t.used < len)
		t.used += json_from_lines(level_lines, buf + t.used, len - t.used);
	textbuf_appendf(&t, "}\n");
	return 0;
}

static int show_sync_action(struct raid_array *a, struct member *m, char *buf, size_t len)
{
	struct sync_progress p;
	(void)m;
	array_sync_progress(a, &p);
	return show_printf(buf, len, "%s\n", sync_action_name(p.action));
}

static int store_sync_action(struct raid_array *a, struct member *m, const char *text,
                             size_t len)
{
	enum sync_action action;
	char word[16];

	(void)m;
	snprintf(word, sizeof(word), "%.*s", (int)(len < 15 ? len : 15), text);
	if (sync_action_parse(word, &action) < 0)
		return -EINVAL;
	return array_sync_request(a, action);
}

static int show_sync_completed(struct raid_array *a, struct member *m, char *buf, size_t len)
{
	struct sync_progress p;
	(void)m;
	array_sync_progress(a, &p);
	if (p.action == SYNC_IDLE)
		return show_printf(buf, len, "none\n");
	return show_printf(buf, len, "%" PRIu64 " / %" PRIu64 "\n", p.done_sectors,
	                   p.total_sectors);
}

/* md's sync_speed: KiB/s of the running sync (over its last few
 * seconds), "none" when idle. */
static int show_sync_rate(struct raid_array *a, struct member *m, char *buf, size_t len)
{
	struct sync_progress p;
	(void)m;
	array_sync_progress(a, &p);
	if (p.action == SYNC_IDLE)
		return show_printf(buf, len, "none\n");
	return show_printf(buf, len, "%" PRIu64 "\n", p.rate_kib);
}

/* How the last check, repair or recover ended: done, interrupted, or the
 * error that stopped it. */
static int show_sync_result(struct raid_array *a, struct member *m, char *buf, size_t len)
{
	struct sync_progress p;
	(void)m;
	array_sync_progress(a, &p);
	if (p.last_action == SYNC_IDLE)
		return show_printf(buf, len, "none\n");
	if (p.action != SYNC_IDLE)
		return show_printf(buf, len, "running\n");
	if (p.last_result < 0)
		return show_printf(buf, len, "failed: %s\n", sync_result_text(p.last_result));
	return show_printf(buf, len, "%s\n", p.interrupted ? "interrupted" : "done");
}

static int show_mismatch_cnt(struct raid_array *a, struct member *m, char *buf, size_t len)
{
	struct sync_progress p;
	(void)m;
	array_sync_progress(a, &p);
	return show_printf(buf, len, "%" PRIu64 "\n", p.mismatch_sectors);
}

static int show_sync_speed(struct raid_array *a, char *buf, size_t len, bool max)
{
	struct sync_progress p;
	array_sync_progress(a, &p);
	return show_printf(buf, len, "%u (%s)\n", max ? p.speed_max_kib : p.speed_min_kib,
	                   (max ? p.speed_max_set : p.speed_min_set) ? "local" : "system");
}

static int show_speed_min(struct raid_array *a, struct member *m, char *buf, size_t len)
{
	(void)m;
	return show_sync_speed(a, buf, len, false);
}

static int show_speed_max(struct raid_array *a, struct member *m, char *buf, size_t len)
{
	(void)m;
	return show_sync_speed(a, buf, len, true);
}

static int store_speed(struct raid_array *a, const char *text, size_t len, bool max)
{
	unsigned kib;
	/* md's "system": back to the default, shown as (system) again. */
	if (text_is(text, len, "system"))
		return array_sync_set_speed(a, max, 0);
	if (parse_uint(text, len, &kib) < 0 || kib == 0)
		return -EINVAL;
	return array_sync_set_speed(a, max, kib);
}

static int store_speed_min(struct raid_array *a, struct member *m, const char *text, size_t len)
{
	(void)m;
	return store_speed(a, text, len, false);
}

static int store_speed_max(struct raid_array *a, struct member *m, const char *text, size_t len)
{
	(void)m;
	return store_speed(a, text, len, true);
}

static int show_new_dev(struct raid_array *a, struct member *m, char *buf, size_t len)
{
	(void)a;
	(void)m;
	return show_printf(buf, len, "write the path of a member to add\n");
}

/* md's new_dev: add a member by path (absolute: the daemon runs from /).
 * The reason for a refusal goes to the log, the errno to the writer. */
static int store_new_dev(struct raid_array *a, struct member *m, const char *text, size_t len)
{
	char path[4096], err[512];

	(void)m;
	if (ctl_path_from_text(text, len, path, sizeof(path)) < 0)
		return -EINVAL;
	int rc = array_add_member(a, path, err, sizeof(err));
	if (rc < 0)
		array_logf(a, "add %s refused: %s", path, err);
	return rc;
}

static int show_log(struct raid_array *a, struct member *m, char *buf, size_t len)
{
	(void)m;
	array_log_text(a, buf, len);
	return 0;
}

const struct array_attr array_attrs[] = {
	{ "status", false, show_status, NULL },
	{ "log", false, show_log, NULL },
	{ "new_dev", true, show_new_dev, store_new_dev },
	{ "status.json", false, show_status_json, NULL },
	{ "sync_action", true, show_sync_action, store_sync_action },
	{ "sync_completed", false, show_sync_completed, NULL },
	{ "mismatch_cnt", false, show_mismatch_cnt, NULL },
	{ "last_sync_result", false, show_sync_result, NULL },
	{ "sync_speed", false, show_sync_rate, NULL },
	{ "sync_speed_min", true, show_speed_min, store_speed_min },
	{ "sync_speed_max", true, show_speed_max, store_speed_max },
	{ NULL, false, NULL, NULL },
};

/* ---- member attributes ----------------------------------------------- */

/* md's words, so that a script written for md's sysfs reads them alike:
 * a member being rebuilt is a "spare" until it is in sync (its progress is
 * in recovery_start and the status), the copy of a replace is also a
 * "replacement", and the member it copies wants replacement. */
static int show_member_state(struct raid_array *a, struct member *m, char *buf, size_t len)
{
	pthread_mutex_lock(&a->state_lock);
	enum member_state state = m->state;
	bool replacement, wants_replacement;
	member_replace_flags(a, m, &replacement, &wants_replacement);
	pthread_mutex_unlock(&a->state_lock);

	/* In the order md's state_show writes its words: faulty and in_sync,
	 * then write_mostly, then spare. */
	bool spare = state == MEMBER_SPARE || state == MEMBER_REBUILDING;
	bool write_mostly = atomic_load(&m->write_mostly);
	return show_printf(buf, len, "%s%s%s%s%s\n",
	                   spare ? "" : member_state_name(state),
	                   write_mostly ? (spare ? "write_mostly" : ",write_mostly") : "",
	                   spare ? (write_mostly ? ",spare" : "spare") : "",
	                   wants_replacement ? ",want_replacement" : "",
	                   replacement ? ",replacement" : "");
}

/* md's recovery_start: the sector up to which a member being rebuilt
 * holds its role's data; 0 for a spare (it holds nothing yet), "none" for
 * the others. */
static int show_member_recovery_start(struct raid_array *a, struct member *m, char *buf,
                                      size_t len)
{
	if (m->state == MEMBER_SPARE)
		return show_printf(buf, len, "0\n");
	if (m->state != MEMBER_REBUILDING || m->role < 0 || m->role >= a->geo.raid_disks)
		return show_printf(buf, len, "none\n");
	return show_printf(buf, len, "%" PRIu64 "\n",
	                   (uint64_t)atomic_load(&a->rebuilt_bytes[m->role]) / SECTOR_BYTES);
}

static int store_member_state(struct raid_array *a, struct member *m, const char *text,
                              size_t len)
{
	if (text_is(text, len, "faulty")) {
		if (m->state == MEMBER_REBUILDING)
			return array_fail_rebuilding(a, m);
		if (m->state != MEMBER_IN_SYNC)
			return m->state == MEMBER_FAULTY ? 0 : -EINVAL;
		return array_fail_role(a, m->role);
	}
	if (text_is(text, len, "remove"))
		return array_remove_member(a, m);
	/* md's sysfs words. */
	if (text_is(text, len, "writemostly"))
		return array_set_write_mostly(a, m, true);
	if (text_is(text, len, "-writemostly"))
		return array_set_write_mostly(a, m, false);
	return -EINVAL;
}

static int show_member_slot(struct raid_array *a, struct member *m, char *buf, size_t len)
{
	(void)a;
	/* As md's slot: a member being rebuilt already holds its role. */
	if (m->state != MEMBER_IN_SYNC && m->state != MEMBER_REBUILDING)
		return show_printf(buf, len, "none\n");
	return show_printf(buf, len, "%d\n", m->role);
}

static int show_member_path(struct raid_array *a, struct member *m, char *buf, size_t len)
{
	(void)a;
	return show_printf(buf, len, "%s\n", m->abs_path);
}

static int show_member_errors(struct raid_array *a, struct member *m, char *buf, size_t len)
{
	(void)a;
	return show_printf(buf, len, "read %" PRIu64 " write %" PRIu64 "\n",
	                   (uint64_t)atomic_load(&m->read_errors),
	                   (uint64_t)atomic_load(&m->write_errors));
}

static int show_member_bad_blocks(struct raid_array *a, struct member *m, char *buf, size_t len)
{
	(void)a;
	member_badblocks_format(m, buf, len);
	return 0;
}

static int show_member_fault(struct raid_array *a, struct member *m, char *buf, size_t len)
{
	(void)a;
	member_fault_format(m->fault, buf, len);
	return 0;
}

static int store_member_fault(struct raid_array *a, struct member *m, const char *text,
                              size_t len)
{
	struct member_fault parsed;

	if (member_fault_parse(text, len, &parsed) < 0)
		return -EINVAL;
	/* Set once and kept: requests in flight may be reading it. */
	if (!m->fault) {
		struct member_fault *f = calloc(1, sizeof(*f));
		if (!f)
			return -ENOMEM;
		m->fault = f;
	}
	*m->fault = parsed;
	/* text is the written bytes, not a string: no NUL after them. */
	const char *eol = memchr(text, '\n', len);
	array_logf(a, "fault injection on %s: %.*s", m->abs_path,
	           (int)(eol ? (size_t)(eol - text) : len), text);
	return 0;
}

/* md's want_replacement, with the replacement named at once. */
static int store_member_replace(struct raid_array *a, struct member *m, const char *text,
                                size_t len)
{
	char path[4096], err[512];

	if (ctl_path_from_text(text, len, path, sizeof(path)) < 0)
		return -EINVAL;
	int rc = array_replace_member(a, m, path, err, sizeof(err));
	if (rc < 0)
		array_logf(a, "replace %s with %s refused: %s", m->abs_path, path, err);
	return rc;
}

static int show_member_replace(struct raid_array *a, struct member *m, char *buf, size_t len)
{
	(void)a;
	(void)m;
	return show_printf(buf, len, "write the path of a member to copy this one onto\n");
}

const struct array_attr member_attrs[] = {
	{ "state", true, show_member_state, store_member_state },
	{ "slot", false, show_member_slot, NULL },
	{ "recovery_start", false, show_member_recovery_start, NULL },
	{ "path", false, show_member_path, NULL },
	{ "errors", false, show_member_errors, NULL },
	{ "bad_blocks", false, show_member_bad_blocks, NULL },
	{ "fault", true, show_member_fault, store_member_fault },
	{ "replace_with", true, show_member_replace, store_member_replace },
	{ NULL, false, NULL, NULL },
};
