#!/bin/bash
# cli_create_examine.sh - arrays made by 'raidfuse create' are md 1.2 arrays
# as mdadm sees them, and 'raidfuse examine' reports the same superblocks.
#
# For every level (linear, 0, 1, 10 in layouts n2 f2 o2 n3, 5 in each of its
# four rotating layouts and parity-last, 6 in several layouts) and chunk
# sizes 4K, 64K and 1M, plus the short layout names (la, rs, ra), the
# parity-first/-last and RAID6 "-6" layouts and a bare chunk number (KiB),
# it creates member files, then checks on every
# member, through 'mdadm --examine': Raid Level, Layout (raid5/6/10), Chunk
# Size (chunked levels), Raid Devices, Device Role (Active device i for
# member i), Array UUID (one for all members, the one 'raidfuse examine'
# prints), Name, State clean, "Checksum : ... - correct", the room for a
# bad block log (512 entries at 16 sectors, as mdadm), Array Size against
# the level's capacity; and that 'raidfuse examine' prints the same values
# field by field. It also checks the CLI's exit codes (--help, --version, an
# unknown verb, create refusals, --force) and runs create/examine and their
# error paths under valgrind, which must find no leak and no error.

. "$(dirname "$0")/lib.sh"

require_cmd mdadm
[ -x "$RAIDFUSE" ] || fail "no raidfuse binary at $RAIDFUSE"

MB=$((1024 * 1024))
MEMBER_SIZE=12M # 1 MiB data offset + room for several 1 MiB chunks

# parse_ex FILE ARRAY: load an examine listing ("Field : value" lines; mdadm
# and raidfuse indent differently) into the associative array ARRAY, first
# occurrence of each field, so the checks below need no subprocesses.
declare -A MD RF
parse_ex() {
	local -n _a=$2
	local line re='^[[:space:]]*([A-Za-z][A-Za-z ]*[A-Za-z]) : (.*)$'
	_a=()
	while IFS= read -r line; do
		if [[ $line =~ $re ]] && [ -z "${_a[${BASH_REMATCH[1]}]+x}" ]; then
			_a[${BASH_REMATCH[1]}]=${BASH_REMATCH[2]}
		fi
	done <"$1"
}

# expect ARRAY FIELD WANT WHAT: fail unless FIELD is exactly WANT.
expect() {
	local -n _e=$1
	local got=${_e[$2]-}
	[ "$got" = "$3" ] || fail "$4: '$2' is '$got', expected '$3'"
}

# chunk_kib 64K -> 64, 1M -> 1024, 64 -> 64 (mdadm prints "Chunk Size : 1024K")
chunk_kib() {
	case $1 in
	*K) echo "${1%K}" ;;
	*M) echo $((${1%M} * 1024)) ;;
	*) echo "$1" ;; # a bare number is KiB, as in mdadm
	esac
}

