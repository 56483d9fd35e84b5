#!/bin/bash
# drills.sh - degraded-mode recovery drills on MOUNTED arrays, through the
# control tree MOUNT/.raidfuse/ and the thin CLI verbs (status, fail,
# remove, check, repair, wait) plus the offline `raidfuse verify`.
#
# Fail drill, for raid5 (4 members), raid6 (5), raid1 (2), raid10 (4), 64K
# chunks, 48M members:
#   - write a reference pattern; check + wait: mismatch_cnt 0; status --json
#     is valid JSON with sane fields (level, degraded, members, counters);
#   - bad writes on the healthy array: garbage to sync_action, to the speed
#     limits and to devN/state is EINVAL; "remove" of an in-sync member is
#     EBUSY (the CLI refuses it with a message and a non-zero exit);
#   - `raidfuse fail` a member (by path or devN) while fio writes another
#     region with crc32c verify: fio sees no error; status says degraded, the
#     member is faulty; the other members' superblocks show its slot '.'; the
#     reference and fio's blocks (fio --verify_only) read back; check while
#     degraded runs over the redundancy left (RAID6 less one, RAID10 n2
#     less one) and is ENODEV without any (RAID5, RAID1 x2); failing
#     beyond redundancy is EBUSY with a message
#     (raid6: a second failure is allowed, a third is not);
#   - `raidfuse remove` the failed member(s); umount; all members offered
#     without --run is refused; with --run the same degraded state comes
#     back, the failed member(s) named in the warning; data unchanged.
# Scrub drill, on fresh healthy arrays: corrupt parity (raid5: P; raid6: P
# and Q) or a second mirror copy (raid1, raid10) in the member files while
# unmounted (offline verify counts it and exits 1); remount (verify now
# refuses: the members are locked); check: mismatch_cnt is exactly what md
# counts (8 sectors per 4 KiB page of parity, a mirror's whole 64 KiB
# resync block once per copy that differs), the members are not written and
# volume.img is unchanged; repair (writes only the bad rows' parity or the
# bad copies); check: 0; umount; verify: 0; every member's data area equals
# its bytes before the corruption: the corrupted pages are restored and the
# sha256 of everything else in the data area is unchanged.
# raid6: a corrupted DATA page is named (row, role and path) in
# .raidfuse/log by check, verify exits 1; failing that member during a slow
# check stops the check, and degraded reads rebuild the page from P/Q.
# Speed limit (raid5): a whole check under sync_speed_max takes at least
# 0.8 * size/limit; under 2000 KiB/s the progress never runs ahead of the
# limit; a second check or a repair meanwhile is EBUSY; writing idle stops
# it early and sync_action returns to idle; the status shows mdstat's
# progress line; raidfuse wait begun halfway shows the speed it saw;
# "system" restores the default. Giving way (raid5): while fio reads the
# volume a check runs at about half its idle speed; with sync_speed_min
# above that, at full speed.
. "$(dirname "$0")/lib.sh"

require_fuse
require_cmd python3 fio mdadm cmp dd sha256sum fusermount3

T0=$SECONDS
MNT=$WORK/mnt
mkdir -p "$MNT"
track_mount "$MNT"
NCHECKS=0
ok() {
	NCHECKS=$((NCHECKS + 1))
	log "ok [$((SECONDS - T0))s]: $*"
}

MIB=1048576
CHUNK=65536
OFF_A=12345 # reference region, not aligned
LEN_A=$((20 * MIB))
OFF_B=$((24 * MIB)) # the background writer's region
LEN_B=$((16 * MIB))
head -c $LEN_A /dev/urandom >"$WORK/refA" || fail "cannot read /dev/urandom"
RFC=$MNT/.raidfuse

# ---- helpers -----------------------------------------------------------

cat >"$WORK/h.py" <<'EOF'
import errno, hashlib, json, os, sys

def json_check(path, level, n, degraded):
    # Validates status.json; prints one problem a line (nothing when sane).
    errs = []
    try:
        j = json.load(open(path))
    except Exception as e:
        print("not valid JSON: %s" % e)
        return
    def want(cond, what):
        if not cond:
            errs.append(what)
    isint = lambda v: isinstance(v, int) and not isinstance(v, bool)
    want(j.get("level") == level, "level is %r, expected %r" % (j.get("level"), level))
    want(j.get("state") in ("active", "clean"), "state %r" % j.get("state"))
    want(j.get("degraded") == int(degraded), "degraded %r, expected %s" % (j.get("degraded"), degraded))
    want(j.get("raid_disks") == int(n), "raid_disks %r" % j.get("raid_disks"))
    want(j.get("chunk_bytes") == 65536 or level == "raid1", "chunk_bytes %r" % j.get("chunk_bytes"))
    want(j.get("sync_action") in ("idle", "check", "repair"), "sync_action %r" % j.get("sync_action"))
    for k in ("sync_completed_sectors", "sync_total_sectors", "mismatch_cnt", "events", "array_bytes"):
        want(isint(j.get(k)) and j[k] >= 0, "%s is %r" % (k, j.get(k)))
    if isint(j.get("sync_completed_sectors")) and isint(j.get("sync_total_sectors")):
        want(j["sync_completed_sectors"] <= j["sync_total_sectors"], "sync_completed > sync_total")
    m = j.get("members")
    want(isinstance(m, list) and len(m) == int(n), "members: %r" % (m,))
    if isinstance(m, list):
        for i, x in enumerate(m):
            want(x.get("dev") == i, "members[%d].dev %r" % (i, x.get("dev")))
            want(isinstance(x.get("path"), str) and x["path"].startswith("/"),
                 "members[%d].path %r" % (i, x.get("path")))
            want(isint(x.get("role")), "members[%d].role %r" % (i, x.get("role")))
            want(x.get("state") in ("in_sync", "faulty", "spare", "stale", "removed"),
                 "members[%d].state %r" % (i, x.get("state")))
            for k in ("read_bytes", "written_bytes", "read_errors", "write_errors"):
                want(isint(x.get(k)) and x[k] >= 0, "members[%d].%s %r" % (i, k, x.get(k)))
        bad = sum(1 for x in m if x.get("state") != "in_sync")
        want(bad == int(degraded), "%d members not in_sync, degraded %s" % (bad, degraded))
    if level in ("raid5", "raid6"):
        for k in ("cache_hits", "cache_misses", "rows_flushed"):
            want(isint(j.get(k)), "cache counter %s is %r" % (k, j.get(k)))
    for e in errs:
        print(e)

