# shellcheck shell=bash disable=SC2154,SC2034,SC2015 # variables come from and go to kit.sh
# targets.sh - the things the benchmark kit measures (sourced by kit.sh):
# raidfuse arrays and the peers run side by side with them. Each target
# answers the same five calls:
#   tgt_check ID          can it run here? (prints the reason when not)
#   tgt_setup ID          create its storage (member files, pool, ...)
#   tgt_up ID block|fs    mount it; sets T_FILE (the file fio works on) in
#                         block mode, T_DIR (a directory on a file system)
#                         in fs mode, and T_PIDS (its daemons, for CPU time)
#   tgt_down ID           unmount it (storage and data stay)
#   tgt_teardown ID       check its integrity where it can, remove it all
# IDs: LEVEL-N arrays (jbod, raid0, raid1, raid10, raid5, raid6 of N member
# files; chunk $T_CHUNK), and the peers:
#   plain        the host file system the members live on, no FUSE
#   passthrough  libfuse's passthrough_ll example over a plain directory
#   zfs          zfs-fuse, raidz over $peer_members member files
#   nbd          nbdkit's file plugin with its readahead and cache filters,
#                behind nbdfuse (one backing file)
# Expects from kit.sh: $work, $rf, $log, $vol_bytes, $region_bytes,
# $peer_members, and lib-kit.sh.

T_FILE='' T_DIR='' T_PIDS='' T_CHUNK=64k T_CONTEXT=''
declare -A T_FS_MADE=()      # ID -> 1 once a file system was made on it
declare -A T_MNT_FS=()       # ID -> ext4 loop mount point while mounted
pt_bin=
zfs_pid='' zfs_own=0 zfs_pool=rfkit$$
nbd_pid=

tgt_is_array() { [[ $1 =~ ^(jbod|raid0|raid1|raid10|raid5|raid6)-([0-9]+)$ ]]; }

# array_geo ID -> "level members data_members" (mdadm level names)
array_geo() {
	[[ $1 =~ ^(jbod|raid0|raid1|raid10|raid5|raid6)-([0-9]+)$ ]] || return 1
	local l=${BASH_REMATCH[1]} n=${BASH_REMATCH[2]}
	case $l in
	jbod) [ "$n" -ge 1 ] && echo "linear $n $n" ;;
	raid0) [ "$n" -ge 2 ] && echo "0 $n $n" ;;
	raid1) [ "$n" -ge 2 ] && echo "1 $n 1" ;;
	raid10) [ "$n" -ge 4 ] && [ $((n % 2)) = 0 ] && echo "10 $n $((n / 2))" ;;
	raid5) [ "$n" -ge 3 ] && echo "5 $n $((n - 1))" ;;
	raid6) [ "$n" -ge 4 ] && echo "6 $n $((n - 2))" ;;
	esac
}
tgt_level() {
	if tgt_is_array "$1"; then array_geo "$1" | cut -d' ' -f1
	else case $1 in zfs) echo raidz1 ;; *) echo - ;; esac; fi
}
tgt_members() {
	if tgt_is_array "$1"; then array_geo "$1" | cut -d' ' -f2
	else case $1 in zfs) echo "$peer_members" ;; plain|passthrough|nbd) echo 1 ;; esac; fi
}

tgt_check() {
	case $1 in
	plain) return 0 ;;
	passthrough)
		[ -r /usr/share/doc/libfuse3-dev/examples/passthrough_ll.c ] ||
			{ echo "libfuse's passthrough_ll.c is missing (Debian: libfuse3-dev)"; return 1; }
		command -v gcc >/dev/null && command -v pkg-config >/dev/null ||
			{ echo "gcc and pkg-config are needed to build passthrough_ll"; return 1; } ;;
	zfs)
		command -v zfs-fuse >/dev/null && command -v zpool >/dev/null ||
			{ echo "zfs-fuse is not installed (Debian: zfs-fuse; kit.sh --install-deps)"; return 1; }
		[ "$peer_members" -ge 2 ] || { echo "raidz needs at least 2 members"; return 1; } ;;
	nbd)
		command -v nbdkit >/dev/null && command -v nbdfuse >/dev/null ||
			{ echo "nbdkit or nbdfuse is not installed (Debian: nbdkit, libnbd-bin; kit.sh --install-deps)"; return 1; } ;;
	*)
		tgt_is_array "$1" && array_geo "$1" >/dev/null || { echo "unknown target"; return 1; } ;;
	esac
}

