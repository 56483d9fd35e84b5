#!/bin/bash
# crash.sh - kill -9 the raidfuse daemon in the middle of fsync-heavy work,
# remount (the array comes back dirty and is resynced) and check that every
# write that was fsynced survived and that parity (or the copies) agree.
#
# CRASH_ITERATIONS iterations (default 20), in turn on a 4-member RAID5, a
# 5-member RAID6 and a 4-member RAID10 (64K chunks, 64M members, md's
# write-intent bitmap), each mounted with a small stripe cache (RAID5/6)
# and a short flush age (--cache-mib 4, 1 or now and then 0,
# --flush-age-ms 20, 100 or 500, chosen per iteration) so that the flusher,
# eviction and fsync all race with the kill:
#   1. raidfuse mount; read the daemon's pid from MOUNT/.raidfuse/pid;
#   2. start fsync_writer on MOUNT/volume.img (random aligned and unaligned
#      pwrites with deterministic content, fsync/fdatasync every 1-8 writes
#      or now and then 9-64, a log of what each successful fsync made
#      durable, see tests/tools/fsync_writer.c); it must still be running
#      when...
#   3. ...after a random 0.2-1.5 s the daemon gets SIGKILL; then the writer
#      is killed (it usually has already stopped with "connection
#      aborted"), and the dead mount is detached (fusermount3 -u -z);
#   4. raidfuse mount again with all members: must succeed (the array is
#      dirty, so raidfuse resyncs it first);
#   5. fsync_writer --check: every byte whose latest write was fsynced reads
#      back exactly, and bytes overwritten afterwards by writes never
#      fsynced hold the fsynced data or one of those later writes' data;
#   6. raidfuse umount; the members read State clean (mdadm --examine, when
#      installed); raidfuse verify must report mismatch_cnt: 0.
# One writer iteration in four (CRASH_UMOUNT_PCT, default 25) kills at
# unmount instead, with --cache-mib 16 --flush-age-ms 10000: after 0.2-1.5
# s the writer gets SIGUSR1 and stops
# calling fsync, so 0.1-0.3 s of unsynced writes pile up in the cache; then
# the writer is killed, raidfuse umount started, and the daemon killed 0-80
# ms later, while it flushes its cache and marks the members clean. Steps
# 4-6 follow; when the remount finds the array clean (the umount finished
# before the kill) the check is stricter (--acked): every write the writer
# saw acknowledged, fsynced or not, must be on the volume, since raidfuse
# marks the members clean only after its last flush.
# Every sixth iteration, on RAID10, kills the daemon in a rebuild: the array
# is mounted without its last member, a blank file of the same size takes
# that member's place and is added as the writer starts (the rebuild held
# to 12 MB/s: 64 MiB in 5.4 s), and the kill comes 2.2-3.7 s later, past
# its first checkpoint; the remount (--run) resumes the rebuild from the
# recovery_offset the kill left; once the rebuild ends the array must be
# whole, and steps 5-6 check the data and that the copies agree.
# One iteration in three (CRASH_POWER_CUT_PCT, default 33) is a power
# cut rather than a crash: a SIGKILL loses nothing the daemon handed to the
# kernel, so only a power cut shows a sync that did not reach the members.
# The daemon runs with tests/tools/power_cut_log.c preloaded, which logs
# every write and sync it makes on the members; after the kill,
# tests/tools/power_cut_replay.py rebuilds each member from a copy taken
# before the mount plus the logged writes, keeping on each 4 KiB page every
# write a sync surely made durable and, of the later ones, none (min), all
# (max) or a random number (rand), chosen per iteration. Steps 4-6 then run
# on the rebuilt members, and the umount variant's --acked check holds
# whenever the members' clean mark survived the cut. The ext4 variant
# below is cut the same way: then what e2fsck and the synced files show is
# what ext4's journal commits and flushes made durable through the loop
# device, FUSE and raidfuse down to the members.
# Every CRASH_EXT4_EVERY-th iteration (default 5; 0 = never) is the ext4
# variant instead, on a second array of the same level with ext4 on it
# (mkfs.ext4 once): loop-mount it, a writer creates files and appends to a
# log file, calling syncfs (sync -f) every few files and recording the
# sha256 of what each successful syncfs covered; kill -9 the daemon mid-way,
# kill the writer, umount -l the loop mount (it sees I/O errors), detach the
# loop device, detach the dead FUSE mount, raidfuse mount again; then
# e2fsck -fy (replays the journal) must exit 0 or 1 and report no repair
# beyond the journal replay, orphan processing and the superblock's free
# block/inode totals (CRASH_EXT4_STRICT=0 to allow any repair), e2fsck -fn
# must then exit 0, every synced file must have its recorded content (the
# log file at least its synced prefix), and after umount raidfuse verify
# must report mismatch_cnt: 0. The ext4 variant needs root (loop devices);
# without it only the fsync_writer iterations run.
#
# Environment: CRASH_ITERATIONS, CRASH_SEED (default: from the clock; printed,
# so a failing run can be replayed - as far as timing allows), CRASH_EXT4_EVERY,
# CRASH_EXT4_STRICT, CRASH_UMOUNT_PCT, CRASH_POWER_CUT_PCT, FSYNC_WRITER (default $TOP_BUILDDIR/tests/tools/fsync_writer;
# when it is missing, the source is compiled into the scratch folder with
# cc; the power-cut library is always compiled there), and CRASH_KEEP_FAILED=DIR (on a failure, copy the members and logs
# there).

