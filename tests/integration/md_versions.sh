#!/bin/bash
# md_versions.sh - arrays with md metadata 1.0 (superblock near the end of
# each member, data from sector 0, bitmap and bad block log before the
# superblock) and 1.1 (superblock at the start), made by the real md
# driver (tests/data/md1x):
#  1. examine says their version and agrees with mdadm --examine; each
#     mounts read-only with md's size and sha256, also degraded (one
#     member left out, --run), and no member changes;
#  2. read-write: writes at scattered offsets, a member failed, removed
#     and replaced by a blank one of another size (its superblock goes
#     near its own end, its bitmap before that, as md puts them), rebuilt;
#     after umount, verify finds 0, the volume reads back the model after
#     a remount, and mdadm --examine of every member finds the checksum
#     correct, the version kept and the bitmap (which mdadm drops from the
#     feature map when it cannot find it where the superblock says) there;
#  3. raidfuse create --metadata 1.0 and 1.1: laid out as mdadm lays them
#     out (mdadm --examine), a member longer than --size keeps its 1.0
#     superblock at its true end; fio verify; a kill mid-write is resynced
#     from the bitmap; verify 0; mdadm -X reads the bitmap; a 1.0 RAID1's
#     members each read alone as the ext4 made on its volume;
#  4. create on members longer than --size: a 1.0 member just past the
#     size where mdadm's bitmap room grows still holds the array's size;
#     linear and raid0 end at --size (zeros, not old bytes); create --force
#     wipes an old array's superblock at the end (mdadm finds the new one).
. "$(dirname "$0")/lib.sh"
require_fuse
require_cmd mdadm gzip sha256sum python3 fio losetup mkfs.ext4 e2fsck debugfs

DATA=$TOP_SRCDIR/tests/data/md1x
[ -f "$DATA/manifest.txt" ] || fail "no $DATA/manifest.txt"
cd "$WORK"
mkdir -p mnt
field() { sed -n "s/^$1 $2=//p" "$DATA/manifest.txt"; }

