#!/bin/bash
# refusals.sh - bad input is refused with a clear message and changes nothing.
#
# Every attempt below must exit non-zero (not by a signal), print a message
# naming what is wrong (and the member at fault), mount nothing, and leave
# every member file byte for byte as it was - and, for create, create no
# file. All member files live under $ARR; "nothing changed" compares, before
# and after each attempt, the sha256 of each file named in the command and
# the name, size, inode, mtime and ctime of every file under $ARR.
# Finally, volume.img of a mounted array cannot change size.
. "$(dirname "$0")/lib.sh"

require_fuse
require_cmd sha256sum truncate dd mdadm

T0=$SECONDS
ARR=$WORK/arr
MNT=$WORK/mnt
mkdir -p "$ARR" "$MNT"
track_mount "$MNT"
NCHECKS=0
ok() {
	NCHECKS=$((NCHECKS + 1))
	log "ok: $*"
}

# The state of the member files an attempt could touch: the sha256 of every
# file named on its command line, and for every file under $ARR its name,
# size, inode, mtime and ctime (so a new, removed or rewritten file shows).
state_of_members() {
	local a
	for a in "$@"; do
		[ -f "$a" ] && ! [ -L "$a" ] && sha256sum "$a"
	done
	find "$ARR" ! -type d -printf '%P %y %s %i %T@ %C@\n' | sort
}

any_raidfuse_mount() { grep -F " $WORK/" /proc/mounts | grep -q fuse; }

# refuse LABEL CMD...: CMD must fail with a message containing every string
# in EXPECT (case-insensitive) and change no file under $ARR.
EXPECT=()
refuse() {
	local label=$1 before after rc s
	shift
	before=$(state_of_members "$@")
	"$@" >"$WORK/out" 2>&1 && rc=0 || rc=$?
	after=$(state_of_members "$@")
	if any_raidfuse_mount; then
		grep -F " $WORK/" /proc/mounts | while read -r _ mp _; do "$RAIDFUSE" umount "$mp"; done
		fail "$label: '$*' mounted something but must be refused"
	fi
	[ $rc != 0 ] || fail "$label: '$*' exited 0 but must be refused: $(cat "$WORK/out")"
	[ $rc -lt 126 ] || fail "$label: '$*' exited $rc (crash or signal): $(cat "$WORK/out")"
	for s in "${EXPECT[@]}"; do
		grep -qiF -- "$s" "$WORK/out" ||
			fail "$label: the message does not mention '$s': $(cat "$WORK/out")"
	done
	[ "$before" = "$after" ] || fail "$label: a refused '$1' changed member files:
$(diff <(echo "$before") <(echo "$after"))"
	ok "$label: exit $rc, nothing changed: $(grep -v '^Usage' "$WORK/out" | head -n1)"
	EXPECT=()
}

# create_array DIR NAME LEVEL N: members DIR/NAME0.img ... (4 MiB each).
create_array() {
	local dir=$1 name=$2 level=$3 n=$4 r m=()
	mkdir -p "$dir"
	for ((r = 0; r < n; r++)); do m+=("$dir/$name$r.img"); done
	"$RAIDFUSE" create --level "$level" --raid-devices "$n" --chunk 64K --size 4M \
		--name "$name" "${m[@]}" >"$WORK/out" 2>&1 ||
		fail "create of $name failed: $(cat "$WORK/out")"
}