. "$(dirname "$0")/lib.sh"

require_fuse
require_cmd fusermount3 sha256sum
[ -x "$RAIDFUSE" ] || fail "no raidfuse binary at $RAIDFUSE"

START=$SECONDS
ITERATIONS=${CRASH_ITERATIONS:-20}
SEED=${CRASH_SEED:-$(($(date +%s%N) / 1000 % 1000000000))}
EXT4_EVERY=${CRASH_EXT4_EVERY:-5}
EXT4_STRICT=${CRASH_EXT4_STRICT:-1}
UMOUNT_PCT=${CRASH_UMOUNT_PCT:-25}
POWER_CUT_PCT=${CRASH_POWER_CUT_PCT:-33}
KEEP_FAILED=${CRASH_KEEP_FAILED:-}
TOP_BUILDDIR=${TOP_BUILDDIR:-$(dirname "$RAIDFUSE")}
FSYNC_WRITER=${FSYNC_WRITER:-$TOP_BUILDDIR/tests/tools/fsync_writer}
RANDOM=$SEED

case $ITERATIONS in '' | *[!0-9]*) fail "CRASH_ITERATIONS='$ITERATIONS' is not a number" ;; esac
case $POWER_CUT_PCT in '' | *[!0-9]*) fail "CRASH_POWER_CUT_PCT='$POWER_CUT_PCT' is not a number" ;; esac

if [ ! -x "$FSYNC_WRITER" ]; then
	src=$TOP_SRCDIR/tests/tools/fsync_writer.c
	[ -f "$src" ] || fail "no fsync_writer at $FSYNC_WRITER and no source at $src"
	cc=${CC:-cc}
	command -v "$cc" >/dev/null || fail "no fsync_writer at $FSYNC_WRITER and no C compiler to build it"
	"$cc" -O2 -Wall -Wextra -o "$WORK/fsync_writer" "$src" >"$WORK/cc.out" 2>&1 ||
		fail "cannot build fsync_writer: $(cat "$WORK/cc.out")"
	FSYNC_WRITER=$WORK/fsync_writer
	log "built $FSYNC_WRITER from $src"
fi

POWER_CUT_LIB=$WORK/power_cut_log.so
POWER_CUT_REPLAY=$TOP_SRCDIR/tests/tools/power_cut_replay.py
if [ "$POWER_CUT_PCT" != 0 ] && ! command -v python3 >/dev/null; then
	# The crashes are still worth running without the power cuts.
	log "python3 is not installed: no power cuts (as CRASH_POWER_CUT_PCT=0)"
	POWER_CUT_PCT=0
fi
if [ "$POWER_CUT_PCT" != 0 ]; then
	command -v "${CC:-cc}" >/dev/null || fail "no C compiler to build the power-cut library (CRASH_POWER_CUT_PCT=0 leaves the power cuts out)"
	# Not with the build's CFLAGS: a sanitizer runtime must come first in
	# a process, and this library is preloaded (cut_mount tells a
	# sanitized raidfuse's runtime not to mind that it comes second).
	"${CC:-cc}" -O2 -Wall -Wextra -shared -fPIC -o "$POWER_CUT_LIB" \
		"$TOP_SRCDIR/tests/tools/power_cut_log.c" -ldl -lpthread >"$WORK/cc-pc.out" 2>&1 ||
		fail "cannot build the power-cut library: $(cat "$WORK/cc-pc.out")"
	# The machinery must be able to lose something, or the power cuts
	# would pass vacuously: page 0 written and fdatasynced, page 1 written
	# after; the cut "min" keeps page 0 only, "max" both.
	mkdir -p "$WORK/pcself/snap" && truncate -s 8192 "$WORK/pcself/snap/f" &&
		cp "$WORK/pcself/snap/f" "$WORK/pcself/f" || fail "power-cut self-test: cannot make its file"
	cat >"$WORK/pcself/writer.c" <<'EOF_C'
#define _GNU_SOURCE
#include <fcntl.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>
int main(int argc, char **argv)
{
	char page[4096];
	struct iovec iov = { page, sizeof(page) };
	int fd = argc == 2 ? open(argv[1], O_WRONLY) : -1;
	memset(page, 'A', sizeof(page));
	if (fd < 0 || pwritev2(fd, &iov, 1, 0, 0) != 4096 || fdatasync(fd) != 0)
		return 1;
	memset(page, 'B', sizeof(page));
	return pwritev2(fd, &iov, 1, 4096, 0) == 4096 ? 0 : 1;
}
EOF_C
	"${CC:-cc}" -O2 -o "$WORK/pcself/writer" "$WORK/pcself/writer.c" >"$WORK/cc-pc.out" 2>&1 ||
		fail "power-cut self-test: cannot build its writer: $(cat "$WORK/cc-pc.out")"
	LD_PRELOAD=$POWER_CUT_LIB POWER_CUT_LOG=$WORK/pcself/log POWER_CUT_PREFIX=$(realpath "$WORK/pcself")/f \
		"$WORK/pcself/writer" "$WORK/pcself/f" || fail "power-cut self-test: its writer failed"
	for mode in min max; do
		cp "$WORK/pcself/snap/f" "$WORK/pcself/f"
		python3 "$POWER_CUT_REPLAY" "$WORK/pcself/log" "$WORK/pcself/snap" "$mode" 1 "$WORK/pcself/f" \
			>"$WORK/pcself/out" 2>&1 || fail "power-cut self-test: replay $mode: $(cat "$WORK/pcself/out")"
		got=$(od -An -c -j 0 -N 1 "$WORK/pcself/f" | tr -d ' ')$(od -An -c -j 4096 -N 1 "$WORK/pcself/f" | tr -d ' ')
		want=AB
		[ "$mode" = min ] && want='A\0'
		[ "$got" = "$want" ] || fail "power-cut self-test: the $mode cut left '$got', expected '$want' ($(cat "$WORK/pcself/out"))"
	done
	log "power-cut self-test: a synced page survives every cut, a later one only some"
