#!/bin/bash
# degraded_scrub.sh - check, repair and verify of degraded arrays, as md
# runs them: over the redundancy that is left.
#  1. RAID6 x5 with role 1 missing, a 4 KiB column garbled on role 3 in
#     ten rows (left-symmetric rotates P and Q, so the missing and the
#     garbled role are data, P or Q in turn): offline verify and a mounted
#     check each find exactly those ten columns (80 sectors), whichever
#     parity is left to compare; repair rewrites the parity and what the
#     volume reads stays the same; the next check finds 0.
#  2. RAID10 n2 x4 with role 3 missing: garbled columns on role 0 (its
#     pair, role 1, is there) are found, those on role 2 (whose pair is
#     missing) have nothing to compare against and are not; repair copies
#     the first copy over the other, as md; the next check finds 0.
#     RAID1 x3 less one compares the two copies left.
#  3. No redundancy left: RAID6 less two, RAID5 less one, RAID1 x2 less
#     one: check (control file ENODEV, the CLI's message) and verify are
#     refused, saying why.
#  4. A member failing during the check of a degraded RAID6 stops it (md's
#     MD_RECOVERY_INTR): the array has no redundancy left.
#  5. RAID10 n2 x3 less role 2: no member can be lost, but the chunks whose
#     two copies are on roles 0 and 1 (every third) still compare, as md's
#     raid10_sync_request does: check and verify run, and find the garbled
#     columns of those chunks only.
#  6. RAID6 less one with a 4 KiB column of a data chunk in md's bad block
#     log and another column of the row garbled on a third member: as md
#     (one stripe at a time), only the logged column is rebuilt and written
#     back, the garbled one is counted (8), and the logged member's other
#     columns are left as they are (rebuilt whole, they took the garbage).
#  7. The same for copies: RAID1 x3 less one, a page logged on one copy
#     left and another page garbled on the other: the logged page alone is
#     mended, the garbled one counted, the good copy keeps its page.
# Why: check and repair used to be refused on any degraded array, leaving
# a RAID6 that lost one disk unscrubbed until its replacement came, the
# time when a latent error on a second disk matters most.
. "$(dirname "$0")/lib.sh"
require_fuse
require_cmd python3

cd "$WORK"
R=$RAIDFUSE
MNT=$WORK/mnt
mkdir -p "$MNT"
track_mount "$MNT"

# garble MEMBER OFFSET: 4 KiB of random bytes at OFFSET of the data area.
garble() {
	local at=$(($(data_off "$1") + $2))
	head -c 4096 /dev/urandom | dd of="$1" bs=4096 oflag=seek_bytes seek="$at" \
		conv=notrunc status=none || fail "garble $1 at $2"
}
# fill_volume: the whole volume with random bytes, so no column is zeros.
fill_volume() {
	local bytes
	bytes=$(stat -c %s "$MNT/volume.img")
	head -c "$bytes" /dev/urandom | dd of="$MNT/volume.img" bs=1M iflag=fullblock \
		conv=notrunc,fsync status=none || fail "fill volume.img"
}
# scrub ACTION: run it to the end; print mismatch_cnt.
scrub() {
	"$R" "$1" "$MNT" >/dev/null 2>scrub.err || fail "raidfuse $1: $(cat scrub.err)"
	"$R" wait "$MNT" >/dev/null || fail "raidfuse wait after $1"
	grep -q "$1: done" "$MNT/.raidfuse/log" ||
		fail "$1 did not end done: $(tail -n 4 "$MNT/.raidfuse/log")"
	cat "$MNT/.raidfuse/mismatch_cnt"
}
# refused LABEL: check of the mounted array refused for want of redundancy.
refused() {
	if echo check >"$MNT/.raidfuse/sync_action" 2>ctl.err; then
		fail "$1: sync_action check accepted with no redundancy left"
	fi
	grep -q "No such device" ctl.err || fail "$1: sync_action check: $(cat ctl.err)"
	"$R" check "$MNT" 2>cli.err && fail "$1: raidfuse check exited 0"
	grep -q "no redundancy left" cli.err || fail "$1: raidfuse check says: $(cat cli.err)"
}

