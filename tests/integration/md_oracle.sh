#!/bin/bash
# md_oracle.sh - arrays that raidfuse creates and writes must assemble under
# the REAL Linux md driver, read back the same bytes, and pass md's "check"
# with mismatch_cnt 0.
#
# For every level (and a few layouts, chunk sizes and odd member sizes) the
# test makes an array with "raidfuse create", mounts it, writes pseudo-random
# data over all of volume.img (tests/oracle/write_pattern.py: unaligned
# scattered writes, a full pass, concurrent writers, read-modify-write
# overwrites) and the same bytes into a plain model file, unmounts, and
# re-reads it through a read-only raidfuse mount. Then the md-oracle VM
# (shared/md-oracle: Debian kernel md + mdadm 4.2 under QEMU/TCG) assembles
# the members, up to 26 disks per boot, and runs tests/oracle/guest_check.sh:
# sha256 of /dev/mdN, then "check" and mismatch_cnt. Required per array:
#   * the md sha256 = the model's = what raidfuse read (mounted and re-read);
#   * md's array size = the size of volume.img;
#   * redundant levels: the superblocks say clean (md starts no resync of its
#     own, which would hide parity errors) and mismatch_cnt = 0;
#   * degraded arrays (written by raidfuse mounted --run, one member left
#     out): md assembles them without that member and reads the same bytes;
#     assembled with the stale member too, md must leave it out (event count);
#     a degraded raid6 passes md's check of the parity it has left
#     (mismatch_cnt 0);
#   * a degraded raid6 repaired by raidfuse (raid6-deg-repaired): written
#     degraded, one byte of Q flipped in every 7th row whose Q member is
#     there, then raidfuse's repair (which must count those rows) and
#     check (0); md's degraded check then finds 0, and a control copy of
#     the members taken before the repair (raid6-deg-repaired-control)
#     must give md the mismatch_cnt raidfuse's repair counted;
#   * a control copy of raid1 and of a raid10 with three flipped bytes must
#     give mismatch_cnt > 0 (proves that check really ran and would catch an
#     error), and the count raidfuse's verify gives (md counts a 64 KiB
#     resync block once);
#   * an array stopped in the middle of a raidfuse "replace" (the copy marked
#     with md's MD_FEATURE_REPLACEMENT): md takes both the member and its
#     replacement, resumes the copy (sync_action recover), reads the same
#     bytes and finds mismatch_cnt 0 afterwards.
# Arrays taken through raidfuse's life-cycle operations, each written with
# the full pattern first and then with more scattered writes
# (write_pattern.py --more) between and after the steps, on a 256 KiB
# bitmap chunk:
#   * rebuilt: fail a member, remove it, add a blank file, write while the
#     rebuild runs, wait for it, write more, unmount (raid5, raid6, raid10
#     f2, raid1);
#   * readded: after a clean remount (a clean bitmap), fail and remove a
#     member, write, add the same file back (a rebuild of the bitmap's
#     regions only), wait, unmount (raid5, raid1, raid1 with metadata 1.0);
#   * resynced: after an fsync of the model state and a clean remount,
#     SIGKILL the daemon while a writer rewrites small pieces
#     (write_pattern.py --storm); tear one row in a region the bitmap marks
#     (flip a byte of P where nothing writes later); remount (a resync of
#     the bitmap's regions), wait, write those pieces back from the model,
#     unmount (raid5, raid6);
#   * grown (before any of the above): made with --bitmap none, given a
#     bitmap by raidfuse grow --bitmap internal, then (metadata 1.2) the
#     members made 4 MiB longer and raidfuse grow --size max (raid1 and
#     raid5 readded, raid1 1.0 readded, raid6 resynced); and raid1-wider,
#     made with 2 members, grow --raid-devices 3, the third added and
#     rebuilt, then written whole;
#   * replaced: replace a member, write while it copies, wait, remove the
#     old one, unmount (raid6);
#   * discarded: holes punched in volume.img (runs of whole rows, parts of
#     rows, unaligned pieces; zeros in the model), scattered writes over
#     them, more holes, unmount (raid5, raid6): md must read zeros there
#     and find every row's parity in order.
#   * md's own metadata 1.0 arrays (a raid1 with a bitmap before its
#     superblock, a raid5) and a 1.1 raid5 (tests/data/md1x): written and
#     rebuilt as above onto a blank file 1 MiB larger (the superblock,
#     and a 1.0 bitmap, lie elsewhere on it than on the others); it must
#     carry the array's version.
#   No writes follow a re-add or a resync: a full-row write would recompute
#   parity and hide a region they missed.
#   md must assemble them with every member given in its role, clean (no
#   resync or recovery of its own, nothing kicked as non-fresh, no stale
#   bitmap: the guest prints mdadm --examine and -X of every member, whose
#   events must agree, with no recovery or replacement left in feature_map),
#   read the model's bytes and find mismatch_cnt 0.
#
# Needs root (build.sh installs qemu with apt-get and downloads Debian
# packages), /dev/fuse, python3 and the md-oracle folder. Where it cannot
# run, it skips (77) with the reason; MD_ORACLE_REQUIRE=1 turns those skips
# into failures (for "make check-oracle").
#
# Environment:
#   MD_ORACLE_DIR      md-oracle folder (default $SHARED_DIR/md-oracle)
#   MD_ORACLE_ONLY     space-separated array names to run (default all)
#   MD_ORACLE_JOBS     VMs booted at the same time (default: 2, or 1 on 1 CPU)
#   MD_ORACLE_KEEP     folder to copy the member images and logs into
#   MD_ORACLE_SEED     data seed (default 1)
#   MD_ORACLE_GUEST_SHA  1 = hash in the guest (busybox sha256sum, slow under
#                      TCG) instead of copying each array out to the host
#   MD_ORACLE_REQUIRE  1 = fail instead of skip when the oracle cannot run
#   ORACLE_WORK, ORACLE_TIMEOUT, ORACLE_DMESG, ORACLE_LOG: passed to md-oracle

. "$(dirname "$0")/lib.sh"

ORACLE_DIR=${MD_ORACLE_DIR:-$SHARED_DIR/md-oracle}
ORACLE_OUT=${ORACLE_WORK:-/tmp/oracle}/out
GUEST=$TOP_SRCDIR/tests/oracle/guest_check.sh
WRITER=$TOP_SRCDIR/tests/oracle/write_pattern.py
SEED=${MD_ORACLE_SEED:-1}
export ORACLE_TIMEOUT=${ORACLE_TIMEOUT:-540}

oskip() {
	[ "${MD_ORACLE_REQUIRE:-0}" = 1 ] && fail "oracle required but cannot run: $*"
	skip "$*"
}
now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }

t_start=$(now)

