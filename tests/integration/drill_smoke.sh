#!/bin/bash
# drill_smoke.sh - contrib/drill.sh, short, on RAID5 and RAID1: the drill
# itself must pass (no verify errors, no user I/O errors, mismatch_cnt 0)
# and print its report.
. "$(dirname "$0")/lib.sh"
require_fuse
require_cmd fio awk numfmt

# The RAID5 drill runs in a directory of the user's that holds a file of
# theirs: the drill must leave it (it removed the whole --dir).
mkdir -p "$WORK/raid5"
echo "the user's" >"$WORK/raid5/notes.txt"
for spec in "5 4" "1 2"; do
	set -- $spec
	RAIDFUSE=$RAIDFUSE bash "$TOP_SRCDIR/contrib/drill.sh" --level "$1" --members "$2" \
		--size 48M --runtime 4 --dir "$WORK/raid$1" >"$WORK/drill$1.out" 2>&1 ||
		{ cat "$WORK/drill$1.out"; fail "raid$1 drill failed"; }
	for line in "verify errors (writer, reader): *0, 0" "I/O errors seen by the user: *0" \
		"mismatch_cnt after rebuild: *0" "rebuild time" "recovery of role 1 onto .* finished"; do
		grep -q "$line" "$WORK/drill$1.out" || { cat "$WORK/drill$1.out"; fail "raid$1: report lacks '$line'"; }
	done
	log "ok: raid$1 drill: $(grep 'rebuild time' "$WORK/drill$1.out" | sed 's/  */ /g')"
done
[ "$(cat "$WORK/raid5/notes.txt" 2>&1)" = "the user's" ] || fail "the drill removed a file of the user's in --dir"
[ -z "$(ls "$WORK/raid5" | grep -v '^notes.txt$')" ] || fail "the drill left files behind: $(ls "$WORK/raid5")"
[ ! -e "$WORK/raid1" ] || fail "the drill left the --dir it made: $(ls -a "$WORK/raid1")"
# No failure drill on a level without redundancy: refused up front (exit
# 2, a usage error), saying why, before anything is made.
rc=0
RAIDFUSE=$RAIDFUSE bash "$TOP_SRCDIR/contrib/drill.sh" --level 0 --members 2 \
	--size 16M --runtime 2 --dir "$WORK/raid0" >"$WORK/drill0.out" 2>&1 || rc=$?
[ "$rc" = 2 ] && grep -q "level 0 cannot lose a member (no redundancy)" "$WORK/drill0.out" ||
	{ cat "$WORK/drill0.out"; fail "a raid0 drill (nothing to fail) exited $rc"; }
[ ! -e "$WORK/raid0" ] || fail "the refused raid0 drill made $WORK/raid0"
log "ok: the drill keeps the user's files in --dir, removes its own, and refuses raid0"
log "PASS"
