#!/bin/bash
# discard.sh - punching holes in and zeroing ranges of volume.img (what a
# loop device's discard and write-zeroes, fstrim and mkfs send), on the
# levels that offer it (linear, RAID0, RAID1, RAID10):
#  1. per level, on sparse member files: an aligned hole, an unaligned one
#     (1000 bytes at 1000) and a zeroed range (fallocate -z) read back as
#     zeros, every other byte as written; the members give back the space
#     of the aligned hole (on every copy); a check finds 0 mismatches and
#     the offline verify 0; a range reaching past the end is zeroed up to
#     the end with --keep-size, and growing the volume is refused (EFBIG);
#  2. RAID1 with a rebuild running: a hole punched over the rebuilt part,
#     the part still to copy and the boundary leaves both copies equal
#     once the rebuild ends (verify 0) and the volume reading zeros there;
#  3. RAID5: not offered (EOPNOTSUPP, as md's raid456 without
#     devices_handle_discard_safely), nothing changed;
#  4. mkfs.ext4 on a loop device over a RAID10 volume discards it (the
#     members become sparse), a file written and removed is given back by
#     fstrim, e2fsck is clean and the check finds 0.
# Why: punching was refused (EOPNOTSUPP), so member files only ever grew,
# and fstrim inside the volume freed nothing on the host.
. "$(dirname "$0")/lib.sh"
require_fuse
require_root
require_cmd fallocate losetup mkfs.ext4 e2fsck fstrim python3

cd "$WORK"
R=$RAIDFUSE
MNT=$WORK/mnt
mkdir -p "$MNT" fsm
track_mount "$MNT"
track_mount "$WORK/fsm"
loopdev=
_discard_cleanup() {
	mountpoint -q "$WORK/fsm" && umount "$WORK/fsm"
	[ -z "$loopdev" ] || losetup -d "$loopdev" 2>/dev/null || true
	_cleanup
}
trap _discard_cleanup EXIT

alloc_kib() { du -k --total "$@" | tail -n1 | cut -f1; }
# same_as_ref LABEL: volume.img equals ref with zeros over the ranges given
# as OFF:LEN arguments.
same_as_ref() {
	local label=$1
	shift
	python3 - "$MNT/volume.img" ref "$@" <<'PY' || fail "$label: volume.img is not ref with those ranges zeroed"
import sys
vol, ref = open(sys.argv[1], "rb").read(), bytearray(open(sys.argv[2], "rb").read())
for r in sys.argv[3:]:
    off, ln = map(int, r.split(":"))
    ln = min(ln, len(ref) - off)
    ref[off:off + ln] = bytes(ln)
if vol != bytes(ref):
    bad = next(i for i in range(len(vol)) if vol[i] != ref[i])
    sys.exit("first difference at byte %d" % bad)
PY
}
scrub_check() {
	"$R" check "$MNT" >/dev/null 2>&1 || fail "$1: raidfuse check: $("$R" check "$MNT" 2>&1)"
	"$R" wait "$MNT" >/dev/null || fail "$1: raidfuse wait"
	[ "$(cat "$MNT/.raidfuse/mismatch_cnt")" = 0 ] || fail "$1: check found $(cat "$MNT/.raidfuse/mismatch_cnt")"
}
M=$((1024 * 1024))

# ---- 1. every level that offers it -------------------------------------------
# name level members copies extra-create-args
for spec in "linear linear 2 1" "raid0 0 3 1 -c 64K" "raid1 1 2 2" "raid10-n2 10 4 2 -c 64K" \
	"raid10-f2 10 3 2 -c 64K -p f2"; do
	read -r name level n copies extra <<<"$spec"
	members=()
	for ((i = 0; i < n; i++)); do members+=("$name$i"); done
	# shellcheck disable=SC2086
	"$R" create -l "$level" -n "$n" -z 48M $extra "${members[@]}" >/dev/null || fail "$name: create"
	mnt_ok "$name" "${members[@]}"
	size=$(stat -c %s "$MNT/volume.img")
	head -c "$size" /dev/urandom >ref
	dd if=ref of="$MNT/volume.img" bs=1M conv=notrunc,fsync status=none || fail "$name: write"
	before=$(alloc_kib "${members[@]}")
	fallocate --punch-hole --keep-size -o $((4 * M)) -l $((16 * M)) "$MNT/volume.img" ||
		fail "$name: punching 16 MiB at 4 MiB"
	fallocate --punch-hole --keep-size -o 1000 -l 1000 "$MNT/volume.img" || fail "$name: unaligned punch"
	fallocate -z -o $((30 * M)) -l $((M + 512)) "$MNT/volume.img" || fail "$name: zero range"
	fallocate --punch-hole --keep-size -o $((size - 4096)) -l $((2 * M)) "$MNT/volume.img" ||
		fail "$name: punch past the end with --keep-size"
	if fallocate -o 0 -l $((size + M)) "$MNT/volume.img" 2>err; then fail "$name: the volume grew"; fi
	grep -q "too large" err || fail "$name: growing: $(cat err)"
	same_as_ref "$name" $((4 * M)):$((16 * M)) 1000:1000 $((30 * M)):$((M + 512)) $((size - 4096)):4096
	after=$(alloc_kib "${members[@]}")
	freed=$((before - after)) want=$((16 * 1024 * copies * 9 / 10))
	[ "$freed" -ge "$want" ] || fail "$name: members gave back $freed KiB of a 16 MiB hole x$copies (want >= $want)"
	[ "$copies" = 1 ] || scrub_check "$name"
	umnt
	"$R" verify "${members[@]}" >verify.out 2>&1 || [ "$copies" = 1 ] ||
		fail "$name: verify: $(cat verify.out)"
	log "ok: $name: holes and zeroed ranges read as zeros, the rest as written; $freed KiB given back; copies agree"