def json_get(path, expr):
    j = json.load(open(path))
    print(eval(expr, {"j": j}))

def members_compare(mode, data_off, *specs):
    # Each spec is ORIG|NOW|RANGES (RANGES: member byte offsets "off:len,...").
    # Outside the ranges, the data areas (from data_off) must be equal (by
    # sha256); inside them the bytes must differ from ORIG in mode "check"
    # (check only counts) and equal ORIG in mode "repair". Prints problems.
    data_off = int(data_off)
    for spec in specs:
        orig, now, ranges = spec.split("|")
        a = open(orig, "rb").read()
        b = open(now, "rb").read()
        rs = sorted((int(x.split(":")[0]), int(x.split(":")[1])) for x in ranges.split(",") if x)
        ha, hb = hashlib.sha256(), hashlib.sha256()
        at = data_off
        for off, ln in rs:
            ha.update(a[at:off]); hb.update(b[at:off])
            same = a[off:off + ln] == b[off:off + ln]
            if mode == "check" and same:
                print("%s: bytes %d+%d were rewritten by check (it must only count)" % (now, off, ln))
            if mode == "repair" and not same:
                print("%s: bytes %d+%d not restored by repair" % (now, off, ln))
            at = off + ln
        ha.update(a[at:]); hb.update(b[at:])
        if len(a) != len(b):
            print("%s: size changed %d -> %d" % (now, len(a), len(b)))
        elif ha.digest() != hb.digest():
            first = next(i for i in range(data_off, len(a)) if a[i] != b[i]
                         and not any(o <= i < o + l for o, l in rs))
            print("%s: bytes outside the corrupted ranges changed: sha256 %s -> %s "
                  "(first difference at byte %d)" % (now, ha.hexdigest()[:16],
                                                    hb.hexdigest()[:16], first))

globals()[sys.argv[1]](*sys.argv[2:])
EOF
hp() { python3 "$WORK/h.py" "$@"; }

# region_is LABEL MODEL OFFSET: volume.img at OFFSET holds the file MODEL.
region_is() {
	local n
	n=$(stat -c %s "$2")
	cmp -n "$n" <(dd if="$MNT/volume.img" bs=1M iflag=skip_bytes,count_bytes skip="$3" \
		count="$n" status=none) "$2" >"$WORK/cmp.out" 2>&1 ||
		fail "$1: volume.img at $3 differs from the reference: $(cat "$WORK/cmp.out")"
}
region_sum() { # OFFSET LEN: sha256 of that region of volume.img
	dd if="$MNT/volume.img" bs=1M iflag=skip_bytes,count_bytes skip="$1" count="$2" \
		status=none | sha256sum | cut -d' ' -f1
}
# corrupt FILE OFFSET LEN: overwrite LEN bytes of a member with random ones.
corrupt() {
	head -c "$3" /dev/urandom | dd of="$1" bs=4096 oflag=seek_bytes seek="$2" \
		conv=notrunc,fsync status=none || fail "cannot corrupt $1 at $2"
}
jget() { hp json_get "$RFC/status.json" "$1"; }
json_sane() { # LABEL LEVEL N DEGRADED: status --json output is valid and sane
	local out
	"$RAIDFUSE" status --json "$MNT" >"$WORK/status.json" ||
		fail "$1: raidfuse status --json failed"
	out=$(hp json_check "$WORK/status.json" "$2" "$3" "$4")
	[ -z "$out" ] || fail "$1: status.json: $out
$(cat "$WORK/status.json")"
}
# ctl_errno LABEL FILE TEXT EXPECTED: the write of TEXT to the control file
# FILE (one write(2), by bash's printf) fails with errno EXPECTED (or
# succeeds when EXPECTED is OK); bash reports the errno's strerror text.
ctl_errno() {
	local rc=0 msg want
	{ printf '%s' "$3" >"$2"; } 2>"$WORK/ctl.err" || rc=$?
	msg=$(cat "$WORK/ctl.err")
	case $4 in
	OK) [ $rc = 0 ] || fail "$1: writing '$3' to ${2#"$MNT"/} failed: $msg"
		return ;;
	EINVAL) want="Invalid argument" ;;
	EBUSY) want="Device or resource busy" ;;
	ENODEV) want="No such device" ;;
	*) fail "ctl_errno: unknown errno $4" ;;
	esac
	[ $rc != 0 ] || fail "$1: writing '$3' to ${2#"$MNT"/} succeeded, expected $4"
	[[ $msg == *"$want"* ]] || fail "$1: writing '$3' to ${2#"$MNT"/}: '$msg', expected $4 ($want)"
}
# sync_run LABEL VERB: raidfuse VERB + raidfuse wait; sets MISMATCH.
sync_run() {
	local label=$1 verb=$2 last
	"$RAIDFUSE" "$verb" "$MNT" 2>"$WORK/sync.err" ||
		fail "$label: raidfuse $verb failed: $(cat "$WORK/sync.err")"
	"$RAIDFUSE" wait "$MNT" >"$WORK/wait.out" 2>&1 </dev/null ||
		fail "$label: raidfuse wait failed: $(cat "$WORK/wait.out")"
	last=$(tail -n1 "$WORK/wait.out")
	[[ $last =~ ^done:\ mismatch_cnt\ ([0-9]+)$ ]] ||
		fail "$label: raidfuse wait did not end with 'done: mismatch_cnt N': $(cat "$WORK/wait.out")"
	MISMATCH=${BASH_REMATCH[1]}
	[ "$(cat "$RFC/sync_action")" = idle ] || fail "$label: sync_action is not idle after wait"
	[ "$(cat "$RFC/sync_completed")" = none ] || fail "$label: sync_completed is not none after wait"
	[ "$(cat "$RFC/mismatch_cnt")" = "$MISMATCH" ] ||
		fail "$label: mismatch_cnt file $(cat "$RFC/mismatch_cnt") != wait's $MISMATCH"
	local ndone total
	read -r ndone total < <(jget '"%d %d" % (j["sync_completed_sectors"], j["sync_total_sectors"])')
	[ "$ndone" = "$total" ] && [ "$total" = "$DEV_SECTORS" ] ||
		fail "$label: after $verb sync_completed/total sectors are $ndone/$total, expected $DEV_SECTORS"
}
now_us() { echo "${EPOCHREALTIME/./}"; }
secs() { printf '%d.%02ds' $(($1 / 1000000)) $(($1 % 1000000 / 10000)); }

