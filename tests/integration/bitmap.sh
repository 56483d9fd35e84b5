#!/bin/bash
# bitmap.sh - the write-intent bitmap: md's format (mdadm -X reads it), bits
# set before writes reach the members and cleared when idle and at a clean
# stop, and after a SIGKILL only the marked regions are resynced.
. "$(dirname "$0")/lib.sh"
require_fuse
require_root
require_cmd mdadm losetup

cd "$WORK"

# mdadm's default bitmap chunk first (64 MiB: 4 bits for 199 MiB members).
"$RAIDFUSE" create --level 5 --raid-devices 4 --chunk 64K --size 200M d0 d1 d2 d3 >/dev/null ||
	fail "create with the default bitmap chunk"
chunk=$(bitmap_field d0 Chunksize)
[ "$chunk" = "64 MB" ] || fail "default bitmap chunk is '$chunk', expected mdadm's 64 MB"
bitmap_field d0 Bitmap | grep -q "^4 bits (chunks)" ||
	fail "default bitmap: $(bitmap_field d0 Bitmap), expected 4 bits"
rm -f d0 d1 d2 d3
log "ok: the default bitmap chunk is mdadm's 64 MB"

# The rest with 1 MiB regions, to see single regions set and cleared.
"$RAIDFUSE" create --level 5 --raid-devices 4 --chunk 64K --size 200M --bitmap-chunk 1M \
	m0 m1 m2 m3 >/dev/null || fail "create --bitmap-chunk 1M"
mdadm --examine m0 | grep -q "Internal Bitmap : 8 sectors from superblock" ||
	fail "mdadm --examine does not show the internal bitmap"
[ "$(bitmap_field m0 Magic)" = 6d746962 ] || fail "mdadm -X: no bitmap magic"
[ "$(bitmap_field m2 Version)" = 4 ] || fail "mdadm -X: bitmap version is not 4"
chunk=$(bitmap_field m0 Chunksize)
[ "$chunk" = "1 MB" ] || fail "bitmap chunk is '$chunk', expected 1 MB for 199 MiB members"
[ "$(dirty_bits m0)" = 0 ] || fail "a new array has dirty bits"
log "ok: create writes an md bitmap (mdadm -X: version 4, chunk $chunk, 0 dirty)"

rf_mount --flush-age-ms 100 m0 m1 m2 m3 mnt
# 4 MiB at volume offset 96 MiB: member offsets 32..33.4 MiB, two 1 MiB regions.
dd if=/dev/urandom of=data bs=1M count=4 status=none
dd if=data of=mnt/volume.img bs=1M seek=96 conv=notrunc,fsync status=none || fail "write"
n=$(dirty_bits m1)
[ "$n" -ge 1 ] && [ "$n" -le 3 ] || fail "after a 4 MiB write, $n bits are dirty (expected 1-3)"
log "ok: bits set while writing ($n dirty)"
line=$("$RAIDFUSE" status mnt | grep "^ *bitmap: ")
[[ "$line" =~ bitmap:\ ([0-9]+)/199\ regions\ dirty,\ 1024KB\ chunk ]] && [ "${BASH_REMATCH[1]}" -ge 1 ] ||
	fail "status does not show the dirty bitmap regions: '$line'"
"$RAIDFUSE" status --json mnt | python3 -c 'import json,sys
b=json.load(sys.stdin)["bitmap"]
assert b["chunk_bytes"] == 1048576 and b["regions"] == 199 and b["dirty_regions"] >= 1, b' ||
	fail "status.json does not show the bitmap"
log "ok: status shows the bitmap: $line"
for _ in $(seq 1 100); do
	[ "$(dirty_bits m3)" = 0 ] && break
	sleep 0.2
done
[ "$(dirty_bits m3)" = 0 ] || fail "bits not cleared after the region went idle"
log "ok: bits cleared once the regions were idle"

