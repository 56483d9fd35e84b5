#!/bin/bash
# lifecycle.sh - member life-cycle corners a review found wrong, each
# checked against the bytes written and a parity check:
#  1. a member being rebuilt cannot be removed (EBUSY, as in md); it can be
#     failed, and added again it is rebuilt whole: it is not a bitmap
#     re-add, since it held only what its own rebuild had reached;
#  2. a member whose own superblock still says spare, while the others
#     already give it a role (the daemon died between those writes), is
#     not trusted as in sync at the next assembly;
#  3. a spare named first at mount is not where the bitmap is read from;
#  4. an array started dirty and degraded (--force) stays dirty, with its
#     bitmap bits, after the rebuild, and the next start resyncs them;
#  5. a throttled check stops at once when asked to (sync_speed_max 1);
#  6. a replace refused while a check runs leaves the new member free
#     for a retry;
#  7. the copy carries md's MD_FEATURE_REPLACEMENT while the member it
#     replaces serves (mdadm --examine: "Replacement device"), and a stop
#     in the middle resumes;
#  8. a re-added member queued for its rebuild can be removed, as a spare
#     in md (its role then waits for the next spare, and the rebuild
#     running meanwhile is not disturbed); added again, it is rebuilt;
#  9. with two roles missing, a re-added member goes back to its own role;
# 10. a bitmap re-add is throttled over what it copies, not what it skips;
# 11. an old member named at mount beside the one that took its role (and
#     its device number) is left out without marking that number faulty;
# 12. a member md left part way through a bitmap re-add (its recovery
#     under MD_FEATURE_RECOVERY_BITMAP) resumes as a rebuild from its
#     recovery_offset, and mounts read-only meanwhile;
# 13. a member left out at mount as faulty is listed (devN) and an add of
#     it names the devN to remove first; removed, it is added back;
# 14. a recovery_offset past the member's data (a corrupt field md would
#     take as a finished recovery) rebuilds the member whole.
. "$(dirname "$0")/lib.sh"
require_fuse
require_cmd python3

cd "$WORK"
state() { cat "$1/.raidfuse/$2/state"; }
wait_state() { # MNT DEV STATE [SECONDS]
	local i
	for ((i = 0; i < ${4:-60} * 10; i++)); do
		[ "$(state "$1" "$2")" = "$3" ] && return 0
		sleep 0.1
	done
	fail "$2 did not reach $3 (is $(state "$1" "$2")); log: $(tail -5 "$1/.raidfuse/log")"
}
wait_idle() {
	local i
	for ((i = 0; i < 600; i++)); do
		[ "$(cat "$1/.raidfuse/sync_action")" = idle ] && return 0
		sleep 0.1
	done
	fail "sync_action did not go idle"
}
has_ref() { cmp -s <(head -c 40M "$1/volume.img") ref; }
verify0() {
	"$RAIDFUSE" verify "$@" >verify.out 2>&1
	grep -q "mismatch_cnt: 0$" verify.out || fail "verify $*: $(cat verify.out)"
}
kill_daemon() { # MNT
	local pid i
	pid=$(cat "$1/.raidfuse/pid")
	kill -9 "$pid"
	for ((i = 0; i < 50; i++)); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
	fusermount3 -u "$1" 2>/dev/null || umount -l "$1" 2>/dev/null || true
}
# slow_swap MNT OLD NEW SIZE: fail and remove OLD, then add NEW (created at
# SIZE) with the rebuild slowed to 2 MB/s, so that it is caught midway.
slow_swap() {
	"$RAIDFUSE" fail "$1" "$WORK/$2" && "$RAIDFUSE" remove "$1" "$WORK/$2" || fail "fail/remove $2"
	echo 2000 >"$1/.raidfuse/sync_speed_max"
	truncate -s "$4" "$3"
	"$RAIDFUSE" add "$1" "$WORK/$3" || fail "add $3"
}
head -c 40M /dev/urandom >ref

# 1. Remove refused while rebuilding; fail; add again: a full rebuild.
"$RAIDFUSE" create --level 5 --raid-devices 3 --chunk 64K --size 64M --bitmap-chunk 1M \
	a b c >/dev/null || fail create
