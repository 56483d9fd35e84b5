#!/bin/bash
# badblocks.sh - md's bad block log is honoured: sectors md logged as bad on
# a member (a write that failed there without failing the member) hold
# stale bytes, so raidfuse must never serve them.
#
# On members made by the real md driver (shared md-refs: raid5-ls-64k and
# raid1), bad block entries are written into members' logs the way md writes
# them (feature bit MD_FEATURE_BAD_BLOCKS, entries sector << 10 | count,
# all-ones end, a fresh superblock checksum; mdadm --examine says the
# checksum is correct and mdadm --examine-badblocks lists them), and the
# logged sectors are overwritten with garbage. Two members have logged
# sectors within the same 64 KiB (RAID5: in different 4 KiB columns of a
# row; RAID1: different sectors of one piece), so no single read of the
# array's natural size finds a clean copy. Then:
#   - raidfuse examine reports the logged sectors;
#   - a read-write mount is refused, naming the member and --readonly
#     (raidfuse does not keep md's log up to date), and changes nothing;
#   - a read-only mount reads md's exact bytes (sha256 of the manifest),
#     with every member still in the array;
#   - verify refuses, saying why;
#   - the same sectors logged on both RAID1 members: those bytes read as an
#     I/O error (as under md), the rest of the volume reads fine, no member
#     is failed;
#   - without the feature bit (control), the garbage is what is read: the
#     checks above would have caught a raidfuse that ignored the log.
. "$(dirname "$0")/lib.sh"
require_fuse
require_cmd python3 gzip sha256sum mdadm

MANIFEST=$SHARED_DIR/md-refs/manifest.json
[ -f "$MANIFEST" ] || skip "md-refs manifest not found at $MANIFEST"
cd "$WORK"
MNT=$WORK/mnt
mkdir -p "$MNT"
track_mount "$MNT"

array_sha() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["arrays"][sys.argv[2]]["array_sha256"])' "$MANIFEST" "$1"; }

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

# logged DIR NAME ROLE:SECTOR:COUNT...: log_bad once per member (it writes
# the member's whole log) with all of that member's entries.
logged() {
	local dir=$1 name=$2 e role sector count
	local -A pairs=()
	shift 2
	for e in "$@"; do
		IFS=: read -r role sector count <<<"$e"
		pairs[$role]+=" $sector $count"
	done
	for role in "${!pairs[@]}"; do
		# shellcheck disable=SC2086 # the pairs are words
		log_bad "$dir/$name.m$role.img" ${pairs[$role]} || fail "$name: cannot log on role $role"
	done
}

for spec in "raid5-ls-64k 0:2048:8 1:2088:8 1:6145:1 3:3073:1" "raid1 0:2048:8 0:6145:1 1:2056:8"; do
	read -r name entries <<<"$spec"
	read -ra entries <<<"$entries"
	want=$(array_sha "$name")
	md_ref_unpack "$name" "$WORK/$name"
	members=("$WORK/$name"/*.img)
	logged "$WORK/$name" "$name" "${entries[@]}"
	m0=$WORK/$name/$name.m0.img
	mdadm --examine "$m0" | grep -q "Checksum : .* correct" ||
		fail "$name: mdadm says the superblock checksum is wrong: $(mdadm --examine "$m0" | grep Checksum)"
	off=$(mdadm --examine "$m0" | sed -n 's/^ *Data Offset : \([0-9]*\) sectors.*/\1/p')
	mdadm --examine-badblocks "$m0" >bbl.out 2>&1
	grep -q "$((off + 2048)) for 8 sectors" bbl.out ||
		fail "$name: mdadm --examine-badblocks does not list the entry: $(cat bbl.out)"
	"$RAIDFUSE" examine "$m0" >ex.out || fail "$name: raidfuse examine"
	grep -q "Bad Blocks : [12] ranges, \(8\|9\) sectors" ex.out ||
		fail "$name: raidfuse examine does not report the bad blocks: $(cat ex.out)"
	log "ok: $name: ${#entries[@]} ranges in md's bad block logs (mdadm lists them)"

	before=$(sha256sum "${members[@]}")
	mnt_try mount.err "${members[@]}" && fail "$name: a read-write mount of members with bad blocks"
	grep -q "md's bad block log marks .*mount --readonly" mount.err ||
		fail "$name: the refusal does not explain itself: $(cat mount.err)"
	mnt_ok "$name read-only" --readonly "${members[@]}"
	cat "$MNT/volume.img" >vol.dump || fail "$name: read-only read"
	got=$(sha256sum <vol.dump | cut -d' ' -f1)
	# Reads that start or end inside a sector, across the logged ones.
	python3 - "$MNT/volume.img" vol.dump <<'PY' || fail "$name: unaligned reads across logged sectors"
import os, sys
vol, dump = os.open(sys.argv[1], os.O_RDONLY), open(sys.argv[2], "rb").read()
for off, n in [(2056 * 512 - 256, 512), (2056 * 512 - 100, 200), (2048 * 512 + 100, 3000),
               (2088 * 512 - 700, 9000), (6145 * 512 + 1, 510)]:
    got = os.pread(vol, n, off)
    if got != dump[off:off + n]:
        sys.exit("%d bytes at %d differ" % (n, off))
PY
	n=${#members[@]}
	grep -q "\[$n/$n\]" "$MNT/.raidfuse/status" ||
		fail "$name: a member was failed: $(cat "$MNT/.raidfuse/status")"
	umnt
	[ "$got" = "$want" ] || fail "$name: read-only mount reads $got, md's array is $want"
	[ "$(sha256sum "${members[@]}")" = "$before" ] || fail "$name: a mount changed a member"
	log "ok: $name: read-write refused; read-only reads md's exact bytes around every logged sector, all members in"

	"$RAIDFUSE" verify "${members[@]}" >verify.out 2>&1 && fail "$name: verify ignored the bad block log"
	grep -q "bad block log marks" verify.out ||
		fail "$name: verify does not explain the refusal: $(cat verify.out)"
	log "ok: $name: verify refuses, naming the logged sectors"

	# Control: the same garbage without the log is what a reader gets.
	md_ref_unpack "$name" "$WORK/$name"
	log_bad --no-feature "$m0" 2048 8 || fail "$name: control garbage"
	mnt_ok "$name control" --readonly "${members[@]}"
	got=$(sha256sum <"$MNT/volume.img" | cut -d' ' -f1)
	umnt
	[ "$got" != "$want" ] || fail "$name: control: garbage on a member without a log still read as md's bytes"
	rm -rf "${WORK:?}/$name"
done

# The same sectors logged on both mirrors: nothing holds them.
md_ref_unpack raid1 "$WORK/r1"
logged "$WORK/r1" raid1 0:2048:8 1:2048:8
mnt_ok "raid1 both" --readonly "$WORK"/r1/*.img
dd if="$MNT/volume.img" of=/dev/null bs=4k skip=256 count=1 iflag=direct status=none 2>dd.err &&
	fail "raid1: sectors logged on both mirrors read without an error"
dd if="$MNT/volume.img" of=/dev/null bs=4k skip=257 count=255 iflag=direct status=none ||
	fail "raid1: the bytes after the logged sectors do not read"
grep -q "bad block log that no other member holds" "$MNT/.raidfuse/log" ||
	fail "raid1: the log does not say why the read failed: $(cat "$MNT/.raidfuse/log")"
grep -q "\[2/2\]" "$MNT/.raidfuse/status" || fail "raid1: a member was failed: $(cat "$MNT/.raidfuse/status")"
umnt
log "ok: raid1: sectors logged on both mirrors read as an I/O error, the rest reads, no member failed"
log "PASS"
