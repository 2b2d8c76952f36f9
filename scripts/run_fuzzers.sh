#!/usr/bin/env bash
# Runs every libFuzzer target in BUILD_DIR/fuzz/ (the *_fuzz executables of a -DBASIN_FUZZ=ON
# build; `make fuzz` makes one) for SECONDS each, one per core at a time (BASIN_FUZZ_JOBS),
# then prints one closing line
#   fuzz: N targets ran for S s each, K crashes
# Exits non-zero when any target crashed, leaked, hung (-timeout), ran out of memory
# (-rss_limit_mb) or tripped UBSan, or when there is no target to run.
#
# Each target keeps a corpus in BUILD_DIR/fuzz-corpus/<name>, seeded from real inputs in the
# shared test data (../shared/testdata or $BASIN_TESTDATA): Delta log commits for the
# log-action fuzzer, deletion-vector files for the deletion-vector fuzzer, Variant values
# for the variant fuzzer; and from the repository's fuzz/corpus/<name>/, such as the SQL
# statements for the statement fuzzer. Crash inputs land in BUILD_DIR/fuzz-artifacts/<name>/;
# rerun one with `BUILD_DIR/fuzz/<name> <file>`.
set -uo pipefail

BUILD_DIR="${1:-build-fuzz}"
SECONDS_EACH="${2:-60}"
SEEDS_PER_TARGET=40
REPO_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TESTDATA="${BASIN_TESTDATA:-$REPO_DIR/../shared/testdata}"

if ! [[ "$SECONDS_EACH" =~ ^[0-9]+$ ]] || [ "$SECONDS_EACH" -eq 0 ]; then
  echo "usage: $0 BUILD_DIR SECONDS (SECONDS a positive integer, got '$SECONDS_EACH')" >&2
  exit 2
fi

mapfile -t targets < <(find "$BUILD_DIR/fuzz" -maxdepth 1 -type f -name '*_fuzz' -perm -u+x 2>/dev/null | sort)
if [ ${#targets[@]} -eq 0 ]; then
  echo "[fuzz] no *_fuzz executables in $BUILD_DIR/fuzz (build with -DBASIN_FUZZ=ON, e.g. make fuzz)" >&2
  echo "fuzz: 0 targets ran, 1 failed (nothing to run)"
  exit 1
fi

# Copies up to SEEDS_PER_TARGET small files under $TESTDATA/$2 matching find's further
# arguments into corpus folder $1, spread evenly over the sorted list so that every
# writer's tables contribute.
seed_from() {
  local corpus="$1" base="$TESTDATA/$2"; shift 2
  [ -d "$base" ] || return 0
  local files
  mapfile -d '' files < <(find "$base" "$@" -type f -size -64k -print0 2>/dev/null | sort -z)
  local step=$(( (${#files[@]} + SEEDS_PER_TARGET - 1) / SEEDS_PER_TARGET ))
  [ "$step" -ge 1 ] || return 0
  for ((i = 0; i < ${#files[@]}; i += step)); do
    local file="${files[$i]}"
    # Distinct cases reuse file names (00000000000000000000.json), so name seeds by path.
    local flat="${file#"$TESTDATA/"}"
    cp -n "$file" "$corpus/seed-${flat//\//_}"
  done
}

seed_corpus() {
  local name="$1" corpus="$2"
  case "$name" in
    *log_action*|*commit*|*checkpoint*) seed_from "$corpus" delta -path '*_delta_log/*' -name '*.json' ;;
    *deletion_vector*) seed_from "$corpus" delta -name 'deletion_vector_*.bin' ;;
    *variant*) seed_from "$corpus" parquet -name '*.variant.bin' ;;
  esac
  if [ -d "$REPO_DIR/fuzz/corpus/$name" ]; then cp -n "$REPO_DIR/fuzz/corpus/$name"/* "$corpus/" 2>/dev/null; fi
  return 0
}

# UBSan only reports by default; make it fail the run like ASan does.
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
export ASAN_OPTIONS="detect_leaks=1${ASAN_OPTIONS:+:$ASAN_OPTIONS}"

[ -d "$TESTDATA" ] || echo "[fuzz] $TESTDATA is absent: corpora start empty"

# Runs one target for SECONDS_EACH; its exit status lands in BUILD_DIR/fuzz-<name>.status.
run_target() {
  local bin="$1" name corpus artifacts log
  name="$(basename "$bin")"
  corpus="$BUILD_DIR/fuzz-corpus/$name"
  artifacts="$BUILD_DIR/fuzz-artifacts/$name"
  log="$BUILD_DIR/fuzz-$name.log"
  "$bin" "$corpus" -max_total_time="$SECONDS_EACH" -rss_limit_mb=2048 -timeout=10 \
    -artifact_prefix="$artifacts/" -print_final_stats=1 >"$log" 2>&1
  echo $? >"$BUILD_DIR/fuzz-$name.status"
}

# The targets run JOBS at a time (one per core by default; BASIN_FUZZ_JOBS overrides), each
# for the full SECONDS_EACH, so the run takes ceil(targets / JOBS) * SECONDS_EACH.
JOBS="${BASIN_FUZZ_JOBS:-$(nproc)}"
for bin in "${targets[@]}"; do
  name="$(basename "$bin")"
  corpus="$BUILD_DIR/fuzz-corpus/$name"
  mkdir -p "$corpus" "$BUILD_DIR/fuzz-artifacts/$name"
  rm -f "$BUILD_DIR/fuzz-$name.status"
  seed_corpus "$name" "$corpus"
  echo "[fuzz] $name: ${SECONDS_EACH}s, corpus $corpus ($(find "$corpus" -type f | wc -l) inputs)"
  while [ "$(jobs -rp | wc -l)" -ge "$JOBS" ]; do wait -n; done
  run_target "$bin" &
done
wait

ran=0
crashes=0
failed_targets=()
for bin in "${targets[@]}"; do
  name="$(basename "$bin")"
  corpus="$BUILD_DIR/fuzz-corpus/$name"
  artifacts="$BUILD_DIR/fuzz-artifacts/$name"
  log="$BUILD_DIR/fuzz-$name.log"
  status="$(cat "$BUILD_DIR/fuzz-$name.status" 2>/dev/null || echo "no status")"
  ran=$((ran + 1))
  runs="$(grep -aEo 'stat::number_of_executed_units: *[0-9]+' "$log" | grep -aEo '[0-9]+$' | tail -1)"
  if [ "$status" != "0" ]; then
    crashes=$((crashes + 1))
    failed_targets+=("$name")
    echo "[fuzz] $name FAILED (exit $status); last lines of $log:"
    tail -n 30 "$log" | sed 's/^/    /'
    find "$artifacts" -type f -newer "$bin" -printf '    input: %p\n' 2>/dev/null | tail -n 3
  else
    echo "[fuzz] $name ok: ${runs:-?} executions, corpus now $(find "$corpus" -type f | wc -l) inputs"
  fi
done

if [ "$crashes" -gt 0 ]; then echo "[fuzz] failing targets: ${failed_targets[*]}"; fi
echo "fuzz: $ran targets ran for $SECONDS_EACH s each, $crashes crashes"
[ "$crashes" -eq 0 ]
