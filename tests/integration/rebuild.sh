#!/bin/bash
# rebuild.sh - adding members to a mounted, degraded array: the rebuild
# runs in the background while a writer keeps going, the data stays right,
# parity is consistent after it, a rebuild killed with SIGKILL resumes from
# its recovery_offset, a spare takes over when a member fails, a replaced
# member is refused, and every redundant level rebuilds.
. "$(dirname "$0")/lib.sh"
require_fuse
require_cmd mdadm fio

cd "$WORK"
dd if=/dev/urandom of=ref bs=1M count=40 status=none

volume_has_ref() { # MNT: the first 40 MiB equal ref
	cmp <(head -c 40M "$1/volume.img") ref >/dev/null
}

wait_idle() { # MNT
	"$RAIDFUSE" wait "$1" >wait.out || fail "raidfuse wait: $(cat wait.out)"
	grep -q "^done: mismatch_cnt" wait.out || fail "wait did not finish: $(cat wait.out)"
}

# RAID10 far and offset copies put a member's bytes out of volume order:
# the rebuild walks the member in order all the same.
for spec in "5 4" "6 5" "1 2" "10 4" "10 4 f2" "10 3 o2"; do
	set -- $spec
	level=$1 n=$2 layout=${3:-}
	dir=raid$level$layout
	mkdir -p "$dir"
	members=()
	for ((i = 0; i < n; i++)); do members+=("$dir/m$i"); done
	layout_opts=()
	[ -n "$layout" ] && layout_opts=(--layout "$layout")
	# 1 MiB bitmap regions, as the re-add below uses.
	"$RAIDFUSE" create --level "$level" --raid-devices "$n" --chunk 64K --size 48M \
		"${layout_opts[@]}" --bitmap-chunk 1M "${members[@]}" >/dev/null ||
		fail "raid$level$layout: create"
	rf_mount "${members[@]}" "$dir/mnt"
	if [ "$level" = 5 ]; then
		"$RAIDFUSE" wait "$dir/mnt" >wait.out 2>&1 &&
			fail "wait with nothing run since the mount exited 0: $(cat wait.out)"
		grep -q "nothing to wait for" wait.out || fail "wait with nothing to wait for: $(cat wait.out)"
	fi
	dd if=ref of="$dir/mnt/volume.img" bs=1M conv=notrunc,fsync status=none
	vol=$(stat -c %s "$dir/mnt/volume.img")

	# A writer with verification keeps going through fail, remove, add.
	fio --name=bg --filename="$dir/mnt/volume.img" --offset=41M --size=$((vol / 1048576 - 42))M \
		--rw=randwrite --bs=4k-64k --ioengine=psync --verify=crc32c --verify_fatal=1 \
		--do_verify=1 --verify_state_save=0 --loops=4 \
		--output="$WORK/fio-$level.out" >/dev/null 2>&1 &
	fio_pid=$!
	sleep 0.5
	"$RAIDFUSE" fail "$dir/mnt" "$dir/m1" || fail "raid$level$layout: fail m1"
	"$RAIDFUSE" remove "$dir/mnt" "$dir/m1" || fail "raid$level$layout: remove m1"
	grep -q '"degraded":1' <("$RAIDFUSE" status --json "$dir/mnt") ||
		fail "raid$level$layout: status does not say degraded after fail"
	truncate -s 48M "$dir/new1"
	"$RAIDFUSE" add "$dir/mnt" "$dir/new1" || fail "raid$level$layout: add"
	wait "$fio_pid" || fail "raid$level$layout: the writer saw errors during fail/remove/add: $(cat "$WORK/fio-$level.out")"
	wait_idle "$dir/mnt"
	grep -q "recovery of role 1 onto .*new1 finished" "$dir/mnt/.raidfuse/log" ||
		fail "raid$level$layout: no finished rebuild in the log: $(cat "$dir/mnt/.raidfuse/log")"
	grep -q '"degraded":0' <("$RAIDFUSE" status --json "$dir/mnt") ||
		fail "raid$level$layout: still degraded after the rebuild"
	volume_has_ref "$dir/mnt" || fail "raid$level$layout: data changed across the rebuild"
	rf_umount "$dir/mnt"
	rebuilt=("${members[@]}")
	rebuilt[1]=$dir/new1
	"$RAIDFUSE" verify "${rebuilt[@]}" | grep -q "mismatch_cnt: 0" ||
		fail "raid$level$layout: redundancy inconsistent after the rebuild"
	mdadm --examine "$dir/new1" | grep -q "Active device 1" ||
		fail "raid$level$layout: mdadm does not see the new member as device 1"
	# The old member was replaced: adding it back is refused.
	rf_mount "${rebuilt[@]}" "$dir/mnt"
	if "$RAIDFUSE" add "$dir/mnt" "$dir/m1" 2>add.err; then
		fail "raid$level$layout: the replaced member was taken back"
	fi
	grep -q "replaced" add.err || fail "raid$level$layout: refusal does not say replaced: $(cat add.err)"
	volume_has_ref "$dir/mnt" || fail "raid$level$layout: data wrong after remount"
	rf_umount "$dir/mnt"
	log "ok: raid$level$layout: fail, remove, add with a writer running; rebuilt, verified, replaced member refused"
