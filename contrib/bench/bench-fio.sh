#!/bin/bash
# bench-fio.sh - fio benchmark of raidfuse volumes against two baselines
# measured in the same run.
#
# For every array (RAID0 of 3 and 4 members, RAID5 of 4, RAID6 of 5, RAID1
# of 2, RAID10 of 4; 64 KiB chunks, or --chunk), mounted with the stripe cache on (the
# default) and off (--cache-mib 0), and for two baselines:
#   plain        one plain file on the work dir's file system;
#   passthrough  the same file through libfuse's passthrough_ll example (the
#                FUSE ceiling: same kernel path, a daemon that does nothing),
#                compiled with O_DIRECT not passed on to the backing file
#                (as shipped, its direct writes fail with EINVAL);
# the jobs below run with fio on MOUNT/volume.img (resp. the file), libaio,
# direct=1 (the kernel page cache of volume.img is bypassed, every request
# reaches the daemon), time-based:
#   seq-write  1 MiB sequential writes, iodepth --seq-iodepth (4)
#   seq-read   1 MiB sequential reads,  iodepth --seq-iodepth (4)
#   rr-qd1     4 KiB random reads,  iodepth 1
#   rr-qd16    4 KiB random reads,  iodepth 16
#   rw-qd1     4 KiB random writes, iodepth 1
#   rw-qd16    4 KiB random writes, iodepth 16
#   rw-hot-qd1, rw-hot-qd16
#              4 KiB random writes at iodepth 1 and 16 within the first
#              --hot-size bytes (32 MiB: half the default stripe cache), a
#              working set the cache can hold, where rw-qd* use a region 16
#              times the cache
# Before every job: sync, then the page cache is dropped (as root), so the
# member files are read from disk. After every job: fsync of volume.img, so
# rows the stripe cache still held are written out before the daemon's CPU
# time is read (CPU s/GiB includes them; MB/s and IOPS are fio's own).
# Daemon CPU = utime+stime of the daemon process (all its threads) from
# /proc/PID/stat before and after each job.
#
# The region every job works on is the first --size bytes of the volume
# (1 GiB), filled once with sequential writes before the jobs (members are
# created sparse; reading holes would cost nothing).
#
# Output: a Markdown table on stdout (MB/s, IOPS, daemon CPU s/GiB, ratios
# against the baselines, and the targets they are checked against), and in
# --out DIR (default ./bench-results/DATE/): results.csv, summary.md, raw/
# (fio terse output and daemon status after each job, .repN with --repeat;
# logs). Exit status 1 when a job failed in every repetition (ERR in the
# tables).
#
# --buffered-compare runs a different, smaller study instead: buffered
# (direct=0, psync) 1 MiB sequential write/read and 4 KiB random read on
# RAID5 of 4, mounted with --page-cache (kernel page cache on volume.img)
# and by default (direct I/O, the page cache bypassed), the two mounts
# taking turns for --repeat rounds.
#
# Noise: the CPU the rest of the machine used during each job is recorded
# (other_cpus); jobs where it exceeds 10% of a CPU are marked '!'.
# --wait-idle and --repeat help on a shared machine; --interleave makes the
# repetitions rounds over every configuration, so that slow drift of the
# machine falls on all of them alike instead of on whichever ran last.
#
# Needs: fio (with libaio), gcc, pkg-config and libfuse3-dev (for the
# passthrough), fusermount3, a raidfuse binary (--raidfuse, $RAIDFUSE,
# build/raidfuse or raidfuse in PATH). Run as root for the page-cache drops.
set -euo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
prog=$(basename "$0")
# die, progress, cpu_ticks, sys_ticks, wait_for_idle, drop_caches (which
# read $log, $drop and $wait_idle when called).
# shellcheck source=contrib/bench/lib-kit.sh
. "$top/contrib/bench/lib-kit.sh"

