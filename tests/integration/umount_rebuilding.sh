#!/bin/bash
# umount_rebuilding.sh - raidfuse umount checks after the stop that every
# member in sync or being rebuilt says clean. devN/state calls a member
# being rebuilt a spare (md's word) that holds a slot; it must still be
# checked: here its final superblock update fails (super-error), and umount
# must say the stop was not clean, naming it.
. "$(dirname "$0")/lib.sh"

require_fuse
[ -x "$RAIDFUSE" ] || fail "no raidfuse binary at $RAIDFUSE"
cd "$WORK" || fail "cd $WORK"

"$RAIDFUSE" create --level 1 --raid-devices 2 --size 64M a.img b.img >create.out 2>&1 ||
	fail "create: $(cat create.out)"
truncate -s 64M c.img
rf_mount a.img b.img mnt
C=mnt/.raidfuse
echo 1000 >$C/sync_speed_max || fail "sync_speed_max"
echo faulty >$C/dev1/state && echo remove >$C/dev1/state || fail "fail and remove dev1"
echo "$WORK/c.img" >$C/new_dev || fail "add c.img"
sleep 0.5
[ "$(cat $C/dev2/state)" = spare ] && [ "$(cat $C/dev2/slot)" = 1 ] ||
	fail "c.img is not being rebuilt: $(cat $C/dev2/state), slot $(cat $C/dev2/slot)"
dd if=/dev/urandom of=mnt/volume.img bs=64K count=4 conv=notrunc,fsync status=none
echo super-error >$C/dev2/fault || fail "fault"
rc=0
"$RAIDFUSE" umount mnt >umount.out 2>&1 || rc=$?
[ "$rc" = 1 ] && grep -q "c.img is still marked active" umount.out ||
	fail "umount passed over the member being rebuilt: exit $rc, $(cat umount.out)"
log "PASS"
