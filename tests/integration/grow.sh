#!/bin/bash
# grow.sh - raidfuse grow on unmounted arrays. First --bitmap
# internal|none (mdadm --grow --bitmap):
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
# Then --size SIZE|max (mdadm --grow --size), once the members grew:
#  7. a RAID5 with ext4 and a bitmap: its members 32 MiB longer (random
#     bytes there, as on a used disk), grow
#     --size max; mdadm --examine reads the new sizes, mdadm -X a bitmap
#     for them (0 dirty); the volume is larger, the old data and ext4
#     intact, the new room zeros; resize2fs grows the ext4 onto it (e2fsck
#     -fn clean after); a write there and a kill: the remount resyncs the
#     marked regions, verify 0;
#  8. RAID10 near and RAID6 grow by --size SIZE; verify 0; a RAID1 whose
#     members were replaced (mounted) by larger ones grows by --size max;
#     RAID10 n2 and o2 on 3 members whose last row ends unused (old bytes
#     there) grow with that end zeroed too;
#  9. a grow --size stopped between two superblocks mounts at the new size
#     and the mount writes it to the member that missed it;
# 10. refusals, changing no member: linear, raid0, raid10 far copies,
#     metadata 1.0, a shrink, no growth, more than a member offers,
#     --size with --bitmap.
# And --raid-devices (mdadm --grow -n), for RAID1:
# 11. 2 -> 3 roles: the array then mounts only with --run, the member
#     added is rebuilt into role 2 (a 3-way mirror, verify 0), a grow
#     stopped between the two superblocks is settled by the mount; 3 -> 2
#     refused while role 2 is served, done once it is failed and removed,
#     or when its member is only left out (it is recorded faulty); with a
#     spare in the array, the mount with --run rebuilds it into the new
#     role; RAID5 refused (a reshape).
. "$(dirname "$0")/lib.sh"
require_fuse
require_root
require_cmd mdadm losetup sha256sum cmp

cd "$WORK"
MNT=$WORK/mnt
mkdir -p "$MNT"
track_mount "$MNT"

# data_hash MEMBER: sha256 of the member from its data offset on (1.2).
data_hash() { tail -c +$(($(data_off "$1") + 1)) "$1" | sha256sum | cut -c1-64; }
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
"$RAIDFUSE" create --level 5 --raid-devices 4 --chunk 64K --size 64M --bitmap none \
	m0 m1 m2 m3 >/dev/null || fail "create --bitmap none"
! mdadm --examine m0 | grep -q "Internal Bitmap" || fail "--bitmap none made a bitmap"
rf_mount m0 m1 m2 m3 "$MNT"
dd if=/dev/urandom of=old bs=1M count=8 status=none
dd if=old of="$MNT/volume.img" bs=1M seek=40 conv=notrunc,fsync status=none || fail "write"
rf_umount "$MNT"
for i in 0 1 2 3; do data_hash m$i >data$i.sha; done
events=$(ex_field m0 Events)

refuse "bitmap-chunk not a power of two" "it must be a power of two" \
	--bitmap internal --bitmap-chunk 3K m0 m1 m2 m3
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
dd if=new of="$MNT/volume.img" bs=1M seek=150 conv=notrunc,fsync status=none || fail "write 2"
n=$(dirty_bits m0)
[ "$n" -ge 1 ] || fail "no bit set by a write after grow"
rf_kill "$MNT"
mnt_ok "remount after kill" m0 m1 m2 m3
grep -q "resyncing the $n of 63 regions the write-intent bitmap marks" "$WORK/mount.err" ||
	fail "remount after a kill did not resync the $n marked regions: $(cat "$WORK/mount.err")"
cmp <(dd if="$MNT/volume.img" bs=1M skip=150 count=2 status=none) new || fail "fsynced data lost"
umnt
"$RAIDFUSE" verify m0 m1 m2 m3 | grep -q "mismatch_cnt: 0" || fail "mismatches after the resync"
log "ok: the grown bitmap works: a kill resyncs the $n marked regions of 63, verify 0"