fi

EXT4=1
if [ "$EXT4_EVERY" = 0 ]; then
	EXT4=0
elif [ "$(id -u)" != 0 ]; then
	EXT4=0
	log "not root: the ext4 variant (loop devices) is left out"
else
	for c in mkfs.ext4 e2fsck losetup findmnt; do
		command -v "$c" >/dev/null || skip "$c is not installed"
	done
fi
HAVE_MDADM=0
command -v mdadm >/dev/null && HAVE_MDADM=1

log "seed $SEED (CRASH_SEED=$SEED replays this run), $ITERATIONS iterations, fsync_writer $FSYNC_WRITER"

# --- helpers -------------------------------------------------------------------

# ms_sleep MS
ms_sleep() { sleep "$(($1 / 1000)).$(printf '%03d' $(($1 % 1000)))"; }

# ms_since T0_NS: milliseconds since the date +%s%N value T0_NS.
now_ns() { date +%s%N; }
ms_since() { echo $((($(now_ns) - $1) / 1000000)); }

# Gone, or a zombie nobody reaps.
# Every thread counts: a thread-group leader shows Z as soon as it exits,
# while other threads may still be finishing a system call and holding the
# process's files (and so its locks on the members).
proc_gone() {
	local t st
	[ -e "/proc/$1" ] || return 0
	for t in /proc/"$1"/task/*; do
		st=$(sed 's/.*) //' "$t/stat" 2>/dev/null | cut -c1)
		[ -z "$st" ] || [ "$st" = Z ] || [ "$st" = X ] || return 1
	done
	return 0
}

# threads PID: one line per thread: tid, state, wchan, name.
threads() {
	local t
	for t in /proc/"$1"/task/*; do
		[ -e "$t/stat" ] || continue
		echo "${t##*/} $(sed 's/.*) //' "$t/stat" 2>/dev/null | cut -c1) $(cat "$t/wchan" 2>/dev/null) $(cat "$t/comm" 2>/dev/null)"
	done
}

# stacks PID: every thread's backtrace (for a report), when gdb is there.
stacks() {
	if command -v gdb >/dev/null; then
		timeout 60 gdb -p "$1" -batch -ex 'thread apply all bt' 2>&1 | grep -v '^\[New LWP' | head -n 300
	else
		cat "/proc/$1/task/"*/stack 2>/dev/null | head -n 100
	fi
}

# wait_gone PID WHAT SECONDS
wait_gone() {
	local pid=$1 what=$2 i
	for ((i = 0; i < $3 * 20; i++)); do
		proc_gone "$pid" && return 0
		sleep 0.05
	done
	fail "$what (pid $pid) still there after $3 s; threads (tid state wchan name):
$(threads "$pid")
kernel stacks: $(cat "/proc/$pid/task/"*/stack 2>/dev/null | head -n 60)"
}

# wait_unlocked TAG DPID MEMBER...: once the killed daemon is gone its locks
# on the members must be gone too (a new mount takes them); wait up to 10 s,
# then fail with who holds them.
wait_unlocked() {
	local tag=$1 dpid=$2 i m busy
	shift 2
	command -v flock >/dev/null || return 0
	for ((i = 0; i < 200; i++)); do
		busy=""
		for m in "$@"; do
			flock -n -s "$m" true 2>/dev/null || busy="$busy $m"
		done
		[ -z "$busy" ] && return 0
		sleep 0.05
	done
	fail "$tag: members$busy still locked 10 s after the killed daemon $dpid exited; holders: $(fuser -v "$@" 2>&1 | grep -v "Cannot stat" | head -n 20); daemon threads: $(threads "$dpid")"
}

# detach_dead MNT: lazily detach a FUSE mount whose daemon is dead.
detach_dead() {
	local mnt=$1
	if grep -qs " $mnt fuse" /proc/mounts; then
		fusermount3 -u -z "$mnt" >"$WORK/fm.out" 2>&1 || umount -l "$mnt" >>"$WORK/fm.out" 2>&1 ||
			fail "cannot detach the dead mount $mnt: $(cat "$WORK/fm.out")"
	fi
	grep -qs " $mnt fuse" /proc/mounts && fail "$mnt is still mounted after fusermount3 -u -z"
	return 0
}