# check_array LEVEL N CHUNK LAYOUT NAME: create an array and check it.
# LAYOUT is the --layout value ("" for the default); NAME the --name ("" none).
check_array() {
	local level=$1 n=$2 chunk=$3 layout=$4 name=$5
	local tag="level=$level n=$n chunk=$chunk layout=${layout:-default}"
	local dir="$WORK/a" i m uuid="" args=()

	rm -rf "$dir" && mkdir -p "$dir" || fail "cannot make $dir"
	local members=()
	for ((i = 0; i < n; i++)); do members+=("$dir/m$i"); done

	args=(--level "$level" --raid-devices "$n" --chunk "$chunk" --size "$MEMBER_SIZE")
	[ -n "$layout" ] && args+=(--layout "$layout")
	[ -n "$name" ] && args+=(--name "$name")
	"$RAIDFUSE" create "${args[@]}" "${members[@]}" >"$dir/create.out" 2>&1 ||
		fail "$tag: raidfuse create failed: $(cat "$dir/create.out")"
	# --chunk on a level without chunks: created, with a warning saying so.
	case $level in
	1 | linear)
		grep -q "warning: --chunk has no effect on " "$dir/create.out" ||
			fail "$tag: no warning that --chunk has no effect: $(cat "$dir/create.out")" ;;
	*)
		grep -q "warning" "$dir/create.out" && fail "$tag: unexpected warning: $(cat "$dir/create.out")" ;;
	esac

	# What mdadm should report for this array.
	# Array Size = per-member data x data_disks / copies (mdadm's own
	# formula in --examine, from the superblock's size field).
	local want_level want_layout="" chunked=1 data_disks copies=1
	case $level in
	linear) want_level=linear chunked=0 data_disks=$n ;;
	0) want_level=raid0 data_disks=$n ;;
	1) want_level=raid1 chunked=0 data_disks=1 ;;
	10)
		want_level=raid10 data_disks=$n
		case ${layout:-n2} in
		n2) want_layout=near=2 copies=2 ;;
		n3) want_layout=near=3 copies=3 ;;
		f2) want_layout=far=2 copies=2 ;;
		o2) want_layout=offset=2 copies=2 ;;
		*) fail "test bug: no expectation for raid10 layout $layout" ;;
		esac
		;;
	5 | 6)
		want_level=raid$level data_disks=$((level == 5 ? n - 1 : n - 2))
		case ${layout:-ls} in
		ls) want_layout=left-symmetric ;;
		la) want_layout=left-asymmetric ;;
		rs) want_layout=right-symmetric ;;
		ra) want_layout=right-asymmetric ;;
		*) want_layout=$layout ;;
		esac
		;;
	esac
	local ckib
	ckib=$(chunk_kib "$chunk")

	for ((i = 0; i < n; i++)); do
		m=${members[i]}
		local t="$tag member $i"
		[ "$(stat -c %s "$m")" = $((12 * MB)) ] || fail "$t: member is $(stat -c %s "$m") bytes, not $MEMBER_SIZE"
		mdadm --examine "$m" >"$dir/md" 2>&1 || fail "$t: mdadm --examine failed: $(cat "$dir/md")"
		"$RAIDFUSE" examine "$m" >"$dir/rf" 2>&1 || fail "$t: raidfuse examine failed: $(cat "$dir/rf")"
		parse_ex "$dir/md" MD
		parse_ex "$dir/rf" RF

		expect MD Magic a92b4efc "$t (mdadm)"
		expect MD Version 1.2 "$t (mdadm)"
		expect MD "Raid Level" "$want_level" "$t (mdadm)"
		expect MD "Raid Devices" "$n" "$t (mdadm)"
		expect MD "Device Role" "Active device $i" "$t (mdadm)"
		expect MD State clean "$t (mdadm)"
		# No journal, no reshape. raid1/5/6/10 carry an internal
		# write-intent bitmap by default (0x1); raid0 may carry
		# MD_FEATURE_RAID0_LAYOUT (0x1000) with an explicit layout.
		case $level in
		0)
			case ${MD[Feature Map]-} in
			0x0 | 0x1000) ;;
			*) fail "$t: mdadm Feature Map '${MD[Feature Map]-}', expected 0x0 (or 0x1000 for raid0)" ;;
			esac ;;
		1 | 5 | 6 | 10)
			expect MD "Feature Map" 0x1 "$t (mdadm)"
			expect MD "Internal Bitmap" "8 sectors from superblock" "$t (mdadm)" ;;
		*)
			expect MD "Feature Map" 0x0 "$t (mdadm)" ;;
		esac
		[ -n "$want_layout" ] && expect MD Layout "$want_layout" "$t (mdadm)"
		[ "$chunked" = 1 ] && expect MD "Chunk Size" "${ckib}K" "$t (mdadm)"
		[[ ${MD[Checksum]-} =~ ^[0-9a-f]{1,8}\ -\ correct$ ]] ||
			fail "$t: mdadm says checksum '${MD[Checksum]-}'"
		[[ ${MD[Array State]-} =~ ^A{$n}\  ]] ||
			fail "$t: mdadm Array State '${MD[Array State]-}' is not $n active members"
		# mdadm may append "(local to host X)".
		local nm=${MD[Name]-}
		[ -z "$name" ] || [ "${nm%% *}" = "$name" ] ||
			fail "$t: mdadm Name '${MD[Name]-}', expected '$name'"

		# One Array UUID across the members.
		local u=${MD[Array UUID]-}
		[[ $u =~ ^[0-9a-f]{8}(:[0-9a-f]{8}){3}$ ]] || fail "$t: bad Array UUID '$u'"
		if [ -z "$uuid" ]; then uuid=$u; else
			[ "$u" = "$uuid" ] || fail "$t: Array UUID $u differs from member 0's $uuid"
		fi

		# Capacity: Array Size = data disks x per-member data, in KiB. mdadm
		# prints no Array Size for linear and raid0 (md keeps no size there).
		local dev_sect array_kib want_kib
		dev_sect=${MD[Used Dev Size]-}
		dev_sect=${dev_sect%% *}
		if [ -z "$dev_sect" ] || [ "$dev_sect" = 0 ]; then
			dev_sect=${MD[Avail Dev Size]-}
			dev_sect=${dev_sect%% *}
		fi
		[ "${dev_sect:-0}" -gt 0 ] || fail "$t: mdadm shows no device size"
		if [ "$chunked" = 1 ]; then
			dev_sect=$((dev_sect / (ckib * 2) * (ckib * 2)))
		fi
		want_kib=$((dev_sect * 512 * data_disks / copies / 1024))
		[ "$want_kib" -gt 0 ] || fail "$t: no whole chunk fits in a member"
		array_kib=${MD[Array Size]-}
		array_kib=${array_kib%% *}
		case $level in
		linear | 0) [ -z "$array_kib" ] || [ "$array_kib" = "$want_kib" ] ||
			fail "$t: Array Size $array_kib KiB, expected $want_kib KiB" ;;
		*) [ "$array_kib" = "$want_kib" ] ||
			fail "$t: Array Size '$array_kib' KiB, expected $want_kib KiB ($data_disks x $((dev_sect / 2)) KiB / $copies)" ;;
		esac

		# raidfuse examine reports the same superblock, field by field.
		local f
		for f in Magic Version "Feature Map" "Array UUID" "Device UUID" "Raid Level" \
			"Raid Devices" "Data Offset" "Super Offset" State Events \
			"Device Role" "Bad Block Log" Checksum Layout "Chunk Size" Rounding; do
			[ "${RF[$f]-}" = "${MD[$f]-}" ] ||
				fail "$t: raidfuse examine '$f' is '${RF[$f]-}', mdadm says '${MD[$f]-}'"
		done
		# These mdadm decorates with extra words after the first one.
		for f in Name "Array Size" "Avail Dev Size" "Array State"; do
			[ "$level/$f" = "10/Array Size" ] && continue
			local x=${RF[$f]-} y=${MD[$f]-}
			[ "${x%% *}" = "${y%% *}" ] ||
				fail "$t: raidfuse examine '$f' is '${RF[$f]-}', mdadm says '${MD[$f]-}'"
		done
		# For RAID10 mdadm --examine prints size x members / copies, which
		# need not be whole chunks; raidfuse prints what md's raid10_size()
		# gives: (chunks per member / far copies) x members / near copies.
		if [ "$level" = 10 ]; then
			local nc=1 fc=1 rf_kib
			case ${layout:-n2} in
			n*) nc=$copies ;;
			*) fc=$copies ;;
			esac
			rf_kib=${RF[Array Size]-}
			rf_kib=${rf_kib%% *}
			want_kib=$((dev_sect / (ckib * 2) / fc * n / nc * ckib))
			[ "$rf_kib" = "$want_kib" ] ||
				fail "$t: raidfuse examine Array Size '$rf_kib' KiB, md's raid10_size gives $want_kib KiB"
		fi
		[ -n "$want_layout" ] && expect RF Layout "$want_layout" "$t (raidfuse examine)"
		# Room for md's bad block log where mdadm leaves it.
		expect MD "Bad Block Log" "512 entries available at offset 16 sectors" "$t (mdadm)"
		[ "$chunked" = 1 ] && expect RF "Chunk Size" "${ckib}K" "$t (raidfuse examine)"
		[ "${RF[Array UUID]-}" = "$uuid" ] || fail "$t: raidfuse examine Array UUID '${RF[Array UUID]-}', mdadm $uuid"
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
# check LEVEL N LAYOUT NAME: one array in the current chunk size.
check() {
	check_array "$1" "$2" "$chunk" "$3" "$4"
	count=$((count + 1))
}
for chunk in 4K 64K 1M; do
	check linear 3 "" ""
	check 0 3 "" "stripes"
	check 1 2 "" ""
	check 1 3 "" ""
	check 10 4 "" ""
	for layout in n2 f2 o2 n3; do
		check 10 4 "$layout" "r10-$layout"
	done
	check 10 3 n2 "" # odd member count: copies wrap around the row
	for layout in left-symmetric left-asymmetric right-symmetric right-asymmetric; do
		check 5 4 "$layout" "r5-$layout"
	done
	check 5 3 "" ""
	check 5 5 parity-last ""
	check 6 5 "" "r6"
	check 6 4 right-asymmetric ""
	check 6 6 left-asymmetric-6 ""
