# shellcheck shell=bash disable=SC2154 # variables come from kit.sh
# measure.sh - the kit's two kinds of measurement (sourced by kit.sh), each
# writing rows of results.csv:
#   run_fio_job    one IOMeter-style fio job file (iometer/*.fio) on $T_FILE
#   run_filesets   the FC-Test phases (create, read, copy, copy to a second
#                  file system) of every file set on $T_DIR, then a
#                  byte-for-byte verification of all three copies
# Both record the CPU time (utime+stime from /proc) of the target's
# daemons ($T_PIDS) over the measurement.
# Expects from kit.sh: $kit_dir, $out, $work, $runtime, $region_bytes,
# $scale, $seed, $set_list, target.sh's tgt_* and lib-kit.sh.

# row_target ID: the target columns of a CSV row.
row_target() {
	local kind=peer chunk=
	if tgt_is_array "$1"; then kind=raidfuse; chunk=$(($(size_bytes "$T_CHUNK") >> 10)); fi
	echo "target=$1 kind=$kind level=$(tgt_level "$1") members=$(tgt_members "$1") chunk_kib=$chunk"
}

# Write the region fio works on before the jobs: members and backing files
# are sparse, and reading holes would cost nothing.
prefill_region() {
	fio --name=prefill --filename="$T_FILE" --rw=write --bs=1M --iodepth=4 --ioengine=libaio \
		--direct=1 --size="$region_bytes" --fallocate=none --output-format=terse \
		>"$out/raw/prefill.out" 2>&1 || return 1
	sync "$T_FILE"
}

# pattern_mix PATTERN RWMIX -> "read_share block_size" for the CSV
pattern_mix() {
	case $1 in
	database) echo "$2 8k" ;;
	fileserver) echo "80 mix" ;;
	webserver) echo "100 mix" ;;
	workstation) echo "80 8k" ;;
	seqread) echo "100 $3" ;;
	seqwrite) echo "0 $3" ;;
	multistream-read) echo "100 64k" ;;
	multistream-write) echo "0 64k" ;;
	esac
}

# run_fio_job SUITE ID PATTERN RWMIX BS QD STREAMS
run_fio_job() {
	local suite=$1 id=$2 pat=$3 rwmix=$4 bs=$5 qd=$6 streams=$7
	local mix mixbs label raw
	read -r mix mixbs <<<"$(pattern_mix "$pat" "$rwmix" "$bs")"
	local tag=$id
	[ "$suite" != stripe ] || tag+=" chunk $T_CHUNK"
	label="$tag $pat"
	case $pat in
	database) label+=" read${rwmix}%" ;;
	seq*) label+=" bs $bs" ;;
	multistream*) label+=" x$streams" ;;
	esac
	label+=" qd$qd"
	raw=$out/raw/$suite.${tag// /-}.$pat.r$mix.b$mixbs.q$qd.s$streams
	local stream_size=$(((region_bytes / streams) >> 20 << 20))
	drop_caches
	wait_for_idle
	local c0 c1 frc=0 t0 t1
	c0=$(cpu_ticks "$T_PIDS")
	t0=$EPOCHREALTIME
	FILENAME=$T_FILE SIZE=$region_bytes RUNTIME=${runtime_ms}ms IODEPTH=$qd BS=$bs RWMIXREAD=$rwmix \
		NUMJOBS=$streams STREAM_SIZE=$stream_size \
		fio --output-format=json --output="$raw.json" "$kit_dir/iometer/$pat.fio" 2>"$raw.err" || frc=$?
	# Write out what the daemon still holds before its CPU time is read.
	sync "$T_FILE" 2>>"$raw.err" || true
	t1=$EPOCHREALTIME
	c1=$(cpu_ticks "$T_PIDS")
	local -a cols
	# shellcheck disable=SC2207
	cols=($(row_target "$id") suite="$suite" pattern="$pat" rwmix_read="$mix" bs="$mixbs" qd="$qd" streams="$streams")
	local sum
	if ! sum=$(python3 "$kit_dir/fio-summary.py" "$raw.json" 2>/dev/null) || [ $frc != 0 ]; then
		local why
		why=$(grep -m1 -iE 'error|invalid|fail' "$raw.err" "$raw.json" 2>/dev/null | head -1 | cut -c1-120)
		csv_row "${cols[@]}" note="fio failed (exit $frc): ${why:-see raw/}"
		step "$label: fio FAILED: ${why:-exit $frc}"
		return 1
	fi
	local nbytes ios mbs iops lat err cpu
	read -r nbytes ios mbs iops lat err <<<"$sum"
	if [ -n "$T_PIDS" ]; then cpu=$(ticks_to_s $((c1 - c0))); else cpu=; fi
	local per_cpu='' mb_cpu='' secs
	secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')
	if [ -n "$cpu" ] && awk -v c="$cpu" 'BEGIN { exit !(c > 0) }'; then
		per_cpu=$(awk -v i="$ios" -v c="$cpu" 'BEGIN { printf "%.0f", i / c }')
		mb_cpu=$(awk -v b="$nbytes" -v c="$cpu" 'BEGIN { printf "%.1f", b / 1e6 / c }')
	fi
	csv_row "${cols[@]}" bytes="$nbytes" seconds="$runtime" mb_s="$mbs" iops="$iops" lat_mean_us="$lat" \
		daemon_cpu_s="$cpu" iops_per_cpu_s="$per_cpu" mb_per_cpu_s="$mb_cpu" \
		note="$( [ "$err" = 0 ] || echo "fio error $err")"
	step "$(printf '%-44s %9s MB/s %9s IOPS' "$label" "$mbs" "$iops")${cpu:+  cpu ${cpu} s}"
}