# 4. And removed again.
"$RAIDFUSE" grow --bitmap none m0 m1 m2 m3 >grow.out 2>&1 || fail "grow --bitmap none: $(cat grow.out)"
grep -q "removed the internal bitmap" grow.out || fail "grow none: $(cat grow.out)"
for i in 0 1 2 3; do
	! mdadm --examine m$i | grep -q "Internal Bitmap" || fail "m$i keeps its bitmap after none"
done
mnt_ok "after grow none" m0 m1 m2 m3
rf_kill "$MNT"
mnt_ok "remount without a bitmap" m0 m1 m2 m3
grep -q "resyncing all of raid5" "$WORK/mount.err" ||
	fail "without a bitmap a kill must resync everything: $(cat "$WORK/mount.err")"
umnt
log "ok: grow --bitmap none removes it (a kill then resyncs all)"

# 6. Refusals.
refuse "no bitmap to remove" "no bitmap to remove" --bitmap none m0 m1 m2 m3
refuse "no change asked" "or --raid-devices N is required" m0 m1 m2 m3
refuse "reshape" "cannot reshape an array (change its level, chunk or layout)" --level 6 m0 m1 m2 m3
refuse "chunk with none" "--bitmap none removes" --bitmap none --bitmap-chunk 1M m0 m1 m2 m3
refuse "degraded" "degraded (missing role(s) 3)" --bitmap internal m0 m1 m2
rf_mount m0 m1 m2 m3 "$MNT"
refuse "mounted" "in use" --bitmap internal m0 m1 m2 m3
rf_kill "$MNT"
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

# 7. --size max on a RAID5 with ext4 and a bitmap, after its members grew.
require_cmd mkfs.ext4 e2fsck resize2fs dumpe2fs
rm -rf m? ref
"$RAIDFUSE" create --level 5 --raid-devices 4 --chunk 64K --size 32M --bitmap-chunk 1M \
	m0 m1 m2 m3 >/dev/null || fail "create for --size"
rf_mount m0 m1 m2 m3 "$MNT"
old_bytes=$(stat -c %s "$MNT/volume.img")
mkfs.ext4 -q -F -b 4096 "$MNT/volume.img" >/dev/null || fail "mkfs.ext4"
debugfs -w -R "write old data.bin" "$MNT/volume.img" >/dev/null 2>&1 || fail "debugfs write"
sync -f "$MNT/volume.img"
head -c "$old_bytes" "$MNT/volume.img" | sha256sum | cut -c1-64 >old_volume.sha
rf_umount "$MNT"
refuse "no growth yet" "the most the smallest member offers: grow the members first" \
	--size max m0 m1 m2 m3
# Longer members, as new larger disks are: their new room holds old bytes.
for i in 0 1 2 3; do
	dd if=/dev/urandom of=m$i bs=1M seek=32 count=32 conv=notrunc status=none
done
refuse "more than a member offers" "is more than m0 offers" --size 100M m0 m1 m2 m3
refuse "a shrink" "would shrink the array" --size 16M m0 m1 m2 m3
refuse "--size with --bitmap" "one change at a time" --size max --bitmap none m0 m1 m2 m3
"$RAIDFUSE" grow --size max m0 m1 m2 m3 >grow.out 2>&1 || fail "grow --size max: $(cat grow.out)"
grep -q "the raid5 array grew from $old_bytes to" grow.out || fail "grow --size says: $(cat grow.out)"
new_bytes=$(sed -n 's/.* to \([0-9]*\) bytes.*/\1/p' grow.out)
[ "$new_bytes" = $((old_bytes + 3 * 32 * 1048576)) ] ||
	fail "RAID5 of 4 grew to $new_bytes bytes, expected $((old_bytes + 3 * 32 * 1048576))"
for i in 0 1 2 3; do
	[ "$(mdadm --examine m$i | sed -n 's/^ *Array Size : \([0-9]*\) KiB.*/\1/p')" = $((new_bytes / 1024)) ] ||
		fail "mdadm --examine m$i: Array Size is not $((new_bytes / 1024)) KiB"
	[ "$(dirty_bits m$i)" = 0 ] || fail "m$i: dirty bits after grow --size"