done
# The short layout names, a bare chunk number (KiB, as in mdadm), more.
chunk=64
check 5 4 la ""
check 5 4 rs ""
check 5 4 ra ""
check 5 4 parity-first ""
for layout in left-symmetric right-symmetric parity-first parity-last left-symmetric-6 \
	right-symmetric-6 right-asymmetric-6 parity-first-6; do
	check 6 5 "$layout" ""
done
log "$count arrays checked with mdadm --examine and raidfuse examine"

# --- exit codes --------------------------------------------------------------
out=$("$RAIDFUSE" --help 2>&1) || fail "raidfuse --help exited $?"
echo "$out" | grep -q "Usage" || fail "raidfuse --help prints no usage"
# Every verb of raidfuse --help, with --help or -h: its usage on stdout, exit 0.
verbs=$("$RAIDFUSE" --help | sed -n '/^Verbs:/,/^$/s/^  \([a-z]*\) .*/\1/p')
[ "$(echo "$verbs" | wc -w)" -ge 13 ] || fail "raidfuse --help lists too few verbs: $verbs"
for verb in $verbs; do
	for flag in --help -h; do
		out=$("$RAIDFUSE" "$verb" $flag 2>/dev/null) || fail "raidfuse $verb $flag exited $?"
		echo "$out" | grep -q "Usage: raidfuse $verb" || fail "raidfuse $verb $flag prints no usage on stdout"
	done
