#!/bin/bash
# cli_create_examine.sh - arrays made by 'raidfuse create' are md 1.2 arrays
# as mdadm sees them, and 'raidfuse examine' reports the same superblocks.
#
# For every level (linear, 0, 1, 10, 5 in each of its four layouts, 6) and
# chunk sizes 4K, 64K and 1M it creates member files, then checks on every
# member, through 'mdadm --examine': Raid Level, Layout (raid5/6/10), Chunk
# Size (chunked levels), Raid Devices, Device Role (Active device i for
# member i), Array UUID (one for all members, the one 'raidfuse examine'
# prints), Name, State clean, "Checksum : ... - correct", Array Size against
# the level's capacity; and that 'raidfuse examine' prints the same values
# field by field. It also checks the CLI's exit codes (--help, --version, an
# unknown verb, create refusals, --force) and runs create/examine and their
# error paths under valgrind, which must find no leak and no error.

. "$(dirname "$0")/lib.sh"

require_cmd mdadm
[ -x "$RAIDFUSE" ] || fail "no raidfuse binary at $RAIDFUSE"

MB=$((1024 * 1024))
MEMBER_SIZE=12M # 1 MiB data offset + room for several 1 MiB chunks

# ex_field FILE FIELD: the value of "FIELD : value" in an examine listing
# (mdadm and raidfuse indent differently, so leading blanks are ignored).
ex_field() {
	sed -n "s/^[[:space:]]*$2 : //p" "$1" | head -n 1
}

# expect FILE FIELD WANT WHAT: fail unless FIELD in FILE is exactly WANT.
expect() {
	local got
	got=$(ex_field "$1" "$2")
	[ "$got" = "$3" ] || fail "$4: '$2' is '$got', expected '$3'"
}

# chunk_text 64K -> the "Chunk Size" mdadm prints (in KiB: 1M -> 1024K)
chunk_kib() {
	case $1 in
	*K) echo "${1%K}" ;;
	*M) echo $((${1%M} * 1024)) ;;
	esac
}