done
[ "$(bitmap_field m1 "Sync Size" | cut -d' ' -f1)" = $((new_bytes / 3 / 1024)) ] ||
	fail "mdadm -X: the bitmap's sync size is not the new member size: $(bitmap_field m1 "Sync Size")"
log "ok: grow --size max: $old_bytes -> $new_bytes bytes; mdadm -E and -X read the new sizes"
mnt_ok "after grow --size" --flush-age-ms 100 m0 m1 m2 m3
[ "$(stat -c %s "$MNT/volume.img")" = "$new_bytes" ] || fail "volume.img is not $new_bytes bytes"
[ "$(head -c "$old_bytes" "$MNT/volume.img" | sha256sum | cut -c1-64)" = "$(cat old_volume.sha)" ] ||
	fail "the old part of the volume changed"
cmp -s <(tail -c +$((old_bytes + 1)) "$MNT/volume.img") <(head -c $((new_bytes - old_bytes)) /dev/zero) ||
	fail "the new room does not read as zeros"
e2fsck -fy "$MNT/volume.img" >fsck.out 2>&1 || fail "e2fsck before resize2fs: $(cat fsck.out)"
resize2fs "$MNT/volume.img" >resize.out 2>&1 || fail "resize2fs: $(cat resize.out)"
blocks=$(dumpe2fs -h "$MNT/volume.img" 2>/dev/null | sed -n 's/^Block count: *//p')
[ "$blocks" = $((new_bytes / 4096)) ] || fail "resize2fs left $blocks blocks, not $((new_bytes / 4096))"
dd if=/dev/urandom of=big.bin bs=1M count=40 status=none
debugfs -w -R "write big.bin big.bin" "$MNT/volume.img" >/dev/null 2>&1 || fail "debugfs write big"
sync -f "$MNT/volume.img"
n=$(dirty_bits m0)
[ "$n" -ge 1 ] || fail "no bit set by writing into the grown room"
rf_kill "$MNT"
mnt_ok "remount after a kill, grown" m0 m1 m2 m3
grep -q "resyncing the $n of $((new_bytes / 3 / 1048576)) regions the write-intent bitmap marks" \
	"$WORK/mount.err" || fail "remount after a kill: $(cat "$WORK/mount.err")"
e2fsck -fn "$MNT/volume.img" >fsck.out 2>&1 || fail "e2fsck -fn after the kill: $(cat fsck.out)"
debugfs -R "dump data.bin got_old.bin" "$MNT/volume.img" >/dev/null 2>&1
cmp -s got_old.bin old || fail "the file written before the grow is not intact"
debugfs -R "dump big.bin got_big.bin" "$MNT/volume.img" >/dev/null 2>&1
cmp -s got_big.bin big.bin || fail "the file written into the grown room is not intact"
umnt
"$RAIDFUSE" verify m0 m1 m2 m3 | grep -q "mismatch_cnt: 0" || fail "mismatches after --size"
log "ok: the grown volume: old data intact, new room zeros, resize2fs to $blocks blocks, a kill resynced $n regions, e2fsck and verify clean"

# 9. A grow --size stopped between two superblocks: m3 one update behind.
truncate -s +8M m0 m1 m2 m3
dd if=m3 of=m3.sb bs=4096 skip=1 count=1 status=none
"$RAIDFUSE" grow --size max m0 m1 m2 m3 >grow.out 2>&1 || fail "grow before the stop: $(cat grow.out)"
grown=$(sed -n 's/.* to \([0-9]*\) bytes.*/\1/p' grow.out)
dd if=m3.sb of=m3 bs=4096 seek=1 count=1 conv=notrunc status=none
[ "$(ex_field m3 'Array Size' | cut -d' ' -f1)" = $((new_bytes / 1024)) ] || fail "m3 was not put back"
mnt_ok "a grow --size stopped part way" m0 m1 m2 m3
[ "$(stat -c %s "$MNT/volume.img")" = "$grown" ] || fail "after a stopped grow: not $grown bytes"
umnt
[ "$(ex_field m3 'Array Size' | cut -d' ' -f1)" = $((grown / 1024)) ] ||
	fail "the mount did not give m3 the new size: $(ex_field m3 'Array Size')"