usage() {
	cat <<EOF
Usage: $prog [OPTIONS]
  --quick              smoke test: 64 MiB region, 2 s jobs, plain, passthrough,
                       RAID0 x4 (cache on) and RAID5 x4 (on/off), 3 jobs (< 60 s)
  --runtime S          seconds per fio job (default 10)
  --size SIZE          region every job works on, = volume size to create
                       (default 1G; K/M/G suffixes)
  --seq-iodepth N      iodepth of the 1 MiB sequential jobs (default 4)
  --chunk SIZE         chunk size of the arrays (default 64K; mdadm's is 512K)
  --out DIR            results directory (default ./bench-results/DATE)
  --dir DIR            work directory for member files (default \$BENCH_DIR or
                       /var/tmp/raidfuse-bench.PID); removed at the end unless --keep
  --keep               keep the work directory (members, plain file)
  --raidfuse PATH      raidfuse binary (default \$RAIDFUSE, $top/build/raidfuse,
                       or raidfuse in PATH)
  --configs LIST       comma list of configs to run, from: plain, passthrough,
                       raid0-3, raid0-4, raid5-4, raid6-5, raid1-2, raid10-4
                       (default: all); an array as ID:on or ID:off runs that
                       cache mode only
  --jobs LIST          comma list of jobs, from: seq-write, seq-read, rr-qd1,
                       rr-qd16, rw-qd1, rw-qd16, rw-hot-qd1, rw-hot-qd16
                       (default: all)
  --hot-size SIZE      region of the rw-hot-* jobs (default 32M)
  --rand-io-size SIZE  random jobs move SIZE each (fio --io_size) instead of
                       running --runtime seconds, which stays their cap: a
                       faster timed run warms more of the members into the page
                       cache and does less disk work per I/O, flattering it
  --cache-modes LIST   on,off (default); cache on = default mount, off = --cache-mib 0
  --direct-io          mount raidfuse with --direct-io (done anyway, and said, if
                       direct=1 fails on a default mount)
  --no-drop-caches     do not drop the page cache before jobs
  --wait-idle S        before each job, wait up to S seconds for the rest of the
                       machine to use less than 5% of one CPU (default 0: don't)
  --interleave         with --repeat N: N rounds, each running every
                       configuration once, instead of N repetitions back to
                       back (drift of the machine then falls on all alike)
  --repeat N           run every job N times (default 1): the tables show the
                       best, the ratios the best and the medians, and the
                       verdicts on the targets use the medians
  --note TEXT          a line for the summary (say, which commit the binary is)
  --buffered-compare   instead of the main run: buffered I/O on RAID5 x4, kernel
                       page cache (--page-cache mount) vs direct I/O (default)
  -h, --help
EOF
}

# ---------------------------------------------------------------- options
runtime=10
size_arg=1G
seq_qd=4
chunk_arg=64K
out=
work=${BENCH_DIR:+$BENCH_DIR/raidfuse-bench.$$}
keep=0
rf=${RAIDFUSE:-}
configs=plain,passthrough,raid0-3,raid0-4,raid5-4,raid6-5,raid1-2,raid10-4
jobs=seq-write,seq-read,rr-qd1,rr-qd16,rw-qd1,rw-qd16,rw-hot-qd1,rw-hot-qd16
hot_arg=32M
rand_io_arg=          # empty: random jobs are timed like the others
cache_modes=on,off
force_direct_io=0
drop=1
wait_idle=0
note=
repeat=1
interleave=0
interleave_round=0   # the round under way with --interleave (0: none)
buffered=0

need_arg() { [ $# -ge 2 ] && [ -n "$2" ] || die "$1 needs an argument"; }

while [ $# -gt 0 ]; do
	case $1 in
	--quick)
		# Options after --quick override these.
		runtime=2 size_arg=64M
		configs=plain,passthrough,raid0-4:on,raid5-4
		jobs=seq-write,seq-read,rw-qd16 ;;
	--runtime) need_arg "$@"; runtime=$2; shift ;;
	--size) need_arg "$@"; size_arg=$2; shift ;;
	--hot-size) need_arg "$@"; hot_arg=$2; shift ;;
	--rand-io-size) need_arg "$@"; rand_io_arg=$2; shift ;;
	--seq-iodepth) need_arg "$@"; seq_qd=$2; shift ;;
	--chunk) need_arg "$@"; chunk_arg=$2; shift ;;
	--out) need_arg "$@"; out=$2; shift ;;
	--dir) need_arg "$@"; work=$2/raidfuse-bench.$$; shift ;;
	--keep) keep=1 ;;
	--raidfuse) need_arg "$@"; rf=$2; shift ;;
	--configs) need_arg "$@"; configs=$2; shift ;;
	--jobs) need_arg "$@"; jobs=$2; shift ;;
	--cache-modes) need_arg "$@"; cache_modes=$2; shift ;;
	--direct-io) force_direct_io=1 ;;
	--no-drop-caches) drop=0 ;;
	--wait-idle) need_arg "$@"; wait_idle=$2; shift ;;
	--note) need_arg "$@"; note=$2; shift ;;
	--repeat) need_arg "$@"; repeat=$2; shift ;;
	--interleave) interleave=1 ;;
	--buffered-compare) buffered=1 ;;
	-h|--help) usage; exit 0 ;;
	*) usage >&2; die "unknown option '$1'" ;;
	esac
	shift
done

[[ $repeat =~ ^[0-9]+$ ]] && [ "$repeat" -ge 1 ] || die "--repeat '$repeat' is not a number >= 1"
[[ $wait_idle =~ ^[0-9]+$ ]] || die "--wait-idle '$wait_idle' is not a whole number of seconds"
[[ $runtime =~ ^[0-9]+$ ]] && [ "$runtime" -ge 1 ] || die "--runtime '$runtime' is not a whole number of seconds >= 1"
[[ $seq_qd =~ ^[0-9]+$ ]] && [ "$seq_qd" -ge 1 ] || die "--seq-iodepth '$seq_qd' is not a number >= 1"

# SIZE -> KiB (a bare number is MiB).
size_kib() {
	local s=${1^^} n unit
	s=${s%IB}; s=${s%B}
	[[ $s =~ ^([0-9]+)([KMGT]?)$ ]] || return 1
	n=${BASH_REMATCH[1]}; unit=${BASH_REMATCH[2]}
	case $unit in
	K) ;;
	''|M) n=$((n * 1024)) ;;
	G) n=$((n * 1024 * 1024)) ;;
	T) n=$((n * 1024 * 1024 * 1024)) ;;
	esac
	echo "$n"
}
# SIZE -> whole MiB.
size_mib() {
	local kib
	kib=$(size_kib "$1") || return 1
	echo $((kib / 1024))
}
vol_mib=$(size_mib "$size_arg") || die "--size '$size_arg' is not a size (like 512M, 1G)"
[ "$vol_mib" -ge 16 ] || die "--size must be at least 16M"
vol_bytes=$((vol_mib * 1024 * 1024))
hot_mib=$(size_mib "$hot_arg") || die "--hot-size '$hot_arg' is not a size (like 32M)"
[ "$hot_mib" -le "$vol_mib" ] || die "--hot-size $hot_arg is larger than --size $size_arg"
rand_io_kib=
if [ -n "$rand_io_arg" ]; then
	rand_io_kib=$(size_kib "$rand_io_arg") && [ "$rand_io_kib" -ge 4 ] ||
		die "--rand-io-size '$rand_io_arg' is not a size of 4K or more (like 512M)"
fi
hot_bytes=$((hot_mib * 1024 * 1024))
chunk_kib=$(size_kib "$chunk_arg") ||
	die "--chunk '$chunk_arg' is not a chunk size from 4K to 1M (like 64K, 512K)"
[ "$chunk_kib" -ge 4 ] && [ "$chunk_kib" -le 1024 ] && (((chunk_kib & (chunk_kib - 1)) == 0)) ||
	die "--chunk '$chunk_arg' is not a power of two from 4K to 1M"
chunk_arg=${chunk_kib}K

# ------------------------------------------------------------ requirements
command -v fio >/dev/null 2>&1 ||
	die "fio is not installed (Debian: apt-get install fio); nothing was measured"
fio --enghelp 2>/dev/null | grep -qw libaio || die "this fio has no libaio engine"
command -v fusermount3 >/dev/null 2>&1 || die "fusermount3 is missing (Debian: apt-get install fuse3)"
[ -e /dev/fuse ] || die "/dev/fuse is missing: FUSE is not available here"
if [ -z "$rf" ]; then
	if [ -x "$top/build/raidfuse" ]; then rf=$top/build/raidfuse
	elif command -v raidfuse >/dev/null 2>&1; then rf=$(command -v raidfuse)
	else die "no raidfuse binary: build one (bash contrib/build.sh) or pass --raidfuse PATH"
	fi
