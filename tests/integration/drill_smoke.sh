#!/bin/bash
# drill_smoke.sh - contrib/drill.sh, short, on RAID5 and RAID1: the drill
# itself must pass (no verify errors, no user I/O errors, mismatch_cnt 0)
# and print its report.
. "$(dirname "$0")/lib.sh"
require_fuse
require_cmd fio awk numfmt

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
log "PASS"
