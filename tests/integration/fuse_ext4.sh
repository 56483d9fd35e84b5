#!/bin/bash
# fuse_ext4.sh - an ext4 file system on a mounted raidfuse volume survives
# unmount and reassembly byte for byte.
#
# For RAID5 (4 members), RAID6 (5) and RAID10 (4), 64K chunks, 160M members:
# mount the array, check volume.img has the size mdadm --examine gives,
# mkfs.ext4 on MOUNT/volume.img, then
#  (a) loop-mount it as root, copy in a tree (~2000 files, ~67 MB: system
#      headers, perl and python modules, plus random files of sizes around
#      chunk and stripe boundaries), record sha256s, unmount, raidfuse
#      umount (members must then read State clean with equal Events),
#      raidfuse mount again with the members in another order, e2fsck -fn
#      must be clean, loop-mount read-only and verify every checksum and the
#      tree's shape (names, types, sizes, link targets);
#  (b) RAID5 and RAID6 also through fuse2fs (user-space ext4 on top of the
#      user-space RAID; a smaller tree, ~800 files / 46 MB, since fuse2fs
#      writes volume.img a block at a time): write it through fuse2fs
#      (run with -f in the background, so unmounting can wait for it to
#      exit and its writes have reached volume.img), unmount, reassemble
#      in another order, e2fsck -fn, verify through fuse2fs read-only and
#      through a read-only loop mount.

. "$(dirname "$0")/lib.sh"

require_root
require_fuse
require_cmd mkfs.ext4 e2fsck losetup sha256sum mdadm
[ -x "$RAIDFUSE" ] || fail "no raidfuse binary at $RAIDFUSE"

START=$SECONDS

# --- the trees copied onto the file systems -------------------------------------
# Names, types, sizes and link targets (not directory sizes: they differ
# between file systems).
tree_shape() { (cd "$1" && find . \( -type d -printf '%y %p\n' \) -o -printf '%y %p %s %l\n' | sort); }

# build_tree NAME SRCDIR...: $WORK/NAME holds copies of the SRCDIRs that
# exist plus random files around chunk (64K) and stripe (3, 4 x 64K)
# boundaries; $WORK/NAME.sums and $WORK/NAME.shape describe it.
build_tree() {
	local name=$1 d sz
	shift
	local t=$WORK/$name
	mkdir -p "$t/rand" || fail "cannot make $t"
	for d in "$@"; do
		[ -d "$d" ] && cp -a "$d" "$t/" 2>/dev/null
	done
	for sz in 0 1 511 4095 4097 65535 65536 65537 196607 196609 262145 1048575 7340155 31457281; do
		head -c "$sz" /dev/urandom >"$t/rand/f$sz" || fail "cannot write random files"
	done
	ln -s rand/f65537 "$t/link"
	(cd "$t" && find . -type f -print0 | sort -z | xargs -0 sha256sum) >"$t.sums" ||
		fail "cannot checksum $t"
	tree_shape "$t" >"$t.shape"
	local nfiles
	nfiles=$(wc -l <"$t.sums")
	[ "$nfiles" -ge 20 ] || fail "tree $name has only $nfiles files"
	log "tree $name: $nfiles files, $(du -sm "$t" | cut -f1) MB"
}
# The kernel ext4 gets a bigger tree than fuse2fs, which writes volume.img
# a block at a time and so is much slower.
build_tree tree /usr/include/linux /usr/share/perl /usr/lib/python3.11/email /usr/share/doc/bash
build_tree small /usr/include/linux /usr/share/doc/bash

# --- local helpers -------------------------------------------------------------

# verify_tree DIR NAME WHAT: DIR/NAME must hold the tree NAME, byte for byte.
verify_tree() {
	(cd "$1/$2" && sha256sum --quiet -c "$WORK/$2.sums") >"$WORK/verify.out" 2>&1 ||
		fail "$3: checksums differ: $(head -n 5 "$WORK/verify.out")"
	tree_shape "$1/$2" | diff "$WORK/$2.shape" - >"$WORK/shape.diff" ||
		fail "$3: tree shape differs: $(head -n 10 "$WORK/shape.diff")"
}

