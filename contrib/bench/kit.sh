#!/bin/bash
# shellcheck source-path=SCRIPTDIR
# kit.sh - the benchmark kit: one command that measures raidfuse the way RAID
# controller reviews do and draws the pictures.
#
# Suites (--only picks some):
#   fileset  FC-Test-style file sets (fileset.py): create, read, copy within
#            the file system, copy to a second file system; MB/s per set
#            and phase; every copy verified byte for byte afterwards
#   iometer  IOMeter access patterns as fio job files (iometer/*.fio):
#            Database (read share swept), File server, Web server,
#            Workstation at several queue depths, sequential read and
#            write over block sizes, multi-stream 64 KiB
#   stripe   chunk sizes 4 KiB-1 MiB on RAID0 and RAID5, with the daemon's
#            CPU time: IOPS per daemon CPU-second
# and two target groups that the fileset and iometer suites run on:
#   arrays   the array sweep (JBOD, RAID0 of 2-4, RAID1, RAID10, RAID5 of
#            3 and 4, RAID6 of 4 and 5); without it, the reference array
#            (RAID5 of 4) only
#   peers    the plain file system, libfuse's passthrough example, zfs-fuse
#            raidz and nbdkit behind nbdfuse, side by side
# Output (--out): results.csv, report.md (report.py), charts/*.png
# (plot.py, gnuplot), raw/ (fio JSON, kit.log). Exit status 3 when a
# raidfuse array failed an integrity check (file sets, parity, e2fsck).
#
# This file owns the options, the plan, the time estimate and the order of
# work; targets.sh, measure.sh and lib-kit.sh do the rest.
set -euo pipefail

kit_dir=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$kit_dir/../.." && pwd)
prog=kit.sh

usage() {
	cat <<EOF
Usage: $prog [--quick | --full] [OPTIONS]
  --quick              the default: small sizes and short jobs, every suite,
                       a few arrays and the peers (under 10 minutes on 2 CPUs)
  --full               the whole matrix (prints its estimate first; hours)
  --only LIST          suites and target groups, from: fileset, iometer,
                       stripe, arrays, peers (default: all). "arrays" or
                       "peers" alone run both fileset and iometer on them.
  --arrays LIST        arrays for fileset/iometer, as LEVEL-N: jbod-N, raid0-N,
                       raid1-N, raid10-N, raid5-N, raid6-N (implies arrays)
  --peers LIST         from plain, passthrough, zfs, nbd (default: all)
  --peer-members N     zfs-fuse raidz width (default 4, like the RAID5 of 4)
  --scale F            file-set scale factor (1 = the classic 5.6 GB; quick 0.02,
                       full 0.1)
  --seed N             file-set seed (default 1)
  --sets LIST          from Install, ISO, MP3, Programs, Windows (default: all)
  --patterns LIST      iometer patterns: database, fileserver, webserver,
                       workstation, seqread, seqwrite, multistream-read,
                       multistream-write (full: all; quick: all but the last)
  --qd LIST            queue depths of the random patterns (full 1,4,16,64)
  --rwmix LIST         Database read shares in % (full 0,25,50,75,100)
  --bs LIST            sequential block sizes (full 512 to 1m, doubling)
  --seq-qd N           queue depth of the sequential patterns (default 4)
  --streams LIST       multi-stream worker counts (full 1,2,3,4)
  --stripe-arrays LIST arrays of the stripe sweep (default raid0-4,raid5-4)
  --chunks LIST        chunk sizes of the stripe sweep (full 4k to 1m)
  --stripe-patterns L  from seqread, seqwrite, database (read 67%), at qd
                       --stripe-qd (16) for database, --seq-qd for the others
                       (quick seqwrite,database; full all three)
  --runtime S          seconds per fio job (quick 1.5, full 5)
  --size SIZE          region of each volume fio works on (quick 256M, full 1G)
  --out DIR            results folder (default ./kit-results/DATE)
  --dir DIR            work directory (default \$BENCH_DIR or /var/tmp), removed after
  --raidfuse PATH      raidfuse binary (default \$RAIDFUSE, build/raidfuse, PATH)
  --wait-idle S        before each measurement wait up to S s for an idle machine
  --no-drop-caches     do not drop the page cache between phases and jobs
  --no-plots           no PNG charts
  --dry-run            print the plan and its estimate, measure nothing
  --install-deps       apt-get install what the kit and its peers need, then go on
  --note TEXT          a line for the report
  -h, --help
EOF
}

