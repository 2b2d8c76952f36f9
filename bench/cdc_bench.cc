// AUTO CDC type 1 against a hand-written MERGE stream doing the same work: 1M change events
// (a tenth deletes) over 100k keys, appended to a source table in 10 commits, each followed
// by a triggered run that applies it. The AUTO CDC side is a pipeline flow
// (`AUTO CDC INTO customers ... SEQUENCE BY seq`, its state in the checkpoint); the peer is
// a stream `MERGE INTO` a table that keeps each key's sequence in a column, the batch
// de-duplicated by key with QUALIFY. Sequences rise from commit to commit, so both end with
// the same rows (checked). Only the runs are timed; the sides alternate over three rounds,
// each in fresh folders. Goal: AUTO CDC within 1.5x of the MERGE stream.

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "basin/pipeline.h"
#include "basin/stream.h"
#include "bench_util.h"

namespace basin::bench {
namespace {

constexpr int64_t kFullEvents = 1'000'000;
constexpr int64_t kFullKeys = 100'000;
constexpr int kCommits = 10;
constexpr int kRounds = 3;

struct Sizes {
  int64_t events = Scaled(kFullEvents, 10'000);
  int64_t keys = Scaled(kFullKeys, 1'000);
};

// The changes of commit `commit`: sequences [begin, end), keys spread by a hash.
std::string ChangesSelect(const Sizes& sizes, int commit) {
  const int64_t begin = sizes.events * commit / kCommits;
  const int64_t end = sizes.events * (commit + 1) / kCommits;
  return fmt::format(
      "SELECT (hash(i) % {2})::BIGINT AS id, 'name-' || (i % 997)::VARCHAR AS name, (i % 1000)::BIGINT AS "
      "amount, CASE WHEN hash(i * 7) % 10 = 0 THEN 'DELETE' ELSE 'UPSERT' END AS op, i AS seq FROM "
      "range({0}, "
      "{1}) t(i)",
      begin, end, sizes.keys);
}

constexpr char kChangesTable[] =
    "CREATE TABLE changes (id BIGINT, name VARCHAR, amount BIGINT, op VARCHAR, seq BIGINT)";

constexpr char kMergeStatement[] =
    "MERGE INTO target AS t USING (SELECT * FROM STREAM(changes) QUALIFY row_number() OVER (PARTITION BY id "
    "ORDER BY seq DESC) = 1) AS s ON t.id = s.id "
    "WHEN MATCHED AND s.seq > t.seq AND s.op = 'DELETE' THEN DELETE "
    "WHEN MATCHED AND s.seq > t.seq THEN UPDATE SET name = s.name, amount = s.amount, seq = s.seq "
    "WHEN NOT MATCHED AND s.op <> 'DELETE' THEN INSERT (id, name, amount, seq) VALUES (s.id, s.name, "
    "s.amount, "
    "s.seq)";

// One side's ten commits and runs in a fresh warehouse: the seconds its runs took, and a
// fingerprint of the rows it ended with.
struct SideResult {
  double seconds = 0;
  std::string fingerprint;
};

Result<SideResult> RunSide(const Sizes& sizes, bool cdc) {
  ASSIGN_OR_RETURN(auto scratch, ScratchDir::Create(cdc ? "cdc" : "cdc-merge"));
  const std::string warehouse = (scratch.path() / "warehouse").string();
  const std::filesystem::path folder = scratch.path() / "pipeline";
  std::filesystem::create_directories(folder);
  std::ofstream(folder / "customers.sql")
      << "CREATE OR REFRESH STREAMING TABLE customers;\n"
         "CREATE FLOW customers_cdc AS AUTO CDC INTO customers FROM STREAM(changes) KEYS (id)\n"
         "  APPLY AS DELETE WHEN op = 'DELETE' SEQUENCE BY seq COLUMNS * EXCEPT (op, seq);\n";
  ASSIGN_OR_RETURN(auto session, OpenSession(warehouse));
  RETURN_IF_ERROR(session->Execute(kChangesTable).status());
  if (!cdc) {
    RETURN_IF_ERROR(
        session->Execute("CREATE TABLE target (id BIGINT, name VARCHAR, amount BIGINT, seq BIGINT)")
            .status());
  }
  SideResult result;
  for (int commit = 0; commit < kCommits; commit++) {
    RETURN_IF_ERROR(session->Execute("INSERT INTO changes " + ChangesSelect(sizes, commit)).status());
    const auto start = std::chrono::steady_clock::now();
    if (cdc) {
      PipelineOptions options;
      options.folder = folder.string();
      options.warehouse = warehouse;
      ASSIGN_OR_RETURN(auto pipeline, Pipeline::Open(options));
      RETURN_IF_ERROR(pipeline->Run().status());
    } else {
      ASSIGN_OR_RETURN(auto stream, Stream::Open({.warehouse = warehouse,
                                                  .checkpoint = (scratch.path() / "checkpoint").string(),
                                                  .statement = kMergeStatement,
                                                  .trigger = "available-now"}));
      RETURN_IF_ERROR(stream->Run());
    }
    result.seconds += SecondsSince(start);
  }
  ASSIGN_OR_RETURN(
      engine::QueryResult rows,
      QueryBasin(*session, std::string("SELECT count(*) || '/' || sum(hash(id, name, amount)) FROM ") +
                               (cdc ? "customers" : "target")));
  result.fingerprint = rows.at(0, 0).value_or("");
  return result;
}

Status Run() {
  const Sizes sizes;
  Progress("cdc_bench",
           fmt::format("{} change events over {} keys in {} commits", sizes.events, sizes.keys, kCommits));
  std::vector<double> cdc_seconds;
  std::vector<double> merge_seconds;
  std::string expected;  // the rows the first side ended with
  for (int round = 0; round < kRounds; round++) {
    // Alternate which side goes first, so drift in machine load hits both alike.
    for (bool cdc : round % 2 == 0 ? std::vector<bool>{true, false} : std::vector<bool>{false, true}) {
      ASSIGN_OR_RETURN(SideResult side, RunSide(sizes, cdc));
      (cdc ? cdc_seconds : merge_seconds).push_back(side.seconds);
      Progress("cdc_bench", fmt::format("round {} {}: {:.2f} s, rows {}", round,
                                        cdc ? "AUTO CDC" : "MERGE stream", side.seconds, side.fingerprint));
      if (expected.empty()) expected = side.fingerprint;
      if (side.fingerprint != expected) {
        return Status::Internal("AUTO CDC and the MERGE stream ended with different rows: " +
                                side.fingerprint + " against " + expected);
      }
    }
  }
  const double cdc = Median(cdc_seconds);
  const double merge = Median(merge_seconds);
  PrintSummary("cdc_bench", fmt::format("AUTO CDC type 1 {:.2f} s, MERGE stream {:.2f} s: cdc/merge {:.2f} "
                                        "(goal <= 1.5; {:.0f} against {:.0f} events/s)",
                                        cdc, merge, cdc / merge, sizes.events / cdc, sizes.events / merge));
  return Status::OK();
}

}  // namespace
}  // namespace basin::bench

int main() { return basin::bench::RunBenchmark("cdc_bench", basin::bench::Run); }
