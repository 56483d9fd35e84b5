#!/bin/bash
# ctl_races.sh - control-file writes that race or that must be refused, a
# spare waiting while a check runs, and umount of a killed daemon.
#
# The kernel serialises writes to one control file only: `add`
# (.raidfuse/new_dev), `replace` (devN/replace_with) and `check`
# (sync_action) arrive at once from different files. Two members added at
# once once shared one entry of the member table (a phantom member, then a
# crash reading status.json); a check and a rebuild started at once could
# both start a sync thread. A member failing while a check ran left a
# waiting spare idle for good. Control text with a NUL byte was taken up
# to the NUL; `raidfuse umount` of a mount whose daemon was killed
# exited 0; devN answered to dev00, dev+0 and "dev 0" too (one directory
# under several names). A check stopped by hand (idle) left a spare
# waiting for a member that failed meanwhile; a rebuild zeroed
# mismatch_cnt.
. "$(dirname "$0")/lib.sh"
require_fuse
cd "$WORK" || exit 1
R=$RAIDFUSE

# race FILE1 TEXT1 FILE2 TEXT2: write both at the same instant (threads
# released by a barrier); prints each write's outcome.
race() {
	python3 - "$@" <<'PY'
import os, sys, threading
f1, t1, f2, t2 = sys.argv[1:5]
barrier = threading.Barrier(2)
out = {}
def put(name, path, text):
    fd = os.open(path, os.O_WRONLY)
    barrier.wait()
    try:
        os.write(fd, text.encode())
        out[name] = "ok"
    except OSError as e:
        out[name] = e.strerror
    finally:
        os.close(fd)
a = threading.Thread(target=put, args=("first", f1, t1))
b = threading.Thread(target=put, args=("second", f2, t2))
a.start(); b.start(); a.join(); b.join()
print(out["first"], "|", out["second"])
PY
}

# Every member listed in status.json has a path, and the daemon lives.
status_sane() {
	python3 - "$1/.raidfuse/status.json" <<'PY' || fail "$2: status.json: $(cat "$1/.raidfuse/status.json" 2>&1 | head -c 300)"
import json, sys
st = json.load(open(sys.argv[1]))
members = st.get("members") or st.get("devices") or []
assert members, "no members listed"
for m in members:
    assert m.get("path"), f"a member without a path: {m}"
PY
}

"$R" create --level 5 --raid-devices 3 --chunk 64K --size 32M m0 m1 m2 >/dev/null || fail "create"
rf_mount m0 m1 m2 mnt
dd if=/dev/urandom of=mnt/volume.img bs=1M count=32 conv=notrunc,fsync status=none || fail "fill"
sha_before=$(sha256sum <mnt/volume.img)

# 1. add and replace at once, a few times over.
for i in 1 2 3 4 5; do
	truncate -s 32M "s$i-a" "s$i-b"
	echo 1000000 >mnt/.raidfuse/sync_speed_max
	dev=$(grep -lx 1 mnt/.raidfuse/dev*/slot | head -n1)
	dev=$(basename "$(dirname "$dev")")
	[ -n "$dev" ] || fail "round $i: no member in role 1"
	outcome=$(race mnt/.raidfuse/new_dev "$WORK/s$i-a" "mnt/.raidfuse/$dev/replace_with" "$WORK/s$i-b")
	log "round $i: add | replace: $outcome"
	status_sane mnt "round $i"
	n_paths=$(cat mnt/.raidfuse/dev*/path | sort | uniq | wc -l)
	n_devs=$(ls -d mnt/.raidfuse/dev* | wc -l)
	[ "$n_paths" = "$n_devs" ] || fail "round $i: $n_devs members but $n_paths distinct paths"
	grep -q "(null)" mnt/.raidfuse/dev*/path && fail "round $i: a member without a path"
	[ "$(grep -c . <<<"$(grep -lx in_sync mnt/.raidfuse/dev*/state)")" -ge 3 ] ||
		fail "round $i: fewer than 3 members in sync"
	"$R" wait mnt >/dev/null || fail "round $i: wait"
	# Back to three members in sync, from m0, m1, m2 or their copies.
	for d in mnt/.raidfuse/dev*; do
		case $(cat "$d/state") in
		faulty* | spare*) echo remove >"$d/state" 2>/dev/null || true ;;
		esac
	done
	"$R" wait mnt >/dev/null || fail "round $i: wait after remove"