done

# A rebuild killed with SIGKILL resumes from its recovery_offset.
# rebuild_killed MNT OLD NEW MEMBER...: mount MEMBER..., fail and remove
# OLD, add NEW, let the rebuild run 3 s, then kill the daemon with SIGKILL.
rebuild_killed() {
	local mnt=$1 old=$2 new=$3
	shift 3
	rf_mount "$@" "$mnt"
	"$RAIDFUSE" fail "$mnt" "$old" && "$RAIDFUSE" remove "$mnt" "$old" || fail "fail $old"
	echo 6000 >"$mnt/.raidfuse/sync_speed_max" || fail "set sync_speed_max"
	truncate -s 48M "$new"
	"$RAIDFUSE" add "$mnt" "$new" || fail "add $new"
	# The member lines show the role missing and the member rebuilt
	# for it, with its progress (not only "missing").
	local shown=0
	for _ in $(seq 50); do
		grep -qE "^member [0-9]+: /[^ ]*/${new##*/} rebuilding [0-9.]+% read_bytes=[0-9]+ written_bytes=[0-9]+\$" \
			"$mnt/.raidfuse/status" && { shown=1; break; }
		sleep 0.1
	done
	[ $shown = 1 ] && grep -qE "^member [0-9]+: missing\$" "$mnt/.raidfuse/status" ||
		fail "status does not show $new rebuilding a missing role: $(grep '^member' "$mnt/.raidfuse/status")"
	# devN in md's sysfs words: a member being rebuilt is a spare that
	# holds its role (slot), with the sector its recovery has reached.
	local dev
	dev=$(dev_of "$mnt" "$new") || fail "$new has no devN directory"
	[ "$(cat "$mnt/.raidfuse/$dev/state")" = spare ] ||
		fail "$new being rebuilt: devN/state is $(cat "$mnt/.raidfuse/$dev/state"), md says spare"
	grep -qx "[0-9]" "$mnt/.raidfuse/$dev/slot" ||
		fail "$new being rebuilt: devN/slot is $(cat "$mnt/.raidfuse/$dev/slot"), not its role"
	local start1 start2
	start1=$(cat "$mnt/.raidfuse/$dev/recovery_start")
	sleep 0.5
	start2=$(cat "$mnt/.raidfuse/$dev/recovery_start")
	[[ $start1 =~ ^[0-9]+$ ]] && [[ $start2 =~ ^[0-9]+$ ]] && [ "$start2" -gt "$start1" ] ||
		fail "$new being rebuilt: recovery_start went $start1 then $start2, not up"
	sleep 3
	kill -9 "$(cat "$mnt/.raidfuse/pid")"
	sleep 0.3
	fusermount3 -u -z "$mnt"
}

# resume_after_kill TAG [MOUNT OPTION...] -- MEMBER... MNT: mount again
# after rebuild_killed; the rebuild must resume from its checkpoint and
# end with the data and the redundancy intact.
resume_after_kill() {
	local tag=$1 opts=() members mnt
	shift
	while [ "$1" != -- ]; do
		opts+=("$1")
		shift
	done
	shift
	mnt=${*: -1}
	members=("${@:1:$#-1}")
	"$RAIDFUSE" mount "${opts[@]}" "${members[@]}" "$mnt" 2>resume.err ||
		fail "$tag: mount ${opts[*]} after the kill: $(cat resume.err)"
	track_mount "$mnt"
	grep -q "recovery onto it stopped at [1-9][0-9]* MiB; it resumes" resume.err ||
		fail "$tag: the rebuild did not resume from its checkpoint: $(cat resume.err)"
	# The daemon answers only once the resumed rebuild has begun: wait
	# sees it, and ends with it.
	wait_idle "$mnt"
	grep -q "recovery of role [0-9]* onto .* finished" "$mnt/.raidfuse/log" ||
		fail "$tag: wait ended before the resumed rebuild did: $(cat "$mnt/.raidfuse/log")"
	volume_has_ref "$mnt" || fail "$tag: data wrong after a resumed rebuild"
	rf_umount "$mnt"
	"$RAIDFUSE" verify "${members[@]}" | grep -q "mismatch_cnt: 0" ||
		fail "$tag: redundancy inconsistent after a resumed rebuild"
}