# new_array LEVEL N: create DIR/d0..; sets DIR MEMBERS DATA_OFF DEV_SECTORS.
new_array() {
	local level=$1 n=$2 r
	DIR=$WORK/raid$level-$3
	mkdir -p "$DIR"
	MEMBERS=()
	for ((r = 0; r < n; r++)); do MEMBERS+=("$DIR/d$r"); done
	"$RAIDFUSE" create --level "$level" --raid-devices "$n" --chunk 64K --size 48M \
		--name "drill$level" "${MEMBERS[@]}" >"$WORK/create.out" 2>&1 ||
		fail "raid$level: create failed: $(cat "$WORK/create.out")"
	local sec
	sec=$(ex_field "${MEMBERS[0]}" 'Data Offset' | awk '{print $1}')
	[[ $sec =~ ^[0-9]+$ ]] || fail "raid$level: no Data Offset in mdadm --examine"
	DATA_OFF=$((sec * 512))
	# mdadm prints Used Dev Size only when it differs from Avail Dev Size.
	sec=$(ex_field "${MEMBERS[0]}" 'Used Dev Size' | awk '{print $1}')
	[ -n "$sec" ] || sec=$(ex_field "${MEMBERS[0]}" 'Avail Dev Size' | awk '{print $1}')
	[[ $sec =~ ^[0-9]+$ ]] || fail "raid$level: no Used/Avail Dev Size in mdadm --examine"
	DEV_SECTORS=$sec
}

# ---- fail / remove / remount drill -------------------------------------

# The background writer: sequential 64 KiB writes over region B, each block
# with a crc32c verify header, read back and checked after each pass. Run
# again with --verify_only it checks the region still holds what it wrote
# (it invalidates the page cache first, so the reads reach raidfuse).
FIO_B=(fio --name=bg --filename="$MNT/volume.img" --rw=write --bs=64k --offset="$OFF_B"
	--size="$LEN_B" --verify=crc32c --ioengine=psync --allow_file_create=0)
fio_verify() { # LABEL
	"${FIO_B[@]}" --verify_only=1 >"$WORK/fio-v.out" 2>&1 ||
		fail "$1: fio --verify_only of region B failed: $(cat "$WORK/fio-v.out")"
}