# keep_evidence TAG FILE...: copy members and logs for a post-mortem.
keep_evidence() {
	[ -n "$KEEP_FAILED" ] || return 0
	local tag=$1
	shift
	mkdir -p "$KEEP_FAILED/$tag" && cp -a "$@" "$KEEP_FAILED/$tag/" 2>/dev/null &&
		log "evidence kept in $KEEP_FAILED/$tag"
}

# remount_dirty TAG OPTS... MEMBER... MNT: the mount after the crash must
# succeed; sets REMOUNT_MS.
remount_dirty() {
	local tag=$1 t0
	shift
	local mnt=${*: -1}
	t0=$(now_ns)
	local rc=0
	timeout 300 "$RAIDFUSE" mount "$@" >"$WORK/mount.out" 2>&1 || rc=$?
	[ "$rc" = 0 ] || fail "$tag: raidfuse mount after the crash failed (exit $rc): $(cat "$WORK/mount.out")
processes with the members open: $(fuser -v "${MEM[@]}" 2>&1 | grep -v "Cannot stat" | head -n 20)"
	REMOUNT_MS=$(ms_since "$t0")
	[ -f "$mnt/volume.img" ] || fail "$tag: no volume.img after the remount"
}

# umount_verify TAG MNT MEMBER...: raidfuse umount, members clean, and
# raidfuse verify must report mismatch_cnt 0.
umount_verify() {
	local tag=$1 mnt=$2 m
	shift 2
	"$RAIDFUSE" umount "$mnt" >"$WORK/umount.out" 2>&1 ||
		fail "$tag: raidfuse umount failed: $(cat "$WORK/umount.out")"
	if [ "$HAVE_MDADM" = 1 ]; then
		for m in "$@"; do
			mdadm --examine "$m" >"$WORK/ex" 2>&1 || fail "$tag: mdadm --examine $m failed: $(cat "$WORK/ex")"
			grep -Eq '^ *State : clean$' "$WORK/ex" ||
				fail "$tag: $m not clean after umount: $(grep 'State :' "$WORK/ex")"
		done
	fi
	local rc=0
	"$RAIDFUSE" verify "$@" >"$WORK/verify.out" 2>&1 || rc=$?
	if [ "$rc" != 0 ] || ! grep -qx 'mismatch_cnt: 0' "$WORK/verify.out"; then
		keep_evidence "$tag" "$@"
		fail "$tag: raidfuse verify exited $rc: $(cat "$WORK/verify.out")"
	fi
}

# --- the arrays ----------------------------------------------------------------
# make_array DIR LEVEL N: sets nothing; members are DIR/m0..m(N-1).
make_array() {
	local d=$1 level=$2 n=$3 i mem=()
	mkdir -p "$d/mnt"
	for ((i = 0; i < n; i++)); do mem+=("$d/m$i"); done
	"$RAIDFUSE" create --level "$level" --raid-devices "$n" --chunk 64K --size 64M "${mem[@]}" \
		>"$d/create.out" 2>&1 || fail "raidfuse create $d failed: $(cat "$d/create.out")"
	track_mount "$d/mnt"
}
members_of() { # members_of DIR N: sets MEM
	local i
	MEM=()
	for ((i = 0; i < $2; i++)); do MEM+=("$1/m$i"); done
}
make_array "$WORK/r5" 5 4
make_array "$WORK/r6" 6 5
make_array "$WORK/r10" 10 4
if [ "$EXT4" = 1 ]; then
	make_array "$WORK/e5" 5 4
	make_array "$WORK/e6" 6 5
	make_array "$WORK/e10" 10 4
fi
declare -A FORMATTED=()

TOTAL_WRITES=0
TOTAL_DURABLE=0
TOTAL_EXACT=0
TOTAL_FILES=0
NR_WRITER=0
NR_EXT4=0
NR_POWER_CUT=0
TOTAL_PAGES_CUT=0

# kill_daemon PID: SIGKILL, if PID is still a raidfuse process (it may just
# have exited on its own, in the umount variant).
kill_daemon() {
	[ "$(cat "/proc/$1/comm" 2>/dev/null)" = raidfuse ] || return 0
	kill -9 "$1" 2>/dev/null
	return 0
}

# --- power cuts ------------------------------------------------------------------
# cut_mount CUT DIR MOUNT-ARGS...: raidfuse mount; for a power cut (CUT not
# none), with the members of DIR (MEM) copied first and the daemon logging
# what it writes to them.
cut_mount() {
	local cut=$1 dir=$2
	shift 2
	if [ "$cut" = none ]; then
		rf_mount "$@"
		return
	fi
	rm -rf "$WORK/snapshot" "$WORK/power_cut.log" && mkdir "$WORK/snapshot" || fail "cannot make $WORK/snapshot"
	cp --sparse=always "${MEM[@]}" "$WORK/snapshot/" || fail "cannot copy the members to $WORK/snapshot"
	LD_PRELOAD=$POWER_CUT_LIB POWER_CUT_LOG=$WORK/power_cut.log POWER_CUT_PREFIX=$(realpath "$dir")/ \
		ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0 rf_mount "$@"
}

