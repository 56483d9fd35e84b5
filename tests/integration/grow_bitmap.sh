#!/bin/bash
# grow_bitmap.sh - raidfuse grow --bitmap internal|none (mdadm --grow
# --bitmap) on unmounted arrays:
#  1. a raidfuse RAID5 made with --bitmap none gets a bitmap where mdadm
#     puts one (mdadm --examine: 8 sectors from the superblock; mdadm -X:
#     md's format, 0 dirty, the superblock's events); the data area is not
#     touched; mounted, written and killed, the remount resyncs only the
#     regions the new bitmap marks, and verify finds 0 mismatches;
#  2. md's own RAID5 (md-refs, made by mdadm without a bitmap, as mdadm
#     makes arrays under 100 GB) gets one, mounts, and still reads as the
#     manifest says;
#  3. metadata 1.0 (RAID1): the bitmap goes before the bad block log, at
#     -16 sectors, as mdadm puts it, and works;
#  4. --bitmap none removes it (a kill then resyncs everything);
#  5. a grow stopped between two superblocks (one member a superblock
#     update behind, without the bitmap) mounts, and the mount writes the
#     bitmap setting to that member too;
#  6. refusals that name what is wrong and change no member: mounted,
#     dirty, degraded, a bitmap already there or none to remove, no bitmap
#     for the level, no room for one, a bad chunk, reshape options; and
#     valgrind finds no leak in grow.
. "$(dirname "$0")/lib.sh"
require_fuse
require_root
require_cmd mdadm losetup sha256sum cmp

cd "$WORK"
MNT=$WORK/mnt
mkdir -p "$MNT"
track_mount "$MNT"

# mdadm -X wants a block device: look at a member through a read-only loop.
bitmap_field() { # MEMBER FIELD -> value text after "FIELD :"
	local loop out
	loop=$(losetup -f --show -r "$1") || fail "losetup $1"
	out=$(mdadm -X "$loop" 2>&1)
	losetup -d "$loop"
	printf '%s\n' "$out" | sed -n "s/^ *$2 : //p" | head -1
}
dirty_bits() { bitmap_field "$1" Bitmap | sed -n 's/.*chunks), \([0-9]*\) dirty.*/\1/p'; }
# data_hash MEMBER: sha256 of the member from its data offset on (1.2).
data_hash() { tail -c +$(($(data_off "$1") + 1)) "$1" | sha256sum | cut -c1-64; }
kill_mounted() {
	local pid
	pid=$(cat "$MNT/.raidfuse/pid") || fail "no daemon pid"
	kill -9 "$pid"
	for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
	fusermount3 -u -z "$MNT"
}
# refuse LABEL PATTERN ARGS...: raidfuse grow ARGS must exit non-zero with
# PATTERN in its message and leave every member file (m0..m3, r0..r3) as
# it was.
refuse() {
	local label=$1 pattern=$2 rc=0
	shift 2
	hash_files m? >before.sha 2>/dev/null
	"$RAIDFUSE" grow "$@" >grow.out 2>&1 || rc=$?
	[ "$rc" != 0 ] || fail "$label: grow $* succeeded: $(cat grow.out)"
	grep -q -- "$pattern" grow.out || fail "$label: message lacks '$pattern': $(cat grow.out)"
	hash_files m? | cmp -s - before.sha || fail "$label: a refused grow changed a member"
	log "ok: refused ($label): $(head -1 grow.out)"
}

# 1. A raidfuse array made without a bitmap.
"$RAIDFUSE" create --level 5 --raid-devices 4 --chunk 64K --size 200M --bitmap none \
	m0 m1 m2 m3 >/dev/null || fail "create --bitmap none"
! mdadm --examine m0 | grep -q "Internal Bitmap" || fail "--bitmap none made a bitmap"
rf_mount m0 m1 m2 m3 "$MNT"
dd if=/dev/urandom of=old bs=1M count=8 status=none
dd if=old of="$MNT/volume.img" bs=1M seek=40 conv=notrunc,fsync status=none || fail "write"
rf_umount "$MNT"
for i in 0 1 2 3; do data_hash m$i >data$i.sha; done
events=$(ex_field m0 Events)

refuse "bitmap-chunk too small for 200 MiB" "bitmap chunk of 4 KiB needs" \
	--bitmap internal --bitmap-chunk 4K m0 m1 m2 m3
"$RAIDFUSE" grow --bitmap internal --bitmap-chunk 1M m0 m1 m2 m3 >grow.out 2>&1 ||
	fail "grow --bitmap internal: $(cat grow.out)"
grep -q "added an internal bitmap to the raid5 array: 1024 KiB chunks, 8 sectors" grow.out ||
	fail "grow does not say what it added: $(cat grow.out)"
