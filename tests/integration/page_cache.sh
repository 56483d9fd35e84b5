#!/bin/bash
# page_cache.sh - with --page-cache (the kernel page cache holds
# volume.img), a read right after a write returns what was written, while
# other threads read the same range: four writers each own 64 KiB, write a
# new generation there and read it straight back, four readers read all
# 256 KiB meanwhile. On RAID1 x2 and RAID5 x3. Why: with libfuse's default
# auto_inval_data the kernel dropped volume.img's pages on every getattr
# after a write (the mtime our writes move), and a reader could fetch the
# old bytes in the window where a buffered write's pages are unlocked but
# its WRITE has not reached the daemon: the stale bytes stayed cached after
# the write returned (some 1400 stale read-backs in 15 s on RAID1).
. "$(dirname "$0")/lib.sh"
require_fuse
require_cmd python3

cat >"$WORK/probe.py" <<'PY'
import mmap, os, struct, sys, threading, time
vol, secs = sys.argv[1], float(sys.argv[2])
stop = False
stale = [0]
rounds = [0]
def writer(t):
    fd = os.open(vol, os.O_RDWR)
    buf, back = mmap.mmap(-1, 65536), mmap.mmap(-1, 65536)
    off, gen = t * 65536, 0
    while not stop:
        gen += 1
        buf[:] = struct.pack("<QQ", t, gen) * 4096
        os.pwrite(fd, buf, off)
        os.preadv(fd, [back], off)
        for page in range(16):
            if struct.unpack_from("<QQ", back, page * 4096)[1] != gen:
                stale[0] += 1
        rounds[0] += 1
def reader():
    fd = os.open(vol, os.O_RDONLY)
    back = mmap.mmap(-1, 262144)
    while not stop:
        os.preadv(fd, [back], 0)
threads = [threading.Thread(target=writer, args=(t,)) for t in range(4)]
threads += [threading.Thread(target=reader) for _ in range(4)]
for th in threads:
    th.start()
time.sleep(secs)
stop = True
for th in threads:
    th.join()
print(rounds[0], stale[0])
PY

for spec in "1 2" "5 3"; do
	set -- $spec
	d=$WORK/r$1
	mkdir -p "$d"
	members=()
	for ((i = 0; i < $2; i++)); do members+=("$d/m$i"); done
	"$RAIDFUSE" create --level "$1" --raid-devices "$2" --chunk 64K --size 32M "${members[@]}" \
		>/dev/null || fail "raid$1: create"
	rf_mount --page-cache "${members[@]}" "$d/mnt"
	read -r rounds stale < <(python3 "$WORK/probe.py" "$d/mnt/volume.img" 8) ||
		fail "raid$1: the probe did not run"
	[ "${rounds:-0}" -ge 100 ] || fail "raid$1: only ${rounds:-0} write and read-back rounds in 8 s"
	[ "$stale" = 0 ] || fail "raid$1 --page-cache: $stale of $((rounds * 16)) pages read back stale after their write returned"
	rf_umount "$d/mnt"
	log "ok: raid$1 x$2 --page-cache: $rounds writes read back, none stale"
done
log "PASS"