# ---- 1. RAID6 less one ----------------------------------------------------
"$R" create -l 6 -n 5 -c 64K -z 16M s0 s1 s2 s3 s4 >/dev/null || fail "create raid6"
mnt_ok "raid6" s0 s1 s2 s3 s4
fill_volume
umnt
for row in $(seq 0 9); do
	garble s3 $((row * 65536 + 8192))
done
"$R" verify s0 s2 s3 s4 >verify.out 2>&1 && fail "raid6: verify of a garbled array exited 0"
grep -qx "mismatch_cnt: 80" verify.out || fail "raid6 less role 1: verify: $(cat verify.out)"
grep -q "degraded (missing role(s) 1): compared the redundancy" verify.out ||
	fail "raid6: verify does not say it compared what is left: $(cat verify.out)"
log "ok: raid6 less one: offline verify finds the 10 garbled columns (80 sectors)"

mnt_ok "raid6 degraded" --run s0 s2 s3 s4
[ "$(scrub check)" = 80 ] || fail "raid6 less one: check found $(cat "$MNT/.raidfuse/mismatch_cnt"), not 80"
before=$(sha256sum <"$MNT/volume.img")
[ "$(scrub repair)" = 80 ] || fail "raid6 less one: repair counted $(cat "$MNT/.raidfuse/mismatch_cnt")"
[ "$(sha256sum <"$MNT/volume.img")" = "$before" ] || fail "raid6 less one: repair changed what the volume reads"
[ "$(scrub check)" = 0 ] || fail "raid6 less one: check after repair found $(cat "$MNT/.raidfuse/mismatch_cnt")"
umnt
"$R" verify s0 s2 s3 s4 >verify.out 2>&1 || fail "raid6: verify after repair: $(cat verify.out)"
log "ok: raid6 less one: check finds 80, repair rewrites parity only, check and verify then find 0"

# ---- 4. a member failing during that check stops it -------------------------
mnt_ok "raid6 degraded" --run s0 s2 s3 s4
echo 1 >"$MNT/.raidfuse/sync_speed_min" # or the floor (1000) wins, as in md
echo 100 >"$MNT/.raidfuse/sync_speed_max"
"$R" check "$MNT" >/dev/null || fail "raid6: start the slow check"
sleep 1
grep -qx check "$MNT/.raidfuse/sync_action" || fail "raid6: the slow check is not running"
"$R" fail "$MNT" s2 >/dev/null 2>cli.err || fail "raid6: fail s2 during the check: $(cat cli.err)"
for i in $(seq 50); do
	grep -qx check "$MNT/.raidfuse/sync_action" || break
	sleep 0.2
done
grep -qx check "$MNT/.raidfuse/sync_action" &&
	fail "raid6: the check runs on 10 s after a second member failed: $(cat "$MNT/.raidfuse/sync_completed")"
grep -q "check: a member failed" "$MNT/.raidfuse/log" ||
	fail "raid6: the log does not say why the check stopped: $(tail -n 4 "$MNT/.raidfuse/log")"
refused "raid6 less two"
[ "$(sha256sum <"$MNT/volume.img")" = "$before" ] || fail "raid6 less two: the volume reads differently"
umnt
"$R" verify s0 s3 s4 >verify.out 2>&1 && fail "raid6 less two: verify exited 0"
grep -q "no redundancy left" verify.out || fail "raid6 less two: verify says: $(cat verify.out)"
log "ok: a member failing stops the degraded check; less two, check and verify are refused"

