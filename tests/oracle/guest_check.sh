#!/bin/sh
# guest_check.sh - runs INSIDE the md-oracle VM (busybox ash, real Linux md,
# mdadm 4.2); started by tests/integration/md_oracle.sh through md-oracle's
# run.sh. Adapted from md-oracle/examples/assemble.sh and degraded.sh, for
# several arrays in one boot.
#
# ORACLE_ARRAYS lists the arrays, separated by ';'. Each entry is
#     NAME|KIND|DEV DEV ...|STALE
# with DEVs the member disks to assemble (vda, vdb, ...), in any order.
#   KIND full      assemble, hash, and for raid1/4/5/6/10 run "check"
#   KIND control   same as full (the host expects mismatch_cnt > 0 there)
#   KIND replacing same as full; one DEV replaces another (md resumes the
#                  copy, which md-wait waits for before the hash)
#   KIND rebuilt, readded, resynced, replaced (life-cycle cases): as full,
#                  with mdadm --examine and --examine-bitmap of every DEV
#                  first (ex_roles, ex_events, ex_fmap, ex_recovery,
#                  bm_events, bm_cleared, bm_dirty: one value per DEV, in
#                  order, comma-separated), and own_sync: how many kernel
#                  messages, from the assembly until md is idle, say that md
#                  resynced, recovered, kicked a non-fresh member or found
#                  the bitmap out of date (own_sync_msgs lists them)
#   KIND degraded  the DEVs are the members that raidfuse wrote while it ran
#                  degraded, STALE the member it left out (its image is as
#                  "raidfuse create" wrote it). First a read-only assembly with
#                  STALE included (md must leave it out, by its event count),
#                  then a read-write assembly of the DEVs alone; both hashed.
#                  A degraded raid6 is also checked: md compares the parity
#                  it has left (handle_parity_checks6).
# md arrays are /dev/md0, /dev/md1, ... in list order, one at a time.
#
# ORACLE_OUT=vdX (optional): an output disk. Each array's contents, as md
# reads them (O_DIRECT, no page cache), are copied onto it at a MiB offset
# (printed as <tag>_out_mib= and <tag>_bytes=) for the host to hash; that is
# much faster than busybox sha256sum under TCG. Without ORACLE_OUT the guest
# prints sha256= itself (page cache dropped first), as examples/assemble.sh.
#
# Output: lines "ORACLE array=NAME key=value ..." for the host to parse, the
# mdadm messages and --detail, and the kernel messages of each array
# ("dmesg: ..."). The script exits 0 unless the spec itself is malformed:
# per-array failures are results, judged by the host.

PATH=/sbin:/bin:/usr/sbin:/usr/bin
n=0

res() { echo "ORACLE array=$name $*"; }

# kernel messages since the last call, prefixed, so each array gets its own
dmesg_mark=0
dmesg_new() {
	total=$(dmesg | wc -l)
	if [ "$total" -gt "$dmesg_mark" ]; then
		dmesg | tail -n +$((dmesg_mark + 1)) | sed 's/^/dmesg: /'
	fi
	dmesg_mark=$total
}

hash_md() {     # hash_md /dev/mdN -> sha256 of the whole device, page cache dropped
	sync
	echo 3 > /proc/sys/vm/drop_caches
	sha256sum < "$1" | cut -d' ' -f1
}

# capture TAG: the contents of $md, as TAG=sha256 or copied onto ORACLE_OUT
out_mib=0
capture() {
	if [ -z "${ORACLE_OUT:-}" ]; then
		res "$1=$(hash_md "$md")"
		return
	fi
	bytes=$(blockdev --getsize64 "$md")
	if dd if="$md" of="/dev/$ORACLE_OUT" bs=1M seek="$out_mib" iflag=direct oflag=direct \
	      2>/tmp/dd.err; then
		res "$1_out_mib=$out_mib $1_bytes=$bytes"
	else
		cat /tmp/dd.err
		res "$1_out_mib=FAILED"
	fi
	out_mib=$((out_mib + (bytes + 1048575) / 1048576))
}

redundant() {   # redundant SYSDIR
	case $(cat "$1/level" 2>/dev/null) in
		raid1|raid4|raid5|raid6|raid10) return 0 ;;
	esac
	return 1
}

# which member disks md took into the array (dev-vdX entries), sorted
active_members() {
	ls -d "$1"/dev-* 2>/dev/null | sed 's,.*/dev-,,' | sort | tr '\n' ' ' | sed 's/ $//'
}

up() { cut -d' ' -f1 /proc/uptime; }

# examine_members: the superblock and bitmap fields of every DEV, as mdadm
# reads them, before the assembly
exf() { sed -n "s/^ *$1 : *//p" | head -n 1; }
examine_members() {
	roles= events= fmap= rec= bev= bcl= bdirty=
	for d in $devs; do
		ex=$(mdadm --examine "/dev/$d" 2>&1)
		bx=$(mdadm --examine-bitmap "/dev/$d" 2>&1)
		echo "+ mdadm --examine /dev/$d; mdadm -X /dev/$d"
		echo "$ex" | grep -E 'Feature Map|Events|Device Role|Array State|Recovery Offset|State :|Dev Number'
		echo "$bx" | grep -E 'Events|Bitmap :|State'
		r=$(echo "$ex" | exf 'Device Role')
		case $r in
			"Active device "*) r=${r#Active device } ;;
			"Replacement device "*) r=R${r#Replacement device } ;;
			spare) r=S ;;
			*) r=$(echo "$r" | tr -c 'A-Za-z0-9\n' _) ;;
		esac
		o=$(echo "$ex" | exf 'Recovery Offset' | cut -d' ' -f1)
		roles=$roles${roles:+,}$r
		events=$events${events:+,}$(echo "$ex" | exf Events)
		fmap=$fmap${fmap:+,}$(echo "$ex" | exf 'Feature Map')
		rec=$rec${rec:+,}${o:--}
		bev=$bev${bev:+,}$(echo "$bx" | exf Events)
		bcl=$bcl${bcl:+,}$(echo "$bx" | exf 'Events Cleared')
		bdirty=$bdirty${bdirty:+,}$(echo "$bx" | sed -n 's/.*chunks), *\([0-9]*\) dirty.*/\1/p')
	done
	res "ex_roles=$roles ex_events=$events ex_fmap=$fmap ex_recovery=$rec"
	res "bm_events=$bev bm_cleared=$bcl bm_dirty=$bdirty"
}

