#!/bin/bash
# discard.sh - punching holes in and zeroing ranges of volume.img (what a
# loop device's discard and write-zeroes, fstrim and mkfs send), on every
# level:
#  1. per level, on sparse member files: an aligned hole, an unaligned one
#     (1000 bytes at 1000) and a zeroed range (fallocate -z) read back as
#     zeros, every other byte as written; the members give back the space
#     of the aligned hole (on every copy; on RAID5/6 data and parity of
#     the whole rows in it); a check finds 0 mismatches and the offline
#     verify 0; a range reaching past the end is zeroed up to the end with
#     --keep-size, and growing the volume is refused (EFBIG);
#  2. RAID1 and RAID5 with a rebuild running: a hole punched over the
#     rebuilt part, the part still to copy and the boundary leaves the
#     members consistent once the rebuild ends (verify 0) and the volume
#     reading zeros there;
#  3. RAID5 and RAID6 with a small write-back cache: holes punched over
#     rows the cache holds dirty read back as zeros (the cached bytes are
#     dropped, not written over the zeros later), on a RAID6 missing two
#     members too, whose rebuild then gives verify 0; and fio random
#     writes with holes punched at random alongside leave no torn row
#     (check 0);
#  4. mkfs.ext4 on a loop device over a RAID10 and a RAID5 volume discards
#     it (the members become sparse), a file written and removed is given
#     back by fstrim, e2fsck is clean and the check finds 0;
#  5. members that are block devices: loop devices (which have
#     write-zeroes) take a RAID5's holes, and their backing files give the
#     space back; a member that can zero only by writing (a disk without
#     write-zeroes, played by the fault no-write-zeroes, as no such disk is
#     here) makes a punch fail with EOPNOTSUPP, said once in the log,
#     nothing changed, while zeroing a range (fallocate -z) still works;
#  6. a part of a row zeroed where md's bad block log leaves no member to
#     read (degraded RAID5, write-through) fails with EIO, as a write there
#     does, not ENODATA ("No data available").
# Why: punching was refused (EOPNOTSUPP), so member files only ever grew,
# and fstrim inside the volume freed nothing on the host.
. "$(dirname "$0")/lib.sh"
require_fuse
require_root
require_cmd fallocate losetup mkfs.ext4 e2fsck fstrim python3 fio