# ------------------------------------------------------------- raidfuse
# rf_members ID N: the member paths, into the array RF_MEMBERS (paths may
# hold spaces: $work comes from --dir or $BENCH_DIR).
rf_members() { local i; RF_MEMBERS=(); for ((i = 0; i < $2; i++)); do RF_MEMBERS+=("$work/$1/m$i.img"); done; }
rf_setup() {
	local level n k mem_mib
	read -r level n k <<<"$(array_geo "$1")"
	# Member: its share of the volume, 1 MiB of metadata, 2 MiB of slack
	# for rounding to whole chunks.
	mem_mib=$(($(mib_ceil "$vol_bytes") / k + 3))
	mkdir -p "$work/$1"
	rf_members "$1" "$n"
	"$rf" create --level "$level" --raid-devices "$n" --chunk "$T_CHUNK" --size "${mem_mib}M" \
		"${RF_MEMBERS[@]}" >>"$log" 2>&1 || die "raidfuse create of $1 failed (see $log)"
	unset "T_FS_MADE[$1]"
}
rf_up() {
	local n mnt=$work/$1/mnt
	n=$(tgt_members "$1")
	mkdir -p "$mnt"
	rf_members "$1" "$n"
	"$rf" mount "${RF_MEMBERS[@]}" "$mnt" >>"$log" 2>&1 || die "raidfuse mount of $1 failed (see $log)"
	T_FILE=$mnt/volume.img
	T_PIDS=$(cat "$mnt/.raidfuse/pid")
	local vsz
	vsz=$(stat -c %s "$T_FILE")
	[ "$vsz" -ge "$vol_bytes" ] || die "$1: volume.img is $vsz bytes, smaller than the $vol_bytes needed"
	[ "$2" = fs ] || return 0
	ext4_up "$1" "$T_FILE"
}
rf_down() {
	ext4_down "$1"
	local mnt=$work/$1/mnt
	mountpoint -q "$mnt" || return 0
	"$rf" umount "$mnt" >>"$log" 2>&1 || die "raidfuse umount $mnt failed (see $log)"
}
# After the run: md's check on the unmounted members (parity or mirror
# copies against the data). Rows of suite "integrity".
rf_teardown() {
	local n out rc=0
	n=$(tgt_members "$1")
	if [ "$(tgt_level "$1")" != linear ] && [ "$(tgt_level "$1")" != 0 ]; then
		rf_members "$1" "$n"
		out=$("$rf" verify "${RF_MEMBERS[@]}" 2>&1) || rc=$?
		echo "$out" >>"$log"
		csv_row suite=integrity target="$1" kind=raidfuse level="$(tgt_level "$1")" members="$n" \
			chunk_kib="$(($(size_bytes "$T_CHUNK") >> 10))" phase=parity set="${T_CONTEXT:-}" \
			verified="$([ $rc = 0 ] && echo yes || echo no)" \
			note="raidfuse verify: $(echo "$out" | grep -i -m1 mismatch || echo "exit $rc")"
		[ $rc = 0 ] || warn "$1: raidfuse verify found mismatches: $out"
	fi
	rm -rf "${work:?}/$1"
}