# ---------------------------------------------------------------- options
mode=quick
only='' arrays_opt='' peers=plain,passthrough,zfs,nbd peer_members=4
scale='' seed=1 sets=Install,ISO,MP3,Programs,Windows patterns=''
qds='' rwmixes='' bss='' seq_qd=4 streams_opt='' stripe_arrays=raid0-4,raid5-4 chunks='' stripe_patterns='' stripe_qd=16
runtime='' size_arg='' out='' work_parent=${BENCH_DIR:-/var/tmp} rf=${RAIDFUSE:-}
wait_idle=0 drop=1 plots=1 dry=0 install=0 note=''
only_list=() array_list=() peer_list=() stripe_array_list=() set_list=() pattern_list=()
qd_list=() rwmix_list=() bs_list=() streams_list=() chunk_list=() stripe_pattern_list=()

need_arg() {
	if [ $# -lt 2 ] || [ -z "$2" ]; then echo "$prog: $1 needs an argument" >&2; exit 2; fi
}
while [ $# -gt 0 ]; do
	case $1 in
	--quick) mode=quick ;;
	--full) mode=full ;;
	--only) need_arg "$@"; only=$2; shift ;;
	--arrays) need_arg "$@"; arrays_opt=$2; shift ;;
	--peers) need_arg "$@"; peers=$2; shift ;;
	--peer-members) need_arg "$@"; peer_members=$2; shift ;;
	--scale) need_arg "$@"; scale=$2; shift ;;
	--seed) need_arg "$@"; seed=$2; shift ;;
	--sets) need_arg "$@"; sets=$2; shift ;;
	--patterns) need_arg "$@"; patterns=$2; shift ;;
	--qd) need_arg "$@"; qds=$2; shift ;;
	--rwmix) need_arg "$@"; rwmixes=$2; shift ;;
	--bs) need_arg "$@"; bss=$2; shift ;;
	--seq-qd) need_arg "$@"; seq_qd=$2; shift ;;
	--streams) need_arg "$@"; streams_opt=$2; shift ;;
	--stripe-arrays) need_arg "$@"; stripe_arrays=$2; shift ;;
	--chunks) need_arg "$@"; chunks=$2; shift ;;
	--stripe-patterns) need_arg "$@"; stripe_patterns=$2; shift ;;
	--stripe-qd) need_arg "$@"; stripe_qd=$2; shift ;;
	--runtime) need_arg "$@"; runtime=$2; shift ;;
	--size) need_arg "$@"; size_arg=$2; shift ;;
	--out) need_arg "$@"; out=$2; shift ;;
	--dir) need_arg "$@"; work_parent=$2; shift ;;
	--raidfuse) need_arg "$@"; rf=$2; shift ;;
	--wait-idle) need_arg "$@"; wait_idle=$2; shift ;;
	--no-drop-caches) drop=0 ;;
	--no-plots) plots=0 ;;
	--dry-run) dry=1 ;;
	--install-deps) install=1 ;;
	--note) need_arg "$@"; note=$2; shift ;;
	-h|--help) usage; exit 0 ;;
	*) usage >&2; echo "$prog: unknown option '$1'" >&2; exit 2 ;;
	esac
	shift
done

# Mode defaults for what was not given.
if [ $mode = quick ]; then
	: "${scale:=0.02}" "${runtime:=1.5}" "${size_arg:=256M}" "${qds:=1,16}" "${rwmixes:=0,100}"
	: "${patterns:=database,fileserver,webserver,workstation,seqread,seqwrite,multistream-read}"
	: "${bss:=4k,1m}" "${streams_opt:=1,4}" "${chunks:=4k,64k,1m}" "${stripe_patterns:=seqwrite,database}"
	sweep_arrays=raid0-2,raid5-4