done
want_version=$(sed -n 's/^AC_INIT(\[raidfuse\], *\[\([^]]*\)\].*/\1/p' "$TOP_SRCDIR/configure.ac")
out=$("$RAIDFUSE" --version 2>&1) || fail "raidfuse --version exited $?"
[ -n "$want_version" ] && { echo "$out" | grep -qF "$want_version" || fail "--version prints '$out', configure.ac says $want_version"; }
rc=0
"$RAIDFUSE" frobnicate >/dev/null 2>&1 || rc=$?
[ "$rc" = 2 ] || fail "an unknown verb exited $rc, expected 2"
# A mistyped verb before a directory is not an fstab source ("cannot open").
mkdir -p "$WORK/verbdir"
rc=0
(cd "$WORK" && "$RAIDFUSE" unmount verbdir) >"$WORK/verb.out" 2>&1 || rc=$?
[ "$rc" = 2 ] && grep -q "unknown verb 'unmount'" "$WORK/verb.out" ||
	fail "raidfuse unmount DIR exited $rc: $(head -n 2 "$WORK/verb.out")"
rc=0
"$RAIDFUSE" >/dev/null 2>&1 || rc=$?
[ "$rc" = 2 ] || fail "no verb at all exited $rc, expected 2"
# An option a verb does not know is a usage error (2) that names it, not a
# member or mount point to look for (examine and verify opened it as a
# member and exited 1); "--" lets a member's name begin with '-'.
mkdir -p "$WORK/opt" "$WORK/opt/mnt"
for args in "examine --no-such-option $WORK/opt/m" "examine $WORK/opt/m --no-such-option" \
	"verify --no-such-option $WORK/opt/m" "fail $WORK/opt/mnt --no-such-option" \
	"remove --no-such-option $WORK/opt/m" "add $WORK/opt/mnt --no-such-option" \
	"replace $WORK/opt/mnt dev0 --no-such-option" "status --no-such-option $WORK/opt/mnt" \
	"check --no-such-option" "umount --no-such-option" "wait --no-such-option" "create --no-such-option $WORK/opt/m" \
	"mount --no-such-option $WORK/opt/m $WORK/opt/mnt"; do
	rc=0
	# shellcheck disable=SC2086
	err=$("$RAIDFUSE" $args 2>&1 >/dev/null) || rc=$?
	[ "$rc" = 2 ] || fail "raidfuse $args exited $rc, expected 2 (usage): $err"
	echo "$err" | grep -q "Usage: raidfuse ${args%% *}" || fail "raidfuse $args prints no usage: $err"
