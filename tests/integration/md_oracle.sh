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
#   * a control copy of raid1 with one flipped byte must give mismatch_cnt > 0
#     (proves that check really ran and would catch an error);
#   * an array stopped in the middle of a raidfuse "replace" (the copy marked
#     with md's MD_FEATURE_REPLACEMENT): md takes both the member and its
#     replacement, resumes the copy (sync_action recover), reads the same
#     bytes and finds mismatch_cnt 0 afterwards.
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
# name  level  members  chunk  layout  member-size(s)  mount-option  left-out-role
# One size: "raidfuse create --size"; a list: members pre-sized, unequal.
# A left-out role makes a degraded case: raidfuse mounts it --run without
# that member; R<role> a replacing case: that role's member is being
# replaced when raidfuse stops. raid1 also gets a corrupted control copy
# (raid1-control).
SPECS=(
	"linear             linear 3 -   -                16M,24M,20M -           -"
	"raid0-64k          0      3 64K -                16M         -           -"
	"raid0-64k-zones    0      2 64K -                16M,20M     -           -"
	"raid1              1      2 -   -                16M         -           -"
	"raid10-n2-64k      10     4 64K n2               16M         -           -"
	"raid10-n2-64k-3dev 10     3 64K n2               16M         -           -"
	"raid10-f2-64k      10     4 64K f2               16M         -           -"
	"raid10-o2-64k-3dev 10     3 64K o2               16M         -           -"
	"raid6-64k          6      5 64K left-symmetric   16M         -           -"
	"raid5-ls-64k       5      4 64K left-symmetric   16M         -           -"
	"raid5-ra-64k       5      3 64K right-asymmetric 17000K      -           -"
	"raid5-ls-4k        5      3 4K  left-symmetric   16M         --direct-io -"
	"raid5-rs-1m        5      4 1M  right-symmetric  20M         -           -"
	"raid5-ls-64k-deg   5      4 64K left-symmetric   16M         -           1"
	"raid6-64k-deg      6      5 64K left-symmetric   16M         -           2"
	"raid5-ls-64k-repl  5      4 64K left-symmetric   16M         -           R1"
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

declare -A EXP SIZE LEVEL KIND STALE BOOT BOOT_DEVS
NAMES=()
FAILS=()
note_fail() { FAILS+=("$*"); printf '%s: FAIL: %s\n' "$TEST_NAME" "$*" >&2; }
letters=(a b c d e f g h i j k l m n o p q r s t u v w x y z)

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
	[ "$level" = 1 ] && need=$((n * 2))      # + the control copy
	[[ $miss == R* ]] && need=$((n + 1))     # + the replacement
	if [ $((used + need)) -gt $maxdisks ]; then boot=$((boot + 1)); used=0; fi
	used=$((used + need))
	BOOT_NUM+=("$boot")
done
NBOOTS=$((boot + 1))

# raidfuse side of one array: create, mount, write, hash, umount, re-read.
# Sets EXP/SIZE/... and appends the array's disks and guest entry to
# BOOT_IMGS / BOOT_ENTRY. Returns 1 (after note_fail) if raidfuse failed.
BOOT_IMGS=() BOOT_ENTRY='' OUT_MIB=1
prepare() {
	local name=$1 level=$2 n=$3 chunk=$4 layout=$5 sizes=$6 mopt=$7 miss=$8 repl=
	local d=$WORK/$name i sz=() members=() present=() cre=() mo=() ro=()
	if [[ $miss == R* ]]; then repl=${miss#R} miss=-; fi
	local mnt=$d/mnt vol out sha_mnt sha_model sha_re t0
	t0=$(now)
	mkdir -p "$d"
	IFS=, read -ra sz <<<"$sizes"
	for ((i = 0; i < n; i++)); do members+=("$d/m$i.img"); done
	cre=(create --level "$level" --raid-devices "$n" --name "$name")
	[ "$chunk" = - ] || cre+=(--chunk "$chunk")
	[ "$layout" = - ] || cre+=(--layout "$layout")
	if [ ${#sz[@]} -gt 1 ]; then
		for ((i = 0; i < n; i++)); do truncate -s "${sz[i]}" "${members[i]}"; done
	else
		cre+=(--size "${sz[0]}")
	fi
	out=$("$RAIDFUSE" "${cre[@]}" "${members[@]}" 2>&1) ||
		{ note_fail "$name: raidfuse ${cre[*]} failed: $out"; return 1; }

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
	log "$name: raidfuse ${cre[*]:1}${mo[*]:+ / mount ${mo[*]}}: ${SIZE[$name]} bytes written, sha256 $sha_model ($(secs "$t0" "$(now)") s)"
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

	if [ "$level" = 1 ]; then
		# control: the same mirror with one byte flipped on member 1's data
		local c=$d-control cn=$name-control off
		mkdir -p "$c"
		for ((i = 0; i < n; i++)); do cp --sparse=always "${members[i]}" "$c/m$i.img"; done
		off=$(( $("$RAIDFUSE" examine "$c/m1.img" | sed -n 's/^ *Data Offset : \([0-9]*\) sectors.*/\1/p') * 512 + 123457 ))
		python3 -c 'import os,sys; fd=os.open(sys.argv[1],os.O_RDWR); o=int(sys.argv[2]); b=os.pread(fd,1,o); os.pwrite(fd,bytes([b[0]^0x5a]),o)' \
			"$c/m1.img" "$off"
		devs=()
		for ((i = 0; i < n; i++)); do
			dl=vd${letters[${#BOOT_IMGS[@]}]}; BOOT_IMGS+=("$c/m$i.img"); devs+=("$dl")
		done
		NAMES+=("$cn") LEVEL[$cn]=1 KIND[$cn]=control SIZE[$cn]=${SIZE[$name]} EXP[$cn]='' BOOT[$cn]=$b
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
		full)
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
		degraded)
			[ "$sha" = "${EXP[$name]}" ] || bad+=("md degraded sha256 $sha != written ${EXP[$name]}")
			[ "$(val "$name" degraded)" = 1 ] || bad+=("md degraded=$(val "$name" degraded), expected 1")
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
