#!/bin/bash
# badblocks.sh - md's bad block log is honoured: sectors md logged as bad on
# a member (a write that failed there without failing the member) hold
# stale bytes, so raidfuse must never serve them.
#
# On members made by the real md driver (shared md-refs: raid5-ls-64k and
# raid1), one member gets bad block entries written into its log the way
# md writes them (feature bit MD_FEATURE_BAD_BLOCKS, entries sector << 10 |
# count, all-ones end, a fresh superblock checksum; mdadm --examine says
# the checksum is correct and mdadm --examine-badblocks lists them), and the
# logged sectors are overwritten with garbage. Then:
#   - raidfuse examine reports the logged sectors;
#   - a read-only mount reads md's exact bytes (sha256 of the manifest),
#     answering the bad sectors from redundancy, and changes no member;
#   - a read-write mount does too, and rewrites the bad sectors with the
#     right bytes (as after a read error), while the log stays as md wrote
#     it (md keeps avoiding them);
#   - without the feature bit (control), the garbage is what is read: the
#     check above would have caught a raidfuse that ignored the log.
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
# sectors, turned absolute) into MEMBER's log, set the feature bit, fix the
# checksum, and fill those sectors with garbage. With --no-feature, the
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
    fm, = struct.unpack_from("<I", sb, 8)
    struct.pack_into("<I", sb, 8, fm | 8)
    max_dev, = struct.unpack_from("<I", sb, 220)
    struct.pack_into("<I", sb, 216, 0)
    n = 256 + 2 * max_dev
    total = sum(struct.unpack_from("<%dI" % (n // 4), sb, 0))
    if n % 4:
        total += struct.unpack_from("<H", sb, n - 2)[0]
    csum = ((total & 0xffffffff) + (total >> 32)) & 0xffffffff
    struct.pack_into("<I", sb, 216, csum)
    f.seek(4096)
    f.write(sb)
PY
}

for spec in "raid5-ls-64k 1" "raid1 0"; do
	set -- $spec
	name=$1 bad_role=$2
	want=$(array_sha "$name")
	md_ref_unpack "$name" "$WORK/$name"
	members=("$WORK/$name"/*.img)
	bad=$WORK/$name/$name.m$bad_role.img
	cp "$bad" "$WORK/$name.pristine"
	# 8 KiB at 1 MiB into the data area, and one sector at 3 MiB + 512.
	log_bad "$bad" 2048 16 6145 1 || fail "$name: cannot write the bad block log"
	mdadm --examine "$bad" | grep -q "Checksum : .* correct" ||
		fail "$name: mdadm says the superblock checksum is wrong: $(mdadm --examine "$bad" | grep Checksum)"
	off=$(mdadm --examine "$bad" | sed -n 's/^ *Data Offset : \([0-9]*\) sectors.*/\1/p')
	mdadm --examine-badblocks "$bad" >bbl.out 2>&1
	grep -q "$((off + 2048)) for 16 sectors" bbl.out && grep -q "$((off + 6145)) for 1 sectors" bbl.out ||
		fail "$name: mdadm --examine-badblocks does not list the entries: $(cat bbl.out)"
	"$RAIDFUSE" examine "$bad" >ex.out || fail "$name: raidfuse examine"
	grep -q "Bad Blocks : 2 ranges, 17 sectors" ex.out ||
		fail "$name: raidfuse examine does not report the bad blocks: $(cat ex.out)"
	log "ok: $name: role $bad_role has 2 ranges in md's bad block log (mdadm lists them)"

	before=$(sha256sum "${members[@]}")
	mnt_ok "$name read-only" --readonly "${members[@]}"
	got=$(sha256sum <"$MNT/volume.img" | cut -d' ' -f1)
	umnt
	[ "$got" = "$want" ] || fail "$name: read-only mount reads $got, md's array is $want"
	[ "$(sha256sum "${members[@]}")" = "$before" ] || fail "$name: a read-only mount changed a member"
	log "ok: $name: read-only mount reads md's exact bytes around the bad sectors"

	mnt_ok "$name read-write" "${members[@]}"
	got=$(sha256sum <"$MNT/volume.img" | cut -d' ' -f1)
	grep -q "read error on .*m$bad_role.img .*corrected" "$MNT/.raidfuse/log" ||
		fail "$name: no rewrite of the bad sectors in the log: $(cat "$MNT/.raidfuse/log")"
	umnt
	[ "$got" = "$want" ] || fail "$name: read-write mount reads $got, md's array is $want"
	cmp <(dd if="$bad" bs=512 skip=$((off + 2048)) count=16 status=none) \
		<(dd if="$WORK/$name.pristine" bs=512 skip=$((off + 2048)) count=16 status=none) ||
		fail "$name: the bad sectors were not rewritten with md's bytes"
	mdadm --examine-badblocks "$bad" | grep -q "$((off + 2048)) for 16 sectors" ||
		fail "$name: the bad block log on disk changed"
	log "ok: $name: read-write mount rewrote the bad sectors with the right bytes; md's log kept"

	# Offline verify cannot compare logged sectors: it says so; a check on
	# the mounted array reads them from redundancy and finds nothing wrong.
	"$RAIDFUSE" verify "${members[@]}" >verify.out 2>&1 && fail "$name: verify ignored the bad block log"
	grep -q "bad block log marks 2 range(s), 17 sectors" verify.out ||
		fail "$name: verify does not explain the refusal: $(cat verify.out)"
	mnt_ok "$name check" "${members[@]}"
	"$RAIDFUSE" check "$MNT" || fail "$name: raidfuse check"
	"$RAIDFUSE" wait "$MNT" >wait.out || fail "$name: raidfuse wait: $(cat wait.out)"
	grep -q "^done: mismatch_cnt 0" wait.out || fail "$name: online check: $(cat wait.out)"
	umnt
	log "ok: $name: verify refuses, naming the logged sectors; an online check finds 0 mismatches"

	# Control: the same garbage without the log is what a reader gets.
	md_ref_unpack "$name" "$WORK/$name"
	log_bad --no-feature "$bad" 2048 16 || fail "$name: control garbage"
	mnt_ok "$name control" --readonly "${members[@]}"
	got=$(sha256sum <"$MNT/volume.img" | cut -d' ' -f1)
	umnt
	[ "$got" != "$want" ] || fail "$name: control: garbage on a member without a log still read as md's bytes"
	rm -rf "$WORK/$name" "$WORK/$name.pristine"
done
log "PASS"