# ---- 2. RAID10 n2 less one --------------------------------------------------
"$R" create -l 10 -n 4 -c 64K -z 16M t0 t1 t2 t3 >/dev/null || fail "create raid10"
mnt_ok "raid10" t0 t1 t2 t3
fill_volume
umnt
for i in 0 3 7 11 12; do
	garble t0 $((i * 65536 + 4096))
done
for i in 1 5 9; do
	garble t2 $((i * 65536))
done
"$R" verify t0 t1 t2 >verify.out 2>&1 && fail "raid10: verify of a garbled array exited 0"
grep -qx "mismatch_cnt: 640" verify.out || fail "raid10 less role 3: verify: $(cat verify.out)"
mnt_ok "raid10 degraded" --run t0 t1 t2
[ "$(scrub check)" = 640 ] || fail "raid10 less one: check found $(cat "$MNT/.raidfuse/mismatch_cnt"), not 640"
[ "$(scrub repair)" = 640 ] || fail "raid10 less one: repair counted $(cat "$MNT/.raidfuse/mismatch_cnt")"
[ "$(scrub check)" = 0 ] || fail "raid10 less one: check after repair found $(cat "$MNT/.raidfuse/mismatch_cnt")"
# As md: the first copy was copied over the second.
off0=$(data_off t0)
cmp -s <(dd if=t0 bs=64K skip=$((off0 / 65536)) count=16 status=none) \
	<(dd if=t1 bs=64K skip=$((off0 / 65536)) count=16 status=none) ||
	fail "raid10: roles 0 and 1 differ after repair"
umnt
log "ok: raid10 n2 less role 3: the 5 garbled columns with a copy left are found (640: a 64 KiB block each, as md counts), the 3 without are not; repair copies the first copy; check then 0"

# RAID1 x3 less one: the two copies left are compared.
"$R" create -l 1 -n 3 -z 8M h0 h1 h2 >/dev/null || fail "create raid1 x3"
mnt_ok "raid1 x3" h0 h1 h2
fill_volume
umnt
# md's raid1 counts the whole 64 KiB resync block a difference lies in,
# once: three garbled pages in two blocks are 256 sectors, not 24.
garble h2 $((3 * 65536))
garble h2 $((3 * 65536 + 16384))
garble h2 $((70 * 65536 + 8192))
mnt_ok "raid1 x3 degraded" --run h0 h2
[ "$(scrub check)" = 256 ] || fail "raid1 x3 less one: check found $(cat "$MNT/.raidfuse/mismatch_cnt"), not 256"
umnt
"$R" verify h0 h2 >verify.out 2>&1 && fail "raid1 x3 less one: verify exited 0"
grep -qx "mismatch_cnt: 256" verify.out || fail "raid1 x3 less one: verify: $(cat verify.out)"
log "ok: raid1 x3 less one: the two copies left are compared (3 garbled pages in 2 blocks of 64 KiB: 256 sectors, as md counts)"

# ---- 3. nothing left to compare --------------------------------------------
"$R" create -l 5 -n 4 -c 64K -z 8M f0 f1 f2 f3 >/dev/null || fail "create raid5"
mnt_ok "raid5 degraded" --run f0 f1 f3
refused "raid5 less one"
umnt
"$R" verify f0 f1 f3 >verify.out 2>&1 && fail "raid5 less one: verify exited 0"
grep -q "missing role(s) 2) with no redundancy left" verify.out ||
	fail "raid5 less one: verify says: $(cat verify.out)"
"$R" create -l 1 -n 2 -z 8M g0 g1 >/dev/null || fail "create raid1"
mnt_ok "raid1 degraded" --run g1
refused "raid1 x2 less one"
umnt
log "ok: raid5 less one and raid1 x2 less one: check and verify refused, naming why"

# ---- 5. RAID10 of three less one: the chunks with both copies left ----------
"$R" create -l 10 -n 3 -c 64K -z 8M o0 o1 o2 >/dev/null || fail "create raid10 x3"
mnt_ok "raid10 x3" o0 o1 o2
fill_volume
umnt
# n2 x3: stripe s of role 0 holds a chunk whose other copy is on role 1
# when s is even, on role 2 (missing) when s is odd.
for s in 0 2 4; do
	garble o0 $((s * 65536 + 8192))