# ---- can the oracle run here? --------------------------------------------
[ -x "$RAIDFUSE" ] || fail "no raidfuse binary at $RAIDFUSE"
[ -c /dev/fuse ] && command -v fusermount3 >/dev/null ||
	oskip "FUSE unavailable (/dev/fuse or fusermount3 missing)"
command -v python3 >/dev/null || oskip "python3 is not installed"
[ -f "$GUEST" ] && [ -f "$WRITER" ] || fail "tests/oracle/ scripts missing under $TOP_SRCDIR"
[ -x "$ORACLE_DIR/build.sh" ] && [ -x "$ORACLE_DIR/run.sh" ] ||
	oskip "md-oracle not found at $ORACLE_DIR (set MD_ORACLE_DIR)"

if [ "$(id -u)" = 0 ]; then
	log "building the md oracle ($ORACLE_DIR/build.sh; idempotent)"
	if ! "$ORACLE_DIR/build.sh" >"$WORK/build.log" 2>&1; then
		tail -n 15 "$WORK/build.log" >&2
		oskip "md-oracle build.sh failed (it needs apt-get and network access to the Debian mirrors); see above"
	fi
	grep -E '^(kernel|mdadm)=' "$WORK/build.log" | sed "s/^/$TEST_NAME: oracle /"
elif [ ! -f "$ORACLE_OUT/vmlinuz" ] || [ ! -f "$ORACLE_OUT/initramfs.cpio.gz" ]; then
	oskip "not root, and the md oracle is not built yet (run $ORACLE_DIR/build.sh as root)"
fi
command -v qemu-system-x86_64 >/dev/null || oskip "qemu-system-x86_64 missing after build.sh"
t_built=$(now)
log "oracle ready in $(secs "$t_start" "$t_built") s"