# copy_array SRC DST: another copy of the same array (same UUID).
copy_array() {
	mkdir -p "$2"
	cp "$1"/*.img "$2"/ || fail "cannot copy $1"
}

# poke FILE OFFSET HEXBYTES: overwrite bytes of FILE at OFFSET.
poke() {
	local hex=$3 esc=""
	while [ -n "$hex" ]; do esc+="\\x${hex:0:2}"; hex=${hex:2}; done
	printf '%b' "$esc" |
		dd of="$1" bs=1 seek="$2" conv=notrunc status=none || fail "cannot modify $1"
}
byte_at() { od -An -tx1 -j "$2" -N1 "$1" | tr -d ' \n'; }

A=$ARR/a B=$ARR/b
create_array "$A" a 5 3
create_array "$B" b 5 3
mkdir -p "$ARR/plain"
head -c $((4 * 1048576)) /dev/urandom >"$ARR/plain/p0.img"
head -c $((4 * 1048576)) /dev/urandom >"$ARR/plain/p1.img"

# Positive control: array a mounts as given (so each refusal below is due
# to the one thing changed).
rf_mount "$A/a0.img" "$A/a1.img" "$A/a2.img" "$MNT"
rf_umount "$MNT"
ok "control: array a mounts with its three members"

EXPECT=("degraded" "role(s) 2" "no redundancy left")
refuse "verify with a member missing" \
	"$RAIDFUSE" verify "$A/a0.img" "$A/a1.img"

# ---- mount: members that do not belong together ----------------------
EXPECT=("different arrays" "b2.img")
refuse "members of different arrays (a0 a1 b2)" \
	"$RAIDFUSE" mount "$A/a0.img" "$A/a1.img" "$B/b2.img" "$MNT"
EXPECT=("different arrays")
refuse "members of different arrays (b0 first), --run" \
	"$RAIDFUSE" mount --run "$B/b0.img" "$A/a1.img" "$A/a2.img" "$MNT"

# ---- mount: damaged superblocks ----------------------------------------
C=$ARR/c
copy_array "$A" "$C"
for f in a0 a1 a2; do mv "$C/$f.img" "$C/c${f#a}.img"; done
old=$(byte_at "$C/c1.img" $((4096 + 100)))
poke "$C/c1.img" $((4096 + 100)) "$(printf '%02x' $((0x$old ^ 0x5a)))"
EXPECT=("checksum" "c1.img")
refuse "superblock byte 100 flipped (checksum)" \
	"$RAIDFUSE" mount "$C/c0.img" "$C/c1.img" "$C/c2.img" "$MNT"
EXPECT=("checksum" "c1.img")
refuse "superblock byte 100 flipped, read-only" \
	"$RAIDFUSE" mount -r "$C/c2.img" "$C/c1.img" "$C/c0.img" "$MNT"

# ---- members of other md metadata versions ------------------------------
# A member holding 1.0 (boot mirrors, forged here from a 1.2 one) or
# 0.90 (old NAS disks) is an md member all the same: create without
# --force must not take it for a blank file, examine says what it is.
M=$ARR/meta
mkdir -p "$M"
python3 - "$A/a0.img" "$M/v10.img" "$M/v090.img" <<'PY' || fail "cannot forge the 1.0 and 0.90 members"
import struct, sys
size = 4 << 20
sb = bytearray(open(sys.argv[1], "rb").read()[4096:8192])
# metadata 1.0: the same superblock at the end ((sectors - 16) & ~7), data
# from sector 0; no bitmap, no bad block log.
off = ((size >> 9) - 16) & ~7
struct.pack_into("<Q", sb, 144, off)        # super_offset
struct.pack_into("<Q", sb, 128, 0)          # data_offset
struct.pack_into("<Q", sb, 136, off - 64)   # data_size
struct.pack_into("<I", sb, 96, 0)           # bitmap_offset
struct.pack_into("<I", sb, 8, 0)            # feature_map
struct.pack_into("<H", sb, 186, 0)          # bblog_size
struct.pack_into("<I", sb, 188, 0)          # bblog_offset
n = 256 + 2 * struct.unpack_from("<I", sb, 220)[0]
struct.pack_into("<I", sb, 216, 0)
total = sum(struct.unpack_from("<%dI" % (n // 4), sb, 0))
struct.pack_into("<I", sb, 216, ((total & 0xffffffff) + (total >> 32)) & 0xffffffff)
with open(sys.argv[2], "wb") as f:
    f.truncate(size)
    f.seek(off * 512)
    f.write(sb)
# metadata 0.90: its magic and major version 0, 64 KiB before the end
# rounded down to 64 KiB.
with open(sys.argv[3], "wb") as f:
    f.truncate(size)
    f.seek(((size >> 9) & ~127) * 512 - 65536)
    f.write(struct.pack("<III", 0xa92b4efc, 0, 90))
PY
mdadm --examine "$M/v10.img" 2>&1 | grep -q "Version : 1.0" ||
	fail "the forged member is not md 1.0 to mdadm: $(mdadm --examine "$M/v10.img" 2>&1)"
EXPECT=("metadata 1.0" "--force" "v10.img")
refuse "create over a member holding md metadata 1.0" \
	"$RAIDFUSE" create --level 1 --raid-devices 2 --size 4M "$M/v10.img" "$M/new.img"
EXPECT=("metadata 0.90" "--force" "v090.img")
refuse "create over a member holding md metadata 0.90" \
	"$RAIDFUSE" create --level 1 --raid-devices 2 --size 4M "$M/new.img" "$M/v090.img"
"$RAIDFUSE" examine "$M/v10.img" >"$WORK/out" 2>&1 && grep -q "Version : 1.0" "$WORK/out" ||
	fail "examine of a member holding md metadata 1.0: $(cat "$WORK/out")"
# Its head only: raidfuse reads 0.90 (md_090.sh), and names this one as
# a 0.90 superblock that is not valid.
EXPECT=("metadata 0.90 superblock at sector 8064 is not valid" "checksum" "v090.img")
refuse "examine of a member holding a damaged md metadata 0.90 superblock" \
	"$RAIDFUSE" examine "$M/v090.img"
# The fstab form with a mount point that does not exist: the mount verb's
# error, not "unknown verb".
EXPECT=("nomnt")
refuse "the fstab form with a missing mount point" \
	"$RAIDFUSE" "$A/a0.img:$A/a1.img:$A/a2.img" "$WORK/nomnt" -o run
grep -qi "unknown verb" "$WORK/out" && fail "the fstab form with a missing mount point: $(cat "$WORK/out")"

D=$ARR/d
copy_array "$A" "$D"
for f in a0 a1 a2; do mv "$D/$f.img" "$D/d${f#a}.img"; done
poke "$D/d2.img" 4096 00000000
EXPECT=("magic" "d2.img")
refuse "superblock magic zeroed" \
	"$RAIDFUSE" mount "$D/d0.img" "$D/d1.img" "$D/d2.img" "$MNT"

EXPECT=("magic" "p0.img")
refuse "a file that is no md member at all" \
	"$RAIDFUSE" mount "$A/a0.img" "$A/a1.img" "$ARR/plain/p0.img" "$MNT"

E=$ARR/e
copy_array "$A" "$E"
for f in a0 a1 a2; do mv "$E/$f.img" "$E/e${f#a}.img"; done
doff=$(mdadm --examine "$E/e1.img" | sed -n 's/^ *Data Offset : \([0-9]*\) sectors.*/\1/p')
dsize=$(mdadm --examine "$E/e1.img" | sed -n 's/^ *Avail Dev Size : \([0-9]*\) sectors.*/\1/p')
[ -n "$doff" ] && [ -n "$dsize" ] || fail "mdadm --examine shows no Data Offset / Avail Dev Size"
truncate -s $(((doff + dsize) * 512 - 65536)) "$E/e1.img"
EXPECT=("truncated" "e1.img")
refuse "member truncated 64 KiB short of its data area" \
	"$RAIDFUSE" mount "$E/e0.img" "$E/e1.img" "$E/e2.img" "$MNT"
EXPECT=("truncated" "e1.img")
refuse "member truncated, --run --force" \
	"$RAIDFUSE" mount --run --force "$E/e0.img" "$E/e1.img" "$E/e2.img" "$MNT"
truncate -s 3000 "$E/e1.img"
EXPECT=("too small" "e1.img")
refuse "member truncated to 3000 bytes" \
	"$RAIDFUSE" mount "$E/e0.img" "$E/e1.img" "$E/e2.img" "$MNT"

# A bitmap_offset past the data area, with a correct checksum: the field is
# named (it was reported as an I/O error).
BO=$ARR/bo
copy_array "$A" "$BO"
for f in a0 a1 a2; do
	mv "$BO/$f.img" "$BO/bo${f#a}.img"
	md_sb_patch "$BO/bo${f#a}.img" bitmap_offset=0x7fffffff
done
EXPECT=("bitmap_offset" "in the data" "corrupt")
refuse "bitmap_offset past the data" \
	"$RAIDFUSE" mount --readonly "$BO/bo0.img" "$BO/bo1.img" "$BO/bo2.img" "$MNT"

# Every member of a mirror part way through a rebuild: present, but none
# can serve, and the refusal says so rather than call them missing.
create_array "$ARR/pr" pr 1 2
for f in pr0 pr1; do md_sb_patch "$ARR/pr/$f.img" feature_or=0x2 recovery_offset=2048; done
EXPECT=("0 of 2 members in sync" "2 of them only part way through a rebuild")
refuse "every member part way through a rebuild" \
	"$RAIDFUSE" mount --run "$ARR/pr/pr0.img" "$ARR/pr/pr1.img" "$MNT"

# A data_offset so large that it wraps to a small byte offset, with a
# correct checksum: the data area must not land on the superblock.
F=$ARR/fo
copy_array "$A" "$F"
for f in a0 a1 a2; do mv "$F/$f.img" "$F/fo${f#a}.img"; done
python3 - "$F/fo1.img" <<'PY' || fail "cannot forge data_offset"
import struct, sys
with open(sys.argv[1], "r+b") as f:
    f.seek(4096)
    sb = bytearray(f.read(4096))
    struct.pack_into("<Q", sb, 128, 1 << 55)          # data_offset, sectors
    struct.pack_into("<I", sb, 216, 0)                # sb_csum
    max_dev = struct.unpack_from("<I", sb, 220)[0]
    size = 256 + max_dev * 2
    csum = sum(struct.unpack_from("<%dI" % (size // 4), sb, 0))
    if size % 4:
        csum += struct.unpack_from("<H", sb, size - 2)[0]
    csum = (csum & 0xffffffff) + (csum >> 32)
    struct.pack_into("<I", sb, 216, csum & 0xffffffff)
    f.seek(4096)
    f.write(sb)
PY
EXPECT=("corrupt" "fo1.img")
refuse "data_offset of 2^55 sectors (wraps in bytes), checksum correct" \
	"$RAIDFUSE" mount "$F/fo0.img" "$F/fo1.img" "$F/fo2.img" "$MNT"

# ---- mount: options libfuse does not take --------------------------------
# Checked before the array starts: a typo must not bump events, nor (with
# --run) leave the absent member behind as stale.
EXPECT=("mount options" "bogus")
refuse "mount -o bogus" \
	"$RAIDFUSE" mount -o bogus "$A/a0.img" "$A/a1.img" "$A/a2.img" "$MNT"
EXPECT=("mount options" "bogus")
refuse "mount --run -o bogus, one member absent" \
	"$RAIDFUSE" mount --run -o bogus "$A/a0.img" "$A/a1.img" "$MNT"
EXPECT=("cache-mib" "not a number")
refuse "mount --cache-mib ''" \
	"$RAIDFUSE" mount --cache-mib '' "$A/a0.img" "$A/a1.img" "$A/a2.img" "$MNT"

# ---- mount: one member named twice -------------------------------------
mkdir -p "$A/sub"
EXPECT=("same member given twice")
refuse "the same path twice" \
	"$RAIDFUSE" mount --run "$A/a0.img" "$A/a0.img" "$A/a1.img" "$MNT"
EXPECT=("same member given twice" "sub/../a1.img")
refuse "the same member via dir/../" \
	"$RAIDFUSE" mount --run "$A/a0.img" "$A/a1.img" "$A/sub/../a1.img" "$MNT"
ln "$A/a2.img" "$ARR/a2-hardlink.img"
EXPECT=("same member given twice" "a2-hardlink.img")
refuse "the same member via a hard link" \
	"$RAIDFUSE" mount --run "$A/a0.img" "$A/a2.img" "$ARR/a2-hardlink.img" "$MNT"
rm "$ARR/a2-hardlink.img"
ln -s a/a1.img "$ARR/a1-symlink.img"
EXPECT=("same member given twice" "a1-symlink.img")
refuse "a member and a symbolic link to it" \
	"$RAIDFUSE" mount --run "$A/a0.img" "$A/a1.img" "$ARR/a1-symlink.img" "$MNT"
ln -s nowhere.img "$ARR/dangling.img"
EXPECT=("dangling.img" "symbolic link that leads nowhere")
refuse "a dangling symbolic link" \
	"$RAIDFUSE" mount "$A/a0.img" "$ARR/dangling.img" "$A/a2.img" "$MNT"
rm "$ARR/dangling.img"
# A symbolic link is followed (as /dev/disk/by-id names must be); the
# member is known by what it leads to.
"$RAIDFUSE" mount "$A/a0.img" "$ARR/a1-symlink.img" "$A/a2.img" "$MNT" 2>"$WORK/out" ||
	fail "a member named through a symbolic link: $(cat "$WORK/out")"
track_mount "$MNT"
grep -qx "$A/a1.img" "$MNT"/.raidfuse/dev1/path ||
	fail "a member named through a symbolic link: dev1/path is $(cat "$MNT"/.raidfuse/dev1/path)"
rf_umount "$MNT"
rm "$ARR/a1-symlink.img"
ok "a member named through a symbolic link mounts, known by the file it leads to"
# A FIFO named as a member once blocked examine, verify and read-only
# mounts in open() until a writer came; each is refused at once.
mkfifo "$ARR/a1-fifo"
EXPECT=("not a regular file or block device" "a1-fifo")
refuse "examine of a FIFO" timeout 10 "$RAIDFUSE" examine "$ARR/a1-fifo"
EXPECT=("not a regular file or block device" "a1-fifo")
refuse "verify with a FIFO" timeout 10 "$RAIDFUSE" verify "$A/a0.img" "$ARR/a1-fifo" "$A/a2.img"
EXPECT=("not a regular file or block device" "a1-fifo")
refuse "a read-only mount with a FIFO" \
	timeout 10 "$RAIDFUSE" mount --readonly "$A/a0.img" "$ARR/a1-fifo" "$A/a2.img" "$MNT"
rm "$ARR/a1-fifo"

# ---- mount: a member and a loop device over it, in two mounts -------------
# The in-use lock of a member file must hold through a loop device over it:
# otherwise two daemons write one member, and each one's clean stop says
# the other's writes are in sync where they are not.
if [ "$(id -u)" = 0 ] && command -v losetup >/dev/null; then
	create_array "$ARR/l" l 1 2
	LOOP=$(losetup -f --show "$ARR/l/l0.img") || fail "losetup l0.img"
	track_loop "$LOOP"
	MNT2=$WORK/mnt2
	mkdir -p "$MNT2"
	rf_mount "$ARR/l/l0.img" "$ARR/l/l1.img" "$MNT2"
	"$RAIDFUSE" mount --run "$LOOP" "$MNT" >"$WORK/out" 2>&1 && {
		"$RAIDFUSE" umount "$MNT"
		fail "a loop device over a mounted member was mounted too"
	}
	grep -q "$LOOP: its backing file is in use" "$WORK/out" ||
		fail "loop over a mounted member: $(cat "$WORK/out")"
	rf_umount "$MNT2"
	ok "a loop device over a member file another mount serves is refused: $(head -n1 "$WORK/out")"
	"$RAIDFUSE" mount --run "$LOOP" "$MNT2" 2>/dev/null || fail "mount the loop device alone"
	track_mount "$MNT2"
	"$RAIDFUSE" mount "$ARR/l/l0.img" "$ARR/l/l1.img" "$MNT" >"$WORK/out" 2>&1 && {
		"$RAIDFUSE" umount "$MNT"
		fail "a member file under a mounted loop device was mounted too"
	}
	grep -q "l0.img is in use by another raidfuse" "$WORK/out" ||
		fail "member under a mounted loop device: $(cat "$WORK/out")"
	rf_umount "$MNT2"
	ok "a member file under a loop device another mount serves is refused: $(head -n1 "$WORK/out")"
	# A read-only device opens read-write on some kernels and fails only
	# at the first write: it is refused before anything is written.
	create_array "$ARR/r" r 1 2
	ROLOOP=$(losetup -f --show -r "$ARR/r/r1.img") || fail "losetup -r r1.img"
	track_loop "$ROLOOP"
	EXPECT=("$ROLOOP" "read-only")
	refuse "a read-only block device in a read-write mount" \
		"$RAIDFUSE" mount "$ARR/r/r0.img" "$ROLOOP" "$MNT"
	EXPECT=("$ROLOOP" "read-only")
	refuse "create over a read-only block device" \
		"$RAIDFUSE" create --force --level 1 --raid-devices 2 --size 4M "$ARR/r/r0.img" "$ROLOOP"
	"$RAIDFUSE" mount --readonly "$ARR/r/r0.img" "$ROLOOP" "$MNT" 2>"$WORK/out" ||
		fail "mount --readonly with a read-only device: $(cat "$WORK/out")"
	grep -q "\[UU\]" "$MNT/.raidfuse/status" || fail "read-only device not in the array: $(cat "$MNT/.raidfuse/status")"
	# What a read-only mount cannot do is refused saying so.
	"$RAIDFUSE" check "$MNT" 2>"$WORK/out" && fail "check on a read-only mount exited 0"
	grep -q "mounted read-only .*raidfuse verify" "$WORK/out" || fail "check on a read-only mount: $(cat "$WORK/out")"
	"$RAIDFUSE" fail "$MNT" "$ARR/r/r0.img" 2>"$WORK/out" && fail "fail on a read-only mount exited 0"
	grep -q "mounted read-only .*members cannot change" "$WORK/out" || fail "fail on a read-only mount: $(cat "$WORK/out")"
	rf_umount "$MNT"
	ok "a read-only device mounts with --readonly; check and fail there say it is read-only"
else
	log "NOT RUN: the loop device cases need root and losetup"
fi

# ---- mount: a member inside the mount point ------------------------------
IN=$ARR/inside
create_array "$IN" f 5 3
EXPECT=("inside the mount point" "f0.img")
refuse "members inside the mount point" \
	"$RAIDFUSE" mount "$IN/f0.img" "$IN/f1.img" "$IN/f2.img" "$IN"
ln -s inside "$ARR/inside-link"
EXPECT=("inside the mount point")
refuse "members inside the mount point, reached through a symlinked folder" \
	"$RAIDFUSE" mount "$ARR/inside-link/f0.img" "$ARR/inside-link/f1.img" \
	"$ARR/inside-link/f2.img" "$IN"
EXPECT=("inside the mount point")
RF_ABS=$RAIDFUSE
[ -f "$RAIDFUSE" ] && RF_ABS=$(readlink -f "$RAIDFUSE")
# shellcheck disable=SC2016
refuse "one member inside the mount point, relative mount point" \
	bash -c 'cd "$1" && "$2" mount f0.img ../inside/f1.img "$3/f2.img" .' _ "$IN" "$RF_ABS" "$IN"
rm "$ARR/inside-link"

# ---- mount: other bad names ----------------------------------------------
EXPECT=("no-such-member.img")
refuse "a member that does not exist" \
	"$RAIDFUSE" mount "$A/a0.img" "$A/a1.img" "$ARR/no-such-member.img" "$MNT"
EXPECT=("not a directory")
refuse "a mount point that is a file" \
	"$RAIDFUSE" mount "$A/a0.img" "$A/a1.img" "$A/a2.img" "$ARR/plain/p1.img"

# ---- create --------------------------------------------------------------
N=$ARR/new # never created by a refused create
P0=$ARR/plain/p0.img P1=$ARR/plain/p1.img
EXPECT=("power of two")
refuse "create --chunk 48K" \
	"$RAIDFUSE" create --level 5 --raid-devices 3 --chunk 48K --size 4M "$N-0" "$N-1" "$P0"
EXPECT=("power of two")
refuse "create --chunk 3 (3 KiB)" \
	"$RAIDFUSE" create --level 0 --raid-devices 2 --chunk 3 --size 4M "$N-0" "$P1"
EXPECT=("outside")
refuse "create --chunk 2K" \
	"$RAIDFUSE" create --level 5 --raid-devices 3 --chunk 2K --size 4M "$N-0" "$N-1" "$P0"
EXPECT=("outside")
refuse "create --chunk 2M" \
	"$RAIDFUSE" create --level 6 --raid-devices 4 --chunk 2M --size 4M "$N-0" "$N-1" "$N-2" "$P0"
EXPECT=("at least" "raid5")
refuse "create raid5 with 2 members" \
	"$RAIDFUSE" create --level 5 --raid-devices 2 --chunk 64K --size 4M "$N-0" "$P0"
EXPECT=("at least" "raid6")
refuse "create raid6 with 3 members" \
	"$RAIDFUSE" create --level 6 --raid-devices 3 --chunk 64K --size 4M "$N-0" "$N-1" "$P1"
EXPECT=("raid-devices" "4")
refuse "create --raid-devices 4 with 3 members" \
	"$RAIDFUSE" create --level 5 --raid-devices 4 --chunk 64K --size 4M "$N-0" "$N-1" "$P0"
EXPECT=("raid-devices")
refuse "create --raid-devices 2 with 3 members" \
	"$RAIDFUSE" create --level 1 --raid-devices 2 --size 4M "$N-0" "$N-1" "$P0"
EXPECT=("bitmap chunk" "power of two")
refuse "create --bitmap-chunk 3M" \
	"$RAIDFUSE" create --level 5 --raid-devices 3 --bitmap-chunk 3M --size 4M "$N-0" "$N-1" "$P0"
EXPECT=("bitmap chunk" "from 4K")
refuse "create --bitmap-chunk 2K" \
	"$RAIDFUSE" create --level 1 --raid-devices 2 --bitmap-chunk 2K --size 4M "$N-0" "$P0"
EXPECT=("bitmap chunk" "2G")
refuse "create --bitmap-chunk 4G (more than md's 32-bit field)" \
	"$RAIDFUSE" create --level 5 --raid-devices 3 --bitmap-chunk 4G --size 4M "$N-0" "$N-1" "$P0"
EXPECT=("--bitmap internal" "raid0")
refuse "create raid0 --bitmap internal" \
	"$RAIDFUSE" create --level 0 --raid-devices 2 --bitmap internal --size 4M "$N-0" "$P1"
EXPECT=("bitmap-chunk" "bitmap none")
refuse "create --bitmap-chunk with --bitmap none" \
	"$RAIDFUSE" create --level 5 --raid-devices 3 --bitmap none --bitmap-chunk 64M --size 4M \
	"$N-0" "$N-1" "$P0"
EXPECT=("bitmap-chunk" "no write-intent bitmap")
refuse "create raid0 --bitmap-chunk 1M" \
	"$RAIDFUSE" create --level 0 --raid-devices 2 --bitmap-chunk 1M --size 4M "$N-0" "$P1"
EXPECT=("unknown" "7")
refuse "create --level 7" \
	"$RAIDFUSE" create --level 7 --raid-devices 3 --size 4M "$N-0" "$N-1" "$P0"
EXPECT=("unknown" "raid4")
refuse "create --level raid4" \
	"$RAIDFUSE" create --level raid4 --raid-devices 3 --size 4M "$N-0" "$N-1" "$P0"
EXPECT=("already holds an md metadata 1.2 superblock" "b1.img" "--force")
refuse "create over an md member without --force" \
	"$RAIDFUSE" create --level 5 --raid-devices 3 --chunk 64K --size 4M "$N-0" "$P0" "$B/b1.img"
EXPECT=("already holds an md" "a0.img")
refuse "create raid1 over two md members without --force" \
	"$RAIDFUSE" create --level 1 --raid-devices 2 "$A/a0.img" "$B/b0.img"
EXPECT=("same member given twice")
refuse "create with a member named twice" \
	"$RAIDFUSE" create --level 5 --raid-devices 3 --chunk 64K --size 4M "$N-0" "$P0" "$ARR/plain/../plain/p0.img"
# Both still to be made: the same file under two spellings.
EXPECT=("same member given twice")
refuse "create with a new member named twice" \
	"$RAIDFUSE" create --level 1 --raid-devices 2 --size 4M "$ARR/plain/new.img" \
	"$ARR/plain/../plain/new.img"
[ -e "$ARR/plain/new.img" ] && fail "a refused create left $ARR/plain/new.img behind"
ln -s plain/nowhere.img "$ARR/dangling.img"
EXPECT=("dangling.img" "leads nowhere")
refuse "create through a dangling symbolic link" \
	"$RAIDFUSE" create --level 1 --raid-devices 2 --size 4M "$N-0" "$ARR/dangling.img"
[ -e "$ARR/plain/nowhere.img" ] && fail "a create through a dangling symbolic link made its target"
rm "$ARR/dangling.img"
# Through a symbolic link to a file that exists: the file becomes the member.
head -c $((4 * 1048576)) /dev/zero >"$WORK/linked.img"
ln -s linked.img "$WORK/linked-symlink.img"
"$RAIDFUSE" create --level 1 --raid-devices 2 --size 4M "$WORK/new-linked.img" "$WORK/linked-symlink.img" \
	>"$WORK/out" 2>&1 || fail "create through a symbolic link: $(cat "$WORK/out")"
[ -L "$WORK/linked-symlink.img" ] || fail "create replaced the symbolic link"
mdadm --examine "$WORK/linked.img" >/dev/null 2>&1 || fail "create through a symbolic link: no md superblock in its target"
ok "create through a symbolic link writes the file it leads to"
head -c 1048576 /dev/urandom >"$ARR/plain/small.img"
EXPECT=("small.img" "smaller than --size")
refuse "create with a member smaller than --size" \
	"$RAIDFUSE" create --level 1 --raid-devices 2 --size 4M "$N-0" "$ARR/plain/small.img"
EXPECT=("small.img" "too small")
refuse "create with a member too small for the metadata" \
	"$RAIDFUSE" create --level 1 --raid-devices 2 "$P0" "$ARR/plain/small.img"

# Control: with --force the same create over md members succeeds.
cp "$B/b1.img" "$WORK/b1-copy.img"
"$RAIDFUSE" create --force --level 1 --raid-devices 2 "$WORK/b1-copy.img" "$WORK/new-force.img" \
	--size 4M >"$WORK/out" 2>&1 ||
	fail "control: create --force over an md member failed: $(cat "$WORK/out")"
ok "control: create --force over an md member succeeds"

# -o text longer than the daemon passes to libfuse: refused, not cut short
# (a cut would drop or change the last option).
EXPECT=("too long")
refuse "mount -o longer than libfuse's option buffer" \
	"$RAIDFUSE" mount -o "noatime,$(head -c 600 /dev/zero | tr '\0' x)" \
	"$A/a0.img" "$A/a1.img" "$A/a2.img" "$MNT"

# ---- volume.img cannot change size -----------------------------------------
rf_mount "$A/a2.img" "$A/a0.img" "$A/a1.img" "$MNT"
# The tree is fixed: every namespace change is EPERM (rename, symlink and
# link answered ENOSYS).
for op in "mv $MNT/volume.img $MNT/renamed.img" "ln -s volume.img $MNT/sym" \
	"ln $MNT/volume.img $MNT/hard" "mkdir $MNT/dir" "rm -f $MNT/volume.img" \
	"touch $MNT/new"; do
	$op 2>"$WORK/out" && fail "'$op' succeeded on the mount"
	grep -qi "not permitted" "$WORK/out" || fail "'$op': not EPERM: $(cat "$WORK/out")"
done
[ -f "$MNT/volume.img" ] || fail "volume.img is gone"
ok "rename, symlink, link, mkdir, unlink and create: EPERM"
size=$(stat -c %s "$MNT/volume.img")
truncate -s 1M "$MNT/volume.img" 2>"$WORK/out" &&
	fail "truncate -s 1M of volume.img succeeded"
grep -qi "not permitted" "$WORK/out" || fail "truncate -s 1M: not EPERM: $(cat "$WORK/out")"
[ "$(stat -c %s "$MNT/volume.img")" = "$size" ] || fail "truncate -s 1M changed the size"
ok "truncate -s 1M of volume.img: $(cat "$WORK/out")"
truncate -s $((size + 1048576)) "$MNT/volume.img" 2>"$WORK/out" &&
	fail "growing volume.img by 1 MiB succeeded"
grep -qi "not permitted" "$WORK/out" || fail "growing volume.img: not EPERM: $(cat "$WORK/out")"
ok "truncate to size + 1 MiB: $(cat "$WORK/out")"
truncate -s "$size" "$MNT/volume.img" 2>"$WORK/out" ||
	fail "truncate of volume.img to its own size $size failed: $(cat "$WORK/out")"
[ "$(stat -c %s "$MNT/volume.img")" = "$size" ] || fail "truncate to the same size changed it"
ok "truncate to its current size ($size) succeeds"
dd if=/dev/zero of="$MNT/volume.img" bs=4096 seek=$((size / 4096)) count=1 conv=notrunc \
	status=none 2>"$WORK/out" && fail "a write past the end of volume.img succeeded"
[ "$(stat -c %s "$MNT/volume.img")" = "$size" ] || fail "a write past the end grew volume.img"
ok "a write past the end fails: $(head -n1 "$WORK/out")"
# Writes move volume.img's mtime on (backup tools look at it); touch -d
# still sets it back.
touch -d '2001-02-03 04:05:06' "$MNT/volume.img" || fail "touch -d volume.img"
[ "$(stat -c %Y "$MNT/volume.img")" = "$(date -d '2001-02-03 04:05:06' +%s)" ] ||
	fail "touch -d did not set volume.img's mtime"
dd if=/dev/urandom of="$MNT/volume.img" bs=4096 count=1 conv=notrunc,fsync status=none ||
	fail "a write to volume.img failed"
mtime=$(stat -c %Y "$MNT/volume.img")
[ $((mtime + 60)) -ge "$(date +%s)" ] || fail "a write left volume.img's mtime at $mtime"
ok "a write moves volume.img's mtime to now; touch -d sets it"
rf_umount "$MNT"
for f in "$A"/a*.img; do
	[ "$(mdadm --examine "$f" | sed -n 's/^ *State : //p')" = clean ] ||
		fail "mdadm --examine $f: not clean after the umount"
done
ok "array a is clean after the size-change attempts"

# ---- control verbs on a mounted array ---------------------------------------
# Refused by the daemon: nothing may change under $ARR, and the daemon must
# still answer afterwards.
refuse_mounted() {
	local label=$1 before after rc s
	shift
	before=$(state_of_members)
	timeout 60 "$@" >"$WORK/out" 2>&1 && rc=0 || rc=$?
	after=$(state_of_members)
	[ $rc != 0 ] || fail "$label: '$*' exited 0 but must be refused: $(cat "$WORK/out")"
	[ $rc != 124 ] || fail "$label: '$*' hung"
	for s in "${EXPECT[@]}"; do
		grep -qiF -- "$s" "$WORK/out" ||
			fail "$label: the message does not mention '$s': $(cat "$WORK/out")"
	done
	[ "$before" = "$after" ] || fail "$label: a refused '$1' changed files:
$(diff <(echo "$before") <(echo "$after"))"
	timeout 10 cat "$MNT/.raidfuse/log" >/dev/null || fail "$label: the daemon no longer answers"
	ok "$label: exit $rc, nothing changed: $(head -n1 "$WORK/out")"
	EXPECT=()
}
rf_mount "$A/a0.img" "$A/a1.img" "$A/a2.img" "$MNT"
"$RAIDFUSE" fail "$MNT" "$A/a2.img" >/dev/null && "$RAIDFUSE" remove "$MNT" "$A/a2.img" >/dev/null ||
	fail "fail and remove a2 for the add refusals"
EXPECT=("inside the mount point")
refuse_mounted "add volume.img itself (the daemon would wait on itself)" \
	"$RAIDFUSE" add "$MNT" "$MNT/volume.img"
# Through a loop device no path says where it lies: its backing file is
# on the array's own FUSE device. Added, its first sync hung the daemon.
if [ "$(id -u)" = 0 ] && command -v losetup >/dev/null; then
	SELFLOOP=$(losetup -f --show "$MNT/volume.img") || fail "losetup volume.img"
	track_loop "$SELFLOOP"
	EXPECT=("$SELFLOOP" "on this array's own volume")
	refuse_mounted "add a loop device over volume.img" "$RAIDFUSE" add "$MNT" "$SELFLOOP"
	loop_detach "$SELFLOOP"
else
	log "NOT RUN: a loop device over volume.img needs root and losetup"
fi
EXPECT=("another array" "b0.img")
refuse_mounted "add a member of another array" \
	"$RAIDFUSE" add "$MNT" "$B/b0.img"
EXPECT=("metadata 1.0" "v10.img")
refuse_mounted "add a member holding md metadata 1.0" \
	"$RAIDFUSE" add "$MNT" "$M/v10.img"
EXPECT=("raidfuse mount already")
refuse_mounted "a second array mounted over the first" \
	"$RAIDFUSE" mount "$B/b0.img" "$B/b1.img" "$B/b2.img" "$MNT"
grep -q "^name *: *a\b\|\"name\":\"[^\"]*a\"" <("$RAIDFUSE" status --json "$MNT") ||
	fail "after the refused second mount, $MNT no longer shows array a: $("$RAIDFUSE" status --json "$MNT")"
rf_umount "$MNT"

# umount: only raidfuse mounts (root's fusermount3 unmounts anything).
if [ "$(id -u)" = 0 ]; then
	mkdir -p "$WORK/tmpfs"
	mount -t tmpfs none "$WORK/tmpfs" || fail "cannot mount a tmpfs"
	"$RAIDFUSE" umount "$WORK/tmpfs" >"$WORK/out" 2>&1 && {
		umount "$WORK/tmpfs" 2>/dev/null
		fail "raidfuse umount unmounted a tmpfs"
	}
	mountpoint -q "$WORK/tmpfs" || fail "raidfuse umount refused but the tmpfs is gone"
	grep -qi "not a raidfuse mount" "$WORK/out" || fail "umount of a tmpfs: $(cat "$WORK/out")"
	umount "$WORK/tmpfs"
	ok "umount of a tmpfs: $(cat "$WORK/out")"
else
	log "NOT RUN (needs root to mount a tmpfs): umount of a non-raidfuse mount"
fi

# ---- accepted spellings and names that need quoting ---------------------------
"$RAIDFUSE" create --level 5 --raid-devices 3 --chunk 64KiB --bitmap-chunk 1MiB --size 4M \
	--name 'q"\' "$WORK/q0.img" "$WORK/q1.img" "$WORK/q2.img" >"$WORK/out" 2>&1 ||
	fail "create --chunk 64KiB --bitmap-chunk 1MiB: $(cat "$WORK/out")"
mdadm --examine "$WORK/q0.img" | grep -q "Chunk Size : 64K" || fail "--chunk 64KiB is not 64K"
rf_mount "$WORK/q0.img" "$WORK/q1.img" "$WORK/q2.img" "$MNT"
"$RAIDFUSE" status --json "$MNT" | python3 -c '
import json, sys
d = json.load(sys.stdin)
sys.exit(0 if d["name"].endswith("q\"\\") else 1)' || fail "status --json with a quote in the name: $("$RAIDFUSE" status --json "$MNT")"
rf_umount "$MNT"
ok "--chunk 64KiB and --bitmap-chunk 1MiB accepted; status --json escapes the name"
# A bare --size is KiB, as mdadm's numbers are; -o given twice adds up.
"$RAIDFUSE" create --level 5 --raid-devices 3 --size 4096 \
	"$WORK/k0.img" "$WORK/k1.img" "$WORK/k2.img" >"$WORK/out" 2>&1 ||
	fail "create --size 4096: $(cat "$WORK/out")"
[ "$(stat -c %s "$WORK/k0.img")" = $((4096 * 1024)) ] ||
	fail "create --size 4096 made members of $(stat -c %s "$WORK/k0.img") bytes, not 4096 KiB"
"$RAIDFUSE" mount -o noatime -o noexec "$WORK/k0.img" "$WORK/k1.img" "$WORK/k2.img" "$MNT" ||
	fail "mount -o noatime -o noexec"
opts=$(grep -F " $MNT " /proc/mounts | awk '{print $4}')
"$RAIDFUSE" umount "$MNT" || fail "umount k"
[[ ,$opts, == *,noatime,* && ,$opts, == *,noexec,* ]] ||
	fail "mount -o noatime -o noexec mounted with '$opts'"
ok "create --size 4096 makes 4 MiB members; mount -o noatime -o noexec mounts with both"

log "PASS: $NCHECKS checks in $((SECONDS - T0)) s"
exit 0
