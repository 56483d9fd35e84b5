#!/bin/bash
# events.sh - `mount --program`: the administrator's program is run for
# array events, as mdadm --monitor runs its PROGRAM (EVENT ARRAY [MEMBER],
# mdadm's event names), one at a time and in order:
#  * a program that is missing or not executable, or --test without a
#    program, is refused before any member changes;
#  * NewArray and TestMessage at mount, DeviceDisappeared at unmount;
#  * Fail for a member failed by an I/O error and for `raidfuse fail`;
#  * RebuildStarted, Rebuild20..80, RebuildFinished and SpareActive, in
#    that order, for a rebuild onto an added member, naming it
#    (RAIDFUSE_MEMBER);
#  * the Rebuild events have no third argument, as mdadm's; RebuildFinished
#    of a check that found mismatches has mdadm's " mismatches found: N (on
#    raid level L)" there;
#  * DegradedArray for an array started with a member missing, and a
#    resync after an unclean stop reported as RebuildStarted/Finished;
#  * a replace that ends: Fail for the member it copied;
#  * a program that fails is logged; one that hangs delays no I/O and is
#    killed when the array stops, which still ends promptly.
. "$(dirname "$0")/lib.sh"
require_fuse

cd "$WORK"
EVENTS=$WORK/events.log
cat >prog.sh <<EOF
#!/bin/sh
# One line per run: the argument count, the arguments, the environment.
echo "\$# \$1|\$2|\${3-}|\$RAIDFUSE_EVENT|\$RAIDFUSE_ARRAY|\$RAIDFUSE_MEMBER|\$RAIDFUSE_MESSAGE" >>"$EVENTS"
case "\$1" in
Fail) if [ -e "$WORK/hang" ]; then sleep 301 & wait; fi ;;
TestMessage) exit 3 ;;
DeviceDisappeared) grep '^SigIgn:' /proc/self/status >"$WORK/sigign" ;;
esac
exit 0
EOF
chmod +x prog.sh

# wait_event PATTERN [SECONDS]: until a line of the events log matches.
wait_event() {
	local i
	for ((i = 0; i < ${2:-20} * 10; i++)); do
		grep -qE "$1" "$EVENTS" 2>/dev/null && return 0
		sleep 0.1
	done
	fail "no event matching '$1' within ${2:-20} s; events: $(cat "$EVENTS" 2>/dev/null)"
}
# The event names in the log, in order, one line.
event_names() { cut -d'|' -f1 "$EVENTS" | sed 's/^[0-9]* //' | tr '\n' ' '; }

"$RAIDFUSE" create --level 5 --raid-devices 4 --chunk 64K --size 40M m0 m1 m2 m3 >/dev/null ||
	fail create
mkdir -p mnt
MNT=$(cd mnt && pwd)

# 1. Refusals: nothing changes, the error names the program.
before=$(hash_files m0 m1 m2 m3)
touch not-exec
for bad in "--program $WORK/no-such-program" "--program $WORK/not-exec" "--test"; do
	# shellcheck disable=SC2086 # the options are split on purpose
	if "$RAIDFUSE" mount $bad m0 m1 m2 m3 mnt 2>err; then
		"$RAIDFUSE" umount mnt
		fail "mount $bad was accepted"
	fi
	case $bad in
	--test) grep -q -- "--program" err || fail "--test alone: unclear error: $(cat err)" ;;
	*) grep -q "${bad#--program }" err || fail "mount $bad: the error does not name it: $(cat err)" ;;
	esac
done
[ "$before" = "$(hash_files m0 m1 m2 m3)" ] || fail "a refused mount changed a member"
! grep -qs " $MNT " /proc/mounts || fail "a refused mount left a mount behind"
log "ok: a missing or non-executable program, or --test alone, is refused; no member changed"

# 2. Mount, test message, failures, rebuild, check, unmount.
rf_mount --program ./prog.sh --test m0 m1 m2 m3 mnt
wait_event "^2 TestMessage\|$MNT\|\|TestMessage\|$MNT\|\|"
[ "$(event_names)" = "NewArray TestMessage " ] || fail "events at mount: $(event_names)"
grep -q "^2 NewArray|$MNT||NewArray|$MNT||array mounted at $MNT" "$EVENTS" ||
	fail "NewArray line: $(head -1 "$EVENTS")"
