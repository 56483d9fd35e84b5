#!/bin/bash
# gather.sh - write gathering in the stripe cache: a sequential writer with
# several requests in flight splits rows between requests; the pieces wait
# in the row and the request that completes it writes the row whole from
# all of their buffers. The data must be right, parity consistent, and no
# request may wait for ever.
#
# Arrays: RAID5, 4 members, 512K chunks (rows of 1.5 MiB: no 1 MiB request
# holds a whole row, so every row is split) with the default cache and with
# --cache-mib 4 (2 rows: waiting rows compete for room); RAID6, 5 members,
# 64K chunks (rows of 192K, split at every request boundary). On each:
#   1. fio sequential 1 MiB O_DIRECT libaio writes, iodepth 8, over 48 MiB,
#      crc32c verification read back; gathered_row_writes in the status
#      must then be above 0 (up to three passes, for a scheduler that ran
#      the requests one after another);
#   2. two fio jobs writing the same 24 MiB at once (1 MiB and 512K blocks,
#      iodepth 8 each, offsets shifted by 256K): overlapping waits; they
#      must finish within GATHER_TIMEOUT seconds (default 60);
#   3. one verified sequential pass over that region (the final contents);
#   4. raidfuse umount, raidfuse verify: mismatch_cnt 0; mount again and
#      fio --verify_only over both regions: what was written persisted.
# Then many writers on a tiny cache: RAID5 of 4, 64K chunks, --cache-mib 1
# (5 rows), three sequential 4 MiB O_DIRECT writers at iodepth 16 for
# GATHER_SECONDS (default 6): requests whose waiting pieces were written
# keep their rows pinned until they return, and must not take up every
# row (they once did, and every writer waited for a free row for ever).
# On a hang the FUSE connection is aborted and the test fails.
# Last, a row the cache holds clean (RAID5 of 4, 64K chunks, no bitmap):
# one chunk of it written is a whole-row write from the request and the
# row, and only that chunk and P reach the members (128 KiB, not 256).

. "$(dirname "$0")/lib.sh"

require_fuse
require_cmd fio timeout
[ -x "$RAIDFUSE" ] || fail "no raidfuse binary at $RAIDFUSE"
fio --enghelp 2>/dev/null | grep -qw libaio || skip "fio has no libaio engine"

START=$SECONDS
TIMEOUT=${GATHER_TIMEOUT:-60}
MNT=$WORK/mnt
mkdir -p "$MNT"
track_mount "$MNT"

gathered() { sed -n 's/^gathered_row_writes: //p' "$MNT/.raidfuse/status"; }

# seq_job NAME OFFSET SIZE [verify_only]: a verified sequential writer.
seq_job() {
	local name=$1 offset=$2 size=$3 extra=${4:-}
	timeout "$TIMEOUT" fio --name="$name" --filename="$MNT/volume.img" --rw=write --bs=1M \
		--offset="$offset" --size="$size" --direct=1 --ioengine=libaio --iodepth=8 \
		--verify=crc32c --verify_fatal=1 --do_verify=1 --randrepeat=1 $extra \
		>"$WORK/$name.out" 2>&1 || fail "$tag: fio $name failed: $(tail -n 20 "$WORK/$name.out")"
}

# make_array TAG MEMBER_SIZE LEVEL N CHUNK [create options]: members (in
# the global array members) and raidfuse create.
make_array() {
	local tag=$1 size=$2 level=$3 n=$4 chunk=$5 i
	shift 5
	members=()
	for ((i = 0; i < n; i++)); do
		truncate -s "$size" "$WORK/m$i"
		members+=("$WORK/m$i")
	done
	"$RAIDFUSE" create --level "$level" --chunk "$chunk" --raid-devices "$n" "$@" "${members[@]}" \
		>"$WORK/create.out" 2>&1 || fail "$tag: create failed: $(cat "$WORK/create.out")"
}

run_array() {
	local tag=$1 level=$2 n=$3 chunk=$4
	shift 4
	make_array "$tag" 40M "$level" "$n" "$chunk"
	mnt_ok "$tag" "$@" "${members[@]}"

	local pass
	for pass in 1 2 3; do
		seq_job seq 0 48M
		[ "$(gathered)" -gt 0 ] && break
	done
	local got
	got=$(gathered)
	[ "$got" -gt 0 ] || fail "$tag: no row was gathered from several requests in 3 passes"

	cat >"$WORK/overlap.fio" <<EOF
[global]
filename=$MNT/volume.img
rw=write
direct=1
ioengine=libaio
iodepth=8
size=24M
[a]
offset=56M
bs=1M
[b]
offset=57600k
bs=512k
EOF
	timeout "$TIMEOUT" fio "$WORK/overlap.fio" >"$WORK/overlap.out" 2>&1 ||
		fail "$tag: overlapping writers failed or hung (over ${TIMEOUT}s): $(tail -n 20 "$WORK/overlap.out")"
	seq_job final 56M 24M

	umnt
	"$RAIDFUSE" verify "${members[@]}" >"$WORK/verify.out" 2>&1 ||
		fail "$tag: raidfuse verify failed: $(cat "$WORK/verify.out")"
	grep -qx 'mismatch_cnt: 0' "$WORK/verify.out" ||
		fail "$tag: parity mismatches: $(cat "$WORK/verify.out")"
	mnt_ok "$tag remount" "${members[@]}"
	seq_job seq 0 48M --verify_only
	seq_job final 56M 24M --verify_only
	umnt
	log "$tag: $got rows gathered, data verified before and after remount, mismatch_cnt 0"
	rm -f "${members[@]}"
}

