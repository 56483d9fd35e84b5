#!/bin/bash
# demo.sh - the quick start's main job: install the dependencies, build,
# and put a default array to work:
#   a 4-member RAID5 (64 KiB chunk) of member files in ./raidfuse-demo/,
#   mounted by raidfuse at ./raidfuse-demo/mnt (volume.img inside),
#   ext4 on volume.img, mounted as a directory at ./raidfuse-demo/files,
#   some files copied in; then the array's status, where things are, and
#   how to stop.
# Run again, it reuses the members (and their data) already there.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
demo=${RAIDFUSE_DEMO_DIR:-$PWD/raidfuse-demo}
member_size=${RAIDFUSE_DEMO_MEMBER_SIZE:-256M}

bash "$top/contrib/deps.sh"
bash "$top/contrib/build.sh" "$top/build"
rf="$top/build/raidfuse"

mkdir -p "$demo/mnt" "$demo/files"
members=("$demo"/member0.img "$demo"/member1.img "$demo"/member2.img "$demo"/member3.img)

# Leave nothing of an earlier run mounted.
mountpoint -q "$demo/files" && umount "$demo/files" 2>/dev/null || fusermount3 -u "$demo/files" 2>/dev/null || true
mountpoint -q "$demo/mnt" && "$rf" umount "$demo/mnt" || true

if [ ! -e "${members[0]}" ]; then
	echo "== creating a 4-member RAID5 (64 KiB chunk), members of $member_size"
	"$rf" create --level 5 --raid-devices 4 --chunk 64K --name demo --size "$member_size" "${members[@]}"
	fresh=1
else
	echo "== reusing the members in $demo"
	fresh=0
fi
"$rf" mount "${members[@]}" "$demo/mnt"

if [ $fresh = 1 ] || ! blkid -p "$demo/mnt/volume.img" >/dev/null 2>&1; then
	echo "== mkfs.ext4 on volume.img"
	mkfs.ext4 -q -F -L raidfuse-demo "$demo/mnt/volume.img"
fi
if [ "$(id -u)" = 0 ]; then
	mount -o loop "$demo/mnt/volume.img" "$demo/files"
	stop_files="umount $(printf %q "$demo/files")"
else
	fuse2fs "$demo/mnt/volume.img" "$demo/files" -o fakeroot
	stop_files="fusermount3 -u $(printf %q "$demo/files")"
fi
echo "== copying some files in"
mkdir -p "$demo/files/samples"
cp -a /usr/share/doc/. "$demo/files/samples/" 2>/dev/null || true
sync -f "$demo/files"
du -sh "$demo/files/samples"

echo
echo "== array status ($demo/mnt/.raidfuse/status)"
"$rf" status "$demo/mnt"
echo
echo "Your RAID5 volume is mounted as a directory at: $demo/files"
echo "The raw volume is:                               $demo/mnt/volume.img"
echo "To stop:  $stop_files && $(printf '%q umount %q' "$rf" "$demo/mnt")"
