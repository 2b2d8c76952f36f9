#!/usr/bin/env bash
# Installs what Basin needs to build and test, idempotently:
#   1. Debian packages (skipped when all are present),
#   2. DuckDB 1.4.4 (header + shared library) from the npm registry, unless DUCKDB_ROOT
#      points at a folder holding duckdb.h and libduckdb.so, and DuckDB's C++ headers of the
#      same version (always from the npm registry),
#   3. the npm packages the interop checker runs on (tests/interop/check_table.mjs): hyparquet,
#      hyparquet-compressors and @duckdb/node-api, and node-postgres (pg) for the server tests, pinned,
#      into a node_modules folder of the cache. A failure here
#      stops setup only in CI (CI=true); locally the interop checks then report themselves skipped.
# With --bench, also Debian's postgresql-15, the peer of the server benchmark
# (bench/serve_bench.cc); if that fails, setup warns and the benchmark skips the peer.
# Prints the DuckDB folder on its last line of output to stdout when called with --print-duckdb-root,
# the C++ headers folder with --print-duckdb-headers, and the node_modules folder with
# --print-node-modules.
set -euo pipefail

DUCKDB_VERSION=1.4.4
DUCKDB_BINDINGS_VERSION=1.4.4-r.4
CACHE_DIR="${BASIN_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/basin}"
DUCKDB_DIR="$CACHE_DIR/duckdb-$DUCKDB_VERSION"
DUCKDB_HEADERS_DIR="$CACHE_DIR/duckdb-$DUCKDB_VERSION-headers"
HYPARQUET_VERSION=1.33.0
HYPARQUET_COMPRESSORS_VERSION=1.1.2
DUCKDB_NODE_API_VERSION=1.5.6-r.1
NODE_PG_VERSION=8.23.1
NODE_DIR="$CACHE_DIR/node"

PACKAGES=(
  build-essential cmake ninja-build pkg-config clang clang-format clang-tidy libclang-rt-14-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  libroaring-dev nlohmann-json3-dev libsimdjson-dev libcli11-dev libfmt-dev libedit-dev
  libzstd-dev zlib1g-dev libssl-dev librdkafka-dev kcat libavro-dev libcpp-httplib-dev
  postgresql-client libpq-dev openssl curl ca-certificates ccache
  default-jdk-headless libpostgresql-jdbc-java
  # headless Chromium and its WebDriver, for the web console's tests (tests/testing/webdriver.h)
  chromium chromium-driver
)

log() { echo "[setup] $*" >&2; }

apt_install() {  # the Debian packages "$@", with sudo unless root
  local sudo=""
  if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
  $sudo apt-get update -qq >&2 && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "$@" >&2
}