for i in 0 1 2 3; do
	mdadm --examine m$i | grep -q "Internal Bitmap : 8 sectors from superblock" ||
		fail "mdadm --examine m$i shows no internal bitmap after grow"
	[ "$(bitmap_field m$i Magic)" = 6d746962 ] || fail "mdadm -X m$i: no bitmap magic"
	[ "$(bitmap_field m$i Chunksize)" = "1 MB" ] || fail "mdadm -X m$i: chunk is not 1 MB"
	[ "$(dirty_bits m$i)" = 0 ] || fail "mdadm -X m$i: the new bitmap has dirty bits"
	[ "$(data_hash m$i)" = "$(cat data$i.sha)" ] || fail "grow changed the data area of m$i"
done
[ "$(ex_field m1 Events)" = $((events + 1)) ] || fail "grow did not bump the events once"
[ "$(bitmap_field m2 Events)" = "$(ex_field m2 Events)" ] ||
	fail "bitmap events $(bitmap_field m2 Events) differ from the superblock's"
[ "$(ex_field m3 State)" = clean ] || fail "grow left the array $(ex_field m3 State)"
log "ok: grow --bitmap internal: mdadm -E and -X read it (1 MB chunks, 0 dirty), data untouched"

mnt_ok "after grow" --flush-age-ms 100 m0 m1 m2 m3
cmp <(dd if="$MNT/volume.img" bs=1M skip=40 count=8 status=none) old || fail "data changed by grow"
dd if=/dev/urandom of=new bs=1M count=2 status=none
dd if=new of="$MNT/volume.img" bs=1M seek=300 conv=notrunc,fsync status=none || fail "write 2"
n=$(dirty_bits m0)
[ "$n" -ge 1 ] || fail "no bit set by a write after grow"
kill_mounted
mnt_ok "remount after kill" m0 m1 m2 m3
grep -q "resyncing the $n of 199 regions the write-intent bitmap marks" "$WORK/mount.err" ||
	fail "remount after a kill did not resync the $n marked regions: $(cat "$WORK/mount.err")"
cmp <(dd if="$MNT/volume.img" bs=1M skip=300 count=2 status=none) new || fail "fsynced data lost"
umnt
"$RAIDFUSE" verify m0 m1 m2 m3 | grep -q "mismatch_cnt: 0" || fail "mismatches after the resync"
log "ok: the grown bitmap works: a kill resyncs the $n marked regions of 199, verify 0"

# 4. And removed again.
"$RAIDFUSE" grow --bitmap none m0 m1 m2 m3 >grow.out 2>&1 || fail "grow --bitmap none: $(cat grow.out)"
grep -q "removed the internal bitmap" grow.out || fail "grow none: $(cat grow.out)"
for i in 0 1 2 3; do
	! mdadm --examine m$i | grep -q "Internal Bitmap" || fail "m$i keeps its bitmap after none"
done
mnt_ok "after grow none" m0 m1 m2 m3
kill_mounted
mnt_ok "remount without a bitmap" m0 m1 m2 m3
grep -q "resyncing all of raid5" "$WORK/mount.err" ||
	fail "without a bitmap a kill must resync everything: $(cat "$WORK/mount.err")"
umnt
log "ok: grow --bitmap none removes it (a kill then resyncs all)"

# 6. Refusals.
refuse "no bitmap to remove" "no bitmap to remove" --bitmap none m0 m1 m2 m3
refuse "missing --bitmap" "--bitmap internal or --bitmap none is required" m0 m1 m2 m3
refuse "reshape" "cannot reshape" --raid-devices 5 m0 m1 m2 m3
refuse "chunk with none" "--bitmap none removes" --bitmap none --bitmap-chunk 1M m0 m1 m2 m3
refuse "degraded" "degraded (missing role(s) 3)" --bitmap internal m0 m1 m2
rf_mount m0 m1 m2 m3 "$MNT"
refuse "mounted" "in use" --bitmap internal m0 m1 m2 m3
kill_mounted
refuse "dirty" "not stopped cleanly" --bitmap internal m0 m1 m2 m3
mnt_ok "resync" m0 m1 m2 m3
umnt
"$RAIDFUSE" grow --bitmap internal m0 m1 m2 m3 >/dev/null || fail "grow again"
refuse "already there" "has an internal bitmap already" --bitmap internal m0 m1 m2 m3
rm -f m0 m1 m2 m3
"$RAIDFUSE" create --level 0 --raid-devices 2 --size 16M m0 m1 >/dev/null || fail "create raid0"
refuse "raid0" "raid0 arrays have no write-intent bitmap" --bitmap internal m0 m1
rm -f m0 m1
# Where md would put it (8 sectors from the superblock) a bad block log
# already lies: no room, said so.
"$RAIDFUSE" create --level 1 --raid-devices 2 --size 16M --bitmap none m0 m1 >/dev/null ||
	fail "create raid1"