else
	: "${scale:=0.1}" "${runtime:=5}" "${size_arg:=1G}" "${qds:=1,4,16,64}" "${rwmixes:=0,25,50,75,100}"
	: "${patterns:=database,fileserver,webserver,workstation,seqread,seqwrite,multistream-read,multistream-write}"
	: "${bss:=512,1k,2k,4k,8k,16k,32k,64k,128k,256k,512k,1m}" "${streams_opt:=1,2,3,4}"
	: "${chunks:=4k,8k,16k,32k,64k,128k,256k,512k,1m}" "${stripe_patterns:=seqread,seqwrite,database}"
	sweep_arrays=jbod-1,raid0-2,raid0-3,raid0-4,raid1-2,raid10-4,raid5-3,raid5-4,raid6-4,raid6-5
fi
reference_array=raid5-4

log=/dev/null
. "$kit_dir/lib-kit.sh"
. "$kit_dir/targets.sh"
. "$kit_dir/measure.sh"

# ------------------------------------------------------------ validation
split_list() { local IFS=,; read -r -a "$1" <<<"$2"; }
has() { [[ ",$1," == *",$2,"* ]]; }

: "${only:=fileset,iometer,stripe,arrays,peers}"
split_list only_list "$only"
for s in "${only_list[@]}"; do
	case $s in fileset|iometer|stripe|arrays|peers) ;; *) die "--only: unknown suite '$s'" ;; esac
done
if [ -n "$arrays_opt" ]; then has "$only" arrays || only+=,arrays; fi
if { has "$only" arrays || has "$only" peers; } && ! has "$only" fileset && ! has "$only" iometer; then
	only+=,fileset,iometer
fi
do_fileset=0 do_iometer=0 do_stripe=0
has "$only" fileset && do_fileset=1
has "$only" iometer && do_iometer=1
has "$only" stripe && do_stripe=1

if has "$only" arrays; then split_list array_list "${arrays_opt:-$sweep_arrays}"
else array_list=("$reference_array"); fi
peer_list=()
has "$only" peers && split_list peer_list "$peers"
for a in "${array_list[@]}"; do array_geo "$a" >/dev/null || die "unknown array '$a' (LEVEL-N: jbod-1, raid0-2, raid5-4, ...)"; done
for p in "${peer_list[@]}"; do
	case $p in plain|passthrough|zfs|nbd) ;; *) die "unknown peer '$p' (plain, passthrough, zfs, nbd)" ;; esac
done
split_list stripe_array_list "$stripe_arrays"
for a in "${stripe_array_list[@]}"; do array_geo "$a" >/dev/null || die "unknown stripe array '$a'"; done
split_list set_list "$sets"
for s in "${set_list[@]}"; do
	case $s in Install|ISO|MP3|Programs|Windows) ;; *) die "unknown file set '$s'" ;; esac
done
split_list pattern_list "$patterns"
for p in "${pattern_list[@]}"; do [ -r "$kit_dir/iometer/$p.fio" ] || die "unknown pattern '$p' (no iometer/$p.fio)"; done
split_list qd_list "$qds"
split_list rwmix_list "$rwmixes"
split_list bs_list "$bss"
split_list streams_list "$streams_opt"
split_list chunk_list "$chunks"
split_list stripe_pattern_list "$stripe_patterns"
for n in "${qd_list[@]}" "${rwmix_list[@]}" "${streams_list[@]}" "$seq_qd" "$stripe_qd" "$peer_members" "$wait_idle"; do
	[[ $n =~ ^[0-9]+$ ]] || die "'$n' is not a whole number"
