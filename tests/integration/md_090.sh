#!/bin/bash
# md_090.sh - arrays of md metadata 0.90, the legacy format (superblock in
# the last 64 KiB of each member, data from sector 0), made by the real md
# driver (tests/data/md090):
#  1. examine says 0.90.00 and the UUID, events and level mdadm --examine
#     gives; a read-write mount is refused with a message naming 0.90 and
#     --readonly; a read-only mount reads md's size and sha256, also
#     degraded (one member left out, two for raid6, --run); status says
#     super 0.90; verify finds 0 mismatches; no member changes;
#  2. grow is refused and changes nothing;
#  3. a member in a disk image's last partition: the whole disk is refused
#     (its superblock is the partition's) and names FILE@N, which mounts;
#     a raid5 member whose array holds a partition table is still whole;
#  4. create over a 0.90 member names it; a member holding both a 1.0 and a
#     0.90 superblock is read as the one of the newer ctime (mdadm's rule);
#  5. superblocks patched as md would find them: not clean (a degraded
#     raid5 then needs --force, as md's rule has it), one member an event
#     behind (in sync, md's margin), a big-endian one (read, bitmap and
#     all); a wrong checksum and a 0.91 one (reshape in progress) are
#     refused, each naming what is wrong.
. "$(dirname "$0")/lib.sh"
require_fuse
require_cmd mdadm gzip sha256sum python3 sfdisk

DATA=$TOP_SRCDIR/tests/data/md090
[ -f "$DATA/manifest.txt" ] || fail "no $DATA/manifest.txt"
cd "$WORK"
mkdir -p mnt copy
for gz in "$DATA"/r5-090.m0.img.gz "$DATA"/r1-090.m0.img.gz; do gzip -dc "$gz" >copy/"$(basename "$gz" .gz)"; done
DATA_COPY=$WORK/copy
field() { sed -n "s/^$1 $2=//p" "$DATA/manifest.txt"; }
sha_of_volume() { sha256sum <mnt/volume.img | cut -d' ' -f1; }

unpack() {
	rm -rf "$1" && mkdir -p "$1"
	for gz in "$DATA/$1".m*.img.gz; do
		gzip -dc "$gz" >"$1/$(basename "$gz" .gz)" || fail "unpack $gz"
	done
}

# patch090 FILE EXPR: apply a python expression to the 0.90 superblock's
# words (list w, little-endian u32), then set its checksum as md computes
# it unless the expression set keep_csum.
patch090() {
	python3 - "$1" "$2" <<'PY' || fail "patch $1"
import struct, sys
path, expr = sys.argv[1], sys.argv[2]
with open(path, 'r+b') as f:
    f.seek(0, 2)
    sectors = f.tell() // 512
    at = ((sectors & ~127) - 128) * 512
    f.seek(at)
    w = list(struct.unpack('<1024I', f.read(4096)))
    env = {'w': w, 'keep_csum': False, 'struct': struct}
    exec(expr, env)
    w = env['w']
    if not env['keep_csum']:
        w[38] = 0
        s = sum(w)
        w[38] = ((s & 0xffffffff) + (s >> 32)) & 0xffffffff
    raw = struct.pack('<1024I', *w)
    if env.get('big_endian'):
        # As a big-endian host writes it (md_p.h): its byte order, the
        # event counts high word first, and the bitmap's uuid bytes the
        # uuid words in its order.
        w[39], w[40], w[41], w[42] = w[40], w[39], w[42], w[41]
        raw = struct.pack('>1024I', *w)
        if w[33] & (1 << 8):
            f.seek(at + 4096 + 8)
            f.write(struct.pack('>4I', w[5], w[13], w[14], w[15]))
    f.seek(at)
    f.write(raw)
PY
}

