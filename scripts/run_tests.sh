#!/usr/bin/env bash
# Runs every test suite registered with ctest in BUILD_DIR, then prints one closing line
# "N passed, N failed". BASIN_SKIP_SLOW=1 skips suites labelled "slow" (never in CI).
set -uo pipefail
BUILD_DIR="${1:-build}"
args=(--test-dir "$BUILD_DIR" --output-on-failure -j 2 --timeout 1500)
if [ "${BASIN_SKIP_SLOW:-0}" = "1" ] && [ "${CI:-}" != "true" ]; then
  echo "[tests] skipping suites labelled slow (BASIN_SKIP_SLOW=1)"
  args+=(-LE slow)
fi
if [ ! -d ../shared/testdata ] && [ -z "${BASIN_TESTDATA:-}" ]; then
  echo "[tests] ../shared/testdata is absent: conformance suites will report themselves skipped"
fi
log="$BUILD_DIR/ctest.log"
ctest "${args[@]}" 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
total=$(grep -Eo 'tests passed, [0-9]+ tests failed out of [0-9]+' "$log" | grep -Eo '[0-9]+$' | tail -1)
failed=$(grep -Eo '[0-9]+ tests failed out of' "$log" | grep -Eo '^[0-9]+' | tail -1)
if [ -z "$total" ]; then
  echo "0 passed, 1 failed"; exit 1
fi
echo "$((total - failed)) passed, $failed failed"
exit "$status"
