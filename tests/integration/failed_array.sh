#!/bin/bash
# failed_array.sh - a write lost where no redundancy is left (md's
# MD_BROKEN). A degraded RAID5 whose parity write fails on another member
# must not go on serving reconstructions from that stale parity: the
# array is failed, later writes fail, a read that needs the member fails
# with EIO, reads of intact chunks still work, the status says FAILED,
# and the array stays dirty. RAID1's last copy is kept (as in md) but
# writes fail likewise. raidfuse umount reports that the stop was not
# clean.
. "$(dirname "$0")/lib.sh"
require_fuse
require_cmd python3

cd "$WORK"
"$RAIDFUSE" create --level 5 --raid-devices 4 --chunk 64K --size 16M m0 m1 m2 m3 >/dev/null ||
	fail create
rf_mount m0 m1 m2 m3 mnt
row=$((192 * 1024)) # three data chunks of 64 KiB
head -c $((8 * row)) /dev/urandom >base
dd if=base of=mnt/volume.img bs=$row conv=notrunc,fsync status=none || fail "write base"
echo faulty >mnt/.raidfuse/dev0/state || fail "fail dev0"
# Row 2 (left-symmetric): parity on role 1, its third data chunk on role 0.
echo write-error >mnt/.raidfuse/dev1/fault
python3 - mnt/volume.img $((2 * row)) 2>/dev/null <<'PY' && fail "the lost write's fsync succeeded"
import os, sys
fd = os.open(sys.argv[1], os.O_WRONLY)
os.pwrite(fd, b"\xa5" * 4096, int(sys.argv[2]))
os.fsync(fd)
PY
echo clear >mnt/.raidfuse/dev1/fault
grep -q "FAILED" mnt/.raidfuse/status || fail "status does not say FAILED: $(head -2 mnt/.raidfuse/status)"
grep -q '"state":"failed"' mnt/.raidfuse/status.json || fail "status.json state: $(cat mnt/.raidfuse/status.json)"
grep -qx "state: failed, degraded" mnt/.raidfuse/status || fail "status state line: $(grep '^state:' mnt/.raidfuse/status)"
grep -q "no redundancy left: the array is failed" mnt/.raidfuse/log || fail "not logged: $(tail -3 mnt/.raidfuse/log)"
# The chunk on the missing role 0 in row 2 was reconstructed from the
# parity that never got the write: it must be an error, not wrong bytes.
if dd if=mnt/volume.img of=chunk bs=64K skip=$(((2 * row + 128 * 1024) / 65536)) count=1 \
	iflag=direct status=none 2>err; then
	cmp -s chunk <(dd if=base bs=64K skip=$(((2 * row + 128 * 1024) / 65536)) count=1 status=none) ||
		fail "a chunk reconstructed from stale parity was served without an error"
	fail "a chunk that needs the failed member read without an error"
fi
# A chunk on a member still in (row 0, third chunk: role 2) reads as written.
cmp <(dd if=mnt/volume.img bs=64K skip=2 count=1 iflag=direct status=none) \
	<(dd if=base bs=64K skip=2 count=1 status=none) || fail "an intact chunk of row 0 reads wrong"
if dd if=base of=mnt/volume.img bs=4K count=1 seek=100 conv=notrunc,fsync status=none 2>/dev/null; then
	fail "a write to a failed array succeeded"
fi
# No rebuild onto a failed array: it would write superblocks that leave
# m1 too far behind for the forced start the log advises.
truncate -s 16M sp
if "$RAIDFUSE" add mnt "$WORK/sp" 2>err; then fail "a member was added to a failed array"; fi
grep -q "the array is failed" err || fail "add refusal unclear: $(cat err)"
if "$RAIDFUSE" umount mnt 2>err; then fail "umount of an array left dirty exited 0"; fi
grep -q "not stopped cleanly" err || fail "umount's message: $(cat err)"
mountpoint -q mnt && fail "umount failed to unmount"
[ "$(md_sb_field m2 208 '<Q')" != 18446744073709551615 ] || fail "the failed array was marked clean"
# As the log advises: mount again with --force; m1 is taken back.
rf_mount --force m1 m2 m3 mnt
grep -q "\[4/3\]" mnt/.raidfuse/status || fail "forced start: $(head -2 mnt/.raidfuse/status)"
cmp <(dd if=mnt/volume.img bs=64K skip=2 count=1 iflag=direct status=none) \
	<(dd if=base bs=64K skip=2 count=1 status=none) || fail "forced start: an intact chunk reads wrong"
"$RAIDFUSE" umount mnt 2>/dev/null # dirty on purpose until resynced
log "ok: raid5: a lost parity write fails the array: EIO where the stale parity would be used, intact chunks read, writes refused, left dirty, umount exits 1"

# RAID1: the last copy failing a write.
"$RAIDFUSE" create --level 1 --raid-devices 2 --size 16M r0 r1 >/dev/null || fail "create raid1"
rf_mount r0 r1 mnt
dd if=base of=mnt/volume.img bs=64K conv=notrunc,fsync status=none || fail "raid1 write"
echo faulty >mnt/.raidfuse/dev0/state || fail "fail r0"
echo write-error >mnt/.raidfuse/dev1/fault
if dd if=base of=mnt/volume.img bs=4K count=1 conv=notrunc,fsync status=none 2>/dev/null; then
	fail "raid1: the last copy's write error was not reported"
fi
echo clear >mnt/.raidfuse/dev1/fault
[ "$(cat mnt/.raidfuse/dev1/state)" = in_sync ] || fail "raid1: the last copy was failed"
if dd if=base of=mnt/volume.img bs=4K count=1 seek=10 conv=notrunc,fsync status=none 2>/dev/null; then
	fail "raid1: a write to the failed array succeeded"
fi
cmp <(dd if=mnt/volume.img bs=64K skip=4 count=4 iflag=direct status=none) \
	<(dd if=base bs=64K skip=4 count=4 status=none) || fail "raid1: reads of the last copy"
"$RAIDFUSE" umount mnt 2>/dev/null && fail "raid1: umount of a failed array exited 0"
log "ok: raid1: the last copy stays and serves reads; writes fail after the lost one; umount exits 1"

# Every member failed (their file system full): no member is left to read
# the clean state back from, and umount must still say the stop was not
# clean.
if [ "$(id -u)" = 0 ]; then
	mkdir -p full
	mount -t tmpfs -o size=40m tmpfs full || fail "tmpfs"
	track_mount "$WORK/full"
	"$RAIDFUSE" create --level 5 --raid-devices 3 --size 24M full/f0 full/f1 full/f2 >/dev/null ||
		fail "create raid5 on tmpfs"
	rf_mount full/f0 full/f1 full/f2 mnt
	dd if=/dev/urandom of=mnt/volume.img bs=1M conv=notrunc,fsync status=none 2>/dev/null &&
		fail "filling the members' file system raised no error"
	grep -q "FAILED" mnt/.raidfuse/status || fail "full members: not failed: $(cat mnt/.raidfuse/status)"
	"$RAIDFUSE" umount mnt 2>err && fail "umount of an array whose members all failed exited 0"
	grep -q "had failed" err || fail "umount's message with every member failed: $(cat err)"
	log "ok: every member failed (ENOSPC): umount exits 1 and says the array had failed"
else
	log "NOT RUN: every member failed on a full tmpfs (needs root)"
fi
log "PASS"