one_array() {
	t0=$(up)
	md=/dev/md$n
	sys=/sys/block/md$n/md
	paths=
	for d in $devs; do paths="$paths /dev/$d"; done
	echo
	echo "######## $name ($kind) on $md: $devs${stale:+ (stale: $stale)}"

	if [ "$kind" = degraded ] && [ -n "$stale" ]; then
		echo "+ mdadm --assemble --readonly --run $md$paths /dev/$stale"
		if mdadm --assemble --readonly --run "$md" $paths "/dev/$stale" 2>&1; then
			res "stale_assemble=ok stale_members=$(active_members "$sys" | tr ' ' ,)" \
			    "stale_degraded=$(cat "$sys/degraded" 2>/dev/null)"
			capture stale_sha256
			mdadm --stop "$md" 2>&1
		else
			res "stale_assemble=FAILED"
			mdadm --stop "$md" >/dev/null 2>&1
		fi
		dmesg_new
	fi

	lifecycle=
	case $kind in rebuilt|readded|resynced|replaced) lifecycle=1; examine_members; dmesg_new ;; esac
	echo "+ mdadm --assemble --run $md$paths"
	if ! mdadm --assemble --run "$md" $paths 2>&1; then
		res "assemble=FAILED"
		for p in $paths; do mdadm --examine "$p" 2>&1; done
		mdadm --stop "$md" >/dev/null 2>&1
		dmesg_new
		return 0
	fi
	# As found on disk, before md starts a resync of its own: resync_start
	# "none" means the superblocks said clean. A number means md resyncs and
	# rewrites parity/mirrors, which would hide parity errors from the check.
	res "assemble=ok level=$(cat "$sys/level") raid_disks=$(cat "$sys/raid_disks")" \
	    "layout=$(cat "$sys/layout" 2>/dev/null) chunk=$(cat "$sys/chunk_size" 2>/dev/null)" \
	    "members=$(active_members "$sys" | tr ' ' ,)"
	res "initial_resync_start=$(cat "$sys/resync_start" 2>/dev/null || echo n/a)" \
	    "initial_sync_action=$(cat "$sys/sync_action" 2>/dev/null || echo n/a)" \
	    "degraded=$(cat "$sys/degraded" 2>/dev/null || echo n/a)"
	md-wait "$md"
	if [ -n "$lifecycle" ]; then
		own=$(dmesg | tail -n +$((dmesg_mark + 1)) |
		      grep -E 'md: (resync|recovery|reshape) of RAID|non-fresh|out of date|forcing full|kicking' |
		      sed 's/^\[[^]]*\] *//' | tr ' ' _ | tr '\n' '|')
		res "own_sync=$(printf '%s' "$own" | tr '|' '\n' | grep -c .) own_sync_msgs=${own:-none}"
	fi
	mdadm --detail "$md" 2>&1 | grep -vE '^ *$'
	res "array_size=$(blockdev --getsize64 "$md")"
	t1=$(up)
	capture sha256
	t2=$(up)
	if redundant "$sys" && { [ "$kind" != degraded ] || [ "$(cat "$sys/level")" = raid6 ]; }; then
		echo check > "$sys/sync_action"
		md-wait "$md" 600
		res "mismatch_cnt=$(cat "$sys/mismatch_cnt")"
	fi
	res "hash_seconds=$(awk -v a="$t1" -v b="$t2" 'BEGIN { print b - a }') check_seconds=$(awk -v a="$t2" -v b="$(up)" 'BEGIN { print b - a }')"
	res "state=$(cat "$sys/array_state")"
	mdadm --stop "$md" 2>&1
	dmesg_new
	res "seconds=$(awk -v a="$t0" -v b="$(up)" 'BEGIN { print b - a }')"
}

[ -n "${ORACLE_ARRAYS:-}" ] || { echo "guest_check.sh: ORACLE_ARRAYS is empty"; exit 2; }
echo "oracle: $(uname -r), $(mdadm --version 2>&1)"
dmesg_new >/dev/null        # boot messages are not interesting here
rest=$ORACLE_ARRAYS
while [ -n "$rest" ]; do
	entry=${rest%%;*}
	case $rest in *\;*) rest=${rest#*;} ;; *) rest= ;; esac
	[ -n "$entry" ] || continue
	oldifs=$IFS; IFS='|'
	set -- $entry
	IFS=$oldifs
	[ $# -ge 3 ] || { echo "guest_check.sh: bad entry '$entry'"; exit 2; }
	name=$1 kind=$2 devs=$3 stale=${4:-}
	one_array
	n=$((n + 1))
done
echo "ORACLE done arrays=$n"
