# lib.sh - shared helpers for the integration tests (sourced, not run).
#
# Each test gets a scratch folder ($WORK) that is removed on exit, with
# every raidfuse mount and loop mount made through these helpers undone
# first, so a failing test never leaves a dangling mount behind.
# Exit codes follow automake: 0 pass, 1 fail, 77 skip (with a reason).

set -u

RAIDFUSE=${RAIDFUSE:-$(cd "$(dirname "$0")/../.." && pwd)/raidfuse}
TOP_SRCDIR=${TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
SHARED_DIR=${SHARED_DIR:-$TOP_SRCDIR/../shared}
TEST_NAME=$(basename "$0" .sh)

WORK=$(mktemp -d "${TMPDIR:-/tmp}/raidfuse-$TEST_NAME.XXXXXX")
_cleanup_mounts=()
_cleanup_loops=()

_cleanup() {
	local i
	for ((i = ${#_cleanup_mounts[@]} - 1; i >= 0; i--)); do
		local m=${_cleanup_mounts[i]}
		if mountpoint -q "$m" 2>/dev/null || grep -qs " $m " /proc/mounts; then
			umount "$m" 2>/dev/null || fusermount3 -u "$m" 2>/dev/null ||
				umount -l "$m" 2>/dev/null || true
		fi
	done
	for i in "${_cleanup_loops[@]}"; do losetup -d "$i" 2>/dev/null || true; done
	rm -rf "$WORK"
}
trap _cleanup EXIT

log() { printf '%s: %s\n' "$TEST_NAME" "$*"; }
fail() { printf '%s: FAIL: %s\n' "$TEST_NAME" "$*" >&2; exit 1; }
skip() { printf '%s: SKIP: %s\n' "$TEST_NAME" "$*" >&2; exit 77; }

# Skip (77) unless FUSE can be used here; CI machines can, so there it runs.
require_fuse() {
	[ -c /dev/fuse ] || skip "no /dev/fuse on this machine"
	command -v fusermount3 >/dev/null || skip "fusermount3 is not installed (Debian package fuse3)"
}
require_root() {
	[ "$(id -u)" = 0 ] || skip "needs root (loop devices)"
}
require_cmd() {
	local c
	for c in "$@"; do
		command -v "$c" >/dev/null || skip "$c is not installed"
	done
}

# Remember a mount point so cleanup unmounts it.
track_mount() { _cleanup_mounts+=("$1"); }
# track_loop DEV: detach the loop device on exit (after the mounts).
track_loop() { _cleanup_loops+=("$1"); }
# loop_detach DEV: detach a tracked loop device now, and forget it: the
# exit's cleanup would otherwise detach the same device number again,
# which by then may be another test's (tests run two at a time).
loop_detach() {
	local i
	losetup -d "$1"
	for i in "${!_cleanup_loops[@]}"; do
		[ "${_cleanup_loops[i]}" != "$1" ] || unset '_cleanup_loops[i]'
	done
}

# rf_mount [mount options] MEMBER... MOUNTPOINT
rf_mount() {
	local mnt=${*: -1}
	mkdir -p "$mnt"
	track_mount "$mnt"
	"$RAIDFUSE" mount "$@" || fail "raidfuse mount $* failed"
	[ -f "$mnt/volume.img" ] || fail "no volume.img under $mnt after mount"
}

rf_umount() {
	"$RAIDFUSE" umount "$1" || fail "raidfuse umount $1 failed"
}

# sha256 of every file named, one line each, to compare before and after.
hash_files() { sha256sum "$@"; }

# rf_kill MOUNT: SIGKILL the daemon serving MOUNT, wait until it is gone
# (its claim on the members goes with it: a mount at once after would find
# them still in use), and detach the dead mount.
rf_kill() {
	local pid i
	pid=$(cat "$1/.raidfuse/pid") || fail "no daemon pid under $1"
	kill -9 "$pid" || fail "kill -9 the daemon of $1"
	for i in $(seq 100); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	kill -0 "$pid" 2>/dev/null && fail "daemon $pid of $1 still there 10 s after SIGKILL"
	fusermount3 -u -z "$1" 2>/dev/null || umount -l "$1"
}

# put SRC TARGET OFFSET: write the file SRC into TARGET at byte OFFSET.
put() {
	dd if="$1" of="$2" bs=1M oflag=seek_bytes seek="$3" conv=notrunc,fsync status=none
}

# mdadm --examine field of a member: ex_field FILE 'Events'
ex_field() {
	mdadm --examine "$1" 2>/dev/null | sed -n "s/^ *$2 : *//p" | head -n1
}

# For tests that mount one array at a time on $MNT (which they set and
# track_mount), checking each step as they go; unlike rf_mount, the mount's
# stderr is kept for the failure message or for the test to inspect.

# mnt_try OUTFILE ARGS...: raidfuse mount ARGS... $MNT, stderr to OUTFILE.
mnt_try() {
	local errf=$1
	shift
	"$RAIDFUSE" mount "$@" "$MNT" 2>"$errf"
}
# mnt_ok LABEL ARGS...: the mount must succeed (stderr in $WORK/mount.err).
mnt_ok() {
	local label=$1
	shift
	mnt_try "$WORK/mount.err" "$@" ||
		fail "$label: raidfuse mount $* failed: $(cat "$WORK/mount.err")"
	[ -f "$MNT/volume.img" ] || fail "$label: no volume.img after mount"
}
umnt() {
	"$RAIDFUSE" umount "$MNT" || fail "raidfuse umount $MNT failed"
	! mountpoint -q "$MNT" || fail "$MNT is still mounted after raidfuse umount"
}

# Unpack the md-refs array NAME into DIR; prints nothing. Skips when the
# shared folder is absent (it is present on developer machines and in CI).
md_ref_unpack() {
	local name=$1 dir=$2 gz
	[ -d "$SHARED_DIR/md-refs/$name" ] || skip "md-refs not found at $SHARED_DIR/md-refs"
	mkdir -p "$dir"
	for gz in "$SHARED_DIR/md-refs/$name"/*.img.gz; do
		gzip -dc "$gz" >"$dir/$(basename "$gz" .gz)" || fail "cannot unpack $gz"
	done
}

# The manifest field FIELD of array NAME (e.g. array_sha256).
md_ref_field() {
	python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["arrays"][sys.argv[2]][sys.argv[3]])' \
		"$SHARED_DIR/md-refs/manifest.json" "$1" "$2"
}

# dev_of MOUNT FILE: the devN directory of the member at FILE.
dev_of() {
	local d
	for d in "$1"/.raidfuse/dev*; do
		[ "$(cat "$d/path")" = "$(readlink -f "$2")" ] && { basename "$d"; return 0; }
	done
	return 1
}

# data_off MEMBER: byte offset of the member's data area.
data_off() {
	local s
	s=$("$RAIDFUSE" examine "$1" | sed -n 's/^ *Data Offset : \([0-9]*\) sectors.*/\1/p' | head -n1)
	[ -n "$s" ] || fail "no Data Offset in raidfuse examine $1"
	echo $((s * 512))
}

# md_sb_patch MEMBER FIELD=VALUE...: rewrite fields of a member's md 1.2
# superblock and its checksum (as md_super_csum computes it), for states a
# crash or md leaves that a test cannot reach otherwise. FIELDs: events,
# feature_map, feature_or (bits to set), recovery_offset, bitmap_offset,
# bblog_offset, roleN.
md_sb_patch() {
	python3 - "$@" <<'PY'
import struct, sys
path, edits = sys.argv[1], sys.argv[2:]
with open(path, "r+b") as f:
    f.seek(4096)
    sb = bytearray(f.read(4096))
    for e in edits:
        k, v = e.split("=")
        v = int(v, 0)
        if k == "events":
            struct.pack_into("<Q", sb, 200, v)
        elif k == "feature_map":
            struct.pack_into("<I", sb, 8, v)
        elif k == "feature_or":
            struct.pack_into("<I", sb, 8, struct.unpack_from("<I", sb, 8)[0] | v)
        elif k == "recovery_offset":
            struct.pack_into("<Q", sb, 152, v)
        elif k == "bitmap_offset":
            struct.pack_into("<i", sb, 96, v)
        elif k == "bblog_offset":
            struct.pack_into("<i", sb, 188, v)
        elif k.startswith("role"):
            struct.pack_into("<H", sb, 256 + 2 * int(k[4:]), v)
        else:
            sys.exit("md_sb_patch: unknown field " + k)
    max_dev, = struct.unpack_from("<I", sb, 220)
    struct.pack_into("<I", sb, 216, 0)
    n = 256 + 2 * max_dev
    total = sum(struct.unpack_from("<%dI" % (n // 4), sb, 0))
    if n % 4:
        total += struct.unpack_from("<H", sb, n - 2)[0]
    struct.pack_into("<I", sb, 216, ((total & 0xffffffff) + (total >> 32)) & 0xffffffff)
    f.seek(4096)
    f.write(sb)
PY
}

# log_bad MEMBER SECTOR COUNT...: write md bad block entries (data-area
# sectors, turned absolute) into MEMBER's log, set the feature bit (and so
# the checksum), and fill those sectors with garbage. With --no-feature, the
# garbage only (the control).
log_bad() {
	python3 - "$@" <<'PY'
import os, struct, sys
args = sys.argv[1:]
feature = True
if args[0] == "--no-feature":
    feature = False
    args = args[1:]
path, pairs = args[0], [int(x) for x in args[1:]]
with open(path, "r+b") as f:
    f.seek(4096)
    sb = bytearray(f.read(4096))
    data_offset, = struct.unpack_from("<Q", sb, 128)
    shift = sb[185]
    size, = struct.unpack_from("<H", sb, 186)
    offset, = struct.unpack_from("<i", sb, 188)
    assert size and offset and shift == 0, (size, offset, shift)
    log = bytearray(b"\xff" * (size * 512))
    for i in range(0, len(pairs), 2):
        sector, count = pairs[i] + data_offset, pairs[i + 1]
        struct.pack_into("<Q", log, 8 * (i // 2), sector << 10 | count)
        f.seek((data_offset + pairs[i]) * 512)
        f.write(os.urandom(count * 512))
    if not feature:
        sys.exit(0)
    f.seek((8 + offset) * 512)
    f.write(log)
PY
	[ "$1" = --no-feature ] || md_sb_patch "$1" feature_or=8 # MD_FEATURE_BAD_BLOCKS
}

# md_sb_field MEMBER OFFSET FORMAT: one field of the superblock (struct
# format, e.g. '<Q' for events at 200).
md_sb_field() {
	python3 -c 'import struct,sys
f = open(sys.argv[1], "rb"); f.seek(4096 + int(sys.argv[2]))
print(struct.unpack(sys.argv[3], f.read(struct.calcsize(sys.argv[3])))[0])' "$@"
}

# bitmap_field MEMBER FIELD: a field of mdadm -X (--examine-bitmap), the
# text after "FIELD :". mdadm -X wants a block device: the member is looked
# at through a read-only loop device (root).
bitmap_field() {
	local loop out
	loop=$(losetup -f --show -r "$1") || fail "losetup $1"
	out=$(mdadm -X "$loop" 2>&1)
	losetup -d "$loop"
	printf '%s\n' "$out" | sed -n "s/^ *$2 : //p" | head -1
}
# dirty_bits MEMBER: how many bits of its bitmap mdadm -X counts dirty.
dirty_bits() { bitmap_field "$1" Bitmap | sed -n 's/.*chunks), \([0-9]*\) dirty.*/\1/p'; }