# written_total: bytes written on all members so far (status.json).
written_total() {
	python3 -c 'import json,sys; print(sum(m["written_bytes"] for m in json.load(open(sys.argv[1]))["members"]))' \
		"$MNT/.raidfuse/status.json"
}
counter() { sed -n "s/^$1: //p" "$MNT/.raidfuse/status"; }

tiny_cache_check() {
	local tag="tiny cache"
	make_array "$tag" 200M 5 4 64K
	mnt_ok "$tag" --cache-mib 1 "${members[@]}"
	fio --name=tiny --filename="$MNT/volume.img" --rw=write --bs=4M --direct=1 \
		--ioengine=libaio --iodepth=16 --numjobs=3 --offset_increment=160M --size=160M \
		--time_based --runtime="${GATHER_SECONDS:-6}" --group_reporting >"$WORK/tiny.out" 2>&1 &
	local fio_pid=$! waited=0
	while kill -0 "$fio_pid" 2>/dev/null && [ $waited -lt "$TIMEOUT" ]; do
		sleep 1
		waited=$((waited + 1))
	done
	if kill -0 "$fio_pid" 2>/dev/null; then
		local conn
		conn=$(mountpoint -d "$MNT" | cut -d: -f2)
		echo 1 >"/sys/fs/fuse/connections/$conn/abort" 2>/dev/null || true
		wait "$fio_pid" 2>/dev/null
		fail "$tag: writers hung for ${TIMEOUT}s on a 5-row cache (deadlock)"
	fi
	wait "$fio_pid" || fail "$tag: fio failed: $(tail -n 20 "$WORK/tiny.out")"
	local got
	got=$(gathered)
	umnt
	"$RAIDFUSE" verify "${members[@]}" | grep -qx 'mismatch_cnt: 0' || fail "$tag: parity mismatches"
	log "$tag: 3 writers at iodepth 16 on 5 rows finished ($got rows gathered), mismatch_cnt 0"
	rm -f "${members[@]}"
}

clean_row_check() {
	local tag="clean row"
	make_array "$tag" 40M 5 4 64K --bitmap none
	mnt_ok "$tag" "${members[@]}"
	local row_off=$((20 * 192 * 1024)) before direct_before
	# Chunk 0 of the row, then fsync: the flush reads chunks 1 and 2
	# (reconstruct-write), so the whole row is in the cache, clean.
	head -c 65536 /dev/urandom >"$WORK/c0"
	head -c 65536 /dev/urandom >"$WORK/c1"
	dd if="$WORK/c0" of="$MNT/volume.img" bs=64k seek=$((row_off / 65536)) oflag=direct \
		conv=notrunc,fsync status=none || fail "$tag: write of chunk 0 failed"
	before=$(written_total)
	direct_before=$(counter direct_row_writes)
	dd if="$WORK/c1" of="$MNT/volume.img" bs=64k seek=$((row_off / 65536 + 1)) oflag=direct \
		conv=notrunc status=none || fail "$tag: write of chunk 1 failed"
	local written=$(($(written_total) - before)) direct=$(($(counter direct_row_writes) - direct_before))
	[ "$direct" = 1 ] || fail "$tag: chunk 1 was not written as a whole row (direct_row_writes +$direct)"
	[ "$written" = $((128 * 1024)) ] ||
		fail "$tag: $written bytes reached the members for one 64K chunk of a cached row (want 131072: the chunk and P)"
	cat "$WORK/c0" "$WORK/c1" | cmp - <(dd if="$MNT/volume.img" bs=64k skip=$((row_off / 65536)) count=2 \
		iflag=direct status=none) || fail "$tag: the row reads back wrong"
	umnt
	"$RAIDFUSE" verify "${members[@]}" | grep -qx 'mismatch_cnt: 0' || fail "$tag: parity mismatches"
	log "$tag: one chunk of a clean cached row: 128 KiB written (chunk and P), parity consistent"
	rm -f "${members[@]}"
}

run_array "raid5 512K" 5 4 512K
run_array "raid5 512K, 4 MiB cache" 5 4 512K --cache-mib 4
run_array "raid6 64K" 6 5 64K
tiny_cache_check
clean_row_check
log "PASS ($((SECONDS - START)) s)"