done
[ "$(sha256sum <mnt/volume.img)" = "$sha_before" ] || fail "volume changed by the adds and replaces"
# The log is well over 4 KiB by now; tail(1) trusts the size a file
# reports, which was 4096 for every control file whatever its length.
[ "$(wc -c <mnt/.raidfuse/log)" -gt 4096 ] || fail "the log is shorter than expected"
[ "$(tail -n 3 mnt/.raidfuse/log)" = "$(cat mnt/.raidfuse/log | tail -n 3)" ] ||
	fail "tail of the log reads other lines than cat: $(tail -n 3 mnt/.raidfuse/log)"

# 2. check and add at once: one sync thread at a time, each start answered.
truncate -s 32M racer
echo 2000 >mnt/.raidfuse/sync_speed_max
outcome=$(race mnt/.raidfuse/sync_action check mnt/.raidfuse/new_dev "$WORK/racer")
log "check | add: $outcome"
status_sane mnt "check and add"
echo 1000000 >mnt/.raidfuse/sync_speed_max
"$R" wait mnt >/dev/null || fail "wait after check and add"
echo idle >mnt/.raidfuse/sync_action 2>/dev/null || true
rf_umount mnt

# spare_in_sync DEV WHAT: mnt's DEV is in sync within 30 s, or fail WHAT.
spare_in_sync() {
	local i
	for i in $(seq 150); do
		grep -q in_sync "mnt/.raidfuse/$1/state" && return 0
		sleep 0.2
	done
	fail "$2: $(cat "mnt/.raidfuse/$1/state"); $(tail -n 5 <mnt/.raidfuse/log)"
}

# 3. A member fails while a check runs; a spare waits: it must be rebuilt
# once the check stops, as when no check runs.
"$R" create --level 5 --raid-devices 3 --chunk 64K --size 64M q0 q1 q2 >/dev/null ||
	fail "create q"
truncate -s 64M q3
rf_mount q0 q1 q2 mnt
dd if=/dev/urandom of=mnt/volume.img bs=1M count=$(($(stat -c %s mnt/volume.img) >> 20)) \
	conv=notrunc,fsync status=none || fail "fill q"
sha_q=$(sha256sum <mnt/volume.img)
"$R" add mnt q3 >/dev/null || fail "add the spare q3"
dev3=$(dev_of mnt q3) || fail "no devN for q3"
grep -q spare "mnt/.raidfuse/$dev3/state" || fail "q3 is not a spare: $(cat "mnt/.raidfuse/$dev3/state")"
echo 3000 >mnt/.raidfuse/sync_speed_max
"$R" check mnt >/dev/null || fail "start the check"
sleep 1
grep -q check mnt/.raidfuse/sync_action || fail "no check running: $(cat mnt/.raidfuse/sync_action)"
"$R" fail mnt q1 >/dev/null || fail "fail q1 during the check"
# Then the rebuild onto the spare (still slow): a check asked for now is
# refused for it (md: EBUSY), not for the redundancy it has yet to restore.
for i in $(seq 100); do
	grep -qx recover mnt/.raidfuse/sync_action && break
	sleep 0.1
done
grep -qx recover mnt/.raidfuse/sync_action || fail "no rebuild after the check: $(cat mnt/.raidfuse/sync_action)"
"$R" check mnt >check.out 2>&1 && fail "a check started during the rebuild"
grep -q "another check, repair or rebuild is running" check.out || fail "check during the rebuild: $(cat check.out)"
echo 1000000 >mnt/.raidfuse/sync_speed_max
spare_in_sync "$dev3" "the spare was not rebuilt after the check stopped"
[ "$(sha256sum <mnt/volume.img)" = "$sha_q" ] || fail "volume changed across the rebuild"
rf_umount mnt
mism=$("$R" verify q0 q3 q2 | sed -n 's/^mismatch_cnt: *//p')
[ "$mism" = 0 ] || fail "the rebuilt spare disagrees with parity: mismatch_cnt ${mism:-?}"

