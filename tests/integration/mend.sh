#!/bin/bash
# mend.sh - mirror copies mended after read errors, replacements and the
# write-intent bitmap, each checked on the members' bytes, not only on
# what the volume reads:
#  1. a check (RAID1, RAID10 n2) meeting a copy that cannot be read
#     (read-error range) mends it from another copy and goes on: the check
#     ends done with mismatch_cnt 0, the member stays in sync, its read
#     error count goes up, and its bytes there, garbled behind the daemon's
#     back first, are the good copy's afterwards;
#  2. a read error on a normal RAID1 read (role 1 write-mostly, so reads
#     go to role 0) is answered from the other copy and the copy
#     rewritten; with a writer on the same range meanwhile
#     (the good copy slowed down with latency=, so that a rewrite taken
#     outside the range lock would put older bytes back under the
#     writer's), both copies end with what the writer wrote last;
#  3. a replacement whose sync fails is given up before the bitmap bits
#     that cover writes it took are cleared (its recovery_offset vouches
#     for them; the member is a loop device on a full tmpfs, so its
#     fdatasync fails); and a replace killed with SIGKILL mid-copy, written
#     to meanwhile, resumes after a remount and ends with the exact data;
#  4. RAID1 with a bitmap, killed with SIGKILL after writes to two regions:
#     the remount resyncs those two regions and nothing else (bitmap.sh
#     covers RAID5 and RAID10 so, RAID1 only without a bitmap);
#  5. the array killed mid-replace in 3 mounts with its members named in
#     another order, the replacement first (its superblock has a bitmap
#     offset but it holds no bitmap; the mount must read the bitmap from a
#     member in sync), and the copy finishes.
# Why: the fixes these cover (check mending unreadable copies, read-error
# rewrites under the range lock, replacements synced before bits clear,
# resync of only the marked range) had been checked by reading the code
# only. 1-3 fail with their fix taken out; 4 fails if a resync writes
# outside the marked regions (the old walk of the whole array per bit
# wrote only inside them, so no test can see it but by its time).
# Faults go through MOUNT/.raidfuse/devN/fault (offsets: the member's data
# area); members are damaged behind the daemon's back (dd into the file)
# where a test must tell a mended copy from one never read.
. "$(dirname "$0")/lib.sh"
require_fuse
require_root
require_cmd python3 mdadm losetup

cd "$WORK"

loopdev=
_mend_cleanup() {
	# The daemon holding the loop device goes first (lib's _cleanup), so
	# that the loop device and then the tmpfs under it can go.
	[ -z "$loopdev" ] || losetup -d "$loopdev" 2>/dev/null || true
	_cleanup
}
trap _mend_cleanup EXIT

# member_bytes MEMBER OFF LEN: LEN bytes of the member's data area at OFF.
member_bytes() {
	dd if="$1" bs=64K iflag=skip_bytes,count_bytes skip=$(($(data_off "$1") + $2)) count="$3" \
		status=none
}
# garble MEMBER OFF LEN: random bytes into the member's data area, behind
# the daemon's back.
garble() {
	head -c "$3" /dev/urandom >garble.bin
	put garble.bin "$1" $(($(data_off "$1") + $2))
}
read_errors() { # MOUNT DEV
	sed -n 's/^read \([0-9]*\) write.*/\1/p' "$1/.raidfuse/$2/errors"
}
# check_clean MOUNT LABEL: run a check to its end; it must end done with
# mismatch_cnt 0.
check_clean() {
	"$RAIDFUSE" check "$1" || fail "$2: raidfuse check refused"
	"$RAIDFUSE" wait "$1" >wait.out ||
		fail "$2: check did not end done: $(tail -n1 wait.out); log: $(tail -n 3 "$1/.raidfuse/log")"
	tail -n1 wait.out | grep -q "^done: mismatch_cnt 0$" ||
		fail "$2: check: expected 'done: mismatch_cnt 0', got '$(tail -n1 wait.out)'"
}
vol_sha() { sha256sum <"$1/volume.img" | cut -d' ' -f1; }
file_sha() { sha256sum <"$1" | cut -d' ' -f1; }
same_bytes() { # LABEL WHAT-FILE EXPECTED-FILE
	cmp -s "$2" "$3" || fail "$1: $(cmp "$2" "$3" 2>&1 | head -n1) (expected the bytes of $3)"
}
dirty_regions() { # MOUNT: N of "bitmap: N/M regions dirty"
	sed -n 's/^ *bitmap: \([0-9]*\)\/[0-9]* regions dirty.*/\1/p' "$1/.raidfuse/status"
}