done
for s in 1 3; do
	garble o0 $((s * 65536))
done
"$R" verify o0 o1 >verify.out 2>&1 && fail "raid10 x3 less one: verify of a garbled array exited 0"
grep -qx "mismatch_cnt: 384" verify.out || fail "raid10 x3 less role 2: verify: $(cat verify.out)"
mnt_ok "raid10 x3 degraded" --run o0 o1
[ "$(scrub check)" = 384 ] || fail "raid10 x3 less one: check found $(cat "$MNT/.raidfuse/mismatch_cnt"), not 384"
[ "$(scrub repair)" = 384 ] || fail "raid10 x3 less one: repair counted $(cat "$MNT/.raidfuse/mismatch_cnt")"
[ "$(scrub check)" = 0 ] || fail "raid10 x3 less one: check after repair found $(cat "$MNT/.raidfuse/mismatch_cnt")"
umnt
log "ok: raid10 n2 x3 less role 2: the 3 garbled columns with a copy left are found (384), the 2 without are not"

# ---- 6. a logged column rebuilds that column only --------------------------
"$R" create -l 6 -n 5 -c 64K -z 8M b0 b1 b2 b3 b4 >/dev/null || fail "create raid6 (bad blocks)"
mnt_ok "raid6 (bad blocks)" b0 b1 b2 b3 b4
fill_volume
umnt
# column N of row 0 on MEMBER (left-symmetric x5: data on roles 1 2 3)
col_sum() {
	dd if="$1" bs=4096 skip=$(($(data_off "$1") / 4096 + $2)) count=1 status=none | sha256sum
}
# logged_alone LABEL EXPECT GOOD BAD MEMBER...: page 10 of BAD garbled, page
# 2 of GOOD logged as bad; mounted --run on MEMBER...: a check counts
# EXPECT sectors for the garbled page, rewrites the logged page alone
# (4 KiB) and leaves GOOD's page 10 as it was.
logged_alone() {
	local label=$1 expect=$2 goodm=$3 badm=$4 good
	shift 4
	good=$(col_sum "$goodm" 10)
	garble "$badm" $((10 * 4096))
	log_bad "$goodm" 16 8 || fail "$label: log sectors 16-23 of $goodm"
	mnt_ok "$label" --run "$@"
	[ "$(scrub check)" = "$expect" ] ||
		fail "$label: check found $(cat "$MNT/.raidfuse/mismatch_cnt"), not $expect"
	grep -q "role 2) corrected: 4 KiB" "$MNT/.raidfuse/log" ||
		fail "$label: the logged page was not rewritten alone: $(grep corrected "$MNT/.raidfuse/log")"
	umnt
	[ "$(col_sum "$goodm" 10)" = "$good" ] || fail "$label: the check rewrote a good page of $goodm"
}
logged_alone "raid6 less one, a logged column" 8 b2 b3 b0 b2 b3 b4
log "ok: raid6 less one: a logged column is rebuilt alone; the garbled column of the row is counted (8)"

# ---- 7. a logged page of a copy mends that page only -------------------------
"$R" create -l 1 -n 3 -z 8M k0 k1 k2 >/dev/null 2>&1 || fail "create raid1 x3"
mnt_ok "raid1 x3" k0 k1 k2
fill_volume
umnt
# The unit is halved at the log's range, so the garbled page is counted in
# the 32 KiB half it lies in (64 sectors); md's sync block there starts
# where the logged sectors end, and it counts 128.
logged_alone "raid1 x3 less one, a logged page" 64 k2 k1 k1 k2
log "ok: raid1 x3 less one: a logged page is mended alone; the garbled page is counted (64)"