# Dirty again, then kill the daemon: the next mount resyncs only those regions.
dd if=/dev/urandom of=data2 bs=1M count=2 status=none
dd if=data2 of=mnt/volume.img bs=1M seek=300 conv=notrunc,fsync status=none || fail "write 2"
n=$(dirty_bits m0)
[ "$n" -ge 1 ] || fail "no dirty bits before the kill"
kill -9 "$(cat mnt/.raidfuse/pid)"
sleep 0.3
fusermount3 -u -z mnt
mdadm --examine m0 | grep -q "State : active" || fail "killed array is not marked active (dirty)"
"$RAIDFUSE" mount m0 m1 m2 m3 mnt 2>mount.err || { cat mount.err; fail "remount after kill"; }
grep -q "resyncing the $n of 199 regions the write-intent bitmap marks" mount.err ||
	{ cat mount.err; fail "remount did not resync exactly the $n marked regions"; }
# The resync ran before the mount returned; wait reports it.
"$RAIDFUSE" wait mnt >wait.out 2>&1 || fail "wait after the resync at mount: $(cat wait.out)"
grep -qx "done: mismatch_cnt 0" wait.out || fail "wait after the resync at mount: $(cat wait.out)"
log "ok: after SIGKILL the remount resynced only the $n marked regions; wait reports it done"
cmp <(dd if=mnt/volume.img bs=1M skip=300 count=2 status=none) data2 || fail "data lost"
cmp <(dd if=mnt/volume.img bs=1M skip=96 count=4 status=none) data || fail "older data lost"
rf_umount mnt
[ "$(dirty_bits m2)" = 0 ] || fail "bits left dirty after a clean stop"
events=$(mdadm --examine m0 | sed -n 's/^ *Events : //p')
[ "$(bitmap_field m0 Events)" = "$events" ] ||
	fail "bitmap events $(bitmap_field m0 Events) differ from the superblock's $events"
"$RAIDFUSE" verify m0 m1 m2 m3 | grep -q "mismatch_cnt: 0" || fail "parity mismatches after resync"
log "ok: clean stop clears every bit, bitmap events = superblock events ($events), parity clean"

# RAID10: md keeps its bitmap by volume offset (the copies of a region sit
# at different member offsets), so the bits cover the array's size, and a
# resync after a kill makes every copy of the marked volume regions equal.
# The copy that is not read first is damaged behind the daemon's back while
# it is down: only a resync of the right member ranges mends it.
damage_other_copies() { # BYTES-FILE MEMBER...: overwrite all but the first copy
	python3 - "$@" <<'PY'
import os, sys
needle = open(sys.argv[1], "rb").read(4096)
hits = []
for role, path in enumerate(sys.argv[2:]):
    data = open(path, "rb").read()
    at = data.find(needle)
    while at >= 0:
        hits.append((at, role, path))
        at = data.find(needle, at + 1)
hits.sort()
if len(hits) < 2:
    sys.exit("found %d copies of the written data" % len(hits))
for at, role, path in hits[1:]:
    with open(path, "r+b") as f:
        f.seek(at)
        f.write(os.urandom(4096))
print(len(hits) - 1)
PY
}
for layout in n2 f2; do
	r=r10$layout
	"$RAIDFUSE" create --level 10 --layout $layout --raid-devices 4 --chunk 64K --size 100M \
		--bitmap-chunk 1M $r-0 $r-1 $r-2 $r-3 >/dev/null || fail "raid10 $layout: create"
	kib=$(mdadm --examine $r-0 | sed -n 's/^ *Array Size : \([0-9]*\) KiB.*/\1/p')
	sync=$(bitmap_field $r-2 "Sync Size" | cut -d' ' -f1)
	[ -n "$kib" ] && [ "$sync" = "$kib" ] ||
		fail "raid10 $layout: bitmap sync size '$sync' KiB, array size '$kib' KiB (md: the array's)"
	rf_mount --flush-age-ms 100 $r-0 $r-1 $r-2 $r-3 mnt
	dd if=/dev/urandom of=data10 bs=1M count=1 status=none
	dd if=data10 of=mnt/volume.img bs=1M seek=150 conv=notrunc,fsync status=none ||
		fail "raid10 $layout: write"
	n=$(dirty_bits $r-1)
	[ "$n" -ge 1 ] && [ "$n" -le 2 ] || fail "raid10 $layout: $n dirty bits after a 1 MiB write"
	kill -9 "$(cat mnt/.raidfuse/pid)"
	sleep 0.3
	fusermount3 -u -z mnt
	damaged=$(damage_other_copies data10 $r-0 $r-1 $r-2 $r-3) || fail "raid10 $layout: $damaged"
	"$RAIDFUSE" verify $r-0 $r-1 $r-2 $r-3 | grep -q "mismatch_cnt: 0" &&
		fail "raid10 $layout: damaging a copy left no mismatch to resync"
	"$RAIDFUSE" mount $r-0 $r-1 $r-2 $r-3 mnt 2>mount10.err ||
		{ cat mount10.err; fail "raid10 $layout: remount after kill"; }
	grep -q "resyncing the $n of $((kib / 1024)) regions the write-intent bitmap marks" mount10.err ||
		{ cat mount10.err; fail "raid10 $layout: remount did not resync the $n marked regions"; }
	cmp <(dd if=mnt/volume.img bs=1M skip=150 count=1 status=none) data10 ||
		fail "raid10 $layout: data lost"
	rf_umount mnt
	"$RAIDFUSE" verify $r-0 $r-1 $r-2 $r-3 | grep -q "mismatch_cnt: 0" ||
		fail "raid10 $layout: copies differ after the bitmap resync"
	[ "$(dirty_bits $r-3)" = 0 ] || fail "raid10 $layout: bits left dirty after a clean stop"
	log "ok: raid10 $layout: bits cover the volume ($sync KiB); after SIGKILL the $n marked regions were resynced and $damaged damaged copies mended"