install_packages() {
  local missing=()
  for p in "${PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  # node and npm fetch DuckDB and the interop readers; Debian's nodejs only when none is on PATH.
  command -v npm >/dev/null 2>&1 || missing+=(nodejs npm)
  if [ ${#missing[@]} -eq 0 ]; then return 0; fi
  log "installing Debian packages: ${missing[*]}"
  if ! apt_install "${missing[@]}"; then
    log "ERROR: could not install Debian packages: ${missing[*]}"
    log "       install them by hand (apt-get install ...) and run this again"
    exit 1
  fi
}

# Only for `make bench`: never needed by the build or the tests.
install_bench_packages() {
  dpkg-query -W -f='${Status}' postgresql-15 2>/dev/null | grep -q "install ok installed" && return 0
  log "installing Debian's postgresql-15 for the server benchmark's peer"
  if ! apt_install postgresql-15; then
    log "WARNING: could not install postgresql-15; serve_bench will skip its PostgreSQL peer"
  fi
}

fetch_duckdb() {
  if [ -n "${DUCKDB_ROOT:-}" ]; then
    if [ -f "$DUCKDB_ROOT/duckdb.h" ] && [ -f "$DUCKDB_ROOT/libduckdb.so" ]; then
      DUCKDB_DIR="$DUCKDB_ROOT"; return 0
    fi
    log "ERROR: DUCKDB_ROOT=$DUCKDB_ROOT does not hold duckdb.h and libduckdb.so"; exit 1
  fi
  if [ -f "$DUCKDB_DIR/duckdb.h" ] && [ -f "$DUCKDB_DIR/libduckdb.so" ]; then return 0; fi
  log "fetching DuckDB $DUCKDB_VERSION from the npm registry into $DUCKDB_DIR"
  local tmp; tmp="$(mktemp -d)"
  trap 'rm -rf "$tmp"' RETURN
  if ! (cd "$tmp" && npm pack --silent "duckdb@$DUCKDB_VERSION" \
          "@duckdb/node-bindings-linux-x64@$DUCKDB_BINDINGS_VERSION" >/dev/null 2>"$tmp/npm.err"); then
    log "ERROR: could not fetch DuckDB packages with npm:"; cat "$tmp/npm.err" >&2
    log "       set DUCKDB_ROOT to a folder with duckdb.h and libduckdb.so (DuckDB's release archive)"
    exit 1
  fi
  mkdir -p "$tmp/src" "$tmp/lib" "$DUCKDB_DIR.partial"
  tar -xzf "$tmp/duckdb-$DUCKDB_VERSION.tgz" -C "$tmp/src" package/src/duckdb/src/include/duckdb.h
  tar -xzf "$tmp/duckdb-node-bindings-linux-x64-$DUCKDB_BINDINGS_VERSION.tgz" -C "$tmp/lib" package/libduckdb.so
  cp "$tmp/src/package/src/duckdb/src/include/duckdb.h" "$tmp/lib/package/libduckdb.so" "$DUCKDB_DIR.partial/"
  rm -rf "$DUCKDB_DIR" && mv "$DUCKDB_DIR.partial" "$DUCKDB_DIR"
}

# DuckDB's C++ headers of the same version, from the duckdb source package: the extension
# points src/engine/duckdb/ plugs into (catalog, table functions, multi-file reader, file
# system; docs/duckdb-integration.md). Always fetched, also with DUCKDB_ROOT: release
# archives ship only duckdb.h and the amalgamated duckdb.hpp.
fetch_duckdb_headers() {
  if [ -f "$DUCKDB_HEADERS_DIR/duckdb.hpp" ] && \
     [ -f "$DUCKDB_HEADERS_DIR/duckdb/common/multi_file/multi_file_reader.hpp" ]; then return 0; fi
  log "fetching DuckDB $DUCKDB_VERSION C++ headers from the npm registry into $DUCKDB_HEADERS_DIR"
  local tmp; tmp="$(mktemp -d)"
  trap 'rm -rf "$tmp"' RETURN
  if ! (cd "$tmp" && npm pack --silent "duckdb@$DUCKDB_VERSION" >/dev/null 2>"$tmp/npm.err"); then
    log "ERROR: could not fetch the duckdb@$DUCKDB_VERSION source package with npm:"; cat "$tmp/npm.err" >&2
    exit 1
  fi
  tar -xzf "$tmp/duckdb-$DUCKDB_VERSION.tgz" -C "$tmp" package/src/duckdb/src/include
  rm -rf "$DUCKDB_HEADERS_DIR.partial"
  mv "$tmp/package/src/duckdb/src/include" "$DUCKDB_HEADERS_DIR.partial"
  rm -rf "$DUCKDB_HEADERS_DIR" && mv "$DUCKDB_HEADERS_DIR.partial" "$DUCKDB_HEADERS_DIR"
}

# The interop checker reads Basin's tables with code that shares none with Basin: hyparquet
# (a Parquet reader in JavaScript; its compressors package adds zstd, gzip, brotli, lz4) and
# DuckDB's node bindings (a newer DuckDB than Basin's).
installed_version() {  # the version of an npm package in $NODE_DIR, or nothing
  node -p "require('$NODE_DIR/node_modules/$1/package.json').version" 2>/dev/null || true
}

fetch_node_modules() {
  if [ "$(installed_version hyparquet)" = "$HYPARQUET_VERSION" ] && \
     [ "$(installed_version hyparquet-compressors)" = "$HYPARQUET_COMPRESSORS_VERSION" ] && \
     [ "$(installed_version @duckdb/node-api)" = "$DUCKDB_NODE_API_VERSION" ] && \
     [ "$(installed_version pg)" = "$NODE_PG_VERSION" ]; then return 0; fi
  log "installing hyparquet@$HYPARQUET_VERSION, hyparquet-compressors@$HYPARQUET_COMPRESSORS_VERSION" \
      "@duckdb/node-api@$DUCKDB_NODE_API_VERSION and pg@$NODE_PG_VERSION into $NODE_DIR"
  rm -rf "$NODE_DIR.partial" && mkdir -p "$NODE_DIR.partial"
  if ! npm install --silent --no-audit --no-fund --prefix "$NODE_DIR.partial" \
         "hyparquet@$HYPARQUET_VERSION" "hyparquet-compressors@$HYPARQUET_COMPRESSORS_VERSION" \
         "@duckdb/node-api@$DUCKDB_NODE_API_VERSION" "pg@$NODE_PG_VERSION" >&2; then
    rm -rf "$NODE_DIR.partial"
    if [ "${CI:-}" = "true" ]; then
      log "ERROR: could not install the interop checker's npm packages"; exit 1
    fi
    log "WARNING: could not install the interop checker's npm packages; interop tests will be skipped"
    return 0
  fi
  rm -rf "$NODE_DIR" && mv "$NODE_DIR.partial" "$NODE_DIR"
}

install_packages
if [ "${1:-}" = "--bench" ]; then install_bench_packages; fi
fetch_duckdb
fetch_duckdb_headers
fetch_node_modules
if [ "${1:-}" = "--print-duckdb-root" ]; then echo "$DUCKDB_DIR"; fi
if [ "${1:-}" = "--print-duckdb-headers" ]; then echo "$DUCKDB_HEADERS_DIR"; fi
if [ "${1:-}" = "--print-node-modules" ]; then echo "$NODE_DIR/node_modules"; fi