# The loop device of a loop mount goes away (autoclear) on umount; wait for
# it so the FUSE file is closed before raidfuse umount.
loop_umount() {
	local dir=$1 img=$2 i
	umount "$dir" || fail "umount $dir failed"
	for ((i = 0; i < 50; i++)); do
		[ -z "$(losetup -j "$img" 2>/dev/null)" ] && return 0
		sleep 0.1
	done
	fail "loop device for $img still attached after umount: $(losetup -j "$img")"
}

# check_clean WHAT MEMBER...: after raidfuse umount every member reads clean
# with the same event count.
check_clean() {
	local what=$1 m ev="" e
	shift
	for m in "$@"; do
		mdadm --examine "$m" >"$WORK/ex" 2>&1 || fail "$what: mdadm --examine $m failed: $(cat "$WORK/ex")"
		grep -Eq '^ *State : clean$' "$WORK/ex" || fail "$what: $m not clean after umount: $(grep 'State :' "$WORK/ex")"
		grep -Eq '^ *Checksum : [0-9a-f]+ - correct$' "$WORK/ex" || fail "$what: $m superblock checksum wrong"
		e=$(sed -n 's/^ *Events : //p' "$WORK/ex")
		if [ -z "$ev" ]; then ev=$e; else
			[ "$e" = "$ev" ] || fail "$what: $m has Events $e, member 1 has $ev"
		fi
	done
}

# fsck_clean WHAT IMG: e2fsck -fn must find nothing.
fsck_clean() {
	e2fsck -fn "$2" >"$WORK/fsck.out" 2>&1 || fail "$1: e2fsck -fn exited $?: $(tail -n 20 "$WORK/fsck.out")"
}

# make_array TAG LEVEL N: create N 160M members in $WORK/TAG, mount them at
# $WORK/TAG/mnt, check the volume size and put ext4 on it. Sets MEMBERS, MNT.
make_array() {
	local tag=$1 level=$2 n=$3 i want
	local d=$WORK/$tag
	mkdir -p "$d"
	MEMBERS=()
	for ((i = 0; i < n; i++)); do MEMBERS+=("$d/m$i"); done
	MNT=$d/mnt
	"$RAIDFUSE" create --level "$level" --raid-devices "$n" --chunk 64K --size 160M "${MEMBERS[@]}" \
		>"$d/create.out" 2>&1 || fail "$tag: raidfuse create failed: $(cat "$d/create.out")"
	rf_mount "${MEMBERS[@]}" "$MNT"
	want=$(mdadm --examine "${MEMBERS[0]}" | sed -n 's/^ *Array Size : \([0-9]*\) KiB.*/\1/p')
	[ -n "$want" ] || fail "$tag: mdadm shows no Array Size"
	[ "$(stat -c %s "$MNT/volume.img")" = $((want * 1024)) ] ||
		fail "$tag: volume.img is $(stat -c %s "$MNT/volume.img") bytes, mdadm says $((want * 1024))"
	mkfs.ext4 -F -q "$MNT/volume.img" >"$d/mkfs.out" 2>&1 || fail "$tag: mkfs.ext4 failed: $(cat "$d/mkfs.out")"
}

# remount TAG MEMBER...: raidfuse umount, check the members, mount them again
# in the order given, and e2fsck the volume.
remount() {
	local tag=$1
	shift
	rf_umount "$MNT"
	mountpoint -q "$MNT" && fail "$tag: $MNT still mounted after raidfuse umount"
	check_clean "$tag" "$@"
	rf_mount "$@" "$MNT"
	fsck_clean "$tag" "$MNT/volume.img"
}

# --- (a) kernel ext4 on a loop device ------------------------------------------
loop_case() {
	local tag=$1 level=$2 n=$3
	local t0=$SECONDS
	make_array "$tag" "$level" "$n"
	local fs=$WORK/$tag/fs img=$MNT/volume.img
	mkdir -p "$fs"
	track_mount "$fs"
	mount -o loop "$img" "$fs" || fail "$tag: loop mount of $img failed"
	cp -a "$WORK/tree" "$fs/" || fail "$tag: copying the tree in failed"
	verify_tree "$fs" tree "$tag (before unmount, page cache)"
	loop_umount "$fs" "$img"

	# Reassemble: reversed, then rotated by one.
	local rev=() i
	for ((i = n - 1; i >= 0; i--)); do rev+=("${MEMBERS[i]}"); done
	remount "$tag" "${rev[@]}"
	mount -o loop,ro "$img" "$fs" || fail "$tag: read-only loop mount after reassembly failed"
	verify_tree "$fs" tree "$tag (after reassembly)"
	loop_umount "$fs" "$img"
	remount "$tag" "${MEMBERS[@]:1}" "${MEMBERS[0]}"
	rf_umount "$MNT"
	check_clean "$tag" "${MEMBERS[@]}"
	log "$tag: loop-mounted ext4 ok ($((SECONDS - t0)) s)"
}