fi
[ -x "$rf" ] || die "raidfuse binary '$rf' is not executable"
rf=$(cd "$(dirname "$rf")" && pwd)/$(basename "$rf")
if [ $drop = 1 ] && ! { [ "$(id -u)" = 0 ] && [ -w /proc/sys/vm/drop_caches ]; }; then
	echo "$prog: warning: cannot drop the page cache (not root); reads may come from memory" >&2
	drop=0
fi

stamp=$(date +%Y%m%d-%H%M%S)
out=${out:-$PWD/bench-results/$stamp}
mkdir -p "$out/raw"
out=$(cd "$out" && pwd)
work=${work:-/var/tmp/raidfuse-bench.$$}
mkdir -p "$work"
work=$(cd "$work" && pwd)
log=$out/raw/bench.log
: >"$log"

# ---------------------------------------------------------------- cleanup
mounted_rf=()     # raidfuse mount points to unmount
pt_pid=           # passthrough daemon
pt_mnt=
cleanup() {
	local rc=$? m
	set +e
	for m in "${mounted_rf[@]}"; do
		mountpoint -q "$m" && "$rf" umount "$m" >>"$log" 2>&1
	done
	if [ -n "$pt_pid" ]; then
		mountpoint -q "$pt_mnt" && fusermount3 -u "$pt_mnt" >>"$log" 2>&1
		kill "$pt_pid" 2>/dev/null; wait "$pt_pid" 2>/dev/null
	fi
	if [ $keep = 0 ]; then rm -rf "$work"; else echo "work dir kept: $work" >&2; fi
	exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT TERM

t0=$SECONDS

# Work dir space: the largest config holds about 2x the region (RAID1 of 2,
# RAID10 of 4), plus the plain file.
avail_mib=$(df -Pm "$work" | awk 'NR == 2 { print $4 }')
[ "$avail_mib" -ge $((vol_mib * 4)) ] ||
	die "work dir $work has ${avail_mib} MiB free, needs about $((vol_mib * 4)) MiB for --size ${vol_mib}M"

# -------------------------------------------------------------- measuring
# Member bytes read and written, summed, from a raidfuse status file.
member_bytes() {
	awk '/^member / { for (i = 1; i <= NF; i++) {
		if ($i ~ /^read_bytes=/) { sub(/.*=/, "", $i); r += $i }
		if ($i ~ /^written_bytes=/) { sub(/.*=/, "", $i); w += $i } } }
	     END { printf "%.0f %.0f\n", r, w }' "$1" 2>/dev/null || echo "0 0"
}
# Job table: name rw bs iodepth metric
job_spec() {
	case $1 in
	seq-write) echo "write 1M $seq_qd MBps" ;;
	seq-read) echo "read 1M $seq_qd MBps" ;;
	rr-qd1) echo "randread 4k 1 IOPS" ;;
	rr-qd16) echo "randread 4k 16 IOPS" ;;
	rw-qd1) echo "randwrite 4k 1 IOPS" ;;
	rw-qd16) echo "randwrite 4k 16 IOPS" ;;
	rw-hot-qd1) echo "randwrite 4k 1 IOPS $hot_bytes" ;;
	rw-hot-qd16) echo "randwrite 4k 16 IOPS $hot_bytes" ;;
	*) return 1 ;;
	esac
}
job_title() {
	case $1 in
	seq-write) echo "seq write 1M QD$seq_qd MB/s" ;;
	seq-read) echo "seq read 1M QD$seq_qd MB/s" ;;
	rr-qd1) echo "rand read 4K QD1 IOPS" ;;
	rr-qd16) echo "rand read 4K QD16 IOPS" ;;
	rw-qd1) echo "rand write 4K QD1 IOPS" ;;
	rw-qd16) echo "rand write 4K QD16 IOPS" ;;
	rw-hot-qd1) echo "rand write 4K QD1 in $hot_arg IOPS" ;;
	rw-hot-qd16) echo "rand write 4K QD16 in $hot_arg IOPS" ;;
	esac
}
IFS=, read -r -a job_list <<<"$jobs"
for j in "${job_list[@]}"; do job_spec "$j" >/dev/null || die "unknown job '$j'"; done
IFS=, read -r -a cache_list <<<"$cache_modes"
for c in "${cache_list[@]}"; do [[ $c == on || $c == off ]] || die "unknown cache mode '$c'"; done

csv=$out/results.csv
echo "date,config,level,members,cache,mount_opts,job,rep,rw,bs,iodepth,direct,runtime_s,read_bytes,write_bytes,MBps,IOPS,lat_mean_us,clat_p99_us,daemon_cpu_s,daemon_cpu_s_per_GiB,member_read_bytes,member_write_bytes,member_io_per_fio_byte,other_cpus,loadavg1,fio_error" >"$csv"

declare -A R=()   # R[row|job] = MB/s or IOPS
declare -A CPU=() # CPU[row|job] = daemon CPU s/GiB
declare -A BUSY=() # BUSY[row|job] = 1 when other processes used the CPU
declare -A ALLV=() # ALLV[row|job] = every repetition's MB/s or IOPS
declare -A ALLC=() # ALLC[row|job] = every repetition's CPU s/GiB
rows=()           # table rows in order
failed_jobs=0     # jobs without one good repetition (ERR in the tables)
declare -A ROWNAME
# add_row ROW LABEL: a table row, once (--interleave comes back every round).
add_row() {
	[ -n "${ROWNAME[$1]:-}" ] || rows+=("$1")
	ROWNAME[$1]=$2
}