"$RAIDFUSE" verify m0 m1 m2 m3 | grep -q "mismatch_cnt: 0" || fail "mismatches after the stopped grow"
log "ok: a grow --size stopped between superblocks mounts at $grown bytes, and the mount completes it"
rm -f m? m3.sb

# 8. RAID10 near and RAID6 by --size SIZE.
for spec in "10 4 n2" "6 5 -"; do
	read -r level n layout <<<"$spec"
	members=()
	for ((i = 0; i < n; i++)); do members+=(m$i); done
	lay=()
	[ "$layout" = - ] || lay=(--layout "$layout")
	"$RAIDFUSE" create --level "$level" --raid-devices "$n" --chunk 64K "${lay[@]}" --size 16M \
		"${members[@]}" >/dev/null || fail "create raid$level"
	rf_mount "${members[@]}" "$MNT"
	before=$(stat -c %s "$MNT/volume.img")
	head -c "$before" /dev/urandom >vol.bin
	dd if=vol.bin of="$MNT/volume.img" bs=1M conv=notrunc,fsync status=none
	rf_umount "$MNT"
	truncate -s 40M "${members[@]}"
	"$RAIDFUSE" grow --size 24M "${members[@]}" >grow.out 2>&1 || fail "raid$level grow --size 24M: $(cat grow.out)"
	mnt_ok "raid$level after --size" "${members[@]}"
	after=$(stat -c %s "$MNT/volume.img")
	[ "$after" -gt "$before" ] || fail "raid$level did not grow ($before -> $after)"
	cmp -s <(head -c "$before" "$MNT/volume.img") vol.bin || fail "raid$level: old data changed"
	dd if=/dev/urandom of="$MNT/volume.img" bs=1M seek=$((before / 1048576)) count=4 conv=notrunc,fsync status=none
	umnt
	"$RAIDFUSE" verify "${members[@]}" | grep -q "mismatch_cnt: 0" || fail "raid$level: mismatches"
	log "ok: raid$level (layout $layout) grow --size 24M: $before -> $after bytes, data kept, verify 0"
	rm -f "${members[@]}"
done

# 8b. The way it is done with disks: each member of a mounted RAID1
# replaced by a larger one, then grow --size max.
"$RAIDFUSE" create --level 1 --raid-devices 2 --size 16M m0 m1 >/dev/null || fail "create raid1"
rf_mount m0 m1 "$MNT"
head -c 15M /dev/urandom >vol.bin
dd if=vol.bin of="$MNT/volume.img" bs=1M conv=notrunc,fsync status=none
truncate -s 32M big0 big1
for i in 0 1; do
	"$RAIDFUSE" replace "$MNT" m$i big$i >/dev/null || fail "replace m$i by big$i"
	"$RAIDFUSE" wait "$MNT" >/dev/null || fail "wait for the copy onto big$i"
	"$RAIDFUSE" remove "$MNT" m$i >/dev/null || fail "remove m$i after its replace"
done
rf_umount "$MNT"
"$RAIDFUSE" grow --size max big0 big1 >grow.out 2>&1 || fail "grow after replaces: $(cat grow.out)"
mnt_ok "raid1 on larger members" big0 big1
[ "$(stat -c %s "$MNT/volume.img")" -gt $((30 * 1048576)) ] || fail "raid1 did not grow onto big0, big1"
cmp -s <(head -c 15M "$MNT/volume.img") vol.bin || fail "raid1: data changed by replaces and grow"
umnt
"$RAIDFUSE" verify big0 big1 | grep -q "mismatch_cnt: 0" || fail "raid1 grown: mismatches"
rm -f m? big0 big1
log "ok: raid1: both members replaced by larger ones while mounted, then grow --size max: $(stat -c %s vol.bin) bytes kept"

