#!/usr/bin/env bash
# What Basin can do today, in well under two minutes: writes a partitioned Delta table over
# several commits into ./demo-warehouse (recreated on every run), then shows its history,
# a query at the latest and at an older version, data skipping, and `basin describe`.
# Usage: bash scripts/demo.sh [path/to/basin]      (make demo passes build/basin)
set -euo pipefail

BASIN="${1:-build/basin}"
WAREHOUSE="./demo-warehouse"
TABLE="$WAREHOUSE/events"

if [ ! -x "$BASIN" ]; then
  echo "demo: no basin binary at '$BASIN' (run 'make' first, or pass its path)" >&2
  exit 1
fi

if [ -t 1 ]; then BOLD=$'\033[1m'; DIM=$'\033[2m'; RESET=$'\033[0m'; else BOLD=""; DIM=""; RESET=""; fi

step() { printf '\n%s== %s ==%s\n' "$BOLD" "$1" "$RESET"; }
say() { printf '%s\n' "$@"; }
# Shows the command as a user would type it, then runs it (stderr too: that is where the
# data-skipping line goes).
run() {
  local shown="" arg
  for arg in "$@"; do
    case "$arg" in *[[:space:]]*) shown+=" \"$arg\"" ;; *) shown+=" $arg" ;; esac
  done
  printf '%s$ basin%s%s\n' "$DIM" "$shown" "$RESET"
  "$BASIN" "$@" 2>&1
}
sql() { run sql --warehouse "$WAREHOUSE" "$@"; }

start=$SECONDS

step "1. A Delta table, written by Basin"
say "Basin writes Parquet files through DuckDB and commits them to a Delta log. The demo" \
    "table 'events' holds 300,000 generated click-stream rows over 30 days, partitioned by" \
    "day and written in four commits: create (days 1-10), two appends (days 11-20, 21-30)," \
    "and a delete of the first day."
rm -rf "$WAREHOUSE"
mkdir -p "$WAREHOUSE"
run demo-data "$TABLE"
say "" "The table is a plain Delta Lake folder, readable by Spark, Trino, delta-rs or DuckDB:"
printf '%s$ ls %s/_delta_log%s\n' "$DIM" "$TABLE" "$RESET"
ls "$TABLE/_delta_log"
printf '%s$ ls %s | head -3%s\n' "$DIM" "$TABLE" "$RESET"
ls "$TABLE" | head -3

step "2. The commit history"
say "DESCRIBE HISTORY reads the log, newest commit first."
sql -c "DESCRIBE HISTORY delta_scan('events')"

step "3. Querying the latest version"
say "delta_scan('events') is the table as of its newest commit; DuckDB runs the query."
sql -c "SELECT event_type, count(*) AS events, round(sum(amount), 2) AS amount
        FROM delta_scan('events') GROUP BY event_type ORDER BY events DESC"
sql -c "SELECT count(*) AS total_rows, min(day) AS first_day, max(day) AS last_day FROM delta_scan('events')"

step "4. Time travel"
say "version => N reads the table as it was after commit N. At version 0 only the first ten" \
    "days existed, and the day deleted in version 3 is still there."
sql -c "SELECT count(*) AS total_rows, min(day) AS first_day, max(day) AS last_day
        FROM delta_scan('events', version => 0)"
sql -c "SELECT count(*) AS rows_on_june_1 FROM delta_scan('events', version => 2) WHERE day = DATE '2024-06-01'"

step "5. Data skipping"
say "Every data file's partition values and column min/max statistics are in the log, so" \
    "Basin hands DuckDB only the files that can match. --stats prints files read vs total."
sql --stats -c "SELECT count(*) AS views FROM delta_scan('events')
                WHERE day = DATE '2024-06-15' AND event_type = 'view'"
say "" "Statistics skip files on ordinary columns too (event ids grow with time):"
sql --stats -c "SELECT event_id, ts, user_id, event_type, amount FROM delta_scan('events')
                WHERE event_id BETWEEN 150000 AND 150004 ORDER BY event_id"
say "" "The same query without skipping reads every file and returns the same rows:"
sql --stats --no-data-skipping -c "SELECT count(*) AS n FROM delta_scan('events')
                                   WHERE event_id BETWEEN 150000 AND 150004"

step "6. basin describe"
say "Schema, protocol, partitioning, size and row count, straight from the snapshot."
run describe "$TABLE"

step "Done in $((SECONDS - start)) s"
say "Explore on your own:  $BASIN sql --warehouse $WAREHOUSE" \
    "(then e.g.  SELECT * FROM delta_scan('events') LIMIT 5;   and  .help)"
