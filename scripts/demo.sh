#!/usr/bin/env bash
# What Basin is for, in well under two minutes: a warehouse folder of ACID Delta tables that
# batch loads, upserts, deletes and streams from Kafka write safely, that SQL reads at any
# version, and that stays plain Delta Lake. The Kafka cluster is `basin kafka-dev`, on
# loopback. Uses ./demo-warehouse (recreated on every run) and a built-in
# click-stream generator (DuckDB's range()), so nothing needs to be downloaded.
# Usage: bash scripts/demo.sh [path/to/basin]      (make demo passes build/basin)
set -euo pipefail

BASIN="${1:-build/basin}"
WAREHOUSE="./demo-warehouse"

if [ ! -x "$BASIN" ]; then
  echo "demo: no basin binary at '$BASIN' (run 'make' first, or pass its path)" >&2
  exit 1
fi

if [ -t 1 ]; then BOLD=$'\033[1m'; DIM=$'\033[2m'; RESET=$'\033[0m'; else BOLD=""; DIM=""; RESET=""; fi

step() { printf '\n%s== %s ==%s\n' "$BOLD" "$1" "$RESET"; }
say() { printf '%s\n' "$@"; }
# Shows the statement as a user would type it, then runs it (stderr too: notices and the
# data-skipping line go there).
sql() {
  local extra=()
  while [ "$1" != "-c" ]; do extra+=("$1"); shift; done
  printf '%s$ basin sql%s -c "%s"%s\n' "$DIM" "${extra[*]:+ ${extra[*]}}" "$2" "$RESET"
  "$BASIN" sql --warehouse "$WAREHOUSE" "${extra[@]}" -c "$2" 2>&1
}