dir=raid5
rebuild_killed "$dir/mnt" "$dir/m2" "$dir/new2" "$dir/m0" "$dir/new1" "$dir/m2" "$dir/m3"
offset=$(mdadm --examine "$dir/new2" | sed -n 's/^ *Recovery Offset : \([0-9]*\) sectors.*/\1/p')
[ -n "$offset" ] && [ "$offset" -gt 0 ] || fail "no recovery_offset checkpoint in new2 (got '$offset')"
"$RAIDFUSE" mount "$dir/m0" "$dir/new1" "$dir/new2" "$dir/m3" "$dir/mnt" 2>/dev/null &&
	fail "a dirty array with a member still rebuilding started without --force"
resume_after_kill raid5 --force -- "$dir/m0" "$dir/new1" "$dir/new2" "$dir/m3" "$dir/mnt"
log "ok: a rebuild killed at sector $offset resumed after remount and completed"

# RAID1 has no parity, so no write hole: killed during a rebuild, it starts
# again without --force (as md does) and the rebuild resumes.
d1=raid1
rebuild_killed "$d1/mnt" "$d1/new1" "$d1/new1b" "$d1/m0" "$d1/new1"
resume_after_kill raid1 -- "$d1/m0" "$d1/new1b" "$d1/mnt"
log "ok: raid1 killed during a rebuild restarts without --force and completes"

# RAID10 with far copies likewise, its checkpoint a member offset (md's
# recovery_offset) that the volume does not reach in order.
d10=raid10f2
rebuild_killed "$d10/mnt" "$d10/new1" "$d10/new1b" "$d10/m0" "$d10/new1" "$d10/m2" "$d10/m3"
offset=$(mdadm --examine "$d10/new1b" | sed -n 's/^ *Recovery Offset : \([0-9]*\) sectors.*/\1/p')
[ -n "$offset" ] && [ "$offset" -gt 0 ] || fail "raid10 f2: no recovery_offset checkpoint (got '$offset')"
resume_after_kill "raid10 f2" -- "$d10/m0" "$d10/new1b" "$d10/m2" "$d10/m3" "$d10/mnt"
log "ok: raid10 f2 killed during a rebuild at sector $offset resumed and completed"

# A replace whose role has no other copy present (RAID10 n2, the partner
# failed and removed) copies from the member being replaced, as md does.
d10=raid10
rf_mount "$d10/m0" "$d10/new1" "$d10/m2" "$d10/m3" "$d10/mnt"
"$RAIDFUSE" fail "$d10/mnt" "$d10/new1" && "$RAIDFUSE" remove "$d10/mnt" "$d10/new1" ||
	fail "raid10: fail new1"
truncate -s 48M "$d10/copy0"
"$RAIDFUSE" replace "$d10/mnt" "$d10/m0" "$d10/copy0" || fail "raid10: replace m0 with its partner gone"
wait_idle "$d10/mnt"
grep -q "copy0 replaced .*m0, which is now faulty" "$d10/mnt/.raidfuse/log" ||
	fail "raid10: the replace did not finish: $(cat "$d10/mnt/.raidfuse/log")"
"$RAIDFUSE" remove "$d10/mnt" "$d10/m0" || fail "raid10: remove the replaced m0"
volume_has_ref "$d10/mnt" || fail "raid10: data wrong after a replace with the partner gone"
truncate -s 48M "$d10/new1c"
"$RAIDFUSE" add "$d10/mnt" "$d10/new1c" || fail "raid10: add new1c"
wait_idle "$d10/mnt"
rf_umount "$d10/mnt"
"$RAIDFUSE" verify "$d10/copy0" "$d10/new1c" "$d10/m2" "$d10/m3" | grep -q "mismatch_cnt: 0" ||
	fail "raid10: copies differ after the replace and rebuild"
log "ok: raid10: a replace with the partner copy gone read the member being replaced"

# Layouts md's own member-to-volume mapping does not cover (version-1
# offset layouts with far sets smaller than the copies): no online rebuild,
# and the array keeps serving degraded.
dx=raid10x
mkdir -p "$dx"
mx=()
for i in 0 1 2 3 4 5 6 7; do mx+=("$dx/m$i"); done
"$RAIDFUSE" create --level 10 --raid-devices 8 --chunk 64K --size 16M --layout $((0x30401)) \
	"${mx[@]}" >/dev/null || fail "raid10 0x30401: create"
