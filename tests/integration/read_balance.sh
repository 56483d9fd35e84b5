#!/bin/bash
# read_balance.sh - reads of the mirror levels are spread over the copies
# (md's read_balance), and md's write-mostly flag is honoured:
#  * RAID1 x2 and RAID10 x4 (near): random reads at depth 16 reach every
#    member; a sequential reader at depth 1 stays on one member;
#  * `echo writemostly > devN/state` (md's sysfs word) marks a RAID1
#    member write-mostly: no read goes to it while another copy is there,
#    the flag is in its superblock (raidfuse examine, mdadm --examine:
#    "Flags : write-mostly"), survives a remount, shows as (W) in the
#    status; with the other copy failed, it serves the reads;
#  * levels where md ignores the flag, and read-only arrays, refuse it;
#    -writemostly clears it.
# Every phase checks the bytes read back against what was written.
. "$(dirname "$0")/lib.sh"
require_fuse
require_cmd fio python3

cd "$WORK"
# read_bytes MNT: the members' read byte counters, "path=bytes" per line.
read_bytes() {
	python3 -c 'import json,sys
d = json.load(open(sys.argv[1] + "/.raidfuse/status.json"))
for m in d["members"]: print("%s=%d" % (m["path"].rsplit("/", 1)[1], m["read_bytes"]))' "$1"
}
# delta BEFORE AFTER NAME: bytes NAME read between two read_bytes outputs.
delta() {
	local b a
	b=$(grep "^$3=" <<<"$1" | cut -d= -f2)
	a=$(grep "^$3=" <<<"$2" | cut -d= -f2)
	echo $((a - b))
}
randread() {
	fio --name=rr --filename="$1/volume.img" --rw=randread --bs=4k --iodepth=16 \
		--ioengine=libaio --direct=1 --size="$2" --runtime=3 --time_based \
		--output=fio.out >/dev/null 2>&1 || fail "fio randread on $1: $(cat fio.out)"
}
seqread() {
	fio --name=sr --filename="$1/volume.img" --rw=read --bs=1M --iodepth=1 \
		--ioengine=libaio --direct=1 --size="$2" --output=fio.out >/dev/null 2>&1 ||
		fail "fio read on $1: $(cat fio.out)"
}

# 1. RAID1 x2.
"$RAIDFUSE" create --level 1 --raid-devices 2 --size 80M m0 m1 >/dev/null 2>&1 || fail "create raid1"
rf_mount m0 m1 mnt
head -c 64M /dev/urandom >ref
dd if=ref of=mnt/volume.img bs=1M conv=notrunc,fsync status=none || fail "write"
before=$(read_bytes mnt)
randread mnt 64M
after=$(read_bytes mnt)
d0=$(delta "$before" "$after" m0) d1=$(delta "$before" "$after" m1)
total=$((d0 + d1))
[ "$total" -gt 0 ] || fail "random reads reached no member"
[ $((d0 * 4)) -ge "$total" ] && [ $((d1 * 4)) -ge "$total" ] ||
	fail "RAID1 random reads not spread: m0 $d0, m1 $d1 bytes"
before=$after
seqread mnt 64M
after=$(read_bytes mnt)
d0=$(delta "$before" "$after" m0) d1=$(delta "$before" "$after" m1)
total=$((d0 + d1))
[ "$total" -ge $((64 << 20)) ] || fail "sequential read moved only $total bytes"
big=$((d0 > d1 ? d0 : d1))
[ $((big * 10)) -ge $((total * 9)) ] ||
	fail "a sequential reader at depth 1 hopped between members: m0 $d0, m1 $d1 bytes"
cmp <(head -c 64M mnt/volume.img) ref || fail "RAID1 data"
log "ok: RAID1 random reads spread over both members; a sequential reader stays on one"

# 2. Write-mostly on RAID1.
echo writemostly >mnt/.raidfuse/dev1/state || fail "writemostly refused on raid1"
[ "$(cat mnt/.raidfuse/dev1/state)" = "in_sync,write_mostly" ] ||
	fail "state: $(cat mnt/.raidfuse/dev1/state)"
"$RAIDFUSE" status mnt | grep -q "m1\[1\](W)" || fail "status has no (W): $("$RAIDFUSE" status mnt)"
before=$(read_bytes mnt)
randread mnt 64M
seqread mnt 64M
after=$(read_bytes mnt)
[ "$(delta "$before" "$after" m1)" = 0 ] ||
	fail "the write-mostly member was read: $(delta "$before" "$after" m1) bytes"