# 3b. mismatch_cnt stays through a rebuild (md zeroes it when a check,
# repair or resync starts, not a recovery). Then a member fails during a
# check stopped by hand (echo idle): the waiting spare starts at once, as
# md's md_check_recovery does after idle, not at the next mount.
"$R" create --level 5 --raid-devices 3 --chunk 64K --size 64M r0 r1 r2 >/dev/null ||
	fail "create r"
truncate -s 64M r3 r4
# 4 KiB of r2's data changed behind the array's back: one mismatch.
head -c 4096 /dev/urandom | dd of=r2 bs=4096 seek=$((32 * 256)) conv=notrunc status=none
rf_mount r0 r1 r2 mnt
"$R" check mnt >/dev/null || fail "r: check"
"$R" wait mnt >/dev/null || fail "r: wait for the check"
mism=$(cat mnt/.raidfuse/mismatch_cnt)
[ "$mism" -gt 0 ] || fail "r: no mismatch found in a changed member"
"$R" add mnt r3 >/dev/null || fail "r: add the spare r3"
"$R" fail mnt r0 >/dev/null || fail "r: fail r0"
"$R" wait mnt >/dev/null || fail "r: wait for the rebuild onto r3"
grep -q in_sync "mnt/.raidfuse/$(dev_of mnt r3)/state" || fail "r: r3 not rebuilt"
[ "$(cat mnt/.raidfuse/mismatch_cnt)" = "$mism" ] ||
	fail "r: mismatch_cnt $mism of the check read $(cat mnt/.raidfuse/mismatch_cnt) after the rebuild"
"$R" remove mnt r0 >/dev/null || fail "r: remove r0"
"$R" add mnt r4 >/dev/null || fail "r: add the spare r4"
dev4=$(dev_of mnt r4) || fail "no devN for r4"
grep -q spare "mnt/.raidfuse/$dev4/state" || fail "r4 is not a spare: $(cat "mnt/.raidfuse/$dev4/state")"
# At 1 KiB/s the check sleeps about a minute after its first 64 KiB unit:
# the idle lands before it could notice the failure itself (it would then
# go on to the rebuild on its own, as section 3 has it).
echo 1 >mnt/.raidfuse/sync_speed_min # or the floor (1000) wins, as in md
echo 1 >mnt/.raidfuse/sync_speed_max
"$R" check mnt >/dev/null || fail "r: start the slow check"
sleep 1
"$R" fail mnt r1 >/dev/null || fail "r: fail r1 during the check"
echo idle >mnt/.raidfuse/sync_action ||
	fail "r: idle refused while sync_action is $(cat mnt/.raidfuse/sync_action); log: $(tail -n 8 mnt/.raidfuse/log)"
echo 1000000 >mnt/.raidfuse/sync_speed_max
spare_in_sync "$dev4" "the spare was not rebuilt after the check was stopped by hand"
rf_umount mnt

# 3c. The same under parity-first, where no row's parity is on a data
# role: the check stops when the member fails (md's MD_RECOVERY_INTR), it
# does not run on to the end, comparing parity with data rebuilt from it,
# while the spare waits.
"$R" create --level 5 --raid-devices 4 --layout parity-first --chunk 64K --size 32M \
	pf0 pf1 pf2 pf3 >/dev/null || fail "create parity-first"