rf_mount "${mx[@]}" "$dx/mnt"
head -c 4M ref | dd of="$dx/mnt/volume.img" conv=notrunc,fsync status=none
"$RAIDFUSE" fail "$dx/mnt" "$dx/m0" && "$RAIDFUSE" remove "$dx/mnt" "$dx/m0" || fail "0x30401: fail m0"
truncate -s 16M "$dx/new0"
"$RAIDFUSE" add "$dx/mnt" "$dx/new0" 2>add10.err && fail "0x30401: an online rebuild was offered"
grep -q "not supported" add10.err || fail "0x30401: the refusal does not say why: $(cat add10.err)"
cmp <(head -c 4M "$dx/mnt/volume.img") <(head -c 4M ref) || fail "0x30401: degraded data wrong"
rf_umount "$dx/mnt"
log "ok: raid10 layout 0x30401: online rebuild refused, the array serves degraded"

# A spare takes over when a member fails.
rf_mount "$dir/m0" "$dir/new1" "$dir/new2" "$dir/m3" "$dir/mnt"
truncate -s 48M "$dir/spare"
"$RAIDFUSE" add "$dir/mnt" "$dir/spare" || fail "add spare"
grep -q '"state":"spare"' <("$RAIDFUSE" status --json "$dir/mnt") || fail "spare not listed as spare"
"$RAIDFUSE" fail "$dir/mnt" "$dir/m3" || fail "fail m3"
wait_idle "$dir/mnt"
grep -q "recovery of role 3 onto .*spare finished" "$dir/mnt/.raidfuse/log" ||
	fail "the spare did not take over: $(cat "$dir/mnt/.raidfuse/log")"
volume_has_ref "$dir/mnt" || fail "data wrong after the spare took over"
rf_umount "$dir/mnt"
log "ok: a spare took over a failed member at once"
# replace: copy a member onto a new one while it keeps serving, writes
# going on; then the new one serves and the old one is refused back.
rf_mount "$dir/m0" "$dir/new1" "$dir/new2" "$dir/spare" "$dir/mnt"
# Slow enough (48 MiB in 6 s) that the checks below, the writes during
# the copy and the one behind it after a second, all see it running.
echo 8000 >"$dir/mnt/.raidfuse/sync_speed_max"
truncate -s 48M "$dir/copy"
"$RAIDFUSE" replace "$dir/mnt" "$dir/m0" "$dir/copy" || fail "replace"
# The copy starts in the sync thread, a moment after replace returns (as
# md's want_replacement does); give it up to 5 s to show.
shown=0
for _ in $(seq 50); do
	grep -q "(R)" "$dir/mnt/.raidfuse/status" && { shown=1; break; }
	sleep 0.1
done
[ $shown = 1 ] || fail "status does not show the replacement: $(cat "$dir/mnt/.raidfuse/status")"
# The member lines name both: the old one serving, the copy with its progress.
grep -qE "^member 0: /[^ ]*/m0 in_sync " "$dir/mnt/.raidfuse/status" &&
	grep -qE "^member 0: /[^ ]*/copy replacing [0-9.]+% read_bytes=[0-9]+ written_bytes=[0-9]+\$" \
		"$dir/mnt/.raidfuse/status" ||
	fail "the member lines do not show m0 serving and copy replacing it: $(grep '^member' "$dir/mnt/.raidfuse/status")"
old_dev=$(dev_of "$dir/mnt" "$dir/m0") && copy_dev=$(dev_of "$dir/mnt" "$dir/copy") ||
	fail "m0 or copy has no devN directory"
[ "$(cat "$dir/mnt/.raidfuse/$old_dev/state")" = in_sync,want_replacement ] &&
	[ "$(cat "$dir/mnt/.raidfuse/$copy_dev/state")" = spare,replacement ] &&
	[ "$(cat "$dir/mnt/.raidfuse/$copy_dev/slot")" = 0 ] ||
	fail "devN during a replace: m0 $(cat "$dir/mnt/.raidfuse/$old_dev/state"), copy" \
		"$(cat "$dir/mnt/.raidfuse/$copy_dev/state") in slot $(cat "$dir/mnt/.raidfuse/$copy_dev/slot")"
