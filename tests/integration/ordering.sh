#!/bin/bash
# ordering.sh - what a crash, a failing member or a read error in the
# middle of the engine's own steps must not do (each case found by review,
# each failing before its fix):
#  1. band_retry A/B: a read of a cached row whose member fails the read is
#     retried as a rebuild over a band whose other chunks mix states (a
#     dirty column after an invalid or clean one): the acknowledged write
#     must survive, and no chunk may be rebuilt from new data with old
#     parity (stripe_row.c band_load);
#  2. super_fail: a member that fails while no superblock can record it
#     (every other member refuses the update): no later write may be taken
#     for durable, or after a crash the stale member is trusted again
#     (array.c array_member_error);
#  3. bitmap_order: the bitmap goes to the members before the superblocks,
#     as md_update_sb does, so a crash between them costs no full resync
#     (array.c array_super_sync);
#  4. fail_during_resync: a member failing during the resync after an
#     unclean stop leaves the array dirty and degraded, which a later start
#     refuses without --force, as md does (array.c array_start);
#  5. rebuild_drop_unrecorded: case 2 for a member being rebuilt, whose
#     write fails where its rebuild has passed (array.c
#     rebuild_target_drop);
#  6. bitmap_clear_degraded: a member failed out while the bitmap daemon
#     syncs the members before it clears idle bits: the bits stay, as md
#     clears none while degraded (bitmap.c bitmap_clear_idle);
#  7. dsync_write: a write made with O_DSYNC (dd oflag=dsync) or
#     RWF_DSYNC is durable when it returns: with direct_io the kernel sends
#     no fsync after it, so a crash lost it from the write-back cache
#     (fs_ops.c fs_write);
#  8. rebuild_torn_forced: a crash mid-rebuild tears a row below the new
#     member's recovery_offset; the forced start must read the fsynced
#     chunk the new member holds there (md reads a recovering member below
#     its recovery_offset), not rebuild it from the torn parity
#     (stripe_row.c role_present, array.h array_read_source).
# Cases 3, 4 and 6 stop the daemon at a chosen function with gdb.
. "$(dirname "$0")/lib.sh"
require_fuse
require_root
require_cmd python3 mdadm losetup gdb od

# run_case NAME FUNCTION [ARGS]: the case in a subshell, in $WORK/NAME;
# its last line says PASS or FAIL.
run_case() {
	local name=$1 out
	shift
	track_mount "$WORK/$name/mnt"
	out=$( (W=$WORK/$name; "$@") 2>&1)
	local rc=$?
	printf '%s\n' "$out" | sed "s/^/  $name: /"
	[ "$rc" = 0 ] && [ "$(printf '%s\n' "$out" | tail -1)" = PASS ] || fail "$name: $(printf '%s\n' "$out" | tail -3)"
	log "ok: $name"
}

# new_array NDEV SIZE A_BYTES B_BYTES: in $W a RAID5 of NDEV members of
# SIZE (64 KiB chunks) whose first A_BYTES hold 'A' (0x41), synced, and $W/B
# B_BYTES of 'B' (0x42) to write; mounted at $W/mnt; M the members, V the
# volume.
new_array() {
	rm -rf "$W"; mkdir -p "$W/mnt"
	M=$(for ((i = 0; i < $1; i++)); do printf '%s ' "$W/m$i.img"; done)
	$RAIDFUSE create --level 5 --raid-devices "$1" --chunk 64K --size "$2" $M >/dev/null || exit 2
	V=$W/mnt/volume.img
	head -c "$3" /dev/zero | tr '\0' A >"$W/A"
	head -c "$4" /dev/zero | tr '\0' B >"$W/B"
	$RAIDFUSE mount $M $W/mnt || exit 2
	dd if=$W/A of=$V bs=64K conv=notrunc,fsync status=none
}