rf_mount a b c mnt
dd if=ref of=mnt/volume.img bs=1M conv=notrunc,fsync status=none
sleep 6 # the bitmap's bits clear after five idle seconds
slow_swap mnt c d 64M
dd if=ref of=mnt/volume.img bs=64K count=1 conv=notrunc,fsync status=none
sleep 2.5 # a checkpoint of d's recovery_offset is written every 2 s
dev=$(dev_of mnt "$WORK/d") || fail "d has no devN directory"
[ "$(state mnt "$dev")" = spare ] && [ "$(cat "mnt/.raidfuse/$dev/recovery_start")" != none ] ||
	fail "d is not rebuilding: $(state mnt "$dev"), recovery_start $(cat "mnt/.raidfuse/$dev/recovery_start")"
if "$RAIDFUSE" remove mnt "$WORK/d" 2>err; then fail "a member being rebuilt was removed"; fi
grep -q "in sync or being rebuilt; fail it first" err || fail "remove refusal unclear: $(cat err)"
"$RAIDFUSE" fail mnt "$WORK/d" || fail "a member being rebuilt cannot be failed"
[ "$(state mnt "$dev")" = faulty ] || fail "d after fail: $(state mnt "$dev")"
"$RAIDFUSE" remove mnt "$WORK/d" || fail "remove d after fail"
[ "$(md_sb_field d 8 '<I')" = 3 ] || fail "d's superblock has no recovery offset: feature map $(md_sb_field d 8 '<I')"
echo 200000 >mnt/.raidfuse/sync_speed_max
"$RAIDFUSE" add mnt "$WORK/d" || fail "add d again"
wait_idle mnt
grep -q "re-added $WORK/d" mnt/.raidfuse/log && fail "half-rebuilt d was re-added from the bitmap only"
has_ref mnt || fail "data after d was rebuilt again"
rf_umount mnt
verify0 a b d
log "ok: remove refused while rebuilding; fail stops it; added again, d is rebuilt whole (mismatch_cnt 0)"

# 2. A member still calling itself a spare is not trusted in a role.
rf_mount a b d mnt
slow_swap mnt d e 64M
sleep 1
kill_daemon mnt
events=$(md_sb_field a 200 '<Q')
enum=$(md_sb_field e 160 '<I')
# e as the add wrote it: one update behind, a spare, no recovery offset.
md_sb_patch e events=$((events - 1)) "role$enum=0xffff" feature_map=0x1 \
	recovery_offset=0xffffffffffffffff
if "$RAIDFUSE" mount a b e mnt 2>err; then
	"$RAIDFUSE" umount mnt
	fail "an array whose member never learnt its role started as whole"
fi
rf_mount --force a b e mnt
"$RAIDFUSE" status mnt | grep -q "\[3/2\]" || fail "e was placed in a role: $("$RAIDFUSE" status mnt)"
grep -q "own superblock says spare" mnt/.raidfuse/log || fail "no log line for e: $(cat mnt/.raidfuse/log)"
has_ref mnt || fail "data with e left out"
rf_umount mnt
log "ok: a member whose own superblock says spare is not trusted in the role the others give it"

# 3. A spare named first: the bitmap comes from a member in sync.
"$RAIDFUSE" create --level 5 --raid-devices 3 --chunk 64K --size 48M p q r >/dev/null || fail create
rf_mount p q r mnt
dd if=ref of=mnt/volume.img bs=1M count=32 conv=notrunc,fsync status=none
truncate -s 48M s
"$RAIDFUSE" add mnt "$WORK/s" || fail "add spare s"
rf_umount mnt
rf_mount s p q r mnt
cmp -s <(head -c 32M mnt/volume.img) <(head -c 32M ref) || fail "data with a spare named first"
rf_umount mnt
log "ok: a spare named first does not stand for the bitmap"

# 4. Dirty and degraded (--force): the debt survives the rebuild. Killed
# while t is rebuilt, after a write to rows t already holds; the crash
# tears that write: new data on p, t's parity of it never written.
rf_mount p q r mnt
slow_swap mnt r t 48M
sleep 2.5
dd if=ref of=mnt/volume.img bs=64K count=1 conv=notrunc,fsync status=none
kill_daemon mnt
[ "$(md_sb_field t 152 '<Q')" -gt 0 ] || fail "t has no recovery checkpoint"
dd if=/dev/urandom of=p bs=4096 seek=256 count=1 conv=notrunc status=none
rf_mount --force p q t mnt
wait_idle mnt
grep -q "started dirty and degraded (--force)" mnt/.raidfuse/log || fail "no resync-debt log line"
rf_umount mnt
[ "$(md_sb_field p 208 '<Q')" != 18446744073709551615 ] ||
	fail "the array was stamped clean after a forced dirty start"
