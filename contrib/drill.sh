#!/bin/bash
# drill.sh - a degraded-mode recovery drill on a raidfuse volume:
#   create an array, run fio with crc32c verification (a writer and a
#   reader), fail a member mid-run, remove it, add a replacement, wait for
#   the rebuild with progress, run check, and report.
#
# Usage: contrib/drill.sh [--level 5|6|1|10] [--members 4] [--chunk 64K]
#                         [--size 256M] [--runtime 20] [--dir DIR] [--keep]
# Needs fio and a built raidfuse (RAIDFUSE=path, default build/raidfuse).
# Exit status 0 when the drill passes: no verify errors, no I/O errors seen
# by the user on a redundant level, and mismatch_cnt 0 after the rebuild.
set -uo pipefail

level=5 members=4 chunk=64K size=256M runtime=20 dir= keep=0
while [ $# -gt 0 ]; do
	case $1 in
	--level) level=$2; shift 2 ;;
	--members) members=$2; shift 2 ;;
	--chunk) chunk=$2; shift 2 ;;
	--size) size=$2; shift 2 ;;
	--runtime) runtime=$2; shift 2 ;;
	--dir) dir=$2; shift 2 ;;
	--keep) keep=1; shift ;;
	-h | --help) sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "drill: unknown option $1 (see --help)" >&2; exit 2 ;;
	esac
done
# A drill fails a member: levels that cannot lose one have nothing to
# drill, and only striped levels take a chunk size.
case $level in
1 | raid1 | 10 | raid10 | 5 | raid5 | 6 | raid6) ;;
*) echo "drill: level $level cannot lose a member (no redundancy): drill 1, 10, 5 or 6" >&2; exit 2 ;;
esac
chunk_opt=(--chunk "$chunk")
case $level in 1 | raid1) chunk_opt=() chunk=none ;; esac
top=$(cd "$(dirname "$0")/.." && pwd)
RAIDFUSE=${RAIDFUSE:-$top/build/raidfuse}
[ -x "$RAIDFUSE" ] || { echo "drill: no raidfuse at $RAIDFUSE (build it, or set RAIDFUSE)" >&2; exit 2; }
command -v fio >/dev/null || { echo "drill: fio is not installed" >&2; exit 2; }
# A --dir the user names may hold other files: the drill removes only what
# it made there, and the directory itself only if it made it.
made_dir=0
if [ -z "$dir" ]; then
	dir=$(mktemp -d "${TMPDIR:-/tmp}/raidfuse-drill.XXXXXX") || exit 2
	made_dir=1
elif [ ! -e "$dir" ]; then
	mkdir -p "$dir" || exit 2
	made_dir=1
fi
mnt=$dir/mnt
[ ! -e "$mnt" ] || [ -z "$(ls -A "$mnt" 2>/dev/null)" ] ||
	{ echo "drill: $mnt exists and is not empty" >&2; exit 2; }
