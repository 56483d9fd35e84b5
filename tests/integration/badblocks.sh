#!/bin/bash
# badblocks.sh - md's bad block log is honoured and kept: sectors md logged
# as bad on a member (a write that failed there without failing the member)
# hold stale bytes, so raidfuse must never serve them; writes and mends that
# make them good take them out of the log, as md does.
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
#   - a read-only mount reads md's exact bytes (sha256 of the manifest),
#     with every member still in the array, and changes nothing;
#   - verify refuses, saying why;
#   - a read-write mount lists the ranges (devN/bad_blocks, status.json);
#     a check rewrites every logged sector from redundancy (data and parity
#     alike) and finds no mismatch; the logs are empty afterwards, in
#     memory and on the members (mdadm --examine-badblocks lists nothing,
#     the checksum is right), the volume still reads md's bytes, and the
#     offline verify, which compares every byte, passes: the garbage is gone;
#   - writes alone clear them too: the whole volume overwritten, fsync, the
#     daemon killed with SIGKILL: the logs on the members are already empty
#     (fsync wrote them, after the data), and the volume reads what was
#     written, parity consistent;
#   - without the feature bit (control), the garbage is what is read: the
#     checks above would have caught a raidfuse that ignored the log;
#   - the same sectors logged on both RAID1 members: those bytes read as an
#     I/O error (as under md), the rest of the volume reads fine, no member
#     is failed; a write there makes them good on both.
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

