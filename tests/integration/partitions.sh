#!/bin/bash
# partitions.sh - members that are partitions of whole-disk images, named
# FILE@N (what disks pulled from a NAS are: the md member is a partition,
# and without root there is no loop device to show it):
#  1. md's own members in partitions: the raid5-ls-64k array of md-refs
#     (made by the real md driver), each member written into partition 3
#     of a GPT disk image made by sfdisk, mounts read-only as FILE@3 with
#     md's size and sha256; `examine` of the whole disk names the
#     partitions to use;
#  2. raidfuse create on partition 3 of three GPT images: `mdadm --examine`
#     (through a loop device over the partition's bytes) recognises each
#     member; fio --verify through the mount; verify 0; the GPT (sfdisk
#     -V) and partitions 1 and 2 are byte for byte as before;
#  3. an MBR image with logical partitions 5-8 (numbered as Linux does):
#     a RAID1 on 5 and 6 and another on 7 and 8, mounted at once (the
#     partitions of one image are claimed apart); ext4 and e2fsck; fail,
#     remove and add by FILE@N, rebuilt, verify 0; the same partition in
#     a second mount is refused (in use), and so is the same partition
#     named twice;
#  4. refusals that name what is wrong and change nothing: a partition
#     the table does not have (the message lists those it has), FILE@N of
#     a file with no partition table, a GPT whose header and backup header
#     checksums are wrong, a new member FILE@N with no FILE (create makes
#     no file of that name); and an existing file whose name merely ends
#     in @N is that file. A GPT damaged at the start only is read from its
#     backup, with a warning (create refuses it).
. "$(dirname "$0")/lib.sh"
require_fuse
require_root
require_cmd sfdisk losetup mdadm fio mkfs.ext4 e2fsck sha256sum gzip

cd "$WORK"
mkdir -p mnt mnt2 m3

wait_idle() { # MNT: the rebuild or check running ends, and ends well
	"$RAIDFUSE" wait "$1" >wait.out || fail "raidfuse wait: $(cat wait.out)"
	grep -q "^done: mismatch_cnt" wait.out || fail "wait did not finish: $(cat wait.out)"
}

# sector_of IMAGE N start|size: partition N of IMAGE as sfdisk lists it.
sector_of() {
	sfdisk -d "$1" | sed -n "s|^$1$2 : start= *\([0-9]*\), size= *\([0-9]*\),.*|\1 \2|p" |
		awk -v f="$3" '{ print (f == "start" ? $1 : $2) }'
}

gpt_disk() { # gpt_disk IMAGE: 100 MiB, partitions 1 (8M), 2 (20M), 3 (40M)
	truncate -s 100M "$1"
	printf 'label: gpt\nsize=8M\nsize=20M\nsize=40M\n' | sfdisk -q "$1" || fail "sfdisk $1"
}

# --- 1. real md members inside partitions ------------------------------------
md_ref_unpack raid5-ls-64k refs
want_sha=$(md_ref_field raid5-ls-64k array_sha256)
want_size=$(md_ref_field raid5-ls-64k array_size_bytes)
ref_members=()
for i in 0 1 2 3; do
	gpt_disk "nas$i.img"
	start=$(sector_of "nas$i.img" 3 start)
	[ -n "$start" ] || fail "sfdisk lists no partition 3 of nas$i.img"
	dd if="refs/raid5-ls-64k.m$i.img" of="nas$i.img" bs=512 seek="$start" conv=notrunc \
		status=none || fail "dd into nas$i.img"
	ref_members+=("nas$i.img@3")
done
# The whole disk has no superblock of its own: examine says where they are.
rc=0
"$RAIDFUSE" examine nas0.img >ex.out 2>&1 || rc=$?
[ "$rc" = 1 ] || fail "examine of a whole partitioned disk exited $rc"
grep -q "partitioned disk with md members in partitions: name them nas0.img@3" ex.out ||
	fail "examine of the whole disk does not name its md partition: $(cat ex.out)"
