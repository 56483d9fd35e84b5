#!/bin/bash
# md_refs.sh - raidfuse reads arrays made by the real Linux md driver.
#
# For every array in $SHARED_DIR/md-refs/manifest.json: unpack the members,
# mount them read-only (named in reversed order) and check that volume.img
# has md's size and sha256; for redundant levels do the same with each
# member left out (RAID6 and RAID10: each survivable pair too), and check
# that a degraded mount needs --run and that a non-survivable set is refused.
# Read-only mounts must not change a byte of any member.
# Then one read-write round trip on raid5-ls-64k: write at known offsets,
# umount, remount, compare the whole volume with a model, check the parity
# with every single member left out, and check with mdadm --examine that
# every member is clean, with a correct checksum and raised events.
. "$(dirname "$0")/lib.sh"

require_fuse
require_cmd python3 gzip sha256sum cmp dd mdadm

MANIFEST=$SHARED_DIR/md-refs/manifest.json
[ -f "$MANIFEST" ] || skip "md-refs manifest not found at $MANIFEST"

T0=$SECONDS
MNT=$WORK/mnt
mkdir -p "$MNT"
NCHECKS=0

ok() {
	NCHECKS=$((NCHECKS + 1))
	log "ok: $*"
}

# One line per array: NAME LEVEL RAID_DEVICES ARRAY_SIZE ARRAY_SHA256, then
# one line per member: member NAME FILE ROLE IMAGE_SHA256.
manifest_lines() {
	python3 - "$MANIFEST" <<'EOF'
import json, sys
m = json.load(open(sys.argv[1]))
for name, a in m["arrays"].items():
    print("array", name, a["level"], a["raid_devices"], a["array_size_bytes"], a["array_sha256"])
    for mem in a["members"]:
        print("member", name, mem["file"][:-3], mem["role"], mem["image_sha256"])
EOF
}

declare -A LEVEL NDEV SIZE SHA MEMSHA
NAMES=()
while read -r kind name a b c d; do
	case $kind in
	array)
		NAMES+=("$name")
		LEVEL[$name]=$a NDEV[$name]=$b SIZE[$name]=$c SHA[$name]=$d
		;;
	member)
		# a=file b=role c=sha
		[ "$a" = "$name.m$b.img" ] || fail "manifest: member file $a of $name is not $name.m$b.img"
		MEMSHA[$name.$b]=$c
		;;
	esac
