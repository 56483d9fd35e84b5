#!/bin/bash
# bench_smoke.sh - the benchmark kit's own smoke test: contrib/bench/bench-fio.sh
# --quick must run end to end (raidfuse, libfuse's passthrough example and
# a plain file), write its CSV and Markdown summary, and report no fio
# error; with --rand-io-size its random jobs move exactly that much. Speeds
# are not asserted: they are measured, not tested.
. "$(dirname "$0")/lib.sh"
require_fuse
require_cmd fio gcc pkg-config

out=$WORK/out
bash "$TOP_SRCDIR/contrib/bench/bench-fio.sh" --quick --rand-io-size 8M --raidfuse "$RAIDFUSE" --out "$out" \
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
# Random jobs are a fixed amount (8 MiB), sequential ones timed.
# Columns: 7 job, 15 write_bytes.
rand_rows=$(awk -F, 'NR > 1 && $7 == "rw-qd16"' "$out/results.csv" | wc -l)
[ "$rand_rows" -ge 3 ] || fail "only $rand_rows rw-qd16 rows"
awk -F, 'NR > 1 && $7 == "rw-qd16" && $15 != 8388608 { bad = 1 } END { exit bad }' \
	"$out/results.csv" || fail "rw-qd16 did not write exactly 8 MiB: $(awk -F, '$7 == "rw-qd16" { print $2, $15 }' "$out/results.csv")"
grep -q 'random jobs: 8192 KiB each' "$out/summary.md" || fail "summary does not say the random jobs' size"
log "ok: bench-fio.sh --quick: $rows results, summary written"
# --repeat keeps every repetition's raw fio output and daemon status, not
# only the last one's.
rep=$WORK/rep
bash "$TOP_SRCDIR/contrib/bench/bench-fio.sh" --configs raid5-4:on --jobs rw-qd16 --repeat 2 \
	--runtime 2 --rand-io-size 4M --raidfuse "$RAIDFUSE" --out "$rep" --dir "$WORK" \
	>"$WORK/rep.log" 2>&1 || { tail -20 "$WORK/rep.log"; fail "bench-fio.sh --repeat 2 failed"; }
for r in 1 2; do
	grep -q '^3;' "$rep/raw/raid5-4-on.rw-qd16.rep$r.fio" 2>/dev/null ||
		fail "--repeat 2: no fio result of repetition $r in raw/: $(ls "$rep/raw")"
	[ -s "$rep/raw/raid5-4-on.rw-qd16.rep$r.status" ] || fail "--repeat 2: no daemon status of repetition $r"
done
[ "$(awk -F, 'NR > 1 && $7 == "rw-qd16"' "$rep/results.csv" | wc -l)" = 2 ] ||
	fail "--repeat 2: results.csv has not both repetitions"
log "ok: --repeat 2 keeps both repetitions' raw files"
log "PASS"