wait_event . 1
for ((i = 0; i < 50; i++)); do
	grep -q "exited with status 3" mnt/.raidfuse/log && break
	sleep 0.1
done
grep -q "event program .*prog.sh (TestMessage) exited with status 3" mnt/.raidfuse/log ||
	fail "a failing program is not logged: $(cat mnt/.raidfuse/log)"

dd if=/dev/urandom of=ref bs=1M count=24 status=none
dd if=ref of=mnt/volume.img bs=1M conv=notrunc,fsync status=none
echo write-error >mnt/.raidfuse/dev2/fault
dd if=ref of=mnt/volume.img bs=1M count=4 conv=notrunc,fsync status=none ||
	fail "a write with one member failing should succeed (degraded)"
wait_event "^3 Fail\|$MNT\|$WORK/m2\|Fail\|$MNT\|$WORK/m2\|member $WORK/m2 \(role 2\) failed on write"
log "ok: NewArray, TestMessage (its exit status 3 logged), Fail for a write error naming m2"

"$RAIDFUSE" remove mnt dev2 || fail "remove dev2"
truncate -s 40M m4
: >"$EVENTS"
"$RAIDFUSE" add mnt "$WORK/m4" || fail "add m4"
wait_event "^3 SpareActive\|$MNT\|$WORK/m4\|" 60
expected="RebuildStarted Rebuild20 Rebuild40 Rebuild60 Rebuild80 RebuildFinished SpareActive "
[ "$(event_names)" = "$expected" ] || fail "rebuild events: '$(event_names)', expected '$expected'"
[ "$(grep -c "|$WORK/m4|" "$EVENTS")" = 7 ] || fail "rebuild events do not all name m4: $(cat "$EVENTS")"
grep -q "^2 RebuildFinished|.*|raid5 recover of role 2: done$" "$EVENTS" ||
	fail "RebuildFinished message: $(grep RebuildFinished "$EVENTS")"
# As mdadm: no third argument for the Rebuild events (a script takes one
# there for mismatches); the member is in RAIDFUSE_MEMBER.
[ "$(grep -c "^2 Rebuild[A-Za-z0-9]*|$MNT||" "$EVENTS")" = 6 ] ||
	fail "rebuild events with a third argument: $(grep Rebuild "$EVENTS")"
cmp <(head -c 24M mnt/volume.img) ref || fail "data after the rebuild"
log "ok: a rebuild reports RebuildStarted, Rebuild20-80, RebuildFinished, SpareActive, naming m4"

: >"$EVENTS"
echo "corrupt=1M+64K" >mnt/.raidfuse/dev1/fault
echo check >mnt/.raidfuse/sync_action
wait_event "^3 RebuildFinished\|" 60
echo clear >mnt/.raidfuse/dev1/fault
mismatch=$(cat mnt/.raidfuse/mismatch_cnt)
[ "$mismatch" -gt 0 ] || fail "the corrupted check found no mismatch"
grep -q "^3 RebuildFinished|$MNT| mismatches found: $mismatch (on raid level 5)|.*raid5 check: done, mismatch_cnt $mismatch$" "$EVENTS" ||
	fail "check's RebuildFinished: $(grep RebuildFinished "$EVENTS"), mismatch_cnt $mismatch"
[ "$(event_names)" = "RebuildStarted Rebuild20 Rebuild40 Rebuild60 Rebuild80 RebuildFinished " ] ||
	fail "check events: $(event_names)"
echo repair >mnt/.raidfuse/sync_action
while [ "$(cat mnt/.raidfuse/sync_action)" != idle ]; do sleep 0.1; done

"$RAIDFUSE" fail mnt "$WORK/m0" || fail "raidfuse fail m0"
wait_event "^3 Fail\|$MNT\|$WORK/m0\|.*set faulty"
log "ok: a check's RebuildFinished carries mismatch_cnt $mismatch; raidfuse fail gives Fail naming m0"

