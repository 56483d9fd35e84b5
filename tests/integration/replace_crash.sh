#!/bin/bash
# replace_crash.sh - the daemon killed between a row's write to a member
# being replaced and the same write to its replacement (RAID5 and RAID6).
#
# A replacement below its copy point takes the member's writes after the
# member's own; a SIGKILL between the two leaves the member new and the
# replacement old. The resync at the next mount must give the replacement
# the row's data along with the new parity: otherwise, once the copy ends,
# it serves a chunk that disagrees with the parity, and the loss of another
# member later rebuilds wrong bytes for data fsynced long before the crash.
. "$(dirname "$0")/lib.sh"
require_fuse
require_cmd mdadm
cd "$WORK" || exit 1
R=$RAIDFUSE
KiB=1024

# recovery_offset of FILE in sectors, as mdadm reads it (0 if none).
recovery_sectors() {
	local v
	v=$(ex_field "$1" 'Recovery Offset')
	echo "${v%% *}" | tr -dc 0-9 | sed 's/^$/0/'
}

# safe_same MNT SAFE_KIB: the 64 KiB at SAFE_KIB reads as ref, but for the
# 4 KiB at SKIP_KIB within it when SKIP_KIB is set (a column that reads
# as an I/O error).
safe_same() {
	python3 - "$1/volume.img" ref "$2" "${SKIP_KIB:--1}" <<'PY'
import sys
img, ref, at, skip = sys.argv[1], sys.argv[2], int(sys.argv[3]) * 1024, int(sys.argv[4])
with open(img, "rb", buffering=0) as v, open(ref, "rb") as r:
    for k in range(16):
        if skip >= 0 and k == skip // 4:
            continue
        v.seek(at + k * 4096); r.seek(at + k * 4096)
        if v.read(4096) != r.read(4096):
            sys.exit(f"4 KiB at {at // 1024 + 4 * k}K differs")
PY
}

# case LEVEL NDEV TORN_KIB SAFE_KIB LOSE [BAD...]: row 0's chunk at volume
# TORN_KIB lies on m1 (the member replaced), the chunk at SAFE_KIB on
# member LOSE. With BAD members (a data member and the parity), each logs
# row 0's second 4 KiB in md's bad block log while the daemon is down:
# the resync then goes column by column, passes over that lost column,
# and must give the replacement its data column by column too.
run_case() {
	local level=$1 ndev=$2 torn_kib=$3 safe_kib=$4 lose=$5 bad=${*:6}
	local dir="$WORK/raid$level-$ndev${bad:+-bad}" members=() i
	mkdir -p "$dir" && cd "$dir" || fail "mkdir $dir"
	for i in $(seq 0 $((ndev - 1))); do members+=("m$i"); done
	"$R" create --level "$level" --raid-devices "$ndev" --chunk 64K --size 32M \
		"${members[@]}" >/dev/null || fail "raid$level: create"
	truncate -s 32M copy
	rf_mount --cache-mib 0 "${members[@]}" mnt
	head -c "$(stat -c %s mnt/volume.img)" /dev/urandom >ref
	dd if=ref of=mnt/volume.img bs=1M conv=notrunc,fsync status=none ||
		fail "raid$level: fill"
	echo 3000 >mnt/.raidfuse/sync_speed_max
	"$R" replace mnt m1 copy >/dev/null || fail "raid$level: replace m1 with copy"
	# Past row 0 on the replacement, and that stored as its recovery_offset
	# (checkpoints every 2 s): the next mount resumes beyond row 0.
	for i in $(seq 200); do
		[ "$(recovery_sectors copy)" -gt 256 ] && break
		sleep 0.1
	done
	[ "$(recovery_sectors copy)" -gt 256 ] ||
		fail "raid$level: the copy stored no recovery_offset past row 0"
	local copy_dev
	copy_dev=$(dev_of mnt copy) || fail "raid$level: no devN for copy"
	# The replacement's writes wait 3 s: the kill lands between the
	# member's write and the replacement's.
	echo "latency=3000" >"mnt/.raidfuse/$copy_dev/fault" ||
		fail "raid$level: latency on the replacement"
	head -c $((64 * KiB)) /dev/urandom >new
	dd if=new of=mnt/volume.img bs=64K seek=$((torn_kib / 64)) conv=notrunc status=none &
	sleep 1.5
	rf_kill mnt
	wait
	[ "$(recovery_sectors copy)" -gt 256 ] ||
		fail "raid$level: the copy lost its recovery_offset"
	for i in $bad; do
		log_bad "$i" 8 8 || fail "raid$level: cannot log bad blocks on $i"
	done

	rf_mount --cache-mib 0 "${members[@]}" copy mnt
	grep -q -i "resync" mnt/.raidfuse/log ||
		fail "raid$level: no resync after the kill: $(cat mnt/.raidfuse/log)"
	echo 1000000 >mnt/.raidfuse/sync_speed_max
	"$R" wait mnt >/dev/null || fail "raid$level: wait for the copy"
	grep -q "/copy replaced" mnt/.raidfuse/log ||
		fail "raid$level: the replace did not finish: $(cat mnt/.raidfuse/log)"
	# The torn chunk is either bytes; everything else must read as written
	# (but the column no member holds, with BAD).
	local SKIP_KIB=${bad:+4} out
	out=$(safe_same mnt "$safe_kib" 2>&1) ||
		fail "raid$level: fsynced chunk at ${safe_kib}K wrong after the replace: $out"
	"$R" remove mnt m1 >/dev/null || fail "raid$level: remove m1"
	rf_umount mnt

	local survivors=() mism
	for i in $(seq 0 $((ndev - 1))); do
		[ "$i" = 1 ] && survivors+=(copy) || survivors+=("m$i")
	done
	if [ -z "$bad" ]; then
		mism=$("$R" verify "${survivors[@]}" | sed -n 's/^mismatch_cnt: *//p')
	else # verify refuses logged members; the mounted check passes over them
		rf_mount "${survivors[@]}" mnt
		"$R" check mnt >/dev/null || fail "raid$level: check"
		mism=$("$R" wait mnt | sed -n 's/^done: mismatch_cnt *//p')
		rf_umount mnt
	fi
	[ "$mism" = 0 ] ||
		fail "raid$level: parity disagrees with the replacement: mismatch_cnt ${mism:-?}"
	# Lose the member holding the fsynced chunk: rebuilt from the
	# replacement and parity, it must still read back exactly.
	local without=()
	for i in "${survivors[@]}"; do [ "$i" = "$lose" ] || without+=("$i"); done
	rf_mount --run "${without[@]}" mnt
	out=$(safe_same mnt "$safe_kib" 2>&1) ||
		fail "raid$level: fsynced chunk at ${safe_kib}K rebuilt wrong without $lose: $out"
	rf_umount mnt
	log "raid$level${bad:+ (bad blocks on $bad)}: replacement resynced with its member; fsynced data intact without $lose"
	cd "$WORK" || exit 1
}

# md's left-symmetric layouts, row 0. RAID5 x3: parity on role 2, data on
# roles 0 and 1. RAID6 x4: P on role 3, Q on role 0, data on roles 1, 2.
run_case 5 3 64 0 m0
run_case 6 4 0 64 m2
# Row 0 lost in one column: RAID5 x4 has parity on role 3 and data on
# roles 0-2; m2's data and m3's parity both in the log there.
run_case 5 4 64 0 m0 m2 m3
log "PASS"