truncate -s 32M pf4
rf_mount pf0 pf1 pf2 pf3 mnt
"$R" add mnt pf4 >/dev/null || fail "pf: add the spare"
devpf=$(dev_of mnt pf4) || fail "no devN for pf4"
echo 1 >mnt/.raidfuse/sync_speed_min
echo 200 >mnt/.raidfuse/sync_speed_max
"$R" check mnt >/dev/null || fail "pf: start the slow check"
sleep 1
"$R" fail mnt pf1 >/dev/null || fail "pf: fail pf1 during the check"
for i in $(seq 50); do
	grep -qx check mnt/.raidfuse/sync_action || break
	sleep 0.2
done
grep -qx check mnt/.raidfuse/sync_action &&
	fail "pf: the check runs on 10 s after a member failed: $(cat mnt/.raidfuse/sync_completed)"
echo 1000000 >mnt/.raidfuse/sync_speed_max
spare_in_sync "$devpf" "pf: the spare was not rebuilt after the check stopped"
rf_umount mnt

# 4. raidfuse umount of a mount whose daemon was killed: detached, and
# said so with exit 1 (it exited 0, as after a clean stop).
rf_mount q0 q3 q2 mnt
# A path the daemon would refuse without logging why: the CLI says what is
# wrong, not the last, unrelated, line of the log.
long_path=/$(head -c 5000 /dev/zero | tr '\0' a)
"$R" add mnt "$long_path" >add.out 2>&1 && fail "add of a 5000-byte path exited 0"
grep -q "too long" add.out || fail "add of a 5000-byte path: $(cut -c1-200 add.out)"
# Text the control files must refuse: a NUL byte (the parsers took the
# prefix before it), fault rates that are NaN or round to 0 ppm (which
# means every request), a fault range past 2^64.
dev0=$(dev_of mnt q0) || fail "no devN for q0"
python3 - mnt/.raidfuse "$dev0" <<'PY' || fail "control files took text they must refuse"
import os, sys
ctl, dev = sys.argv[1], sys.argv[2]
bad = [("sync_speed_max", b"5000\0garbage"), ("sync_action", b"check\0junk"),
       (dev + "/fault", b"rate=nan"), (dev + "/fault", b"rate=0.0000001"),
       (dev + "/fault", b"read-error range=18446744073709551615+2")]
for name, text in bad:
    fd = os.open(os.path.join(ctl, name), os.O_WRONLY)
    try:
        os.write(fd, text)
        print(f"{name} took {text!r}", file=sys.stderr)
        sys.exit(1)
    except OSError as e:
        assert e.errno == 22, f"{name} {text!r}: {e}"
    finally:
        os.close(fd)
PY
grep -qx idle mnt/.raidfuse/sync_action || fail "a refused sync_action write started something"
# A member directory has the one name readdir lists: dev0 is not also
# dev00, dev+0, dev-0 or "dev 0" (strtol's spellings), nor dev1 dev01.
for n in dev00 dev+0 dev-0 "dev 0" dev01; do
	[ -e "mnt/.raidfuse/$n" ] && fail "mnt/.raidfuse/$n resolves; readdir lists $(ls mnt/.raidfuse | grep dev | tr '\n' ' ')"
done
[ -d mnt/.raidfuse/dev0 ] || fail "mnt/.raidfuse/dev0 does not resolve"
dd if=/dev/urandom of=mnt/volume.img bs=64K count=4 conv=notrunc status=none || fail "write q"
kill -9 "$(cat mnt/.raidfuse/pid)" || fail "kill the daemon"
sleep 0.3
# A verb on the dead mount says the daemon is gone and what to run, not
# that mnt is no raidfuse mount (which mount then contradicts).
"$R" status mnt >status.out 2>&1 && fail "status of a mount whose daemon was killed exited 0"
grep -q "gone" status.out && grep -q "raidfuse umount" status.out ||
	fail "status of a mount whose daemon was killed: $(cat status.out)"
"$R" umount mnt >umount.out 2>&1 && fail "umount after the daemon was killed exited 0: $(cat umount.out)"
grep -q "was gone" umount.out || fail "umount does not say the daemon was gone: $(cat umount.out)"
mountpoint -q mnt && fail "mnt is still mounted after raidfuse umount"
log "PASS"
