#!/bin/bash
# fuse_fio.sh - fio with data verification over MOUNT/volume.img of mounted
# raidfuse arrays, and the data still there after reassembly.
#
# For RAID5 (4 members), RAID6 (5), RAID1 (2), RAID10 (4) and RAID0 (3), all
# with 64K chunks, and RAID5 right-asymmetric (5, 4K chunks), RAID10 far 2
# (4, 1M chunks, an odd chunk count per member) and offset 2 (3), each
# volume is cut into four regions, each written and read back by one fio
# job with crc32c verification (verify_fatal, header checks so misplaced
# blocks are caught too):
#   A  random writes, 4k-256k blocks, psync, buffered;
#   B  sequential writes, 1M blocks, psync, buffered;
#   C  random writes, 4k-256k blocks, libaio iodepth 16, O_DIRECT;
#   D  random writes, 512 B-12k blocks at 512 B alignment, psync (sub-page
#      and unaligned requests reach the daemon).
# Then raidfuse umount (members must read clean, equal Events), raidfuse
# mount with the members in another order, and fio --verify_only over every
# region: what was written persisted on the members. RAID5 is also mounted
# with --direct-io for a further verify-only pass and a new O_DIRECT job.
# Any fio error, verify failure or short I/O fails the test. Last, the
# members are read directly: RAID5/6 parity, RAID1 mirrors and RAID10 pairs
# must be consistent everywhere (redund.py, written to $WORK).
#
# Finally, for information only (no assertion), sequential 1 MiB writes
# (with a final fsync) and reads of 256 MiB on a 4-member RAID5 volume and on
# one plain file in $WORK, in MB/s, with the ratio; before the reads the
# members (resp. the file) are evicted from the page cache.

. "$(dirname "$0")/lib.sh"

require_fuse
require_cmd fio mdadm python3
[ -x "$RAIDFUSE" ] || fail "no raidfuse binary at $RAIDFUSE"
fio --enghelp 2>/dev/null | grep -qw libaio || skip "fio has no libaio engine"

START=$SECONDS
MB=$((1024 * 1024))

# fio_check WHAT JSON [read|write|both] BYTES: fio's JSON report must show no
# job error and BYTES moved in the direction(s) named.
fio_check() {
	python3 - "$@" <<'EOF' || exit 1
import json, sys
what, path, dirs, want = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
txt = open(path).read()
# fio may print warnings before the JSON document.
try:
    doc = json.loads(txt[txt.index("{"):])
except Exception as e:
    print(f"fuse_fio: FAIL: {what}: cannot parse fio output ({e}): {txt[:2000]}", file=sys.stderr)
    sys.exit(1)
for job in doc["jobs"]:
    if job.get("error", 0):
        print(f"fuse_fio: FAIL: {what}: fio job {job['jobname']} error {job['error']}", file=sys.stderr)
        sys.exit(1)
    for d in (["read", "write"] if dirs == "both" else [dirs]):
        got = job[d]["io_bytes"]
        if got != want:
            print(f"fuse_fio: FAIL: {what}: fio {d} {got} bytes, expected {want}", file=sys.stderr)
            sys.exit(1)
EOF
}

# run_fio WHAT DIRS BYTES FIO-ARGS...: run fio with a JSON report; fail on a
# non-zero exit (verify_fatal makes a verify error one) or a bad report.
run_fio() {
	local what=$1 dirs=$2 bytes=$3 rc=0
	shift 3
	fio --output-format=json --output="$WORK/fio.json" "$@" >"$WORK/fio.err" 2>&1 || rc=$?
	if [ "$rc" != 0 ] || grep -qi 'verify.*\(bad\|fail\)\|mismatch' "$WORK/fio.err"; then
		fail "$what: fio exited $rc: $(head -c 3000 "$WORK/fio.err") $(grep -i -m5 'verify\|error' "$WORK/fio.json")"
	fi
	fio_check "$what" "$WORK/fio.json" "$dirs" "$bytes"
}

# The four jobs over REGION bytes each, starting at OFF_X. Their arguments
# are kept in arrays so --verify_only replays exactly the same workload
# (same seed, same offsets and block sizes).
# verify_state_save=0: no *-verify.state files in the current directory.
common=(--ioengine=psync --iodepth=1 --numjobs=1 --verify=crc32c --verify_fatal=1
	--do_verify=1 --randrepeat=1 --group_reporting --verify_state_save=0)