# --- 1. every array as md made it ------------------------------------------
for a in r1-090 r5-090 r6-090 r10-090 lin-090; do
	unpack "$a"
	members=("$a"/*.img)
	before=$(sha256sum "${members[@]}")
	"$RAIDFUSE" examine "${members[0]}" >ex.out || fail "$a: examine: $(cat ex.out)"
	grep -q "Version : 0.90.00\$" ex.out || fail "$a: examine does not say 0.90.00: $(cat ex.out)"
	mdadm --examine "${members[0]}" >md.out 2>&1 || fail "$a: mdadm --examine: $(cat md.out)"
	for f in UUID Events "Raid Level" "Raid Devices"; do
		want=$(sed -n "s/^ *$f : \([^ ]*\).*/\1/p" md.out)
		got=$(sed -n "s/^ *$f : \([^ ]*\).*/\1/p" ex.out)
		[ -n "$want" ] && [ "$want" = "$got" ] || fail "$a: $f: mdadm says '$want', raidfuse examine '$got'"
	done
	[ "$(sed -n 's/^ *UUID : //p' ex.out)" = "$(field "$a" uuid)" ] ||
		fail "$a: examine's UUID is not md's $(field "$a" uuid): $(cat ex.out)"
	if [ "$(field "$a" bitmap)" != none ]; then
		grep -q "Internal Bitmap : 8 sectors" ex.out || fail "$a: examine finds no bitmap: $(cat ex.out)"
	fi

	rc=0
	"$RAIDFUSE" mount "${members[@]}" mnt >rw.out 2>&1 || rc=$?
	[ "$rc" != 0 ] && grep -q "metadata 0.90" rw.out && grep -q -- "--readonly" rw.out ||
		fail "$a: a read-write mount: exit $rc, $(cat rw.out)"
	mountpoint -q mnt && fail "$a: the refused mount is mounted"

	rf_mount --readonly "${members[@]}" mnt
	[ "$(stat -c %s mnt/volume.img)" = "$(field "$a" array_size)" ] ||
		fail "$a: volume.img is $(stat -c %s mnt/volume.img) bytes, md's array $(field "$a" array_size)"
	[ "$(sha_of_volume)" = "$(field "$a" sha256_md0)" ] || fail "$a: volume.img reads other bytes than md's array"
	"$RAIDFUSE" status mnt >st.out
	grep -q "super 0.90" st.out && grep -q "read-only" st.out || fail "$a: status: $(cat st.out)"
	grep -q "uuid: $(field "$a" uuid)" st.out || fail "$a: status does not give md's UUID: $(cat st.out)"
	[ "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["metadata"])' mnt/.raidfuse/status.json)" = 0.90 ] ||
		fail "$a: status.json's metadata is not 0.90: $(cat mnt/.raidfuse/status.json)"
	rf_umount mnt

	case $a in
	lin-090) left_out=() ;;
	r6-090) left_out=(1 2) ;;
	r10-090) left_out=(0 3) ;; # one copy of each of the two pairs
	*) left_out=(1) ;;
	esac
	if [ ${#left_out[@]} -gt 0 ]; then
		degraded=()
		for i in "${!members[@]}"; do
			[[ " ${left_out[*]} " == *" $i "* ]] || degraded+=("${members[$i]}")
		done
		rf_mount --readonly --run "${degraded[@]}" mnt
		[ "$(sha_of_volume)" = "$(field "$a" sha256_md0)" ] ||
			fail "$a: degraded (members ${left_out[*]} left out), volume.img reads other bytes than md's array"
		grep -q "degraded" mnt/.raidfuse/status || fail "$a: status does not say degraded: $(cat mnt/.raidfuse/status)"
		rf_umount mnt
	fi
	case $a in r5-090 | r6-090 | r1-090 | r10-090)
		"$RAIDFUSE" verify "${members[@]}" >verify.out 2>&1 && grep -q "mismatch_cnt: 0" verify.out ||
			fail "$a: verify: $(cat verify.out)"
		;;
	esac
	[ "$(sha256sum "${members[@]}")" = "$before" ] || fail "$a: a member changed"
	log "ok: $a: examine as mdadm, read-write refused, read-only and degraded mounts read as md does"
done

# --- 2. grow writes superblocks: refused ------------------------------------
before=$(sha256sum r1-090/*.img)
rc=0
"$RAIDFUSE" grow --size 2M r1-090/*.img >grow.out 2>&1 || rc=$?
[ "$rc" != 0 ] && grep -q "metadata 0.90" grow.out || fail "grow of a 0.90 array: exit $rc, $(cat grow.out)"
[ "$(sha256sum r1-090/*.img)" = "$before" ] || fail "a refused grow changed a member"
log "ok: grow refused"

# --- 3. a member in a disk's last partition ----------------------------------
# 0.90 records no offset, so the superblock of a partition that ends at the
# disk's end is also where the whole disk's would be: the whole disk is
# refused with the FILE@N to name instead (as NAS disks hold their system
# mirror), which then mounts.
unpack r1-090
truncate -s 5M disk.img
echo 'start=2048, type=fd' | sfdisk -q disk.img >sfdisk.out 2>&1 || fail "sfdisk: $(cat sfdisk.out)"
dd if=r1-090/r1-090.m0.img of=disk.img bs=1M seek=1 conv=notrunc status=none
before=$(sha256sum disk.img)
rc=0
"$RAIDFUSE" examine disk.img >part.out 2>&1 || rc=$?
[ "$rc" != 0 ] && grep -q "is partition 1's" part.out && grep -q "disk.img@1" part.out ||
	fail "examine of a whole disk whose partition holds a 0.90 member: exit $rc, $(cat part.out)"
rc=0
"$RAIDFUSE" mount --readonly --run disk.img mnt >part.out 2>&1 || rc=$?
[ "$rc" != 0 ] && grep -q "disk.img@1" part.out || fail "mount of the whole disk: exit $rc, $(cat part.out)"
"$RAIDFUSE" examine disk.img@1 >part.out 2>&1 && grep -q "Version : 0.90.00" part.out ||
	fail "examine disk.img@1: $(cat part.out)"
rf_mount --readonly disk.img@1 r1-090/r1-090.m1.img mnt
[ "$(sha_of_volume)" = "$(field r1-090 sha256_md0)" ] || fail "disk.img@1 with its mirror reads other bytes"
rf_umount mnt
[ "$(sha256sum disk.img)" = "$before" ] || fail "the disk image changed"
# A partition that is not the last (a NAS's system mirror is its
# first): the whole disk has no superblock, and the error names FILE@1.
truncate -s 9M disk2.img
printf 'start=2048, size=8192, type=fd\nstart=10240, type=83\n' | sfdisk -q disk2.img >sfdisk.out 2>&1 ||
	fail "sfdisk: $(cat sfdisk.out)"
dd if=r1-090/r1-090.m1.img of=disk2.img bs=1M seek=1 conv=notrunc status=none
rc=0
"$RAIDFUSE" examine disk2.img >part.out 2>&1 || rc=$?
[ "$rc" != 0 ] && grep -q "name them disk2.img@1" part.out ||
	fail "examine of a disk whose first partition holds a 0.90 member: exit $rc, $(cat part.out)"
rf_mount --readonly disk.img@1 disk2.img@1 mnt
[ "$(sha_of_volume)" = "$(field r1-090 sha256_md0)" ] || fail "disk.img@1 and disk2.img@1 read other bytes"
rf_umount mnt
log "ok: a 0.90 member in a disk's last partition: the whole disk refused, FILE@1 mounts; in a first partition, named"

# A whole-disk raid5 member whose first chunk (the array's first
# sectors) holds an MBR with a partition that ends where the member
# does: the partition's room (6016 sectors) cannot hold the 8064 the
# superblock gives, so the superblock is the disk's, not the
# partition's.
unpack r5-090
python3 - r5-090/r5-090.m0.img <<'PY' || fail "write an MBR into the array's first sector"
import struct, sys
with open(sys.argv[1], 'r+b') as f:
    mbr = bytearray(512)
    mbr[446:462] = struct.pack('<B3sB3sII', 0, b'\0\0\0', 0x83, b'\0\0\0', 2048, 6144)
    mbr[510:512] = b'\x55\xaa'
    f.write(mbr)
PY
"$RAIDFUSE" examine r5-090/r5-090.m0.img >part.out 2>&1 && grep -q "Version : 0.90.00" part.out ||
	fail "a whole-disk member whose content has a partition table: $(cat part.out)"
rf_mount --readonly r5-090/*.img mnt
cmp -n 512 mnt/volume.img r5-090/r5-090.m0.img || fail "the array's first sector is not the member's"
rf_umount mnt
log "ok: a whole-disk raid5 member whose array holds a partition table is taken whole"

# --- 4. a valid 0.90 member given to create, and one that also holds 1.0 ----
unpack r1-090
before=$(sha256sum r1-090/*.img)
rc=0
"$RAIDFUSE" create --level 1 --raid-devices 2 --size 2M r1-090/r1-090.m0.img new.img >create.out 2>&1 || rc=$?
[ "$rc" != 0 ] && grep -q "already holds an md metadata 0.90 superblock (array $(field r1-090 uuid))" create.out ||
	fail "create over a 0.90 member: exit $rc, $(cat create.out)"
[ "$(sha256sum r1-090/*.img)" = "$before" ] || fail "a refused create changed a member"
# A 1.0 superblock (forged from md's 1.2 one of shared/md-refs' raid1, cut
# in tests/data) near the end of each member, as a disk reused without a
# wipe holds: mdadm takes the superblock of the newer ctime, and so must
# raidfuse; a stale 1.0 must not make a live 0.90 array writable.
add_10() { # MEMBER CTIME
	python3 - "$TOP_SRCDIR/tests/data/raid1.m0.sb" "$1" "$2" <<'PY' || fail "forge a 1.0 superblock on $1"
import struct, sys
sb = bytearray(open(sys.argv[1], 'rb').read()[:1024])
path, ctime = sys.argv[2], int(sys.argv[3])
with open(path, 'r+b') as f:
    f.seek(0, 2)
    sectors = f.tell() // 512
    off = (sectors - 16) & ~7
    struct.pack_into('<Q', sb, 144, off)    # super_offset
    struct.pack_into('<Q', sb, 128, 0)      # data_offset
    struct.pack_into('<Q', sb, 136, 8000)   # data_size
    struct.pack_into('<Q', sb, 16 + 16 + 32, ctime)   # ctime (after magic..set_name)
    struct.pack_into('<I', sb, 8, 0)        # feature_map: no bitmap
    struct.pack_into('<I', sb, 96, 0)
    struct.pack_into('<H', sb, 186, 0)      # no bad block log
    struct.pack_into('<I', sb, 188, 0)
    n = 256 + 2 * struct.unpack_from('<I', sb, 220)[0]
    struct.pack_into('<I', sb, 216, 0)
    total = sum(struct.unpack_from('<%dI' % (n // 4), sb, 0))
    struct.pack_into('<I', sb, 216, ((total & 0xffffffff) + (total >> 32)) & 0xffffffff)
    f.seek(off * 512)
    f.write(sb)
PY
}
ctime090=$(python3 -c 'import struct,sys; f=open(sys.argv[1],"rb"); f.seek(8064*512+24); print(struct.unpack("<I", f.read(4))[0])' r1-090/r1-090.m0.img)
for m in r1-090/*.img; do add_10 "$m" $((ctime090 - 1000)); done
mdadm --examine r1-090/r1-090.m0.img 2>&1 | grep -q "Version : 0.90.00" || fail "mdadm does not take 0.90 over the older 1.0"
"$RAIDFUSE" examine r1-090/r1-090.m0.img >ex.out 2>&1 && grep -q "Version : 0.90.00" ex.out ||
	fail "examine takes an older 1.0 superblock over the 0.90 one: $(cat ex.out)"
before=$(sha256sum r1-090/*.img)
rc=0
"$RAIDFUSE" mount r1-090/*.img mnt >rw.out 2>&1 || rc=$?
[ "$rc" != 0 ] && grep -q "metadata 0.90" rw.out || fail "a read-write mount over an older 1.0: exit $rc, $(cat rw.out)"
[ "$(sha256sum r1-090/*.img)" = "$before" ] || fail "a refused mount changed a member"
for m in r1-090/*.img; do add_10 "$m" $((ctime090 + 1000)); done
mdadm --examine r1-090/r1-090.m0.img 2>&1 | grep -q "Version : 1.0" || fail "mdadm does not take the newer 1.0"
"$RAIDFUSE" examine r1-090/r1-090.m0.img >ex.out 2>&1 && grep -q "Version : 1.0" ex.out ||
	fail "examine does not take the newer 1.0 superblock: $(cat ex.out)"
log "ok: create names a 0.90 member; of a 1.0 and a 0.90 superblock the newer ctime wins, as in mdadm"

# --- 5. superblocks as md would find them after other histories -------------
# Not clean (word 33 bit 0 off, checkpoint events unequal): md resyncs it
# from the start; degraded, parity cannot be trusted (md's rule).
unpack r5-090
for m in r5-090/*.img; do patch090 "$m" 'w[33] &= ~1; w[41] = 0; w[42] = 0'; done
mdadm --examine r5-090/r5-090.m0.img | grep -q "State : active" || fail "the patched superblock is not active to mdadm"
before=$(sha256sum r5-090/*.img)
rc=0
"$RAIDFUSE" mount --readonly --run r5-090/r5-090.m0.img r5-090/r5-090.m2.img mnt >dirty.out 2>&1 || rc=$?
[ "$rc" != 0 ] && grep -q "dirty" dirty.out && grep -q -- "--force" dirty.out ||
	fail "a dirty degraded 0.90 raid5: exit $rc, $(cat dirty.out)"
rf_mount --readonly --run --force r5-090/r5-090.m0.img r5-090/r5-090.m2.img mnt
[ "$(sha_of_volume)" = "$(field r5-090 sha256_md0)" ] || fail "dirty degraded raid5 with --force reads other bytes"
rf_umount mnt
rf_mount --readonly r5-090/*.img mnt
[ "$(sha_of_volume)" = "$(field r5-090 sha256_md0)" ] || fail "dirty raid5 reads other bytes"
rf_umount mnt
[ "$(sha256sum r5-090/*.img)" = "$before" ] || fail "a read-only mount of a dirty array changed a member"
log "ok: a dirty 0.90 raid5: degraded needs --force, whole reads as md's"

# One member an event behind the others: md (and mdadm) take it as in sync.
unpack r5-090
for m in r5-090/r5-090.m0.img r5-090/r5-090.m1.img; do patch090 "$m" 'w[39] += 1'; done
rf_mount --readonly r5-090/*.img mnt
grep -q "\[UUU\]" mnt/.raidfuse/status || fail "a member one event behind is left out: $(cat mnt/.raidfuse/status)"
rf_umount mnt
unpack r5-090
for m in r5-090/r5-090.m0.img r5-090/r5-090.m1.img; do patch090 "$m" 'w[39] += 2'; done
rf_mount --readonly --run r5-090/*.img mnt
grep -q "\[UU_\]" mnt/.raidfuse/status || fail "a member two events behind serves: $(cat mnt/.raidfuse/status)"
[ "$(sha_of_volume)" = "$(field r5-090 sha256_md0)" ] || fail "raid5 without its stale member reads other bytes"
rf_umount mnt
log "ok: events: one behind is in sync, two behind is stale"

# A spare (descriptor neither active nor in sync): kept out of the roles,
# and said to be unused on a read-only mount.
unpack r1-090
for m in r1-090/*.img; do patch090 "$m" 'w[128 + 32 + 4] = 0; w[992 + 4] = 0 if w[992] == 1 else w[992 + 4]'; done
rf_mount --readonly --run r1-090/*.img mnt
grep -q "\[U_\]" mnt/.raidfuse/status || fail "a 0.90 spare serves a role: $(cat mnt/.raidfuse/status)"
grep -q "r1-090.m1.img: a spare (unused: the array is read-only)" mnt/.raidfuse/log ||
	fail "the log does not name the spare: $(cat mnt/.raidfuse/log)"
[ "$(sha_of_volume)" = "$(field r1-090 sha256_md0)" ] || fail "raid1 with a spare reads other bytes"
rf_umount mnt
log "ok: a 0.90 spare is a spare, unused read-only"

# Damaged or foreign superblocks: refused by name, nothing written.
expect_refusal() { # WHAT PATTERN
	local rc=0
	before=$(sha256sum r5-090/*.img)
	"$RAIDFUSE" examine r5-090/r5-090.m1.img >ref.out 2>&1 || rc=$?
	[ "$rc" != 0 ] && grep -q "$2" ref.out || fail "examine of $1: exit $rc, $(cat ref.out)"
	rc=0
	"$RAIDFUSE" mount --readonly r5-090/*.img mnt >ref.out 2>&1 || rc=$?
	[ "$rc" != 0 ] && grep -q "$2" ref.out || fail "mount of $1: exit $rc, $(cat ref.out)"
	[ "$(sha256sum r5-090/*.img)" = "$before" ] || fail "the refusal of $1 changed a member"
	log "ok: $1 refused: $(head -n1 ref.out)"
}
unpack r5-090
patch090 r5-090/r5-090.m1.img 'w[6] ^= 1; keep_csum = True'
expect_refusal "a wrong checksum" "0.90 superblock at sector 8064 is not valid: checksum"
# Written by a big-endian host (an old PowerPC NAS): read as mdadm's
# super0_swap_endian reads it, with its bitmap (r1).
for a in r5-090 r1-090; do
	unpack $a
	for m in $a/*.img; do patch090 "$m" 'big_endian = True'; done
	"$RAIDFUSE" examine $a/$a.m0.img >ex.out 2>&1 || fail "$a big-endian: examine: $(cat ex.out)"
	grep -q "Byte Order : big-endian" ex.out && grep -q "UUID : $(field $a uuid)" ex.out &&
		grep -q "Events : $(mdadm --examine "$DATA_COPY/$a.m0.img" | sed -n 's/^ *Events : //p')\$" ex.out ||
		fail "$a big-endian: examine: $(cat ex.out)"
	# mdadm reads a big-endian 0.90 when told (0.swap): the emulation
	# must give it the UUID and events of the little-endian original.
	mdadm --examine --metadata=0.swap $a/$a.m0.img >md.out 2>&1 || fail "$a big-endian: mdadm -e 0.swap: $(cat md.out)"
	for f in UUID Events; do
		[ "$(sed -n "s/^ *$f : //p" md.out)" = "$(sed -n "s/^ *$f : //p" ex.out)" ] ||
			fail "$a big-endian: $f: mdadm -e 0.swap says '$(sed -n "s/^ *$f : //p" md.out)', raidfuse '$(sed -n "s/^ *$f : //p" ex.out)'"
	done
	rf_mount --readonly $a/*.img mnt
	[ "$(sha_of_volume)" = "$(field $a sha256_md0)" ] || fail "$a big-endian: volume.img reads other bytes than md's"
	rf_umount mnt
	log "ok: $a written by a big-endian host reads as md's"
done
unpack r5-090
patch090 r5-090/r5-090.m1.img 'w[2] = 91'
expect_refusal "a 0.91 superblock" "reshape is in progress"

# The new paths of the CLI under valgrind: examine of a 0.90 member, of a
# whole disk whose partition holds one, a damaged one, and the refused
# read-write mount.
if command -v valgrind >/dev/null; then
	unpack r6-090
	patch090 r5-090/r5-090.m1.img 'w[6] ^= 1; keep_csum = True'
	vg_args=("examine r6-090/r6-090.m0.img" "examine r5-090/r5-090.m1.img"
		"mount r6-090/r6-090.m0.img r6-090/r6-090.m1.img r6-090/r6-090.m2.img r6-090/r6-090.m3.img mnt"
		"examine disk.img")
	for args in "${vg_args[@]}"; do
		rc=0
		# shellcheck disable=SC2086
		valgrind -q --leak-check=full --errors-for-leak-kinds=all --error-exitcode=99 \
			"$RAIDFUSE" $args >vg.out 2>&1 || rc=$?
		[ "$rc" != 99 ] || fail "valgrind: raidfuse $args: $(cat vg.out)"
	done
	log "ok: examine and the refused mount clean under valgrind"
else
	log "NOT RUN: the 0.90 paths under valgrind (no valgrind)"
fi
log "ok: all"