# ext4 on a file (volume.img, the nbd file), loop-mounted at $work/ID/fs.
ext4_up() {
	local fs=$work/$1/fs
	if [ -z "${T_FS_MADE[$1]:-}" ]; then
		mkfs.ext4 -q -F -m 0 -E nodiscard,lazy_itable_init=0,lazy_journal_init=0 "$2" >>"$log" 2>&1 ||
			die "mkfs.ext4 on $2 failed (see $log)"
		T_FS_MADE[$1]=1
	fi
	mkdir -p "$fs"
	mount -o loop "$2" "$fs" >>"$log" 2>&1 || die "mount -o loop $2 failed (see $log)"
	T_MNT_FS[$1]=$fs
	T_DIR=$fs
}
ext4_down() {
	local fs=${T_MNT_FS[$1]:-}
	[ -n "$fs" ] || return 0
	umount "$fs" >>"$log" 2>&1 || die "umount $fs failed (see $log)"
	unset "T_MNT_FS[$1]"
}
# e2fsck -fn of the file system on FILE after the file-set runs: a row of
# suite "integrity".
ext4_check() {
	local out rc=0
	out=$(e2fsck -fn "$2" 2>&1) || rc=$?
	echo "$out" >>"$log"
	csv_row suite=integrity target="$1" kind="$3" level="$(tgt_level "$1")" members="$(tgt_members "$1")" \
		phase=fsck verified="$([ $rc = 0 ] && echo yes || echo no)" note="e2fsck -fn exit $rc"
	[ $rc = 0 ] || warn "$1: e2fsck -fn found errors (see $log)"
}

# ------------------------------------------------------------ plain
plain_setup() { mkdir -p "$work/plain/fs"; }
plain_up() { T_FILE=$work/plain/region.img; T_DIR=$work/plain/fs; T_PIDS=; }

