#!/bin/bash
# degraded.sh - degraded operation, stale members, too few members, and an
# unclean stop of a degraded array, on arrays made by `raidfuse create`.
#
# For raid5 (4 members), raid6 (5), raid1 (2) and raid10 (4): write a
# reference pattern, then for each member in turn (starting from the same
# snapshot of the members):
#   - mount without it (--run): the whole volume equals the model;
#     write a second region while degraded; umount;
#   - mount degraded again: both regions (the whole volume) are right;
#   - mount with ALL members: the left-out member is now stale; raidfuse
#     must leave it out with a warning naming it (and ask for --run), serve
#     the current data, and not write to the stale member;
#   - mdadm --examine shows the stale member's events behind the others.
# Then: too few members is refused naming the missing roles; a degraded
# mount of a dirty array (daemon killed with SIGKILL) is refused asking for
# --force without touching a member; mounting all members resyncs (a
# parity chunk corrupted on purpose is repaired).
. "$(dirname "$0")/lib.sh"

require_fuse
require_cmd mdadm cmp dd truncate fusermount3

T0=$SECONDS
MNT=$WORK/mnt
mkdir -p "$MNT"
track_mount "$MNT"
NCHECKS=0
ok() {
	NCHECKS=$((NCHECKS + 1))
	log "ok: $*"
}

MIB=1048576
OFF_A=$((MIB + 4096)) # reference region, not chunk aligned
LEN_A=$((20 * MIB))
OFF_B=$((40 * MIB + 12345)) # the region written while degraded
LEN_B=$((8 * MIB))
WINDOW=$((50 * MIB)) # covers both regions, the gap and margins
head -c $LEN_A /dev/urandom >"$WORK/refA" || fail "cannot read /dev/urandom"
head -c $LEN_B /dev/urandom >"$WORK/refB" || fail "cannot read /dev/urandom"

# mnt_refused LABEL EXPECT ARGS...: the mount must fail, mention EXPECT, mount nothing.
mnt_refused() {
	local label=$1 expect=$2 rc
	shift 2
	mnt_try "$WORK/mount.err" "$@" && rc=0 || rc=$?
	if mountpoint -q "$MNT"; then
		"$RAIDFUSE" umount "$MNT"
		fail "$label: the mount succeeded but must be refused"
	fi
	[ $rc != 0 ] || fail "$label: mount exited 0 without mounting"
	grep -qF -- "$expect" "$WORK/mount.err" ||
		fail "$label: the message does not mention '$expect': $(cat "$WORK/mount.err")"
	REFUSED_RC=$rc
}

# volume_is MODEL LABEL [BYTES]: the volume equals the model file (only
# its first BYTES when given; the whole volume, and its size, otherwise).
volume_is() {
	local model=$1 label=$2 bytes=${3:-} vs ms
	vs=$(stat -c %s "$MNT/volume.img") ms=$(stat -c %s "$model")
	[ "$vs" = "$ms" ] || fail "$label: volume.img is $vs bytes, expected $ms"
	# Large reads: cmp's 4 KiB reads make degraded reads needlessly slow.
	if [ -n "$bytes" ]; then
		cmp -n "$bytes" <(dd if="$MNT/volume.img" bs=1M count=$((bytes / MIB)) status=none) \
			"$model" >"$WORK/cmp.out" 2>&1
	else
		cmp <(dd if="$MNT/volume.img" bs=1M status=none) "$model" >"$WORK/cmp.out" 2>&1
	fi || fail "$label: volume.img differs from the expected data: $(cat "$WORK/cmp.out")"
}

status_has() {
	grep -qF -- "$2" "$MNT/.raidfuse/status" ||
		fail "$1: .raidfuse/status lacks '$2':
$(cat "$MNT/.raidfuse/status")"
}

# The [UU_U] text with role $2 of $1 members missing (none when $2 = -).
updown() {
	local n=$1 miss=$2 r s=""
	for ((r = 0; r < n; r++)); do
		if [ "$r" = "$miss" ]; then s+=_; else s+=U; fi
	done
	echo "[$s]"
}

snapshot() { # DIR: copy the members aside
	mkdir -p "$1/snap"
	cp --sparse=always "${MEMBERS[@]}" "$1/snap/" || fail "cannot snapshot the members"
}
restore() { # DIR
	local m
	for m in "${MEMBERS[@]}"; do
		cp --sparse=always "$1/snap/$(basename "$m")" "$m" || fail "cannot restore $m"
	done
}