# check_array LEVEL N CHUNK LAYOUT NAME: create an array and check it.
# LAYOUT is the --layout value ("" for the default); NAME the --name ("" none).
check_array() {
	local level=$1 n=$2 chunk=$3 layout=$4 name=$5
	local tag="level=$level n=$n chunk=$chunk layout=${layout:-default}"
	local dir="$WORK/a" i m uuid="" rf_uuid args=()

	rm -rf "$dir" && mkdir -p "$dir" || fail "cannot make $dir"
	local members=()
	for ((i = 0; i < n; i++)); do members+=("$dir/m$i"); done

	args=(--level "$level" --raid-devices "$n" --chunk "$chunk" --size "$MEMBER_SIZE")
	[ -n "$layout" ] && args+=(--layout "$layout")
	[ -n "$name" ] && args+=(--name "$name")
	"$RAIDFUSE" create "${args[@]}" "${members[@]}" >"$dir/create.out" 2>&1 ||
		fail "$tag: raidfuse create failed: $(cat "$dir/create.out")"

	# What mdadm should report for this array.
	local want_level want_layout="" chunked=1 data_disks
	case $level in
	linear) want_level=linear chunked=0 data_disks=$n ;;
	0) want_level=raid0 data_disks=$n ;;
	1) want_level=raid1 chunked=0 data_disks=1 ;;
	10) want_level=raid10 want_layout=near=2 data_disks=$((n / 2)) ;;
	5) want_level=raid5 want_layout=${layout:-left-symmetric} data_disks=$((n - 1)) ;;
	6) want_level=raid6 want_layout=${layout:-left-symmetric} data_disks=$((n - 2)) ;;
	esac
	local ckib
	ckib=$(chunk_kib "$chunk")

	for ((i = 0; i < n; i++)); do
		m=${members[i]}
		local md="$dir/md$i" rf="$dir/rf$i" t="$tag member $i"
		[ "$(stat -c %s "$m")" = $((12 * MB)) ] || fail "$t: member is $(stat -c %s "$m") bytes, not $MEMBER_SIZE"
		mdadm --examine "$m" >"$md" 2>&1 || fail "$t: mdadm --examine failed: $(cat "$md")"
		"$RAIDFUSE" examine "$m" >"$rf" 2>&1 || fail "$t: raidfuse examine failed: $(cat "$rf")"

		expect "$md" Version 1.2 "$t (mdadm)"
		expect "$md" "Raid Level" "$want_level" "$t (mdadm)"
		expect "$md" "Raid Devices" "$n" "$t (mdadm)"
		expect "$md" "Device Role" "Active device $i" "$t (mdadm)"
		expect "$md" State clean "$t (mdadm)"
		# No bitmap, no journal, no reshape. raid0 may carry
		# MD_FEATURE_RAID0_LAYOUT (0x1000) with an explicit layout.
		if [ "$level" = 0 ]; then
			case $(ex_field "$md" "Feature Map") in
			0x0 | 0x1000) ;;
			*) fail "$t: mdadm Feature Map '$(ex_field "$md" "Feature Map")', expected 0x0 (or 0x1000 for raid0)" ;;
			esac
		else
			expect "$md" "Feature Map" 0x0 "$t (mdadm)"
		fi
		[ -n "$want_layout" ] && expect "$md" Layout "$want_layout" "$t (mdadm)"
		[ "$chunked" = 1 ] && expect "$md" "Chunk Size" "${ckib}K" "$t (mdadm)"
		ex_field "$md" Checksum | grep -Eq '^[0-9a-f]{8} - correct$' ||
			fail "$t: mdadm says checksum '$(ex_field "$md" Checksum)'"
		ex_field "$md" "Array State" | grep -Eq "^A{$n} " ||
			fail "$t: mdadm Array State '$(ex_field "$md" "Array State")' is not all active"
		if [ -n "$name" ]; then
			# mdadm may append "(local to host X)".
			[ "$(ex_field "$md" Name | cut -d' ' -f1)" = "$name" ] ||
				fail "$t: mdadm Name '$(ex_field "$md" Name)', expected '$name'"
		fi

		# One Array UUID across the members.
		local u
		u=$(ex_field "$md" "Array UUID")
		echo "$u" | grep -Eq '^[0-9a-f]{8}(:[0-9a-f]{8}){3}$' || fail "$t: bad Array UUID '$u'"
		if [ -z "$uuid" ]; then uuid=$u; else
			[ "$u" = "$uuid" ] || fail "$t: Array UUID $u differs from member 0's $uuid"
		fi

		# Capacity: Array Size = data disks x per-member data, in KiB. mdadm
		# prints no Array Size for linear and raid0 (md keeps no size there).
		local dev_sect array_kib want_kib
		dev_sect=$(ex_field "$md" "Used Dev Size" | cut -d' ' -f1)
		[ -n "$dev_sect" ] && [ "$dev_sect" != 0 ] ||
			dev_sect=$(ex_field "$md" "Avail Dev Size" | cut -d' ' -f1)
		[ "${dev_sect:-0}" -gt 0 ] || fail "$t: mdadm shows no device size"
		if [ "$chunked" = 1 ]; then
			dev_sect=$((dev_sect / (ckib * 2) * (ckib * 2)))
		fi
		want_kib=$((dev_sect / 2 * data_disks))
		[ "$want_kib" -gt 0 ] || fail "$t: no whole chunk fits in a member"
		array_kib=$(ex_field "$md" "Array Size" | cut -d' ' -f1)
		case $level in
		linear | 0) [ -z "$array_kib" ] || [ "$array_kib" = "$want_kib" ] ||
			fail "$t: Array Size $array_kib KiB, expected $want_kib KiB" ;;
		*) [ "$array_kib" = "$want_kib" ] ||
			fail "$t: Array Size '$array_kib' KiB, expected $want_kib KiB ($data_disks x $((dev_sect / 2)) KiB)" ;;
		esac

		# raidfuse examine reports the same superblock, field by field.
		local f
		for f in Magic Version "Feature Map" "Array UUID" "Device UUID" "Raid Level" \
			"Raid Devices" "Data Offset" "Super Offset" State Checksum Events \
			"Device Role"; do
			[ "$(ex_field "$rf" "$f")" = "$(ex_field "$md" "$f")" ] ||
				fail "$t: raidfuse examine '$f' is '$(ex_field "$rf" "$f")', mdadm says '$(ex_field "$md" "$f")'"
		done
		# These mdadm decorates with extra words after the first one.
		for f in Name "Array Size" "Avail Dev Size" "Array State"; do
			[ "$(ex_field "$rf" "$f" | cut -d' ' -f1)" = "$(ex_field "$md" "$f" | cut -d' ' -f1)" ] ||
				fail "$t: raidfuse examine '$f' is '$(ex_field "$rf" "$f")', mdadm says '$(ex_field "$md" "$f")'"
		done
		[ -n "$want_layout" ] && expect "$rf" Layout "$want_layout" "$t (raidfuse examine)"
		[ "$chunked" = 1 ] && expect "$rf" "Chunk Size" "${ckib}K" "$t (raidfuse examine)"
		expect "$rf" "Raid Level" "$want_level" "$t (raidfuse examine)"
		expect "$rf" "Device Role" "Active device $i" "$t (raidfuse examine)"
		rf_uuid=$(ex_field "$rf" "Array UUID")
		[ "$rf_uuid" = "$uuid" ] || fail "$t: raidfuse examine Array UUID $rf_uuid, mdadm $uuid"
	done

	# Examining all members at once: one section per member, exit 0.
	"$RAIDFUSE" examine "${members[@]}" >"$dir/all" 2>&1 || fail "$tag: raidfuse examine of all members failed"
	[ "$(grep -c "Array UUID : $uuid" "$dir/all")" = "$n" ] ||
		fail "$tag: raidfuse examine of $n members does not print $n sections with Array UUID $uuid"
	for ((i = 0; i < n; i++)); do
		grep -q "Device Role : Active device $i\$" "$dir/all" || fail "$tag: combined examine lacks member $i"
	done
}