rf_mount p q t mnt
grep -q "not stopped cleanly: resyncing" mnt/.raidfuse/log || fail "no resync at the next start"
rf_umount mnt
verify0 p q t
log "ok: a forced dirty degraded start stays dirty through the rebuild; the next start resyncs (mismatch_cnt 0)"

# 5. A check throttled to 1 KiB/s stops at once.
rf_mount p q t mnt
dd if=ref of=mnt/volume.img bs=1M count=32 conv=notrunc,fsync status=none # over the torn 4 KiB
echo 1 >mnt/.raidfuse/sync_speed_min # or the floor (1000) wins, as in md
echo 1 >mnt/.raidfuse/sync_speed_max
echo check >mnt/.raidfuse/sync_action
sleep 1.5
start=$(date +%s%N)
echo idle >mnt/.raidfuse/sync_action
took=$((($(date +%s%N) - start) / 1000000))
[ "$took" -lt 2000 ] || fail "idle took $took ms with sync_speed_max 1"

# 6. A replace refused while a check runs; retried after it.
echo check >mnt/.raidfuse/sync_action
truncate -s 48M u
if "$RAIDFUSE" replace mnt "$WORK/q" "$WORK/u" 2>err; then fail "replace during a check was accepted"; fi
echo idle >mnt/.raidfuse/sync_action
echo 2000 >mnt/.raidfuse/sync_speed_max
"$RAIDFUSE" replace mnt "$WORK/q" "$WORK/u" 2>err || fail "replace retry refused: $(cat err)"
sleep 1
# 7. The copy carries md's replacement flag while q still serves role 1:
# without it md would see two devices claiming one role.
"$RAIDFUSE" examine u | grep -q "Device Role : Replacement device 1" ||
	fail "u is not marked a replacement: $("$RAIDFUSE" examine u | grep -i "role\|feature")"
[ $(($(md_sb_field u 8 '<I') & 0x10)) = 16 ] || fail "no MD_FEATURE_REPLACEMENT on u"
[ $(($(md_sb_field q 8 '<I') & 0x10)) = 0 ] || fail "the member being replaced is marked a replacement"
if command -v mdadm >/dev/null; then
	mdadm --examine u | grep -q "Device Role : Replacement device 1" ||
		fail "mdadm does not see u as a replacement: $(mdadm --examine u | grep -i role)"
fi
rf_umount mnt
rf_mount p q t u mnt # stopped mid-copy: it resumes
echo 200000 >mnt/.raidfuse/sync_speed_max
wait_idle mnt
cmp -s <(head -c 32M mnt/volume.img) <(head -c 32M ref) || fail "data after the replace"
rf_umount mnt
"$RAIDFUSE" examine u | grep -q "Device Role : Active device 1" || fail "u not active after the copy"
[ $(($(md_sb_field u 8 '<I') & 0x10)) = 0 ] || fail "u still marked a replacement"
verify0 p u t
log "ok: a throttled check stops in $took ms; a refused replace can be retried"
log "ok: a replacement carries md's replacement flag until the copy ends, and resumes after a stop"