# ---- 1. check mends a copy that cannot be read ---------------------------
# check_mends LABEL MOUNT MEMBER OFF LEN VOLOFF...: MEMBER's range [OFF,
# OFF+LEN) is garbled and fails to read; after a check it must hold the
# volume bytes at VOLOFF... (one per 64 KiB of the range).
check_mends() {
	local label=$1 mnt=$2 member=$3 off=$4 len=$5 dev before after v
	shift 5
	dev=$(dev_of "$mnt" "$member") || fail "$label: $member has no devN directory"
	garble "$member" "$off" "$len"
	member_bytes "$member" "$off" "$len" >garbled.bin
	: >want.bin
	for v in "$@"; do
		dd if=ref of=want.bin bs=64K iflag=skip_bytes skip="$v" count=1 oflag=append \
			conv=notrunc status=none
	done
	cmp -s garbled.bin want.bin && fail "$label: garbling $member changed nothing"
	echo "read-error range=$off+$len" >"$mnt/.raidfuse/$dev/fault" || fail "$label: set read-error"
	before=$(read_errors "$mnt" "$dev")
	check_clean "$mnt" "$label: check with $dev's copy unreadable"
	after=$(read_errors "$mnt" "$dev")
	[ "$after" -gt "$before" ] ||
		fail "$label: $dev's read errors went from $before to $after; expected them to go up"
	[ "$(cat "$mnt/.raidfuse/$dev/state")" = in_sync ] ||
		fail "$label: $dev is $(cat "$mnt/.raidfuse/$dev/state") after the check, expected in_sync"
	grep -q "read error on .*$(basename "$member") (role [0-9]*) corrected" "$mnt/.raidfuse/log" ||
		fail "$label: no corrected read error in the log: $(tail -n 3 "$mnt/.raidfuse/log")"
	# The member file itself, fault still set: only a rewrite mends it.
	member_bytes "$member" "$off" "$len" >mended.bin
	same_bytes "$label: $member's range after the check" mended.bin want.bin
	[ "$(vol_sha "$mnt")" = "$(file_sha ref)" ] || fail "$label: volume differs with the fault set"
	echo clear >"$mnt/.raidfuse/$dev/fault"
	[ "$(vol_sha "$mnt")" = "$(file_sha ref)" ] || fail "$label: volume differs after clear"
	check_clean "$mnt" "$label: check after clear"
}

"$RAIDFUSE" create --level 1 --raid-devices 2 --size 32M --bitmap-chunk 1M r1-0 r1-1 >/dev/null ||
	fail "raid1: create"
rf_mount r1-0 r1-1 mnt1
vol=$(stat -c %s mnt1/volume.img)
head -c "$vol" /dev/urandom >ref
dd if=ref of=mnt1/volume.img bs=1M conv=notrunc,fsync status=none || fail "raid1: write"
[ "$(vol_sha mnt1)" = "$(file_sha ref)" ] || fail "raid1: volume differs from what was written"
# The first copy: the check must take the second as its reference.
check_mends raid1 mnt1 r1-0 $((4 << 20)) $((128 << 10)) $((4 << 20)) $(((4 << 20) + (64 << 10)))
log "ok: raid1: a check mended role 0's unreadable copy; done, mismatch_cnt 0, member in sync"

"$RAIDFUSE" create --level 10 --layout n2 --raid-devices 4 --chunk 64K --size 32M --bitmap-chunk 1M \
	t0 t1 t2 t3 >/dev/null || fail "raid10: create"
rf_mount t0 t1 t2 t3 mnt10
cp ref ref1
head -c "$(stat -c %s mnt10/volume.img)" /dev/urandom >ref
dd if=ref of=mnt10/volume.img bs=1M conv=notrunc,fsync status=none || fail "raid10: write"
# near=2 over 4: member chunk m of roles 2 and 3 holds volume chunk 2m+1.
# Role 3 is the second copy: the check reads role 2 first.
check_mends "raid10 n2" mnt10 t3 $((16 << 16)) $((2 << 16)) $((33 << 16)) $((35 << 16))
same_bytes "raid10 n2: t3 against its partner t2" <(member_bytes t3 $((16 << 16)) $((2 << 16))) \
	<(member_bytes t2 $((16 << 16)) $((2 << 16)))