# --- every level, layout and chunk size -------------------------------------
count=0
for chunk in 4K 64K 1M; do
	check_array linear 3 "$chunk" "" ""
	check_array 0 3 "$chunk" "" "stripes"
	check_array 1 2 "$chunk" "" ""
	check_array 10 4 "$chunk" "" ""
	check_array 10 4 "$chunk" n2 "" # the explicit name of the default
	for layout in left-symmetric left-asymmetric right-symmetric right-asymmetric; do
		check_array 5 4 "$chunk" "$layout" "r5-$layout"
	done
	check_array 5 3 "$chunk" "" ""
	check_array 6 5 "$chunk" "" "r6"
	check_array 6 4 "$chunk" right-asymmetric ""
	count=$((count + 11))
done
log "$count arrays checked with mdadm --examine and raidfuse examine"

# --- exit codes --------------------------------------------------------------
out=$("$RAIDFUSE" --help 2>&1) || fail "raidfuse --help exited $?"
echo "$out" | grep -q "Usage" || fail "raidfuse --help prints no usage"
for verb in create examine mount umount; do
	out=$("$RAIDFUSE" "$verb" --help 2>&1) || fail "raidfuse $verb --help exited $?"
	echo "$out" | grep -q "Usage: raidfuse $verb" || fail "raidfuse $verb --help prints no usage"
done
want_version=$(sed -n 's/^AC_INIT(\[raidfuse\], *\[\([^]]*\)\].*/\1/p' "$TOP_SRCDIR/configure.ac")
out=$("$RAIDFUSE" --version 2>&1) || fail "raidfuse --version exited $?"
[ -n "$want_version" ] && { echo "$out" | grep -qF "$want_version" || fail "--version prints '$out', configure.ac says $want_version"; }
rc=0
"$RAIDFUSE" frobnicate >/dev/null 2>&1 || rc=$?
[ "$rc" = 2 ] || fail "an unknown verb exited $rc, expected 2"
rc=0
"$RAIDFUSE" >/dev/null 2>&1 || rc=$?
[ "$rc" = 2 ] || fail "no verb at all exited $rc, expected 2"