[ "$(delta "$before" "$after" m0)" -gt 0 ] || fail "m0 served no reads"
cmp <(head -c 64M mnt/volume.img) ref || fail "data with a write-mostly member"
rf_umount mnt
"$RAIDFUSE" examine m1 | grep -q "^ *Flags : write-mostly$" || fail "raidfuse examine: no Flags line"
"$RAIDFUSE" examine m0 | grep -q "Flags" && fail "the flag landed on m0 too"
if command -v mdadm >/dev/null; then
	mdadm --examine m1 2>/dev/null | grep -q "Flags : write-mostly" ||
		fail "mdadm --examine does not see write-mostly on m1"
fi
rf_mount m0 m1 mnt
[ "$(cat mnt/.raidfuse/dev1/state)" = "in_sync,write_mostly" ] || fail "flag lost at remount"
"$RAIDFUSE" fail mnt dev0 || fail "fail m0"
before=$(read_bytes mnt)
cmp <(head -c 64M mnt/volume.img) ref || fail "data from the write-mostly member alone"
after=$(read_bytes mnt)
[ "$(delta "$before" "$after" m1)" -ge $((64 << 20)) ] ||
	fail "with m0 failed the reads did not go to m1"
echo -writemostly >mnt/.raidfuse/dev1/state || fail "-writemostly refused"
[ "$(cat mnt/.raidfuse/dev1/state)" = in_sync ] || fail "flag not cleared"
# md's word order: write_mostly before spare (state_show), on a blank
# member being rebuilt for m0's role
"$RAIDFUSE" remove mnt dev0 || fail "remove m0"
echo 1 >mnt/.raidfuse/sync_speed_min
echo 1 >mnt/.raidfuse/sync_speed_max
truncate -s "$(stat -c %s m0)" m2
"$RAIDFUSE" add mnt m2 || fail "add m2"
dev=$(basename "$(dirname "$(grep -l "/m2\$" mnt/.raidfuse/dev*/path)")")
echo writemostly >"mnt/.raidfuse/$dev/state" ||
	fail "writemostly on the member being rebuilt ($dev: $(cat "mnt/.raidfuse/$dev/state"))"
[ "$(cat "mnt/.raidfuse/$dev/state")" = "write_mostly,spare" ] ||
	fail "a write-mostly member being rebuilt reads '$(cat "mnt/.raidfuse/$dev/state")', md says write_mostly,spare"
echo -writemostly >"mnt/.raidfuse/$dev/state" || fail "-writemostly on the member being rebuilt"
echo system >mnt/.raidfuse/sync_speed_min
echo system >mnt/.raidfuse/sync_speed_max
"$RAIDFUSE" wait mnt >/dev/null || fail "the rebuild of m2"
rf_umount mnt
"$RAIDFUSE" examine m1 | grep -q "Flags" && fail "cleared flag still in m1's superblock"
log "ok: write-mostly: never read while m0 is there, in the superblock (examine, mdadm), kept at remount, read when alone, cleared"

# 3. RAID10 x4 near: every member serves random reads; no write-mostly.
"$RAIDFUSE" create --level 10 --raid-devices 4 --chunk 64K --size 48M r0 r1 r2 r3 >/dev/null 2>&1 ||
	fail "create raid10"
rf_mount r0 r1 r2 r3 mnt
dd if=ref of=mnt/volume.img bs=1M conv=notrunc,fsync status=none || fail "raid10 write"
before=$(read_bytes mnt)
randread mnt 64M
after=$(read_bytes mnt)
total=0
for r in r0 r1 r2 r3; do total=$((total + $(delta "$before" "$after" $r))); done
for r in r0 r1 r2 r3; do
	d=$(delta "$before" "$after" $r)
	[ $((d * 10)) -ge "$total" ] || fail "RAID10 member $r served $d of $total bytes of random reads"
done
cmp <(head -c 64M mnt/volume.img) ref || fail "RAID10 data"
if (echo writemostly >mnt/.raidfuse/dev1/state) 2>err; then
	fail "writemostly accepted on raid10 (md ignores it there)"
fi
rf_umount mnt
log "ok: RAID10 random reads reach all four members; writemostly refused on raid10"

# 4. Read-only arrays refuse it.
"$RAIDFUSE" create --level 1 --raid-devices 2 --size 8M c0 c1 >/dev/null 2>&1 || fail "create"
rf_mount --readonly c0 c1 mnt
if (echo writemostly >mnt/.raidfuse/dev1/state) 2>err; then
	fail "writemostly accepted on a read-only array"
fi
rf_umount mnt
log "ok: writemostly refused read-only"
log "PASS"