job_args() { # job_args A|B|C|D FILE REGION: sets JOB to fio's arguments
	local j=$1 f=$2 r=$3
	case $j in
	A) JOB=(--name=A --filename="$f" --offset=0 --size="$r" --rw=randwrite --bsrange=4k-256k "${common[@]}") ;;
	B) JOB=(--name=B --filename="$f" --offset="$r" --size="$r" --rw=write --bs=1M "${common[@]}") ;;
	C) JOB=(--name=C --filename="$f" --offset=$((2 * r)) --size="$r" --rw=randwrite --bsrange=4k-256k
		"${common[@]}" --ioengine=libaio --iodepth=16 --direct=1) ;;
	D) JOB=(--name=D --filename="$f" --offset=$((3 * r)) --size="$(d_bytes "$r")" --rw=randwrite
		--bsrange=512-12k --blockalign=512 "${common[@]}") ;;
	esac
}
d_bytes() { local r=$1; echo $((r < 8 * MB ? r : 8 * MB)); }

# check_clean WHAT MEMBER...: members clean, same event count.
check_clean() {
	local what=$1 m ev="" e
	shift
	for m in "$@"; do
		mdadm --examine "$m" >"$WORK/ex" 2>&1 || fail "$what: mdadm --examine $m failed: $(cat "$WORK/ex")"
		grep -Eq '^ *State : clean$' "$WORK/ex" || fail "$what: $m not clean after umount"
		grep -Eq '^ *Checksum : [0-9a-f]+ - correct$' "$WORK/ex" || fail "$what: $m superblock checksum wrong"
		e=$(sed -n 's/^ *Events : //p' "$WORK/ex")
		if [ -z "$ev" ]; then ev=$e; else
			[ "$e" = "$ev" ] || fail "$what: $m has Events $e, the first member $ev"
		fi
	done
}

# check_redundancy TAG LEVEL MEMBER...: read the members directly (they must
# be in role order) and check what fio's read-back cannot see: RAID5 rows
# XOR to zero (any layout), RAID6 P and Q (left-symmetric) are right, RAID1
# mirrors and RAID10 (near 2, even count) pairs are identical.
cat >"$WORK/redund.py" <<'PYEOF'
import sys
# redund.py LEVEL LAYOUT CHUNK_BYTES DATA_OFFSET_BYTES DATA_BYTES MEMBER... (in role order)
level, layout = sys.argv[1], sys.argv[2]
chunk, off, size = int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
files = [open(p, "rb") for p in sys.argv[6:]]
n = len(files)
for f in files:
    f.seek(off)
# GF(2^8) with md's polynomial 0x11d: multiplication tables for translate().
exp = [0] * 512
x = 1
for i in range(255):
    exp[i] = x
    x <<= 1
    if x & 0x100:
        x ^= 0x11d
for i in range(255, 512):
    exp[i] = exp[i - 255]
log = [0] * 256
for i in range(255):
    log[exp[i]] = i
def mul_table(c):
    return bytes(0 if (b == 0 or c == 0) else exp[log[b] + log[c]] for b in range(256))
gpow = [mul_table(exp[k]) for k in range(n)]
def X(a, b):
    return a ^ b
bad = 0
rows = size // chunk
for r in range(rows):
    bufs = [f.read(chunk) for f in files]
    if any(len(b) != chunk for b in bufs):
        print(f"short read in row {r}"); sys.exit(2)
    ints = [int.from_bytes(b, "little") for b in bufs]
    what = None
    if level == "raid5":
        acc = 0
        for v in ints:
            acc ^= v
        if acc:
            what = "xor of all members is not zero"
    elif level == "raid6":
        if layout != "left-symmetric":
            print("raid6 check only knows left-symmetric"); sys.exit(2)
        pd = n - 1 - (r % n)
        qd = (pd + 1) % n
        p = 0
        q = 0
        for k in range(n - 2):
            dd = (pd + 2 + k) % n
            p ^= ints[dd]
            q ^= int.from_bytes(bufs[dd].translate(gpow[k]), "little")
        if p != ints[pd]:
            what = f"P (member {pd}) wrong"
        elif q != ints[qd]:
            what = f"Q (member {qd}) wrong"
    elif level == "raid1":
        if any(v != ints[0] for v in ints):
            what = "mirrors differ"
    elif level == "raid10":
        for i in range(0, n - 1, 2):
            if ints[i] != ints[i + 1]:
                what = f"members {i} and {i+1} differ"
    if what:
        bad += 1
        if bad <= 5:
            print(f"row {r} (member offset {off + r * chunk}): {what}")