d="$WORK/refuse"
mkdir -p "$d"
rc=0
"$RAIDFUSE" create --level 5 --raid-devices 3 --chunk 64K --size 8M "$d/a" "$d/b" "$d/c" "$d/d" >/dev/null 2>&1 || rc=$?
[ "$rc" != 0 ] || fail "create with 4 members for --raid-devices 3 succeeded"
rc=0
"$RAIDFUSE" create --level 5 --raid-devices 3 --chunk 48K --size 8M "$d/a" "$d/b" "$d/c" >/dev/null 2>&1 || rc=$?
[ "$rc" != 0 ] || fail "create with a 48K chunk (not a power of two) succeeded"
rc=0
"$RAIDFUSE" create --level 5 --raid-devices 3 --layout n2 --size 8M "$d/a" "$d/b" "$d/c" >/dev/null 2>&1 || rc=$?
[ "$rc" != 0 ] || fail "create of raid5 with layout n2 succeeded"
rc=0
"$RAIDFUSE" create --level 4 --raid-devices 3 --size 8M "$d/a" "$d/b" "$d/c" >/dev/null 2>&1 || rc=$?
[ "$rc" != 0 ] || fail "create of level 4 (unsupported) succeeded"
rm -f "$d"/*

"$RAIDFUSE" create --level 5 --raid-devices 3 --chunk 64K --size 8M "$d/a" "$d/b" "$d/c" >/dev/null 2>&1 ||
	fail "create of a plain raid5 failed"
u1=$(mdadm --examine "$d/a" | sed -n 's/^ *Array UUID : //p')
rc=0
"$RAIDFUSE" create --level 1 --raid-devices 3 --size 8M "$d/a" "$d/b" "$d/c" >/dev/null 2>&1 || rc=$?
[ "$rc" != 0 ] || fail "create over members holding md superblocks succeeded without --force"
u2=$(mdadm --examine "$d/a" | sed -n 's/^ *Array UUID : //p')
[ -n "$u1" ] && [ "$u1" = "$u2" ] || fail "a refused create changed the superblock (uuid $u1 -> $u2)"
"$RAIDFUSE" create --level 1 --raid-devices 3 --size 8M --force "$d/a" "$d/b" "$d/c" >/dev/null 2>&1 ||
	fail "create --force over existing members failed"
u3=$(mdadm --examine "$d/c" | sed -n 's/^ *Array UUID : //p')
lvl=$(mdadm --examine "$d/c" | sed -n 's/^ *Raid Level : //p')
[ "$u3" != "$u1" ] && [ "$lvl" = raid1 ] || fail "create --force did not write a new raid1 array (uuid $u3, level $lvl)"
log "exit codes and refusals ok"

# --- valgrind: no leaks, no errors ------------------------------------------
if command -v valgrind >/dev/null; then
	# vg EXPECTED_RC ARGS...: run raidfuse under valgrind; 99 means it found
	# a leak or an error.
	vg() {
		local want=$1 rc=0
		shift
		valgrind -q --leak-check=full --errors-for-leak-kinds=all --error-exitcode=99 \
			--log-file="$WORK/vg.log" "$RAIDFUSE" "$@" >"$WORK/vg.out" 2>&1 || rc=$?
		[ "$rc" != 99 ] || fail "valgrind found errors in 'raidfuse $*': $(cat "$WORK/vg.log")"
		[ "$rc" = "$want" ] || fail "under valgrind 'raidfuse $*' exited $rc, expected $want: $(cat "$WORK/vg.out")"
		[ ! -s "$WORK/vg.log" ] || fail "valgrind reported on 'raidfuse $*': $(cat "$WORK/vg.log")"
	}
	v="$WORK/vg"
	mkdir -p "$v"
	vg 0 create --level 6 --raid-devices 5 --chunk 64K --layout right-symmetric --name vg6 --size 8M \
		"$v/a" "$v/b" "$v/c" "$v/d" "$v/e"
	vg 0 examine "$v/a" "$v/b" "$v/c" "$v/d" "$v/e"
	grep -q "Raid Level : raid6" "$WORK/vg.out" || fail "examine under valgrind printed no raid6 superblock"
	vg 0 create --level 10 --raid-devices 4 --chunk 4K --size 8M --force "$v/a" "$v/b" "$v/c" "$v/d"
	vg 0 create --level linear --raid-devices 2 --size 8M "$v/f" "$v/g"
	head -c 1048576 /dev/urandom >"$v/junk"
	vg 1 examine "$v/junk"
	vg 1 examine "$v/nonexistent"
	vg 1 examine "$v/a" "$v/junk"
	vg 1 create --level 5 --raid-devices 3 --size 8M "$v/a" "$v/b" "$v/c" # already md, no --force
	vg 1 create --level 5 --raid-devices 3 --chunk 3K --size 8M "$v/x" "$v/y" "$v/z"
	vg 2 frobnicate
	vg 0 --help
	vg 0 --version
	log "valgrind: create, examine and error paths leak-free"
else
	log "valgrind not installed: leak checks not run"
fi

log "PASS"
exit 0