rf_umount mnt10
"$RAIDFUSE" verify t0 t1 t2 t3 | grep -q "mismatch_cnt: 0" || fail "raid10: copies differ afterwards"
log "ok: raid10 n2: a check mended role 3's unreadable copy; done, mismatch_cnt 0, member in sync"
mv ref1 ref

# ---- 2. a normal read's error is mended, under the range lock ------------
# Role 1 write-mostly: every read goes to role 0 first, as the case needs
# (the read balancer would otherwise pick either copy).
off=$((8 << 20)) len=$((256 << 10))
dev=$(dev_of mnt1 r1-0) || fail "raid1: r1-0 has no devN directory"
other=$(dev_of mnt1 r1-1) || fail "raid1: r1-1 has no devN directory"
echo writemostly >"mnt1/.raidfuse/$other/state" || fail "raid1: set role 1 write-mostly"
garble r1-0 "$off" "$len"
dd if=ref of=want.bin bs=64K iflag=skip_bytes,count_bytes skip=$off count=$len status=none
echo "read-error range=$off+$len" >"mnt1/.raidfuse/$dev/fault" || fail "raid1: set read-error"
before=$(read_errors mnt1 "$dev")
[ "$(vol_sha mnt1)" = "$(file_sha ref)" ] || fail "raid1: reads with role 0 failing differ"
[ "$(read_errors mnt1 "$dev")" -gt "$before" ] || fail "raid1: the read errors were not counted"
[ "$(cat "mnt1/.raidfuse/$dev/state")" = in_sync ] || fail "raid1: a corrected read failed the member"
member_bytes r1-0 "$off" "$len" >mended.bin
same_bytes "raid1: r1-0's range after reads failed there" mended.bin want.bin
echo clear >"mnt1/.raidfuse/$dev/fault"
[ "$(vol_sha mnt1)" = "$(file_sha ref)" ] || fail "raid1: volume differs after clear"
log "ok: raid1: reads failing on role 0 answered from role 1, the range rewritten, member in sync"