done < <(manifest_lines)
[ ${#NAMES[@]} -gt 0 ] || fail "manifest $MANIFEST lists no arrays"
for want in linear raid0-64k raid1 raid10-n2-64k raid5-ls-64k raid5-ls-64k-bitmap raid6-64k; do
	[ -n "${LEVEL[$want]:-}" ] || fail "manifest lacks the array $want"
done

# member_path NAME ROLE
member_path() { echo "$WORK/refs/$1/$1.m$2.img"; }

# SEL := the member paths of NAME in reversed role order, leaving out the
# roles given as further arguments.
members_except() {
	local name=$1 r x skipit
	shift
	SEL=()
	for ((r = NDEV[$name] - 1; r >= 0; r--)); do
		skipit=0
		for x in "$@"; do [ "$x" = "$r" ] && skipit=1; done
		[ $skipit = 1 ] || SEL+=("$(member_path "$name" "$r")")
	done
}

# check_volume NAME LABEL: volume.img under $MNT has md's size and sha256.
# The first read of each array (all members) is hashed and kept as
# $WORK/volume.ref; later reads are compared with it byte for byte, which
# is the same check at a fraction of the CPU.
check_volume() {
	local name=$1 label=$2 size sha
	size=$(stat -c %s "$MNT/volume.img") || fail "$name $label: cannot stat volume.img"
	[ "$size" = "${SIZE[$name]}" ] ||
		fail "$name $label: volume.img is $size bytes, md's array is ${SIZE[$name]}"
	if [ ! -f "$WORK/volume.ref" ]; then
		dd if="$MNT/volume.img" of="$WORK/volume.ref" bs=1M status=none ||
			fail "$name $label: reading volume.img failed"
		sha=$(sha256sum <"$WORK/volume.ref" | cut -d' ' -f1)
		[ "$sha" = "${SHA[$name]}" ] ||
			fail "$name $label: volume.img sha256 $sha, md reads ${SHA[$name]}"
	else
		cmp <(dd if="$MNT/volume.img" bs=1M status=none) "$WORK/volume.ref" \
			>"$WORK/cmp.out" 2>&1 ||
			fail "$name $label: volume.img differs from md's array (sha256 ${SHA[$name]}): $(cat "$WORK/cmp.out")"
	fi
}

# status_check LABEL PATTERN: .raidfuse/status shows [N/M] [UU_U]-like text.
status_check() {
	local label=$1 pattern=$2
	grep -q -- "$pattern" "$MNT/.raidfuse/status" ||
		fail "$label: .raidfuse/status does not show '$pattern':
$(cat "$MNT/.raidfuse/status")"
}

# The [UU_U] string for NAME with the given roles missing.
updown() {
	local name=$1 r x s="" miss
	shift
	for ((r = 0; r < NDEV[$name]; r++)); do
		miss=U
		for x in "$@"; do [ "$x" = "$r" ] && miss=_; done
		s+=$miss
	done
	echo "[$s]"
}

# ro_mount_check NAME [ROLE_LEFT_OUT...]
ro_mount_check() {
	local name=$1 label opts=(-r)
	shift
	if [ $# -gt 0 ]; then
		label="without role(s) $*"
		opts+=(--run)
	else
		label="all members"
	fi
	members_except "$name" "$@"
	rf_mount "${opts[@]}" "${SEL[@]}" "$MNT"
	status_check "$name $label" "$(updown "$name" "$@")"
	check_volume "$name" "$label"
	rf_umount "$MNT"
	! mountpoint -q "$MNT" || fail "$name $label: still mounted after raidfuse umount"
	ok "$name $label: ${SIZE[$name]} bytes, sha256 ${SHA[$name]:0:16}..."
}

# must_refuse NAME LABEL EXPECT_TEXT OPTS... -- ROLES_LEFT_OUT...
must_refuse() {
	local name=$1 label=$2 expect=$3 opts=() rc
	shift 3
	while [ "$1" != -- ]; do opts+=("$1"); shift; done
	shift
	members_except "$name" "$@"
	"$RAIDFUSE" mount "${opts[@]}" "${SEL[@]}" "$MNT" \
		>"$WORK/out" 2>"$WORK/err" && rc=0 || rc=$?
	if mountpoint -q "$MNT"; then
		"$RAIDFUSE" umount "$MNT"
		fail "$name $label: the mount succeeded but must be refused"
	fi
	[ "$rc" != 0 ] || fail "$name $label: mount exited 0 but mounted nothing"
	grep -q -- "$expect" "$WORK/err" ||
		fail "$name $label: message does not mention '$expect': $(cat "$WORK/err")"
	ok "$name $label: refused (exit $rc): $(head -n1 "$WORK/err")"
}

check_member_shas() {
	local name=$1 r sha
	for ((r = 0; r < NDEV[$name]; r++)); do
		sha=$(sha256sum <"$(member_path "$name" "$r")" | cut -d' ' -f1)
		[ "$sha" = "${MEMSHA[$name.$r]}" ] ||
			fail "$name: member $r sha256 after unpacking is $sha, the manifest says ${MEMSHA[$name.$r]}"
	done
	ok "$name: all ${NDEV[$name]} member images match the manifest"
}
# Size, mtime and ctime of the members: read-only mounts must not touch them.
member_stamps() { stat -c '%n %s %Y.%y %Z.%z' "$WORK/refs/$1"/*.img; }

track_mount "$MNT"

for name in "${NAMES[@]}"; do
	md_ref_unpack "$name" "$WORK/refs/$name"
	check_member_shas "$name"
	stamps=$(member_stamps "$name")
	rm -f "$WORK/volume.ref"
	n=${NDEV[$name]}

	ro_mount_check "$name"

	case ${LEVEL[$name]} in
	raid1 | raid10 | raid4 | raid5 | raid6)
		for ((r = 0; r < n; r++)); do
			ro_mount_check "$name" "$r"
		done
		must_refuse "$name" "degraded without --run" "--run" -r -- 0
		;;
	linear | raid0)
		must_refuse "$name" "role 1 missing, even with --run" "missing role(s) 1" -r --run -- 1
		;;
	*)
		fail "$name: level ${LEVEL[$name]} is not covered by this test"
		;;
	esac

	case ${LEVEL[$name]} in
	raid6)
		for ((a = 0; a < n; a++)); do
			for ((b = a + 1; b < n; b++)); do
				ro_mount_check "$name" "$a" "$b"
			done
		done
		must_refuse "$name" "three members missing" "missing role(s) 0, 2, 4" -r --run -- 0 2 4
		;;
	raid10)
		# near-2 on 4 members: roles 0,1 mirror each other, and 2,3.
		for pair in "0 2" "0 3" "1 2" "1 3"; do
			# shellcheck disable=SC2086
			ro_mount_check "$name" $pair
		done
		must_refuse "$name" "both copies (roles 2, 3) missing" "missing role(s) 2, 3" -r --run -- 2 3
		;;
	raid5)
		must_refuse "$name" "two members missing" "missing role(s) 1, 3" -r --run -- 1 3
		;;
	esac
	[ "$(member_stamps "$name")" = "$stamps" ] ||
		fail "$name: read-only mounts modified member files:
$(diff <(echo "$stamps") <(member_stamps "$name"))"
	ok "$name: read-only mounts left the member files untouched"
	rm -rf "$WORK/refs/$name" "$WORK/volume.ref"
done

# ---- read-write round trip on raid5-ls-64k --------------------------------
name=raid5-ls-64k
RW=$WORK/rw
md_ref_unpack "$name" "$RW"
rw_members=()
for ((r = NDEV[$name] - 1; r >= 0; r--)); do rw_members+=("$RW/$name.m$r.img"); done

events_of() {
	mdadm --examine "$1" 2>/dev/null | sed -n 's/^ *Events : *\([0-9]*\).*/\1/p'
}
ev_before=$(events_of "$RW/$name.m0.img")
[ -n "$ev_before" ] || fail "mdadm --examine shows no Events for $RW/$name.m0.img"

# The model: md's volume as read (checked against the manifest), with the
# same writes applied to a plain file.
rf_mount -r "${rw_members[@]}" "$MNT"
cp "$MNT/volume.img" "$WORK/model.img"
rf_umount "$MNT"
[ "$(sha256sum <"$WORK/model.img" | cut -d' ' -f1)" = "${SHA[$name]}" ] ||
	fail "$name: the volume copied for the model does not match the manifest"

head -c $((4 * 1024 * 1024)) /dev/urandom >"$WORK/pattern" || fail "cannot read /dev/urandom"
VOL_SIZE=${SIZE[$name]}
# src_offset length dest_offset: chunk-aligned, unaligned across stripes,
# sub-sector, and the last bytes of the volume.
WRITES=(
	"0 1048576 0"
	"1048576 2101248 $((10 * 1048576 + 12288 + 512))"
	"3200000 1000 $((30 * 1048576 + 777))"
	"3300000 524288 $((VOL_SIZE - 524288))"
)
apply_writes() {
	local target=$1 w s l d
	for w in "${WRITES[@]}"; do
		read -r s l d <<<"$w"
		dd if="$WORK/pattern" of="$target" bs=64K iflag=skip_bytes,count_bytes \
			oflag=seek_bytes skip="$s" count="$l" seek="$d" conv=notrunc,fsync \
			status=none || return 1
	done
}
apply_writes "$WORK/model.img" || fail "cannot write the model"

rf_mount "${rw_members[@]}" "$MNT"
[ ! -w "$MNT/volume.img" ] && fail "$name: volume.img of a read-write mount is not writable"
apply_writes "$MNT/volume.img" || fail "$name: dd into volume.img failed"
cmp "$MNT/volume.img" "$WORK/model.img" ||
	fail "$name: volume.img differs from the model right after the writes"
rf_umount "$MNT"
ok "$name: wrote 4 pieces (3.5 MiB, aligned, unaligned, sub-sector, at the end) read-write"

rf_mount "${rw_members[@]}" "$MNT"
cmp "$MNT/volume.img" "$WORK/model.img" ||
	fail "$name: after umount and remount, volume.img differs from the model"
rf_umount "$MNT"
ok "$name: after remount the whole volume equals the model"

ev_after=
for ((r = 0; r < NDEV[$name]; r++)); do
	f=$RW/$name.m$r.img
	mdadm --examine "$f" >"$WORK/examine" 2>&1 || fail "mdadm --examine $f failed: $(cat "$WORK/examine")"
	grep -Eq '^ *State : clean$' "$WORK/examine" ||
		fail "mdadm --examine $f: not clean: $(grep 'State' "$WORK/examine")"
	grep -Eq '^ *Checksum : [0-9a-f]+ - correct' "$WORK/examine" ||
		fail "mdadm --examine $f: $(grep Checksum "$WORK/examine")"
	grep -Eq "^ *Device Role : Active device $r$" "$WORK/examine" ||
		fail "mdadm --examine $f: $(grep 'Device Role' "$WORK/examine")"
	grep -Eq '^ *Array State : AAAA ' "$WORK/examine" ||
		fail "mdadm --examine $f: $(grep 'Array State' "$WORK/examine")"
	ev=$(sed -n 's/^ *Events : *\([0-9]*\).*/\1/p' "$WORK/examine")
	[ -n "$ev" ] && [ "$ev" -gt "$ev_before" ] ||
		fail "mdadm --examine $f: events '$ev' not above $ev_before"
	[ -z "$ev_after" ] || [ "$ev" = "$ev_after" ] ||
		fail "mdadm --examine: members disagree on events ($ev vs $ev_after)"
	ev_after=$ev
	[ "$(sha256sum <"$f" | cut -d' ' -f1)" != "${MEMSHA[$name.$r]}" ] ||
		fail "$f is unchanged after writes that touch every member"
done
ok "$name: mdadm --examine: all members clean, checksums correct, events $ev_before -> $ev_after"

# The parity written must let every single member be rebuilt.
for ((r = 0; r < NDEV[$name]; r++)); do
	opts=(-r --run)
	m=()
	for ((x = NDEV[$name] - 1; x >= 0; x--)); do
		[ $x = $r ] || m+=("$RW/$name.m$x.img")
	done
	rf_mount "${opts[@]}" "${m[@]}" "$MNT"
	cmp "$MNT/volume.img" "$WORK/model.img" ||
		fail "$name: after the writes, with role $r left out, volume.img differs from the model"
	rf_umount "$MNT"
done
ok "$name: after the writes, each single member left out still reads back the model"

log "PASS: $NCHECKS checks in $((SECONDS - T0)) s"
exit 0