band_retry() {
	local variant=$1
	new_array 3 8M 262144 4096
	$RAIDFUSE umount $W/mnt || exit 2
	# flush age of 10 minutes: nothing leaves the cache on its own
	$RAIDFUSE mount --flush-age-ms 600000 --readahead 0 $M $W/mnt || exit 2
	# row 0 (3-member left-symmetric): chunk 0 = role 0, chunk 1 = role 1, P = role 2
	if [ "$variant" = B ]; then
	  # chunk 1 col0 becomes CLEAN (read through the row) ...
	  dd if=$W/B of=$V bs=4096 seek=16 count=1 conv=notrunc status=none   # col0 of chunk 1 -> brings row in
	  $RAIDFUSE umount $W/mnt >/dev/null; $RAIDFUSE mount --flush-age-ms 600000 --readahead 0 $M $W/mnt
	  # now row not cached; write col1 of chunk 1 (dirty), then read col0 (clean)
	  dd if=$W/B of=$V bs=4096 seek=17 count=1 conv=notrunc status=none
	  dd if=$V of=/dev/null bs=4096 skip=16 count=1 status=none
	else
	  # chunk 1: col1 DIRTY, col0 INVALID
	  dd if=$W/B of=$V bs=4096 seek=17 count=1 conv=notrunc status=none
	fi
	echo "cache: $(grep cache_dirty_rows $W/mnt/.raidfuse/status 2>/dev/null || grep -o '"cache_dirty_rows":[0-9]*' $W/mnt/.raidfuse/status.json)"
	# read error on role 0 (chunk 0), then read chunk 0 columns 0-1 through the cached row
	echo read-error > $W/mnt/.raidfuse/dev0/fault
	dd if=$V of=$W/r0 bs=8192 count=1 status=none
	echo clear > $W/mnt/.raidfuse/dev0/fault
	# what a reader sees now: chunk 1 column 1 (the acknowledged write), chunk 0 cols 0-1
	bytes_of() { od -An -tx1 -v | tr -s ' \n' '\n' | sed '/^$/d' | sort -u | tr '\n' ' '; }
	got1=$(dd if=$V bs=4096 skip=17 count=1 status=none | bytes_of)
	got0=$(bytes_of < $W/r0)
	echo "chunk1 col1 after the read (wrote 42): $got1"
	echo "chunk0 cols0-1 as read (should be all 41): $got0"
	sync; "$RAIDFUSE" umount $W/mnt || echo "umount failed"
	# offline view
	$RAIDFUSE verify $M 2>&1 | tail -2
	$RAIDFUSE mount --readonly $M $W/mnt
	v1=$(dd if=$V bs=4096 skip=17 count=1 status=none | bytes_of | tr -d ' ')
	v0=$(dd if=$V bs=4096 skip=1 count=1 status=none | bytes_of | tr -d ' ')
	echo "after remount: chunk1 col1 = $v1 (want 42), chunk0 col1 = $v0 (want 41)"
	$RAIDFUSE umount $W/mnt
	[ "$v1" = 42 ] && [ "$v0" = 41 ] && { echo PASS; exit 0; }
	echo FAIL; exit 1
}

# write_b SEEK: $W/B over the volume's 64 KiB block SEEK, with fsync;
# fsyncok=0 when the fsync failed (then nothing was promised).
write_b() {
	if dd if=$W/B of=$V bs=64K seek=$1 count=1 conv=notrunc,fsync status=none 2>/dev/null; then
	  echo "write of B + fsync: success"
	else
	  echo "write of B + fsync: failed (acceptable: nothing promised)"; fsyncok=0
	fi
}
# kill_daemon: SIGKILL the daemon of $W/mnt and detach the mount.
kill_daemon() { kill -9 "$(cat $W/mnt/.raidfuse/pid)"; sleep 0.5; fusermount3 -u -z $W/mnt; }
# block_bytes SKIP: the distinct characters of the volume's 64 KiB block SKIP.
block_bytes() {
	dd if=$V bs=64K skip=$1 count=1 status=none | od -An -c -v | tr -s ' \n' '\n' | sed '/^$/d' | sort -u | tr -d '\n'
}
# judge BLOCK: read the volume's 64 KiB block BLOCK and unmount; PASS when
# the fsync failed or the block holds B.
judge() {
	local got
	got=$(block_bytes "$1")
	$RAIDFUSE umount $W/mnt
	echo "block $1 after the crash reads: '$got'"
	[ "${fsyncok:-1}" = 0 ] && { echo PASS; exit 0; }
	[ "$got" = B ] && { echo PASS; exit 0; }
	echo FAIL; exit 1
}
# mount_failing_role1 BREAK [FRAME]: mount $M at $W/mnt in the background
# under gdb, which fails role 1 (array_fail_role) when BREAK (a gdb
# breakpoint spec) is hit, FRAME frames up from it ("up" where the array
# is the caller's); it prints "failing role 1" to $W/gdb.log then. Returns
# once volume.img is there.
mount_failing_role1() {
	local ups=
	[ -z "${2:-}" ] || ups=$(printf 'up\n%.0s' $(seq "$2"))
	printf '%s\n' "set pagination off" "set breakpoint pending on" "$1" "commands" "silent" \
		"$ups" 'printf "failing role 1\n"' "call (int)array_fail_role(a, 1)" "continue" "end" "run" \
		>$W/gdbcmds
	gdb -q -batch -x $W/gdbcmds --args $RAIDFUSE mount -f $M $W/mnt >$W/gdb.log 2>&1 &
	for i in $(seq 100); do [ -f $W/mnt/volume.img ] && break; sleep 0.1; done
}
# raid5_bitmap1m NDEV SIZE: in a fresh $W, a RAID5 of NDEV members of SIZE
# with 1 MiB bitmap chunks, not mounted; M the members.
raid5_bitmap1m() {
	rm -rf "$W"; mkdir -p "$W/mnt"
	M=$(for ((i = 0; i < $1; i++)); do printf '%s ' "$W/m$i.img"; done)
	$RAIDFUSE create --level 5 --raid-devices "$1" --chunk 64K --size "$2" --bitmap-chunk 1M $M >/dev/null || exit 2
}