done
err=$("$RAIDFUSE" examine --no-such-option "$WORK/opt/m" 2>&1 >/dev/null) || true
echo "$err" | grep -q "unrecognized option '--no-such-option'" ||
	fail "examine does not name the option it does not know: $err"
"$RAIDFUSE" create --level 1 --raid-devices 2 --size 8M "$WORK/opt/-lead" "$WORK/opt/b" >/dev/null 2>&1 ||
	fail "create of a mirror with a member named -lead failed"
out=$(cd "$WORK/opt" && "$RAIDFUSE" examine -- -lead b) || fail "examine -- -lead b exited $?"
[ "$(echo "$out" | grep -c 'Magic : a92b4efc')" = 2 ] || fail "examine -- -lead b shows not both members: $out"
out=$(cd "$WORK/opt" && "$RAIDFUSE" verify -- -lead b) || fail "verify -- -lead b exited $?: $out"

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
# A refused create writes nothing: two good members and a directory.
rm -rf "$d" && mkdir -p "$d/dir"
head -c 8388608 /dev/urandom >"$d/a"
head -c 8388608 /dev/urandom >"$d/b"
sums=$(cd "$d" && sha256sum a b)
rc=0
"$RAIDFUSE" create --level 5 --raid-devices 3 --chunk 64K "$d/a" "$d/b" "$d/dir" >/dev/null 2>&1 || rc=$?
[ "$rc" != 0 ] || fail "create with a directory as a member succeeded"
(cd "$d" && echo "$sums" | sha256sum --quiet -c) >/dev/null 2>&1 ||
	fail "a refused create (one member a directory) modified the other members"

# create zeroes the data areas of existing members (so parity is consistent
# from the start): fill three members with random data first.
head -c 8388608 /dev/urandom >"$d/c"
"$RAIDFUSE" create --level 5 --raid-devices 3 --chunk 64K "$d/a" "$d/b" "$d/c" >/dev/null 2>&1 ||
	fail "create over members full of random data failed"
for m in a b c; do
	[ "$(stat -c %s "$d/$m")" = 8388608 ] || fail "create changed the size of existing member $m"
	off=$(mdadm --examine "$d/$m" | sed -n 's/^ *Data Offset : \([0-9]*\) sectors.*/\1/p')
	[ -n "$off" ] || fail "no Data Offset for member $m"
	cmp -s <(tail -c +$((off * 512 + 1)) "$d/$m") <(head -c $((8388608 - off * 512)) /dev/zero) ||
		fail "create left non-zero bytes in the data area of member $m"
done
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
	mkdir -p "$v/mnt"
	vg 2 mount --program "$v/nonexistent" "$v/a" "$v/b" "$v/c" "$v/d" "$v/mnt"
	grep -q "nonexistent" "$WORK/vg.out" || fail "mount --program: the error does not name it"
	vg 2 frobnicate
	vg 0 --help
	vg 0 --version
	log "valgrind: create, examine and error paths leak-free"
else
	log "valgrind not installed: leak checks not run"
fi

log "PASS"
exit 0