done

# A RAID10 member back after a transient removal gets only the marked regions.
rf_mount r10n2-0 r10n2-1 r10n2-2 r10n2-3 mnt
"$RAIDFUSE" fail mnt r10n2-1 && "$RAIDFUSE" remove mnt r10n2-1 || fail "raid10: fail r10n2-1"
dd if=/dev/urandom of=away10 bs=1M count=2 status=none
dd if=away10 of=mnt/volume.img bs=1M seek=60 conv=notrunc,fsync status=none || fail "raid10: write"
"$RAIDFUSE" add mnt r10n2-1 || fail "raid10: re-add"
"$RAIDFUSE" wait mnt >/dev/null || fail "raid10: wait for the re-add"
regions=$(sed -n 's/.*re-added .*r10n2-1 to role [0-9]*: only the \([0-9]*\) regions the bitmap marks.*/\1/p' \
	mnt/.raidfuse/log)
[ -n "$regions" ] && [ "$regions" -ge 2 ] && [ "$regions" -le 3 ] ||
	fail "raid10: re-add did not rebuild just the marked regions: $(cat mnt/.raidfuse/log)"
written=$(python3 -c 'import json,sys
d=json.load(sys.stdin)
print([m["written_bytes"] for m in d["members"] if m["path"].endswith("/r10n2-1") and m["state"]=="in_sync"][0])' \
	< <("$RAIDFUSE" status --json mnt))
# Its copies of the 2 MiB written while away are 1 MiB (near=2 over 4).
[ "$written" -ge 1048576 ] && [ "$written" -le $((regions * 1048576 + 65536)) ] ||
	fail "raid10: re-add wrote $written bytes; its copies of the $regions marked regions are 1 MiB"
cmp <(dd if=mnt/volume.img bs=1M skip=60 count=2 status=none) away10 || fail "raid10: data written while away"
rf_umount mnt
"$RAIDFUSE" verify r10n2-0 r10n2-1 r10n2-2 r10n2-3 | grep -q "mismatch_cnt: 0" ||
	fail "raid10: copies differ after the re-add"
log "ok: raid10: a re-added member got only the $regions marked regions ($written bytes)"

# Without a bitmap, the whole array resyncs.
"$RAIDFUSE" create --level 1 --raid-devices 2 --bitmap none --size 64M n0 n1 >/dev/null || fail "create --bitmap none"
mdadm --examine n0 | grep -q "Feature Map : 0x0" || fail "--bitmap none still made a bitmap"
rf_mount n0 n1 mnt2
dd if=/dev/urandom of=mnt2/volume.img bs=1M count=1 conv=notrunc,fsync status=none
kill -9 "$(cat mnt2/.raidfuse/pid)"
sleep 0.3
fusermount3 -u -z mnt2
"$RAIDFUSE" mount n0 n1 mnt2 2>mount2.err || fail "remount raid1"
grep -q "resyncing all of raid1" mount2.err || { cat mount2.err; fail "no full resync without a bitmap"; }
rf_umount mnt2
log "ok: --bitmap none: no bitmap, a full resync after a kill"
log "PASS"