super_fail() {
	new_array 4 16M 1048576 65536
	for d in 1 2 3; do echo super-error > $W/mnt/.raidfuse/dev$d/fault; done
	echo write-error > $W/mnt/.raidfuse/dev0/fault
	# row 0: chunk 0 lives on role 0 (left-symmetric, 4 members)
	write_b 0
	grep -E "^raid|\[" $W/mnt/.raidfuse/status | head -3
	echo "on disk, m1: $(mdadm --examine $W/m1.img | grep -E 'Array State')"
	echo "on disk, m0: $(mdadm --examine $W/m0.img | grep -E 'Events')  m1: $(mdadm --examine $W/m1.img | grep -E 'Events')"
	kill_daemon
	if ! $RAIDFUSE mount $M $W/mnt 2>$W/err; then cat $W/err; echo "remount refused"; exit 1; fi
	cat $W/err
	grep -E "^raid|\[" $W/mnt/.raidfuse/status | head -2
	judge 0
}

bitmap_order() {
	raid5_bitmap1m 4 64M
	# mount in the foreground under gdb; die at the bitmap store of the
	# "mark active" superblock update, as the second member's superblock is written
	gdb -q -batch -ex 'set breakpoint pending on' -ex 'break member_super_store' -ex 'ignore 1 1' \
	    -ex 'run' -ex 'bt 3' -ex 'kill' --args $RAIDFUSE mount -f $M $W/mnt 2>&1 | grep -E "^#|Breakpoint 1," | head -5
	sleep 0.5; fusermount3 -u -z $W/mnt 2>/dev/null
	echo "m0 superblock: $(mdadm --examine $W/m0.img | grep -E '^ *(State|Events) :' | tr -s ' ' | tr '\n' ' ')"
	L=$(losetup -rf --show $W/m0.img); echo "m0 bitmap: $(mdadm -X $L | grep -E 'Events :|Bitmap :' | tr -s ' ' | tr '\n' ' ')"; losetup -d $L
	out=$($RAIDFUSE mount -f $M $W/mnt 2>&1 & sleep 3; $RAIDFUSE umount $W/mnt >/dev/null 2>&1; wait)
	echo "$out" | grep -i resync
	echo "$out" | grep -Eq "resyncing the [1-9][0-9]* of 63" && { echo "FAIL: full resync after a crash that wrote nothing"; exit 1; }
	# The crash came where it should: after the array was marked active.
	echo "$out" | grep -q "not stopped cleanly" || { echo "FAIL: the crash under gdb did not leave the array marked active"; exit 1; }
	echo PASS
}

