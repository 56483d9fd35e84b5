#!/bin/bash
# bench_kit_smoke.sh - the benchmark kit's own smoke test: contrib/bench/kit.sh
# with a tiny scale factor, one array and the plain peer, a couple of fio
# patterns and a two-chunk stripe sweep must run end to end and write a
# CSV with positive figures for every measurement, file sets that verify
# byte for byte, clean parity and file-system checks, a report with its
# tables, and PNG charts when gnuplot is installed. It also checks that
# the file-set verifier does catch a changed byte. Speeds are not
# asserted: they are measured, not tested.
. "$(dirname "$0")/lib.sh"
require_fuse
require_root
require_cmd fio python3 mkfs.ext4 e2fsck

kit=$TOP_SRCDIR/contrib/bench
out=$WORK/out

# The verifier must see a change of one byte (and a missing file).
python3 "$kit/fileset.py" --scale 0.002 --seed 7 create Programs "$WORK/sets" >/dev/null ||
	fail "fileset.py create failed"
python3 "$kit/fileset.py" --scale 0.002 --seed 7 verify Programs "$WORK/sets/Programs" >/dev/null ||
	fail "a freshly created set does not verify"
victim=$(find "$WORK/sets/Programs" -type f -size +8k | sort | head -1)
[ -n "$victim" ] || fail "no file above 8 KiB in the tiny Programs set"
printf 'X' | dd of="$victim" bs=1 seek=5000 conv=notrunc status=none
if python3 "$kit/fileset.py" --scale 0.002 --seed 7 verify Programs "$WORK/sets/Programs" 2>"$WORK/verify.err"; then
	fail "fileset.py verify missed a changed byte in $victim"
fi
grep -q "differs at byte 5000" "$WORK/verify.err" || fail "verify did not name the changed byte: $(cat "$WORK/verify.err")"
rm -rf "$WORK/sets"

start=$SECONDS
bash "$kit/kit.sh" --quick --raidfuse "$RAIDFUSE" --out "$out" --dir "$WORK" \
	--only fileset,iometer,stripe,peers --arrays raid5-3 --peers plain \
	--scale 0.002 --sets ISO,Programs --patterns database,seqread --rwmix 50 --qd 1,4 --bs 64k \
	--runtime 1 --size 64M --stripe-arrays raid5-3 --chunks 4k,64k --stripe-patterns database \
	>"$WORK/kit.log" 2>&1 || { tail -40 "$WORK/kit.log"; fail "kit.sh failed"; }
log "kit.sh ran in $((SECONDS - start)) s"

csv=$out/results.csv
[ -s "$csv" ] || fail "no results.csv"
[ -s "$out/report.md" ] || fail "no report.md"
head -1 "$csv" | grep -q '^date,suite,target,kind,level,members,chunk_kib,pattern,rwmix_read,bs,qd,streams,set,phase,files,bytes,seconds,mb_s,iops,lat_mean_us,daemon_cpu_s,iops_per_cpu_s,mb_per_cpu_s,verified,note$' ||
	fail "results.csv header is not the kit's: $(head -1 "$csv")"

# count_rows AWK-CONDITION: rows of results.csv (fields by name) that match.
count_rows() {
	awk -F, -v cond="$1" 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
		{ for (c in col) f[c] = $(col[c]) }
		cond == "fio-ok" && f["suite"] != "fileset" && f["suite"] != "integrity" && f["mb_s"] > 0 && f["iops"] > 0 && f["note"] == "" { n++ }
		cond == "fio-cpu" && f["kind"] == "raidfuse" && f["suite"] != "fileset" && f["suite"] != "integrity" && f["daemon_cpu_s"] > 0 { n++ }
		cond == "stripe-eff" && f["suite"] == "stripe" && f["iops_per_cpu_s"] > 0 { n++ }
		cond == "fileset-ok" && f["suite"] == "fileset" && f["phase"] != "verify" && f["mb_s"] > 0 && f["bytes"] > 0 { n++ }
		cond == "verified" && f["suite"] == "fileset" && f["phase"] == "verify" && f["verified"] == "yes" { n++ }
		cond == "integrity" && f["suite"] == "integrity" && f["verified"] == "yes" { n++ }
		cond == "bad" && (f["verified"] == "no" || f["note"] ~ /fail|not run|DIFFERS/) { n++ }
		END { print n + 0 }' "$csv"
}
expect() { # expect CONDITION N WHAT
	local got
	got=$(count_rows "$1")
	[ "$got" = "$2" ] || { cat "$csv" >&2; fail "$3: $got rows, expected $2"; }
}
# iometer: 2 targets x (database at 2 depths + seqread 64k); stripe: 2 chunks.
expect fio-ok 8 "fio rows with positive MB/s and IOPS"
expect fio-cpu 5 "raidfuse fio rows with daemon CPU time"
expect stripe-eff 2 "stripe rows with IOPS per daemon CPU-second"
# file sets: 2 targets x 2 sets x 4 phases, each verified after a remount.
expect fileset-ok 16 "file-set rows with positive MB/s"
expect verified 4 "file sets verified byte for byte"
# md check of raid5-3 (iometer/fileset array and both stripe arrays), e2fsck.
expect integrity 4 "integrity checks passed"
expect bad 0 "rows reporting a failure or a difference"
grep -q ',stripe,raid5-3,raidfuse,5,3,4,database,' "$csv" || fail "no stripe row for chunk 4 KiB"
grep -q ',stripe,raid5-3,raidfuse,5,3,64,database,' "$csv" || fail "no stripe row for chunk 64 KiB"

for section in "## Targets" "## Integrity" "## File sets" "### create" "### copy to a second file system" \
	"## IOMeter access patterns" "### Database" "### Sequential read" "## Stripe-size sweep"; do
	grep -qF "$section" "$out/report.md" || fail "report.md has no '$section'"
done
grep -q '^| raid5-3 |' "$out/report.md" || fail "report.md has no raid5-3 table row"
grep -q '^| plain |' "$out/report.md" || fail "report.md has no plain table row"
grep -q '2 of 2\|4 of 4' "$out/report.md" || fail "report.md does not say the file sets verified"

if command -v gnuplot >/dev/null; then
	for png in fileset-create fileset-copy-out iops-qd-database-read50 mbps-bs-seqread cpu-eff-chunk; do
		[ -s "$out/charts/$png.png" ] || fail "no chart $png.png"
		[ "$(head -c 4 "$out/charts/$png.png" | od -An -tx1 | tr -d ' ')" = 89504e47 ] ||
			fail "$png.png is not a PNG"
		grep -q "charts/$png.png" "$out/report.md" || fail "report.md does not show $png.png"
	done
else
	log "gnuplot is not installed: charts not checked"
fi

# Nothing left behind: no mounts below the work dir, no work dir of the kit.
if grep -q " $WORK" /proc/mounts; then fail "mounts left behind: $(grep " $WORK" /proc/mounts)"; fi
ls -d "$WORK"/raidfuse-kit.* >/dev/null 2>&1 && fail "the kit's work dir was not removed"
log "ok: kit.sh: $(($(wc -l <"$csv") - 1)) rows, every set verified, report and charts written"
log "PASS"