if bad:
    print(f"{bad} of {rows} rows inconsistent"); sys.exit(1)
print(f"{rows} rows consistent")
PYEOF
check_redundancy() { # check_redundancy TAG LEVEL CHUNK-BYTES LAYOUT MEMBER...
	local tag=$1 level=$2 cb=$3 layout=$4 off dev
	shift 4
	mdadm --examine "$1" >"$WORK/ex" 2>&1 || fail "$tag: mdadm --examine $1 failed"
	off=$(sed -n 's/^ *Data Offset : \([0-9]*\) sectors.*/\1/p' "$WORK/ex")
	dev=$(sed -n 's/^ *Used Dev Size : \([0-9]*\) sectors.*/\1/p' "$WORK/ex")
	[ -n "$dev" ] && [ "$dev" != 0 ] || dev=$(sed -n 's/^ *Avail Dev Size : \([0-9]*\) sectors.*/\1/p' "$WORK/ex")
	[ -n "$off" ] && [ -n "$dev" ] || fail "$tag: no Data Offset / Dev Size in mdadm --examine"
	python3 "$WORK/redund.py" "raid$level" "$layout" "$cb" $((off * 512)) $((dev * 512 / cb * cb)) "$@" \
		>"$WORK/redund.out" 2>&1 || fail "$tag: redundancy on the members is inconsistent: $(cat "$WORK/redund.out")"
}