fail_during_resync() {
	rm -rf "$W"; mkdir -p "$W/mnt"
	M="$W/m0.img $W/m1.img $W/m2.img"
	V=$W/mnt/volume.img
	$RAIDFUSE create --level 5 --raid-devices 3 --chunk 64K --size 8M $M >/dev/null || exit 2
	python3 -c "import sys; sys.stdout.buffer.write(b'A'*(1<<20))" > $W/A
	python3 -c "import sys; sys.stdout.buffer.write(b'B'*65536)" > $W/B
	$RAIDFUSE mount $M $W/mnt && dd if=$W/A of=$V bs=64K conv=notrunc,fsync status=none && $RAIDFUSE umount $W/mnt || exit 2
	# 1. a torn row: row 0's data chunk 0 (role 0) written, its parity (role 2) not
	$RAIDFUSE mount $M $W/mnt || exit 2
	echo latency=4000 > $W/mnt/.raidfuse/dev2/fault
	dd if=$W/B of=$V bs=64K count=1 conv=notrunc,fsync status=none 2>/dev/null &
	sleep 1.5; kill -9 "$(cat $W/mnt/.raidfuse/pid)"; sleep 0.5; fusermount3 -u -z $W/mnt
	wait 2>/dev/null
	# 2. restart; role 1 fails as the resync begins
	mount_failing_role1 "break stripe_io_resync"
	grep -E "resync|failing|Fail|faulty" $W/gdb.log | head -4
	$RAIDFUSE umount $W/mnt; wait
	echo "after the clean stop: $(mdadm --examine $W/m0.img | grep -E '^ *State :|Array State' | tr -s ' ' | tr '\n' ' ')"
	# 3. the next start (--run: degraded is expected): md refuses a dirty
	#    degraded array without force
	if $RAIDFUSE mount --run $M $W/mnt 2>$W/err; then
	  got=$(dd if=$V bs=64K skip=1 count=1 status=none | od -An -c -v | tr -s ' \n' '\n' | sed '/^$/d' | sort -u | tr -d '\n')
	  $RAIDFUSE umount $W/mnt
	  echo "started degraded without --force; chunk 1 (never written since A) reads '$got'"
	  echo FAIL; exit 1
	fi
	cat $W/err; echo PASS; exit 0
}

# rebuild_onto_new MEMBER: in $W, a RAID5 of 3 (new_array 3 16M 4 MiB of
# 'A') whose MEMBER is failed, removed and rebuilt onto new.img, slowly;
# returns once the rebuild has passed 1024 sectors and a checkpoint of its
# recovery_offset has reached the superblocks. Sets dev (new.img's devN).
rebuild_onto_new() {
	new_array 3 16M 4194304 65536
	$RAIDFUSE fail $W/mnt $W/$1 && $RAIDFUSE remove $W/mnt $W/$1 || exit 2
	truncate -s 16M $W/new.img
	echo 2000 > $W/mnt/.raidfuse/sync_speed_max
	$RAIDFUSE add $W/mnt $W/new.img || exit 2
	dev=$(for d in $W/mnt/.raidfuse/dev*; do grep -q new.img $d/path && basename $d; done)
	for _ in $(seq 100); do
		s=$(cat $W/mnt/.raidfuse/$dev/recovery_start 2>/dev/null)
		[[ $s =~ ^[0-9]+$ ]] && [ "$s" -ge 1024 ] && break
		sleep 0.1
	done
	sleep 2.5 # a checkpoint (every 2 s) reaches the superblocks
}

# The same for a member being rebuilt: its write fails where the rebuild
# has passed, and no superblock can record that it was dropped.
rebuild_drop_unrecorded() {
	rebuild_onto_new m2.img
	echo "rebuild at sector $(cat $W/mnt/.raidfuse/$dev/recovery_start)"
	for d in $W/mnt/.raidfuse/dev*; do
		grep -q new.img $d/path && echo write-error > $d/fault || echo super-error > $d/fault
	done
	# chunk 2 (volume bytes 128K..192K) lives on role 2 in row 1
	write_b 2
	grep -E "^raid|FAILED" $W/mnt/.raidfuse/status | head -2
	kill_daemon
	$RAIDFUSE mount --force $M $W/new.img $W/mnt 2>$W/err || { cat $W/err; echo "remount refused"; exit 1; }
	# Reads of a role being rebuilt are answered from parity: the stale
	# bytes show once the resumed rebuild has put new.img in sync.
	$RAIDFUSE wait $W/mnt >/dev/null || { echo "the resumed rebuild failed"; exit 1; }
	judge 2
}