done
for n in "${rwmix_list[@]}"; do [ "$n" -le 100 ] || die "--rwmix: $n is more than 100"; done
for b in "${bs_list[@]}"; do size_bytes "$b" >/dev/null || die "--bs: '$b' is not a size"; done
for c in "${chunk_list[@]}"; do
	cb=$(size_bytes "$c") || die "--chunks: '$c' is not a size"
	{ [ "$cb" -ge 4096 ] && [ "$cb" -le 1048576 ] && [ $((cb & (cb - 1))) = 0 ]; } || die "--chunks: $c is not a power of two from 4k to 1m"
done
for p in "${stripe_pattern_list[@]}"; do
	case $p in seqread|seqwrite|database) ;; *) die "unknown stripe pattern '$p' (seqread, seqwrite, database)" ;; esac
done
region_bytes=$(size_bytes "$size_arg") || die "--size '$size_arg' is not a size"
[ "$region_bytes" -ge $((64 << 20)) ] || die "--size must be at least 64M"
awk -v r="$runtime" 'BEGIN { exit !(r + 0 == r && r >= 0.5) }' || die "--runtime '$runtime' must be a number of seconds >= 0.5"
runtime_ms=$(awk -v r="$runtime" 'BEGIN { printf "%d", r * 1000 }')
awk -v s="$scale" 'BEGIN { exit !(s > 0 && s <= 10) }' || die "--scale '$scale' must be a number in (0, 10]"

# ------------------------------------------------------------ dependencies
if [ $install = 1 ]; then
	echo "$prog: installing fio, gnuplot-nox, zfs-fuse, nbdkit, libnbd-bin and the rest with apt-get" >&2
	as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }
	as_root apt-get update -q
	as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
		fio gnuplot-nox zfs-fuse nbdkit libnbd-bin e2fsprogs python3 fuse3 libfuse3-dev gcc pkg-config
fi

# ------------------------------------------------------------ file sets
declare -A SET_FILES=() SET_BYTES=()
fs_need=0
if [ $do_fileset = 1 ]; then
	total=0 files=0
	while read -r name nfiles nbytes _; do
		SET_FILES[$name]=$nfiles; SET_BYTES[$name]=$nbytes
		total=$((total + nbytes)); files=$((files + nfiles))
	done < <(python3 "$kit_dir/fileset.py" --scale "$scale" --seed "$seed" list "${set_list[@]}")
	# Every set and its copy at once, 4 KiB per file of rounding, 10% for
	# ext4's metadata, 64 MiB of margin.
	fs_need=$(((total + files * 4096) * 2 * 11 / 10 + (64 << 20)))
	fileset_bytes=$total
fi

# ------------------------------------------------------------------ plan
# Every fio job of the iometer suite: "pattern rwmix bs qd streams".
iometer_jobs=()
for p in "${pattern_list[@]}"; do
	case $p in
	database) for r in "${rwmix_list[@]}"; do for q in "${qd_list[@]}"; do iometer_jobs+=("$p $r 8k $q 1"); done; done ;;
	fileserver|webserver|workstation) for q in "${qd_list[@]}"; do iometer_jobs+=("$p 0 8k $q 1"); done ;;
	seqread|seqwrite) for b in "${bs_list[@]}"; do iometer_jobs+=("$p 0 $b $seq_qd 1"); done ;;
	multistream-*) for n in "${streams_list[@]}"; do iometer_jobs+=("$p 0 64k 1 $n"); done ;;
	esac
done
stripe_jobs=()
for p in "${stripe_pattern_list[@]}"; do
	case $p in
	database) stripe_jobs+=("database 67 8k $stripe_qd 1") ;;
	*) stripe_jobs+=("$p 0 1m $seq_qd 1") ;;
	esac
done
targets=("${array_list[@]}" "${peer_list[@]}")
[ $do_fileset = 1 ] || [ $do_iometer = 1 ] || targets=()
# The estimate counts only the targets this machine can run (a peer whose
# tools are missing is skipped at its turn, and said so in the report).
runnable=() left_out=()
for t in "${targets[@]}"; do
	if tgt_check "$t" >/dev/null; then runnable+=("$t"); else left_out+=("$t"); fi