mkdir -p "$mnt"
writer='' reader=''
cleanup() {
	local p
	trap - EXIT INT TERM
	# fio must be gone before the volume can be unmounted.
	for p in $writer $reader; do kill "$p" 2>/dev/null; done
	for p in $writer $reader; do wait "$p" 2>/dev/null; done
	if mountpoint -q "$mnt" && ! "$RAIDFUSE" umount "$mnt"; then
		# Never remove the members of an array that is still mounted.
		echo "drill: $mnt is still mounted; left $dir as it is" >&2
		return
	fi
	[ "$keep" = 1 ] && return
	[ ${#made[@]} = 0 ] || rm -f "${made[@]}"
	rmdir "$mnt" 2>/dev/null
	[ "$made_dir" = 0 ] || rmdir "$dir" 2>/dev/null
}
files=() made=()
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
say() { printf 'drill: %s\n' "$*"; }

for ((i = 0; i < members; i++)); do files+=("$dir/member$i.img"); done
for f in "${files[@]}" "$dir/replacement.img" "$dir/writer.out" "$dir/reader.out"; do
	[ ! -e "$f" ] || { echo "drill: $f already exists" >&2; exit 2; }
done
made=("${files[@]}" "$dir/replacement.img" "$dir/writer.out" "$dir/reader.out")
"$RAIDFUSE" create --level "$level" --raid-devices "$members" "${chunk_opt[@]}" --size "$size" \
	"${files[@]}" >/dev/null || exit 1
# The members' size as created (a bare --size is KiB to raidfuse, as in mdadm).
member_bytes=$(stat -c %s "${files[0]}")
"$RAIDFUSE" mount "${files[@]}" "$mnt" || exit 1
vol_mib=$(( $(stat -c %s "$mnt/volume.img") / 1048576 ))
half=$(( vol_mib / 2 ))
say "raid$level of $members members ($chunk chunk), volume $vol_mib MiB at $mnt"

# The reader verifies a region written first; the writer keeps writing and
# verifying its own region while the member fails and is rebuilt.
fio --name=prefill --filename="$mnt/volume.img" --offset=0 --size=${half}M --rw=write --bs=1M \
	--ioengine=psync --verify=crc32c --do_verify=0 --verify_state_save=0 --output=/dev/null || exit 1
fio --name=writer --filename="$mnt/volume.img" --offset=${half}M --size=$(( vol_mib - half ))M \
	--rw=randwrite --bs=4k-128k --ioengine=psync --verify=crc32c --verify_fatal=1 --verify_backlog=32 \
	--verify_state_save=0 --loops=1000 --time_based --runtime="$runtime" \
	--output="$dir/writer.out" --output-format=terse >/dev/null 2>&1 &
writer=$!
fio --name=reader --filename="$mnt/volume.img" --offset=0 --size=${half}M --rw=read --bs=1M \
	--ioengine=psync --verify=crc32c --verify_only --verify_fatal=1 --verify_state_save=0 \
	--time_based --runtime="$runtime" --output="$dir/reader.out" --output-format=terse \
	>/dev/null 2>&1 &
reader=$!

sleep $(( runtime / 4 + 1 ))
victim=${files[1]}
drilled=1
say "failing $victim"
"$RAIDFUSE" fail "$mnt" "$victim" || { say "fail refused (no redundancy at this level)"; drilled=0; }
"$RAIDFUSE" remove "$mnt" "$victim" >/dev/null 2>&1
truncate -s "$member_bytes" "$dir/replacement.img"
say "adding $dir/replacement.img"
t0=$(date +%s.%N)
"$RAIDFUSE" add "$mnt" "$dir/replacement.img" || { say "add refused"; drilled=0; }
[ "$drilled" = 0 ] || "$RAIDFUSE" wait "$mnt"
t1=$(date +%s.%N)

wait "$writer"; writer_rc=$?
wait "$reader"; reader_rc=$?
writer='' reader=''
errors_of() { # terse v3: field 5 is the job's error number
	awk -F';' '{ print $5 }' "$1" 2>/dev/null | head -1
}
writer_err=$(errors_of "$dir/writer.out")
reader_err=$(errors_of "$dir/reader.out")

say "running check"
"$RAIDFUSE" check "$mnt" && "$RAIDFUSE" wait "$mnt" >/dev/null
mismatch=$(cat "$mnt/.raidfuse/mismatch_cnt")
state=$(sed -n 's/^state: //p' "$mnt/.raidfuse/status")
rebuild_s=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')
member_mib=$(( member_bytes / 1048576 - 1 ))
rate=$(awk -v m="$member_mib" -v s="$rebuild_s" 'BEGIN { printf "%.1f", m / (s + 0.001) }')

echo
echo "=== drill report: raid$level, $members members, chunk $chunk, $size members ==="
printf '%-34s %s\n' "verify errors (writer, reader):" "${writer_err:-?}, ${reader_err:-?} (exit ${writer_rc}, ${reader_rc})"
printf '%-34s %s\n' "I/O errors seen by the user:" "$([ "$writer_rc$reader_rc" = 00 ] && echo 0 || echo 'yes: see '"$dir"'/*.out')"
if [ "$drilled" = 1 ]; then
	printf '%-34s %s s (%s MiB/s per member)\n' "rebuild time (add to in sync):" "$rebuild_s" "$rate"
else
	printf '%-34s %s\n' "rebuild time (add to in sync):" "none: no member was failed and rebuilt"
fi
printf '%-34s %s\n' "mismatch_cnt after rebuild:" "$mismatch"
printf '%-34s %s\n' "array state:" "$state"
echo "log:"; sed 's/^/  /' "$mnt/.raidfuse/log"
[ "$drilled" = 1 ] && [ "$writer_rc" = 0 ] && [ "$reader_rc" = 0 ] && [ "$mismatch" = 0 ] && [ "$state" = active ]