# run_job ROW JOB FILE DAEMON_PID STATUS_FILE LEVEL MEMBERS CACHE MOUNT_OPTS [DIRECT] [ENGINE]
# Runs the job --repeat times; the tables keep the best throughput (and the
# CPU s/GiB of that repetition), results.csv has every repetition.
run_job() {
	local r first_rep=1 last_rep=$repeat
	[ "$interleave_round" -gt 0 ] && first_rep=$interleave_round last_rep=$interleave_round
	for ((r = first_rep; r <= last_rep; r++)); do
		job_rep=$r
		run_job_once "$@" && keep_best "$1" "$2"
	done
	[ -n "${R[$1|$2]:-}" ] || { R[$1|$2]=ERR; CPU[$1|$2]=ERR; failed_jobs=$((failed_jobs + 1)); return 1; }
}
# keep_best ROW JOB: the repetition just run replaces the kept one if
# faster; every repetition is also kept for the medians.
keep_best() {
	local kept=${R[$1|$2]:-}
	ALLV[$1|$2]+=" $job_val"
	ALLC[$1|$2]+=" $job_cpg"
	if [ -z "$kept" ] || [ "$kept" = ERR ] ||
		awk -v a="$job_val" -v b="$kept" 'BEGIN { exit !(a > b) }'; then
		R[$1|$2]=$job_val; CPU[$1|$2]=$job_cpg
		if [ "$job_busy" = 1 ]; then BUSY[$1|$2]=1; else unset "BUSY[$1|$2]"; fi
	fi
}
run_job_once() {
	local row=$1 job=$2 file=$3 dpid=$4 status=$5 level=$6 nmem=$7 cache=$8 mopts=$9
	local direct=${10:-1} engine=${11:-libaio}
	local rw bs qd metric region
	read -r rw bs qd metric region <<<"$(job_spec "$job")"
	region=${region:-$vol_bytes}
	local raw=$out/raw/$row.$job
	# Every repetition keeps its own raw files (results.csv has them all).
	[ "$repeat" -gt 1 ] && raw+=.rep$job_rep
	local extra=() amount=(--time_based)
	[[ $rw == rand* ]] && extra+=(--norandommap --randrepeat=0)
	# A fixed amount: --runtime is then only the cap.
	[[ $rw == rand* && -n $rand_io_kib ]] && amount=(--io_size="${rand_io_kib}k")

	drop_caches
	wait_for_idle
	local load c0 s0 m0 c1 s1 m1 frc=0
	load=$(cut -d' ' -f1 /proc/loadavg)
	c0=$( [ -n "$dpid" ] && cpu_ticks "$dpid" || echo 0 )
	m0=$( [ -n "$status" ] && member_bytes "$status" || echo "0 0" )
	s0=$(sys_ticks)
	local w0=$EPOCHREALTIME
	fio --name="$job" --filename="$file" --rw="$rw" --bs="$bs" --iodepth="$qd" \
		--ioengine="$engine" --direct="$direct" --size="$region" "${amount[@]}" \
		--runtime="$runtime" --fallocate=none --invalidate=1 "${extra[@]}" \
		--output-format=terse --terse-version=3 >"$raw.fio" 2>"$raw.err" || frc=$?
	# Write out what the daemon still holds (stripe cache) before reading CPU.
	sync "$file" 2>>"$raw.err" || true
	s1=$(sys_ticks)
	local w1=$EPOCHREALTIME
	c1=$( [ -n "$dpid" ] && cpu_ticks "$dpid" || echo 0 )
	m1=$( [ -n "$status" ] && member_bytes "$status" || echo "0 0" )
	[ -n "$status" ] && cp "$status" "$raw.status" 2>/dev/null || true

	local line
	line=$(grep -m1 '^3;' "$raw.fio" || true)
	if [ -z "$line" ] || [ $frc != 0 ]; then
		progress "  $row $job: fio FAILED (rc=$frc): $(grep -m1 -i 'error\|invalid' "$raw.err" "$raw.fio" 2>/dev/null | head -1)"
		echo "$(date -Is),$row,$level,$nmem,$cache,\"$mopts\",$job,$job_rep,$rw,$bs,$qd,$direct,$runtime,,,,,,,,,,,,,$load,fio_rc_$frc" >>"$csv"
		return 1
	fi
	# terse v3: 5 error, 6/47 KiB moved, 7/48 KiB/s, 8/49 IOPS, 40/81 lat mean us,
	# 18-37 / 59-78 clat percentiles (usec), 88/89 fio usr/sys CPU %.
	local vals
	vals=$(awk -F';' -v m0="$m0" -v m1="$m1" -v c0="$c0" -v c1="$c1" -v s0="$s0" -v s1="$s1" \
		-v tck="$clk_tck" -v rt="$runtime" -v hasd="${dpid:+1}" -v w0="$w0" -v w1="$w1" '{
		rb = $6 * 1024; wb = $47 * 1024
		bw = ($7 + $48) * 1024 / 1e6; iops = $8 + $49
		lat = ($6 > 0 && $47 > 0) ? ($40 + $81) / 2 : ($6 > 0 ? $40 : $81)
		p99 = ""
		for (i = ($6 > 0 ? 18 : 59); i <= ($6 > 0 ? 37 : 78); i++)
			if ($i ~ /^99\.000000%=/) { p99 = $i; sub(/.*=/, "", p99) }
		split(m0, a, " "); split(m1, b, " ")
		mr = b[1] - a[1]; mw = b[2] - a[2]
		cpu = (c1 - c0) / tck
		gib = (rb + wb) / 1073741824
		cpg = (hasd && gib > 0) ? sprintf("%.3f", cpu / gib) : ""
		amp = (hasd && rb + wb > 0 && (mr + mw) > 0) ? sprintf("%.2f", (mr + mw) / (rb + wb)) : ""
		jobrt = ($9 > $50 ? $9 : $50) / 1000   # fio runtime (ms) in s
		fiocpu = ($88 + $89) / 100 * (jobrt > 0 ? jobrt : rt)
		other = (s1 - s0) / tck - (hasd ? cpu : 0) - fiocpu
		if (other < 0) other = 0
		other = (w1 > w0) ? other / (w1 - w0) : 0
		printf "%.0f %.0f %.1f %.0f %.1f %s %s %s %.0f %.0f %s %.2f %d\n", rb, wb, bw, iops, lat,
			(p99 == "" ? "-" : p99), (hasd ? sprintf("%.2f", cpu) : "-"),
			(cpg == "" ? "-" : cpg), mr, mw, (amp == "" ? "-" : amp), other, $5
	}' <<<"$line")
	local rb wb bw iops lat p99 cpu cpg mr mw amp other ferr
	read -r rb wb bw iops lat p99 cpu cpg mr mw amp other ferr <<<"$vals"
	[ "$p99" = - ] && p99=
	[ "$cpu" = - ] && cpu=
	[ "$cpg" = - ] && cpg=
	[ "$amp" = - ] && amp=
	[ -n "$status" ] || { mr=; mw=; }
	if [[ $rw == rand* && -n $rand_io_kib ]] && [ $((rb + wb)) -lt $((rand_io_kib * 1024)) ]; then
		progress "  $row $job: moved $(((rb + wb) / 1048576)) of $((rand_io_kib / 1024)) MiB: stopped at the --runtime cap"
	fi
	echo "$(date -Is),$row,$level,$nmem,$cache,\"$mopts\",$job,$job_rep,$rw,$bs,$qd,$direct,$runtime,$rb,$wb,$bw,$iops,$lat,$p99,$cpu,$cpg,$mr,$mw,$amp,$other,$load,$ferr" >>"$csv"
	if [ "$metric" = MBps ]; then job_val=$bw; else job_val=$iops; fi
	job_cpg=${cpg:--}
	job_busy=0
	# Other processes (or kernel threads) busy for more than 10% of a CPU.
	if awk -v o="$other" 'BEGIN { exit !(o > 0.1) }'; then
		job_busy=1
	fi
	local shown
	if [ "$metric" = MBps ]; then shown="$bw MB/s"; else shown="$iops IOPS"; fi
	progress "  $(printf '%-16s %-9s %12s' "$row" "$job" "$shown")${cpg:+  cpu ${cpg} s/GiB}${amp:+  member-io x$amp}$( [ $job_busy = 1 ] && echo "  (others used ${other} CPU)")$( [ "$repeat" -gt 1 ] && echo "  [rep $job_rep/$repeat]")"
}