done
n_fio=0 n_fs=0
[ $do_iometer = 0 ] || n_fio=$((${#runnable[@]} * ${#iometer_jobs[@]}))
[ $do_fileset = 0 ] || n_fs=$((${#runnable[@]} * ${#set_list[@]} * 5))
n_stripe=0
[ $do_stripe = 0 ] || n_stripe=$((${#stripe_array_list[@]} * ${#chunk_list[@]} * ${#stripe_jobs[@]}))
step_total=$((n_fio + n_fs + n_stripe))
[ $step_total -gt 0 ] || die "nothing to run"

# Estimate, from quick runs on a 2-CPU VM: a fio job costs its runtime
# plus ~1 s (cache drop, start, fsync); a target ~3 s to set up and tear
# down plus its prefill (~400 MB/s); a file-set phase ~0.5 s per set plus
# the set's bytes at ~200 MB/s, verification ~0.5 s per set plus 3 reads
# at ~500 MB/s, a remount ~1 s.
est=$(awk -v nf="$((n_fio + n_stripe))" -v rt="$runtime" -v nt="${#runnable[@]}" \
	-v ns="$((${#stripe_array_list[@]} * ${#chunk_list[@]}))" -v reg="$region_bytes" \
	-v io="$do_iometer" -v fsb="${fileset_bytes:-0}" -v dofs="$do_fileset" -v nsets="${#set_list[@]}" \
	'BEGIN { s = nf * (rt + 1) + ns * (3 + reg / 400e6) + nt * 3
		if (io) s += nt * reg / 400e6
		if (dofs) s += nt * (nsets * 4 * 0.5 + fsb * 4 / 200e6 + nsets * 0.5 + fsb * 3 / 500e6 + 5)
		printf "%d", s }')

# --------------------------------------------------------- requirements
command -v fio >/dev/null || die "fio is not installed (Debian: apt-get install fio, or kit.sh --install-deps)"
fio --enghelp 2>/dev/null | grep -qw libaio || die "this fio has no libaio engine"
command -v python3 >/dev/null || die "python3 is needed"
if [ $dry = 0 ]; then
	[ "$(id -u)" = 0 ] || die "run as root: the file sets loop-mount ext4 and the page cache is dropped"
	[ -c /dev/fuse ] || die "/dev/fuse is missing: FUSE is not available here"
	command -v fusermount3 >/dev/null || die "fusermount3 is missing (Debian: fuse3)"
	[ $do_fileset = 0 ] || command -v mkfs.ext4 >/dev/null || die "mkfs.ext4 is missing (Debian: e2fsprogs)"
	if [ -z "$rf" ]; then
		if [ -x "$top/build/raidfuse" ]; then rf=$top/build/raidfuse
		elif command -v raidfuse >/dev/null; then rf=$(command -v raidfuse)
		else die "no raidfuse binary: build one (bash contrib/build.sh) or pass --raidfuse PATH"; fi
	fi
	[ -x "$rf" ] || die "raidfuse binary '$rf' is not executable"
	rf=$(cd "$(dirname "$rf")" && pwd)/$(basename "$rf")
fi
if [ $plots = 1 ] && ! command -v gnuplot >/dev/null; then
	echo "$prog: gnuplot is not installed: no charts (Debian: gnuplot-nox, or --install-deps)" >&2
	plots=0
fi

vol_bytes=$((region_bytes > fs_need ? region_bytes : fs_need))
estimate_line="$step_total measurements:"
[ ${#runnable[@]} = 0 ] || estimate_line+=" ${#runnable[@]} targets (${runnable[*]})"
[ ${#left_out[@]} = 0 ] || estimate_line+=" (${left_out[*]} left out: not installed here)"
[ ${#targets[@]} = 0 ] || [ $do_stripe = 0 ] || estimate_line+=","
[ $do_stripe = 0 ] || estimate_line+=" stripe sweep over ${#stripe_array_list[@]} arrays x ${#chunk_list[@]} chunks"
estimate_line+="; about $((est / 60 + 1)) min"
echo "$prog: $mode run: $estimate_line" >&2
if [ $dry = 1 ]; then
	echo "suites: fileset=$do_fileset iometer=$do_iometer stripe=$do_stripe"
	echo "fileset: scale $scale, seed $seed, sets ${set_list[*]}, $(( ${fileset_bytes:-0} / 1000000 )) MB per target, volume $((vol_bytes >> 20)) MiB"
	echo "iometer: ${#iometer_jobs[@]} jobs per target, ${runtime} s each, region $((region_bytes >> 20)) MiB"
	echo "stripe: ${stripe_array_list[*]} x chunks ${chunk_list[*]} x ${#stripe_jobs[@]} jobs"
	exit 0
fi

# ------------------------------------------------------------- folders
stamp=$(date +%Y%m%d-%H%M%S)
out=${out:-$PWD/kit-results/$stamp}
mkdir -p "$out/raw" "$out/charts"
out=$(cd "$out" && pwd)
work=$(mktemp -d "$work_parent/raidfuse-kit.XXXXXX")
log=$out/raw/kit.log
: >"$log"
csv=$out/results.csv
csv_header

cleanup() {
	local rc=$?
	set +e
	trap - EXIT INT TERM
	tgt_cleanup_all
	rm -rf "$work"
	exit $rc
}
trap cleanup EXIT
trap 'progress "interrupted"; exit 130' INT TERM

need_mib=$(((vol_bytes * 3) >> 20))
avail_mib=$(df -Pm "$work" | awk 'NR == 2 { print $4 }')
[ "$avail_mib" -ge "$need_mib" ] || die "work dir $work has $avail_mib MiB free, the run needs about $need_mib MiB"

meta() { printf '%s=%s\n' "$1" "$2" >>"$out/meta.txt"; }
: >"$out/meta.txt"
meta mode "$mode"
meta date "$(date '+%Y-%m-%d %H:%M:%S %Z')"
meta machine "$(nproc) CPUs, $(awk -F': *' '/^model name/ { print $2; exit }' /proc/cpuinfo); $(free -m | awk '/^Mem:/ { printf "%d MiB RAM", $2 }')"
meta kernel "$(uname -srm)"
meta load_start "$(cut -d' ' -f1-3 /proc/loadavg)"
meta work_fs "$(df -PTh "$work" | awk 'NR == 2 { printf "%s (%s)", $1, $2 }')"
git_rev=$(git -C "$top" rev-parse --short HEAD 2>/dev/null || echo unknown)
git -C "$top" diff --quiet HEAD -- src fs 2>/dev/null || git_rev="$git_rev (src/fs modified)"
meta commit "$git_rev"
meta raidfuse "$("$rf" --version 2>/dev/null | head -1) ($rf)"
meta fio "$(fio --version)"
meta scale "$scale"
meta seed "$seed"
meta sets "${set_list[*]}"
meta runtime "$runtime"
meta region_mib "$((region_bytes >> 20))"
meta seq_qd "$seq_qd"
meta stripe_qd "$stripe_qd"
meta chunk_default "$T_CHUNK"
meta suites "$only"
meta drop_caches "$drop"
meta estimate_min "$((est / 60 + 1))"
meta second_fs "a directory on the host file system the members live on ($(df -PTh "$work" | awk 'NR == 2 { printf "%s, %s", $1, $2 }'))"
[ -z "$note" ] || meta note "$note"

load_now=$(cut -d' ' -f1 /proc/loadavg)
if awk -v l="$load_now" 'BEGIN { exit !(l > 0.5) }'; then
	progress "warning: load average $load_now: other work on this machine will disturb the figures"
fi
progress "results in $out; work dir $work"

# skip_target ID REASON: record why a target does not run, advance the count.
skip_target() {
	local id=$1 why=$2 suite
	# shellcheck disable=SC2046
	for suite in fileset iometer; do
		[ "$(eval echo "\$do_$suite")" = 1 ] || continue
		csv_row $(row_target "$id") suite="$suite" note="not run: $why"
	done
	meta "peer_$id" "not run: $why"
	[ $do_iometer = 0 ] || step_no=$((step_no + ${#iometer_jobs[@]}))
	[ $do_fileset = 0 ] || step_no=$((step_no + ${#set_list[@]} * 5))
	progress "$id: not run: $why"
}

# --------------------------------------------------------------- peers
if [ ${#targets[@]} -gt 0 ] && [ ${#peer_list[@]} -gt 0 ] && has "$peers" nbd &&
	command -v nbdfuse >/dev/null && command -v nbdkit >/dev/null; then
	split_result=$(probe_nbd_split)
	meta nbd_split_probe "$split_result"
	progress "nbdkit split plugin probe (a JBOD peer?): $split_result"
fi

# ------------------------------------------------ fileset and iometer
T_CHUNK=64k
for id in "${targets[@]}"; do
	if ! why=$(tgt_check "$id"); then skip_target "$id" "$why"; continue; fi
	progress "== $id: setting up"
	if ! tgt_setup "$id" 2>>"$log"; then skip_target "$id" "setup failed (see raw/kit.log)"; continue; fi
	tgt_is_array "$id" || meta "peer_$id" run
	if [ $do_iometer = 1 ]; then
		tgt_up "$id" block
		if ! prefill_region; then
			why="fio cannot write its file: $(grep -m1 -iE 'error|invalid' "$out/raw/prefill.out" | cut -c1-100)"
			tgt_down "$id"
			# shellcheck disable=SC2046
			csv_row $(row_target "$id") suite=iometer note="not run: $why"
			step_no=$((step_no + ${#iometer_jobs[@]}))
			progress "$id: iometer not run: $why"
		else
			for j in "${iometer_jobs[@]}"; do
				# shellcheck disable=SC2086
				run_fio_job iometer "$id" $j || true
			done
			tgt_down "$id"
		fi
	fi
	[ $do_fileset = 0 ] || run_filesets "$id"
	tgt_teardown "$id"
done

# ------------------------------------------------------------ stripe
if [ $do_stripe = 1 ]; then
	saved_vol=$vol_bytes
	vol_bytes=$region_bytes
	T_CONTEXT="stripe sweep"
	for id in "${stripe_array_list[@]}"; do
		for T_CHUNK in "${chunk_list[@]}"; do
			progress "== stripe sweep: $id, chunk $T_CHUNK"
			tgt_setup "$id"
			tgt_up "$id" block
			prefill_region || die "$id chunk $T_CHUNK: prefill failed (see raw/prefill.out)"
			for j in "${stripe_jobs[@]}"; do
				# shellcheck disable=SC2086
				run_fio_job stripe "$id" $j || true
			done
			tgt_down "$id"
			tgt_teardown "$id"
		done
	done
	T_CHUNK=64k T_CONTEXT=''
	vol_bytes=$saved_vol
fi

meta duration_s "$((SECONDS - kit_t0))"
meta load_end "$(cut -d' ' -f1-3 /proc/loadavg)"

# ------------------------------------------------------------ results
if [ $plots = 1 ]; then
	python3 "$kit_dir/plot.py" "$out" >>"$log" 2>&1 || warn "plot.py failed (see $log)"
fi
python3 "$kit_dir/report.py" "$out" || die "report.py failed"
progress "done in $(((SECONDS - kit_t0) / 60)) min $(((SECONDS - kit_t0) % 60)) s (estimated $((est / 60 + 1)) min): $out/report.md"
# A benchmark that corrupts data is worthless: say so, and for raidfuse
# fail the run (exit 3) once the report is written.
bad_rf=$(awk -F, '$4 == "raidfuse" && $24 == "no"' "$csv" | wc -l)
bad_peer=$(awk -F, '$4 == "peer" && $24 == "no"' "$csv" | wc -l)
[ "$bad_peer" = 0 ] || warn "$bad_peer integrity check(s) of peers failed: see report.md"
if [ "$bad_rf" != 0 ]; then
	warn "$bad_rf integrity check(s) of raidfuse arrays FAILED: see report.md"
	exit 3
fi