# The file-set phases on target ID (mounted in fs mode by this function).
# Phases run set after set; between phases the target is unmounted and
# mounted again (raidfuse, ext4, FUSE daemons, the zfs pool), and the page
# cache is dropped before every set, so every phase starts cold. MB/s =
# bytes of the set / wall time including a final sync.
second_fs_dir() { echo "$work/second"; }
run_filesets() {
	local id=$1 s phase
	local -a tcols
	# shellcheck disable=SC2207
	tcols=($(row_target "$id"))
	local second
	second=$(second_fs_dir)
	mkdir -p "$second"
	tgt_up "$id" fs
	for phase in create read copy copy-out; do
		if [ "$phase" != create ]; then
			tgt_down "$id"; drop_caches; tgt_up "$id" fs
		fi
		for s in "${set_list[@]}"; do
			fileset_phase "$id" "$phase" "$s" "$second" "${tcols[@]}"
		done
	done
	# Verify from the members: unmount, mount, compare every copy.
	tgt_down "$id"; drop_caches; tgt_up "$id" fs
	for s in "${set_list[@]}"; do
		local bad=() where
		for where in "$T_DIR/$s" "$T_DIR/$s.copy" "$second/$s"; do
			python3 "$kit_dir/fileset.py" --scale "$scale" --seed "$seed" verify "$s" "$where" \
				>>"$log" 2>"$out/raw/verify.err" || bad+=("${where#"$work"/}: $(head -1 "$out/raw/verify.err")")
		done
		if [ ${#bad[@]} = 0 ]; then
			csv_row "${tcols[@]}" suite=fileset set="$s" phase=verify files="${SET_FILES[$s]}" \
				bytes="${SET_BYTES[$s]}" verified=yes note="set; copy; copy on the second file system: identical to the generator's"
			step "$id $s verify: all three copies identical to the generator's"
		else
			csv_row "${tcols[@]}" suite=fileset set="$s" phase=verify files="${SET_FILES[$s]}" \
				bytes="${SET_BYTES[$s]}" verified=no note="DATA DIFFERS: ${bad[*]}"
			step "$id $s verify: DATA DIFFERS: ${bad[*]}"
			warn "$id: file set $s does not verify: ${bad[*]}"
		fi
		rm -rf "${T_DIR:?}/$s" "${T_DIR:?}/$s.copy" "${second:?}/$s"
	done
	if [ -n "${T_MNT_FS[$id]:-}" ]; then
		# ext4 on a volume: check it with e2fsck once unmounted.
		ext4_down "$id"
		ext4_check "$id" "$T_FILE" "$(tgt_is_array "$id" && echo raidfuse || echo peer)"
	fi
	tgt_down "$id"
}

# fileset_phase ID PHASE SET SECOND_DIR TARGET_COLUMNS...
# create and read are timed by fileset.py itself (first I/O to the end of
# a sync; the interpreter's start-up is not the file system's time), copy
# and copy-out here around cp -a and sync. The tools are run once after
# the cache drop, so loading them from disk is not timed either.
fileset_phase() {
	local id=$1 phase=$2 s=$3 second=$4
	shift 4
	local fs=$T_DIR c0 c1 t0 t1 rc=0 res secs=''
	drop_caches
	python3 "$kit_dir/fileset.py" --scale "$scale" list "$s" >/dev/null
	cp --version >/dev/null; sync --version >/dev/null
	wait_for_idle
	c0=$(cpu_ticks "$T_PIDS")
	t0=$EPOCHREALTIME
	case $phase in
	create) res=$(python3 "$kit_dir/fileset.py" --scale "$scale" --seed "$seed" create "$s" "$fs" 2>>"$log") || rc=$? ;;
	read) res=$(python3 "$kit_dir/fileset.py" read "$fs/$s" 2>>"$log") || rc=$? ;;
	copy) cp -a "$fs/$s" "$fs/$s.copy" 2>>"$log" || rc=$? ;;
	copy-out) cp -a "$fs/$s" "$second/$s" 2>>"$log" || rc=$? ;;
	esac
	[ "$phase" = read ] || sync
	t1=$EPOCHREALTIME
	c1=$(cpu_ticks "$T_PIDS")
	case $phase in
	create|read) [ $rc != 0 ] || secs=$(echo "$res" | awk '{ print $3 }') ;;
	*) secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }') ;;
	esac
	local mbs cpu=''
	[ -z "$T_PIDS" ] || cpu=$(ticks_to_s $((c1 - c0)))
	if [ $rc != 0 ] || [ -z "$secs" ]; then
		csv_row "$@" suite=fileset set="$s" phase="$phase" files="${SET_FILES[$s]}" bytes="${SET_BYTES[$s]}" \
			note="$phase failed (exit $rc; see raw/kit.log)"
		step "$id $s $phase: FAILED (exit $rc)"
		return 1
	fi
	mbs=$(awk -v n="${SET_BYTES[$s]}" -v t="$secs" 'BEGIN { printf "%.1f", (t > 0 ? n / 1e6 / t : 0) }')
	csv_row "$@" suite=fileset set="$s" phase="$phase" files="${SET_FILES[$s]}" bytes="${SET_BYTES[$s]}" \
		seconds="$secs" mb_s="$mbs" daemon_cpu_s="$cpu"
	step "$(printf '%-12s %-9s %-8s %5s files %8.1f MB %7s s %8s MB/s' "$id" "$s" "$phase" \
		"${SET_FILES[$s]}" "$(awk -v n="${SET_BYTES[$s]}" 'BEGIN { print n / 1e6 }')" "$secs" "$mbs")${cpu:+  cpu ${cpu} s}"
}