# log_entries MEMBER: the entries md would read from MEMBER's log (none
# when the feature bit is off), one "SECTOR COUNT" line each.
log_entries() {
	python3 - "$1" <<'PY'
import struct, sys
with open(sys.argv[1], "rb") as f:
    f.seek(4096)
    sb = f.read(4096)
    feature, = struct.unpack_from("<I", sb, 8)
    size, = struct.unpack_from("<H", sb, 186)
    offset, = struct.unpack_from("<i", sb, 188)
    if not feature & 8:
        sys.exit(0)
    f.seek((8 + offset) * 512)
    log = f.read(size * 512)
for i in range(0, len(log), 8):
    e, = struct.unpack_from("<Q", log, i)
    if e == (1 << 64) - 1:
        break
    print(e >> 10, e & 0x3ff)
PY
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
	log "ok: $name: read-only reads md's exact bytes around every logged sector, all members in, nothing written"

	"$RAIDFUSE" verify "${members[@]}" >verify.out 2>&1 && fail "$name: verify ignored the bad block log"
	grep -q "bad block log marks" verify.out ||
		fail "$name: verify does not explain the refusal: $(cat verify.out)"
	log "ok: $name: verify refuses, naming the logged sectors"

	# Read-write: a check mends every logged sector.
	mnt_ok "$name read-write" "${members[@]}"
	grep -q "^$((off + 2048)) 8\$" "$MNT/.raidfuse/dev0/bad_blocks" ||
		fail "$name: dev0/bad_blocks does not list the range: $(cat "$MNT/.raidfuse/dev0/bad_blocks")"
	grep -q '"bad_block_sectors":[1-9]' "$MNT/.raidfuse/status.json" ||
		fail "$name: status.json does not count the logged sectors"
	"$RAIDFUSE" check "$MNT" >/dev/null && "$RAIDFUSE" wait "$MNT" >/dev/null ||
		fail "$name: check: $(tail -n 5 "$MNT/.raidfuse/log")"
	[ "$(cat "$MNT/.raidfuse/mismatch_cnt")" = 0 ] ||
		fail "$name: check found $(cat "$MNT/.raidfuse/mismatch_cnt") mismatched sectors"
	grep -q "corrected" "$MNT/.raidfuse/log" || fail "$name: the log does not say what was rewritten"
	for d in "$MNT"/.raidfuse/dev*/; do
		[ -n "$(cat "$d/bad_blocks")" ] && fail "$name: $d still lists bad blocks: $(cat "$d/bad_blocks")"
	done
	grep -q "\[$n/$n\]" "$MNT/.raidfuse/status" ||
		fail "$name: a member was failed by the mends: $(cat "$MNT/.raidfuse/status")"
	got=$(sha256sum <"$MNT/volume.img" | cut -d' ' -f1)
	umnt
	[ "$got" = "$want" ] || fail "$name: after the check the volume reads $got, md's array is $want"
	for m in "${members[@]}"; do
		[ -z "$(log_entries "$m")" ] || fail "$name: $m: the log on the member still holds: $(log_entries "$m")"
		mdadm --examine-badblocks "$m" 2>&1 | grep -q "for [0-9]* sectors" &&
			fail "$name: mdadm still lists bad blocks on $m: $(mdadm --examine-badblocks "$m" 2>&1)"
		mdadm --examine "$m" | grep -q "Checksum : .* correct" ||
			fail "$name: $m: mdadm says the superblock checksum is wrong"
	done
	"$RAIDFUSE" verify "${members[@]}" >verify.out 2>&1 ||
		fail "$name: verify after the mends (the garbage must be gone): $(cat verify.out)"
	log "ok: $name: read-write check rewrote every logged sector, logs empty on the members, md's bytes, verify passes"

	# Writes alone make logged sectors good; fsync stores the log.
	md_ref_unpack "$name" "$WORK/$name"
	logged "$WORK/$name" "$name" "${entries[@]}"
	head -c "$(md_ref_field "$name" array_size_bytes)" /dev/urandom >new.img
	mnt_ok "$name write" "${members[@]}"
	dd if=new.img of="$MNT/volume.img" bs=1M conv=fsync,notrunc status=none ||
		fail "$name: writing the volume"
	for m in "${members[@]}"; do
		[ -z "$(log_entries "$m")" ] ||
			fail "$name: $m: after fsync the log on the member still holds: $(log_entries "$m")"
	done
	rf_kill "$MNT"
	mnt_ok "$name after the kill" --readonly "${members[@]}"
	got=$(sha256sum <"$MNT/volume.img" | cut -d' ' -f1)
	umnt
	[ "$got" = "$(sha256sum <new.img | cut -d' ' -f1)" ] ||
		fail "$name: the volume does not read back what was written and fsynced"
	"$RAIDFUSE" verify "${members[@]}" >verify.out 2>&1 ||
		fail "$name: verify after the writes: $(cat verify.out)"
	log "ok: $name: writes over logged sectors clear them; after fsync and SIGKILL the logs are empty and the data and parity hold"

	# Control: the same garbage without the log is what a reader gets.
	md_ref_unpack "$name" "$WORK/$name"
	log_bad --no-feature "$m0" 2048 8 || fail "$name: control garbage"
	mnt_ok "$name control" --readonly "${members[@]}"
	got=$(sha256sum <"$MNT/volume.img" | cut -d' ' -f1)
	umnt
	[ "$got" != "$want" ] || fail "$name: control: garbage on a member without a log still read as md's bytes"
	rm -rf "${WORK:?}/$name"
done

# Small writes into a RAID5 row whose members 0 and 1 log sectors in
# different 4 KiB columns (row 16 of raid5-ls-64k: roles 0, 1, 2 hold data
# chunks 0, 1, 2, role 3 parity; role 0 logs its column 0, role 1 its
# column 5). 24 KiB at the start of chunk 2 is flushed by reconstruct-write,
# which needs chunks 0 and 1 in columns 0-5: no single read of that band
# finds both, column by column each is rebuilt from the rest. 4 KiB at the
# start of chunk 0 needs, by read-modify-write, the logged column itself.
md_ref_unpack raid5-ls-64k "$WORK/r5"
logged "$WORK/r5" raid5-ls-64k 0:2048:8 1:2088:8
members=("$WORK"/r5/*.img)
row=$((3 << 20))
mnt_ok "raid5 small writes, what md wrote" --readonly "${members[@]}"
cp "$MNT/volume.img" expect.img
umnt
mnt_ok "raid5 small writes" "${members[@]}"
head -c 24576 /dev/urandom >w24k
head -c 4096 /dev/urandom >w4k
dd if=w24k of=expect.img bs=4k seek=$(((row + 131072) / 4096)) conv=notrunc status=none
dd if=w4k of=expect.img bs=4k seek=$((row / 4096)) conv=notrunc status=none
dd if=w24k of="$MNT/volume.img" bs=4k seek=$(((row + 131072) / 4096)) oflag=direct conv=notrunc,fsync status=none ||
	fail "raid5: 24 KiB into a row whose two members log sectors in its columns: $(tail -n 3 "$MNT/.raidfuse/log")"
dd if=w4k of="$MNT/volume.img" bs=4k seek=$((row / 4096)) oflag=direct conv=notrunc,fsync status=none ||
	fail "raid5: 4 KiB over a logged column: $(tail -n 3 "$MNT/.raidfuse/log")"
grep -q "\[4/4\]" "$MNT/.raidfuse/status" || fail "raid5: a member was failed: $(cat "$MNT/.raidfuse/status")"
umnt
for m in "${members[@]}"; do
	[ -z "$(log_entries "$m")" ] || fail "raid5: $m still logs: $(log_entries "$m")"
done
"$RAIDFUSE" verify "${members[@]}" >verify.out 2>&1 || fail "raid5: verify after small writes: $(cat verify.out)"
mnt_ok "raid5 small writes, read back" --readonly "${members[@]}"
cmp -s expect.img "$MNT/volume.img" || fail "raid5: the volume does not read what was written"
umnt
log "ok: raid5: small writes into a row with logged sectors on two members: both mended, parity consistent, data as written"

# Read-modify-write needs the old bytes of the chunk written and of the
# parity; when both log sectors in that column, it cannot run, and the
# write goes out by reconstruct-write from the other chunks instead. RAID5
# of 6 made by raidfuse (md-refs has no array wide enough for md's choice of
# read-modify-write), which leaves room for the log where mdadm does. Row 16
# (left-symmetric): parity on role 1, chunk 0 on role 2; both log column 0.
for i in 0 1 2 3 4 5; do truncate -s 24M "$WORK/w$i.img"; done
"$RAIDFUSE" create --level 5 --raid-devices 6 --chunk 64K --bitmap none "$WORK"/w?.img >/dev/null ||
	fail "raid5 x6: create"
mnt_ok "raid5 x6 fill" "$WORK"/w?.img
head -c "$(stat -c %s "$MNT/volume.img")" /dev/urandom >expect6.img
dd if=expect6.img of="$MNT/volume.img" bs=1M conv=notrunc,fsync status=none || fail "raid5 x6: fill"
umnt
log_bad "$WORK/w1.img" 2048 8 && log_bad "$WORK/w2.img" 2048 8 || fail "raid5 x6: logging"
mnt_ok "raid5 x6" "$WORK"/w?.img
grep -q . "$MNT/.raidfuse/dev1/bad_blocks" && grep -q . "$MNT/.raidfuse/dev2/bad_blocks" ||
	fail "raid5 x6: the logs are not loaded"
head -c 4096 /dev/urandom >w4k
dd if=w4k of=expect6.img bs=4k seek=$((5 * 256)) conv=notrunc status=none
dd if=w4k of="$MNT/volume.img" bs=4k seek=$((5 * 256)) oflag=direct conv=notrunc,fsync status=none ||
	fail "raid5 x6: 4 KiB where the chunk and the parity both log sectors: $(tail -n 3 "$MNT/.raidfuse/log")"
grep -q '"rcw_writes":[1-9]' "$MNT/.raidfuse/status.json" ||
	fail "raid5 x6: no reconstruct-write counted: $(grep -o '"r[a-z]*_writes":[0-9]*' "$MNT/.raidfuse/status.json")"
umnt
for i in 1 2; do
	[ -z "$(log_entries "$WORK/w$i.img")" ] || fail "raid5 x6: w$i still logs: $(log_entries "$WORK/w$i.img")"
done
"$RAIDFUSE" verify "$WORK"/w?.img >verify.out 2>&1 || fail "raid5 x6: verify: $(cat verify.out)"
mnt_ok "raid5 x6 read back" --readonly "$WORK"/w?.img
cmp -s expect6.img "$MNT/volume.img" || fail "raid5 x6: the volume does not read what was written"
umnt
log "ok: raid5 x6: chunk and parity logged in the column written: reconstruct-write instead, both made good"

# A rebuild that meets logged sectors no other member holds (the array is
# degraded): md's recovery logs them as bad on the new member and goes on;
# so must raidfuse, and reads there must fail, not return what the new
# member happens to hold. RAID5 (role 3 missing, role 0 logs the first
# column of row 16: that column's parity cannot be rebuilt) and RAID1 (one
# mirror left, logging 8 sectors). A write over the lost bytes makes them
# good on both members.
for spec in "raid5-ls-64k 3 0:2048:8 $((3 << 20)) 4096" "raid1 1 0:2048:8 $((2048 * 512)) 4096"; do
	read -r name gone entry lost_at lost_len <<<"$spec"
	md_ref_unpack "$name" "$WORK/rb"
	logged "$WORK/rb" "$name" "$entry"
	want=$(array_sha "$name")
	rm "$WORK/rb/$name.m$gone.img"
	truncate -s 20M "$WORK/rb/spare.img"
	mnt_ok "$name rebuild" --run "$WORK"/rb/"$name".m*.img
	"$RAIDFUSE" add "$MNT" "$WORK/rb/spare.img" >/dev/null || fail "$name: add the spare"
	"$RAIDFUSE" wait "$MNT" >/dev/null || fail "$name: wait for the rebuild"
	n=$(md_ref_field "$name" raid_devices)
	grep -q "\[$n/$n\]" "$MNT/.raidfuse/status" ||
		fail "$name: the rebuild did not finish: $(tail -n 5 "$MNT/.raidfuse/log")"
	grep -q "held by no member.*logged as bad on .*spare.img" "$MNT/.raidfuse/log" ||
		fail "$name: the log does not say what was lost: $(tail -n 5 "$MNT/.raidfuse/log")"
	dd if="$MNT/volume.img" of=/dev/null bs=4k skip=$((lost_at / 4096)) count=1 iflag=direct status=none 2>/dev/null &&
		fail "$name: bytes no member held read without an error after the rebuild"
	head -c "$lost_at" "$MNT/volume.img" >got.img
	dd if="$MNT/volume.img" bs=4k skip=$(((lost_at + lost_len) / 4096)) status=none >>got.img ||
		fail "$name: the bytes around the lost ones do not read"
	umnt
	md_ref_unpack "$name" "$WORK/pristine"
	mnt_ok "$name pristine" --readonly "$WORK"/pristine/*.img
	{ head -c "$lost_at" "$MNT/volume.img"; dd if="$MNT/volume.img" bs=4k skip=$(((lost_at + lost_len) / 4096)) status=none; } >want.img
	umnt
	rm -rf "$WORK/pristine"
	cmp -s got.img want.img || fail "$name: the rest of the volume is not md's bytes after the rebuild"
	[ -n "$(log_entries "$WORK/rb/spare.img")" ] || fail "$name: nothing logged on the new member"
	mdadm --examine-badblocks "$WORK/rb/spare.img" 2>&1 | grep -q "for [0-9]* sectors" ||
		fail "$name: mdadm does not list the new member's bad blocks: $(mdadm --examine-badblocks "$WORK/rb/spare.img" 2>&1)"
	mdadm --examine "$WORK/rb/spare.img" | grep -q "Checksum : .* correct" || fail "$name: the new member's checksum"
	# Written over: good again everywhere.
	mnt_ok "$name rebuilt" "$WORK"/rb/*.img
	head -c 196608 /dev/urandom >row.bin
	dd if=row.bin of="$MNT/volume.img" bs=64k seek=$((lost_at / 65536)) oflag=direct conv=notrunc,fsync status=none ||
		fail "$name: writing over the lost bytes"
	cmp -s row.bin <(dd if="$MNT/volume.img" bs=64k skip=$((lost_at / 65536)) count=3 iflag=direct status=none) ||
		fail "$name: the bytes written over the lost ones do not read back"
	umnt
	for m in "$WORK"/rb/*.img; do
		[ -z "$(log_entries "$m")" ] || fail "$name: $m still logs after the write: $(log_entries "$m")"
	done
	"$RAIDFUSE" verify "$WORK"/rb/*.img >verify.out 2>&1 || fail "$name: verify after all: $(cat verify.out)"
	rm -rf "${WORK:?}/rb"
	log "ok: $name: a degraded rebuild logs what no member holds on the new member (reads there fail, the rest is md's); a write makes it good"
done

# The same rebuild onto a member with no room for a log (its superblock is
# the first member's, made here without one): md fails such a target; so
# must raidfuse, and say why, not leave it half rebuilt.
md_ref_unpack raid5-ls-64k "$WORK/rb"
logged "$WORK/rb" raid5-ls-64k 1:2048:8
python3 - "$WORK/rb/raid5-ls-64k.m0.img" <<'PY'
import struct, sys
with open(sys.argv[1], "r+b") as f:
    f.seek(4096)
    sb = bytearray(f.read(4096))
    struct.pack_into("<H", sb, 186, 0) # bblog_size
    struct.pack_into("<i", sb, 188, 0) # bblog_offset
    f.seek(4096)
    f.write(sb)
PY
md_sb_patch "$WORK/rb/raid5-ls-64k.m0.img" events="$(md_sb_field "$WORK/rb/raid5-ls-64k.m0.img" 200 '<Q')"
rm "$WORK/rb/raid5-ls-64k.m3.img"
truncate -s 20M "$WORK/rb/spare.img"
mnt_ok "raid5 rebuild, no room for a log" --run "$WORK"/rb/raid5-ls-64k.m*.img
"$RAIDFUSE" add "$MNT" "$WORK/rb/spare.img" >/dev/null || fail "raid5 no room: add the spare"
"$RAIDFUSE" wait "$MNT" >/dev/null 2>&1 && fail "raid5 no room: the rebuild reported success"
grep -q "cannot log them as bad: it has no room" "$MNT/.raidfuse/log" ||
	fail "raid5 no room: the log does not say why: $(tail -n 3 "$MNT/.raidfuse/log")"
grep -q "spare.img\[3\](F)" "$MNT/.raidfuse/status" ||
	fail "raid5 no room: the target is not faulty: $(head -n 2 "$MNT/.raidfuse/status")"
umnt
rm -rf "${WORK:?}/rb"
log "ok: raid5: a rebuild target with no room for md's bad block log is failed, as md does, and the log says why"

# Columns no member holds (RAID5: the same column logged on two members;
# row 16, roles 0 and 1) must not stop the rest: a check still mends a
# later row's logged sectors (role 2, sector 8192: row 128), even when a
# write waiting in the cache for that column fails as the check takes the
# row (fsync reports it); a write into another column of the same row
# survives (md fails only that stripe); a start after an unclean stop
# resyncs past them.
md_ref_unpack raid5-ls-64k "$WORK/lost"
logged "$WORK/lost" raid5-ls-64k 0:2048:8 1:2048:8 2:8192:8
members=("$WORK"/lost/*.img)
mnt_ok "raid5 lost column" "${members[@]}"
A_AT=$((((3 << 20) + 131072 + 32768) / 4096)) B_AT=$((((3 << 20) + 131072) / 4096))
head -c 4096 /dev/urandom >a.4k
head -c 4096 /dev/urandom >b.4k
# Both wait in the stripe cache; B is in the column no member can give
# parity for, so its write-back fails when the check takes the row.
dd if=a.4k of="$MNT/volume.img" bs=4k seek=$A_AT oflag=direct conv=notrunc status=none ||
	fail "raid5 lost column: write A"
dd if=b.4k of="$MNT/volume.img" bs=4k seek=$B_AT oflag=direct conv=notrunc status=none ||
	fail "raid5 lost column: write B (into the cache)"
"$RAIDFUSE" check "$MNT" >/dev/null && "$RAIDFUSE" wait "$MNT" >/dev/null ||
	fail "raid5 lost column: check stopped: $(tail -n 3 "$MNT/.raidfuse/log")"
grep -q "check: done" "$MNT/.raidfuse/log" || fail "raid5 lost column: check did not finish: $(tail -n 3 "$MNT/.raidfuse/log")"
grep -q "row 16: 1 column(s) .*passed over" "$MNT/.raidfuse/log" ||
	fail "raid5 lost column: the check does not say what it passed over: $(tail -n 3 "$MNT/.raidfuse/log")"
[ -z "$(cat "$MNT/.raidfuse/dev2/bad_blocks")" ] ||
	fail "raid5 lost column: the check did not reach the later row: $(cat "$MNT/.raidfuse/dev2/bad_blocks")"
[ -n "$(cat "$MNT/.raidfuse/dev0/bad_blocks")" ] || fail "raid5 lost column: the lost column was cleared"
python3 -c 'import os, sys; fd = os.open(sys.argv[1], os.O_WRONLY); os.fsync(fd)' "$MNT/volume.img" 2>/dev/null &&
	fail "raid5 lost column: fsync did not report the write that could not be put out"
cmp -s a.4k <(dd if="$MNT/volume.img" bs=4k skip=$A_AT count=1 iflag=direct status=none) ||
	fail "raid5 lost column: a write to another column of the row was lost with the failed one"
rf_kill "$MNT"
mnt_ok "raid5 lost column, after an unclean stop" "${members[@]}"
grep -q "resync after the unclean stop: done" "$MNT/.raidfuse/log" ||
	fail "raid5 lost column: no resync: $(tail -n 3 "$MNT/.raidfuse/log")"
cmp -s a.4k <(dd if="$MNT/volume.img" bs=4k skip=$A_AT count=1 iflag=direct status=none) ||
	fail "raid5 lost column: write A gone after the resync"
umnt
rm -rf "${WORK:?}/lost"
log "ok: raid5: a lost column is passed over by check and resync, said so; the row's other writes survive a failed one"

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
mnt_ok "raid1 both, before an unclean stop" "$WORK"/r1/*.img
dd if=/dev/urandom of="$MNT/volume.img" bs=4k seek=1000 count=1 conv=notrunc,fsync status=none
rf_kill "$MNT"
mnt_ok "raid1 both, read-write" "$WORK"/r1/*.img
grep -q "resync: 4096 bytes from 1048576 .*passed over" "$MNT/.raidfuse/log" ||
	fail "raid1: the resync after an unclean stop does not pass over the lost sectors: $(tail -n 3 "$MNT/.raidfuse/log")"
dd if=/dev/urandom of=fresh.4k bs=4k count=1 status=none
dd if=fresh.4k of="$MNT/volume.img" bs=4k seek=256 count=1 oflag=direct conv=fsync,notrunc status=none ||
	fail "raid1: writing over sectors logged on both mirrors"
cmp -s fresh.4k <(dd if="$MNT/volume.img" bs=4k skip=256 count=1 iflag=direct status=none) ||
	fail "raid1: the sectors written do not read back"
umnt
for m in "$WORK"/r1/*.img; do
	[ -z "$(log_entries "$m")" ] || fail "raid1: $m still logs: $(log_entries "$m")"
done
log "ok: raid1: a write over sectors logged on both mirrors makes them good on both"
log "PASS"