# One generated day of click-stream events: 10,000 rows with consecutive ids.
events_of_days() {  # first_day last_day (0-based, inclusive)
  printf "SELECT i AS event_id, TIMESTAMPTZ '2024-06-01 00:00:00+00' + to_microseconds((i * 8640000)::BIGINT) AS ts,
       (hash(i) %% 5000)::INTEGER AS user_id,
       ['view', 'view', 'view', 'click', 'click', 'purchase'][1 + (hash(i // 7) %% 6)::INTEGER] AS event_type,
       round(((hash(i * 31) %% 20000) / 100.0)::DOUBLE, 2) AS amount,
       DATE '2024-06-01' + (i // 10000)::INTEGER AS day
FROM range(%d, %d) t(i)" $(($1 * 10000)) $((($2 + 1) * 10000))
}

start=$SECONDS
rm -rf "$WAREHOUSE"
mkdir -p "$WAREHOUSE"

step "1. Create a table"
say "A warehouse is a folder of named Delta tables. This one is partitioned by day, checks" \
    "its rows (NOT NULL, CHECK), and has deletion vectors (cheap row-level changes) and the" \
    "change data feed turned on."
sql -c "CREATE TABLE events (event_id BIGINT NOT NULL, ts TIMESTAMP, user_id INT, event_type STRING,
          amount DOUBLE, day DATE, CONSTRAINT positive_amount CHECK (amount >= 0))
        PARTITIONED BY (day)
        TBLPROPERTIES ('delta.enableDeletionVectors' = 'true', 'delta.enableChangeDataFeed' = 'true')"

step "2. Batch loads, exactly once"
say "A load job writes ten days at a time. It tags each batch with its job name and batch" \
    "number, so a retried batch (after a crash or a timeout) is skipped instead of duplicated."
sql -c "SET basin.txn_app_id = 'daily-load'; SET basin.txn_version = 1;
        INSERT INTO events $(events_of_days 0 9)"
sql -c "SET basin.txn_app_id = 'daily-load'; SET basin.txn_version = 2;
        INSERT INTO events $(events_of_days 10 19)"
say "" "The job crashes after its second batch committed, and is retried:"
sql -c "SET basin.txn_app_id = 'daily-load'; SET basin.txn_version = 2;
        INSERT INTO events $(events_of_days 10 19)"
sql -c "SELECT count(*) AS events, min(day) AS first_day, max(day) AS last_day FROM events"
say "" "Bad rows never land: the whole statement fails and nothing is committed."
sql -c "INSERT INTO events VALUES (-1, now(), 1, 'refund', -5.0, DATE '2024-06-30')" || true

step "3. Upserts, updates and deletes"
say "Late corrections arrive: MERGE updates the events that exist and inserts the new ones," \
    "touching only the files whose statistics can hold the keys."
sql -c "MERGE INTO events t
        USING (SELECT event_id, amount * 2 AS amount FROM events WHERE day = DATE '2024-06-03' AND event_type = 'purchase'
               UNION ALL SELECT 999999999, 12.5) s
        ON t.event_id = s.event_id
        WHEN MATCHED THEN UPDATE SET amount = s.amount
        WHEN NOT MATCHED THEN INSERT (event_id, ts, user_id, event_type, amount, day)
                              VALUES (s.event_id, TIMESTAMPTZ '2024-06-20 12:00:00+00', 42, 'purchase', s.amount, DATE '2024-06-20')"
sql -c "UPDATE events SET event_type = 'page_view' WHERE event_type = 'view' AND day = DATE '2024-06-05'"
sql -c "DELETE FROM events WHERE user_id = 17"

step "4. Read any version"
say "Every statement above is one commit in the table's Delta log."
sql -c "DESCRIBE HISTORY events"
sql -c "SELECT (SELECT count(*) FROM events VERSION AS OF 1) AS after_first_load,
               (SELECT count(*) FROM events VERSION AS OF 2) AS after_second_load,
               (SELECT count(*) FROM events) AS now"
say "" "The change data feed says what each commit changed, row by row:"
sql -c "SELECT _commit_version, _change_type, count(*) AS rows FROM table_changes('events', 3)
        GROUP BY ALL ORDER BY 1, 2"

step "5. Fast reads: data skipping and compaction"
say "Partition values and min/max statistics in the log let Basin hand DuckDB only the files" \
    "that can match (--stats prints files read vs total)."
sql --stats -c "SELECT event_type, count(*) AS events, round(sum(amount), 2) AS amount FROM events
                WHERE day = DATE '2024-06-15' GROUP BY event_type ORDER BY events DESC"
say "" "Many small commits leave small files; OPTIMIZE compacts them without blocking writers:"
sql -c "OPTIMIZE events"
sql -c "VACUUM events RETAIN 168 HOURS DRY RUN"

step "6. Still plain Delta Lake"
say "The table is an ordinary Delta folder that Spark, Trino, delta-rs or DuckDB can read:"
printf '%s$ ls %s/default/events/_delta_log%s\n' "$DIM" "$WAREHOUSE" "$RESET"
ls "$WAREHOUSE/default/events/_delta_log"
sql -c "SELECT count(*) AS events FROM delta_scan('default/events')"

step "7. A medallion pipeline, declared in SQL"
say "Payment events arrive on Kafka (here a dev cluster on loopback, with 2% malformed records" \
    "and 2% sent twice), a partner drops JSON files in a landing folder, and the CRM's customer" \
    "changes land in a table. examples/payments-pipeline/ declares what to make of them:" \
    "bronze from both sources, validated and de-duplicated silver with a quarantine, a customers" \
    "dimension kept by AUTO CDC (SCD type 2), and gold views for the dashboards."
KAFKA_LOG="$(mktemp)"
"$BASIN" kafka-dev --topics payments:4 --produce payments --count 5000 --malformed 0.02 --duplicates 0.02 \
  >"$KAFKA_LOG" 2>&1 &
KAFKA_PID=$!
trap 'kill $KAFKA_PID 2>/dev/null || true; rm -f "$KAFKA_LOG"' EXIT
for _ in $(seq 1 600); do grep -q "produced" "$KAFKA_LOG" && break; sleep 0.1; done
if ! grep -q "produced" "$KAFKA_LOG"; then
  echo "demo: basin kafka-dev did not produce its events within a minute:" >&2
  cat "$KAFKA_LOG" >&2
  exit 1
fi
BOOTSTRAP="$(head -n 1 "$KAFKA_LOG")"
say "$(grep produced "$KAFKA_LOG")"
# The pipeline's folder, with the dev cluster's address and the landing folder filled in.
PIPELINE="$WAREHOUSE/../demo-pipeline"
LANDING="$(cd "$WAREHOUSE" && pwd)/landing"
rm -rf "$PIPELINE" && cp -r "$(dirname "$0")/../examples/payments-pipeline" "$PIPELINE" && mkdir -p "$LANDING"
printf '{"name": "payments", "configuration": {"kafka": "%s", "landing": "%s"}}\n' "$BOOTSTRAP" "$LANDING" \
  >"$PIPELINE/pipeline.json"
land() {  # file id account amount currency region: a payment made now
  printf '{"id": %s, "account": "%s", "amount": "%s", "currency": "%s", "region": "%s", "ts": "%s"}\n' \
    "$2" "$3" "$4" "$5" "$6" "$(date -u +%Y-%m-%dT%H:%M:%SZ)" >>"$LANDING/$1"
}
land partner-1.json 900001 acct-7 12.50 EUR eu
land partner-1.json null acct-8 3.00 EUR eu
land partner-1.json 900002 acct-9 -20.00 USD us
land partner-1.json 900003 acct-10 8.75 BRL latam
sql -c "CREATE TABLE crm_changes (account STRING, name STRING, segment STRING, op STRING, seq BIGINT);
        INSERT INTO crm_changes SELECT 'acct-' || i, 'Customer ' || i, ['retail', 'business', 'premium'][1 + (i % 3)::BIGINT],
                                       'UPSERT', i FROM range(1000) t(i)" >/dev/null
cat "$PIPELINE/silver.sql"
printf '%s$ basin pipeline run demo-pipeline --warehouse %s%s\n' "$DIM" "$WAREHOUSE" "$RESET"
"$BASIN" pipeline run "$PIPELINE" --warehouse "$WAREHOUSE" 2>&1
sql -c "SELECT (SELECT count(*) FROM bronze_payments) AS bronze, (SELECT count(*) FROM payments_dlq) AS dead_letters,
               (SELECT count(*) FROM silver_payments) AS silver, (SELECT count(*) FROM silver_payments_quarantine) AS quarantined"
landed="$("$BASIN" sql --warehouse "$WAREHOUSE" --format csv -c \
  "SELECT (SELECT count(*) FROM bronze_payments WHERE origin = 'kafka') + (SELECT count(*) FROM payments_dlq)" | tail -n 1)"
if [ "$landed" != "5000" ]; then
  echo "demo: bronze and the dead-letter table hold $landed Kafka records, not the 5000 produced" >&2
  exit 1
fi
sql -c "SELECT id, amount, failed_expectations, batch_id FROM silver_payments_quarantine"
say "" "The CRM renames a customer and closes an account; a partner uploads one more file." \
    "Run the pipeline again: each flow reads only what is new, and the gold views are" \
    "refreshed incrementally where they can be (the event log says which, and why)."
sql -c "INSERT INTO crm_changes VALUES ('acct-5', 'Customer Five Ltd', 'business', 'UPSERT', 2000),
                                       ('acct-6', NULL, NULL, 'DELETE', 2001)" >/dev/null
land partner-2.json 900004 acct-11 99.00 GBP uk
"$BASIN" pipeline run "$PIPELINE" --warehouse "$WAREHOUSE" 2>&1
sql -c "SELECT account, name, segment, __START_AT, __END_AT FROM customers WHERE account IN ('acct-5', 'acct-6')
        ORDER BY account, __START_AT"
sql -c "SELECT segment, payments, amount FROM gold_by_segment ORDER BY segment"
say "" "The event log is a Delta table too. Its data-quality summary:"
sql -c "SELECT flow, expectation, action, sum(passed_rows) AS passed, sum(failed_rows) AS failed
        FROM payments_event_log WHERE event_type = 'expectation' GROUP BY ALL ORDER BY ALL"
sql -c "SELECT flow, refresh, message FROM payments_event_log WHERE refresh IS NOT NULL ORDER BY event_time, sequence"

step "Done in $((SECONDS - start)) s"
say "Explore on your own:  $BASIN sql --warehouse $WAREHOUSE" \
    "(then e.g.  SHOW TABLES;  DESCRIBE events;  SELECT * FROM events LIMIT 5;  .help)"