# cut_replay TAG CUT SEED: after the kill, the members (MEM) as the power
# cut leaves them; appends what was replayed to HOW.
cut_replay() {
	local tag=$1 cut=$2 seed=$3 pages
	[ "$cut" = none ] && return 0
	python3 "$POWER_CUT_REPLAY" "$WORK/power_cut.log" "$WORK/snapshot" "$cut" "$seed" "${MEM[@]}" \
		>"$WORK/replay.out" 2>&1 || fail "$tag: power_cut_replay.py failed: $(cat "$WORK/replay.out")"
	HOW="$HOW, then power cut ($cut): $(sed -n 's/^power cut ([a-z]*): //p' "$WORK/replay.out")"
	pages=$(sed -n 's/.*durable, \([0-9]*\) pages lost.*/\1/p' "$WORK/replay.out")
	TOTAL_PAGES_CUT=$((TOTAL_PAGES_CUT + ${pages:-0}))
	NR_POWER_CUT=$((NR_POWER_CUT + 1))
	rm -rf "$WORK/snapshot" "$WORK/power_cut.log"
}

# --- the fsync_writer iteration -----------------------------------------------
# writer_iteration IT TAG DIR N write|umount|rebuild CUT OPTS...: "write"
# kills the daemon while fsync_writer runs; "umount" stops the writer's
# fsyncs, kills it a little later, starts raidfuse umount and kills the
# daemon 0-80 ms later (before, during or after its final flush and the
# superblocks' clean mark); "rebuild" mounts without the last member, puts
# a blank file in its place and adds it as the writer starts, so that the
# kill lands in its rebuild, which the remount resumes from its
# recovery_offset. CUT is none (a crash), or min, rand or max: a power cut
# at the kill, replayed as power_cut_replay.py's mode of that name.
writer_iteration() {
	local it=$1 tag=$2 dir=$3 n=$4 mode=$5 cut=$6
	shift 6
	local opts=("$@")
	members_of "$dir" "$n"
	local mnt=$dir/mnt img=$dir/mnt/volume.img
	local wlog=$WORK/writer.$it.log werr=$WORK/writer.$it.err
	local run_ms=$((200 + RANDOM % 1301)) wseed=$((SEED * 1000 + it))
	local mounted=("${MEM[@]}") newcomer=""

	if [ "$mode" = rebuild ]; then
		# A new disk in the last member's place: blank, the same size.
		newcomer=${MEM[n - 1]}
		local bytes
		bytes=$(stat -c %s "$newcomer") && rm -f "$newcomer" && truncate -s "$bytes" "$newcomer" ||
			fail "$tag: cannot blank $newcomer"
		mounted=("${MEM[@]:0:n-1}")
		opts+=(--run)
		# Past the rebuild's first checkpoint (2 s), and before its end.
		run_ms=$((2200 + RANDOM % 1500))
	fi
	cut_mount "$cut" "$dir" "${opts[@]}" "${mounted[@]}" "$mnt"
	local dpid
	dpid=$(cat "$mnt/.raidfuse/pid") || fail "$tag: cannot read $mnt/.raidfuse/pid"
	case $dpid in '' | *[!0-9]*) fail "$tag: .raidfuse/pid holds '$dpid'" ;; esac
	kill -0 "$dpid" 2>/dev/null || fail "$tag: daemon pid $dpid is not running"

	"$FSYNC_WRITER" "$img" "$wseed" "$wlog" 2>"$werr" &
	local wpid=$!
	if [ -n "$newcomer" ]; then
		# Slow enough for the kill to land in it: 12000 KiB/s copies 64 MiB
		# in 5.4 s (at 20000 it ended at 3.3 s, before 40% of the kills).
		echo 12000 >"$mnt/.raidfuse/sync_speed_max" || fail "$tag: cannot set sync_speed_max"
		"$RAIDFUSE" add "$mnt" "$newcomer" >"$WORK/add.out" 2>&1 ||
			fail "$tag: raidfuse add $newcomer: $(cat "$WORK/add.out")"
	fi
	ms_sleep "$run_ms"
	if ! kill -0 "$wpid" 2>/dev/null; then
		local wrc=0
		wait "$wpid" || wrc=$?
		fail "$tag: fsync_writer stopped (exit $wrc) while the daemon was still running: $(cat "$werr")"
	fi
	local HOW
	if [ "$mode" != umount ]; then
		kill -9 "$dpid" || fail "$tag: cannot kill the daemon $dpid"
		# The writer's next request fails with ECONNABORTED; kill it anyway.
		ms_sleep $((RANDOM % 50))
		kill -9 "$wpid" 2>/dev/null
		wait "$wpid" 2>/dev/null
		HOW="daemon killed after $run_ms ms of writing"
	else
		# No more fsyncs: dirty rows pile up in the cache for umount.
		local pile_ms=$((100 + RANDOM % 201))
		kill -USR1 "$wpid"
		ms_sleep "$pile_ms"
		kill -9 "$wpid" 2>/dev/null
		wait "$wpid" 2>/dev/null
		local kill_ms=$((RANDOM % 81))
		"$RAIDFUSE" umount "$mnt" >"$WORK/umount-k.out" 2>&1 &
		local upid=$!
		ms_sleep "$kill_ms"
		kill_daemon "$dpid"
		wait "$upid" 2>/dev/null
		HOW="writer stopped fsyncing after $run_ms ms and killed $pile_ms ms later, daemon killed $kill_ms ms into umount"
	fi
	wait_gone "$dpid" "$tag: the killed daemon" 10
	wait_unlocked "$tag" "$dpid" "${MEM[@]}"
	detach_dead "$mnt"
	cut_replay "$tag" "$cut" "$wseed"
	if [ -n "$newcomer" ] && [ "$HAVE_MDADM" = 1 ]; then
		# Where the kill left the rebuild, as the members say it.
		local role recovery
		role=$(ex_field "$newcomer" 'Device Role')
		recovery=$(ex_field "$newcomer" 'Recovery Offset')
		HOW="$HOW, the new member ${role:-blank}${recovery:+ at recovery offset ${recovery%% *} sectors}"
	fi

	remount_dirty "$tag" "${opts[@]}" "${MEM[@]}" "$mnt"
	local state=clean
	grep -q 'not stopped cleanly' "$WORK/mount.out" && state=dirty
	# Marked clean (by a finished umount): every acknowledged write is there.
	local acked=()
	[ "$state" = clean ] && [ "$mode" = umount ] && acked=(--acked)
	local crc=0
	timeout 300 "$FSYNC_WRITER" --check "${acked[@]}" "$img" "$wlog" >"$WORK/check.out" 2>&1 || crc=$?
	if [ "$crc" = 124 ]; then
		local npid
		npid=$(cat "$mnt/.raidfuse/pid" 2>/dev/null)
		fail "$tag: the checker hung for 300 s reading the remounted volume; daemon $npid stacks:
