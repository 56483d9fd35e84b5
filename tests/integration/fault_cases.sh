#!/bin/bash
# fault_cases.sh - injected faults (MOUNT/.raidfuse/devN/fault):
#  * a read error on a redundant level is answered from redundancy and the
#    range rewritten; the member stays in sync;
#  * a write error that redundancy cannot absorb is reported by fsync, and
#    by the next fsync too (never forgotten), whether or not the write
#    itself already failed;
#  * a member failing while another is rebuilt on RAID5: writes fail with
#    EIO (never silently lost), the rebuild stops with the reason logged;
#  * a write error on the member being rebuilt: it is failed, fsync
#    succeeds (the array is only degraded), and the rebuild goes on onto a
#    waiting spare, which ends with parity consistent;
#  * the write-intent bitmap failing to store on one member of a redundant
#    array: that member is failed out and the write goes on;
#  * a read error on a parity chunk during check (RAID5 and RAID6): the
#    check goes on, the parity is rewritten from the data, the member
#    stays in;
#  * a member whose superblock cannot be written (super-error) when the
#    array's state changes: failed out if the array can run without it,
#    as md's super_written does, and a waiting spare takes its role; kept
#    (and said) where it cannot be spared.
. "$(dirname "$0")/lib.sh"
require_fuse
require_cmd python3 mdadm

cd "$WORK"
"$RAIDFUSE" create --level 5 --raid-devices 3 --chunk 64K --size 48M m0 m1 m2 >/dev/null || fail create
rf_mount m0 m1 m2 mnt
dd if=/dev/urandom of=ref bs=1M count=40 status=none
dd if=ref of=mnt/volume.img bs=1M conv=notrunc,fsync status=none
rf_umount mnt

# 1. Read errors corrected.
rf_mount m0 m1 m2 mnt
echo "read-error range=0+16M" >mnt/.raidfuse/dev0/fault || fail "set read-error"
grep -q "^read-error range=0+16777216" mnt/.raidfuse/dev0/fault || fail "fault not shown: $(cat mnt/.raidfuse/dev0/fault)"
cmp <(head -c 40M mnt/volume.img) ref >/dev/null || fail "reads with a failing member differ"
echo clear >mnt/.raidfuse/dev0/fault
[ "$(cat mnt/.raidfuse/dev0/state)" = in_sync ] || fail "a corrected read error failed the member"
grep -q "read error on .*m0 (role 0) corrected" mnt/.raidfuse/log || fail "no corrected read error logged"
rf_umount mnt
"$RAIDFUSE" verify m0 m1 m2 | grep -q "mismatch_cnt: 0" || fail "parity after read-error rewrites"
log "ok: read errors answered from parity and rewritten; the member stays in sync"

# 2. fsync reports a write error, twice.
rf_mount m0 m1 m2 mnt
"$RAIDFUSE" fail mnt m2 || fail "fail m2"
echo write-error >mnt/.raidfuse/dev1/fault || fail "set write-error"
python3 - mnt/volume.img <<'PY' || fail "fsync did not report the write error twice"
import os, sys
fd = os.open(sys.argv[1], os.O_RDWR)
# Whole rows go to the members at once, so the write itself may already
# fail; either way both fsyncs must say so.
try:
    os.pwrite(fd, b"x" * (1 << 20), 0)
except OSError as e:
    if e.errno != 5:
        raise
errors = 0
for _ in range(2):
    try:
        os.fsync(fd)
    except OSError as e:
        errors += e.errno == 5
sys.exit(0 if errors == 2 else 1)
PY
echo clear >mnt/.raidfuse/dev1/fault
grep -q "FAILED" mnt/.raidfuse/status || fail "the array that lost a write is not failed"
if "$RAIDFUSE" umount mnt 2>umount.err; then
	fail "umount of an array that lost writes exited 0"
fi
grep -q "not stopped cleanly" umount.err || fail "umount's message: $(cat umount.err)"
mdadm --examine m0 2>/dev/null | grep -q "State : active" ||
	fail "an array that lost writes was marked clean"
log "ok: a write error without redundancy is reported by two fsyncs; the array fails and stays dirty; umount exits 1"