# The bitmap daemon clears the bits of idle regions after syncing the
# members; a member failed out by another thread while it syncs must keep
# them set (md clears nothing while degraded: they are what a re-add
# copies). gdb fails role 1 when the daemon syncs its first member.
bitmap_clear_degraded() {
	raid5_bitmap1m 3 16M
	mount_failing_role1 'tbreak member_sync if $_caller_is("bitmap_clear_idle")' 1
	head -c 4M /dev/urandom | dd of=$W/mnt/volume.img bs=1M conv=notrunc,fsync status=none || exit 2
	for i in $(seq 150); do grep -q "failing role 1" $W/gdb.log && break; sleep 0.1; done
	grep -q "failing role 1" $W/gdb.log || { cat $W/gdb.log; echo "FAIL: gdb did not stop the bitmap daemon"; exit 1; }
	sleep 0.5
	dirty=$(grep -o '"dirty_regions":[0-9]*' $W/mnt/.raidfuse/status.json | cut -d: -f2)
	degraded=$(grep -o '"degraded":[0-9]*' $W/mnt/.raidfuse/status.json | cut -d: -f2)
	echo "after the daemon's pass: degraded $degraded, dirty regions $dirty"
	$RAIDFUSE umount $W/mnt >/dev/null 2>&1; wait
	[ "$degraded" = 1 ] || { echo "FAIL: role 1 was not failed"; exit 1; }
	[ "${dirty:-0}" -ge 1 ] && { echo PASS; exit 0; }
	echo "FAIL: the bitmap was cleared while the array was degraded"; exit 1
}

# A write that returned with O_DSYNC, or with RWF_DSYNC, must survive a
# crash like an fsynced one: the cache holds rows for 10 minutes here.
dsync_write() {
	new_array 3 8M 262144 65536
	$RAIDFUSE umount $W/mnt || exit 2
	$RAIDFUSE mount --flush-age-ms 600000 $M $W/mnt || exit 2
	dd if=$W/B of=$V bs=64K seek=1 count=1 oflag=dsync conv=notrunc status=none || exit 2
	python3 -c "import os,sys; fd = os.open(sys.argv[1], os.O_RDWR); os.pwritev(fd, [b'B' * 65536], 2 * 65536, os.RWF_DSYNC)" $V || exit 2
	echo "after the writes: $(grep cache_dirty_rows $W/mnt/.raidfuse/status)"
	kill_daemon
	$RAIDFUSE mount $M $W/mnt 2>$W/err || { cat $W/err; echo "remount refused"; exit 1; }
	got1=$(block_bytes 1) got2=$(block_bytes 2)
	$RAIDFUSE umount $W/mnt
	echo "after the crash: block 1 (O_DSYNC) reads '$got1', block 2 (RWF_DSYNC) '$got2'"
	[ "$got1" = B ] && [ "$got2" = B ] && { echo PASS; exit 0; }
	echo FAIL; exit 1
}

# Role 1 is rebuilt onto new.img, which has passed row 0 (and says so in
# its recovery_offset) when the daemon dies between row 0's data write
# and its parity write. Chunk 1 of row 0 (role 1) holds fsynced 'A' on
# new.img; rebuilt from the torn parity it would read 'B'.
rebuild_torn_forced() {
	rebuild_onto_new m1.img
	echo "new.img: $(mdadm --examine $W/new.img | grep -i 'Recovery Offset' | tr -s ' ')"
	# row 0 in the cache (nothing left to read), then its parity member slow:
	# the kill lands after chunk 0's write to m0 and before P's to m2
	dd if=$V of=/dev/null bs=128K count=1 status=none
	p=$(for d in $W/mnt/.raidfuse/dev*; do grep -q m2.img $d/path && basename $d; done)
	echo latency=4000 > $W/mnt/.raidfuse/$p/fault
	dd if=$W/B of=$V bs=64K count=1 conv=notrunc,fsync status=none 2>/dev/null &
	sleep 1.5
	kill_daemon
	wait
	$RAIDFUSE mount --force $M $W/new.img $W/mnt 2>$W/err || { cat $W/err; echo "remount refused"; exit 1; }
	got=$(block_bytes 1)
	$RAIDFUSE wait $W/mnt >/dev/null 2>&1
	after=$(block_bytes 1)
	$RAIDFUSE umount $W/mnt >/dev/null 2>&1
	echo "chunk 1 (fsynced A) after the forced start: '$got', once rebuilt: '$after'"
	[ "$got" = A ] && [ "$after" = A ] && { echo PASS; exit 0; }
	echo FAIL; exit 1
}

run_case band_retry_a band_retry A
run_case band_retry_b band_retry B
run_case super_fail super_fail
run_case bitmap_order bitmap_order
run_case fail_during_resync fail_during_resync
run_case rebuild_drop_unrecorded rebuild_drop_unrecorded
run_case bitmap_clear_degraded bitmap_clear_degraded
run_case dsync_write dsync_write
run_case rebuild_torn_forced rebuild_torn_forced
log "PASS"