# fio_case TAG LEVEL N MEMBER-SIZE CHUNK LAYOUT|- [direct-io]
fio_case() {
	local tag=$1 level=$2 n=$3 msize=$4 chunk=$5 layout=$6 extra=${7:-}
	local lopt=()
	[ "$layout" != - ] && lopt=(--layout "$layout")
	local t0=$SECONDS d=$WORK/$tag i
	local members=() mnt=$d/mnt
	mkdir -p "$d"
	for ((i = 0; i < n; i++)); do members+=("$d/m$i"); done
	"$RAIDFUSE" create --level "$level" --raid-devices "$n" --chunk "$chunk" "${lopt[@]}" --size "$msize" \
		"${members[@]}" >"$d/create.out" 2>&1 || fail "$tag: raidfuse create failed: $(cat "$d/create.out")"
	rf_mount "${members[@]}" "$mnt"
	local img=$mnt/volume.img vol region
	vol=$(stat -c %s "$img")
	[ "$vol" -gt $((16 * MB)) ] || fail "$tag: volume.img is only $vol bytes"
	# Four regions, 1 MiB aligned, at most 48 MiB each.
	region=$((vol / 4 / MB * MB))
	[ "$region" -gt $((48 * MB)) ] && region=$((48 * MB))

	local j
	for j in A B C D; do
		local bytes=$region
		[ $j = D ] && bytes=$(d_bytes "$region")
		job_args $j "$img" "$region"
		run_fio "$tag job $j" both "$bytes" "${JOB[@]}"
	done

	rf_umount "$mnt"
	check_clean "$tag" "${members[@]}"
	# Reassemble in another order: rotated by one.
	rf_mount "${members[@]:1}" "${members[0]}" "$mnt"
	[ "$(stat -c %s "$img")" = "$vol" ] || fail "$tag: volume size changed across reassembly"
	for j in A B C D; do
		local bytes=$region
		[ $j = D ] && bytes=$(d_bytes "$region")
		job_args $j "$img" "$region"
		run_fio "$tag job $j verify-only after reassembly" read "$bytes" "${JOB[@]}" --verify_only
	done

	if [ "$extra" = direct-io ]; then
		rf_umount "$mnt"
		check_clean "$tag" "${members[@]}"
		rf_mount --direct-io "${members[@]}" "$mnt"
		job_args A "$img" "$region"
		run_fio "$tag job A verify-only on a --direct-io mount" read "$region" "${JOB[@]}" --verify_only
		job_args B "$img" "$region"
		run_fio "$tag job B verify-only on a --direct-io mount" read "$region" "${JOB[@]}" --verify_only
		# A fresh O_DIRECT job over region A.
		run_fio "$tag libaio O_DIRECT job on a --direct-io mount" both "$region" \
			--name=E --filename="$img" --offset=0 --size="$region" --rw=randwrite --bsrange=4k-1M \
			"${common[@]}" --ioengine=libaio --iodepth=16 --direct=1 --randseed=4242
	fi

	rf_umount "$mnt"
	check_clean "$tag" "${members[@]}"
	# What redund.py knows: RAID5 any layout, RAID6 left-symmetric, RAID1,
	# RAID10 near 2 on an even member count.
	local redund="" cb
	cb=$(numfmt --from=iec "$chunk")
	case $level/$layout/$((n % 2)) in
	1/*/* | 5/*/* | 6/-/* | 6/left-symmetric/* | 10/-/0 | 10/n2/0)
		check_redundancy "$tag" "$level" "$cb" left-symmetric "${members[@]}"
		redund=", redundancy consistent"
		;;
	esac
	log "$tag: volume $((vol / MB)) MiB, 4 x $((region / MB)) MiB regions verified, and again after reassembly${extra:+ (+ $extra)}$redund ($((SECONDS - t0)) s)"
	rm -rf "$d"
}

fio_case raid5 5 4 64M 64K - direct-io
fio_case raid6 6 5 48M 64K -
fio_case raid1 1 2 100M 64K -
fio_case raid10 10 4 64M 64K -
fio_case raid0 0 3 48M 64K -
# Other geometries: RAID5 right-asymmetric with 4K chunks, RAID10 far 2 with
# an odd number of 1M chunks per member (the far stride rounds) and offset 2.
fio_case raid5-ra-4k 5 5 24M 4K right-asymmetric
fio_case raid10-f2 10 4 40M 1M f2
fio_case raid10-o2 10 3 40M 64K o2
log "verification passed ($((SECONDS - START)) s)"

# --- informational: sequential throughput, RAID5 vs a plain file ---------------
# bw_of JSON DIR: MB/s (10^6) of the DIR side of fio's report.
bw_of() {
	python3 -c 'import json,sys; t=open(sys.argv[1]).read(); d=json.loads(t[t.index("{"):]); print("%.1f" % (d["jobs"][0][sys.argv[2]]["bw_bytes"] / 1e6))' "$1" "$2"
}
# drop_cache FILE...: evict the files' (clean) pages, so reads go to disk.
drop_cache() {
	sync
	python3 -c 'import os,sys
for p in sys.argv[1:]:
    fd = os.open(p, os.O_RDONLY); os.fsync(fd); os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED); os.close(fd)' "$@"
}
perf_job() { # perf_job FILE TAG write|read: 256 MiB sequential in 1 MiB; prints MB/s
	local extra=(--end_fsync=1)
	[ "$3" = read ] && extra=(--invalidate=1)
	fio --output-format=json --output="$WORK/p.json" --name="$3" --filename="$1" --size=256M --rw="$3" \
		--bs=1M --ioengine=psync "${extra[@]}" >"$WORK/p.err" 2>&1 || fail "$2: fio $3 failed: $(cat "$WORK/p.err")"
}
ratio() { python3 -c 'import sys; a,b=float(sys.argv[1]),float(sys.argv[2]); print("%.2f" % (a/b) if b else "n/a")' "$1" "$2"; }
p=$WORK/perf
mkdir -p "$p"
pm=("$p/m0" "$p/m1" "$p/m2" "$p/m3")
"$RAIDFUSE" create --level 5 --raid-devices 4 --chunk 64K --size 100M "${pm[@]}" \
	>/dev/null 2>&1 || fail "perf: raidfuse create failed"
rf_mount "${pm[@]}" "$p/mnt"
perf_job "$p/mnt/volume.img" raid5 write
rw=$(bw_of "$WORK/p.json" write)
rf_umount "$p/mnt"
drop_cache "${pm[@]}" # reads below come from disk, through the daemon
rf_mount "${pm[@]}" "$p/mnt"
perf_job "$p/mnt/volume.img" raid5 read
rr=$(bw_of "$WORK/p.json" read)
rf_umount "$p/mnt"
perf_job "$p/plain" plain write
pw=$(bw_of "$WORK/p.json" write)
drop_cache "$p/plain"
perf_job "$p/plain" plain read
pr=$(bw_of "$WORK/p.json" read)
log "throughput (informational, not checked): sequential 1 MiB psync, 256 MiB"
log "  (writes end with fsync; reads start with the members / the file evicted from the page cache)"
log "  raidfuse RAID5 x4, 64K chunk: write $rw MB/s, read $rr MB/s"
log "  plain file in \$WORK:          write $pw MB/s, read $pr MB/s"
log "  ratio raidfuse/plain:          write $(ratio "$rw" "$pw"), read $(ratio "$rr" "$pr")"

log "PASS ($((SECONDS - START)) s)"
exit 0