$(stacks "$npid")"
	fi
	if [ "$crc" != 0 ]; then
		cp "$wlog" "$WORK/check.out" "$dir/" 2>/dev/null
		"$RAIDFUSE" umount "$mnt" >/dev/null 2>&1
		keep_evidence "$tag" "${MEM[@]}" "$wlog" "$werr" "$WORK/check.out"
		local lost="fsynced data lost or damaged after the crash"
		[ "${#acked[@]}" = 0 ] || lost="acknowledged data missing although the array was marked clean (the umount finished before the kill)"
		fail "$tag: $lost (checker exit $crc; writer seed $wseed; $HOW):
$(head -n 30 "$WORK/check.out")"
	fi
	if [ -n "$newcomer" ]; then
		# The rebuild resumed (or, if the add never reached the members,
		# the blank file was taken as a spare); verify compares its copy.
		"$RAIDFUSE" wait "$mnt" >"$WORK/wait.out" 2>&1 ||
			fail "$tag: raidfuse wait for the resumed rebuild: $(cat "$WORK/wait.out")"
		"$RAIDFUSE" status "$mnt" >"$WORK/status.out" 2>&1
		grep -q '\[4/4\] \[UUUU\]' "$WORK/status.out" ||
			fail "$tag: the array is not whole after the rebuild: $(head -n 3 "$WORK/status.out")"
	fi
	umount_verify "$tag" "$mnt" "${MEM[@]}"

	local nw nd exact ornew
	nw=$(grep -c '^W ' "$wlog")
	nd=$(sed -n 's/.* writes logged, \([0-9]*\) durable.*/\1/p' "$WORK/check.out")
	local what="fsynced"
	[ "${#acked[@]}" = 0 ] || what="fsynced or acknowledged"
	exact=$(sed -n 's/.*checked exactly: \([0-9]*\),.*/\1/p' "$WORK/check.out")
	ornew=$(sed -n 's/.*old-or-new: \([0-9]*\),.*/\1/p' "$WORK/check.out")
	TOTAL_WRITES=$((TOTAL_WRITES + nw))
	TOTAL_DURABLE=$((TOTAL_DURABLE + ${nd:-0}))
	TOTAL_EXACT=$((TOTAL_EXACT + ${exact:-0}))
	NR_WRITER=$((NR_WRITER + 1))
	log "$tag: $HOW: $nw writes, ${nd:-?} $what; remount ($state) $REMOUNT_MS ms; $((${exact:-0} / 1024)) KiB exact, $((${ornew:-0} / 1024)) KiB old-or-new: ok; mismatch_cnt 0"
	rm -f "$wlog" "$werr"
}

# --- the ext4 iteration ----------------------------------------------------------
# The writer run on the ext4 file system: DIR SUMS. Creates files of random
# sizes (one in three with 4 KiB-multiple sizes), appends to DIR/applog, and
# after every 1-4 files calls syncfs; after a successful syncfs appends to
# SUMS the sha256 of every file written since the previous one and
# "APPLOG size sha256" for the log's synced prefix.
cat >"$WORK/ext4_writer.sh" <<'EOF'
dir=$1 sums=$2
mkdir -p "$dir" || exit 3
n=0
pending=()
applen=0
while :; do
	k=$((1 + RANDOM % 4))
	while ((k-- > 0)); do
		f=$dir/f$n
		n=$((n + 1))
		if ((RANDOM % 3 == 0)); then sz=$(((1 + RANDOM % 64) * 4096)); else sz=$((RANDOM * 8 + RANDOM % 8)); fi
		head -c "$sz" /dev/urandom >"$f.tmp" || exit 3
		mv "$f.tmp" "$f" || exit 3
		pending+=("$f")
		head -c $((RANDOM % 3000)) /dev/urandom >>"$dir/applog" || exit 3
	done
	sync -f "$dir" || exit 3
	# Only what the successful syncfs covered: the files and the log's
	# size before it (the sha256sum reads are served by the page cache).
	applen=$(stat -c %s "$dir/applog") || exit 3
	out=$(sha256sum "${pending[@]}") || exit 3
	appsum=$(head -c "$applen" "$dir/applog" | sha256sum | cut -d' ' -f1)
	printf '%s\nAPPLOG %s %s\n' "$out" "$applen" "$appsum" >>"$sums"
	pending=()