# Now a writer on the range while reads of it keep failing on role 0 and
# role 1 answers 20 ms late (latency=): a read that rewrote role 0 with
# bytes it had read from role 1 before a write, outside the range's lock,
# would undo that write on role 0 alone. Each time a write returns, both
# member files must hold it (nothing else writes there meanwhile); a
# stale rewrite usually lands before the write returns, and a later read
# would mend it again, so only this catches it reliably.
echo "read-error range=$off+$len" >"mnt1/.raidfuse/$dev/fault"
echo "latency=20" >"mnt1/.raidfuse/$other/fault"
cat >race.py <<'PY'
import hashlib, os, sys, threading
# race.py VOLUME OFF LEN GENS MEMBER0 DATA_OFF0 MEMBER1 DATA_OFF1 BEFORE
# (BEFORE: a file holding the volume as it was before the race)
# race.py - OFF LEN GENS: print the last generation's bytes
path, off, length, gens = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
R = 65536
def block(g, r):  # generation g of the 64 KiB region r of the range
    return hashlib.sha256(b"mend %d/%d" % (g, r)).digest() * (R // 32)
if path == "-":
    sys.stdout.buffer.write(b"".join(block(gens, r) for r in range(length // R)))
    sys.exit(0)
members = [(sys.argv[i], os.open(sys.argv[i], os.O_RDONLY), int(sys.argv[i + 1])) for i in (5, 7)]
with open(sys.argv[9], "rb") as f:
    f.seek(off)
    before = f.read(length)
done = threading.Event()
errors, reads = [], [0]
def reader():
    fd = os.open(path, os.O_RDONLY)
    try:
        while not done.is_set():
            if len(os.pread(fd, length, off)) != length:
                raise OSError("short read")
            reads[0] += 1
    except OSError as e:
        errors.append("read: %s" % e)
    os.close(fd)
def holds(data, g, r):
    for h in range(g, 0, -1):
        if data == block(h, r):
            return "generation %d" % h
    if data == before[r * R:(r + 1) * R]:
        return "the bytes from before the race"
    return "bytes of no generation"
def writer():
    fd = os.open(path, os.O_WRONLY)
    try:
        for g in range(1, gens + 1):
            for r in range(length // R):
                os.pwrite(fd, block(g, r), off + r * R)
                for name, mfd, doff in members:
                    got = os.pread(mfd, R, doff + off + r * R)
                    if got != block(g, r):
                        raise OSError("after the write of generation %d to region %d returned, "
                                      "%s holds %s" % (g, r, name, holds(got, g, r)))
    except OSError as e:
        errors.append("write: %s" % e)
    done.set()
    os.close(fd)
ts = [threading.Thread(target=reader) for _ in range(2)] + [threading.Thread(target=writer)]
for t in ts: t.start()
for t in ts: t.join()
if errors or reads[0] < 10:
    sys.exit("%s; %d reads" % ("; ".join(errors) or "too few reads", reads[0]))
print(reads[0])
PY
gens=20
nreads=$(python3 race.py mnt1/volume.img "$off" "$len" "$gens" r1-0 "$(data_off r1-0)" \
	r1-1 "$(data_off r1-1)" ref 2>race.err) ||
	fail "raid1: reads failing on role 0 raced a writer: $(cat race.err)"
echo clear >"mnt1/.raidfuse/$dev/fault"
echo clear >"mnt1/.raidfuse/$other/fault"
python3 race.py - "$off" "$len" "$gens" >want.bin
dd if=want.bin of=ref bs=64K oflag=seek_bytes seek="$off" conv=notrunc status=none
member_bytes r1-0 "$off" "$len" >copy0.bin
member_bytes r1-1 "$off" "$len" >copy1.bin
same_bytes "raid1: role 1 after the race" copy1.bin want.bin
same_bytes "raid1: role 0 (mended while written) after the race" copy0.bin want.bin
[ "$(cat "mnt1/.raidfuse/$dev/state")" = in_sync ] || fail "raid1: role 0 failed during the race"
[ "$(vol_sha mnt1)" = "$(file_sha ref)" ] || fail "raid1: volume differs after the race"
check_clean mnt1 "raid1: after the race"
rf_umount mnt1
rf_mount r1-0 r1-1 mnt1
[ "$(vol_sha mnt1)" = "$(file_sha ref)" ] || fail "raid1: volume differs after remount"
check_clean mnt1 "raid1: after remount"
rf_umount mnt1
log "ok: raid1: $nreads failing reads raced $gens generations of writes; both copies hold the last"

# raid1_filled LABEL SIZE MNT M0 M1: a new RAID1 of M0 and M1 (bitmap
# chunks of 1 MiB) filled with random bytes, which ref keeps; stopped
# cleanly, so no bit is set.
raid1_filled() {
	local label=$1 size=$2 mnt=$3
	"$RAIDFUSE" create --level 1 --raid-devices 2 --size "$size" --bitmap-chunk 1M "$4" "$5" \
		>/dev/null || fail "$label: create"
	rf_mount "$4" "$5" "$mnt"
	head -c "$(stat -c %s "$mnt/volume.img")" /dev/urandom >ref
	dd if=ref of="$mnt/volume.img" bs=1M conv=notrunc,fsync status=none || fail "$label: write"
	rf_umount "$mnt"
}

# ---- 3. replacements -----------------------------------------------------
raid1_filled replace 48M mnt3 p0 p1

# 3a. The replacement: a loop device over a sparse file on a full tmpfs,
# its first MiB (superblock, bitmap) allocated. What the copy writes to
# its data area sits in the page cache until a sync, which then fails.
mkdir tfs
track_mount "$WORK/tfs"
mount -t tmpfs -o size=2M tmpfs tfs || fail "mount a tmpfs"
head -c $((1 << 20)) /dev/zero >tfs/p0new
truncate -s 48M tfs/p0new
python3 - tfs/filler <<'PY' || fail "fill the tmpfs"
import os, sys
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT)
try:
    while True:
        os.write(fd, b"\0" * 4096)
except OSError:
    pass
PY
[ "$(df --output=avail tfs | tail -n1 | tr -d ' ')" = 0 ] || fail "the tmpfs is not full: $(df tfs)"
loopdev=$(losetup -f --show tfs/p0new) || fail "losetup"
rf_mount p0 p1 mnt3
echo 1 >mnt3/.raidfuse/sync_speed_min # or the floor (1000) wins, as in md
echo 6 >mnt3/.raidfuse/sync_speed_max # one 64 KiB piece, then a 10 s nap
"$RAIDFUSE" replace mnt3 p0 "$loopdev" || fail "replace p0 with $loopdev"
newdev=$(dev_of mnt3 "$loopdev") || fail "replace: $loopdev has no devN directory"
# The first piece is copied at once; once it is, write inside it.
for _ in $(seq 50); do
	w=$(python3 -c 'import json,sys
print(sum(m["written_bytes"] for m in json.load(sys.stdin)["members"] if m["path"] == sys.argv[1]))' \
		"$loopdev" <mnt3/.raidfuse/status.json)
	[ "$w" -ge 65536 ] && break
	sleep 0.1
done
[ "$w" -ge 65536 ] || fail "replace: the first piece was not copied ($w bytes written)"
[ "$(dirty_regions mnt3)" = 0 ] || fail "replace: bits dirty before the write: $(cat mnt3/.raidfuse/status)"
# No fsync: that would sync the replacement itself.
head -c 4096 /dev/urandom >w4k
dd if=w4k of=mnt3/volume.img bs=4K conv=notrunc status=none || fail "replace: write during the copy"
dd if=w4k of=ref bs=4K conv=notrunc status=none
[ "$(dirty_regions mnt3)" -ge 1 ] || fail "replace: the write set no bit"
# md clears a bit once its region is idle and the members are synced; the
# replacement took the write too, so it must be synced (here: fail to, and
# be given up) before the bit goes.
cleared=0
for _ in $(seq 120); do
	if [ "$(dirty_regions mnt3)" = 0 ]; then
		cleared=1
		break
	fi
	sleep 0.1
done
[ $cleared = 1 ] || fail "replace: the bit was not cleared within 12 s"
[ "$(cat "mnt3/.raidfuse/$newdev/state")" = faulty ] ||
	fail "replace: the bit was cleared while $loopdev, whose sync fails, is $(cat "mnt3/.raidfuse/$newdev/state"); expected it given up (faulty) first"
grep -q "replacement $loopdev of role 0 failed on write: Input/output error" mnt3/.raidfuse/log ||
	fail "replace: the given-up replacement is not in the log: $(tail -n 4 mnt3/.raidfuse/log)"
grep -q "\[2/2\]" mnt3/.raidfuse/status || fail "replace: a serving member was failed"
"$RAIDFUSE" wait mnt3 >/dev/null # the copy thread wakes from its nap and stops
"$RAIDFUSE" remove mnt3 "$loopdev" || fail "replace: remove $loopdev"
[ "$(vol_sha mnt3)" = "$(file_sha ref)" ] || fail "replace: volume differs after the replacement failed"
rf_umount mnt3
losetup -d "$loopdev" && loopdev=
umount tfs || fail "umount the tmpfs"
log "ok: a replacement that cannot sync is given up before the bitmap forgets writes it took"

# 3b. A replace killed with SIGKILL mid-copy resumes from its checkpoint.
# rec_off MEMBER: its superblock's recovery_offset in sectors (0: none).
rec_off() {
	local o
	o=$(mdadm --examine "$1" 2>/dev/null | sed -n 's/^ *Recovery Offset : \([0-9]*\) sectors.*/\1/p')
	echo "${o:-0}"
}
truncate -s 48M p0new
rf_mount p0 p1 mnt3
echo 8000 >mnt3/.raidfuse/sync_speed_max # 47 MiB in about 6 s
"$RAIDFUSE" replace mnt3 p0 p0new || fail "replace p0 with p0new"
for _ in $(seq 100); do
	copied=$(cut -d' ' -f1 mnt3/.raidfuse/sync_completed)
	[ "$copied" != none ] && [ "$copied" -ge 4096 ] && break
	sleep 0.05
done
[ "$copied" != none ] && [ "$copied" -ge 4096 ] && [ "$copied" -lt 40960 ] ||
	fail "replace: the copy is not between 2 and 20 MiB after 5 s: '$copied' sectors"
grep -q "(R)" mnt3/.raidfuse/status || fail "replace: status shows no replacement: $(cat mnt3/.raidfuse/status)"
# Behind the copy (it must reach the replacement too) and ahead of it.
head -c $((1 << 20)) /dev/urandom >behind
dd if=behind of=mnt3/volume.img bs=1M seek=1 conv=notrunc,fsync status=none || fail "replace: write behind the copy"
dd if=behind of=ref bs=1M seek=1 conv=notrunc status=none
head -c $((1 << 20)) /dev/urandom >late
dd if=late of=mnt3/volume.img bs=1M seek=40 conv=notrunc,fsync status=none || fail "replace: write ahead of the copy"
dd if=late of=ref bs=1M seek=40 conv=notrunc status=none
# Kill once a checkpoint after the writes has passed them (every 2 s).
was=$(rec_off p0new)
for _ in $(seq 60); do
	offset=$(rec_off p0new)
	[ "$offset" -gt "$was" ] && [ "$offset" -gt 4096 ] && break
	sleep 0.1
done
[ "$offset" -gt "$was" ] && [ "$offset" -gt 4096 ] ||
	fail "replace: no checkpoint past the write behind the copy (recovery_offset $was, then $offset)"
[ "$(cat mnt3/.raidfuse/sync_action)" = recover ] ||
	fail "replace: the copy ended before the kill (sync_action $(cat mnt3/.raidfuse/sync_action))"
rf_kill mnt3
offset=$(rec_off p0new)
# Kept as the kill left them, for 5. (the members named in another order).
mkdir killed
cp --sparse=always p0 p1 p0new ref killed/
"$RAIDFUSE" mount p0 p1 p0new mnt3 2>mount3.err || fail "replace: remount after the kill: $(cat mount3.err)"
grep -q "resyncing the [1-9][0-9]* of [0-9]* regions the write-intent bitmap marks" mount3.err ||
	fail "replace: no bitmap resync after the kill: $(cat mount3.err)"
echo 1000000 >mnt3/.raidfuse/sync_speed_max
"$RAIDFUSE" wait mnt3 >wait.out || fail "replace: the resumed copy: $(cat wait.out)"
grep -q "p0new replaced .*p0, which is now faulty" mnt3/.raidfuse/log ||
	fail "replace: the resumed copy did not finish: $(tail -n 4 mnt3/.raidfuse/log)"
"$RAIDFUSE" remove mnt3 p0 || fail "replace: remove the replaced p0"
[ "$(vol_sha mnt3)" = "$(file_sha ref)" ] || fail "replace: volume differs after the resumed replace"
check_clean mnt3 "replace: after the resumed copy"
rf_umount mnt3
"$RAIDFUSE" verify p0new p1 | grep -q "mismatch_cnt: 0" || fail "replace: copies differ afterwards"
mdadm --examine p0new | grep -q "Device Role : Active device 0" ||
	fail "replace: mdadm does not see p0new as active device 0: $(mdadm --examine p0new | grep -i 'role\|state')"
mdadm --examine p0new | grep -q "Recovery Offset" && fail "replace: p0new still has a recovery offset"
rf_mount p0new p1 mnt3
[ "$(vol_sha mnt3)" = "$(file_sha ref)" ] || fail "replace: volume differs after remount"
rf_umount mnt3
log "ok: a replace killed at sector $offset resumed after remount; exact data, mismatch_cnt 0, mdadm sees it active"

# ---- 4. RAID1 bitmap resync after SIGKILL: the marked regions only --------
raid1_filled resync 64M mnt4 b0 b1
rf_mount b0 b1 mnt4
regions=$(sed -n 's/^ *bitmap: [0-9]*\/\([0-9]*\) regions dirty.*/\1/p' mnt4/.raidfuse/status)
for at in 5 40; do
	head -c $((256 << 10)) /dev/urandom >w$at.bin
	dd if=w$at.bin of=mnt4/volume.img bs=256K seek=$((at * 4)) conv=notrunc,fsync status=none ||
		fail "resync: write at $at MiB"
	dd if=w$at.bin of=ref bs=256K seek=$((at * 4)) conv=notrunc status=none
done
[ "$(dirty_regions mnt4)" = 2 ] || fail "resync: $(dirty_regions mnt4) bits dirty after two writes, expected 2"
rf_kill mnt4
# The second copy of both written ranges, and of a range no bit marks.
garble b1 $((5 << 20)) $((256 << 10))
garble b1 $((40 << 20)) $((256 << 10))
garble b1 $((20 << 20)) 4096
"$RAIDFUSE" mount b0 b1 mnt4 2>mount4.err || fail "resync: remount after the kill: $(cat mount4.err)"
grep -q "resyncing the 2 of $regions regions the write-intent bitmap marks" mount4.err ||
	fail "resync: expected a resync of the 2 of $regions marked regions, got: $(cat mount4.err)"
written=$(python3 -c 'import json,sys
print([m["written_bytes"] for m in json.load(sys.stdin)["members"] if m["path"].endswith("/b1")][0])' \
	<mnt4/.raidfuse/status.json)
# Two 1 MiB regions, plus a few superblock and bitmap blocks.
[ "$written" -ge $((2 << 20)) ] && [ "$written" -le $(((2 << 20) + (64 << 10))) ] ||
	fail "resync: b1 got $written bytes; the 2 marked regions are 2097152"
# Both copies of what was written, b1's garbled ones rewritten. (The
# volume as a whole is compared after the repair below: reads may pick
# b1's garbled bytes no bit covers.)
for at in 5 40; do
	for m in b0 b1; do
		same_bytes "resync: $m at $at MiB" <(member_bytes $m $((at << 20)) $((256 << 10))) w$at.bin
	done
	cmp -s <(dd if=mnt4/volume.img bs=256K skip=$((at * 4)) count=1 status=none) w$at.bin ||
		fail "resync: the volume at $at MiB differs from what was written"
done
rf_umount mnt4
out=$("$RAIDFUSE" verify b0 b1)
grep -q "mismatch_cnt: 128$" <<<"$out" ||
	fail "resync: expected mismatch_cnt 128 (the 4 KiB garbled where no bit was set, in a 64 KiB block as md counts), got: $out"
rf_mount b0 b1 mnt4
"$RAIDFUSE" repair mnt4 || fail "resync: repair"
"$RAIDFUSE" wait mnt4 >/dev/null || fail "resync: repair did not end done"
rf_umount mnt4
"$RAIDFUSE" verify b0 b1 | grep -q "mismatch_cnt: 0" || fail "resync: copies differ after repair"
rf_mount b0 b1 mnt4
[ "$(vol_sha mnt4)" = "$(file_sha ref)" ] || fail "resync: volume differs after repair"
check_clean mnt4 "resync: after repair"
rf_umount mnt4
log "ok: raid1: after SIGKILL the 2 marked regions (and nothing else: $written bytes) were resynced"

# ---- 5. the replace killed in 3b, its members named in another order -----
# mount takes the members in any order; the bitmap must be read from one
# that holds it (md reads it from an in-sync member), not from the
# replacement, which was never given one while it was copied.
cd killed || fail "cd killed"
mkdir mnt5
track_mount "$WORK/killed/mnt5"
"$RAIDFUSE" mount p0new p1 p0 mnt5 2>mount5.err ||
	fail "replace: the array killed mid-replace does not mount with the replacement named first: $(cat mount5.err)"
echo 1000000 >mnt5/.raidfuse/sync_speed_max
"$RAIDFUSE" wait mnt5 >wait.out || fail "replace (p0new first): the resumed copy: $(cat wait.out)"
grep -q "p0new replaced .*p0, which is now faulty" mnt5/.raidfuse/log ||
	fail "replace (p0new first): the resumed copy did not finish: $(tail -n 4 mnt5/.raidfuse/log)"
[ "$(vol_sha mnt5)" = "$(file_sha ref)" ] || fail "replace (p0new first): volume differs"
rf_umount mnt5
"$RAIDFUSE" verify p0new p1 | grep -q "mismatch_cnt: 0" || fail "replace (p0new first): copies differ"
cd "$WORK"
log "ok: the array killed mid-replace mounts and finishes with the replacement named first"
log "PASS"