# members_but ROLE...: MEMBERS without those roles, reversed order, in SEL.
members_but() {
	local r x out
	SEL=()
	for ((r = ${#MEMBERS[@]} - 1; r >= 0; r--)); do
		out=0
		for x in "$@"; do [ "$x" = "$r" ] && out=1; done
		[ $out = 1 ] || SEL+=("${MEMBERS[r]}")
	done
}

# kill_daemon: SIGKILL the daemon serving $MNT (sets pid), wait until it
# is gone, and take the dead mount away.
kill_daemon() {
	local i st
	pid=$(cat "$MNT/.raidfuse/pid") || fail "cannot read $MNT/.raidfuse/pid"
	[ -n "$pid" ] && tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -qF -- " $MNT" ||
		fail ".raidfuse/pid '$pid' is not the daemon serving $MNT"
	kill -9 "$pid"
	for ((i = 0; i < 250; i++)); do
		st=$(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null) || break
		[ "$st" = Z ] && break
		sleep 0.02
	done
	fusermount3 -u "$MNT" 2>/dev/null || umount -l "$MNT" || fail "cannot unmount the dead mount"
}

# setup_array LEVEL N: create, write refA, umount; sets DIR MEMBERS VSIZE
# and $DIR/model (the volume's expected content).
setup_array() {
	local level=$1 n=$2 r
	DIR=$WORK/raid$level
	mkdir -p "$DIR"
	MEMBERS=()
	for ((r = 0; r < n; r++)); do MEMBERS+=("$DIR/m$r.img"); done
	# No bitmap: the dirty-resync case below corrupts parity outside any
	# region written before the kill and expects the full resync of an
	# array without one (the bitmap has its own test, bitmap.sh).
	"$RAIDFUSE" create --level "$level" --raid-devices "$n" --chunk 64K --size 64M \
		--bitmap none --name "deg-raid$level" "${MEMBERS[@]}" >"$WORK/create.out" 2>&1 ||
		fail "raid$level: create failed: $(cat "$WORK/create.out")"
	mnt_ok "raid$level: first mount" "${MEMBERS[@]}"
	status_has "raid$level: first mount" "[$n/$n] $(updown "$n" -)"
	VSIZE=$(stat -c %s "$MNT/volume.img")
	[ "$VSIZE" -ge $((OFF_B + LEN_B)) ] || fail "raid$level: volume of $VSIZE bytes is too small"
	rm -f "$DIR/model"
	truncate -s "$VSIZE" "$DIR/model"
	put "$WORK/refA" "$DIR/model" $OFF_A || fail "cannot write the model"
	put "$WORK/refA" "$MNT/volume.img" $OFF_A || fail "raid$level: dd into volume.img failed"
	umnt
	mnt_ok "raid$level: remount" -r "${MEMBERS[@]}"
	volume_is "$DIR/model" "raid$level: after writing 20 MiB and remounting"
	if [ "$level" = 5 ] || [ "$level" = 6 ]; then
		# Rows not in the stripe cache are read straight from the members.
		local direct
		direct=$(sed -n 's/^direct_reads: //p' "$MNT/.raidfuse/status")
		[ "${direct:-0}" -gt 0 ] ||
			fail "raid$level: no read bypassed the stripe cache (direct_reads '$direct')"
	fi
	umnt
	for r in "${!MEMBERS[@]}"; do
		[ "$(ex_field "${MEMBERS[r]}" State)" = clean ] ||
			fail "raid$level: mdadm --examine ${MEMBERS[r]}: State is not clean"
	done
	ok "raid$level ($n members, $VSIZE bytes): 20 MiB reference written and read back, members clean"
	snapshot "$DIR"
}

# ---- each member left out, degraded writes, then stale ----------------
for spec in "5 4" "6 5" "1 2" "10 4"; do
	read -r level n <<<"$spec"
	L=raid$level
	setup_array "$level" "$n"
	for ((k = 0; k < n; k++)); do
		restore "$DIR"
		cp --sparse=always "$DIR/model" "$DIR/model.k"
		put "$WORK/refB" "$DIR/model.k" $OFF_B || fail "cannot write the model"
		stale=${MEMBERS[k]}
		members_but "$k"

		mnt_ok "$L without role $k" --run "${SEL[@]}"
		status_has "$L without role $k" "[$n/$((n - 1))] $(updown "$n" "$k")"
		status_has "$L without role $k" "state: active, degraded"
		volume_is "$DIR/model" "$L without role $k (before degraded writes)" $WINDOW
		put "$WORK/refB" "$MNT/volume.img" $OFF_B ||
			fail "$L without role $k: writing 8 MiB while degraded failed"
		umnt

		mnt_ok "$L without role $k (2nd)" --run "${SEL[@]}"
		volume_is "$DIR/model.k" "$L without role $k, remounted degraded" $WINDOW
		umnt
		ok "$L without role $k: reference read, 8 MiB written degraded, both right after remount"

		# The left-out member comes back: it is stale.
		members_but # all, reversed
		mnt_refused "$L with stale role $k, no --run" "--run" "${SEL[@]}"
		grep -qF -- "$stale" "$WORK/mount.err" ||
			fail "$L stale role $k: the refusal does not name $stale: $(cat "$WORK/mount.err")"
		mnt_ok "$L with stale role $k" --run "${SEL[@]}"
		grep -F -- "$stale" "$WORK/mount.err" | grep -qiE 'stale|behind|leav|left out' ||
			fail "$L stale role $k: no warning naming $stale on stderr: '$(cat "$WORK/mount.err")'"
		status_has "$L with stale role $k" "$(updown "$n" "$k")"
		status_has "$L with stale role $k" "member $k: missing"
		volume_is "$DIR/model.k" "$L with stale role $k given"
		umnt
		cmp -s "$stale" "$DIR/snap/$(basename "$stale")" ||
			fail "$L: the member $stale was written although it was missing or left out"
		ev_stale=$(ex_field "$stale" Events)
		for ((r = 0; r < n; r++)); do
			[ $r = $k ] && continue
			ev=$(ex_field "${MEMBERS[r]}" Events)
			[ -n "$ev" ] && [ -n "$ev_stale" ] && [ "$ev_stale" -lt "$ev" ] ||
				fail "$L: mdadm --examine: stale $stale has events '$ev_stale', ${MEMBERS[r]} has '$ev'"
			[ "$(ex_field "${MEMBERS[r]}" State)" = clean ] ||
				fail "$L: mdadm --examine ${MEMBERS[r]}: not clean after umount"
			as=$(ex_field "${MEMBERS[r]}" 'Array State' | cut -d' ' -f1)
			[ "${as:k:1}" = . ] ||
				fail "$L: mdadm --examine ${MEMBERS[r]}: Array State '$as' shows role $k present"
		done
		ok "$L stale role $k: left out with '$(grep -F -- "$stale" "$WORK/mount.err" | head -n1)'; current data served; events $ev_stale < $ev"
	done
	rm -f "$DIR/model.k"
	log "($L: $((SECONDS - T0)) s so far)"
done

# ---- too few members ---------------------------------------------------
# too_few LEVEL N ROLES-TEXT ROLE...
too_few() {
	local level=$1 n=$2 text=$3 r
	shift 3
	DIR=$WORK/raid$level
	MEMBERS=()
	for ((r = 0; r < n; r++)); do MEMBERS+=("$DIR/m$r.img"); done
	restore "$DIR"
	members_but "$@"
	mnt_refused "raid$level without roles $*" "missing role(s) $text" --run "${SEL[@]}"
	for r in "${!MEMBERS[@]}"; do
		cmp -s "${MEMBERS[r]}" "$DIR/snap/$(basename "${MEMBERS[r]}")" ||
			fail "raid$level: a refused mount changed ${MEMBERS[r]}"
	done
	ok "raid$level without roles $text: refused (exit $REFUSED_RC): $(head -n1 "$WORK/mount.err")"
}
too_few 5 4 "0, 2" 0 2
too_few 5 4 "1, 3" 3 1
too_few 6 5 "0, 1, 4" 0 1 4
too_few 10 4 "0, 1" 0 1

# ---- dirty and degraded ------------------------------------------------
DIR=$WORK/raid5
MEMBERS=("$DIR/m0.img" "$DIR/m1.img" "$DIR/m2.img" "$DIR/m3.img")
restore "$DIR"
cp --sparse=always "$DIR/model" "$DIR/model.d"
put "$WORK/refB" "$DIR/model.d" $OFF_B || fail "cannot write the model"
mnt_ok "raid5 to be killed" "${MEMBERS[@]}"
put "$WORK/refB" "$MNT/volume.img" $OFF_B || fail "raid5: dd into volume.img failed"
kill_daemon
for m in "${MEMBERS[@]}"; do
	[ "$(ex_field "$m" State)" = active ] ||
		fail "mdadm --examine $m: a killed writable mount left State '$(ex_field "$m" State)', not active (dirty)"
done
ok "raid5 daemon $pid killed with SIGKILL: members are marked active (dirty)"

mkdir -p "$DIR/dirty"
cp --sparse=always "${MEMBERS[@]}" "$DIR/dirty/" || fail "cannot copy the members"
members_but 2
mnt_refused "raid5 dirty without role 2" "--force" --run "${SEL[@]}"
for m in "${MEMBERS[@]}"; do
	cmp -s "$m" "$DIR/dirty/$(basename "$m")" ||
		fail "raid5: the refused dirty+degraded mount changed $m"
done
ok "raid5 dirty+degraded: refused (exit $REFUSED_RC), members unchanged: $(head -n1 "$WORK/mount.err")"

# A torn write: the parity chunk of stripe 0 (role 3 in left-symmetric)
# no longer matches. The resync must recompute it.
doff=$(ex_field "${MEMBERS[3]}" 'Data Offset' | awk '{print $1}')
[ -n "$doff" ] || fail "mdadm --examine shows no Data Offset"
head -c 65536 /dev/urandom | dd of="${MEMBERS[3]}" bs=512 seek="$doff" conv=notrunc status=none ||
	fail "cannot corrupt the parity chunk"
members_but
t=$SECONDS
mnt_ok "raid5 dirty, all members" "${SEL[@]}"
t=$((SECONDS - t))
resync_msg=$(grep -i resync "$WORK/mount.err" | head -n1)
[ -n "$resync_msg" ] ||
	fail "raid5 dirty: mounting all members did not report a resync: '$(cat "$WORK/mount.err")'"
volume_is "$DIR/model.d" "raid5 after the unclean stop and resync"
umnt
for m in "${MEMBERS[@]}"; do
	[ "$(ex_field "$m" State)" = clean ] || fail "mdadm --examine $m: not clean after the resync and umount"
done
members_but 0
mnt_ok "raid5 after resync, without role 0" -r --run "${SEL[@]}"
volume_is "$DIR/model.d" "raid5 after resync, role 0 rebuilt from parity"
umnt
ok "raid5 dirty, all members: resynced in ${t} s ('$resync_msg'), data and parity right, clean"

# ---- RAID1 dirty and degraded: the copies left are resynced --------------
# Three copies; after a kill one is missing and the two left differ (a
# mirror write the crash tore). Without parity there is no write hole, so
# it starts without --force, as md's raid1 does; but reads must not depend
# on which copy they hit, so the copies left are resynced first.
D1=$WORK/raid1x3
mkdir -p "$D1"
"$RAIDFUSE" create --level 1 --raid-devices 3 --size 16M --bitmap none \
	"$D1/m0.img" "$D1/m1.img" "$D1/m2.img" >"$WORK/create.out" 2>&1 ||
	fail "raid1x3: create failed: $(cat "$WORK/create.out")"
mnt_ok "raid1x3 to be killed" "$D1/m0.img" "$D1/m1.img" "$D1/m2.img"
head -c $((8 * MIB)) /dev/urandom | dd of="$MNT/volume.img" bs=1M conv=notrunc,fsync status=none ||
	fail "raid1x3: write failed"
kill_daemon
doff=$(ex_field "$D1/m1.img" 'Data Offset' | awk '{print $1}')
[ -n "$doff" ] || fail "mdadm --examine shows no Data Offset"
head -c 65536 /dev/urandom | dd of="$D1/m1.img" bs=512 seek="$doff" conv=notrunc status=none ||
	fail "cannot tear the mirror"
copy_of() { dd if="$1" bs=512 skip="$doff" count=$((16 * MIB / 512)) status=none | sha256sum; }
[ "$(copy_of "$D1/m0.img")" != "$(copy_of "$D1/m1.img")" ] || fail "raid1x3: the torn copies are equal"
mnt_ok "raid1x3 dirty without role 2" --run "$D1/m0.img" "$D1/m1.img"
grep -qi resync "$WORK/mount.err" ||
	fail "raid1x3 dirty+degraded: no resync reported: '$(cat "$WORK/mount.err")'"
umnt
[ "$(copy_of "$D1/m0.img")" = "$(copy_of "$D1/m1.img")" ] ||
	fail "raid1x3 dirty+degraded: the two copies left still differ after the resync"
ok "raid1x3 dirty+degraded: started without --force, the copies left resynced"

log "PASS: $NCHECKS checks in $((SECONDS - T0)) s"
exit 0
