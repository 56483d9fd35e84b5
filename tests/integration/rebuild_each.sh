#!/bin/bash
# rebuild_each.sh - every member failed in turn during writes (RAID6: every
# pair), replaced and rebuilt: the volume equals a reference throughout and
# the redundancy is consistent after each rebuild.
. "$(dirname "$0")/lib.sh"
require_fuse
require_cmd mdadm

cd "$WORK"
dd if=/dev/urandom of=ref bs=1M count=24 status=none
dd if=/dev/urandom of=ref2 bs=1M count=4 status=none

# drill LEVEL N VICTIM...: fail the victims while writing, add replacements,
# rebuild, compare, verify.
drill() {
	local level=$1 n=$2
	shift 2
	local dir=raid$level-$(IFS=-; echo "$*") members=() i
	mkdir -p "$dir"
	for ((i = 0; i < n; i++)); do members+=("$dir/m$i"); done
	"$RAIDFUSE" create --level "$level" --raid-devices "$n" --chunk 64K --size 32M \
		"${members[@]}" >/dev/null || fail "$dir: create"
	rf_mount "${members[@]}" "$dir/mnt"
	dd if=ref of="$dir/mnt/volume.img" bs=1M conv=notrunc status=none || fail "$dir: write ref"
	# A write in flight while the members fail.
	dd if=ref2 of="$dir/mnt/volume.img" bs=64k seek=$((25 * 16)) conv=notrunc,fsync status=none &
	local writer=$!
	for i in "$@"; do
		"$RAIDFUSE" fail "$dir/mnt" "$dir/m$i" || fail "$dir: fail m$i"
		"$RAIDFUSE" remove "$dir/mnt" "$dir/m$i" || fail "$dir: remove m$i"
	done
	wait "$writer" || fail "$dir: the writer saw an error"
	cmp <(head -c 24M "$dir/mnt/volume.img") ref >/dev/null || fail "$dir: degraded data differs"
	for i in "$@"; do
		truncate -s 32M "$dir/r$i"
		"$RAIDFUSE" add "$dir/mnt" "$dir/r$i" || fail "$dir: add r$i"
	done
	"$RAIDFUSE" wait "$dir/mnt" >/dev/null || fail "$dir: wait"
	grep -q '"degraded":0' <("$RAIDFUSE" status --json "$dir/mnt") ||
		fail "$dir: still degraded: $("$RAIDFUSE" status "$dir/mnt")"
	cmp <(head -c 24M "$dir/mnt/volume.img") ref >/dev/null || fail "$dir: data differs after rebuild"
	cmp <(dd if="$dir/mnt/volume.img" bs=64k skip=$((25 * 16)) count=64 status=none) ref2 ||
		fail "$dir: the write made during the failure differs"
	rf_umount "$dir/mnt"
	local now=("${members[@]}")
	for i in "$@"; do now[i]=$dir/r$i; done
	"$RAIDFUSE" verify "${now[@]}" | grep -q "mismatch_cnt: 0" ||
		fail "$dir: redundancy inconsistent after the rebuild"
	rm -rf "$dir"
}

for v in 0 1 2 3; do drill 5 4 "$v"; done
log "ok: raid5: each of 4 members failed, replaced, rebuilt"
for a in 0 1 2 3 4; do
	for b in 0 1 2 3 4; do
		[ "$a" -lt "$b" ] && drill 6 5 "$a" "$b"
	done
done
log "ok: raid6: each of 10 pairs failed, replaced, rebuilt"
for v in 0 1; do drill 1 2 "$v"; done
log "ok: raid1: each of 2 members"
for v in 0 1 2 3; do drill 10 4 "$v"; done
log "ok: raid10: each of 4 members"
log "PASS"