# 8. A re-added member waiting for its rebuild's turn (the sync thread is
# busy with a replace) is a spare to md and can be removed; its role waits
# for the next spare (it waited for the removed member for ever before the
# reservation went with it). Added again, it is rebuilt.
"$RAIDFUSE" create --level 1 --raid-devices 3 --size 24M w0 w1 w2 >/dev/null || fail "create raid1"
rf_mount w0 w1 w2 mnt
dd if=ref of=mnt/volume.img bs=1M count=16 conv=notrunc,fsync status=none
"$RAIDFUSE" fail mnt w2 && "$RAIDFUSE" remove mnt w2 || fail "fail/remove w2"
dd if=ref of=mnt/volume.img bs=1M count=1 seek=2 skip=2 conv=notrunc,fsync status=none
echo 1 >mnt/.raidfuse/sync_speed_min # or the floor (1000) wins, as in md
echo 200 >mnt/.raidfuse/sync_speed_max
truncate -s 24M x0
"$RAIDFUSE" replace mnt "$WORK/w0" "$WORK/x0" || fail "replace w0"
"$RAIDFUSE" add mnt "$WORK/w2" || fail "re-add w2"
devw2=
for d in mnt/.raidfuse/dev*; do # the live entry: w2's first one is removed
	[ "$(cat "$d/path")" = "$WORK/w2" ] && [ "$(cat "$d/state")" != removed ] && devw2=${d##*/}
done
[ -n "$devw2" ] || fail "no live devN for the re-added w2"
[ "$(cat "mnt/.raidfuse/$devw2/state")" = spare ] || fail "queued w2 is $(cat "mnt/.raidfuse/$devw2/state")"
"$RAIDFUSE" remove mnt "$WORK/w2" 2>err || fail "a member queued for its rebuild was not removed: $(cat err)"
[ "$(cat "mnt/.raidfuse/$devw2/state")" = removed ] || fail "removed w2 is $(cat "mnt/.raidfuse/$devw2/state")"
grep -qx replace mnt/.raidfuse/sync_action || grep -qx recover mnt/.raidfuse/sync_action ||
	fail "the replace stopped with the removal: $(cat mnt/.raidfuse/sync_action)"
echo 200000 >mnt/.raidfuse/sync_speed_max
wait_idle mnt
cmp -s <(head -c 16M mnt/volume.img) <(head -c 16M ref) || fail "raid1 data after the removal"
"$RAIDFUSE" status mnt | grep -q "\[3/2\]" || fail "role 2 not left missing: $("$RAIDFUSE" status mnt)"
"$RAIDFUSE" add mnt "$WORK/w2" || fail "add w2 again"
wait_idle mnt
"$RAIDFUSE" status mnt | grep -q "\[3/3\]" || fail "not whole after w2 was added again: $("$RAIDFUSE" status mnt)"
cmp -s <(head -c 16M mnt/volume.img) <(head -c 16M ref) || fail "raid1 data after the re-add"
rf_umount mnt
verify0 w1 w2 x0
log "ok: a re-added member queued behind a replace can be removed (the replace goes on, its role waits); added again, it is rebuilt"

# 9. With two roles missing (RAID6), a member re-added from the bitmap
# goes back to its own role, not to the lowest missing one: taken there,
# it stayed reserved for its own role too, and the rebuild of that role
# onto a later spare was refused in a loop that never ended.
"$RAIDFUSE" create --level 6 --raid-devices 5 --chunk 64K --bitmap-chunk 1M --size 32M \
	v0 v1 v2 v3 v4 >/dev/null || fail "create raid6"
rf_mount --cache-mib 1 v0 v1 v2 v3 v4 mnt
dd if=ref of=mnt/volume.img bs=1M count=32 conv=notrunc,fsync status=none
"$RAIDFUSE" fail mnt v4 && "$RAIDFUSE" remove mnt v4 || fail "fail/remove v4"
"$RAIDFUSE" fail mnt v0 && "$RAIDFUSE" remove mnt v0 || fail "fail/remove v0"
dd if=ref of=mnt/volume.img bs=64K count=4 seek=8 skip=8 conv=notrunc,fsync status=none
"$RAIDFUSE" add mnt "$WORK/v4" || fail "re-add v4"
wait_idle mnt
grep -q "/v4\[4\]" mnt/.raidfuse/status ||
	fail "re-added v4 is not back in its own role 4: $(head -n1 mnt/.raidfuse/status); log: $(tail -5 mnt/.raidfuse/log)"
truncate -s 32M y0
"$RAIDFUSE" add mnt "$WORK/y0" || fail "add y0"
timeout 60 "$RAIDFUSE" wait mnt >/dev/null || fail "the rebuild onto y0 did not end; log: $(tail -5 mnt/.raidfuse/log)"
"$RAIDFUSE" status mnt | grep -q "\[5/5\]" || fail "raid6 not whole after the re-add and the spare: $("$RAIDFUSE" status mnt)"
cmp -s <(head -c 32M mnt/volume.img) <(head -c 32M ref) || fail "raid6 data after the re-add and the spare"
rf_umount mnt
verify0 v1 v2 v3 v4 y0
log "ok: raid6 with two roles missing: a re-added member goes back to its own role, a new spare takes the other"

# 10. A bitmap re-add is held to sync_speed_max over what it copies, not
# over the clean regions it skips (md's speed counts io_sectors): one
# dirty 1 MiB region of a 64 MiB member at 500 KiB/s is seconds, not the
# two minutes the whole member would take.
"$RAIDFUSE" create --level 1 --raid-devices 2 --bitmap-chunk 1M --size 64M z0 z1 >/dev/null ||
	fail "create raid1 z"
rf_mount z0 z1 mnt
sleep 6 # the bitmap daemon clears the bits of the first writes (none here)
"$RAIDFUSE" fail mnt z1 && "$RAIDFUSE" remove mnt z1 || fail "fail/remove z1"
dd if=ref of=mnt/volume.img bs=1M count=1 seek=7 conv=notrunc,fsync status=none
echo 500 >mnt/.raidfuse/sync_speed_min
echo 500 >mnt/.raidfuse/sync_speed_max
start=$(date +%s)
"$RAIDFUSE" add mnt "$WORK/z1" || fail "re-add z1"
timeout 30 "$RAIDFUSE" wait mnt >/dev/null || fail "the re-add of one dirty region took over 30 s at 500 KiB/s"
took=$(($(date +%s) - start))
grep -q "re-added .*z1" mnt/.raidfuse/log || fail "z1 was not re-added from the bitmap: $(tail -5 mnt/.raidfuse/log)"
rf_umount mnt
verify0 z0 z1
log "ok: a bitmap re-add of one dirty region took ${took} s at sync_speed_max 500"

# 11. c takes b's role, and with it b's device number (add reuses free
# numbers, as md does). Named again at a mount beside c, the stale b is
# left out; the roles written then must keep c's entry, or the next
# assembly would leave c out as faulty.
"$RAIDFUSE" create --level 1 --raid-devices 2 --size 16M n0 n1 >/dev/null || fail "create raid1 n"
mkdir -p mnt
"$RAIDFUSE" mount --run n0 mnt 2>/dev/null || fail "mount n0 alone"
track_mount mnt
truncate -s 16M n2
"$RAIDFUSE" add mnt "$WORK/n2" || fail "add n2"
"$RAIDFUSE" wait mnt >/dev/null || fail "wait for the rebuild onto n2"
dd if=ref of=mnt/volume.img bs=1M count=4 conv=notrunc,fsync status=none
rf_umount mnt
[ "$(md_sb_field n2 160 '<I')" = "$(md_sb_field n1 160 '<I')" ] ||
	fail "n2 did not get n1's device number (the case this checks)"
"$RAIDFUSE" mount n0 n1 n2 mnt 2>mount.err || fail "mount n0 n1 n2: $(cat mount.err)"
grep -q "n1: events .* behind" mount.err || fail "the stale n1 was not left out: $(cat mount.err)"
rf_umount mnt
"$RAIDFUSE" mount n0 n2 mnt 2>mount.err ||
	fail "n2 was marked faulty by the mount that left the stale n1 out: $(cat mount.err)"
track_mount mnt
grep -q '"degraded":0' <("$RAIDFUSE" status --json mnt) || fail "n0 n2 degraded: $(cat mnt/.raidfuse/status)"
cmp <(head -c 4M mnt/volume.img) <(head -c 4M ref) || fail "n0 n2: data wrong"
rf_umount mnt
log "ok: a stale member named beside its replacement leaves the replacement's role alone"

# 12. md writes MD_FEATURE_RECOVERY_BITMAP (0x80) with RECOVERY_OFFSET
# (0x2) on a member during the recovery of an mdadm --re-add. Stopped
# then, the member is in sync below recovery_offset and, above it, wherever
# the bitmap is clean; a whole rebuild from recovery_offset covers that.
"$RAIDFUSE" create --level 5 --raid-devices 3 --size 16M r0 r1 r2 >/dev/null || fail "create raid5 r"
rf_mount r0 r1 r2 mnt
dd if=ref of=mnt/volume.img bs=1M count=8 conv=notrunc,fsync status=none
rf_umount mnt
md_sb_patch r1 feature_or=0x82 recovery_offset=4096
# Above recovery_offset r1 holds nothing md copied yet: zero it there, so
# that reads served from it, or a rebuild that skipped it, show.
r1_off=$(md_sb_field r1 128 '<Q')
dd if=/dev/zero of=r1 bs=512 seek=$((r1_off + 4096)) count=8192 conv=notrunc status=none
"$RAIDFUSE" mount --readonly r0 r1 r2 mnt 2>mount.err || fail "mount --readonly with r1 under a bitmap re-add: $(cat mount.err)"
track_mount mnt
cmp <(head -c 8M mnt/volume.img) <(head -c 8M ref) || fail "read-only with r1 recovering: data wrong"
rf_umount mnt
"$RAIDFUSE" mount r0 r1 r2 mnt 2>mount.err || fail "mount with r1 under a bitmap re-add: $(cat mount.err)"
track_mount mnt
"$RAIDFUSE" wait mnt >/dev/null || fail "wait for r1's rebuild"
grep -q "recovery of role 1 onto .*r1 finished" mnt/.raidfuse/log || fail "r1 was not rebuilt: $(cat mnt/.raidfuse/log)"
cmp <(head -c 8M mnt/volume.img) <(head -c 8M ref) || fail "after r1's rebuild: data wrong"
rf_umount mnt
verify0 r0 r1 r2
[ $(( $(md_sb_field r1 8 '<I') & 0x82 )) = 0 ] || fail "r1 still says it is recovering after its rebuild"
log "ok: a member stopped in md's bitmap re-add resumes as a rebuild (and mounts read-only meanwhile)"

# 13. r2 failed, then named again at the next mount: left out, listed.
rf_mount r0 r1 r2 mnt
"$RAIDFUSE" fail mnt r2 || fail "fail r2"
rf_umount mnt
"$RAIDFUSE" mount --run r0 r1 r2 mnt 2>/dev/null || fail "mount --run with r2 faulty"
track_mount mnt
dev=$(grep -l "/r2$" mnt/.raidfuse/dev*/path | sed -n 's|.*/\(dev[0-9]*\)/path|\1|p')
[ -n "$dev" ] || fail "r2 is not listed under .raidfuse"
"$RAIDFUSE" add mnt r2 2>add.err && fail "add of r2 while it is listed as $dev succeeded"
grep -q "still listed as $dev ([a-z]*): remove it first" add.err || fail "add of a listed faulty member: $(cat add.err)"
"$RAIDFUSE" remove mnt r2 || fail "remove r2"
"$RAIDFUSE" add mnt r2 || fail "add r2 after its removal"
"$RAIDFUSE" wait mnt >/dev/null || fail "wait for r2's rebuild"
grep -q '"degraded":0' <("$RAIDFUSE" status --json mnt) || fail "r2 not rebuilt: $(cat mnt/.raidfuse/status)"
rf_umount mnt
verify0 r0 r1 r2
log "ok: a member left out as faulty: add names the devN to remove; removed, it is added back and rebuilt"

# 14. r1's data garbled, then its superblock says a recovery stopped past
# its end: trusted, r1 would serve the garbage as in sync.
dd if=/dev/urandom of=r1 bs=1M seek=2 count=8 conv=notrunc status=none
md_sb_patch r1 feature_or=0x2 recovery_offset=0xfffffffffffffff0
"$RAIDFUSE" mount r0 r1 r2 mnt 2>mount.err || fail "mount with a corrupt recovery_offset: $(cat mount.err)"
track_mount mnt
grep -q "recovery_offset .* is past its data .*rebuilt from the start" mount.err ||
	fail "a recovery_offset past the data was not called corrupt: $(cat mount.err)"
"$RAIDFUSE" wait mnt >/dev/null || fail "wait for r1's whole rebuild"
cmp <(head -c 8M mnt/volume.img) <(head -c 8M ref) || fail "after a corrupt recovery_offset: data wrong"
rf_umount mnt
verify0 r0 r1 r2
log "ok: a recovery_offset past the data rebuilds the member whole"
log "PASS"