# 3. A member failing during the rebuild of another (RAID5).
"$RAIDFUSE" create --force --level 5 --raid-devices 3 --chunk 64K --size 48M n0 n1 n2 >/dev/null
rf_mount n0 n1 n2 mnt3
dd if=ref of=mnt3/volume.img bs=1M conv=notrunc,fsync status=none
"$RAIDFUSE" fail mnt3 n1 && "$RAIDFUSE" remove mnt3 n1 || fail "fail n1"
echo 4000 >mnt3/.raidfuse/sync_speed_max
truncate -s 48M n1new
"$RAIDFUSE" add mnt3 n1new || fail "add n1new"
sleep 1
echo error >mnt3/.raidfuse/dev2/fault || fail "fault n2"
if dd if=/dev/urandom of=mnt3/volume.img bs=1M count=4 seek=30 conv=notrunc,fsync status=none 2>dd.err; then
	fail "a write needing the failing member succeeded during the rebuild"
fi
grep -qi "input/output error" dd.err || fail "the write failed without EIO: $(cat dd.err)"
"$RAIDFUSE" wait mnt3 >wait.out && fail "the rebuild reported success: $(cat wait.out)"
grep -q "recover of role 1: Input/output error" mnt3/.raidfuse/log ||
	fail "the stopped rebuild is not in the log: $(cat mnt3/.raidfuse/log)"
grep -q "no redundancy left" mnt3/.raidfuse/log || fail "the member error is not in the log"
echo clear >mnt3/.raidfuse/dev2/fault
grep -q "FAILED" mnt3/.raidfuse/status || fail "the array that lost a write is not failed"
"$RAIDFUSE" umount mnt3 2>/dev/null && fail "umount of an array that lost a write exited 0"
log "ok: a member failing during another's rebuild: writes get EIO, the array fails, the rebuild stops, all logged"


# 4. A write error on the member being rebuilt; a spare waits.
"$RAIDFUSE" create --force --level 5 --raid-devices 3 --chunk 64K --size 48M r0 r1 r2 >/dev/null
rf_mount r0 r1 r2 mnt4
dd if=ref of=mnt4/volume.img bs=1M conv=notrunc,fsync status=none
"$RAIDFUSE" fail mnt4 r2 && "$RAIDFUSE" remove mnt4 r2 || fail "fail r2"
echo 2000 >mnt4/.raidfuse/sync_speed_max
truncate -s 48M r2new r2spare
"$RAIDFUSE" add mnt4 r2new || fail "add r2new"
"$RAIDFUSE" add mnt4 r2spare || fail "add r2spare"
dev=$(dev_of mnt4 r2new) || fail "r2new has no devN directory"
spare=$(dev_of mnt4 r2spare) || fail "r2spare has no devN directory"
[ "$(cat mnt4/.raidfuse/$spare/state)" = spare ] && [ "$(cat mnt4/.raidfuse/$spare/slot)" = none ] &&
	[ "$(cat mnt4/.raidfuse/$spare/recovery_start)" = 0 ] ||
	fail "r2spare, added during a rebuild, is $(cat mnt4/.raidfuse/$spare/state), not a spare"
# Row 0's parity lives on role 2 (left-symmetric): once the rebuild is past
# it, a write to the volume's first chunk writes r2new there.
for _ in $(seq 100); do
	done_sectors=$(cut -d' ' -f1 mnt4/.raidfuse/sync_completed)
	[ "$done_sectors" != none ] && [ "$done_sectors" -ge 128 ] && break
	sleep 0.1
done
[ "$done_sectors" != none ] && [ "$done_sectors" -ge 128 ] || fail "the rebuild did not pass row 0"
echo "write-error range=0+64K" >mnt4/.raidfuse/$dev/fault || fail "set write-error on r2new"
dd if=/dev/urandom of=new4k bs=4K count=1 status=none
dd if=new4k of=mnt4/volume.img bs=4K conv=notrunc,fsync status=none ||
	fail "a write that a degraded array absorbs failed"
dd if=new4k of=ref bs=4K conv=notrunc status=none
[ "$(cat mnt4/.raidfuse/$dev/state)" = faulty ] ||
	fail "r2new failed a write and is $(cat mnt4/.raidfuse/$dev/state), not faulty"
grep -q "being rebuilt for role 2, failed on write" mnt4/.raidfuse/log ||
	fail "the failed rebuild target is not in the log: $(cat mnt4/.raidfuse/log)"
