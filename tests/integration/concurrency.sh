#!/bin/bash
# concurrency.sh - many concurrent writers and readers on one raidfuse
# volume: no deadlock, no wrong data, consistent parity afterwards.
#
# Four arrays (64K chunks, 64M members): RAID5 (4 members) and RAID6 (5)
# with --cache-mib 2 (10 rows of cache: constant eviction; the RAID6 one
# also with only 4 FUSE threads, fewer than the requests in flight), and
# RAID5 and RAID6 with --cache-mib 0 (no cache: every request goes straight
# to the members under the row locks). On each, at the same time:
#   - fio, one run with every job below in parallel (crc32c verification,
#     verify_fatal):
#       col0..col3  [0, 48M): four jobs writing interleaved columns of a
#                   96K period (col0: 20K blocks with verify_backlog, col1:
#                   8K, col2: 4K, all buffered psync; col3: 64K O_DIRECT
#                   libaio iodepth 8), so all four write into the same
#                   chunks and rows at once; 96K is not a multiple of the
#                   chunk or row, so the columns meet every alignment;
#       nbr         [48M, 96M): numjobs=4 neighbouring regions (offset_increment
#                   12M-4K: boundaries in the middle of rows), random writes
#                   of 1k-128k with unaligned lengths (bs_unaligned),
#                   verify_backlog=16 (reads mixed with the writes);
#       seq         [128M, 160M): sequential 1M writes (whole rows);
#       seqq        [160M, 176M): sequential 1M O_DIRECT libaio writes,
#                   iodepth 8: rows split between requests in flight
#                   (write gathering, with the small cache's few rows);
#       rread, rbuf, sread  readers over the whole volume, racing every
#                   writer (not verified: they read ranges being written):
#                   random 4k-128k O_DIRECT libaio iodepth 4, random
#                   buffered 1k-64k unaligned, and a sequential O_DIRECT
#                   128k reader (the daemon's read-ahead);
#   - stress_rw (tests/tools/stress_rw.c) on [96M, 128M): 8 threads, each
#     with its own descriptor, writing, reading and fsyncing overlapping
#     runs of 2731-byte regions; every read of a locked run must return
#     exactly the latest write, and the final content is checked.
# Everything runs under a watchdog (CONCURRENCY_TIMEOUT seconds, default
# 120, per array): on expiry the daemon's threads' stacks (gdb) are printed
# and the test fails as a deadlock. Then raidfuse umount, raidfuse verify
# must report mismatch_cnt 0; mount again, fio --verify_only replays every
# writing job and stress_rw --check compares its area (the data persisted);
# umount, raidfuse verify again.
#
# Environment: STRESS_RW (default $TOP_BUILDDIR/tests/tools/stress_rw; when
# missing, built from the source into the scratch folder with cc),
# CONCURRENCY_SECONDS (stress_rw and reader run time, default 8),
# CONCURRENCY_TIMEOUT.

. "$(dirname "$0")/lib.sh"

require_fuse
require_cmd fio python3 timeout
[ -x "$RAIDFUSE" ] || fail "no raidfuse binary at $RAIDFUSE"
fio --enghelp 2>/dev/null | grep -qw libaio || skip "fio has no libaio engine"

START=$SECONDS
MB=$((1024 * 1024))
RUN_SECONDS=${CONCURRENCY_SECONDS:-8}
TIMEOUT=${CONCURRENCY_TIMEOUT:-120}
TOP_BUILDDIR=${TOP_BUILDDIR:-$(dirname "$RAIDFUSE")}
STRESS_RW=${STRESS_RW:-$TOP_BUILDDIR/tests/tools/stress_rw}

if [ ! -x "$STRESS_RW" ]; then
	src=$TOP_SRCDIR/tests/tools/stress_rw.c
	[ -f "$src" ] || fail "no stress_rw at $STRESS_RW and no source at $src"
	cc=${CC:-cc}
	command -v "$cc" >/dev/null || fail "no stress_rw at $STRESS_RW and no C compiler to build it"
	"$cc" -O2 -Wall -Wextra -pthread -o "$WORK/stress_rw" "$src" >"$WORK/cc.out" 2>&1 ||
		fail "cannot build stress_rw: $(cat "$WORK/cc.out")"
	STRESS_RW=$WORK/stress_rw
	log "built $STRESS_RW from $src"
fi

# stacks PID: every thread's backtrace, for a deadlock report.
stacks() {
	local pid=$1
	[ -n "$pid" ] && [ -e "/proc/$pid" ] || {
		echo "(daemon $pid is gone)"
		return
	}
	if command -v gdb >/dev/null; then
		timeout 60 gdb -p "$pid" -batch -ex 'set pagination off' -ex 'thread apply all bt' 2>&1 |
			grep -Ev '^\[(New LWP|Thread debugging|Using host)' | head -n 400
	else
		local t
		for t in /proc/"$pid"/task/*; do
			echo "--- ${t##*/}: $(cat "$t/comm") $(cat "$t/wchan" 2>/dev/null)"
			cat "$t/stack" 2>/dev/null
		done | head -n 200
	fi
}

