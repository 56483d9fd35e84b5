#!/bin/bash
# check.sh - the project's test command: install the dependencies, build
# from scratch, run the whole test suite (Criterion unit tests and the
# integration tests that mount real FUSE file systems), then build the
# unit tests again with AddressSanitizer and UndefinedBehaviorSanitizer and
# run them. Exits non-zero on any failure.
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"

bash contrib/deps.sh || { echo "check: installing dependencies failed"; exit 1; }

status=0
# In CI the md oracle must run, not skip.
[ "${CI:-}" = true ] && export MD_ORACLE_REQUIRE=1
summary() {
	# automake writes "# PASS: n" lines into test-suite.log's header.
	local log=$1 pass fail skip xfail error
	pass=$(sed -n 's/^# PASS: *//p' "$log" | head -1)
	fail=$(sed -n 's/^# FAIL: *//p' "$log" | head -1)
	skip=$(sed -n 's/^# SKIP: *//p' "$log" | head -1)
	error=$(sed -n 's/^# ERROR: *//p' "$log" | head -1)
	echo "$2: ${pass:-0} passed, $(( ${fail:-0} + ${error:-0} )) failed, ${skip:-0} skipped"
}

echo "== build (-Wall -Wextra -Werror) and make check"
bash contrib/build.sh "$top/build-check" CFLAGS="-O2 -g" || { echo "check: build failed"; exit 1; }
( cd "$top/build-check" && make -j2 check ) || status=1
[ -f "$top/build-check/test-suite.log" ] || { echo "check: make check produced no test-suite.log"; exit 1; }
if [ $status -ne 0 ]; then
	echo "== failures (test-suite.log)"
	cat "$top/build-check/test-suite.log"
fi
full_summary=$(summary "$top/build-check/test-suite.log" "tests")

echo "== unit tests under AddressSanitizer + UndefinedBehaviorSanitizer"
san="-O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined"
bash contrib/build.sh "$top/build-asan" CFLAGS="$san" LDFLAGS="-fsanitize=address,undefined" ||
	{ echo "check: sanitizer build failed"; exit 1; }
unit_tests=$(cd "$top/build-asan" && make -s print-unit-tests)
( cd "$top/build-asan" && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
	make -j2 check TESTS="$unit_tests" ) || status=1
if [ $status -ne 0 ] && [ -f "$top/build-asan/test-suite.log" ]; then
	cat "$top/build-asan/test-suite.log"
fi
asan_summary=$(summary "$top/build-asan/test-suite.log" "asan")

echo "$full_summary"
echo "$asan_summary"
exit $status