cmp <(head -c 40M mnt4/volume.img) ref >/dev/null || fail "degraded reads differ after the rebuild target failed"
# The waiting spare takes the role over.
echo 1000000 >mnt4/.raidfuse/sync_speed_max
"$RAIDFUSE" wait mnt4 >wait.out || fail "the rebuild onto the spare failed: $(cat wait.out)"
[ "$(cat mnt4/.raidfuse/$spare/state)" = in_sync ] ||
	fail "r2spare is $(cat mnt4/.raidfuse/$spare/state) after the rebuild, not in_sync"
echo clear >mnt4/.raidfuse/$dev/fault
rf_umount mnt4
"$RAIDFUSE" verify r0 r1 r2spare | grep -q "mismatch_cnt: 0" ||
	fail "parity inconsistent after a failed and a good rebuild: $("$RAIDFUSE" verify r0 r1 r2spare)"
rf_mount r0 r1 r2spare mnt4
cmp <(head -c 40M mnt4/volume.img) ref >/dev/null || fail "data differs after the rebuild onto the spare"
rf_umount mnt4
log "ok: a write error on the member being rebuilt fails it; the waiting spare is rebuilt instead; nothing lost"

# 5. The bitmap cannot be stored on one member: md fails that member.
"$RAIDFUSE" create --force --level 5 --raid-devices 4 --chunk 64K --size 48M \
	--bitmap-chunk 1M b0 b1 b2 b3 >/dev/null || fail "create with a bitmap"
rf_mount b0 b1 b2 b3 mnt5
dd if=ref of=mnt5/volume.img bs=1M count=20 conv=notrunc,fsync status=none
echo vanish >mnt5/.raidfuse/dev3/fault || fail "vanish dev3"
dd if=/dev/urandom of=new64k bs=64K count=1 status=none
# 40 MiB into the volume: a region no write has marked yet, so its bit
# must be stored first.
dd if=new64k of=mnt5/volume.img bs=64K seek=640 conv=notrunc,fsync status=none ||
	fail "a write failed because one member could not take the bitmap"
[ "$(cat mnt5/.raidfuse/dev3/state)" = faulty ] ||
	fail "the member that lost the bitmap is $(cat mnt5/.raidfuse/dev3/state), not faulty"
cmp <(head -c 20M mnt5/volume.img) <(head -c 20M ref) >/dev/null ||
	fail "data differs after the bitmap failed on one member"
cmp <(dd if=mnt5/volume.img bs=64K skip=640 count=1 status=none) new64k >/dev/null ||
	fail "the write into a new region does not read back"
echo clear >mnt5/.raidfuse/dev3/fault
rf_umount mnt5
log "ok: a member that cannot take the bitmap is failed out; the write goes on"
# 6. A fault written without a newline: the log shows those bytes only
# (the request buffer holds no NUL after them, and earlier writes' data).
rf_mount --run b0 b1 b2 mnt6
python3 - mnt6 <<'PY' || fail "cannot write the marker and the fault"
import os, sys
fd = os.open(sys.argv[1] + "/volume.img", os.O_WRONLY)
os.pwrite(fd, b"VOLUME-DATA-MARKER-" * 200, 0)
os.close(fd)
fd = os.open(sys.argv[1] + "/.raidfuse/dev1/fault", os.O_WRONLY)
os.write(fd, b"clear")
os.close(fd)
PY
grep -q "fault injection on .*b1: clear$" mnt6/.raidfuse/log ||
	fail "the fault is not logged as written: $(tail -n 2 mnt6/.raidfuse/log)"
grep -q "MARKER" mnt6/.raidfuse/log && fail "volume data leaked into the log: $(tail -n 1 mnt6/.raidfuse/log)"
rf_umount mnt6
log "ok: a fault written without a newline is logged as written, nothing more"

