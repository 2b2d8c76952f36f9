#!/usr/bin/env bash
# Runs every test suite registered with ctest in BUILD_DIR, then the libFuzzer targets for a
# bounded time (BASIN_FUZZ_SECONDS each, default 60; built with clang in build-fuzz/), and
# prints one closing line "N passed, N failed" counting ctest suites and fuzz targets.
#
# BASIN_SKIP_SLOW=1 skips ctest suites labelled "slow" and the fuzzers, for quick local runs;
# it is ignored in CI (CI=true), which always runs everything. BASIN_SKIP_FUZZ=1 skips only
# the fuzzers (make asan sets it: the fuzz build has its own sanitizers).
set -uo pipefail
BUILD_DIR="${1:-build}"
FUZZ_BUILD_DIR="${BASIN_FUZZ_BUILD_DIR:-build-fuzz}"
FUZZ_SECONDS="${BASIN_FUZZ_SECONDS:-60}"
skip_slow=0
if [ "${BASIN_SKIP_SLOW:-0}" = "1" ]; then
  if [ "${CI:-}" = "true" ]; then
    echo "[tests] BASIN_SKIP_SLOW is ignored in CI: running every suite"
  else
    skip_slow=1
  fi
fi

args=(--test-dir "$BUILD_DIR" --output-on-failure -j 2 --timeout 1500)
if [ "$skip_slow" = "1" ]; then
  echo "[tests] skipping suites labelled slow and the fuzzers (BASIN_SKIP_SLOW=1)"
  args+=(-LE slow)
fi
if [ -z "${BASIN_TESTDATA:-}" ] && [ ! -d "$(dirname "$0")/../../shared/testdata" ]; then
  echo "[tests] ../shared/testdata is absent: the suites that read it will report themselves skipped"
fi

log="$BUILD_DIR/ctest.log"
started=$(date +%s)
ctest "${args[@]}" 2>&1 | tee "$log"
echo "[tests] ctest took $(( $(date +%s) - started )) s"
total=$(grep -Eo 'tests failed out of [0-9]+' "$log" | grep -Eo '[0-9]+$' | tail -1)
failed=$(grep -Eo '[0-9]+ tests failed out of' "$log" | grep -Eo '^[0-9]+' | tail -1)
if [ -z "$total" ]; then
  echo "[tests] ctest did not report a result"
  total=1; failed=1
fi
passed=$((total - failed))

if [ "$skip_slow" = "0" ] && [ "${BASIN_SKIP_FUZZ:-0}" != "1" ]; then
  echo "[tests] building and running the fuzz targets for ${FUZZ_SECONDS}s each"
  fuzz_log="$BUILD_DIR/fuzz.log"
  started=$(date +%s)
  make --no-print-directory -C "$(dirname "$0")/.." fuzz BUILD_FUZZ="$FUZZ_BUILD_DIR" \
    FUZZ_SECONDS="$FUZZ_SECONDS" 2>&1 | tee "$fuzz_log"
  fuzz_status=${PIPESTATUS[0]}
  echo "[tests] building and running the fuzzers took $(( $(date +%s) - started )) s"
  targets=$(grep -Eo '^fuzz: [0-9]+ targets' "$fuzz_log" | grep -Eo '[0-9]+' | tail -1)
  crashed=$(grep -Eo ', [0-9]+ crash' "$fuzz_log" | grep -Eo '[0-9]+' | tail -1)
  if [ "$fuzz_status" -ne 0 ] || [ -z "$targets" ]; then
    echo "[tests] the fuzz run failed (see $fuzz_log)"
    passed=$((passed + ${targets:-0} - ${crashed:-0})); failed=$((failed + ${crashed:-1}))
  else
    passed=$((passed + targets - ${crashed:-0})); failed=$((failed + ${crashed:-0}))
  fi
fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