done
EOF

# loop_gone DEV: wait (5 s) for the loop device to be detached, else detach it.
loop_gone() {
	local dev=$1 i
	for ((i = 0; i < 50; i++)); do
		losetup "$dev" >/dev/null 2>&1 || return 0
		sleep 0.1
	done
	losetup -d "$dev" >"$WORK/losetup.out" 2>&1 || true
	for ((i = 0; i < 50; i++)); do
		losetup "$dev" >/dev/null 2>&1 || return 0
		sleep 0.1
	done
	fail "loop device $dev still attached: $(losetup "$dev" 2>&1) $(cat "$WORK/losetup.out")"
}

ext4_iteration() {
	local it=$1 tag=$2 dir=$3 n=$4 cut=$5
	shift 5
	local opts=("$@")
	members_of "$dir" "$n"
	local mnt=$dir/mnt img=$dir/mnt/volume.img fs=$dir/fs sums=$WORK/sums.$it
	local run_ms=$((300 + RANDOM % 1201))
	mkdir -p "$fs"
	track_mount "$fs"

	cut_mount "$cut" "$dir" "${opts[@]}" "${MEM[@]}" "$mnt"
	if [ -z "${FORMATTED[$dir]:-}" ]; then
		mkfs.ext4 -F -q -E nodiscard "$img" >"$WORK/mkfs.out" 2>&1 ||
			fail "$tag: mkfs.ext4 failed: $(cat "$WORK/mkfs.out")"
		FORMATTED[$dir]=1
	fi
	local dpid
	dpid=$(cat "$mnt/.raidfuse/pid") || fail "$tag: cannot read $mnt/.raidfuse/pid"
	mount -o loop "$img" "$fs" >"$WORK/lm.out" 2>&1 || fail "$tag: loop mount failed: $(cat "$WORK/lm.out")"
	local ldev
	ldev=$(findmnt -n -o SOURCE --target "$fs") || fail "$tag: no loop device for $fs"

	: >"$sums"
	setsid bash "$WORK/ext4_writer.sh" "$fs/it$it" "$sums" 2>"$WORK/ext4w.err" &
	local wpid=$! wpgid
	wpgid=$(ps -o pgid= -p "$wpid" | tr -d ' ')
	ms_sleep "$run_ms"
	kill -0 "$wpid" 2>/dev/null ||
		fail "$tag: the ext4 writer stopped while the daemon was running: $(cat "$WORK/ext4w.err")"
	kill -9 "$dpid" || fail "$tag: cannot kill the daemon $dpid"
	ms_sleep $((RANDOM % 100))
	if [ "$wpgid" = "$wpid" ]; then kill -9 -- "-$wpgid" 2>/dev/null; else kill -9 "$wpid" 2>/dev/null; fi
	wait "$wpid" 2>/dev/null
	wait_gone "$dpid" "$tag: the killed daemon" 10
	wait_unlocked "$tag" "$dpid" "${MEM[@]}"
	umount -l "$fs" >"$WORK/um.out" 2>&1 || fail "$tag: umount -l $fs failed: $(cat "$WORK/um.out")"
	loop_gone "$ldev"
	detach_dead "$mnt"
	local HOW="daemon killed after $run_ms ms"
	cut_replay "$tag" "$cut" "$((SEED * 1000 + it))"

	remount_dirty "$tag" "${opts[@]}" "${MEM[@]}" "$mnt"
	local state=clean
	grep -q 'not stopped cleanly' "$WORK/mount.out" && state=dirty
	local rc=0
	e2fsck -fy "$img" >"$WORK/fsck-y.out" 2>&1 || rc=$?
	if [ "$rc" -gt 1 ]; then
		keep_evidence "$tag" "${MEM[@]}" "$sums"
		fail "$tag: e2fsck -fy exited $rc after the crash: $(tail -n 30 "$WORK/fsck-y.out")"
	fi
	# A journal replay, orphan clean-up and the superblock's free block and
	# inode totals (ext4 does not journal them; the kernel recounts them
	# from the group descriptors at mount) are expected; any other repair
	# means a write that ext4 had flushed was lost or reordered.
	local fixes
	fixes=$(awk '
		/\? yes$/ {
			desc = ($0 ~ /^[A-Za-z]+\? yes$/) ? prev : $0
			if (desc !~ /^Free (blocks|inodes) count wrong \(/ && desc !~ /[Oo]rphan/)
				print desc " -> " $0
		}
		NF { prev = $0 }' "$WORK/fsck-y.out" | head -n 20)
	if [ -n "$fixes" ]; then
		if [ "$EXT4_STRICT" = 1 ]; then
			keep_evidence "$tag" "${MEM[@]}" "$sums"
			fail "$tag: e2fsck -fy had to repair the file system beyond the journal replay (exit $rc):
$(head -n 40 "$WORK/fsck-y.out")"
		fi
		log "$tag: e2fsck -fy repaired (allowed, CRASH_EXT4_STRICT=0): $fixes"
	fi
	rc=0
	e2fsck -fn "$img" >"$WORK/fsck-n.out" 2>&1 || rc=$?
	[ "$rc" = 0 ] || fail "$tag: e2fsck -fn after e2fsck -fy exited $rc: $(tail -n 30 "$WORK/fsck-n.out")"

	mount -o loop "$img" "$fs" >"$WORK/lm.out" 2>&1 || fail "$tag: loop mount after the crash failed: $(cat "$WORK/lm.out")"
	ldev=$(findmnt -n -o SOURCE --target "$fs")
	local nfiles=0 line sum path len
	grep -v '^APPLOG ' "$sums" | grep -E '^[0-9a-f]{64}  /' >"$sums.files"
	nfiles=$(wc -l <"$sums.files")
	if [ "$nfiles" -gt 0 ]; then
		sha256sum --quiet -c "$sums.files" >"$WORK/sumcheck.out" 2>&1 ||
			fail "$tag: files synced before the crash differ or are missing: $(head -n 10 "$WORK/sumcheck.out")"
	fi
	line=$(grep -E '^APPLOG [0-9]+ [0-9a-f]{64}$' "$sums" | tail -n 1)
	local appmsg="no syncfs completed"
	if [ -n "$line" ]; then
		read -r _ len sum <<<"$line"
		path=$fs/it$it/applog
		[ "$(stat -c %s "$path" 2>/dev/null || echo 0)" -ge "$len" ] ||
			fail "$tag: applog is shorter than its synced $len bytes"
		[ "$(head -c "$len" "$path" | sha256sum | cut -d' ' -f1)" = "$sum" ] ||
			fail "$tag: the synced first $len bytes of applog differ"
		appmsg="applog's synced $len bytes ok"
	fi
	rm -rf "$fs/it$it" || fail "$tag: cannot remove the iteration's files"
	umount "$fs" || fail "$tag: umount $fs failed"
	loop_gone "$ldev"
	umount_verify "$tag" "$mnt" "${MEM[@]}"
	TOTAL_FILES=$((TOTAL_FILES + nfiles))
	NR_EXT4=$((NR_EXT4 + 1))
	log "$tag: ext4, $HOW: $nfiles synced files ok, $appmsg; remount ($state) $REMOUNT_MS ms; e2fsck clean; mismatch_cnt 0"
	rm -f "$sums" "$sums.files"
}

# --- the loop ------------------------------------------------------------------
CACHES=(4 4 4 1 1 0)
AGES=(20 100 500)
CUTS=(min rand rand max)
for ((it = 1; it <= ITERATIONS; it++)); do
	case $((it % 3)) in
	1) level=5 n=4 ;;
	2) level=6 n=5 ;;
	0) level=10 n=4 ;;
	esac
	cache=${CACHES[RANDOM % ${#CACHES[@]}]}
	age=${AGES[RANDOM % 3]}
	opts=(--cache-mib "$cache" --flush-age-ms "$age")
	tag="iter $it/$ITERATIONS raid$level cache ${cache}M age ${age}ms"
	cut=none
	if ((RANDOM % 100 < POWER_CUT_PCT)); then
		cut=${CUTS[RANDOM % ${#CUTS[@]}]}
	fi
	if [ "$EXT4" = 1 ] && ((it % EXT4_EVERY == 0)); then
		[ "$cut" = none ] || tag="$tag, power cut ($cut)"
		ext4_iteration "$it" "$tag" "$WORK/e$level" "$n" "$cut" "${opts[@]}"
	else
		mode="write"
		if [ "$level" = 10 ] && ((it % 6 == 0)); then
			mode=rebuild
			tag="$tag, killed in a rebuild"
		elif ((RANDOM % 100 < UMOUNT_PCT)); then
			# A big cache with a long flush age, full of dirty rows at umount.
			mode=umount
			opts=(--cache-mib 16 --flush-age-ms 10000)
			tag="iter $it/$ITERATIONS raid$level cache 16M age 10000ms"
		fi
		[ "$cut" = none ] || tag="$tag, power cut ($cut)"
		writer_iteration "$it" "$tag" "$WORK/r$level" "$n" "$mode" "$cut" "${opts[@]}"
	fi
done

[ "$NR_WRITER" = 0 ] || [ "$TOTAL_DURABLE" -gt 0 ] ||
	fail "no fsync completed in any iteration: the test checked nothing"
log "PASS: $NR_POWER_CUT power cuts ($TOTAL_PAGES_CUT member pages cut short) among $NR_WRITER fsync_writer crashes ($TOTAL_WRITES writes, $TOTAL_DURABLE fsynced, $((TOTAL_EXACT / 1048576)) MiB checked exactly), $NR_EXT4 ext4 crashes ($TOTAL_FILES synced files checked), seed $SEED ($((SECONDS - START)) s)"
exit 0