"$RAIDFUSE" examine nas0.img@3 >ex.out || fail "examine nas0.img@3: $(cat ex.out)"
grep -q "Raid Level : raid5" ex.out || fail "examine nas0.img@3: $(cat ex.out)"
sums_before=$(sha256sum nas?.img)
rf_mount --readonly "${ref_members[@]}" mnt
[ "$(stat -c %s mnt/volume.img)" = "$want_size" ] ||
	fail "md's raid5 in partitions: volume.img is $(stat -c %s mnt/volume.img) bytes, md says $want_size"
[ "$(sha256sum <mnt/volume.img | cut -d' ' -f1)" = "$want_sha" ] ||
	fail "md's raid5 in partitions reads other bytes than md does"
rf_umount mnt
[ "$(sha256sum nas?.img)" = "$sums_before" ] || fail "a read-only mount of partitions changed a disk image"
log "ok: md's own raid5, its members in partition 3 of GPT disks, reads as md reads it"

# --- 2. create on partitions -------------------------------------------------
for i in 0 1 2; do
	gpt_disk "d$i.img"
	for p in 1 2; do # something in the other partitions, which must stay
		start=$(sector_of "d$i.img" $p start)
		head -c 1M /dev/urandom | dd of="d$i.img" bs=512 seek="$start" conv=notrunc status=none
	done
done
sum_parts() {
	local i p
	for i in 0 1 2; do
		for p in 1 2; do
			dd if="d$i.img" bs=512 skip="$(sector_of "d$i.img" $p start)" \
				count="$(sector_of "d$i.img" $p size)" status=none | sha256sum
		done
	done
}
parts_before=$(sum_parts)
"$RAIDFUSE" create --level 5 --raid-devices 3 --chunk 16K d0.img@3 d1.img@3 d2.img@3 >create.out 2>&1 ||
	fail "create on partitions: $(cat create.out)"
[ ! -e d0.img@3 ] || fail "create made a file named d0.img@3 instead of using the partition"
uuid=$("$RAIDFUSE" examine d0.img@3 | sed -n 's/^ *Array UUID : //p')
for i in 0 1 2; do
	loop=$(losetup -f --show -o $(($(sector_of "d$i.img" 3 start) * 512)) \
		--sizelimit $(($(sector_of "d$i.img" 3 size) * 512)) "d$i.img") || fail "losetup d$i.img"
	track_loop "$loop"
	mdadm --examine "$loop" >md.out 2>&1 || fail "mdadm --examine of d$i.img's partition 3: $(cat md.out)"
	grep -q "Array UUID : $uuid" md.out && grep -q "Raid Level : raid5" md.out &&
		grep -q "Device Role : Active device $i" md.out ||
		fail "mdadm --examine of d$i.img@3 does not show raidfuse's member $i: $(cat md.out)"
	loop_detach "$loop"
done
rf_mount d0.img@3 d1.img@3 d2.img@3 mnt
"$RAIDFUSE" status mnt | grep -q "d1.img@3\[1\]" || fail "status does not name d1.img@3: $("$RAIDFUSE" status mnt)"
fio --name=v --filename=mnt/volume.img --rw=randwrite --bs=4k-128k --size=70M --ioengine=psync \
	--verify=crc32c --verify_fatal=1 --do_verify=1 --output=fio.out >/dev/null 2>&1 ||
	fail "fio verify on partitions: $(cat fio.out)"
vol_sha=$(sha256sum <mnt/volume.img)
rf_umount mnt
"$RAIDFUSE" verify d0.img@3 d1.img@3 d2.img@3 | grep -q "mismatch_cnt: 0" || fail "verify on partitions"
for i in 0 1 2; do
	sfdisk -V "d$i.img" >sf.out 2>&1 || fail "the GPT of d$i.img is damaged: $(cat sf.out)"
done
[ "$(sum_parts)" = "$parts_before" ] || fail "partitions 1 and 2 changed under a raid5 on partition 3"
log "ok: raid5 created on partition 3 of three GPT disks: mdadm --examine, fio verify, GPT and neighbours intact"

