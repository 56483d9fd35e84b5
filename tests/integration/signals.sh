#!/bin/bash
# signals.sh - SIGTERM and SIGINT make the daemon flush its cache, mark
# the array clean and unmount; the data written before is all there.
. "$(dirname "$0")/lib.sh"
require_fuse
require_cmd mdadm

cd "$WORK"
dd if=/dev/urandom of=ref bs=1M count=16 status=none
for sig in TERM INT; do
	rm -f m0 m1 m2 m3
	"$RAIDFUSE" create --level 5 --raid-devices 4 --chunk 64K --size 32M m0 m1 m2 m3 >/dev/null ||
		fail "create"
	mkdir -p mnt
	track_mount "$WORK/mnt"
	if [ $sig = INT ]; then
		# In the foreground, as a user debugging with Ctrl-C would run it.
		# (a background job of a script ignores SIGINT: give it back its default)
		env --default-signal=INT "$RAIDFUSE" mount -f --flush-age-ms 60000 m0 m1 m2 m3 mnt 2>fg.err &
		for _ in $(seq 1 100); do [ -f mnt/.raidfuse/pid ] && break; sleep 0.05; done
	else
		"$RAIDFUSE" mount --flush-age-ms 60000 m0 m1 m2 m3 mnt || fail "mount"
	fi
	pid=$(cat mnt/.raidfuse/pid) || fail "no pid file"
	# No fsync: the rows stay dirty in the cache until the signal.
	dd if=ref of=mnt/volume.img bs=1M conv=notrunc status=none || fail "write"
	grep -q "cache_dirty_rows: [1-9]" mnt/.raidfuse/status ||
		fail "expected dirty rows in the cache before SIG$sig: $(cat mnt/.raidfuse/status)"
	kill -$sig "$pid"
	for _ in $(seq 1 200); do kill -0 "$pid" 2>/dev/null || break; sleep 0.05; done
	kill -0 "$pid" 2>/dev/null && fail "the daemon did not exit on SIG$sig"
	grep -qs " $WORK/mnt " /proc/mounts && fail "still mounted after SIG$sig"
	for m in m0 m1 m2 m3; do
		mdadm --examine $m | grep -q "State : clean" || fail "$m not clean after SIG$sig"
	done
	"$RAIDFUSE" verify m0 m1 m2 m3 | grep -q "mismatch_cnt: 0" || fail "parity after SIG$sig"
	rf_mount -r m0 m1 m2 m3 mnt
	cmp <(head -c 16M mnt/volume.img) ref >/dev/null || fail "data written before SIG$sig lost"
	rf_umount mnt
	log "ok: SIG$sig flushed dirty rows, marked the array clean and unmounted"
done
log "PASS"