# 7. A parity chunk that fails to read during check. Row 16 (1 MiB into
# each member) has a parity chunk on the last role in both arrays
# (left-symmetric: RAID5's P, RAID6's Q).
for spec in "5 4" "6 5"; do
	read -r level n <<<"$spec"
	ms=()
	for ((i = 0; i < n; i++)); do ms+=("p$level-$i"); done
	"$RAIDFUSE" create --level "$level" --raid-devices "$n" --chunk 64K --size 24M "${ms[@]}" \
		>/dev/null || fail "raid$level: create"
	rf_mount "${ms[@]}" mnt7
	dd if=ref of=mnt7/volume.img bs=1M count=16 conv=notrunc,fsync status=none
	last=$((n - 1))
	echo "read-error range=1048576+65536" >"mnt7/.raidfuse/dev$last/fault"
	"$RAIDFUSE" check mnt7 || fail "raid$level: check"
	"$RAIDFUSE" wait mnt7 >wait7.out || fail "raid$level: check with a parity read error: $(cat wait7.out)"
	grep -q "^done: mismatch_cnt 0" wait7.out || fail "raid$level: check: $(cat wait7.out)"
	grep -q "read error on the parity of row 16 corrected" mnt7/.raidfuse/log ||
		fail "raid$level: no parity rewrite in the log: $(tail -n 3 mnt7/.raidfuse/log)"
	grep -q "\[$n/$n\]" mnt7/.raidfuse/status || fail "raid$level: a member was failed"
	echo clear >"mnt7/.raidfuse/dev$last/fault"
	rf_umount mnt7
	"$RAIDFUSE" verify "${ms[@]}" | grep -q "mismatch_cnt: 0" || fail "raid$level: parity wrong afterwards"
done
log "ok: a parity read error during check: parity rewritten from the data, the check goes on, no member failed"

# 8. Superblock writes failing on a member in sync (RAID6 x4 and a spare):
# failing another member updates every superblock; the one that cannot
# take it is failed too, and the spare is rebuilt into one of the roles.
"$RAIDFUSE" create --level 6 --raid-devices 4 --chunk 64K --size 16M s0 s1 s2 s3 >/dev/null ||
	fail "create raid6 for super-error"
truncate -s 16M s4
rf_mount s0 s1 s2 s3 mnt8
head -c "$(stat -c %s mnt8/volume.img)" /dev/urandom >ref8
dd if=ref8 of=mnt8/volume.img bs=1M conv=notrunc,fsync status=none || fail "fill raid6"
"$RAIDFUSE" add mnt8 s4 >/dev/null || fail "add the spare s4"
echo super-error >mnt8/.raidfuse/dev0/fault || fail "set super-error on s0"
grep -qx super-error mnt8/.raidfuse/dev0/fault || fail "fault reads back $(cat mnt8/.raidfuse/dev0/fault)"
"$RAIDFUSE" fail mnt8 s1 >/dev/null || fail "fail s1"
grep -q faulty mnt8/.raidfuse/dev0/state ||
	fail "s0 could not take the superblock update and stays $(cat mnt8/.raidfuse/dev0/state)"
grep -q "s0 (role 0) cannot take a superblock update" mnt8/.raidfuse/log ||
	fail "no log line for s0: $(tail -n 3 <mnt8/.raidfuse/log)"
"$RAIDFUSE" wait mnt8 >/dev/null || fail "wait for the spare's rebuild"
dev4=$(dev_of mnt8 s4) || fail "no devN for s4"
grep -q in_sync "mnt8/.raidfuse/$dev4/state" ||
	fail "the spare did not take a role: $(cat "mnt8/.raidfuse/$dev4/state")"
cmp -s mnt8/volume.img ref8 || fail "raid6 data changed after losing s0 and s1"
rf_umount mnt8
[ "$(ex_field s2 'Events')" = "$(ex_field s4 'Events')" ] || fail "s2 and s4 disagree on events"
mdadm --examine s2 | grep -q "Array State : .*\." || fail "s2's superblock does not show a role missing"
log "ok: a member that cannot take a superblock update is failed, and the spare takes a role"

# Where it cannot be spared (RAID5 already degraded) it stays, and says so.
"$RAIDFUSE" create --level 5 --raid-devices 3 --chunk 64K --size 16M t0 t1 t2 >/dev/null ||
	fail "create raid5 for super-error"
rf_mount t0 t1 t2 mnt9
echo super-error >mnt9/.raidfuse/dev0/fault || fail "set super-error on t0"
"$RAIDFUSE" fail mnt9 t1 >/dev/null || fail "fail t1"
grep -q in_sync mnt9/.raidfuse/dev0/state || fail "t0 was failed though the array needs it"
grep -q "degraded\|\[3/2\]" mnt9/.raidfuse/status || fail "status: $(cat mnt9/.raidfuse/status)"
echo clear >mnt9/.raidfuse/dev0/fault
rf_umount mnt9
log "ok: a member the array cannot lose keeps its role when its superblock update fails"
log "PASS"