# --- 3. MBR logical partitions, two arrays on one image ------------------------
truncate -s 100M mbr.img
printf 'label: dos\n,4M,83\n,,E\n,20M,fd\n,20M,fd\n,20M,fd\n,20M,fd\n' | sfdisk -q mbr.img || fail "sfdisk mbr.img"
"$RAIDFUSE" create --level 1 --raid-devices 2 mbr.img@5 mbr.img@6 >/dev/null 2>&1 || fail "create raid1 on @5 @6"
"$RAIDFUSE" create --level 1 --raid-devices 2 mbr.img@7 mbr.img@8 >/dev/null 2>&1 || fail "create raid1 on @7 @8"
rf_mount mbr.img@5 mbr.img@6 mnt
rf_mount mbr.img@7 mbr.img@8 mnt2
rc=0
"$RAIDFUSE" mount mbr.img@5 mbr.img@6 m3 >m3.out 2>&1 || rc=$?
[ "$rc" != 0 ] && grep -q "mbr.img@5 is in use by another raidfuse" m3.out ||
	fail "a partition mounted twice was not refused as in use (rc $rc): $(cat m3.out)"
rc=0
"$RAIDFUSE" create --level 1 --raid-devices 2 --force mbr.img@1 mbr.img@1 >same.out 2>&1 || rc=$?
[ "$rc" = 1 ] && grep -q "same member given twice" same.out ||
	fail "one partition named twice: rc $rc: $(cat same.out)"
mkfs.ext4 -q -F mnt/volume.img || fail "mkfs.ext4 on mbr.img@5+6"
head -c 8M /dev/urandom >ref
dd if=ref of=mnt2/volume.img bs=1M conv=notrunc,fsync status=none
"$RAIDFUSE" fail mnt mbr.img@6 && "$RAIDFUSE" remove mnt mbr.img@6 ||
	fail "fail and remove by FILE@N"
"$RAIDFUSE" add mnt mbr.img@6 || fail "add mbr.img@6 back"
wait_idle mnt
grep -q "recovery of role 1 onto .*mbr.img@6 finished" mnt/.raidfuse/log ||
	fail "no rebuild onto mbr.img@6: $(cat mnt/.raidfuse/log)"
e2fsck -fn mnt/volume.img >fsck.out 2>&1 || fail "e2fsck after the rebuild: $(cat fsck.out)"
cmp -n 8388608 ref mnt2/volume.img || fail "the array on @7 @8 lost its bytes"
rf_umount mnt
rf_umount mnt2
"$RAIDFUSE" verify mbr.img@5 mbr.img@6 | grep -q "mismatch_cnt: 0" || fail "verify @5 @6"
sfdisk -V mbr.img >sf.out 2>&1 || fail "the MBR chain of mbr.img is damaged: $(cat sf.out)"
log "ok: two raid1 on logical partitions of one MBR image, mounted at once; rebuild by FILE@N"

# --- 4. refusals ------------------------------------------------------------
sums_before=$(sha256sum d?.img mbr.img)
refuse() { # refuse WHAT PATTERN CMD...: exit 1, PATTERN in the message
	local what=$1 pattern=$2 rc=0
	shift 2
	"$@" >ref.out 2>&1 || rc=$?
	[ "$rc" = 1 ] || fail "$what: exited $rc: $(cat ref.out)"
	grep -q -- "$pattern" ref.out || fail "$what: message lacks '$pattern': $(cat ref.out)"
}
refuse "a partition the GPT lacks" "d0.img has no partition 7 (its gpt lists: 1, 2, 3)" \
	"$RAIDFUSE" mount d0.img@7 d1.img@3 d2.img@3 mnt
refuse "a logical partition the MBR lacks" "has no partition 2 (its mbr lists: 1, 5, 6, 7, 8)" \
	"$RAIDFUSE" examine mbr.img@2