# The fio jobs. fio_jobs FILE > JOBFILE; the readers are the sections
# rread, rbuf and sread (left out of the --verify_only replay).
WRITER_SECTIONS=(col0 col1 col2 col3 nbr seq seqq)
fio_jobs() {
	cat <<EOF
[global]
filename=$1
ioengine=psync
verify=crc32c
verify_fatal=1
do_verify=1
verify_state_save=0
randrepeat=1
group_reporting=0
thread=1

[col0]
offset=0
size=48M
rw=write:76k
bs=20k
verify_backlog=32

[col1]
offset=20k
size=48M
rw=write:88k
bs=8k

[col2]
offset=28k
size=48M
rw=write:92k
bs=4k

[col3]
offset=32k
size=48M
rw=write:32k
bs=64k
ioengine=libaio
iodepth=8
direct=1

[nbr]
numjobs=4
offset=48M
offset_increment=12284k
size=12284k
rw=randwrite
bsrange=1k-128k
bs_unaligned=1
verify_backlog=16

[seq]
offset=128M
size=32M
rw=write
bs=1M

[seqq]
offset=160M
size=16M
rw=write
bs=1M
ioengine=libaio
iodepth=8
direct=1

[rread]
verify=0
do_verify=0
offset=0
size=184M
rw=randread
bsrange=4k-128k
ioengine=libaio
iodepth=4
direct=1
time_based=1
runtime=$RUN_SECONDS

[rbuf]
verify=0
do_verify=0
offset=0
size=184M
rw=randread
bsrange=1k-64k
bs_unaligned=1
time_based=1
runtime=$RUN_SECONDS

[sread]
verify=0
do_verify=0
offset=0
size=184M
rw=read
bs=128k
direct=1
time_based=1
runtime=$RUN_SECONDS
EOF
}

# fio_report WHAT JSON: no job error, and every writing job wrote.
fio_report() {
	python3 - "$@" <<'EOF' || exit 1
import json, sys
what, path = sys.argv[1], sys.argv[2]
txt = open(path).read()
try:
    doc = json.loads(txt[txt.index("{"):])
except Exception as e:
    print(f"concurrency: FAIL: {what}: cannot parse fio output ({e}): {txt[:2000]}", file=sys.stderr)
    sys.exit(1)
w = r = 0
for job in doc["jobs"]:
    if job.get("error", 0):
        print(f"concurrency: FAIL: {what}: fio job {job['jobname']} error {job['error']}", file=sys.stderr)
        sys.exit(1)
    w += job["write"]["io_bytes"]
    r += job["read"]["io_bytes"]
print(f"{len(doc['jobs'])} fio jobs, {w >> 20} MiB written, {r >> 20} MiB read")
EOF
}