# 8c. A bitmap whose bits no longer fit once the members give more: its
# chunk doubles (4K: 16128 bits for 63 MiB; 40704 for 159 MiB, past the
# 30720 that fit, so 8K).
"$RAIDFUSE" create --level 1 --raid-devices 2 --size 64M --bitmap-chunk 4K m0 m1 >/dev/null ||
	fail "create raid1 with 4K bitmap chunks"
truncate -s 160M m0 m1
"$RAIDFUSE" grow --size max m0 m1 >grow.out 2>&1 || fail "grow with 4K chunks: $(cat grow.out)"
[ "$(bitmap_field m0 Chunksize)" = "8 KB" ] ||
	fail "the bitmap chunk after growing to 159 MiB is $(bitmap_field m0 Chunksize), not 8 KB"
mnt_ok "raid1 with a doubled bitmap chunk" m0 m1
umnt
rm -f m?
log "ok: the bitmap chunk doubles (4K -> 8K) when its bits no longer fit the grown members"

# 11. --raid-devices: a RAID1 of 2 made a 3-way mirror (the new role
# rebuilt onto an added member), and back to 2 once that role is emptied.
"$RAIDFUSE" create --level 1 --raid-devices 2 --size 16M m0 m1 >/dev/null || fail "create raid1"
rf_mount m0 m1 "$MNT"
head -c 15M /dev/urandom >vol.bin
dd if=vol.bin of="$MNT/volume.img" bs=1M conv=notrunc,fsync status=none
rf_umount "$MNT"
dd if=m1 of=m1.sb bs=4096 skip=1 count=1 status=none
"$RAIDFUSE" grow --raid-devices 3 m0 m1 >grow.out 2>&1 || fail "grow -n 3: $(cat grow.out)"
grep -q "role 2 waits for a member: mount it with --run" grow.out || fail "grow -n 3 says: $(cat grow.out)"
[ "$(ex_field m0 'Raid Devices')" = 3 ] && [ "$(ex_field m1 'Array State' | cut -c1-3)" = "AA." ] ||
	fail "mdadm --examine after grow -n 3: $(ex_field m1 'Raid Devices') roles, $(ex_field m1 'Array State')"
# A grow stopped between the two superblocks: m1 still says 2 roles.
cp m1 m1.grown
dd if=m1.sb of=m1 bs=4096 seek=1 count=1 conv=notrunc status=none
[ "$(ex_field m1 'Raid Devices')" = 2 ] || fail "m1 was not put back"
mnt_try "$WORK/mount.err" m0 m1 && fail "a RAID1 grown to 3 roles mounted without --run"
grep -q "degraded (missing role(s) 2); pass --run" "$WORK/mount.err" ||
	fail "mount after grow -n 3: $(cat "$WORK/mount.err")"
mnt_ok "grown to 3 roles, one missing" --run m0 m1
truncate -s 16M m2
"$RAIDFUSE" add "$MNT" m2 >/dev/null || fail "add m2 into role 2"
"$RAIDFUSE" wait "$MNT" >/dev/null || fail "wait for the rebuild of role 2"
"$RAIDFUSE" status "$MNT" | grep -q "\[3/3\] \[UUU\]" || fail "not a 3-way mirror: $("$RAIDFUSE" status "$MNT")"
umnt
[ "$(ex_field m1 'Raid Devices')" = 3 ] || fail "the mount did not give m1 the 3 roles it missed"
"$RAIDFUSE" verify m0 m1 m2 | grep -q "mismatch_cnt: 0" || fail "3-way mirror: mismatches"
cmp -s <(tail -c +$(($(data_off m2) + 1)) m2 | head -c 15M) vol.bin ||
	fail "the added third copy does not hold the volume"
refuse "dropping a role still served" "role 2, which goes, is served by m2: fail and remove it first" \
	--raid-devices 2 m0 m1 m2