truncate -s 16M plain.img
refuse "FILE@N without a table" "holds no partition table" "$RAIDFUSE" examine plain.img@1
# A damaged primary GPT: as the kernel, its backup (sfdisk's, at the
# disk's last sector) locates the partition, and the user is told.
cp d0.img bad.img
printf '\x7f' | dd of=bad.img bs=1 seek=$((512 + 40)) conv=notrunc status=none
sum_bad=$(sha256sum bad.img)
"$RAIDFUSE" mount --readonly bad.img@3 d1.img@3 d2.img@3 mnt 2>backup.err ||
	fail "mount through the backup GPT: $(cat backup.err)"
track_mount mnt
[ "$(sha256sum <mnt/volume.img)" = "$vol_sha" ] || fail "the volume read through the backup GPT differs"
grep -q "bad.img@3: the primary GPT of its disk is damaged; partition 3 was found through the backup GPT" \
	mnt/.raidfuse/log backup.err || fail "no warning of the damaged primary GPT: $(cat backup.err mnt/.raidfuse/log)"
rf_umount mnt
"$RAIDFUSE" examine bad.img@3 >ex.out 2>ex.err && grep -q "Device Role : Active device 0" ex.out &&
	grep -q "primary GPT of its disk is damaged" ex.err || fail "examine through the backup GPT: $(cat ex.out ex.err)"
refuse "create through a backup GPT" "repair it first" \
	"$RAIDFUSE" create --force --level 1 --raid-devices 2 bad.img@3 d2.img@1
# And with the backup damaged too, both are named.
printf '\x7f' | dd of=bad.img bs=1 seek=$((100 * 1048576 - 512 + 40)) conv=notrunc status=none
sum_bad=$(sha256sum bad.img)
refuse "a damaged GPT and backup" "GPT header's checksum is wrong: it is damaged; the backup GPT header's checksum is wrong" \
	"$RAIDFUSE" mount bad.img@3 d1.img@3 d2.img@3 mnt
[ "$(sha256sum bad.img)" = "$sum_bad" ] || fail "a refused mount changed bad.img"
[ "$(sha256sum d?.img mbr.img)" = "$sums_before" ] || fail "a refusal changed a disk image"
# create does not make a new file named FILE@N when FILE is absent: that
# is a mistyped disk name far more often than a wanted member name.
rc=0
"$RAIDFUSE" create --level 1 --raid-devices 2 --size 8M "solo@1" "solo@2" >create.out 2>&1 || rc=$?
[ "$rc" = 1 ] || fail "create --size solo@1 solo@2 with no file solo: exit $rc, $(cat create.out)"
grep -q "solo@1: no such file, and no disk image solo whose partition 1" create.out ||
	fail "create of solo@1: the message does not say what is missing: $(cat create.out)"
[ ! -e solo@1 ] && [ ! -e solo@2 ] || fail "a refused create left files named solo@N behind"
# An existing file whose name ends in @N, with no FILE beside it, is a file.
truncate -s 8M solo@1 solo@2
"$RAIDFUSE" create --level 1 --raid-devices 2 "solo@1" "solo@2" >/dev/null 2>&1 ||
	fail "create on files named solo@1 solo@2"
[ -f solo@1 ] && [ -f solo@2 ] || fail "create did not make files named solo@1 and solo@2"
"$RAIDFUSE" examine solo@1 | grep -q "Raid Level : raid1" || fail "examine of the file solo@1"
if command -v valgrind >/dev/null; then
	for args in "examine d0.img@3" "examine d0.img@7" "examine nas1.img" "examine bad.img@3"; do
		rc=0
		# shellcheck disable=SC2086
		valgrind -q --leak-check=full --errors-for-leak-kinds=all --error-exitcode=99 \
			"$RAIDFUSE" $args >vg.out 2>&1 || rc=$?
		[ "$rc" != 99 ] || fail "valgrind: raidfuse $args: $(cat vg.out)"
	done
else
	log "NOT RUN: examine on partitions under valgrind (no valgrind)"
fi
log "ok: refusals name the partition, the table or the checksum, and change nothing"
log "PASS"