# --- (b) fuse2fs -----------------------------------------------------------------
# fuse2fs_mount IMG DIR [OPTS]: fuse2fs in the foreground in the background;
# sets F2PID. Unmounting waits for it, so its writes reach volume.img first.
fuse2fs_mount() {
	local img=$1 dir=$2 opts=${3:-fakeroot} i
	track_mount "$dir"
	fuse2fs "$img" "$dir" -o "$opts" -f >"$WORK/fuse2fs.log" 2>&1 &
	F2PID=$!
	for ((i = 0; i < 100; i++)); do
		mountpoint -q "$dir" && return 0
		kill -0 "$F2PID" 2>/dev/null || fail "fuse2fs exited before mounting: $(cat "$WORK/fuse2fs.log")"
		sleep 0.1
	done
	fail "fuse2fs did not mount $dir within 10 s"
}
fuse2fs_umount() {
	local rc=0
	fusermount3 -u "$1" || fail "fusermount3 -u $1 failed"
	wait "$F2PID" || rc=$?
	[ "$rc" = 0 ] || fail "fuse2fs exited $rc: $(cat "$WORK/fuse2fs.log")"
}

# fuse2fs_case TAG LEVEL N [daemon]: with daemon, fuse2fs runs as the
# README shows (detached), and the README's `umount DIR && raidfuse umount
# MNT` must work: fuse2fs still holds volume.img for a moment after its
# umount returns, and raidfuse umount waits for it rather than fail busy.
fuse2fs_case() {
	local tag=$1 level=$2 n=$3 how=${4:-}
	local t0=$SECONDS
	make_array "$tag" "$level" "$n"
	local fs=$WORK/$tag/fs img=$MNT/volume.img
	mkdir -p "$fs"
	if [ "$how" = daemon ]; then
		track_mount "$fs"
		fuse2fs "$img" "$fs" -o fakeroot >"$WORK/fuse2fs.log" 2>&1 ||
			fail "$tag: fuse2fs: $(cat "$WORK/fuse2fs.log")"
	else
		fuse2fs_mount "$img" "$fs"
	fi
	cp -a "$WORK/small" "$fs/" || fail "$tag: copying the tree in through fuse2fs failed"
	verify_tree "$fs" small "$tag (through fuse2fs, before unmount)"
	if [ "$how" = daemon ]; then
		umount "$fs" && "$RAIDFUSE" umount "$MNT" 2>"$WORK/umount.err" ||
			fail "$tag: umount of fuse2fs, then raidfuse umount: $(cat "$WORK/umount.err")"
		rf_mount "${MEMBERS[@]}" "$MNT"
	else
		fuse2fs_umount "$fs"
	fi

	local rev=() i
	for ((i = n - 1; i >= 0; i--)); do rev+=("${MEMBERS[i]}"); done
	remount "$tag" "${rev[@]}"
	fuse2fs_mount "$img" "$fs" ro,fakeroot
	verify_tree "$fs" small "$tag (fuse2fs read-only, after reassembly)"
	fuse2fs_umount "$fs"
	mount -o loop,ro "$img" "$fs" || fail "$tag: read-only loop mount failed"
	verify_tree "$fs" small "$tag (written by fuse2fs, read by the kernel)"
	loop_umount "$fs" "$img"
	rf_umount "$MNT"
	check_clean "$tag" "${MEMBERS[@]}"
	log "$tag: fuse2fs ext4 ok ($((SECONDS - t0)) s)"
}

loop_case raid5-loop 5 4
loop_case raid6-loop 6 5
loop_case raid10-loop 10 4
if command -v fuse2fs >/dev/null; then
	fuse2fs_case raid5-fuse2fs 5 4
	fuse2fs_case raid6-fuse2fs 6 5 daemon
else
	log "fuse2fs is not installed (Debian package fuse2fs): part (b) not run"
fi

log "PASS ($((SECONDS - START)) s)"
exit 0