# ---------------------------------------------------------- machine info
cpu_model=$(awk -F': *' '/^model name/ { print $2; exit }' /proc/cpuinfo)
mem_line=$(free -m | awk '/^Mem:/ { printf "%d MiB total, %d MiB free, %d MiB available", $2, $4, $7 }')
fs_line=$(df -PTh "$work" | awk 'NR == 2 { printf "%s (%s), %s free", $1, $2, $5 }')
rf_version=$("$rf" --version 2>/dev/null | head -1)
git_rev=$(git -C "$top" rev-parse --short HEAD 2>/dev/null || echo unknown)
git -C "$top" diff --quiet HEAD -- src fs 2>/dev/null || git_rev="$git_rev (src/fs modified)"
start_date=$(date '+%Y-%m-%d %H:%M:%S %Z')
start_load=$(cut -d' ' -f1-3 /proc/loadavg)

direct_io_opt=()
[ $force_direct_io = 1 ] && direct_io_opt=(--direct-io)
direct_io_note=
[ $force_direct_io = 1 ] && direct_io_note="raidfuse mounted with --direct-io (asked)."

# ----------------------------------------------------------- array setup
# Config: id -> "level members data_members"
config_geo() {
	case $1 in
	raid0-3) echo "0 3 3" ;;
	raid0-4) echo "0 4 4" ;;
	raid5-4) echo "5 4 3" ;;
	raid6-5) echo "6 5 3" ;;
	raid1-2) echo "1 2 1" ;;
	raid10-4) echo "10 4 2" ;;
	*) return 1 ;;
	esac
}
IFS=, read -r -a config_list <<<"$configs"
for c in "${config_list[@]}"; do
	case $c in
	plain|passthrough) ;;
	*:on|*:off) config_geo "${c%:*}" >/dev/null || die "unknown config '${c%:*}'" ;;
	*) config_geo "$c" >/dev/null || die "unknown config '$c'" ;;
	esac
done

# Fill the region once (members and the plain file are sparse until written).
prefill() {
	fio --name=prefill --filename="$1" --rw=write --bs=1M --iodepth=4 --ioengine=libaio \
		--direct=1 --size="$vol_bytes" --fallocate=none --output-format=terse \
		--terse-version=3 >"$out/raw/$2.prefill.fio" 2>"$out/raw/$2.prefill.err"
}

# mount_array DIR MEMBERS CACHE -> sets rf_mnt, rf_pid
mount_array() {
	local dir=$1 cache=$2; shift 2
	local opts=("${direct_io_opt[@]}")
	[ "$cache" = off ] && opts+=(--cache-mib 0)
	rf_mnt=$dir/mnt
	mkdir -p "$rf_mnt"
	"$rf" mount "${opts[@]}" "$@" "$rf_mnt" >>"$log" 2>&1 ||
		die "raidfuse mount ${opts[*]} failed (see $log)"
	mounted_rf+=("$rf_mnt")
	rf_pid=$(cat "$rf_mnt/.raidfuse/pid")
	rf_opts="${opts[*]}"
}
umount_array() {
	"$rf" umount "$1" >>"$log" 2>&1 || die "raidfuse umount $1 failed (see $log)"
	! mountpoint -q "$1" || die "$1 still mounted after raidfuse umount"
}