md_sb_patch m0 bblog_offset=8
md_sb_patch m1 bblog_offset=8
refuse "no room" "no room for a write-intent bitmap.*would overlap its bad block log" \
	--bitmap internal m0 m1
rm -f m0 m1

# 5. A grow stopped between two superblocks: m3 one update behind.
"$RAIDFUSE" create --level 5 --raid-devices 4 --chunk 64K --size 32M --bitmap none \
	m0 m1 m2 m3 >/dev/null || fail "create for the stopped grow"
dd if=m3 of=m3.sb bs=4096 skip=1 count=1 status=none
"$RAIDFUSE" grow --bitmap internal m0 m1 m2 m3 >/dev/null || fail "grow before the stop"
dd if=m3.sb of=m3 bs=4096 seek=1 count=1 conv=notrunc status=none
! mdadm --examine m3 | grep -q "Internal Bitmap" || fail "m3 was not put back"
mnt_ok "a grow stopped part way" m0 m1 m2 m3
umnt
mdadm --examine m3 | grep -q "Internal Bitmap : 8 sectors from superblock" ||
	fail "the mount did not give m3 the array's bitmap"
[ "$(bitmap_field m3 Events)" = "$(ex_field m3 Events)" ] || fail "m3's bitmap lags"
[ "$(ex_field m3 Events)" = "$(ex_field m0 Events)" ] || fail "m3's events lag after the mount"
log "ok: a grow stopped between superblocks mounts, and the mount completes it"
if command -v valgrind >/dev/null; then
	for args in "--bitmap none" "--bitmap internal" "--bitmap internal"; do
		rc=0
		# shellcheck disable=SC2086
		valgrind -q --leak-check=full --errors-for-leak-kinds=all --error-exitcode=99 \
			"$RAIDFUSE" grow $args m0 m1 m2 m3 >vg.out 2>&1 || rc=$?
		[ "$rc" != 99 ] || fail "valgrind: raidfuse grow $args: $(cat vg.out)"
	done
	log "ok: valgrind: no leaks or errors in grow (done, and refused)"
fi
rm -f m0 m1 m2 m3

# 3. Metadata 1.0: before the bad block log, after the data.
"$RAIDFUSE" create --level 1 --raid-devices 2 --size 32M --metadata 1.0 --bitmap none \
	m0 m1 >/dev/null || fail "create -e 1.0"
"$RAIDFUSE" grow --bitmap internal m0 m1 >grow.out 2>&1 || fail "grow on 1.0: $(cat grow.out)"
mdadm --examine m1 | grep -q "Internal Bitmap : -16 sectors from superblock" ||
	fail "1.0: the bitmap is not where mdadm puts it: $(mdadm --examine m1 | grep -i bitmap)"
[ "$(bitmap_field m0 Magic)" = 6d746962 ] || fail "1.0: mdadm -X finds no bitmap"
mnt_ok "1.0 after grow" --flush-age-ms 100 m0 m1
dd if=/dev/urandom of="$MNT/volume.img" bs=1M count=2 seek=4 conv=notrunc,fsync status=none
[ "$(dirty_bits m1)" -ge 1 ] || fail "1.0: no bit set by a write"
umnt
"$RAIDFUSE" verify m0 m1 | grep -q "mismatch_cnt: 0" || fail "1.0: mismatches"
rm -f m0 m1
log "ok: metadata 1.0: the bitmap at -16 sectors (mdadm's place), bits set by writes"

# 2. md's own array, made without a bitmap.
md_ref_unpack raid5-ls-64k ref
refs=(ref/raid5-ls-64k.m0.img ref/raid5-ls-64k.m1.img ref/raid5-ls-64k.m2.img ref/raid5-ls-64k.m3.img)
! mdadm --examine "${refs[0]}" | grep -q "Internal Bitmap" || fail "md-refs raid5 has a bitmap"
"$RAIDFUSE" grow --bitmap internal "${refs[@]}" >grow.out 2>&1 ||
	fail "grow on md's raid5: $(cat grow.out)"
mdadm --examine "${refs[2]}" | grep -q "Internal Bitmap : 8 sectors from superblock" ||
	fail "md's raid5: no bitmap after grow"
mnt_ok "md's raid5 after grow" --readonly "${refs[@]}"
[ "$(head -c "$(md_ref_field raid5-ls-64k array_size_bytes)" "$MNT/volume.img" | sha256sum | cut -c1-64)" = \
	"$(md_ref_field raid5-ls-64k array_sha256)" ] || fail "md's raid5 reads differently after grow"
umnt
mnt_ok "md's raid5 read-write" "${refs[@]}"
umnt
[ "$(bitmap_field "${refs[1]}" Events)" = "$(ex_field "${refs[1]}" Events)" ] ||
	fail "md's raid5: bitmap events lag after a mount"
log "ok: md's own raid5 without a bitmap gets one, and reads as the manifest says"
log PASS