for a in r1-10 r5-10 r5-11; do
	mkdir -p "$a"
	for gz in "$DATA/$a".m*.img.gz; do
		gzip -dc "$gz" >"$a/$(basename "$gz" .gz)" || fail "unpack $gz"
	done
	members=("$a"/*.img)
	version=$(field "$a" metadata)
	# --- 1. read-only, as md made it -------------------------------------
	"$RAIDFUSE" examine "${members[0]}" >ex.out || fail "$a: examine: $(cat ex.out)"
	grep -q "Version : $version\$" ex.out || fail "$a: examine does not say version $version: $(cat ex.out)"
	mdadm --examine "${members[0]}" >md.out 2>&1 || fail "$a: mdadm --examine: $(cat md.out)"
	for f in "Super Offset" "Data Offset" "Array UUID" "Internal Bitmap"; do
		want=$(sed -n "s/^ *$f : \([^ ]*\).*/\1/p" md.out)
		got=$(sed -n "s/^ *$f : \([^ ]*\).*/\1/p" ex.out)
		# mdadm leaves out a data offset of 0 (metadata 1.0).
		[ -z "$want" ] && [ "$f" = "Data Offset" ] && want=0
		[ "$want" = "$got" ] || fail "$a: $f: mdadm says '$want', raidfuse examine '$got'"
	done
	before=$(sha256sum "${members[@]}")
	rf_mount --readonly "${members[@]}" mnt
	[ "$(stat -c %s mnt/volume.img)" = "$(field "$a" array_size)" ] ||
		fail "$a: volume.img is $(stat -c %s mnt/volume.img) bytes, md's array $(field "$a" array_size)"
	[ "$(sha256sum <mnt/volume.img | cut -d' ' -f1)" = "$(field "$a" sha256_md0)" ] ||
		fail "$a: volume.img reads other bytes than md's array"
	"$RAIDFUSE" status mnt | grep -q "super $version," || fail "$a: status does not say super $version"
	[ "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["metadata"])' mnt/.raidfuse/status.json)" = "$version" ] ||
		fail "$a: status.json's metadata is not $version: $(cat mnt/.raidfuse/status.json)"
	rf_umount mnt
	rf_mount --readonly --run "${members[@]:1}" mnt
	[ "$(sha256sum <mnt/volume.img | cut -d' ' -f1)" = "$(field "$a" sha256_md0)" ] ||
		fail "$a: degraded (member 0 left out), volume.img reads other bytes than md's array"
	rf_umount mnt
	[ "$(sha256sum "${members[@]}")" = "$before" ] || fail "$a: a read-only mount changed a member"
	log "ok: $a (metadata $version): examine, read-only and degraded mounts read as md does"

	# --- 2. read-write, with a member replaced by a blank one -------------
	size=$(field "$a" array_size)
	rf_mount "${members[@]}" mnt
	python3 - mnt/volume.img model.img "$size" <<'PY'
import os, random, sys
vol, model, size = sys.argv[1], sys.argv[2], int(sys.argv[3])
rnd = random.Random(1010)
with open(vol, 'r+b') as v:
    data = bytearray(v.read())
    for _ in range(40):
        n = rnd.choice([512, 4096, 12345, 65536])
        off = rnd.randrange(0, size - n)
        chunk = os.urandom(n)
        v.seek(off); v.write(chunk)
        data[off:off + n] = chunk
    v.flush(); os.fsync(v.fileno())
open(model, 'wb').write(data)
PY
	[ $? = 0 ] || fail "$a: writing through the mount"
	"$RAIDFUSE" fail mnt "${members[1]}" && "$RAIDFUSE" remove mnt "${members[1]}" ||
		fail "$a: fail and remove ${members[1]}"
	truncate -s 5M "$a/new.img"
	"$RAIDFUSE" add mnt "$a/new.img" || fail "$a: add a blank 5 MiB member"
	"$RAIDFUSE" wait mnt >wait.out || fail "$a: the rebuild: $(cat wait.out)"
	cmp mnt/volume.img model.img || fail "$a: the volume differs from the model after the rebuild"
	rf_umount mnt
	rebuilt=("${members[0]}" "$a/new.img" "${members[@]:2}")
	"$RAIDFUSE" verify "${rebuilt[@]}" | grep -q "mismatch_cnt: 0" || fail "$a: verify after the rebuild"
	for m in "${rebuilt[@]}"; do
		mdadm --examine "$m" >md.out 2>&1 || fail "$a: mdadm --examine $m: $(cat md.out)"
		grep -q "Version : $version\$" md.out || fail "$a: $m is no longer metadata $version: $(cat md.out)"
		grep -q "Checksum : .* - correct" md.out || fail "$a: mdadm finds $m's checksum wrong: $(cat md.out)"
		if [ "$(field "$a" bitmap)" != none ]; then
			grep -q "Feature Map : 0x1" md.out && grep -q "Internal Bitmap" md.out ||
				fail "$a: mdadm finds no bitmap where $m's superblock says: $(cat md.out)"
		fi
	done
	want_sb=$(( ($(stat -c %s "$a/new.img") / 512 - 16) / 8 * 8 ))
	[ "$version" != 1.0 ] || grep -q "Super Offset : $want_sb sectors" <(mdadm --examine "$a/new.img") ||
		fail "$a: the new member's superblock is not near its own end (sector $want_sb)"
	rf_mount --readonly "${rebuilt[@]}" mnt
	cmp mnt/volume.img model.img || fail "$a: the volume differs from the model after a remount"
	rf_umount mnt
	log "ok: $a (metadata $version): written, a member replaced by a larger blank one and rebuilt; mdadm agrees"
done

# --- 3. raidfuse create --metadata 1.0 and 1.1 -----------------------------
# mdadm --examine reads the layout mdadm itself writes (1.0: superblock 8 to
# 12 KiB before the end, bitmap 16 and bad block log 8 sectors before it,
# data from 0; 1.1: superblock at 0, bitmap 8 sectors after, log at 16,
# data from 1 MiB); a kill mid-write is resynced from the bitmap; verify 0.
sb10() { echo $(( ($1 / 512 - 16) / 8 * 8 )); }
rc=0
"$RAIDFUSE" create --metadata 0.90 --level 1 --raid-devices 2 --size 8M old0 old1 >old.out 2>&1 || rc=$?
[ "$rc" = 2 ] && grep -q "0.90, md.s legacy format, is read by mount --readonly but not written" old.out && [ ! -e old0 ] ||
	fail "create --metadata 0.90: exit $rc, $(cat old.out)"
for v in 1.0 1.1; do
	d=create-$v
	mkdir -p "$d"
	truncate -s 40M "$d/big.img" # longer than --size: a 1.0 superblock goes at its true end
	"$RAIDFUSE" create --metadata "$v" --level 5 --raid-devices 3 --chunk 16K --size 24M \
		--bitmap-chunk 1M "$d/big.img" "$d/m1.img" "$d/m2.img" >create.out 2>&1 ||
		fail "create --metadata $v: $(cat create.out)"
	grep -q "created raid5 array of 3 members, md metadata $v\$" create.out ||
		fail "create does not say metadata $v: $(cat create.out)"
	for m in "$d"/big.img "$d"/m1.img "$d"/m2.img; do
		mdadm --examine "$m" >md.out 2>&1 || fail "$v: mdadm --examine $m: $(cat md.out)"
		grep -q "Version : $v\$" md.out && grep -q "Checksum : .* - correct" md.out &&
			grep -q "Feature Map : 0x1\$" md.out || fail "$v: mdadm --examine $m: $(cat md.out)"
		if [ "$v" = 1.0 ]; then
			sb=$(sb10 "$(stat -c %s "$m")")
			grep -q "Super Offset : $sb sectors" md.out && grep -q "Avail Dev Size : $((sb - 16)) " md.out &&
				grep -q "Internal Bitmap : -16 sectors" md.out &&
				grep -q "Bad Block Log : 512 entries available at offset -8 sectors" md.out ||
				fail "$v: $m is not laid out as mdadm lays out 1.0: $(cat md.out)"
			! grep -q "Data Offset" md.out || fail "$v: $m has a data offset: $(cat md.out)"
		else
			grep -q "Super Offset : 0 sectors" md.out && grep -q "Data Offset : 2048 sectors" md.out &&
				grep -q "Internal Bitmap : 8 sectors" md.out &&
				grep -q "Bad Block Log : 512 entries available at offset 16 sectors" md.out ||
				fail "$v: $m is not laid out as mdadm lays out 1.1: $(cat md.out)"
		fi
		# the data md uses is what --size 24M leaves, on the longer one too
		used=$(sed -n 's/^ *Used Dev Size : \([0-9]*\).*/\1/p' md.out)
		[ "$v" != 1.0 ] || [ "$m" != "$d/big.img" ] || [ "$used" = $(( ($(sb10 $((24 << 20))) - 16) / 32 * 32 )) ] ||
			fail "$v: $m: used size '$used' is not what --size 24M leaves: $(cat md.out)"
	done
	rf_mount "$d/big.img" "$d/m1.img" "$d/m2.img" mnt
	"$RAIDFUSE" status mnt | grep -q "super $v," || fail "$v: status does not say super $v"
	fio --name=v --filename=mnt/volume.img --rw=randwrite --bs=4k-64k --size=16M --ioengine=psync \
		--verify=crc32c --verify_fatal=1 --do_verify=1 --output=fio.out >/dev/null 2>&1 ||
		fail "$v: fio verify: $(cat fio.out)"
	sync mnt/volume.img # fio does not fsync: what the kill may lose is only what follows
	sha4=$(head -c 4M mnt/volume.img | sha256sum)
	dd if=/dev/urandom of=mnt/volume.img bs=64K count=64 seek=64 conv=notrunc status=none &
	sleep 0.2
	rf_kill mnt
	wait
	rf_mount "$d/big.img" "$d/m1.img" "$d/m2.img" mnt
	grep -q "not stopped cleanly: resyncing the [0-9]* of [0-9]* regions" mnt/.raidfuse/log ||
		fail "$v: no bitmap resync after the kill: $(cat mnt/.raidfuse/log)"
	"$RAIDFUSE" wait mnt >/dev/null || fail "$v: the resync"
	[ "$(head -c 4M mnt/volume.img | sha256sum)" = "$sha4" ] ||
		fail "$v: the first 4 MiB (written and fsynced by fio, not written since) changed"
	rf_umount mnt
	"$RAIDFUSE" verify "$d/big.img" "$d/m1.img" "$d/m2.img" | grep -q "mismatch_cnt: 0" ||
		fail "$v: verify after the resync"
	ev=$(ex_field "$d/m1.img" Events)
	bm_ev=$(bitmap_field "$d/m1.img" Events) bm_chunk=$(bitmap_field "$d/m1.img" Chunksize)
	[ -n "$ev" ] && [ "$bm_ev" = "$ev" ] && [ "$bm_chunk" = "1 MB" ] ||
		fail "$v: mdadm -X reads events '$bm_ev', chunk '$bm_chunk'; the superblock says events $ev, chunk 1 MB"
	log "ok: create --metadata $v: laid out as mdadm does, fio verify, resync after a kill, verify 0, mdadm -X"
done

# --- 3b. what 1.0 is for: each member of a RAID1 reads as a plain disk -------
# ext4 made on the volume is, on each member file alone, the same ext4
# from sector 0 (what a bootloader or a NAS firmware reading one disk sees).
"$RAIDFUSE" create --metadata 1.0 --level 1 --raid-devices 2 --size 32M boot0.img boot1.img >create.out 2>&1 ||
	fail "create 1.0 raid1: $(cat create.out)"
rf_mount boot0.img boot1.img mnt
mkfs.ext4 -q -F mnt/volume.img || fail "mkfs.ext4 on the 1.0 raid1"
head -c 100K /dev/urandom >kernel.bin
debugfs -w -R "write kernel.bin vmlinuz" mnt/volume.img >/dev/null 2>&1 || fail "debugfs write"
rf_umount mnt
for m in boot0.img boot1.img; do
	e2fsck -fn "$m" >fsck.out 2>&1 || fail "$m alone is not a clean ext4: $(cat fsck.out)"
	debugfs -R "cat vmlinuz" "$m" 2>/dev/null | cmp -s - kernel.bin ||
		fail "$m alone does not hold the file written through the array"
done
log "ok: create --metadata 1.0 raid1: each member alone is the ext4 made on the volume (e2fsck, debugfs)"

# --- 4. create on members longer than --size ----------------------------------
# (a) 1.0 lays a member out from its true end, and mdadm's room for a
# bitmap grows by 120 sectors at 8 GiB: a member 4 KiB past that step
# must still hold what --size gives every member (sparse files).
truncate -s $((16777232 * 512)) step-big.img
"$RAIDFUSE" create --metadata 1.0 --level 1 --raid-devices 2 --bitmap none \
	--size $((16777224 / 2)) step-big.img step-new.img >create.out 2>&1 || fail "create at the step: $(cat create.out)"
for m in step-big.img step-new.img; do
	"$RAIDFUSE" examine "$m" >ex.out 2>&1 || fail "examine $m: $(cat ex.out)"
	avail=$(sed -n 's/^ *Avail Dev Size : \([0-9]*\) sectors.*/\1/p' ex.out)
	used=$(sed -n 's/^ *Used Dev Size : \([0-9]*\) sectors.*/\1/p' ex.out)
	[ -n "$avail" ] && [ -n "$used" ] && [ "$used" -le "$avail" ] ||
		fail "$m: Used Dev Size ${used:-?} sectors exceeds Avail Dev Size ${avail:-?}: $(cat ex.out)"
done
rf_mount step-big.img step-new.img mnt
rf_umount mnt
rm -f step-big.img step-new.img
# (b) linear and raid0 use each member's data whole: with 1.0 it ends
# where --size leaves it too, so the volume reads as zeros, not as the old
# bytes past --size.
for level in linear 0; do
	for v in 1.2 1.0; do
		d=size-$level-$v
		mkdir -p "$d"
		for m in a b; do head -c 8M /dev/urandom >"$d/$m.img"; done
		"$RAIDFUSE" create --metadata "$v" --level "$level" --raid-devices 2 --chunk 64K \
			--size 4M --force "$d/a.img" "$d/b.img" >create.out 2>&1 || fail "$d: create: $(cat create.out)"
		rf_mount "$d/a.img" "$d/b.img" mnt
		size=$(stat -c %s mnt/volume.img)
		[ "$size" -le $((8 << 20)) ] && [ "$(sha256sum <mnt/volume.img)" = "$(head -c "$size" /dev/zero | sha256sum)" ] ||
			fail "$d: --size 4M: the volume is $size bytes and not all zeros"
		rf_umount mnt
	done
done
# (c) create --force --size over a longer member of a 1.0 array: its old
# superblock at the end goes, so mdadm (and udev) find the new array only.
"$RAIDFUSE" create --metadata 1.0 --level 1 --raid-devices 2 --size 8M old-a.img old-b.img >create.out 2>&1 ||
	fail "create 1.0 (old): $(cat create.out)"
sleep 1 # a later creation time than the old array's, for mdadm's choice
for v in 1.2 1.1; do
	"$RAIDFUSE" create --metadata "$v" --force --level 1 --raid-devices 2 --size 4M old-a.img old-b.img \
		>create.out 2>&1 || fail "create --force $v: $(cat create.out)"
	uuid=$("$RAIDFUSE" examine old-a.img | sed -n 's/^ *Array UUID : //p')
	for m in old-a.img old-b.img; do
		! mdadm --examine -e 1.0 "$m" 2>/dev/null | grep -q "Magic : a92b4efc" ||
			fail "$v: $m still holds the old 1.0 superblock at its end"
		mdadm --examine "$m" >md.out 2>&1 && grep -q "Version : $v\$" md.out && grep -q "Array UUID : $uuid" md.out ||
			fail "$v: mdadm --examine $m does not find the new array ($uuid): $(cat md.out)"
	done
	"$RAIDFUSE" create --metadata 1.0 --force --level 1 --raid-devices 2 --size 8M old-a.img old-b.img \
		>create.out 2>&1 || fail "create 1.0 again: $(cat create.out)"
	sleep 1
done
log "ok: create on members longer than --size: 1.0 past mdadm's bitmap-room step, linear/raid0 end at --size, old superblocks at the end wiped"
log "PASS"