# ------------------------------------------------------- passthrough
# libfuse's passthrough_ll example with one change: O_DIRECT is not passed
# on to the backing file. As shipped, its direct writes fail with EINVAL
# (it pwrite()s from libfuse's unaligned buffer); this way it opens the
# backing file buffered, as raidfuse opens its members.
build_passthrough() {
	local ex=/usr/share/doc/libfuse3-dev/examples
	pt_bin=$work/passthrough_ll
	sed 's/fd = open(buf, fi->flags & ~O_NOFOLLOW);/fd = open(buf, fi->flags \& ~(O_NOFOLLOW | O_DIRECT));/' \
		"$ex/passthrough_ll.c" >"$work/passthrough_ll.c"
	grep -q 'O_NOFOLLOW | O_DIRECT' "$work/passthrough_ll.c" || return 1
	cp "$ex"/*.h "$work/" 2>/dev/null || true
	# shellcheck disable=SC2046
	gcc -Wall -O2 -o "$pt_bin" "$work/passthrough_ll.c" $(pkg-config --cflags --libs fuse3) >>"$log" 2>&1
}
pt_pid=
pt_setup() {
	[ -n "$pt_bin" ] || build_passthrough || die "building passthrough_ll failed (see $log)"
	mkdir -p "$work/passthrough/src/fs" "$work/passthrough/mnt"
}
pt_up() {
	local mnt=$work/passthrough/mnt
	"$pt_bin" -f -o source="$work/passthrough/src",max_threads=16 "$mnt" >>"$log" 2>&1 &
	pt_pid=$!
	wait_until 10 mountpoint -q "$mnt" || die "passthrough_ll did not mount (see $log)"
	T_FILE=$mnt/region.img; T_DIR=$mnt/fs; T_PIDS=$pt_pid
}
pt_down() {
	[ -n "$pt_pid" ] || return 0
	fusermount3 -u "$work/passthrough/mnt" >>"$log" 2>&1 || true
	wait "$pt_pid" 2>/dev/null || true
	pt_pid=
}

# -------------------------------------------------------------- zfs-fuse
# The daemon reads Debian's /etc/zfs/zfsrc (ARC limit, prefetch, FUSE
# attribute timeouts). zfs-fuse has no zvols: fio works on a file in the
# pool, the file sets on the pool's own file system.
zfs_setup() {
	local i mem_mib dir=$work/zfs members=()
	mkdir -p "$dir"
	# Room for twice the volume over the data members: raidz stores small
	# files with much more than its nominal overhead, and at --full the
	# Windows set's copy ran out of space with 1.5 times (the member files
	# are sparse, so the room costs nothing).
	mem_mib=$(($(mib_ceil "$vol_bytes") * 2 / (peer_members - 1) + 96))
	for ((i = 0; i < peer_members; i++)); do
		truncate -s "${mem_mib}M" "$dir/m$i.img"
		members+=("$dir/m$i.img")
	done
	if [ -z "$zfs_pid" ]; then
		zfs_pid=$(pgrep -x zfs-fuse | head -1)
		if [ -n "$zfs_pid" ]; then
			# A daemon started by the system (the Debian package's service):
			# use it, leave it running.
			zfs_own=0
			meta zfs_daemon "zfs-fuse was already running (pid $zfs_pid): used as it was configured, left running"
		else
			zfs-fuse --no-daemon --no-kstat-mount >>"$log" 2>&1 &
			zfs_pid=$! zfs_own=1
		fi
		wait_until 20 zpool list >/dev/null || { tgt_teardown zfs; return 1; }
	fi
	zpool create -f -m "$dir/mnt" "$zfs_pool" raidz "${members[@]}" >>"$log" 2>&1 || { tgt_teardown zfs; return 1; }
	zfs_imported=1
	mkdir -p "$dir/mnt/fs"
}
zfs_imported=0
zfs_up() {
	if [ $zfs_imported = 0 ]; then
		zpool import -d "$work/zfs" "$zfs_pool" >>"$log" 2>&1 || die "zpool import $zfs_pool failed (see $log)"
		zfs_imported=1
	fi
	wait_until 10 mountpoint -q "$work/zfs/mnt" || die "zfs pool $zfs_pool is not mounted (see $log)"
	T_FILE=$work/zfs/mnt/region.img; T_DIR=$work/zfs/mnt/fs; T_PIDS=$zfs_pid
}
# Exporting the pool empties its part of the ARC: the next phase starts cold.
zfs_down() {
	[ $zfs_imported = 1 ] || return 0
	# A pool just written full stays busy for a while; a peer that cannot
	# export goes on warm rather than end the whole run.
	if ! wait_until 15 zpool export "$zfs_pool"; then
		warn "zpool export $zfs_pool failed: the next zfs phase starts with a warm cache"
		return 0
	fi
	zfs_imported=0
}
zfs_teardown() {
	if [ -n "$zfs_pid" ]; then
		[ $zfs_imported = 1 ] || zpool import -d "$work/zfs" "$zfs_pool" >>"$log" 2>&1 || true
		# The daemon keeps pools in /var/lib/zfs/zpool.cache: make sure
		# this one is gone before its members are.
		local try
		for try in 1 2 3 4 5; do
			zpool destroy -f "$zfs_pool" >>"$log" 2>&1 || true
			zpool list -H -o name 2>/dev/null | grep -qx "$zfs_pool" || break
			sleep 1
		done
		zpool list -H -o name 2>/dev/null | grep -qx "$zfs_pool" &&
			echo "warning: zpool destroy $zfs_pool failed; remove it with: zpool destroy -f $zfs_pool" >>"$log"
		zfs_imported=0
		if [ "$zfs_own" = 1 ]; then
			kill "$zfs_pid" 2>/dev/null || true
			wait "$zfs_pid" 2>/dev/null || true
		fi
		zfs_pid=
	fi
	rm -rf "${work:?}/zfs"
}

# ------------------------------------------------------------ nbdkit
# nbdfuse MNT/disk --command nbdkit -s file FILE, with the readahead filter
# in front of the cache filter (the order nbdkit-readahead-filter(1)
# gives). The cache (write-back, nbdkit's default) lives in a temporary
# file in the work dir and is not capped: with cache-max-size, nbdkit
# 1.32's reclaim punches out dirty blocks too, and the kit's verification
# found the file sets and ext4 on this peer corrupted.
nbd_setup() {
	mkdir -p "$work/nbd/mnt"
	truncate -s "$vol_bytes" "$work/nbd/disk.img"
}
nbd_up() {
	local mnt=$work/nbd/mnt
	rm -f "$work/nbd/nbdfuse.pid"
	TMPDIR=$work/nbd nbdfuse -P "$work/nbd/nbdfuse.pid" "$mnt/disk" --command nbdkit -s --exit-with-parent \
		--filter=readahead --filter=cache file "$work/nbd/disk.img" >>"$log" 2>&1 &
	nbd_pid=$!
	wait_until 20 test -s "$work/nbd/nbdfuse.pid" || die "nbdfuse did not start (see $log)"
	T_FILE=$mnt/disk
	T_PIDS="$nbd_pid $(pgrep -P "$nbd_pid" | tr '\n' ' ')"
	[ "$2" = fs ] || return 0
	ext4_up nbd "$T_FILE"
}
nbd_down() {
	ext4_down nbd
	[ -n "$nbd_pid" ] || return 0
	fusermount3 -u "$work/nbd/mnt" >>"$log" 2>&1 || true
	wait "$nbd_pid" 2>/dev/null || true
	nbd_pid=
}

# nbdkit's split plugin (several files as one disk) would be the JBOD peer.
# Probe: write 2 MiB of known data over two 1 MiB files through nbdfuse,
# then compare the files with it. Prints "ok" or what went wrong.
probe_nbd_split() {
	local d=$work/nbd-split
	mkdir -p "$d/mnt"
	truncate -s 1M "$d/s0.img" "$d/s1.img"
	head -c 2097152 /dev/urandom >"$d/pattern"
	nbdfuse -P "$d/pid" "$d/mnt/disk" --command nbdkit -s --exit-with-parent split "$d/s0.img" "$d/s1.img" >>"$log" 2>&1 &
	local pid=$!
	if wait_until 20 test -s "$d/pid"; then
		dd if="$d/pattern" of="$d/mnt/disk" bs=64k conv=notrunc,nocreat,fsync status=none 2>>"$log"
		fusermount3 -u "$d/mnt" >>"$log" 2>&1
		wait "$pid" 2>/dev/null
		local byte
		byte=$(cat "$d/s0.img" "$d/s1.img" | cmp - "$d/pattern" 2>&1 | sed -n '1s/.* byte \([0-9]*\).*/\1/p')
		if [ -z "$byte" ]; then echo ok
		else echo "2 MiB written through it over two 1 MiB files do not read back from the files: the first wrong byte is byte $byte (counting from 1), the first of the second file"; fi
	else
		kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null
		echo "nbdfuse with the split plugin did not start"
	fi
	rm -rf "$d"
}