# fail_drill LEVEL N VICTIM(ROLE) HOW(path|dev) [SECOND] ; REFUSED(ROLE)
fail_drill() {
	local level=$1 n=$2 victim=$3 how=$4 second=$5 refused=$6 L=raid$1 r
	local failed=("$victim")
	new_array "$level" "$n" fail
	mnt_ok "$L" "${MEMBERS[@]}"
	put "$WORK/refA" "$MNT/volume.img" $OFF_A || fail "$L: writing the reference failed"
	region_is "$L: reference" "$WORK/refA" $OFF_A
	sync_run "$L healthy" check
	[ "$MISMATCH" = 0 ] || fail "$L: check of a fresh array: mismatch_cnt $MISMATCH"
	json_sane "$L healthy" "$L" "$n" 0
	"$RAIDFUSE" status "$MNT" >"$WORK/status.txt" || fail "$L: raidfuse status failed"
	grep -qF "[$n/$n]" "$WORK/status.txt" || fail "$L: status lacks [$n/$n]: $(cat "$WORK/status.txt")"
	ok "$L: reference written, check + wait: mismatch_cnt 0, status.json valid and sane"

	# Bad writes on the healthy array.
	ctl_errno "$L" "$RFC/sync_action" "scrub-everything" EINVAL
	ctl_errno "$L" "$RFC/sync_speed_max" "fast" EINVAL
	ctl_errno "$L" "$RFC/sync_speed_min" "0" EINVAL
	ctl_errno "$L" "$RFC/dev0/state" "broken" EINVAL
	ctl_errno "$L" "$RFC/dev0/state" "remove" EBUSY
	ctl_errno "$L" "$RFC/dev0/fault" "rate=0.5" EINVAL
	ctl_errno "$L" "$RFC/dev0/fault" "range=0+4096" EINVAL
	[ "$(cat "$RFC/dev0/fault")" = none ] || fail "$L: dev0/fault after refused writes: $(cat "$RFC/dev0/fault")"
	! echo bogus 2>/dev/null >"$RFC/sync_action" || fail "$L: 'echo bogus > sync_action' succeeded"
	[ "$(cat "$RFC/sync_action")" = idle ] || fail "$L: sync_action is not idle after garbage"
	if "$RAIDFUSE" remove "$MNT" "${MEMBERS[1]}" 2>"$WORK/cli.err"; then
		fail "$L: raidfuse remove of an in-sync member exited 0"
	fi
	grep -q "refused" "$WORK/cli.err" || fail "$L: remove of an in-sync member: no message: $(cat "$WORK/cli.err")"
	[ "$(cat "$RFC/dev1/state")" = in_sync ] || fail "$L: refused remove changed dev1's state"
	ok "$L: garbage to sync_action/speed/state is EINVAL, remove of an in-sync member EBUSY (CLI: '$(cat "$WORK/cli.err")')"

	# Fail a member under a background writer (fio with verify).
	"${FIO_B[@]}" --loops=10 --fsync=16 >"$WORK/fio.out" 2>&1 &
	local fio_pid=$!
	sleep 0.4
	kill -0 $fio_pid 2>/dev/null || fail "$L: fio ended before the member was failed: $(cat "$WORK/fio.out")"
	local arg=${MEMBERS[victim]}
	[ "$how" = dev ] && arg=dev$victim
	"$RAIDFUSE" fail "$MNT" "$arg" 2>"$WORK/cli.err" ||
		fail "$L: raidfuse fail $arg failed: $(cat "$WORK/cli.err")"
	kill -0 $fio_pid 2>/dev/null ||
		log "note: $L: fio ended while 'raidfuse fail' ran (the overlap was short)"
	local frc=0
	wait $fio_pid || frc=$?
	[ $frc = 0 ] || fail "$L: fio (writing while role $victim failed) exited $frc: $(cat "$WORK/fio.out")"
	grep -q "err= 0" "$WORK/fio.out" || fail "$L: fio reports errors: $(cat "$WORK/fio.out")"
	ok "$L: 'raidfuse fail $arg' while fio wrote+verified 16 MiB x10: no I/O or verify error"

	[ "$(cat "$RFC/dev$victim/state")" = faulty ] || fail "$L: dev$victim/state is $(cat "$RFC/dev$victim/state")"
	[ "$(cat "$RFC/dev$victim/slot")" = none ] || fail "$L: dev$victim/slot is $(cat "$RFC/dev$victim/slot")"
	json_sane "$L degraded" "$L" "$n" 1
	grep -q "degraded" "$RFC/status" || fail "$L: status does not say degraded: $(cat "$RFC/status")"
	grep -qF "[$n/$((n - 1))]" "$RFC/status" || fail "$L: status lacks [$n/$((n - 1))]: $(cat "$RFC/status")"
	grep -q "(role $victim) set faulty" "$RFC/log" || fail "$L: log lacks the failure: $(cat "$RFC/log")"
	[ "$(jget 'sum(m["write_errors"] + m["read_errors"] for m in j["members"])')" = 0 ] ||
		fail "$L: members report I/O errors: $(cat "$RFC/status.json")"
	local other=$(((victim + 1) % n)) as
	as=$(ex_field "${MEMBERS[other]}" 'Array State' | awk '{print $1}')
	[ "${as:victim:1}" = . ] || fail "$L: mdadm --examine ${MEMBERS[other]}: Array State '$as', slot $victim is not '.'"
	region_is "$L degraded" "$WORK/refA" $OFF_A
	fio_verify "$L degraded"
	local sumB
	sumB=$(region_sum $OFF_B $LEN_B)
	ok "$L: degraded: dev$victim faulty, status [$n/$((n - 1))], superblocks show slot $victim '.', reference and fio's blocks (--verify_only) read back"

	# A degraded array with redundancy left (RAID6 less one, RAID10 with
	# whole pairs) is checked over what is left, as md; with none left
	# the check is refused (degraded_scrub.sh has the mismatches).
	if [ -n "$second" ] || [ "$level" = 10 ]; then
		sync_run "$L degraded" check
		[ "$MISMATCH" = 0 ] || fail "$L: check while degraded: mismatch_cnt $MISMATCH"
	else
		ctl_errno "$L degraded" "$RFC/sync_action" check ENODEV
		if "$RAIDFUSE" check "$MNT" 2>"$WORK/cli.err"; then fail "$L: raidfuse check while degraded exited 0"; fi
		grep -q "no redundancy left" "$WORK/cli.err" ||
			fail "$L: check while degraded: no message: $(cat "$WORK/cli.err")"
	fi
	if [ -n "$second" ]; then
		"$RAIDFUSE" fail "$MNT" "dev$second" 2>"$WORK/cli.err" ||
			fail "$L: failing a second member (dev$second) was refused: $(cat "$WORK/cli.err")"
		failed+=("$second")
		json_sane "$L doubly degraded" "$L" "$n" 2
		region_is "$L doubly degraded" "$WORK/refA" $OFF_A
		[ "$(region_sum $OFF_B $LEN_B)" = "$sumB" ] || fail "$L: region B changed after the second failure"
	fi
	local nf=${#failed[@]}
	if "$RAIDFUSE" fail "$MNT" "${MEMBERS[refused]}" 2>"$WORK/cli.err"; then
		fail "$L: failing role $refused beyond redundancy exited 0"
	fi
	grep -q refused "$WORK/cli.err" || fail "$L: fail beyond redundancy: no message: $(cat "$WORK/cli.err")"
	ctl_errno "$L" "$RFC/dev$refused/state" faulty EBUSY
	[ "$(cat "$RFC/dev$refused/state")" = in_sync ] || fail "$L: the refused member is no longer in_sync"
	json_sane "$L after refusals" "$L" "$n" "$nf"
	region_is "$L after refusals" "$WORK/refA" $OFF_A
	ok "$L: check while degraded: mismatch_cnt 0 with redundancy left, ENODEV without; failing role $refused beyond redundancy EBUSY ('$(cat "$WORK/cli.err")')"

	for r in "${failed[@]}"; do
		"$RAIDFUSE" remove "$MNT" "${MEMBERS[r]}" 2>"$WORK/cli.err" ||
			fail "$L: raidfuse remove ${MEMBERS[r]} failed: $(cat "$WORK/cli.err")"
		[ "$(cat "$RFC/dev$r/state")" = removed ] || fail "$L: dev$r/state is $(cat "$RFC/dev$r/state") after remove"
		grep -qF "member ${MEMBERS[r]} removed" "$RFC/log" || fail "$L: log lacks the removal of ${MEMBERS[r]}"
		# Failing it again says what it is, not "Invalid argument".
		"$RAIDFUSE" fail "$MNT" "${MEMBERS[r]}" 2>"$WORK/cli.err" && fail "$L: fail of a removed member exited 0"
		grep -q "refused: it was removed from the array already" "$WORK/cli.err" ||
			fail "$L: fail of a removed member says: $(cat "$WORK/cli.err")"
	done
	json_sane "$L after remove" "$L" "$n" "$nf"
	region_is "$L after remove" "$WORK/refA" $OFF_A
	umnt
	ok "$L: failed member(s) ${failed[*]} removed, unmounted"

	# Remount: offered all members, it needs --run and stays degraded.
	if "$RAIDFUSE" mount "${MEMBERS[@]}" "$MNT" 2>"$WORK/mount.err"; then
		mountpoint -q "$MNT" && "$RAIDFUSE" umount "$MNT"
		fail "$L: mounting with the failed member(s) but without --run succeeded"
	fi
	! mountpoint -q "$MNT" || fail "$L: a refused mount left $MNT mounted"
	grep -qF -- "--run" "$WORK/mount.err" || fail "$L: refused mount does not ask for --run: $(cat "$WORK/mount.err")"
	mnt_ok "$L remount --run" --run "${MEMBERS[@]}"
	for r in "${failed[@]}"; do
		grep -qF "${MEMBERS[r]}" "$WORK/mount.err" ||
			fail "$L: the remount warning does not name ${MEMBERS[r]}: $(cat "$WORK/mount.err")"
		local st
		st=$(cat "$RFC/dev$r/state")
		[ "$st" = faulty ] || [ "$st" = stale ] || fail "$L: after remount dev$r is $st"
	done
	# Read first: raid5/6 report their cache counters once I/O has started.
	region_is "$L remounted" "$WORK/refA" $OFF_A
	json_sane "$L remounted" "$L" "$n" "$nf"
	grep -qF "[$n/$((n - nf))]" "$RFC/status" || fail "$L: remounted status lacks [$n/$((n - nf))]: $(cat "$RFC/status")"
	[ "$(region_sum $OFF_B $LEN_B)" = "$sumB" ] || fail "$L: fio's region changed across the remount"
	fio_verify "$L remounted"
	if [ "$level" = 10 ]; then # pairs 0/1 whole: checked (mismatch 0)
		sync_run "$L remounted" check
		[ "$MISMATCH" = 0 ] || fail "$L remounted: check: mismatch_cnt $MISMATCH"
	else
		ctl_errno "$L remounted" "$RFC/sync_action" check ENODEV
	fi
	umnt
	ok "$L: remount without --run refused; with --run degraded [$n/$((n - nf))] again, warning '$(head -n1 "$WORK/mount.err")'; data unchanged"
}

fail_drill 5 4 1 path "" 2
fail_drill 6 5 2 path 4 0
fail_drill 1 2 0 dev "" 1
fail_drill 10 4 3 path "" 2

# ---- scrub drill -------------------------------------------------------

# scrub_drill LEVEL N EXPECTED_MISMATCH ROLE:OFF:LEN...
# OFF is the byte offset in the member's data area.
scrub_drill() {
	local level=$1 n=$2 expect=$3 L=raid$1 r c
	shift 3
	new_array "$level" "$n" scrub
	mnt_ok "$L scrub" "${MEMBERS[@]}"
	put "$WORK/refA" "$MNT/volume.img" 0 || fail "$L: writing the reference failed"
	umnt
	mkdir -p "$DIR/orig"
	cp "${MEMBERS[@]}" "$DIR/orig/" || fail "cannot copy the members"
	declare -A ranges=()
	# members_same MODE: members without corruption have the same data area
	# as before (cmp); the others are compared by members_compare MODE.
	members_same() {
		local r specs=() res
		for ((r = 0; r < n; r++)); do
			if [ -z "${ranges[$r]:-}" ]; then
				cmp -s -i "$DATA_OFF" "$DIR/orig/d$r" "${MEMBERS[r]}" ||
					fail "$L after $1: the data area of member $r (not corrupted) changed"
			else
				specs+=("$DIR/orig/d$r|${MEMBERS[r]}|${ranges[$r]}")
			fi
		done
		res=$(hp members_compare "$1" "$DATA_OFF" "${specs[@]}")
		[ -z "$res" ] || fail "$L after $1: $res"
	}
	for c in "$@"; do
		IFS=: read -r r off len <<<"$c"
		corrupt "${MEMBERS[r]}" $((DATA_OFF + off)) "$len"
		ranges[$r]+="$((DATA_OFF + off)):$len,"
	done
	"$RAIDFUSE" verify "${MEMBERS[@]}" >"$WORK/verify.out" 2>&1 &&
		fail "$L: verify of corrupted members exited 0: $(cat "$WORK/verify.out")"
	grep -qE "mismatch_cnt:? $expect\b" "$WORK/verify.out" ||
		fail "$L: offline verify: expected mismatch_cnt $expect: $(cat "$WORK/verify.out")"

	mnt_ok "$L scrub remount" "${MEMBERS[@]}"
	# The members are locked while mounted: verify must refuse.
	"$RAIDFUSE" verify "${MEMBERS[@]}" >"$WORK/verify.out" 2>&1 &&
		fail "$L: verify of the members of a mounted array exited 0: $(cat "$WORK/verify.out")"
	grep -q "in use" "$WORK/verify.out" || fail "$L: verify while mounted: $(cat "$WORK/verify.out")"
	sync_run "$L corrupted" check
	[ "$MISMATCH" = "$expect" ] || fail "$L: check found mismatch_cnt $MISMATCH, expected $expect"
	members_same check
	if [ "$level" = 1 ] || [ "$level" = 10 ]; then
		# md may serve a read from either copy, the corrupted one too, so
		# this is not asserted (raidfuse reads the first copy today).
		cmp -s "$WORK/refA" <(dd if="$MNT/volume.img" bs=1M count=$((LEN_A / MIB)) status=none) ||
			log "note: $L: volume.img shows the corrupted copy before repair (md may too)"
	else
		region_is "$L corrupted parity" "$WORK/refA" 0
	fi
	ok "$L: parity/copy corruption ($*) counted by check: mismatch_cnt $MISMATCH; members unchanged by check"

	local w0
	w0=$(jget 'sum(m["written_bytes"] for m in j["members"])')
	sync_run "$L repair" repair
	[ "$MISMATCH" = "$expect" ] || fail "$L: repair reported mismatch_cnt $MISMATCH, expected $expect"
	local wrote
	wrote=$(($(jget 'sum(m["written_bytes"] for m in j["members"])') - w0))
	# Repair rewrites only the bad rows' parity (raid6: P and Q) or the bad
	# copies: at most two 64 KiB chunks per corrupted range (+ slack).
	[ "$wrote" -gt 0 ] && [ "$wrote" -le $(($# * 2 * CHUNK + 8192)) ] ||
		fail "$L: repair of $# corrupted range(s) wrote $wrote bytes to the members"
	sync_run "$L after repair" check
	[ "$MISMATCH" = 0 ] || fail "$L: check after repair: mismatch_cnt $MISMATCH"
	region_is "$L repaired" "$WORK/refA" 0
	ok "$L: repair + wait (wrote $wrote bytes to the members), then check: mismatch_cnt 0, volume unchanged"
	json_sane "$L repaired" "$L" "$n" 0

	if [ "$level" = 5 ]; then
		speed_drill
		yield_drill
	fi
	umnt
	"$RAIDFUSE" verify "${MEMBERS[@]}" >"$WORK/verify.out" 2>&1 ||
		fail "$L: verify after repair failed: $(cat "$WORK/verify.out")"
	grep -qE "mismatch_cnt:? 0\b" "$WORK/verify.out" || fail "$L: verify: $(cat "$WORK/verify.out")"
	members_same repair
	ok "$L: verify: mismatch_cnt 0; every member's data area equals its pre-corruption bytes (corrupted chunks restored, sha256 of the rest unchanged)"
	rm -rf "$DIR"
}

# speed_drill: on the mounted healthy raid5 ($MNT), sync_speed_max.
speed_drill() {
	local L=raid5 t0 limit=24000 min_us kib_total ndone us
	ctl_errno "$L" "$RFC/sync_speed_max" $limit OK
	[ "$(awk '{print $1}' "$RFC/sync_speed_max")" = $limit ] ||
		fail "$L: sync_speed_max reads $(cat "$RFC/sync_speed_max") after writing $limit"
	kib_total=$((DEV_SECTORS / 2))
	t0=$(now_us)
	sync_run "$L limited" check
	us=$(($(now_us) - t0))
	min_us=$((kib_total * 800000 / limit))
	[ $us -ge $min_us ] ||
		fail "$L: a check of $kib_total KiB under sync_speed_max $limit took $(secs $us), less than $(secs $min_us)"
	[ "$MISMATCH" = 0 ] || fail "$L: limited check: mismatch_cnt $MISMATCH"
	ok "$L: check of $kib_total KiB per member under sync_speed_max $limit KiB/s took $(secs $us) (>= $(secs $min_us))"

	limit=2000
	echo $limit >"$RFC/sync_speed_max" || fail "$L: cannot write sync_speed_max"
	echo 1000 >"$RFC/sync_speed_min" || fail "$L: cannot write sync_speed_min"
	[ "$(awk '{print $1}' "$RFC/sync_speed_min")" = 1000 ] || fail "$L: sync_speed_min reads $(cat "$RFC/sync_speed_min")"
	t0=$(now_us)
	"$RAIDFUSE" check "$MNT" || fail "$L: raidfuse check failed"
	sleep 2
	local comp
	comp=$(cat "$RFC/sync_completed")
	us=$(($(now_us) - t0))
	[[ $comp =~ ^([0-9]+)\ /\ ([0-9]+)$ ]] || fail "$L: sync_completed during check is '$comp'"
	ndone=${BASH_REMATCH[1]}
	[ "${BASH_REMATCH[2]}" = "$DEV_SECTORS" ] || fail "$L: sync_completed total ${BASH_REMATCH[2]}, expected $DEV_SECTORS"
	[ "$ndone" -gt 0 ] || fail "$L: no progress in 2 s under sync_speed_max $limit"
	# What was done took at least 0.8 * done/limit: done <= 1.25 * limit *
	# elapsed, plus one 64 KiB unit of slack.
	[ $((ndone / 2)) -le $((limit * us / 800000 + 64)) ] ||
		fail "$L: $((ndone / 2)) KiB checked in $(secs $us) under sync_speed_max $limit"
	[ "$(cat "$RFC/sync_action")" = check ] || fail "$L: sync_action is not check during a limited check"
	# md's sync_speed: the current rate, within the limit.
	local speed
	speed=$(cat "$RFC/sync_speed")
	[[ $speed =~ ^[0-9]+$ ]] && [ "$speed" -le $((limit * 3 / 2)) ] ||
		fail "$L: sync_speed reads '$speed' during a check under sync_speed_max $limit"
	# mdstat's progress line, in 1K blocks of a member.
	grep -qE "^      \[=*>\.*\]  check = *[0-9]+\.[0-9]% \([0-9]+/$((DEV_SECTORS / 2))\) finish=[0-9]+\.[0-9]min speed=[0-9]+K/sec$" \
		"$RFC/status" || fail "$L: no mdstat progress line in the status during a check: $(cat "$RFC/status")"
	# raidfuse wait begun halfway: the speed of what it saw done, not of
	# everything done since the check began divided by its own time.
	local wait_mib
	timeout 5 "$RAIDFUSE" wait "$MNT" </dev/null 2>&1 | head -n1 >"$WORK/wait.out"
	wait_mib=$(sed -n 's/.*, \([0-9.]*\) MiB\/s, ETA.*/\1/p' "$WORK/wait.out")
	[ -n "$wait_mib" ] || fail "$L: raidfuse wait printed no progress line: $(cat "$WORK/wait.out")"
	awk -v m="$wait_mib" -v l=$limit 'BEGIN { exit !(m <= l * 1.5 / 1024) }' ||
		fail "$L: raidfuse wait begun halfway shows $wait_mib MiB/s under sync_speed_max $limit KiB/s"
	# One at a time: another check or a repair is EBUSY.
	ctl_errno "$L check running" "$RFC/sync_action" check EBUSY
	ctl_errno "$L check running" "$RFC/sync_action" repair EBUSY
	if "$RAIDFUSE" repair "$MNT" 2>"$WORK/cli.err"; then fail "$L: raidfuse repair during a check exited 0"; fi
	grep -q "running" "$WORK/cli.err" || fail "$L: repair during a check: $(cat "$WORK/cli.err")"
	t0=$(now_us)
	echo idle >"$RFC/sync_action" || fail "$L: writing idle to sync_action failed"
	local i
	for ((i = 0; i < 20; i++)); do
		[ "$(cat "$RFC/sync_action")" = idle ] && break
		sleep 0.1
	done
	us=$(($(now_us) - t0))
	[ "$(cat "$RFC/sync_action")" = idle ] || fail "$L: sync_action still $(cat "$RFC/sync_action") 2 s after idle"
	[ "$(cat "$RFC/sync_completed")" = none ] || fail "$L: sync_completed is '$(cat "$RFC/sync_completed")' after idle"
	[ "$(cat "$RFC/sync_speed")" = none ] || fail "$L: sync_speed is '$(cat "$RFC/sync_speed")' after idle"
	local at
	at=$(jget 'j["sync_completed_sectors"]')
	[ "$at" -lt "$DEV_SECTORS" ] || fail "$L: the interrupted check claims it completed"
	ok "$L: under $limit KiB/s $((ndone / 2)) of $((DEV_SECTORS / 2)) KiB checked in 2 s; 'echo idle > sync_action' stopped it at $((at / 2)) KiB, idle within $(secs $us)"
	# md's "system": back to the default, shown as such.
	echo system >"$RFC/sync_speed_max" || fail "$L: 'system' refused by sync_speed_max"
	[ "$(cat "$RFC/sync_speed_max")" = "200000 (system)" ] ||
		fail "$L: sync_speed_max reads '$(cat "$RFC/sync_speed_max")' after 'system'"
}

# sectors_done: the check's progress (sync_completed), in sectors.
sectors_done() {
	local comp
	comp=$(cat "$RFC/sync_completed")
	[[ $comp =~ ^([0-9]+)\ /\ [0-9]+$ ]] || fail "$L: sync_completed during a check is '$comp'"
	echo "${BASH_REMATCH[1]}"
}

# progress_under_load SECONDS: fio reads the volume at random; from a
# second in, the check's progress over SECONDS: sets d1 t1 d2 t2.
progress_under_load() {
	local load_pid
	fio --name=load --filename="$MNT/volume.img" --rw=randread --bs=64k --direct=1 \
		--ioengine=psync --time_based --runtime=60 >"$WORK/load.out" 2>&1 &
	load_pid=$!
	sleep 1
	d1=$(sectors_done) t1=$(now_us)
	sleep "$1"
	d2=$(sectors_done) t2=$(now_us)
	kill $load_pid 2>/dev/null
	wait $load_pid 2>/dev/null
}

# yield_drill: on the mounted healthy raid5 ($MNT), giving way to users
# as md does (since 4.1): above sync_speed_min a check that sees the
# volume in use pauses as long as each unit took. One member slowed to
# 20 ms a request makes every unit take about that long, whatever the
# CPU: idle, the check runs at one unit per 20 ms; while fio reads the
# volume, at about half that; with the floor above its speed, at full
# speed again.
yield_drill() {
	local L=raid5 dev idle_kib load_kib floor_kib
	dev=$(dev_of "$MNT" "${MEMBERS[3]}") || fail "$L: no devN for ${MEMBERS[3]}"
	echo 200000 >"$RFC/sync_speed_max" || fail "$L: cannot write sync_speed_max"
	echo 100 >"$RFC/sync_speed_min" || fail "$L: cannot write sync_speed_min"
	echo latency=20 >"$RFC/$dev/fault" || fail "$L: cannot slow $dev"
	"$RAIDFUSE" check "$MNT" || fail "$L: raidfuse check failed"
	sleep 1
	d1=$(sectors_done) t1=$(now_us)
	sleep 2
	d2=$(sectors_done) t2=$(now_us)
	idle_kib=$(((d2 - d1) / 2 * 1000000 / (t2 - t1)))
	progress_under_load 2
	load_kib=$(((d2 - d1) / 2 * 1000000 / (t2 - t1)))
	echo 200000 >"$RFC/sync_speed_min" || fail "$L: cannot write sync_speed_min"
	progress_under_load 2
	floor_kib=$(((d2 - d1) / 2 * 1000000 / (t2 - t1)))
	[ "$(cat "$RFC/sync_action")" = check ] || fail "$L: the slowed check ended too soon to measure"
	echo idle >"$RFC/sync_action" || fail "$L: cannot stop the check"
	echo clear >"$RFC/$dev/fault" || fail "$L: cannot clear the fault on $dev"
	echo 1000 >"$RFC/sync_speed_min" || fail "$L: cannot restore sync_speed_min"
	[ "$idle_kib" -gt 0 ] || fail "$L: the slowed check made no progress"
	[ $((load_kib * 4)) -le $((idle_kib * 3)) ] && [ $((load_kib * 4)) -ge "$idle_kib" ] ||
		fail "$L: the check ran at $load_kib KiB/s while fio read the volume, $idle_kib KiB/s idle: it should give way to about half"
	[ $((floor_kib * 4)) -ge $((idle_kib * 3)) ] ||
		fail "$L: with sync_speed_min above its speed the check ran at $floor_kib KiB/s under fio, $idle_kib KiB/s idle"
	ok "$L: a check at $idle_kib KiB/s idle gave way to $load_kib KiB/s while fio read the volume, and ran at $floor_kib KiB/s with sync_speed_min above that"
}

C=$CHUNK
# raid5 left-symmetric, 4 members: row r's parity is on role 3-(r%4).
# Row 5: parity on role 2, one page; row 10: parity on role 1, two pages.
scrub_drill 5 4 24 "2:$((5 * C + 8192)):4096" "1:$((10 * C + 4096 * 5)):8192"
# raid6 left-symmetric, 5 members: P on role 4-(r%5), Q on the next one.
# Row 3: P on role 1; row 7: Q on role 3 (P on 2); one page each.
scrub_drill 6 5 16 "1:$((3 * C)):4096" "3:$((7 * C + 4096 * 15)):4096"
# raid1: the second copy (the first is what repair copies from); two pages
# of one 64 KiB block: md counts the block once, 128 sectors.
scrub_drill 1 2 128 "1:$((3 * MIB + 4096)):8192"
# raid10 n2, 4 members: chunk k on roles 2k%4 and 2k%4+1 at member chunk k/2.
# Chunk 5: roles 2 and 3 at member chunk 2; corrupt role 3's copy.
scrub_drill 10 4 128 "3:$((2 * C + 4096)):4096"

# raid6: a corrupted DATA chunk is blamed on its member by check.
# Row 12: P on role 2, Q on 3, data on roles 4, 0, 1; corrupt role 0.
L=raid6
new_array 6 5 blame
mnt_ok "$L blame" "${MEMBERS[@]}"
put "$WORK/refA" "$MNT/volume.img" 0 || fail "$L: writing the reference failed"
umnt
corrupt "${MEMBERS[0]}" $((DATA_OFF + 12 * C + 3 * 4096)) 4096
mnt_ok "$L blame remount" "${MEMBERS[@]}"
sync_run "$L data corrupted" check
[ "$MISMATCH" = 8 ] || fail "$L: check of one corrupted data page: mismatch_cnt $MISMATCH, expected 8"
grep -E "row 12\b.*role 0 \(${MEMBERS[0]}\)" "$RFC/log" >"$WORK/blame" ||
	fail "$L: .raidfuse/log does not name row 12, role 0 (${MEMBERS[0]}): $(cat "$RFC/log")"
grep -qE "role [1-4] " "$WORK/blame" && fail "$L: the log blames another member too: $(cat "$WORK/blame")"
[ "$(grep -c "is wrong" "$RFC/log")" = 1 ] || fail "$L: the log blames more than one page: $(cat "$RFC/log")"
umnt
"$RAIDFUSE" verify "${MEMBERS[@]}" >"$WORK/verify.out" 2>&1 && fail "$L: verify exited 0 with a corrupted data chunk"
grep -qE "mismatch_cnt:? 8\b" "$WORK/verify.out" || fail "$L: verify: $(cat "$WORK/verify.out")"
ok "$L: a corrupted data page is named in .raidfuse/log: '$(cut -c22- "$WORK/blame")'; verify exits 1 with mismatch_cnt 8"

# A member failed during a (slow) check: the check stops, the array runs on.
# Failing dev0, whose corrupted page the check just named, makes reads of
# that page reconstruct it from the parity: the reference reads back.
mnt_ok "$L fail during check" "${MEMBERS[@]}"
echo 4000 >"$RFC/sync_speed_max" || fail "$L: cannot write sync_speed_max"
"$RAIDFUSE" check "$MNT" || fail "$L: raidfuse check failed"
sleep 0.5
[ "$(cat "$RFC/sync_action")" = check ] || fail "$L: the slow check is not running"
"$RAIDFUSE" fail "$MNT" dev0 2>"$WORK/cli.err" || fail "$L: fail during a check: $(cat "$WORK/cli.err")"
for ((i = 0; i < 20; i++)); do
	[ "$(cat "$RFC/sync_action")" = idle ] && break
	sleep 0.1
done
[ "$(cat "$RFC/sync_action")" = idle ] || fail "$L: the check still runs 2 s after a member failed"
at=$(jget 'j["sync_completed_sectors"]')
[ "$at" -lt "$DEV_SECTORS" ] || fail "$L: the check claims it completed though a member failed during it"
json_sane "$L failed during check" "$L" 5 1
region_is "$L failed during check" "$WORK/refA" 0
last=$(grep "check:" "$RFC/log" | tail -n1 | cut -c22-)
umnt
ok "$L: dev0 failed during a check: the check stops at $((at / 2)) KiB (log: '$last'); degraded reads rebuild the page dev0 had wrong"

log "PASS: $NCHECKS checks in $((SECONDS - T0)) s"
exit 0