rf_mount m0 m1 m2 "$MNT"
"$RAIDFUSE" fail "$MNT" m2 >/dev/null && "$RAIDFUSE" remove "$MNT" m2 >/dev/null || fail "fail, remove m2"
rf_umount "$MNT"
"$RAIDFUSE" grow --raid-devices 2 m0 m1 >grow.out 2>&1 || fail "grow -n 2: $(cat grow.out)"
mnt_ok "back to 2 roles" m0 m1
cmp -s <(head -c 15M "$MNT/volume.img") vol.bin || fail "data changed by grow -n 3 and -n 2"
umnt
# m2, removed before the grow, still says 3 roles: refused as an older
# member (which it is), not as a corrupt superblock.
mnt_try "$WORK/mount.err" m0 m1 m2 && fail "m2 from before grow -n 2 was taken"
grep -q "m2: .*its events [0-9]* are behind the array's [0-9]*: a member left out before the array changed" \
	"$WORK/mount.err" || fail "mount with m2 from before the grow: $(cat "$WORK/mount.err")"
[ "$(ex_field m0 'Array State' | cut -c1-2)" = AA ] && [ "$(ex_field m0 'Raid Devices')" = 2 ] ||
	fail "after grow -n 2: $(ex_field m0 'Raid Devices') roles, $(ex_field m0 'Array State')"
rm -f m? m1.sb m1.grown
# 3 -> 2 with role 2's member only left out (not named, not failed): it is
# recorded faulty, so that named again later it is left out, not taken for
# a member of a role past raid_disks.
"$RAIDFUSE" create --level 1 --raid-devices 3 --size 16M m0 m1 m2 >/dev/null || fail "create raid1 x3"
"$RAIDFUSE" grow --raid-devices 2 m0 m1 >grow.out 2>&1 || fail "grow -n 2 (m2 left out): $(cat grow.out)"
"$RAIDFUSE" verify m0 m1 m2 >verify.out 2>&1 ||
	fail "m2 left out of grow -n 2 breaks the assembly: $(cat verify.out)"
[ "$(ex_field m0 'Array State' | cut -c1-2)" = AA ] || fail "grow -n 2 without m2: $(ex_field m0 'Array State')"
rm -f m?
log "ok: grow -n 2 with role 2's member left out records it faulty; named later, it is left out"
# 2 -> 3 with a spare in the array (added while mounted): grow says the
# spare takes the new role, and the mount with --run rebuilds it there.
"$RAIDFUSE" create --level 1 --raid-devices 2 --size 16M m0 m1 >/dev/null || fail "create raid1"
truncate -s 16M m2
rf_mount m0 m1 "$MNT"
dd if=vol.bin of="$MNT/volume.img" bs=1M conv=notrunc,fsync status=none
"$RAIDFUSE" add "$MNT" m2 >/dev/null || fail "add the spare m2"
rf_umount "$MNT"
[ "$(ex_field m2 'Device Role')" = spare ] || fail "m2 is not a spare: $(ex_field m2 'Device Role')"
"$RAIDFUSE" grow --raid-devices 3 m0 m1 m2 >grow.out 2>&1 || fail "grow -n 3 with a spare: $(cat grow.out)"
grep -q "mount it with --run and a spare is rebuilt into the new role" grow.out ||
	fail "grow -n 3 with a spare says: $(cat grow.out)"
mnt_ok "grown to 3 roles with a spare" --run m0 m1 m2
"$RAIDFUSE" wait "$MNT" >/dev/null || fail "wait for the rebuild of the spare into role 2"
"$RAIDFUSE" status "$MNT" | grep -q "\[3/3\] \[UUU\]" ||
	fail "the spare did not take role 2: $("$RAIDFUSE" status "$MNT")"
umnt
[ "$(ex_field m2 'Device Role')" = "Active device 2" ] || fail "m2 after the mount: $(ex_field m2 'Device Role')"
"$RAIDFUSE" verify m0 m1 m2 | grep -q "mismatch_cnt: 0" || fail "3-way mirror from the spare: mismatches"
cmp -s <(tail -c +$(($(data_off m2) + 1)) m2 | head -c 15M) vol.bin ||
	fail "the spare rebuilt into role 2 does not hold the volume"
rm -f m?
log "ok: grow -n 3 with a spare: the mount with --run rebuilds the spare into role 2"
"$RAIDFUSE" create --level 5 --raid-devices 3 --size 16M m0 m1 m2 >/dev/null || fail "create raid5"
refuse "raid5 -n" "raid5 arrays cannot change their number of members" --raid-devices 4 m0 m1 m2
rm -f m?
log "ok: grow --raid-devices: raid1 2 -> 3 (a stopped grow settled at mount, role 2 rebuilt, verify 0) -> 2; raid5 refused"