: >"$EVENTS"
rf_umount mnt
wait_event "^2 DeviceDisappeared\|$MNT\|\|.*array at $MNT stopped$"
# The daemon ignores SIGTERM, SIGINT and SIGHUP while it stops; the
# program must not inherit that.
ign=$(awk '{print $2}' "$WORK/sigign")
[ $((0x$ign & 0x4003)) = 0 ] || fail "the program at stop runs with signals ignored (SigIgn $ign)"
log "ok: DeviceDisappeared at unmount, with default signals"

# 3. Degraded start (m0 was failed), then an unclean stop: the resync.
: >"$EVENTS"
rf_mount --run --program "$WORK/prog.sh" m1 m3 m4 mnt
wait_event "^2 DegradedArray\|$MNT\|\|.*raid5 array runs degraded: 1 of 4 roles missing"
[ "$(event_names)" = "NewArray DegradedArray " ] || fail "degraded mount events: $(event_names)"
cmp <(head -c 24M mnt/volume.img) ref || fail "degraded data"
truncate -s 40M m5
"$RAIDFUSE" add mnt "$WORK/m5" || fail "add m5"
wait_event "^3 SpareActive\|$MNT\|$WORK/m5\|" 60
dd if=ref of=mnt/volume.img bs=1M count=2 skip=8 seek=8 conv=notrunc status=none
pid=$(cat mnt/.raidfuse/pid)
kill -9 "$pid"
for ((i = 0; i < 50; i++)); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
fusermount3 -u mnt 2>/dev/null || umount -l mnt 2>/dev/null || true
: >"$EVENTS"
rf_mount --program "$WORK/prog.sh" m1 m3 m4 m5 mnt
wait_event "^2 RebuildFinished\|$MNT\|\|.*resync after the unclean stop: done"
[ "$(event_names)" = "NewArray RebuildStarted RebuildFinished " ] ||
	fail "events after an unclean stop: $(event_names)"
grep -q "^2 RebuildStarted|.*not stopped cleanly: resyncing the [0-9]* of [0-9]* regions" "$EVENTS" ||
	fail "resync RebuildStarted: $(grep RebuildStarted "$EVENTS")"
cmp <(head -c 24M mnt/volume.img) ref || fail "data after the resync"
log "ok: DegradedArray at a degraded start; a resync after SIGKILL is RebuildStarted/RebuildFinished"

# A replace that ends makes the copied member faulty: Fail, as md's
# marking it faulty gives under mdadm --monitor, after SpareActive.
: >"$EVENTS"
truncate -s 40M m6
"$RAIDFUSE" replace mnt "$WORK/m1" "$WORK/m6" >/dev/null || fail "replace m1 with m6"
wait_event "^3 Fail\|$MNT\|$WORK/m1\|" 60
[ "$(event_names)" = "RebuildStarted Rebuild20 Rebuild40 Rebuild60 Rebuild80 RebuildFinished SpareActive Fail " ] ||
	fail "replace events: $(event_names)"
grep -q "^3 Fail|$MNT|$WORK/m1|Fail|$MNT|$WORK/m1|.*m6 replaced .*m1, which is now faulty" "$EVENTS" ||
	fail "replace's Fail: $(grep Fail "$EVENTS")"
log "ok: a replace that ends reports Fail for the member it copied"

# 4. A program that hangs: writes go on, the stop kills it and ends.
touch hang
"$RAIDFUSE" fail mnt "$WORK/m3" || fail "fail m3"
wait_event "^3 Fail\|$MNT\|$WORK/m3\|"
dd if=ref of=mnt/volume.img bs=1M conv=notrunc,fsync status=none ||
	fail "writes stalled or failed behind a hanging event program"
cmp <(head -c 24M mnt/volume.img) ref || fail "data with the program hanging"
start=$(date +%s)
pid=$(cat mnt/.raidfuse/pid)
rf_umount mnt
for ((i = 0; i < 300; i++)); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
! kill -0 "$pid" 2>/dev/null || fail "the daemon still runs 30 s after unmount (hanging program)"
took=$(($(date +%s) - start))
[ "$took" -le 20 ] || fail "the stop took $took s with a hanging program"
pgrep -f "sleep 301" >/dev/null && { pkill -f "sleep 301"; fail "what the hanging program started was left running"; }
log "ok: a hanging program delays no write; the stop kills it, and what it started, in $took s"
log "PASS"