# ---------------------------------------------------------- dispatch
tgt_setup() {
	case $1 in
	plain) plain_setup ;;
	passthrough) pt_setup ;;
	zfs) zfs_setup ;;
	nbd) nbd_setup ;;
	*) rf_setup "$1" ;;
	esac
}
tgt_up() {
	case $1 in
	plain) plain_up ;;
	passthrough) pt_up ;;
	zfs) zfs_up ;;
	nbd) nbd_up nbd "$2" ;;
	*) rf_up "$1" "$2" ;;
	esac
}
tgt_down() {
	case $1 in
	plain) ;;
	passthrough) pt_down ;;
	zfs) zfs_down ;;
	nbd) nbd_down ;;
	*) rf_down "$1" ;;
	esac
}
tgt_teardown() {
	tgt_down "$1"
	case $1 in
	plain) rm -rf "${work:?}/plain" ;;
	passthrough) rm -rf "${work:?}/passthrough" ;;
	zfs) zfs_teardown ;;
	nbd) rm -rf "${work:?}/nbd" ;;
	*) rf_teardown "$1" ;;
	esac
}
# Run at exit: whatever is still up comes down.
tgt_cleanup_all() {
	local id
	for id in "${!T_MNT_FS[@]}"; do umount "${T_MNT_FS[$id]}" >>"$log" 2>&1 || umount -l "${T_MNT_FS[$id]}" 2>/dev/null; done
	T_MNT_FS=()
	pt_down
	nbd_down
	if [ -n "$zfs_pid" ]; then zfs_teardown; fi
	local m
	for m in "$work"/*/mnt; do
		[ -d "$m" ] && mountpoint -q "$m" && { "$rf" umount "$m" >>"$log" 2>&1 || fusermount3 -u "$m" 2>/dev/null; }
	done
	return 0
}
