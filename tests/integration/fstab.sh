#!/bin/bash
# fstab.sh - an fstab line of type fuse.raidfuse works: mount(8) hands such
# a line to mount.fuse3, which runs `raidfuse SOURCE MOUNTPOINT -o OPTS`.
# The test runs mount.fuse3 the way mount(8) does (with raidfuse on PATH)
# and checks that the members in SOURCE are assembled, that raidfuse's own
# options (cache-mib=, flush-age-ms=, ro, run) take effect, that fstab's
# and systemd's (defaults, nofail, x-systemd.*) are left alone, that a
# plain umount(8) flushes the cache and leaves the members clean, and that
# a misspelt option or a bad source is refused with a message naming it
# and no member changed.
. "$(dirname "$0")/lib.sh"
require_fuse
require_cmd mdadm
helper=$(command -v mount.fuse3 || ls /sbin/mount.fuse3 /usr/sbin/mount.fuse3 2>/dev/null | head -n1)
[ -n "$helper" ] || skip "mount.fuse3 is not installed (Debian package fuse3)"
RF_DIR=$(cd "$(dirname "$RAIDFUSE")" && pwd)
[ "$(basename "$RAIDFUSE")" = raidfuse ] || skip "mount.fuse3 runs 'raidfuse': $RAIDFUSE has another name"

cd "$WORK"
mkdir -p mnt
track_mount "$WORK/mnt"
"$RAIDFUSE" create --level 5 --raid-devices 3 --chunk 64K --size 40M m0 m1 m2 >/dev/null || fail "create"
src=$WORK/m0:$WORK/m1:$WORK/m2

# fstab_mount OPTIONS [SOURCE]: what mount(8) runs for the line
# "SOURCE $WORK/mnt fuse.raidfuse OPTIONS 0 0"; stderr in mount.err.
fstab_mount() {
	PATH=$RF_DIR:$PATH "$helper" "${2:-$src}" "$WORK/mnt" -t fuse.raidfuse -o "$1" 2>mount.err
}
# stop: umount(8) the mount and wait for the daemon to finish.
stop() {
	local pid
	pid=$(cat mnt/.raidfuse/pid) || fail "no pid file"
	umount mnt 2>umount.err || fusermount3 -u mnt || fail "umount: $(cat umount.err)"
	for _ in $(seq 1 200); do kill -0 "$pid" 2>/dev/null || break; sleep 0.05; done
	kill -0 "$pid" 2>/dev/null && fail "the daemon $pid did not stop after umount"
	return 0
}

printf '#!/bin/sh\necho "$1 $2" >>%s/events\n' "$WORK" >prog.sh && chmod +x prog.sh
fstab_mount "cache-mib=4,flush-age-ms=60000,defaults,nofail,x-systemd.automount,program=$WORK/prog.sh,test" ||
	fail "fstab mount: $(cat mount.err)"
for _ in $(seq 1 100); do grep -qs "^TestMessage $WORK/mnt$" events && break; sleep 0.05; done
grep -qs "^TestMessage $WORK/mnt$" events || fail "program=,test: no TestMessage: $(cat events 2>&1)"
grep -q "^raidfuse $WORK/mnt fuse.raidfuse " /proc/mounts || fail "not in the mount table as fuse.raidfuse"
"$RAIDFUSE" status mnt >status.out
grep -q "cache_size_mib: 4$" status.out || fail "cache-mib=4 did not take: $(cat status.out)"
grep -q "\[3/3\] \[UUU\]" status.out || fail "not all three members from the source: $(cat status.out)"
dd if=/dev/urandom of=ref bs=1M count=8 status=none
dd if=ref of=mnt/volume.img bs=1M conv=notrunc,fsync status=none || fail "write"
# Then 4 KiB here and there (whole rows would go out at once), no fsync,
# and a flush age of a minute: those rows wait in the cache.
for i in 1 5 9 13 17 21; do
	dd if=/dev/urandom of=ref bs=4k count=1 seek=$((i * 50)) conv=notrunc status=none
	dd if=ref of=mnt/volume.img bs=4k count=1 skip=$((i * 50)) seek=$((i * 50)) conv=notrunc \
		status=none || fail "write 4k"
