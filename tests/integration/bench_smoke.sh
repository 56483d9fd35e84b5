#!/bin/bash
# bench_smoke.sh - the benchmark kit's own smoke test: contrib/bench/bench-fio.sh
# --quick must run end to end (raidfuse, libfuse's passthrough example and
# a plain file), write its CSV and Markdown summary, and report no fio
# error. Speeds are not asserted: they are measured, not tested.
. "$(dirname "$0")/lib.sh"
require_fuse
require_cmd fio gcc pkg-config

out=$WORK/out
bash "$TOP_SRCDIR/contrib/bench/bench-fio.sh" --quick --raidfuse "$RAIDFUSE" --out "$out" \
	--dir "$WORK" >"$WORK/bench.log" 2>&1 || { tail -40 "$WORK/bench.log"; fail "bench-fio.sh --quick failed"; }
[ -s "$out/results.csv" ] || fail "no results.csv"
[ -s "$out/summary.md" ] || fail "no summary.md"
rows=$(($(wc -l <"$out/results.csv") - 1))
[ "$rows" -ge 4 ] || fail "only $rows result rows"
for config in plain passthrough; do
	grep -q "^[^,]*,$config," "$out/results.csv" || fail "no $config rows in results.csv"
done
grep -qE '^[^,]*,raid[0-9]' "$out/results.csv" || fail "no raidfuse rows in results.csv"
# The last column is fio's error number: all zero.
awk -F, 'NR > 1 && $NF != 0 { bad = 1 } END { exit bad }' "$out/results.csv" ||
	fail "a fio job reported an error: $(awk -F, 'NR > 1 && $NF != 0' "$out/results.csv")"
log "ok: bench-fio.sh --quick: $rows results, summary written"
log "PASS"