# run_array ID[:on|:off]: create, fill, then mount with each cache mode
# (--cache-modes, or the one named) and run the jobs.
run_array() {
	local id=${1%:*} modes=("${cache_list[@]}") level n k
	[[ $1 == *:* ]] && modes=("${1##*:}")
	read -r level n k <<<"$(config_geo "$id")"
	local dir=$work/$id members=() i
	mkdir -p "$dir"
	for ((i = 0; i < n; i++)); do members+=("$dir/m$i.img"); done
	# Member size: the region over the data members, + 1 MiB data offset,
	# + 1 MiB of slack for rounding to whole chunks.
	local mem_mib=$(((vol_mib + k - 1) / k + 2))
	local cache first=1
	# With --interleave the array is made and filled in the first round
	# and used again in the next ones.
	if [ -e "$dir/.filled" ]; then
		first=0
	else
		progress "== $id: RAID$level of $n members of ${mem_mib} MiB, $chunk_arg chunk"
		"$rf" create --level "$level" --raid-devices "$n" --chunk "$chunk_arg" --size "${mem_mib}M" \
			"${members[@]}" >>"$log" 2>&1 || die "raidfuse create of $id failed (see $log)"
	fi
	for cache in "${modes[@]}"; do
		local row=$id-$cache
		if [ "$id" = raid0-3 ]; then
			# The baseline for RAID5 x4: one mount (no stripe cache below RAID5).
			[ "$cache" = "${modes[0]}" ] || continue
			row=$id
		fi
		mount_array "$dir" "$cache" "${members[@]}"
		local vsz
		vsz=$(stat -c %s "$rf_mnt/volume.img")
		[ "$vsz" -ge "$vol_bytes" ] || die "$id: volume.img is $vsz bytes, smaller than the region $vol_bytes"
		if [ $first = 1 ]; then
			progress "  prefill ${vol_mib} MiB of volume.img"
			if ! prefill "$rf_mnt/volume.img" "$id"; then
				# direct=1 refused on a default mount: use --direct-io.
				if [ ${#direct_io_opt[@]} = 0 ] && grep -qi 'invalid argument' "$out/raw/$id.prefill.err" "$out/raw/$id.prefill.fio"; then
					progress "  direct=1 fails on a default raidfuse mount (EINVAL); remounting with --direct-io for the whole run"
					direct_io_opt=(--direct-io)
					direct_io_note="direct=1 failed (EINVAL) on a default raidfuse mount; every array was mounted with --direct-io."
					umount_array "$rf_mnt"
					mount_array "$dir" "$cache" "${members[@]}"
					prefill "$rf_mnt/volume.img" "$id" || die "$id: prefill failed even with --direct-io (see $out/raw/$id.prefill.*)"
				else
					die "$id: prefill with fio failed (see $out/raw/$id.prefill.*)"
				fi
			fi
			sync "$rf_mnt/volume.img"
			touch "$dir/.filled"
			first=0
		fi
		local label="RAID$level x$n"
		if [ "$id" != raid0-3 ]; then
			if [ "$level" = 5 ] || [ "$level" = 6 ]; then label="$label cache $cache"
			else label="$label cache $cache*"; fi
		fi
		add_row "$row" "$label"
		progress "== $row: mounted (daemon pid $rf_pid${rf_opts:+, $rf_opts})"
		local j
		for j in "${job_list[@]}"; do
			run_job "$row" "$j" "$rf_mnt/volume.img" "$rf_pid" "$rf_mnt/.raidfuse/status" \
				"$level" "$n" "$cache" "$rf_opts" || true
		done
		umount_array "$rf_mnt"
	done
	# Kept when asked, and for the next round (--interleave).
	if [ $keep = 0 ] && { [ "$interleave_round" = 0 ] || [ "$interleave_round" = "$repeat" ]; }; then
		rm -f "${members[@]}" "$dir/.filled"
	fi
}

# ------------------------------------------------------------- baselines
plain_dir=$work/plain
plain_file=$plain_dir/plain.img
need_plain() {
	[ -e "$plain_file" ] && return 0
	mkdir -p "$plain_dir"
	progress "== plain file: writing ${vol_mib} MiB at $plain_file"
	prefill "$plain_file" plain || die "writing the plain file failed (see $out/raw/plain.prefill.*)"
	sync "$plain_file"
}

pt_bin=$work/passthrough_ll
build_passthrough() {
	local ex=/usr/share/doc/libfuse3-dev/examples
	[ -r "$ex/passthrough_ll.c" ] || die "no $ex/passthrough_ll.c (Debian: apt-get install libfuse3-dev)"
	command -v gcc >/dev/null && command -v pkg-config >/dev/null || die "gcc and pkg-config are needed for the passthrough"
	# One change: O_DIRECT is not passed on to the backing file. As shipped,
	# the example opens the file with the caller's O_DIRECT and then
	# pwrite()s from libfuse's unaligned request buffer, so every direct
	# write fails with EINVAL. Without it the backing file is opened
	# buffered, as raidfuse opens its members.
	sed 's/fd = open(buf, fi->flags & ~O_NOFOLLOW);/fd = open(buf, fi->flags \& ~(O_NOFOLLOW | O_DIRECT));/' \
		"$ex/passthrough_ll.c" >"$work/passthrough_ll.c"
	grep -q 'O_NOFOLLOW | O_DIRECT' "$work/passthrough_ll.c" ||
		die "could not adapt passthrough_ll.c (its open() line changed)"
	cp "$ex"/*.h "$work/" 2>/dev/null || true
	# shellcheck disable=SC2046
	gcc -Wall -O2 -o "$pt_bin" "$work/passthrough_ll.c" $(pkg-config --cflags --libs fuse3) \
		>>"$log" 2>&1 || die "compiling passthrough_ll.c failed (see $log)"
}

run_plain() {
	need_plain
	add_row plain "plain file (no FUSE)"
	progress "== plain: $plain_file"
	local j
	for j in "${job_list[@]}"; do
		run_job plain "$j" "$plain_file" "" "" plain 1 - "" || true
	done
}

run_passthrough() {
	need_plain
	[ -x "$pt_bin" ] || build_passthrough
	pt_mnt=$work/ptmnt
	mkdir -p "$pt_mnt"
	# Foreground in the background: its pid is the daemon's. Same thread
	# limit as raidfuse's default (16).
	"$pt_bin" -f -o source="$plain_dir",max_threads=16 "$pt_mnt" >>"$log" 2>&1 &
	pt_pid=$!
	local i
	for i in $(seq 50); do mountpoint -q "$pt_mnt" && break; sleep 0.1; done
	mountpoint -q "$pt_mnt" || die "passthrough_ll did not mount (see $log)"
	add_row passthrough "passthrough_ll (FUSE ceiling)"
	progress "== passthrough: passthrough_ll over $plain_dir (pid $pt_pid)"
	for j in "${job_list[@]}"; do
		run_job passthrough "$j" "$pt_mnt/plain.img" "$pt_pid" "" passthrough 1 - "" || true
	done
	fusermount3 -u "$pt_mnt" >>"$log" 2>&1 || true
	wait "$pt_pid" 2>/dev/null || true
	pt_pid=
}

# ----------------------------------------------------------- tables
# fmt VALUE: MB/s and IOPS to a short form
fmt() {
	case $1 in
	''|-) echo "-" ;;
	ERR) echo "ERR" ;;
	*) awk -v v="$1" 'BEGIN { if (v >= 100) printf "%.0f", v; else if (v >= 10) printf "%.1f", v; else printf "%.2f", v }' ;;
	esac
}
median() {  # median "V1 V2 ..." -> the median, or nothing
	# shellcheck disable=SC2086 # split into values on purpose
	[ -n "${1// /}" ] && printf '%s\n' $1 | sort -g |
		awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
ratio() {   # ratio A B -> A/B with 2 decimals, or n/a
	if [[ ${1:-} =~ ^[0-9.]+$ ]] && [[ ${2:-} =~ ^[0-9.]+$ ]] && awk -v b="$2" 'BEGIN { exit !(b > 0) }'; then
		awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'
	else
		echo n/a
	fi
}
verdict() { # verdict RATIO OP TARGET
	[ "$1" = n/a ] && { echo "not measured"; return; }
	if awk -v r="$1" -v t="$3" -v op="$2" 'BEGIN { exit !(op == ">=" ? r >= t : r <= t) }'; then
		echo "meets"
	else
		echo "**misses**"
	fi
}

print_tables() {
	local row j hdr sep line
	hdr="| config |"; sep="|---|"
	for j in "${job_list[@]}"; do hdr="$hdr $(job_title "$j") |"; sep="$sep---:|"; done
	echo "### Throughput (fio, direct=1, libaio, ${runtime} s per job)"
	echo
	echo "$hdr"; echo "$sep"
	for row in "${rows[@]}"; do
		line="| ${ROWNAME[$row]} |"
		for j in "${job_list[@]}"; do
			line="$line $(fmt "${R[$row|$j]:-}")$( [ -n "${BUSY[$row|$j]:-}" ] && echo '!') |"
		done
		echo "$line"
	done
	echo
	echo "### Daemon CPU seconds per GiB moved (utime+stime of the FUSE daemon)"
	echo
	hdr="| config |"; sep="|---|"
	for j in "${job_list[@]}"; do hdr="$hdr $j |"; sep="$sep---:|"; done
	echo "$hdr"; echo "$sep"
	for row in "${rows[@]}"; do
		[ "$row" = plain ] && continue
		line="| ${ROWNAME[$row]} |"
		for j in "${job_list[@]}"; do line="$line ${CPU[$row|$j]:--} |"; done
		echo "$line"
	done
	echo
	if [[ " ${ROWNAME[*]} " == *"*"* ]]; then
		echo "\\* cache on/off makes no difference below RAID5/6 (the stripe cache is a RAID5/6"
		echo "feature): those two rows are the same configuration measured twice, a noise gauge."
	fi
	if [ ${#BUSY[@]} -gt 0 ]; then
		echo "! the rest of the machine (other processes, kernel threads) was busy for more than 10%"
		echo "of a CPU on average during that job (other_cpus in results.csv): the figure is disturbed."
	fi
	echo
	echo "### Ratios against baselines of this run"
	echo
	if [ "$repeat" -gt 1 ]; then
		echo "Ratios of the best repetitions, and of the medians of all $repeat; the"
		echo "verdict is on the medians."
		echo
		echo "| ratio | best | median | target | |"
		echo "|---|---:|---:|---|---|"
	else
		echo "| ratio | value | target | |"
		echo "|---|---:|---|---|"
	fi
	local j
	for j in seq-write seq-read; do
		ratio_row "RAID0 x4 / passthrough, $j" R "raid0-4-on|$j" "passthrough|$j" ">=" 0.9
	done
	for j in rr-qd1 rr-qd16 rw-qd1 rw-qd16; do
		ratio_row "RAID0 x4 / passthrough, $j" R "raid0-4-on|$j" "passthrough|$j" info
	done
	ratio_row "RAID5 x4 (cache on) / RAID0 x3, seq-write" R "raid5-4-on|seq-write" \
		"raid0-3|seq-write" ">=" 0.8
	for j in rw-qd1 rw-qd16 rw-hot-qd1 rw-hot-qd16; do
		ratio_row "RAID5 x4 cache on / off, $j" R "raid5-4-on|$j" "raid5-4-off|$j" ">=" 3
	done
	ratio_row "RAID5 x4 / RAID0 x4 daemon CPU s/GiB, seq-write" CPU "raid5-4-on|seq-write" \
		"raid0-4-on|seq-write" "<=" 1.3
	ratio_row "RAID5 x4 / RAID0 x3 daemon CPU s/GiB, seq-write" CPU "raid5-4-on|seq-write" \
		"raid0-3|seq-write" info
	ratio_row "RAID5 x4 / RAID0 x4 daemon CPU s/GiB, rw-qd16" CPU "raid5-4-on|rw-qd16" \
		"raid0-4-on|rw-qd16" info
	ratio_row "passthrough / plain file, seq-read" R "passthrough|seq-read" "plain|seq-read" info
	ratio_row "passthrough / plain file, seq-write" R "passthrough|seq-write" "plain|seq-write" info
}

# ratio_row LABEL R|CPU KEY_A KEY_B (OP TARGET | info): a row of the ratio
# table, A/B of the best repetitions (and of the medians with --repeat);
# info rows that could not be measured are left out.
ratio_row() {
	local label=$1 kind=$2 a=$3 b=$4 op=$5 target=${6:-} best med=
	if [ "$kind" = CPU ]; then
		best=$(ratio "${CPU[$a]:-}" "${CPU[$b]:-}")
		[ "$repeat" -gt 1 ] && med=$(ratio "$(median "${ALLC[$a]:-}")" "$(median "${ALLC[$b]:-}")")
	else
		best=$(ratio "${R[$a]:-}" "${R[$b]:-}")
		[ "$repeat" -gt 1 ] && med=$(ratio "$(median "${ALLV[$a]:-}")" "$(median "${ALLV[$b]:-}")")
	fi
	if [ "$op" = info ]; then
		[ "$best" = n/a ] && return 0
		echo "| $label | $best |${med:+ $med |} (info) | |"
	else
		echo "| $label | $best |${med:+ $med |} $op $target | $(verdict "${med:-$best}" "$op" "$target") |"
	fi
}

machine_md() {
	echo "- date: $start_date (took $(((SECONDS - t0) / 60)) min $(((SECONDS - t0) % 60)) s)"
	echo "- machine: $(nproc) CPUs, $cpu_model; kernel $(uname -r); memory $mem_line (at start)"
	echo "- load average at start: $start_load"
	echo "- work dir: $work on $fs_line"
	echo "- $rf_version: $rf (built $(date -r "$rf" '+%Y-%m-%d %H:%M')); tree $top at $git_rev; $(fio --version)"
	[ -z "$note" ] || echo "- $note"
	echo "- region ${vol_mib} MiB (first ${vol_mib} MiB of each volume, filled before the jobs), ${runtime} s per job, sequential iodepth $seq_qd, $chunk_kib KiB chunks"
	[ -z "$rand_io_kib" ] || echo "- random jobs: $rand_io_kib KiB each (--rand-io-size), ${runtime} s their cap"
	[ "$vol_mib" -gt 64 ] || echo "- **the region fits in the 64 MiB stripe cache: RAID5/6 figures are cache figures, not member I/O** (a smoke test, not a measurement)"
	echo "- page cache dropped before every job: $( [ $drop = 1 ] && echo yes || echo 'NO (not root or --no-drop-caches)')"
	[ "$repeat" = 1 ] || echo "- every job run $repeat times$( [ $interleave = 1 ] && echo ", in $repeat rounds over all configurations (--interleave)"): the best in the tables, the medians too in the ratios (all in results.csv)"
	[ $buffered = 1 ] ||
		echo "- ${direct_io_note:-raidfuse mounted by default (no --direct-io): fio direct=1 bypasses the kernel page cache of volume.img.}"
}

# --------------------------------------------------- buffered comparison
if [ $buffered = 1 ]; then
	id=raid5-4
	read -r level n k <<<"$(config_geo $id)"
	dir=$work/$id; members=()
	mkdir -p "$dir"
	for ((i = 0; i < n; i++)); do members+=("$dir/m$i.img"); done
	mem_mib=$(((vol_mib + k - 1) / k + 2))
	progress "== buffered study: RAID5 x4, members of ${mem_mib} MiB"
	"$rf" create --level 5 --raid-devices 4 --chunk "$chunk_arg" --size "${mem_mib}M" "${members[@]}" >>"$log" 2>&1 ||
		die "raidfuse create failed (see $log)"
	bjobs=(seq-write seq-read rr-qd1)
	seq_qd=1
	mount_array "$dir" on "${members[@]}"
	progress "  prefill ${vol_mib} MiB"
	prefill "$rf_mnt/volume.img" $id || die "prefill failed"
	sync "$rf_mnt/volume.img"
	umount_array "$rf_mnt"
	rows=(raid5-4-pagecache raid5-4-direct-io)
	ROWNAME[raid5-4-pagecache]="RAID5 x4, --page-cache mount (kernel page cache)"
	ROWNAME[raid5-4-direct-io]="RAID5 x4, default mount (direct I/O)"
	# The two mounts take turns, --repeat rounds, so drifting load from
	# the rest of the machine hits both alike; the best of each is kept.
	for ((round = 1; round <= repeat; round++)); do
		for mode in pagecache direct-io; do
			# The default mount bypasses the page cache (direct I/O):
			# the page-cache row must ask for it.
			direct_io_opt=(--direct-io)
			[ $mode = pagecache ] && direct_io_opt=(--page-cache)
			mount_array "$dir" on "${members[@]}"
			row=raid5-4-$mode
			progress "== $row, round $round of $repeat (daemon pid $rf_pid)"
			for j in "${bjobs[@]}"; do
				job_rep=$round
				run_job_once "$row" "$j" "$rf_mnt/volume.img" "$rf_pid" "$rf_mnt/.raidfuse/status" \
					5 4 on "$rf_opts" 0 psync && keep_best "$row" "$j"
			done
			umount_array "$rf_mnt"
		done
	done
	job_list=("${bjobs[@]}"); seq_qd=1
	# As run_job: a job fails when no round of it succeeded (ERR).
	for row in "${rows[@]}"; do
		for j in "${bjobs[@]}"; do
			[ -n "${R[$row|$j]:-}" ] || { R[$row|$j]=ERR; CPU[$row|$j]=ERR; failed_jobs=$((failed_jobs + 1)); }
		done
	done
	{
		echo "# raidfuse buffered I/O: kernel page cache vs --direct-io ($start_date)"
		echo
		machine_md
		echo "- fio direct=0, ioengine=psync (iodepth 1); page cache dropped before each job;"
		echo "  the two mounts take turns ($repeat rounds), the best of each kept"
		echo
		echo "| config |$(for j in "${job_list[@]}"; do printf ' %s |' "$(job_title "$j")"; done)"
		echo "|---|$(for j in "${job_list[@]}"; do printf -- '---:|'; done)"
		for row in "${rows[@]}"; do
			printf '| %s |' "${ROWNAME[$row]}"
			for j in "${job_list[@]}"; do printf ' %s%s |' "$(fmt "${R[$row|$j]:-}")" "$( [ -n "${BUSY[$row|$j]:-}" ] && echo '!')"; done
			echo
		done
		echo
		echo "| daemon CPU s/GiB |$(for j in "${job_list[@]}"; do printf ' %s |' "$j"; done)"
		echo "|---|$(for j in "${job_list[@]}"; do printf -- '---:|'; done)"
		for row in "${rows[@]}"; do
			printf '| %s |' "${ROWNAME[$row]}"
			for j in "${job_list[@]}"; do printf ' %s |' "${CPU[$row|$j]:--}"; done
			echo
		done
		echo
		echo "Member I/O per fio byte and more: results.csv."
	} >"$out/summary.md"
	cat "$out/summary.md"
	echo >&2
	progress "results: $out (summary.md, results.csv, raw/)"
	[ "$failed_jobs" = 0 ] || die "$failed_jobs fio job(s) failed (ERR above; see $out/raw/)"
	exit 0
fi

# ------------------------------------------------------------------- run
n_runs=0
for c in "${config_list[@]}"; do
	case $c in plain|passthrough|raid0-3*|*:*) n_runs=$((n_runs + 1)) ;; *) n_runs=$((n_runs + ${#cache_list[@]})) ;; esac
done
progress "raidfuse fio benchmark: $n_runs mounts x ${#job_list[@]} jobs x ${runtime} s (about $((n_runs * ${#job_list[@]} * (runtime + 2) / 60 + 1)) min); results in $out"
load_now=$(cut -d' ' -f1 /proc/loadavg)
if awk -v l="$load_now" 'BEGIN { exit !(l > 0.5) }'; then
	progress "warning: load average $load_now: other work on this machine will disturb the figures"
fi

run_configs() {
	local c
	for c in "${config_list[@]}"; do
		case $c in
		plain) run_plain ;;
		passthrough) run_passthrough ;;
		*) run_array "$c" ;;
		esac
	done
}
if [ $interleave = 1 ]; then
	for ((interleave_round = 1; interleave_round <= repeat; interleave_round++)); do
		progress "== round $interleave_round of $repeat"
		run_configs
	done
else
	run_configs
fi

tables=$(print_tables)
{
	echo "# raidfuse fio benchmark"
	echo
	machine_md
	echo
	echo "$tables"
	echo
	echo "Per-job detail (latency, p99, member bytes read/written per fio byte, CPUs used"
	echo "by the rest of the machine): results.csv. Raw fio output and daemon status: raw/."
} >"$out/summary.md"
echo
echo "$tables"
echo
progress "results: $out (summary.md, results.csv, raw/)"
[ "$failed_jobs" = 0 ] || die "$failed_jobs fio job(s) failed (ERR in the tables; see $out/raw/)"