# ---- the arrays ------------------------------------------------------------
# name  level  members  chunk  layout  member-size(s)  mount-option  case
# One size: "raidfuse create --size"; a list: members pre-sized, unequal.
# case: - (written whole); a role number makes a degraded case: raidfuse
# mounts it --run without that member; R<role> a replacing case: that role's
# member is being replaced when raidfuse stops; D<role> degraded without
# that role, Q garbled and repaired by raidfuse (see the header). Life-cycle cases (see the
# header): F<role> rebuilt (that role's member failed and rebuilt onto a
# blank file), A<role> readded, K resynced (crash), X<role> replaced, Z
# discarded. raid1 and raid10-n2-64k-3dev (written whole) also get a
# corrupted control copy (NAME-control).
# A name with -meta1.N: made with raidfuse create --metadata 1.N.
# A name with -grown: made with --bitmap none, then given a bitmap by
# raidfuse grow --bitmap internal (mdadm --grow --bitmap=internal); with
# metadata 1.1 or 1.2, its members are then made 4 MiB larger and raidfuse
# grow --size max (mdadm --grow --size=max) lets the array use them.
# A name with -wider: made with one member fewer, then raidfuse grow
# --raid-devices adds a role (mdadm --grow -n), and the last member is
# added (mounted --run) and rebuilt into it.
# Member size md1x:NAME: not made by raidfuse but md's own metadata 1.0 or
# 1.1 array NAME of tests/data/md1x, written by raidfuse and rebuilt onto
# a blank file 1 MiB larger than the member it replaces (a 1.0
# superblock, and its bitmap, then lie elsewhere on it than on the others).
SPECS=(
	"linear             linear 3 -   -                16M,24M,20M -           -"
	"raid0-64k          0      3 64K -                16M         -           -"
	"raid0-64k-zones    0      2 64K -                16M,20M     -           -"
	"raid1              1      2 -   -                16M         -           -"
	"raid10-n2-64k      10     4 64K n2               16M         -           -"
	"raid10-n2-64k-3dev 10     3 64K n2               16M         -           -"
	"raid10-o2-64k-3dev 10     3 64K o2               16M         -           -"
	"raid10-f2-64k      10     4 64K f2               16M         -           -"
	"raid6-64k          6      5 64K left-symmetric   16M         -           -"
	"raid5-ls-64k       5      4 64K left-symmetric   16M         -           -"
	"raid5-ra-64k       5      3 64K right-asymmetric 17000K      -           -"
	"raid5-ls-4k        5      3 4K  left-symmetric   16M         --direct-io -"
	"raid5-rs-1m        5      4 1M  right-symmetric  20M         -           -"
	"raid1-grown        1      2 -   -                8M          -           A1"
	"raid5-ls-64k-deg   5      4 64K left-symmetric   16M         -           1"
	"raid6-64k-deg      6      5 64K left-symmetric   16M         -           2"
	"raid6-deg-repaired 6      5 64K left-symmetric   16M         -           D1"
	"raid5-ls-64k-repl  5      4 64K left-symmetric   16M         -           R1"
	"raid1-meta1.0-grown 1     2 -   -                8M          -           A0"
	"raid5-rebuilt      5      3 64K left-symmetric   8M          -           F1"
	"raid6-rebuilt      6      4 64K left-symmetric   8M          -           F3"
	"raid10-f2-rebuilt  10     3 64K f2               8M          -           F0"
	"raid1-rebuilt      1      2 -   -                8M          -           F1"
	"raid5-grown-readded 5     3 64K left-symmetric   8M          -           A2"
	"raid5-resynced     5      3 64K left-symmetric   8M          -           K"
	"raid6-resynced     6      4 64K left-symmetric   8M          -           K"
	"raid5-meta1.1      5      3 64K left-symmetric   16M         -           -"
	"raid6-replaced     6      4 64K left-symmetric   8M          -           X2"
	"raid5-discarded    5      4 64K left-symmetric   16M         -           Z"
	"raid6-discarded    6      5 4K  left-symmetric   16M         -           Z"
	"md10-raid1-rebuilt 1      2 -   -                md1x:r1-10  -           F1"
	"md10-raid5-rebuilt 5      3 16K left-symmetric   md1x:r5-10  -           F0"
	"md11-raid5-rebuilt 5      3 16K left-symmetric   md1x:r5-11  -           F2"
	"raid6-meta1.0-rebuilt 6   4 64K left-symmetric   8M          -           F1"
	"raid1-wider        1      3 -   -                8M          -           -"
	"raid6-grown-resynced 6    4 64K left-symmetric   8M          -           K"
)
if [ -n "${MD_ORACLE_ONLY:-}" ]; then
	sel=()
	for s in "${SPECS[@]}"; do
		read -r n _ <<<"$s"
		case " $MD_ORACLE_ONLY " in *" $n "* | *" ${n}-control "*) sel+=("$s") ;; esac
	done
	[ ${#sel[@]} -gt 0 ] || fail "MD_ORACLE_ONLY='$MD_ORACLE_ONLY' names no array"
	SPECS=("${sel[@]}")
fi

declare -A EXP SIZE LEVEL KIND STALE BOOT BOOT_DEVS CTRL_MM HAS_BITMAP
NAMES=()
FAILS=()
note_fail() { FAILS+=("$*"); printf '%s: FAIL: %s\n' "$TEST_NAME" "$*" >&2; }
letters=(a b c d e f g h i j k l m n o p q r s t u v w x y z)

# has_control NAME LEVEL CASE: the array gets a control copy with flipped
# bytes (raid1 and one raid10, written whole)
has_control() { [ "$3" = - ] && { [ "$2" = 1 ] || [ "$1" = raid10-n2-64k-3dev ]; }; }

# Disks per array in the VM (all members; a degraded one also passes its
# stale member), packed into boots of at most 26 disks: 25 for members, one
# output disk that the guest copies each array onto (see guest_check.sh).
GUEST_SHA=${MD_ORACLE_GUEST_SHA:-0}
maxdisks=25
[ "$GUEST_SHA" = 1 ] && maxdisks=26
BOOT_NUM=()
boot=0 used=0
for s in "${SPECS[@]}"; do
	read -r name level n _ _ _ _ miss <<<"$s"
	need=$n
	has_control "$name" "$level" "$miss" && need=$((n * 2))  # + the control copy
	[[ $miss == R* ]] && need=$((n + 1))     # + the replacement
	[[ $miss == D* ]] && need=$((n * 2 - 1)) # + the stale member and the control copy
	if [ $((used + need)) -gt $maxdisks ]; then boot=$((boot + 1)); used=0; fi
	used=$((used + need))
	BOOT_NUM+=("$boot")
done
NBOOTS=$((boot + 1))

# raidfuse side of one array: create, mount, write, hash, umount, re-read.
# Sets EXP/SIZE/... and appends the array's disks and guest entry to
# BOOT_IMGS / BOOT_ENTRY. Returns 1 (after note_fail) if raidfuse failed.
BOOT_IMGS=() BOOT_ENTRY='' OUT_MIB=1

# ---- life-cycle cases (run from prepare; they see its locals) ---------------
# rfc VERB ARG...: raidfuse VERB MOUNT ARG... on the array being prepared
rfc() {
	local verb=$1 o
	shift
	o=$("$RAIDFUSE" "$verb" "$mnt" "$@" 2>&1) ||
		{ note_fail "$name: raidfuse $verb $*: $o"; return 1; }
}
# more TAG COUNT: COUNT scattered and COUNT read-modify-write writes into
# volume.img and the model
more() {
	local o
	o=$(python3 "$WRITER" --more "$2" "$vol" "$d/model" "$SEED-$name-$1" 2>&1) ||
		{ note_fail "$name: writing more ($1) failed: $o"; return 1; }
}
# punch TAG: holes in volume.img (fallocate PUNCH_HOLE: a run of whole
# rows, parts of rows, unaligned pieces) and zeros in the model there
punch() {
	local o
	o=$(python3 - "$vol" "$d/model" "$SEED-$name-$1" <<'PY' 2>&1
import ctypes, os, random, sys
vol, model, seed = sys.argv[1], sys.argv[2], sys.argv[3]
libc = ctypes.CDLL(None, use_errno=True)
libc.fallocate.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_long, ctypes.c_long]
rng = random.Random(seed)
size = os.path.getsize(vol)
fd, mfd = os.open(vol, os.O_RDWR), os.open(model, os.O_RDWR)
holes = [(rng.randrange(size // 2), rng.randrange(1 << 20, 3 << 20))]    # many rows
holes += [(rng.randrange(size), rng.randrange(1, 300000)) for _ in range(6)]
holes += [(rng.randrange(size // 4096) * 4096, 4096 * rng.randrange(1, 64)) for _ in range(6)]
for off, ln in holes:
    ln = min(ln, size - off)
    if libc.fallocate(fd, 3, off, ln) != 0:   # PUNCH_HOLE | KEEP_SIZE
        sys.exit("fallocate %d at %d: %s" % (ln, off, os.strerror(ctypes.get_errno())))
    os.pwrite(mfd, bytes(ln), off)
os.fsync(fd)
print("%d holes, %d bytes" % (len(holes), sum(min(l, size - o) for o, l in holes)))
PY
) || { note_fail "$name: punching holes ($1) failed: $o"; return 1; }
	log "$name: $1: $o"
}
# settled: raidfuse's own view once done: not degraded, idle, every role in
# sync, no spare or member being rebuilt left
settled() {
	local o
	o=$(python3 -c 'import json,sys
s=json.load(open(sys.argv[1]))
live=[m for m in s["members"] if m["state"] not in ("removed","faulty")]
ok=(s["degraded"]==0 and s["sync_action"]=="idle" and len(live)==s["raid_disks"]
    and all(m["state"]=="in_sync" for m in live))
print(("" if ok else "NOT SETTLED: ")+"degraded=%d sync_action=%s members=%s" % (s["degraded"],
      s["sync_action"], ",".join("%d:%s" % (m["role"], m["state"]) for m in s["members"])))
sys.exit(0 if ok else 1)' "$mnt/.raidfuse/status.json" 2>&1) ||
		{ note_fail "$name: after the $op case, raidfuse says $o"; return 1; }
}
# tear_parity LEVEL N CHUNK SEED MEMBER...: flip one byte of P (raid5/6,
# left-symmetric) in a row of a region that the on-disk bitmap marks dirty
# and that no storm piece of SEED touches; prints where
tear_parity() {
	python3 - "$TOP_SRCDIR/tests/oracle" "$@" <<'PY'
import struct, sys
sys.path.insert(0, sys.argv[1])
from write_pattern import storm_pieces
level, n, seed, members = int(sys.argv[2]), int(sys.argv[3]), sys.argv[5], sys.argv[6:]
chunk = int(sys.argv[4].rstrip("K")) * 1024
ndata = n - (2 if level == 6 else 1)
with open(members[0], "rb") as f:
    f.seek(4096)
    sb = f.read(1024)
    bm_off, = struct.unpack_from("<i", sb, 96)
    data_off, = struct.unpack_from("<Q", sb, 128)
    f.seek(4096 + bm_off * 512)
    bsb = f.read(256)
    bchunk, = struct.unpack_from("<I", bsb, 52)
    sync_sectors, = struct.unpack_from("<Q", bsb, 40)
    nbits = (sync_sectors * 512 + bchunk - 1) // bchunk
    bits = f.read((nbits + 7) // 8)
size = ndata * sync_sectors * 512
pieces = storm_pieces(seed, size)
dirty = [b for b in range(nbits) if bits[b // 8] >> (b % 8) & 1]
for b in dirty:
    for s in range(b * bchunk // chunk, (b + 1) * bchunk // chunk):
        lo, hi = s * ndata * chunk, (s + 1) * ndata * chunk
        if any(o < hi and o + l > lo for o, l in pieces):
            continue
        pd = n - 1 - s % n
        off = data_off * 512 + s * chunk + 4321
        with open(members[pd], "r+b") as f:
            f.seek(off)
            c = f.read(1)
            f.seek(off)
            f.write(bytes([c[0] ^ 0xa5]))
        print("tore row %d (P on member %d) in region %d of the %d dirty ones: %s" %
              (s, pd, b, len(dirty), " ".join(map(str, dirty))))
        sys.exit(0)
sys.exit("no dirty region with a row that no storm piece touches (dirty: %s)" % dirty)
PY
}
# lifecycle: the case $op on role $oprole of the array mounted at $mnt (its
# full pattern written and fsynced). Leaves it mounted with the model up to
# date, and present[] the members it has now.
lifecycle() {
	local old=${members[oprole]:-} new=$d/r$oprole.img o wpid i pid
	case $op in A | K)
		# a clean stop first: the bitmap is clean again (the daemon
		# clears bits only after 5 idle seconds), so that only what
		# comes next marks regions to re-add or resync. For the crash,
		# rows are written out at once (not 3 s later) so that member
		# writes are in flight when the daemon dies.
		local fl=()
		[ "$op" != K ] || fl=(--flush-age-ms 10)
		rfc umount || return 1
		o=$("$RAIDFUSE" mount "${fl[@]}" "${members[@]}" "$mnt" 2>&1) ||
			{ note_fail "$name: raidfuse mount (again) failed: $o"; return 1; }
		;;
	esac
	case $op in
	F)	# a blank member rebuilt in place of a failed, removed one;
		# writes while the rebuild runs (slowed to ~2 s), then after it
		rfc fail "$old" && rfc remove "$old" || return 1
		truncate -s $(($(stat -c %s "$old") + grow_bytes)) "$new"
		echo 4000 >"$mnt/.raidfuse/sync_speed_max"
		rfc add "$new" || return 1
		more during 30 || return 1
		echo system >"$mnt/.raidfuse/sync_speed_max"
		rfc wait >/dev/null && more after 30 && settled || return 1
		present[oprole]=$new
		;;
	A)	# the same member back after writes made while it was away
		rfc fail "$old" && rfc remove "$old" && more away 8 || return 1
		rfc add "$old" || return 1
		o=$(grep -o "re-added .* only the [0-9]* regions the bitmap marks" "$mnt/.raidfuse/log") ||
			{ note_fail "$name: the add was not a bitmap re-add: $(tail -n 3 "$mnt/.raidfuse/log")"; return 1; }
		log "$name: ${o#* to }"
		# no writes after it: a full-row write would recompute the
		# parity and hide a region the re-add missed
		rfc wait >/dev/null && settled || return 1
		;;
	K)	# SIGKILL while small pieces are being rewritten (the fsynced model
		# state is on the members); the remount resyncs the bitmap's regions
		python3 "$WRITER" --storm "$vol" "$SEED-$name" >"$d/storm.out" 2>&1 &
		wpid=$!
		for ((i = 0; i < 100; i++)); do
			grep -q "storm started" "$d/storm.out" && break
			sleep 0.1
		done
		sleep 0.5
		pid=$(cat "$mnt/.raidfuse/pid")
		kill -9 "$pid"
		for ((i = 0; i < 100; i++)); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
		fusermount3 -u -z "$mnt" 2>/dev/null || umount -l "$mnt"
		wait "$wpid"
		grep -q "storm ended after [1-9]" "$d/storm.out" ||
			{ note_fail "$name: the writer did not run until the kill: $(cat "$d/storm.out")"; return 1; }
		# A SIGKILL loses no write already issued to a member file, so
		# it hardly ever tears a row: tear one, as a power cut would. In
		# a region the bitmap marks, in a row no storm piece (and so no
		# write from here on) touches, flip a byte of P: only the resync
		# can set it right, and md's check sees it if it did not.
		tear_parity "$level" "$n" "$chunk" "$SEED-$name" "${members[@]}" >"$d/tear.out" 2>&1 ||
			{ note_fail "$name: cannot tear a row: $(cat "$d/tear.out")"; return 1; }
		o=$("$RAIDFUSE" mount "${members[@]}" "$mnt" 2>&1) ||
			{ note_fail "$name: raidfuse mount after the kill failed: $o"; return 1; }
		o=$(grep -o "not stopped cleanly: resyncing the [0-9]* of [0-9]* regions" "$mnt/.raidfuse/log") ||
			{ note_fail "$name: no bitmap resync after the kill: $(tail -n 3 "$mnt/.raidfuse/log")"; return 1; }
		[[ $o =~ the\ ([0-9]+)\ of\ ([0-9]+) ]] && [ "${BASH_REMATCH[1]}" -gt 0 ] &&
			[ "${BASH_REMATCH[1]}" -lt "${BASH_REMATCH[2]}" ] ||
			{ note_fail "$name: the resync after the kill is not of some of the regions: $o"; return 1; }
		log "$name: killed in $(tail -n 1 "$d/storm.out" | cut -d: -f1); remount: $o"
		log "$name: $(tail -n 1 "$d/tear.out")"
		rfc wait >/dev/null || return 1
		o=$(python3 "$WRITER" --restore "$vol" "$d/model" "$SEED-$name" 2>&1) ||
			{ note_fail "$name: writing the model back failed: $o"; return 1; }
		settled || return 1
		;;
	Z)	# holes, writes over them (read-modify-write of zeroed rows
		# keeps any parity error), then holes again
		punch first && more between 20 && punch last || return 1
		;;
	X)	# a replace run to its end (writes while it copies, slowed to
		# ~2 s), the old member removed
		truncate -s "$(stat -c %s "$old")" "$new"
		echo 4000 >"$mnt/.raidfuse/sync_speed_max"
		rfc replace "$old" "$new" && more during 30 || return 1
		echo system >"$mnt/.raidfuse/sync_speed_max"
		rfc wait >/dev/null && rfc remove "$old" && settled || return 1
		present[oprole]=$new
		;;
	esac
	return 0
}

# flip_q N CHUNK MISSING MEMBER...: flip one byte of Q (raid6,
# left-symmetric) in every 7th row whose Q member is not the missing role;
# prints how many rows
flip_q() {
	python3 - "$@" <<'PY'
import struct, sys
n, chunk, miss, members = int(sys.argv[1]), int(sys.argv[2].rstrip("K")) * 1024, int(sys.argv[3]), sys.argv[4:]
with open(members[0 if miss else 1], "rb") as f:
    f.seek(4096)
    sb = f.read(1024)
    data_off, = struct.unpack_from("<Q", sb, 128)
    data_sectors, = struct.unpack_from("<Q", sb, 136)
rows = data_sectors * 512 // chunk
flipped = 0
for s in range(0, rows, 7):
    pd = n - 1 - s % n
    qd = (pd + 1) % n
    if qd == miss:
        continue
    off = data_off * 512 + s * chunk + 777
    with open(members[qd], "r+b") as f:
        f.seek(off)
        c = f.read(1)
        f.seek(off)
        f.write(bytes([c[0] ^ 0x5a]))
    flipped += 1
print(flipped)
PY
}
# degraded_repair: the D case, run from prepare (it sees its locals): the
# degraded array written whole is unmounted, Q garbled, a control copy
# taken, remounted --run, repaired and checked by raidfuse; left mounted.
degraded_repair() {
	local rows o mm c=$d-control cn=$name-control i devs=() dl
	"$RAIDFUSE" umount "$mnt" >/dev/null 2>&1 || { note_fail "$name: umount before the garbling"; return 1; }
	rows=$(flip_q "$n" "$chunk" "$miss" "${members[@]}" 2>&1) ||
		{ note_fail "$name: cannot flip Q: $rows"; return 1; }
	mkdir -p "$c"
	for i in "${!present[@]}"; do
		cp --sparse=always "${present[i]}" "$c/m$i.img"
		dl=vd${letters[${#BOOT_IMGS[@]}]}; BOOT_IMGS+=("$c/m$i.img"); devs+=("$dl")
	done
	NAMES+=("$cn") LEVEL[$cn]=6 KIND[$cn]=control EXP[$cn]='' BOOT[$cn]=$b
	OUT_MIB=$((OUT_MIB + (SIZE[$name] + 1048575) / 1048576))
	SIZE[$cn]=${SIZE[$name]}
	BOOT_ENTRY+="$cn|control|${devs[*]}|;"
	o=$("$RAIDFUSE" mount "${mo[@]}" "${present[@]}" "$mnt" 2>&1) ||
		{ note_fail "$name: raidfuse mount --run after the garbling: $o"; return 1; }
	rfc repair && rfc wait >/dev/null || return 1
	mm=$(cat "$mnt/.raidfuse/mismatch_cnt")
	[ "$mm" = $((rows * 8)) ] ||
		{ note_fail "$name: raidfuse's degraded repair counted $mm sectors, $rows rows garbled ($((rows * 8)))"; return 1; }
	CTRL_MM[$cn]=$mm # md's check of the control copy must count the same
	rfc check && rfc wait >/dev/null || return 1
	mm=$(cat "$mnt/.raidfuse/mismatch_cnt")
	[ "$mm" = 0 ] || { note_fail "$name: raidfuse's check after its repair: mismatch_cnt $mm"; return 1; }
	log "$name: Q garbled in $rows rows without role $miss; raidfuse's degraded repair counted $((rows * 8)) sectors, its check then 0"
}

prepare() {
	local name=$1 level=$2 n=$3 chunk=$4 layout=$5 sizes=$6 mopt=$7 miss=$8 repl= op= oprole=
	local d=$WORK/$name i sz=() members=() present=() cre=() mo=() ro=()
	local degrepair= grow_bytes=0
	case $miss in
	R*) repl=${miss#R} miss=- ;;
	D*) miss=${miss#D} degrepair=1 ;;
	[FAX]*) op=${miss:0:1} oprole=${miss:1} miss=- ;;
	K | Z) op=$miss miss=- ;;
	esac
	local mnt=$d/mnt vol out sha_mnt sha_model sha_re t0
	t0=$(now)
	mkdir -p "$d"
	IFS=, read -ra sz <<<"$sizes"
	for ((i = 0; i < n; i++)); do members+=("$d/m$i.img"); done
	cre=(create --level "$level" --raid-devices "$n" --name "$name")
	[ "$chunk" = - ] || cre+=(--chunk "$chunk")
	[ "$layout" = - ] || cre+=(--layout "$layout")
	local bitmap_opts=()
	[ -z "$op" ] || bitmap_opts=(--bitmap-chunk 256K) # regions small enough to re-add or resync
	if [[ $name == *-grown* ]]; then cre+=(--bitmap none); else cre+=("${bitmap_opts[@]}"); fi
	[[ ! $name =~ -meta(1\.[012]) ]] || cre+=(--metadata "${BASH_REMATCH[1]}")
	if [ ${#sz[@]} -gt 1 ]; then
		for ((i = 0; i < n; i++)); do truncate -s "${sz[i]}" "${members[i]}"; done
	else
		cre+=(--size "${sz[0]}")
	fi
	if [[ $sizes == md1x:* ]]; then
		for ((i = 0; i < n; i++)); do
			gzip -dc "$TOP_SRCDIR/tests/data/md1x/${sizes#md1x:}.m$i.img.gz" >"${members[i]}" ||
				{ note_fail "$name: cannot unpack tests/data/md1x/${sizes#md1x:}"; return 1; }
		done
		cre=(- "on md's ${sizes#md1x:} (tests/data/md1x)")
		! grep -qx "${sizes#md1x:} bitmap=none" "$TOP_SRCDIR/tests/data/md1x/manifest.txt" ||
			HAS_BITMAP[$name]=0
		grow_bytes=1048576
	else
		local create_members=("${members[@]}")
		if [[ $name == *-wider* ]]; then
			cre[4]=$((n - 1))
			create_members=("${members[@]:0:n-1}")
		fi
		out=$("$RAIDFUSE" "${cre[@]}" "${create_members[@]}" 2>&1) ||
			{ note_fail "$name: raidfuse ${cre[*]} failed: $out"; return 1; }
	fi
	if [[ $name == *-wider* ]]; then
		local first=("${members[@]:0:n-1}") wm=$d/wider
		out=$("$RAIDFUSE" grow --raid-devices "$n" "${first[@]}" 2>&1) ||
			{ note_fail "$name: raidfuse grow --raid-devices $n failed: $out"; return 1; }
		truncate -s "$(stat -c %s "${members[0]}")" "${members[n - 1]}"
		mkdir -p "$wm"
		track_mount "$wm"
		out=$("$RAIDFUSE" mount --run "${first[@]}" "$wm" 2>&1) ||
			{ note_fail "$name: mount --run after grow --raid-devices failed: $out"; return 1; }
		out=$({ "$RAIDFUSE" add "$wm" "${members[n - 1]}" && "$RAIDFUSE" wait "$wm"; } 2>&1) ||
			{ note_fail "$name: adding the new member failed: $out"; "$RAIDFUSE" umount "$wm"; return 1; }
		out=$("$RAIDFUSE" umount "$wm" 2>&1) || { note_fail "$name: umount after the add: $out"; return 1; }
		cre+=(/ grow --raid-devices "$n" / add)
	fi
	if [[ $name == *-grown* ]]; then
		out=$("$RAIDFUSE" grow --bitmap internal "${bitmap_opts[@]}" "${members[@]}" 2>&1) ||
			{ note_fail "$name: raidfuse grow --bitmap internal failed: $out"; return 1; }
		cre+=(/ grow --bitmap internal)
		if [[ $name != *-meta1.0* ]]; then
			for ((i = 0; i < n; i++)); do truncate -s +4M "${members[i]}"; done
			out=$("$RAIDFUSE" grow --size max "${members[@]}" 2>&1) ||
				{ note_fail "$name: raidfuse grow --size max failed: $out"; return 1; }
			cre+=(/ 4 MiB more / grow --size max)
		fi
	fi

	KIND[$name]=full STALE[$name]=
	for ((i = 0; i < n; i++)); do
		[ "$miss" != - ] && [ "$i" = "$miss" ] && continue
		present+=("${members[i]}")
	done
	[ "$mopt" = - ] || mo+=("$mopt")
	if [ "$miss" != - ]; then
		KIND[$name]=degraded STALE[$name]=${members[miss]}
		mo+=(--run) ro+=(--run)
	fi
	mkdir -p "$mnt"
	track_mount "$mnt"
	out=$("$RAIDFUSE" mount "${mo[@]}" "${present[@]}" "$mnt" 2>&1) ||
		{ note_fail "$name: raidfuse mount ${mo[*]} failed: $out"; return 1; }
	vol=$mnt/volume.img
	SIZE[$name]=$(stat -c %s "$vol")
	out=$(python3 "$WRITER" "$vol" "$d/model" "$SEED-$name" 2>&1) ||
		{ note_fail "$name: writing volume.img failed: $out"; "$RAIDFUSE" umount "$mnt"; return 1; }
	if [ -n "$degrepair" ]; then
		degraded_repair || { "$RAIDFUSE" umount "$mnt" >/dev/null 2>&1; return 1; }
	fi
	if [ -n "$op" ]; then
		KIND[$name]=$(case $op in F) echo rebuilt ;; A) echo readded ;; K) echo resynced ;; X) echo replaced ;; Z) echo discarded ;; esac)
		lifecycle || { "$RAIDFUSE" umount "$mnt" >/dev/null 2>&1; return 1; }
	fi
	if [[ $sizes == md1x:* ]]; then
		# the member rebuilt in place gets the array's superblock version
		local want_version
		want_version=$(sed -n "s/^${sizes#md1x:} metadata=//p" "$TOP_SRCDIR/tests/data/md1x/manifest.txt")
		out=$("$RAIDFUSE" examine "${present[oprole]}" 2>&1 | sed -n 's/^ *Version : //p')
		[ "$out" = "$want_version" ] ||
			{ note_fail "$name: the rebuilt member has metadata '$out', the array $want_version"; "$RAIDFUSE" umount "$mnt"; return 1; }
	fi
	sha_mnt=$(sha256sum <"$vol" | cut -d' ' -f1)
	sha_model=$(sha256sum <"$d/model" | cut -d' ' -f1)
	rm -f "$d/model"
	EXP[$name]=$sha_model
	if [ -n "$repl" ]; then
		# Stop in the middle of a replace: slow it down, let it copy a
		# little, unmount (a clean stop with the copy half done).
		local r=$d/r$repl.img w=0
		echo 1000 >"$mnt/.raidfuse/sync_speed_max"
		truncate -s "$(stat -c %s "${members[repl]}")" "$r"
		out=$("$RAIDFUSE" replace "$mnt" "${members[repl]}" "$r" 2>&1) ||
			{ note_fail "$name: raidfuse replace failed: $out"; "$RAIDFUSE" umount "$mnt"; return 1; }
		for ((i = 0; i < 100 && w == 0; i++)); do
			sleep 0.1
			w=$(python3 -c 'import json,sys
print(sum(m["written_bytes"] for m in json.load(open(sys.argv[1]))["members"] if m["path"] == sys.argv[2]))' \
				"$mnt/.raidfuse/status.json" "$r")
		done
		[ "$w" -gt 0 ] || { note_fail "$name: the replace copied nothing"; "$RAIDFUSE" umount "$mnt"; return 1; }
		present+=("$r")
		KIND[$name]=replacing
	fi
	out=$("$RAIDFUSE" umount "$mnt" 2>&1) || { note_fail "$name: raidfuse umount failed: $out"; return 1; }
	# read back through a fresh read-only mount (not the page cache)
	out=$("$RAIDFUSE" mount --readonly "${ro[@]}" "${present[@]}" "$mnt" 2>&1) ||
		{ note_fail "$name: raidfuse mount --readonly failed: $out"; return 1; }
	sha_re=$(sha256sum <"$vol" | cut -d' ' -f1)
	"$RAIDFUSE" umount "$mnt" >/dev/null 2>&1 || { note_fail "$name: raidfuse umount (read-only) failed"; return 1; }
	log "$name: raidfuse ${cre[*]:1}${mo[*]:+ / mount ${mo[*]}}${op:+ / ${KIND[$name]}}: ${SIZE[$name]} bytes written, sha256 $sha_model ($(secs "$t0" "$(now)") s)"
	[ "$sha_mnt" = "$sha_model" ] || note_fail "$name: raidfuse (mounted) reads $sha_mnt, written $sha_model"
	[ "$sha_re" = "$sha_model" ] || note_fail "$name: raidfuse (re-mounted) reads $sha_re, written $sha_model"

	# the VM's view: this array's disks
	local devs=() dl img
	for img in "${present[@]}"; do
		dl=vd${letters[${#BOOT_IMGS[@]}]}; BOOT_IMGS+=("$img"); devs+=("$dl")
	done
	local stale_dev=
	if [ -n "${STALE[$name]}" ]; then
		stale_dev=vd${letters[${#BOOT_IMGS[@]}]}; BOOT_IMGS+=("${STALE[$name]}")
	fi
	NAMES+=("$name") LEVEL[$name]=$level BOOT[$name]=$b BOOT_DEVS[$name]=${devs[*]}
	local copies=1
	[ -z "${STALE[$name]}" ] || copies=2
	OUT_MIB=$((OUT_MIB + copies * ((SIZE[$name] + 1048575) / 1048576)))
	BOOT_ENTRY+="$name|${KIND[$name]}|${devs[*]}|$stale_dev;"

	if [ -z "$op" ] && has_control "$name" "$level" "$miss"; then
		# control: the same mirror with bytes flipped on member 1's data
		local c=$d-control cn=$name-control off
		mkdir -p "$c"
		for ((i = 0; i < n; i++)); do cp --sparse=always "${members[i]}" "$c/m$i.img"; done
		# three bytes: two in two pages of one 64 KiB resync block, one in
		# another block; md counts each block once (256 sectors, where
		# counting pages would give 24), and so must raidfuse's verify
		off=$(( $("$RAIDFUSE" examine "$c/m1.img" | sed -n 's/^ *Data Offset : \([0-9]*\) sectors.*/\1/p') * 512 ))
		python3 -c 'import os,sys
fd=os.open(sys.argv[1],os.O_RDWR)
for o in (123457, 123457 - 8192, 700001):
    o += int(sys.argv[2]); b=os.pread(fd,1,o); os.pwrite(fd,bytes([b[0]^0x5a]),o)' "$c/m1.img" "$off"
		CTRL_MM[$cn]=$("$RAIDFUSE" verify "$c"/m*.img 2>/dev/null | sed -n 's/^mismatch_cnt: //p')
		devs=()
		for ((i = 0; i < n; i++)); do
			dl=vd${letters[${#BOOT_IMGS[@]}]}; BOOT_IMGS+=("$c/m$i.img"); devs+=("$dl")
		done
		NAMES+=("$cn") LEVEL[$cn]=$level KIND[$cn]=control SIZE[$cn]=${SIZE[$name]} EXP[$cn]='' BOOT[$cn]=$b
		OUT_MIB=$((OUT_MIB + (SIZE[$name] + 1048575) / 1048576))
		BOOT_ENTRY+="$cn|control|${devs[*]}|;"
	fi
	return 0
}

# ---- raidfuse writes, VMs check (a boot starts while the next is prepared) -
jobs_max=${MD_ORACLE_JOBS:-$(($(nproc) >= 2 ? 2 : 1))}
vm_pids=()
t_host=0 t_vm0=
for ((b = 0; b < NBOOTS; b++)); do
	t0=$(now)
	BOOT_IMGS=() BOOT_ENTRY='' OUT_MIB=1
	for i in "${!SPECS[@]}"; do
		[ "${BOOT_NUM[i]}" = "$b" ] || continue
		# shellcheck disable=SC2086
		prepare ${SPECS[i]} </dev/null
	done
	t_host=$(awk -v a="$t_host" -v d="$(secs "$t0" "$(now)")" 'BEGIN { print a + d }')
	[ ${#BOOT_IMGS[@]} -gt 0 ] || continue
	outenv=()
	if [ "$GUEST_SHA" != 1 ]; then
		truncate -s "${OUT_MIB}M" "$WORK/out$b.img"
		outenv=(-e ORACLE_OUT="vd${letters[${#BOOT_IMGS[@]}]}")
		BOOT_IMGS+=("$WORK/out$b.img")
	fi
	while [ "$(jobs -rp | wc -l)" -ge "$jobs_max" ]; do wait -n; done
	log "boot $b: ${#BOOT_IMGS[@]} disks: ${BOOT_ENTRY//;/; }"
	[ -n "$t_vm0" ] || t_vm0=$(now)
	(
		[ -n "${ORACLE_LOG:-}" ] && export ORACLE_LOG=$ORACLE_LOG.boot$b
		t=$(now)
		"$ORACLE_DIR/run.sh" -e ORACLE_ARRAYS="$BOOT_ENTRY" "${outenv[@]}" "$GUEST" "${BOOT_IMGS[@]}" \
			>"$WORK/boot$b.out" 2>&1
		echo "ORACLE boot_rc=$? boot_seconds=$(secs "$t" "$(now)")" >>"$WORK/boot$b.out"
	) &
	vm_pids+=($!)
done
for p in "${vm_pids[@]}"; do wait "$p"; done
t_end=$(now)

# ---- verdicts ----------------------------------------------------------------
for ((b = 0; b < NBOOTS; b++)); do
	[ -f "$WORK/boot$b.out" ] || continue
	echo "----- md oracle boot $b output -----"
	cat "$WORK/boot$b.out"
	rc=$(sed -n 's/^ORACLE boot_rc=\([0-9]*\).*/\1/p' "$WORK/boot$b.out")
	[ "$rc" = 0 ] || note_fail "boot $b: md-oracle run.sh exited $rc (124 timeout, 125 VM died, 126 disk mapping)"
done
echo "-----"

val() {   # val NAME KEY -> last value of KEY in the ORACLE lines of array NAME
	cat "$WORK"/boot*.out 2>/dev/null | grep "^ORACLE array=$1 " | tr ' ' '\n' |
		sed -n "s/^$2=//p" | tail -n 1
}
# sha NAME TAG -> sha256 of what md read: printed by the guest, or hashed here
# from the slice of the boot's output disk that the guest copied it to
sha() {
	local v mib bytes
	v=$(val "$1" "$2")
	[ -z "$v" ] || { echo "$v"; return; }
	mib=$(val "$1" "$2_out_mib") bytes=$(val "$1" "$2_bytes")
	case $mib in '' | *[!0-9]*) echo "none${mib:+ (copy $mib)}"; return ;; esac
	dd if="$WORK/out${BOOT[$1]}.img" bs=1M skip="$mib" iflag=count_bytes count="$bytes" status=none |
		sha256sum | cut -d' ' -f1
}

SUMMARY=()
for name in "${NAMES[@]}"; do
	lvl=${LEVEL[$name]} kind=${KIND[$name]} bad=()
	asm=$(val "$name" assemble) sha=$(sha "$name" sha256) mm=$(val "$name" mismatch_cnt)
	rs=$(val "$name" initial_resync_start) asz=$(val "$name" array_size)
	if [ "$asm" != ok ]; then
		bad+=("md assemble ${asm:-did not run}")
	else
		[ "$asz" = "${SIZE[$name]}" ] || bad+=("md array size $asz != volume.img ${SIZE[$name]}")
		case $kind in
		full | discarded)
			[ "$sha" = "${EXP[$name]}" ] || bad+=("md sha256 $sha != written ${EXP[$name]}")
			case $lvl in 1 | 10 | 5 | 6)
				[ "$rs" = none ] || bad+=("superblocks not clean: md resync_start=$rs (md resyncs)")
				[ "$mm" = 0 ] || bad+=("mismatch_cnt=${mm:-none}")
				;;
			esac
			;;
		control)
			[ "$rs" = none ] || bad+=("control: resync_start=$rs")
			[ -n "$mm" ] && [ "$mm" -gt 0 ] 2>/dev/null ||
				bad+=("control copy with a flipped byte gave mismatch_cnt=${mm:-none}, expected > 0: check is not effective")
			[ -z "${CTRL_MM[$name]:-}" ] || [ "$mm" = "${CTRL_MM[$name]}" ] ||
				bad+=("md's check counts ${mm:-none} sectors, raidfuse's ${CTRL_MM[$name]}")
			;;
		replacing)
			[ "$sha" = "${EXP[$name]}" ] || bad+=("md sha256 $sha != written ${EXP[$name]}")
			[ "$rs" = none ] || bad+=("superblocks not clean: md resync_start=$rs")
			[ "$(val "$name" initial_sync_action)" = recover ] ||
				bad+=("md did not resume the replacement: sync_action $(val "$name" initial_sync_action), members $(val "$name" members)")
			nm=$(val "$name" members | tr ',' '\n' | grep -c .)
			[ "$nm" = $(($(wc -w <<<"${BOOT_DEVS[$name]}"))) ] ||
				bad+=("md took members $(val "$name" members), given ${BOOT_DEVS[$name]}")
			[ "$mm" = 0 ] || bad+=("mismatch_cnt=${mm:-none} after the replacement")
			;;
		rebuilt | readded | resynced | replaced)
			[ "$sha" = "${EXP[$name]}" ] || bad+=("md sha256 $sha != written ${EXP[$name]}")
			[ "$rs" = none ] || bad+=("superblocks not clean: md resync_start=$rs (md resyncs)")
			[ "$(val "$name" initial_sync_action)" = idle ] ||
				bad+=("md started its own $(val "$name" initial_sync_action)")
			[ "$(val "$name" degraded)" = 0 ] || bad+=("md runs degraded=$(val "$name" degraded)")
			nm=$(val "$name" members | tr ',' '\n' | grep -c .)
			[ "$nm" = $(($(wc -w <<<"${BOOT_DEVS[$name]}"))) ] ||
				bad+=("md took members $(val "$name" members), given ${BOOT_DEVS[$name]}")
			[ "$(val "$name" own_sync)" = 0 ] ||
				bad+=("md resynced, recovered or kicked on its own: $(val "$name" own_sync_msgs)")
			# every role once; one event count (superblocks and bitmaps);
			# no recovery_offset (0x2) or replacement (0x10) left
			o=$(python3 -c 'import sys
n, roles, ev, fm, rec, bev, bcl, has_bitmap = sys.argv[1:]
roles, ev, fm, rec, bev, bcl = (x.split(",") for x in (roles, ev, fm, rec, bev, bcl))
bad = []
if sorted(roles) != sorted(str(i) for i in range(int(n))):
    bad.append("roles %s, expected 0..%d once each" % (",".join(roles), int(n) - 1))
if len(set(ev)) != 1:
    bad.append("superblock events differ: %s" % ",".join(ev))
if any(int(f, 16) & 0x12 for f in fm):
    bad.append("feature_map %s (recovery offset or replacement left)" % ",".join(fm))
if any(r != "-" for r in rec):
    bad.append("recovery offsets %s" % ",".join(rec))
if has_bitmap == "0":
    if any(bev + bcl):
        bad.append("a bitmap (events %s) on an array made without one" % ",".join(bev))
elif set(bev) != set(ev):
    bad.append("bitmap events %s != superblock events %s" % (",".join(bev), ",".join(ev)))
elif any(int(c) > int(e) for c, e in zip(bcl, bev)):
    bad.append("bitmap events_cleared %s after its events %s" % (",".join(bcl), ",".join(bev)))
print("; ".join(bad))' "$(wc -w <<<"${BOOT_DEVS[$name]}")" "$(val "$name" ex_roles)" \
				"$(val "$name" ex_events)" "$(val "$name" ex_fmap)" "$(val "$name" ex_recovery)" \
				"$(val "$name" bm_events)" "$(val "$name" bm_cleared)" "${HAS_BITMAP[$name]:-1}" 2>&1)
			[ -z "$o" ] || bad+=("superblocks as mdadm reads them: $o")
			[ "$mm" = 0 ] || bad+=("mismatch_cnt=${mm:-none}")
			;;
		degraded)
			[ "$sha" = "${EXP[$name]}" ] || bad+=("md degraded sha256 $sha != written ${EXP[$name]}")
			[ "$(val "$name" degraded)" = 1 ] || bad+=("md degraded=$(val "$name" degraded), expected 1")
			[ "$lvl" != 6 ] || [ "$mm" = 0 ] || bad+=("md's check of the degraded raid6: mismatch_cnt=${mm:-none}")
			if [ "$(val "$name" stale_assemble)" != ok ]; then
				bad+=("md could not assemble with the stale member given: $(val "$name" stale_assemble)")
			else
				st=$(val "$name" stale_members)
				[ "$(val "$name" stale_degraded)" = 1 ] ||
					bad+=("md took the stale member into the array (members $st, degraded=$(val "$name" stale_degraded))")
				ssha=$(sha "$name" stale_sha256)
				[ "$ssha" = "${EXP[$name]}" ] ||
					bad+=("md with the stale member given reads $ssha, written ${EXP[$name]}")
			fi
			;;
		esac
	fi
	if [ ${#bad[@]} -eq 0 ]; then
		SUMMARY+=("PASS  $name (level $lvl, $kind${mm:+, mismatch_cnt=$mm}): md sha256 $sha")
	else
		SUMMARY+=("FAIL  $name (level $lvl, $kind): $(IFS=';'; echo "${bad[*]}")")
		note_fail "$name under md: $(IFS=';'; echo "${bad[*]}")"
	fi
done

for l in "${SUMMARY[@]}"; do log "$l"; done
vm_s=$( [ -n "$t_vm0" ] && secs "$t_vm0" "$t_end" || echo 0)
log "time: oracle build $(secs "$t_start" "$t_built") s, raidfuse side $(printf '%.1f' "$t_host") s, VMs $vm_s s (after the first boot started; $NBOOTS boots, $jobs_max at a time), total $(secs "$t_start" "$(now)") s"
grep -h '^ORACLE boot_rc' "$WORK"/boot*.out 2>/dev/null | sed "s/^ORACLE /$TEST_NAME: /"

if [ -n "${MD_ORACLE_KEEP:-}" ]; then
	mkdir -p "$MD_ORACLE_KEEP" && cp -a "$WORK"/. "$MD_ORACLE_KEEP"/ 2>/dev/null &&
		log "images and logs kept in $MD_ORACLE_KEEP"
fi
[ ${#FAILS[@]} -eq 0 ] || fail "${#FAILS[@]} problem(s), see above"
log "all ${#NAMES[@]} arrays pass under the real md driver"
exit 0
