# shellcheck shell=bash disable=SC2154 # variables come from kit.sh
# lib-kit.sh - shell helpers shared by the benchmark kit's scripts (sourced):
# messages and progress, sizes, CPU time of daemons from /proc, page-cache
# drops, waiting for an idle machine, and the CSV writer.
# Expects: $prog, $log (a file), $drop (1 = drop caches), $wait_idle (s).

die() { echo "$prog: error: $*" >&2; exit 1; }
warn() { echo "$prog: warning: $*" >&2; echo "warning: $*" >>"$log"; }

kit_t0=$SECONDS
# progress TEXT: a timestamped line on stderr and in the log.
progress() {
	printf '[%3d:%02d] %s\n' $(((SECONDS - kit_t0) / 60)) $(((SECONDS - kit_t0) % 60)) "$*" >&2
	echo "$*" >>"$log"
}
# step TEXT: progress with the measurement counter, "[12/140] TEXT".
step_no=0
step_total=0
step() { step_no=$((step_no + 1)); progress "[$step_no/$step_total] $*"; }

# SIZE (512, 4k, 64K, 1m, 1G) -> bytes
size_bytes() {
	local s=${1^^} n
	s=${s%IB}; s=${s%B}
	[[ $s =~ ^([0-9]+)([KMGT]?)$ ]] || return 1
	n=${BASH_REMATCH[1]}
	case ${BASH_REMATCH[2]} in
	K) n=$((n << 10)) ;;
	M) n=$((n << 20)) ;;
	G) n=$((n << 30)) ;;
	T) n=$((n << 40)) ;;
	esac
	echo "$n"
}
# bytes -> short name like bench tables use: 512, 4k, 64k, 1m
bytes_name() {
	local b=$1
	if [ $((b % (1 << 20))) = 0 ]; then echo "$((b >> 20))m"
	elif [ $((b % 1024)) = 0 ]; then echo "$((b >> 10))k"
	else echo "$b"; fi
}
mib_ceil() { echo $((($1 + (1 << 20) - 1) >> 20)); }

clk_tck=$(getconf CLK_TCK)
# cpu_ticks "PID...": utime+stime (all threads) of the processes, summed.
cpu_ticks() {
	local p s sum=0
	for p in $1; do
		s=$(cat "/proc/$p/stat" 2>/dev/null) || continue
		s=${s##*) }   # fields from 3 on (comm may hold spaces)
		# shellcheck disable=SC2086 # split into fields on purpose
		set -- $s
		sum=$((sum + ${12} + ${13}))
	done
	echo "$sum"
}
ticks_to_s() { awk -v t="$1" -v h="$clk_tck" 'BEGIN { printf "%.2f", t / h }'; }
# Busy CPU ticks of the whole machine.
sys_ticks() { awk '/^cpu / { print $2 + $3 + $4 + $7 + $8 + $9; exit }' /proc/stat; }

drop_caches() {
	sync
	if [ "$drop" = 1 ]; then echo 3 >/proc/sys/vm/drop_caches; fi
}

# Before a measurement, wait up to $wait_idle seconds for a 1 s sample with
# under 5% of a CPU busy (0: don't wait).
wait_for_idle() {
	[ "$wait_idle" -gt 0 ] || return 0
	local end=$((SECONDS + wait_idle)) a b said=0
	while :; do
		a=$(sys_ticks); sleep 1; b=$(sys_ticks)
		[ $((b - a)) -lt $((clk_tck / 20 + 1)) ] && return 0
		if [ $SECONDS -ge $end ]; then
			progress "  machine still busy ($((100 * (b - a) / clk_tck))% of a CPU) after ${wait_idle} s; going on"
			return 0
		fi
		[ $said = 1 ] || progress "  waiting for the machine to be idle ($((100 * (b - a) / clk_tck))% of a CPU busy)"
		said=1
	done
}

# wait_until SECONDS COMMAND...: run COMMAND every 0.1 s until it succeeds.
wait_until() {
	local n=$(($1 * 10))
	shift
	while [ $n -gt 0 ]; do
		"$@" 2>/dev/null && return 0
		sleep 0.1
		n=$((n - 1))
	done
	return 1
}

# The CSV: one line per measurement (or per thing that could not be run).
CSV_COLUMNS=date,suite,target,kind,level,members,chunk_kib,pattern,rwmix_read,bs,qd,streams,set,phase,files,bytes,seconds,mb_s,iops,lat_mean_us,daemon_cpu_s,iops_per_cpu_s,mb_per_cpu_s,verified,note
csv_header() { echo "$CSV_COLUMNS" >"$csv"; }
# csv_row key=value...: unnamed columns are left empty; commas in values
# are replaced (the CSV has no quoting).
csv_row() {
	local -A v=()
	local kv col val line=''
	for kv in "$@"; do v[${kv%%=*}]=${kv#*=}; done
	v[date]=${v[date]:-$(date -Is)}
	local IFS=,
	for col in $CSV_COLUMNS; do val=${v[$col]:-}; line+=${val//,/;},; done
	echo "${line%,}" >>"$csv"
}