"$RAIDFUSE" status --json "$dir/mnt" >"$WORK/replace.json"
grep -q '"degraded":0' "$WORK/replace.json" || fail "degraded during a replace"
# status.json says what devN says: both in slot 0, the copy a replacement.
python3 - "$WORK/replace.json" "$old_dev" "$copy_dev" <<'PY' || fail "status.json during a replace: $(cat "$WORK/replace.json")"
import json, sys
members = json.load(open(sys.argv[1]))["members"]
old, copy = members[int(sys.argv[2][3:])], members[int(sys.argv[3][3:])]
assert old["slot"] == 0 and old["want_replacement"] and not old["replacement"], old
assert copy["slot"] == 0 and copy["replacement"] and not copy["want_replacement"], copy
PY
dd if=/dev/urandom of=late bs=1M count=2 status=none
dd if=late of="$dir/mnt/volume.img" bs=1M seek=50 conv=notrunc,fsync status=none || fail "write during replace"
# And one behind the copy: the first rows are copied by now, so this write
# must reach the replacement as well as the member it replaces.
sleep 1
copied=$(cut -d' ' -f1 "$dir/mnt/.raidfuse/sync_completed")
[ "${copied:-0}" -gt 4096 ] 2>/dev/null || fail "copy not past the first rows after 1 s: '$copied'"
dd if=/dev/urandom of=behind bs=1M count=1 status=none
dd if=behind of="$dir/mnt/volume.img" bs=1M seek=0 conv=notrunc,fsync status=none ||
	fail "write behind the copy"
dd if=behind of=ref bs=1M seek=0 conv=notrunc status=none
wait_idle "$dir/mnt"
grep -q "copy replaced .*m0, which is now faulty" "$dir/mnt/.raidfuse/log" ||
	fail "no replace in the log: $(cat "$dir/mnt/.raidfuse/log")"
"$RAIDFUSE" remove "$dir/mnt" "$dir/m0" || fail "remove the replaced member"
volume_has_ref "$dir/mnt" || fail "data wrong after replace"
cmp <(dd if="$dir/mnt/volume.img" bs=1M skip=50 count=2 status=none) late || fail "write during replace lost"
if "$RAIDFUSE" add "$dir/mnt" "$dir/m0" 2>add.err; then fail "the replaced member was taken back"; fi
grep -q replaced add.err || fail "refusal of the replaced member: $(cat add.err)"
rf_umount "$dir/mnt"
"$RAIDFUSE" verify "$dir/copy" "$dir/new1" "$dir/new2" "$dir/spare" | grep -q "mismatch_cnt: 0" ||
	fail "parity inconsistent after replace"
log "ok: replace copied a serving member under writes; the old one is refused back"

# A member back after a transient removal: only what the bitmap marks.
rf_mount "$dir/copy" "$dir/new1" "$dir/new2" "$dir/spare" "$dir/mnt"
sleep 6 # let the bitmap daemon clear the bits of the healthy array
"$RAIDFUSE" fail "$dir/mnt" "$dir/new2" && "$RAIDFUSE" remove "$dir/mnt" "$dir/new2" || fail "fail new2"
dd if=/dev/urandom of=away bs=1M count=2 status=none
dd if=away of="$dir/mnt/volume.img" bs=1M seek=44 conv=notrunc,fsync status=none
"$RAIDFUSE" add "$dir/mnt" "$dir/new2" || fail "re-add new2"
wait_idle "$dir/mnt"
regions=$(sed -n 's/.*re-added .*new2 to role [0-9]*: only the \([0-9]*\) regions the bitmap marks.*/\1/p' \
	"$dir/mnt/.raidfuse/log")
[ -n "$regions" ] && [ "$regions" -ge 1 ] && [ "$regions" -le 4 ] ||
	fail "re-add did not rebuild just the marked regions: $(cat "$dir/mnt/.raidfuse/log")"
written=$(python3 -c 'import json,sys
d=json.load(sys.stdin)
print([m["written_bytes"] for m in d["members"] if m["path"].endswith("/new2") and m["state"]=="in_sync"][0])' \
	< <("$RAIDFUSE" status --json "$dir/mnt"))
[ "$written" -le $((regions * 2 * 1048576)) ] ||
	fail "re-add wrote $written bytes, more than the $regions marked regions"
cmp <(dd if="$dir/mnt/volume.img" bs=1M skip=44 count=2 status=none) away || fail "data written while away"
volume_has_ref "$dir/mnt" || fail "data wrong after re-add"
rf_umount "$dir/mnt"
"$RAIDFUSE" verify "$dir/copy" "$dir/new1" "$dir/new2" "$dir/spare" | grep -q "mismatch_cnt: 0" ||
	fail "parity inconsistent after a re-add"
log "ok: a re-added member got only the $regions regions the bitmap marked ($written bytes)"
log "PASS"