# wait_all WHAT MNT PID...: wait for the PIDs (background jobs of this shell);
# fail as a deadlock, with the daemon's stacks, if they are not done within
# $TIMEOUT s. Sets RCS to their exit statuses.
wait_all() {
	local what=$1 mnt=$2 pid left t
	shift 2
	local pids=("$@")
	for ((t = 0; t < TIMEOUT * 10; t++)); do
		left=0
		for pid in "${pids[@]}"; do
			kill -0 "$pid" 2>/dev/null && left=1
		done
		[ "$left" = 0 ] && break
		sleep 0.1
	done
	if [ "$left" = 1 ]; then
		local dpid
		dpid=$(cat "$WORK/daemon.pid")
		log "$what: not done after $TIMEOUT s: deadlock? daemon $dpid threads:"
		stacks "$dpid" >"$WORK/stacks.txt" 2>&1
		cat "$WORK/stacks.txt" >&2
		for pid in "${pids[@]}"; do
			echo "--- waiting process $pid: $(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null)" >&2
			cat /proc/"$pid"/task/*/stack 2>/dev/null | head -n 30 >&2
			kill -9 "$pid" 2>/dev/null
		done
		kill -9 "$dpid" 2>/dev/null
		fusermount3 -u -z "$mnt" 2>/dev/null
		fail "$what: I/O did not finish within $TIMEOUT s (deadlock?); stacks above"
	fi
	RCS=()
	for pid in "${pids[@]}"; do
		local rc=0
		wait "$pid" || rc=$?
		RCS+=("$rc")
	done
}

# umount_verify TAG MNT MEMBER...
umount_verify() {
	local tag=$1 mnt=$2 rc=0
	shift 2
	timeout "$TIMEOUT" "$RAIDFUSE" umount "$mnt" >"$WORK/umount.out" 2>&1 || rc=$?
	if [ "$rc" = 124 ]; then
		log "$tag: raidfuse umount hung; daemon threads:"
		stacks "$(cat "$WORK/daemon.pid")" >&2
		fail "$tag: raidfuse umount did not return within $TIMEOUT s"
	fi
	[ "$rc" = 0 ] || fail "$tag: raidfuse umount failed: $(cat "$WORK/umount.out")"
	rc=0
	"$RAIDFUSE" verify "$@" >"$WORK/verify.out" 2>&1 || rc=$?
	[ "$rc" = 0 ] && grep -qx 'mismatch_cnt: 0' "$WORK/verify.out" ||
		fail "$tag: raidfuse verify exited $rc: $(cat "$WORK/verify.out")"
}

# mount_array TAG OPTS... MEMBER... MNT: records the daemon pid.
mount_array() {
	local mnt=${*: -1}
	rf_mount "$@"
	cat "$mnt/.raidfuse/pid" >"$WORK/daemon.pid" || fail "$1: no .raidfuse/pid"
}

case_run() { # case_run TAG LEVEL N MOUNT-OPTS...
	local tag=$1 level=$2 n=$3 i t0=$SECONDS
	shift 3
	local opts=("$@") d=$WORK/$tag members=()
	mkdir -p "$d"
	for ((i = 0; i < n; i++)); do members+=("$d/m$i"); done
	local mnt=$d/mnt img=$d/mnt/volume.img
	"$RAIDFUSE" create --level "$level" --raid-devices "$n" --chunk 64K --size 64M "${members[@]}" \
		>"$d/create.out" 2>&1 || fail "$tag: raidfuse create failed: $(cat "$d/create.out")"
	mount_array "${opts[@]}" "${members[@]}" "$mnt"
	local vol
	vol=$(stat -c %s "$img")
	[ "$vol" -ge $((184 * MB)) ] || fail "$tag: volume.img is only $vol bytes"

	fio_jobs "$img" >"$d/jobs.fio"
	(cd "$d" && exec fio --output-format=json --output="$d/fio.json" "$d/jobs.fio") >"$d/fio.err" 2>&1 &
	local fpid=$!
	"$STRESS_RW" -t 8 -s "$RUN_SECONDS" -S "$((RANDOM * 32768 + RANDOM))" -o "$d/stress.state" \
		"$img" $((96 * MB)) $((32 * MB)) >"$d/stress.out" 2>&1 &
	local spid=$!
	wait_all "$tag: fio + stress_rw" "$mnt" "$fpid" "$spid"
	local frc=${RCS[0]} src=${RCS[1]}
	[ "$src" = 0 ] || fail "$tag: stress_rw exited $src: $(cat "$d/stress.out")"
	if [ "$frc" != 0 ] || grep -qiE 'verify.*(bad|fail)|mismatch|crc' "$d/fio.err"; then
		fail "$tag: fio exited $frc: $(grep -v 'multiple writers may overwrite' "$d/fio.err" | head -c 3000)"
	fi
	local frep
	frep=$(fio_report "$tag" "$d/fio.json") || exit 1
	local sline
	sline=$(sed -n 's/^stress_rw: //p' "$d/stress.out")
	umount_verify "$tag" "$mnt" "${members[@]}"

	# The data persisted: replay the writing jobs verify-only, recheck stress_rw.
	mount_array "${opts[@]}" "${members[@]}" "$mnt"
	local sec=()
	for i in "${WRITER_SECTIONS[@]}"; do sec+=(--section="$i"); done
	(cd "$d" && exec timeout "$TIMEOUT" fio --output-format=json --output="$d/fio2.json" --verify_only \
		"${sec[@]}" "$d/jobs.fio") >"$d/fio2.err" 2>&1 &
	fpid=$!
	wait_all "$tag: fio --verify_only after remount" "$mnt" "$fpid"
	[ "${RCS[0]}" = 0 ] || fail "$tag: fio --verify_only after remount exited ${RCS[0]}: $(grep -v 'multiple writers may overwrite' "$d/fio2.err" | head -c 3000)"
	fio_report "$tag verify-only" "$d/fio2.json" >/dev/null || exit 1
	timeout "$TIMEOUT" "$STRESS_RW" --check "$img" "$d/stress.state" >"$d/stress2.out" 2>&1 ||
		fail "$tag: stress_rw --check after remount: $(cat "$d/stress2.out")"
	umount_verify "$tag" "$mnt" "${members[@]}"
	log "$tag: $frep; stress_rw: $sline; verify-only after remount ok; mismatch_cnt 0 ($((SECONDS - t0)) s)"
	rm -rf "$d"
}

case_run raid5-cache2 5 4 --cache-mib 2 --flush-age-ms 100
case_run raid6-cache2-t4 6 5 --cache-mib 2 --flush-age-ms 100 --threads 4
case_run raid5-nocache 5 4 --cache-mib 0
case_run raid6-nocache 6 5 --cache-mib 0

log "PASS ($((SECONDS - START)) s)"
exit 0