# RAID10 near on 3 members with an odd number of chunks each, and offset
# with an odd number of rows: the end of the last row is unused (old disk
# bytes there); the new size puts copies of new chunks there, so grow
# zeroes it too (verify 0).
# (241 chunks each: n2 leaves only m2's last slot unused, o2 the last row
# of every member.)
for lay in n2 o2; do
	"$RAIDFUSE" create --level 10 --raid-devices 3 --layout $lay --chunk 64K --size 16448K \
		m0 m1 m2 >/dev/null || fail "create raid10 $lay"
	unused=(m2)
	[ $lay = o2 ] && unused=(m0 m1 m2)
	for f in "${unused[@]}"; do
		dd if=/dev/urandom of=$f bs=64K seek=$(($(data_off $f) / 65536 + 240)) count=1 \
			conv=notrunc status=none
	done
	"$RAIDFUSE" verify m0 m1 m2 >/dev/null 2>&1 || fail "raid10 $lay: the slots written are in use"
	truncate -s +8M m0 m1 m2
	"$RAIDFUSE" grow --size max m0 m1 m2 >grow.out 2>&1 || fail "grow raid10 $lay: $(cat grow.out)"
	"$RAIDFUSE" verify m0 m1 m2 >verify.out 2>&1 ||
		fail "raid10 $lay grown over an unused row end: $(cat verify.out)"
	rm -f m?
done
log "ok: raid10 n2 and o2 on 3 members: the unused end of the last row is zeroed by grow --size too"

# 8d. A bitmap with less room than create keeps (its bad block log moved
# to 3 sectors after it, as an older mdadm could leave it): 4K chunks,
# 8064 bits fit for 32 MiB members; 16128 for 64 MiB do not: refused,
# nothing written (a fixed 4 KiB write went over the log).
"$RAIDFUSE" create --level 1 --raid-devices 2 --size 32M --bitmap-chunk 4K m0 m1 >/dev/null ||
	fail "create raid1 for the small bitmap room"
for f in m0 m1; do
	md_sb_patch "$f" bblog_offset=11
	# sectors 19..23 join the empty log (0xff), as the log at 24 is
	head -c $((5 * 512)) /dev/zero | tr '\0' '\377' |
		dd of="$f" bs=512 seek=19 conv=notrunc status=none
done
"$RAIDFUSE" verify m0 m1 >verify.out 2>&1 || fail "the moved log is refused: $(cat verify.out)"
truncate -s 64M m0 m1
refuse "bitmap room" "its write-intent bitmap has no room for the bits of the new size" \
	--size max m0 m1
rm -f m?

# 10. Levels and formats that cannot grow in place.
"$RAIDFUSE" create --level 10 --raid-devices 4 --chunk 64K --layout f2 --size 16M m0 m1 m2 m3 \
	>/dev/null || fail "create raid10 f2"
truncate -s +8M m0 m1 m2 m3
refuse "raid10 far" "with far copies cannot change size" --size max m0 m1 m2 m3
rm -f m?
"$RAIDFUSE" create --level 0 --raid-devices 2 --chunk 64K --size 16M m0 m1 >/dev/null || fail "raid0"
truncate -s +8M m0 m1
refuse "raid0 size" "raid0 arrays cannot change size" --size max m0 m1
rm -f m?
"$RAIDFUSE" create --level linear --raid-devices 2 --size 16M m0 m1 >/dev/null || fail "linear"
truncate -s +8M m0 m1
refuse "linear size" "linear arrays cannot change size" --size max m0 m1
rm -f m?
"$RAIDFUSE" create --level 1 --raid-devices 2 --metadata 1.0 --size 16M m0 m1 >/dev/null ||
	fail "create 1.0"
refuse "metadata 1.0" "metadata 1.0 keeps its superblock at the member's end" --size max m0 m1
rm -f m?
log PASS