cd "$WORK"
R=$RAIDFUSE
MNT=$WORK/mnt
mkdir -p "$MNT" fsm
track_mount "$MNT"
track_mount "$WORK/fsm"
loopdev=
member_loops=()
_discard_cleanup() {
	mountpoint -q "$WORK/fsm" && umount "$WORK/fsm"
	[ -z "$loopdev" ] || losetup -d "$loopdev" 2>/dev/null || true
	_cleanup
	for l in "${member_loops[@]}"; do losetup -d "$l" 2>/dev/null || true; done
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

# ---- 1. every level ----------------------------------------------------------
# name level members space redundant extra-create-args; space: member bytes
# a hole frees per volume byte (copies, or members over data members)
for spec in "linear linear 2 1/1 0" "raid0 0 3 1/1 0 -c 64K" "raid1 1 2 2/1 1" \
	"raid10-n2 10 4 2/1 1 -c 64K" "raid10-f2 10 3 2/1 1 -c 64K -p f2" \
	"raid5 5 3 3/2 1 -c 64K" "raid6 6 5 5/3 1 -c 64K"; do
	read -r name level n space redundant extra <<<"$spec"
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
	freed=$((before - after)) want=$((16 * 1024 * ${space%/*} / ${space#*/} * 9 / 10))
	[ "$freed" -ge "$want" ] || fail "$name: members gave back $freed KiB of a 16 MiB hole x$space (want >= $want)"
	[ "$redundant" = 0 ] || scrub_check "$name"
	umnt
	"$R" verify "${members[@]}" >verify.out 2>&1 || [ "$redundant" = 0 ] ||
		fail "$name: verify: $(cat verify.out)"
	log "ok: $name: holes and zeroed ranges read as zeros, the rest as written; $freed KiB given back; redundancy agrees"
done

# ---- 2. RAID1 and RAID5 while a rebuild runs ---------------------------------
for spec in "raid1 1 2" "raid5 5 3 -c 64K"; do
	read -r name level n extra <<<"$spec"
	members=()
	for ((i = 0; i < n; i++)); do members+=("w$name$i"); done
	last=${members[n - 1]}
	# shellcheck disable=SC2086
	"$R" create -l "$level" -n "$n" -z 48M $extra "${members[@]}" >/dev/null || fail "$name: create"
	mnt_ok "$name" "${members[@]}"
	size=$(stat -c %s "$MNT/volume.img")
	head -c "$size" /dev/urandom >ref
	dd if=ref of="$MNT/volume.img" bs=1M conv=notrunc,fsync status=none || fail "$name: write"
	"$R" fail "$MNT" "$last" >/dev/null && "$R" remove "$MNT" "$last" >/dev/null ||
		fail "$name: fail/remove $last"
	truncate -s 48M "w${name}new"
	echo 1 >"$MNT/.raidfuse/sync_speed_min" # or the floor (1000) wins, as in md
	echo 4000 >"$MNT/.raidfuse/sync_speed_max"
	"$R" add "$MNT" "$WORK/w${name}new" >/dev/null || fail "$name: add w${name}new"
	for i in $(seq 100); do
		done_s=$(cut -d' ' -f1 "$MNT/.raidfuse/sync_completed")
		[ "$done_s" != none ] && [ "$done_s" -ge 16384 ] && break # 8 MiB rebuilt
		sleep 0.1
	done
	[ "$done_s" != none ] && [ "$done_s" -lt 81920 ] || fail "$name: the rebuild is not halfway: $done_s"
	fallocate --punch-hole --keep-size -o $((2 * M)) -l $((36 * M)) "$MNT/volume.img" ||
		fail "$name: punching across the rebuild point"
	echo 1000000 >"$MNT/.raidfuse/sync_speed_max"
	"$R" wait "$MNT" >/dev/null || fail "$name: wait for the rebuild"
	same_as_ref "$name rebuilt" $((2 * M)):$((36 * M))
	umnt
	unset 'members[n - 1]'
	"$R" verify "${members[@]}" "w${name}new" >verify.out 2>&1 ||
		fail "$name: verify after the rebuild: $(cat verify.out)"
	log "ok: $name: a hole across the rebuild point ($((done_s / 2048)) MiB rebuilt) leaves the members consistent"
done

# ---- 3. RAID5/6 with dirty rows in the cache, degraded, under fio -----------
"$R" create -l 6 -n 5 -c 64K -z 32M d0 d1 d2 d3 d4 >/dev/null || fail "create raid6"
mnt_ok "raid6 cached" d0 d1 d2 d3 d4 --cache-mib 16 --flush-age-ms 60000
size=$(stat -c %s "$MNT/volume.img")
head -c "$size" /dev/urandom >ref
dd if=ref of="$MNT/volume.img" bs=1M conv=notrunc,fsync status=none || fail "raid6: write"
# Rows the cache holds: clean ones (read) over 4-6 MiB, dirty ones over 8-10
# MiB (every other 4 KiB page written, not synced: no row is complete, so
# none goes out at once).
dd if="$MNT/volume.img" of=/dev/null bs=1M skip=4 count=2 status=none || fail "raid6: read"
python3 - "$MNT/volume.img" ref <<'PY' || fail "raid6: rewriting every other page"
import os, sys
vol, ref = os.open(sys.argv[1], os.O_WRONLY), os.open(sys.argv[2], os.O_WRONLY)
for off in range(8 << 20, 10 << 20, 8192):
    page = os.urandom(4096)
    os.pwrite(vol, page, off)
    os.pwrite(ref, page, off)
PY
dirty=$(sed -n 's/^cache_dirty_rows: //p' "$MNT/.raidfuse/status")
[ "${dirty:-0}" -ge 8 ] || fail "raid6: ${dirty:-0} dirty rows in the cache after the rewrite (want >= 8)"
holes="$((4 * M + 100000)):$((M + 300000)) $((8 * M + 100000)):$((M + 300000))"
for h in $holes; do
	fallocate --punch-hole --keep-size -o "${h%:*}" -l "${h#*:}" "$MNT/volume.img" ||
		fail "raid6: punching $h over cached rows"
done
# shellcheck disable=SC2086
same_as_ref "raid6 over cached rows" $holes
python3 -c 'import os,sys; fd=os.open(sys.argv[1],os.O_RDWR); os.fsync(fd)' "$MNT/volume.img"
# shellcheck disable=SC2086
same_as_ref "raid6 over cached rows, synced" $holes
zeroed=$(sed -n 's/^zeroed_rows: //p' "$MNT/.raidfuse/status")
[ "${zeroed:-0}" -gt 0 ] || fail "raid6: status counts no zeroed rows"
# Two members missing: the holes reach the three left, and a rebuild of two
# new members makes the rows whole again.
"$R" fail "$MNT" d1 >/dev/null && "$R" remove "$MNT" d1 >/dev/null || fail "raid6: fail d1"
"$R" fail "$MNT" d3 >/dev/null && "$R" remove "$MNT" d3 >/dev/null || fail "raid6: fail d3"
fallocate --punch-hole --keep-size -o $((20 * M)) -l $((5 * M)) "$MNT/volume.img" ||
	fail "raid6: punching with two members missing"
fallocate -z -o $((40 * M + 4096)) -l 12288 "$MNT/volume.img" || fail "raid6: zeroing with two missing"
holes="$holes $((20 * M)):$((5 * M)) $((40 * M + 4096)):12288"
# shellcheck disable=SC2086
same_as_ref "raid6 with two missing" $holes
truncate -s 32M d5 d6
"$R" add "$MNT" "$WORK/d5" >/dev/null && "$R" add "$MNT" "$WORK/d6" >/dev/null || fail "raid6: add d5 d6"
"$R" wait "$MNT" >/dev/null || fail "raid6: wait for the rebuild"
# shellcheck disable=SC2086
same_as_ref "raid6 rebuilt" $holes
scrub_check "raid6 rebuilt"
umnt
"$R" verify d0 d2 d4 d5 d6 >verify.out 2>&1 || fail "raid6: verify after the rebuild: $(cat verify.out)"
log "ok: raid6: holes over dirty cached rows and with two members missing read as zeros; rebuilt, verify 0"

# fio random writes in 4-64 KiB blocks while holes of 4 KiB to 1 MiB (whole
# rows, parts of rows) are punched at random: a row torn between a flush and
# a hole would leave its parity wrong.
for spec in "raid5 5 4 --cache-mib 2" "raid6 6 5 --cache-mib 2" "raid5-nocache 5 4 --cache-mib 0"; do
	read -r name level n opts <<<"$spec"
	members=()
	for ((i = 0; i < n; i++)); do members+=("s$name$i"); done
	"$R" create -l "$level" -n "$n" -c 16K -z 16M "${members[@]}" >/dev/null || fail "$name: create"
	# shellcheck disable=SC2086
	mnt_ok "$name" "${members[@]}" $opts --flush-age-ms 50
	size=$(stat -c %s "$MNT/volume.img")
	fio --name=w --filename="$MNT/volume.img" --rw=randwrite --bsrange=4k-64k --ioengine=psync \
		--numjobs=3 --size="$size" --time_based --runtime=6 --group_reporting >fio.out 2>&1 &
	fio_pid=$!
	punches=0
	while kill -0 "$fio_pid" 2>/dev/null; do
		off=$(((RANDOM * 32768 + RANDOM) % (size / 4096) * 4096))
		len=$(((RANDOM % 256 + 1) * 4096))
		fallocate --punch-hole --keep-size -o "$off" -l "$len" "$MNT/volume.img" ||
			fail "$name: punch $len at $off under fio"
		punches=$((punches + 1))
	done
	wait "$fio_pid" || fail "$name: fio: $(tail -5 fio.out)"
	[ "$punches" -ge 20 ] || fail "$name: only $punches punches ran under fio"
	scrub_check "$name under fio"
	umnt
	"$R" verify "${members[@]}" >verify.out 2>&1 || fail "$name: verify: $(cat verify.out)"
	log "ok: $name: $punches holes punched under fio random writes, no torn row (check 0, verify 0)"
done

# ---- 4. mkfs.ext4 and fstrim through a loop device --------------------------
for spec in "raid10 10" "raid5 5"; do
	read -r name level <<<"$spec"
	t=(t${name}0 t${name}1 t${name}2 t${name}3)
	"$R" create -l "$level" -n 4 -c 64K -z 128M "${t[@]}" >/dev/null || fail "create $name"
	mnt_ok "$name" "${t[@]}"
	dd if=/dev/urandom of="$MNT/volume.img" bs=1M count=200 conv=notrunc,fsync status=none ||
		fail "$name: fill"
	full=$(alloc_kib "${t[@]}")
	loopdev=$(losetup -f --show "$MNT/volume.img") || fail "losetup"
	mkfs.ext4 -q "$loopdev" || fail "$name: mkfs.ext4"
	made=$(alloc_kib "${t[@]}")
	[ "$made" -lt $((full / 10)) ] || fail "$name: mkfs.ext4's discard left $made KiB of $full KiB allocated"
	mount "$loopdev" fsm || fail "$name: mount the ext4"
	dd if=/dev/urandom of=fsm/f bs=1M count=100 conv=fsync status=none || fail "$name: write a file"
	used=$(alloc_kib "${t[@]}")
	rm fsm/f
	sync # the blocks are free for fstrim once the journal has committed
	fstrim fsm || fail "$name: fstrim"
	trimmed=$(alloc_kib "${t[@]}")
	# Under the load of parallel tests, one clean-clone run found that
	# fstrim had given back nothing at all (the freed blocks not yet
	# released by ext4); a user runs fstrim again. The bound is the same.
	for again in 1 2; do
		[ "$trimmed" -ge $((made + 20 * 1024)) ] || break
		log "$name: fstrim left $trimmed KiB; syncing and trimming again ($again)"
		sync
		sleep 1
		fstrim fsm || fail "$name: fstrim"
		trimmed=$(alloc_kib "${t[@]}")
	done
	[ "$trimmed" -lt $((made + 20 * 1024)) ] ||
		fail "$name: fstrim left $trimmed KiB (after mkfs $made, with the file $used)"
	umount fsm || fail "$name: umount the ext4"
	e2fsck -fn "$loopdev" >fsck.out 2>&1 || fail "$name: e2fsck: $(cat fsck.out)"
	losetup -d "$loopdev" && loopdev=
	scrub_check "$name after fstrim"
	umnt
	log "ok: $name: mkfs.ext4 discards ($full -> $made KiB on the members), fstrim gives a removed file back ($used -> $trimmed KiB), e2fsck clean, check 0"
done

# ---- 5. block device members; members that zero only by writing ------------
truncate -s 48M b0 b1 b2
for f in b0 b1 b2; do
	l=$(losetup -f --show "$WORK/$f") || fail "losetup $f"
	member_loops+=("$l")
done
wz=$(cat "/sys/class/block/${member_loops[0]#/dev/}/queue/write_zeroes_max_bytes")
[ "$wz" -gt 0 ] || fail "loop devices here have no write-zeroes ($wz): the test needs them"
"$R" create -l 5 -n 3 -c 64K "${member_loops[@]}" >/dev/null || fail "create raid5 on loop devices"
mnt_ok "raid5 on loop devices" "${member_loops[@]}"
grep -qx "discard: yes" "$MNT/.raidfuse/status" && grep -q '"discard":true' "$MNT/.raidfuse/status.json" ||
	fail "raid5 loops: the status says $(grep discard "$MNT/.raidfuse/status")"
size=$(stat -c %s "$MNT/volume.img")
head -c "$size" /dev/urandom >ref
dd if=ref of="$MNT/volume.img" bs=1M conv=notrunc,fsync status=none || fail "raid5 loops: write"
sync
before=$(alloc_kib b0 b1 b2)
fallocate --punch-hole --keep-size -o $((3 * M)) -l $((24 * M)) "$MNT/volume.img" ||
	fail "raid5 loops: punching 24 MiB"
same_as_ref "raid5 on loop devices" $((3 * M)):$((24 * M))
sync
freed=$((before - $(alloc_kib b0 b1 b2)))
[ "$freed" -ge $((24 * 1024 * 3 / 2 * 9 / 10)) ] ||
	fail "raid5 loops: the loop devices' files gave back $freed KiB of a 24 MiB hole x3/2"
scrub_check "raid5 on loop devices"
log "ok: raid5 on loop devices (write-zeroes $wz bytes): a hole reads as zeros, $freed KiB given back, check 0"

# A member that zeroes only by writing: discard refused, zeroing still works.
dev=$(dev_of "$MNT" "${member_loops[1]}") || fail "no devN for ${member_loops[1]}"
echo no-write-zeroes >"$MNT/.raidfuse/$dev/fault" || fail "cannot set no-write-zeroes"
grep -q no-write-zeroes "$MNT/.raidfuse/$dev/fault" || fail "fault reads $(cat "$MNT/.raidfuse/$dev/fault")"
grep -qx "discard: no (${member_loops[1]} zeroes only by writing)" "$MNT/.raidfuse/status" &&
	grep -q '"discard":false' "$MNT/.raidfuse/status.json" ||
	fail "the status does not say why discards are refused: $(grep discard "$MNT/.raidfuse/status")"
dd if=ref of="$MNT/volume.img" bs=1M conv=notrunc,fsync status=none || fail "raid5 loops: rewrite"
for i in 1 2; do
	if fallocate --punch-hole --keep-size -o $((4 * M)) -l $((2 * M)) "$MNT/volume.img" 2>err; then
		fail "raid5 loops: punch accepted with a member that zeroes by writing"
	fi
	grep -Eq "not supported|unsupported" err || fail "raid5 loops: punch: $(cat err)"
done
same_as_ref "raid5 loops, punch refused"
n=$(grep -c "discard refused (not supported): ${member_loops[1]} zeroes a range only by writing" \
	"$MNT/.raidfuse/log")
[ "$n" = 1 ] || fail "the log says the refusal $n times (want once): $(tail -3 "$MNT/.raidfuse/log")"
fallocate -z -o $((4 * M + 4096)) -l $((M + 1000)) "$MNT/volume.img" || fail "raid5 loops: zero range"
same_as_ref "raid5 loops, zero range" $((4 * M + 4096)):$((M + 1000))
echo clear >"$MNT/.raidfuse/$dev/fault"
fallocate --punch-hole --keep-size -o $((4 * M)) -l $((2 * M)) "$MNT/volume.img" ||
	fail "raid5 loops: punch after the fault was cleared"
same_as_ref "raid5 loops, punched" $((4 * M)):$((2 * M))
scrub_check "raid5 loops, after zeroing"
umnt
log "ok: a member that zeroes only by writing: punch refused (EOPNOTSUPP, logged once), nothing changed; fallocate -z zeroes; punch works again once cleared"

# ---- 6. md's bad block log under a part of a row -----------------------------
# Row 0 of a RAID5 of 3 (left-symmetric): chunk 0 on role 0, chunk 1 on
# role 1, parity on role 2. With role 0 missing and the parity's first
# column logged as bad, 4 KiB of chunk 1 can be written by neither
# read-modify-write (old parity) nor reconstruct-write (chunk 0).
"$R" create -l 5 -n 3 -c 64K -z 24M bb0 bb1 bb2 >/dev/null || fail "bbl: create"
mnt_ok "bbl fill" bb0 bb1 bb2
dd if=/dev/urandom of="$MNT/volume.img" bs=1M count=16 conv=notrunc,fsync status=none || fail "bbl: fill"
umnt
log_bad bb2 0 8 || fail "bbl: logging"
mnt_ok "bbl" --run bb1 bb2 --write-through
if dd if=/dev/zero of="$MNT/volume.img" bs=4k seek=16 count=1 conv=notrunc status=none 2>err; then
	fail "bbl: a write where no member holds the logged sectors succeeded"
fi
grep -q "Input/output error" err || fail "bbl: the write: $(cat err)"
for how in -z -p; do
	if fallocate "$how" -o 65536 -l 4096 "$MNT/volume.img" 2>err; then
		fail "bbl: fallocate $how where no member holds the logged sectors succeeded"
	fi
	grep -q "Input/output error" err || fail "bbl: fallocate $how: $(cat err)"
done
# The failed write leaves the array not stopped cleanly: say so, unmount.
"$R" umount "$MNT" >/dev/null 2>&1
! mountpoint -q "$MNT" || fail "bbl: $MNT is still mounted"
log "ok: raid5: zeroing a part of a row md's bad block log leaves unwritable fails with EIO, as a write does"