done

# ---- 2. RAID1 while a rebuild runs ------------------------------------------
"$R" create -l 1 -n 2 -z 48M w0 w1 >/dev/null || fail "create raid1"
mnt_ok "raid1" w0 w1
size=$(stat -c %s "$MNT/volume.img")
head -c "$size" /dev/urandom >ref
dd if=ref of="$MNT/volume.img" bs=1M conv=notrunc,fsync status=none || fail "raid1: write"
"$R" fail "$MNT" w1 >/dev/null && "$R" remove "$MNT" w1 >/dev/null || fail "raid1: fail/remove w1"
truncate -s 48M w2
echo 1 >"$MNT/.raidfuse/sync_speed_min" # or the floor (1000) wins, as in md
echo 4000 >"$MNT/.raidfuse/sync_speed_max"
"$R" add "$MNT" "$WORK/w2" >/dev/null || fail "raid1: add w2"
for i in $(seq 100); do
	done_s=$(cut -d' ' -f1 "$MNT/.raidfuse/sync_completed")
	[ "$done_s" != none ] && [ "$done_s" -ge 16384 ] && break # 8 MiB rebuilt
	sleep 0.1
done
[ "$done_s" != none ] && [ "$done_s" -lt 81920 ] || fail "raid1: the rebuild is not halfway: $done_s"
fallocate --punch-hole --keep-size -o $((2 * M)) -l $((36 * M)) "$MNT/volume.img" ||
	fail "raid1: punching across the rebuild point"
echo 1000000 >"$MNT/.raidfuse/sync_speed_max"
"$R" wait "$MNT" >/dev/null || fail "raid1: wait for the rebuild"
same_as_ref "raid1 rebuilt" $((2 * M)):$((36 * M))
umnt
"$R" verify w0 w2 >verify.out 2>&1 || fail "raid1: verify after the rebuild: $(cat verify.out)"
log "ok: raid1: a hole across the rebuild point ($((done_s / 2048)) MiB rebuilt) leaves both copies equal"

# ---- 3. RAID5: not offered ---------------------------------------------------
"$R" create -l 5 -n 3 -c 64K -z 16M f0 f1 f2 >/dev/null || fail "create raid5"
mnt_ok "raid5" f0 f1 f2
size=$(stat -c %s "$MNT/volume.img")
head -c "$size" /dev/urandom >ref
dd if=ref of="$MNT/volume.img" bs=1M conv=notrunc,fsync status=none || fail "raid5: write"
if fallocate --punch-hole --keep-size -o 0 -l $M "$MNT/volume.img" 2>err; then fail "raid5: punch accepted"; fi
grep -Eq "not supported|unsupported" err || fail "raid5: punch: $(cat err)"
same_as_ref "raid5"
umnt
log "ok: raid5: punching is refused (EOPNOTSUPP), nothing changed"

# ---- 4. mkfs.ext4 and fstrim through a loop device --------------------------
"$R" create -l 10 -n 4 -c 64K -z 128M t0 t1 t2 t3 >/dev/null || fail "create raid10"
mnt_ok "raid10" t0 t1 t2 t3
dd if=/dev/urandom of="$MNT/volume.img" bs=1M count=200 conv=notrunc,fsync status=none ||
	fail "raid10: fill"
full=$(alloc_kib t0 t1 t2 t3)
loopdev=$(losetup -f --show "$MNT/volume.img") || fail "losetup"
mkfs.ext4 -q "$loopdev" || fail "mkfs.ext4"
made=$(alloc_kib t0 t1 t2 t3)
[ "$made" -lt $((full / 10)) ] || fail "mkfs.ext4's discard left $made KiB of $full KiB allocated"
mount "$loopdev" fsm || fail "mount the ext4"
dd if=/dev/urandom of=fsm/f bs=1M count=100 conv=fsync status=none || fail "write a file"
used=$(alloc_kib t0 t1 t2 t3)
rm fsm/f
sync # the blocks are free for fstrim once the journal has committed
fstrim fsm || fail "fstrim"
trimmed=$(alloc_kib t0 t1 t2 t3)
[ "$trimmed" -lt $((made + 20 * 1024)) ] || fail "fstrim left $trimmed KiB (after mkfs $made, with the file $used)"
umount fsm || fail "umount the ext4"
e2fsck -fn "$loopdev" >fsck.out 2>&1 || fail "e2fsck: $(cat fsck.out)"
losetup -d "$loopdev" && loopdev=
scrub_check "raid10 after fstrim"
umnt
log "ok: raid10: mkfs.ext4 discards ($full -> $made KiB on the members), fstrim gives a removed file back ($used -> $trimmed KiB), e2fsck clean, check 0"
