#!/bin/bash
# fault_cases.sh - injected faults (MOUNT/.raidfuse/devN/fault):
#  * a read error on a redundant level is answered from redundancy and the
#    range rewritten; the member stays in sync;
#  * a write error that redundancy cannot absorb is reported by fsync, and
#    by the next fsync too (never forgotten), whether or not the write
#    itself already failed;
#  * a member failing while another is rebuilt on RAID5: writes fail with
#    EIO (never silently lost), the rebuild stops with the reason logged.
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
rf_umount mnt
mdadm --examine m0 2>/dev/null | grep -q "State : active" ||
	fail "an array that lost writes was marked clean"
log "ok: a write error without redundancy is reported by two fsyncs; the array stays dirty"

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
grep -q "no redundancy left to fail it" mnt3/.raidfuse/log || fail "the member error is not in the log"
echo clear >mnt3/.raidfuse/dev2/fault
rf_umount mnt3
log "ok: a member failing during another's rebuild: writes get EIO, the rebuild stops, both logged"
log "PASS"
