#!/usr/bin/env bash
# Runs every benchmark executable in BUILD_DIR/bench/ (*_bench), then repeats the "summary"
# line each printed (Basin against a peer measured in the same run). BASIN_BENCH_SCALE=0.1
# shrinks the generated data for a quick run; BASIN_BENCH_RUNS sets the timed runs per side
# (at least 5); BASIN_BENCH_SECONDS sets how long serve_bench loads `basin serve` (default 60
# times the scale). serve_bench skips its PostgreSQL peer, saying why, when postgresql-15 is
# not installed (make bench runs scripts/setup.sh --bench, which installs it). Exits non-zero
# when a benchmark fails (an error, or results that differ from the peer's); missing the
# performance targets is reported, not failed.
set -uo pipefail
BUILD_DIR="${1:-build}"

mapfile -t benches < <(find "$BUILD_DIR/bench" -maxdepth 1 -type f -name '*_bench' -perm -u+x 2>/dev/null | sort)
if [ ${#benches[@]} -eq 0 ]; then
  echo "[bench] no *_bench executables in $BUILD_DIR/bench (configure with -DBASIN_BENCH=ON)" >&2
  exit 1
fi
echo "[bench] scale ${BASIN_BENCH_SCALE:-1} (BASIN_BENCH_SCALE), ${#benches[@]} benchmarks"

summaries=()
failed=0
for bench in "${benches[@]}"; do
  name="$(basename "$bench")"
  echo "[bench] running $name"
  log="$BUILD_DIR/bench-$name.log"
  "$bench" 2>&1 | tee "$log"
  status=${PIPESTATUS[0]}
  if [ "$status" -ne 0 ]; then
    failed=$((failed + 1))
    echo "[bench] $name FAILED (exit $status)"
  fi
  mapfile -t -O "${#summaries[@]}" summaries < <(grep '^summary ' "$log")
done

echo
echo "[bench] summary (scale ${BASIN_BENCH_SCALE:-1}):"
printf '%s\n' "${summaries[@]}"
echo "bench: ${#benches[@]} benchmarks ran, $failed failed"
[ "$failed" -eq 0 ]