done
grep -q "cache_dirty_rows: [1-9]" mnt/.raidfuse/status || fail "expected dirty rows before umount"
stop
[ "$(ex_field m1 State)" = clean ] || fail "members not clean after umount(8): $(ex_field m1 State)"
grep -q "^DeviceDisappeared $WORK/mnt$" events || fail "no DeviceDisappeared after umount(8): $(cat events)"
log "ok: fstab line with cache-mib=4, program=, test and fstab/systemd options mounted; umount(8) flushed and marked clean"

# ro: members opened read-only, volume.img read-only.
before=$(sha256sum m0 m1 m2)
fstab_mount "ro,defaults" || fail "fstab mount ro: $(cat mount.err)"
cmp <(head -c 8M mnt/volume.img) ref || fail "data written before is not there"
dd if=/dev/zero of=mnt/volume.img bs=4k count=1 conv=notrunc status=none 2>/dev/null &&
	fail "a write to a read-only (ro) mount succeeded"
stop
[ "$(sha256sum m0 m1 m2)" = "$before" ] || fail "a ro mount changed the members"
log "ok: ro: data there, writes refused, members unchanged"

# The mount verb's -o ro is --readonly too: alone it would make only the
# kernel's mount read-only while the daemon wrote the superblocks.
"$RAIDFUSE" mount -o ro m0 m1 m2 mnt 2>mount.err || fail "mount -o ro: $(cat mount.err)"
"$RAIDFUSE" status mnt | head -n 1 | grep -q "active (read-only)" ||
	fail "mount -o ro is not read-only: $("$RAIDFUSE" status mnt | head -n 1)"
cmp <(head -c 8M mnt/volume.img) ref || fail "mount -o ro: data written before is not there"
"$RAIDFUSE" umount mnt || fail "umount after mount -o ro"
[ "$(sha256sum m0 m1 m2)" = "$before" ] || fail "mount -o ro changed the members"
log "ok: mount -o ro opens the members read-only: members unchanged"

# run: a member missing from the source, started degraded.
fstab_mount "run" "$WORK/m0:$WORK/m2" || fail "fstab mount run: $(cat mount.err)"
grep -q '"degraded":1' <("$RAIDFUSE" status --json mnt) || fail "not degraded without m1"
cmp <(head -c 8M mnt/volume.img) ref || fail "degraded read differs"
stop
log "ok: run: started degraded without the member left out of the source"

# Refusals: nothing mounted, no member changed, a message naming the problem.
before=$(sha256sum m0 m1 m2)
fstab_mount "cache_mib=4" && fail "a misspelt option (cache_mib) was accepted"
grep -q "cache_mib" mount.err || fail "the refusal does not name the option: $(cat mount.err)"
fstab_mount "cache-mib" && fail "cache-mib without a value was accepted"
grep -q "fstab option 'cache-mib' takes a value (cache-mib=VALUE)" mount.err ||
	fail "cache-mib without a value: $(cat mount.err)"
fstab_mount "run=1" && fail "run=1 was accepted"
grep -q "fstab option 'run=1': run takes no value" mount.err || fail "run=1: $(cat mount.err)"
fstab_mount "cache-mib=lots" && fail "cache-mib=lots was accepted"
grep -q "lots" mount.err || fail "the refusal does not name the value: $(cat mount.err)"
fstab_mount "defaults" "$WORK/m0::$WORK/m2" && fail "an empty member in the source was accepted"
grep -q "separated by ':'" mount.err || fail "the refusal does not explain the source: $(cat mount.err)"
fstab_mount "defaults" "$WORK/m0:$WORK/m1" && fail "a source missing a member mounted without run"
grep -q "missing" mount.err || fail "the refusal does not say a member is missing: $(cat mount.err)"
! mountpoint -q mnt || fail "a refused fstab mount left something mounted"
[ "$(sha256sum m0 m1 m2)" = "$before" ] || fail "a refused fstab mount changed the members"
log "ok: misspelt or bad options, a bad source, a missing member: refused, members unchanged"
log "PASS"
