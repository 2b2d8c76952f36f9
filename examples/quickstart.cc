// Basin's public API in one program: open a warehouse, create a table, append rows in a
// transaction with a txn id, retry the same txn id and see that it commits once, read the
// table back through a SQL session, and list the snapshot's files.
//
// It checks its own results and exits non-zero on a mismatch (CI runs it).
//   build/examples/quickstart [warehouse-folder]   (default: a fresh temporary folder)
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <string>

#include "basin/session.h"
#include "basin/warehouse.h"

namespace {

int failures = 0;

void Check(bool ok, const std::string& what) {
  if (!ok) {
    std::cerr << "MISMATCH: " << what << "\n";
    failures++;
  }
}

// Prints a failed call's error and ends the program.
template <typename T>
T OrDie(basin::Result<T> result, const char* what) {
  if (!result.ok()) {
    std::cerr << what << " failed: " << result.status().ToString() << "\n";
    std::exit(1);
  }
  return std::move(result).value();
}

void OrDie(const basin::Status& status, const char* what) {
  if (!status.ok()) {
    std::cerr << what << " failed: " << status.ToString() << "\n";
    std::exit(1);
  }
}

// One day's orders, committed at most once however often it is retried.
basin::CommitResult LoadDay(const basin::Table& orders, int64_t batch) {
  basin::Transaction txn = OrDie(orders.BeginTransaction(), "BeginTransaction");
  OrDie(txn.SetTxn("quickstart-loader", batch), "SetTxn");
  OrDie(txn.Append("SELECT i AS id, DATE '2024-06-01' + " + std::to_string(batch) +
                   " AS day, (i * 1.25)::DECIMAL(10,2) AS amount FROM range(100) t(i)"),
        "Append");
  return OrDie(txn.Commit(), "Commit");
}

}  // namespace

int main(int argc, char** argv) {
  namespace fs = std::filesystem;
  fs::path folder;
  bool remove_folder = false;
  if (argc > 1) {
    folder = argv[1];
  } else {
    folder =
        fs::temp_directory_path() /
        ("basin-quickstart-" + std::to_string(std::chrono::system_clock::now().time_since_epoch().count()));
    remove_folder = true;
  }

  basin::Warehouse warehouse = OrDie(basin::Warehouse::Open(folder.string()), "Warehouse::Open");
  std::cout << "warehouse: " << warehouse.location() << "\n";

  basin::Table orders =
      OrDie(warehouse.CreateTable("sales.orders",
                                  {{"id", "bigint", false}, {"day", "date"}, {"amount", "decimal(10,2)"}},
                                  {.partition_columns = {"day"}}),
            "CreateTable");

  basin::CommitResult first = LoadDay(orders, 1);
  std::cout << "batch 1: committed version " << first.version << " (" << first.num_rows << " rows)\n";
  Check(!first.skipped && first.version == 1 && first.num_rows == 100, "the first load commits version 1");

  // A loader that crashed after committing retries the same batch: nothing is written twice.
  basin::CommitResult retry = LoadDay(orders, 1);
  std::cout << "batch 1 again: " << (retry.skipped ? "skipped, already committed" : "committed")
            << " (version " << retry.version << ")\n";
  Check(retry.skipped && retry.version == 1, "the retry is skipped");

  basin::CommitResult second = LoadDay(orders, 2);
  Check(!second.skipped && second.version == 2, "the next batch commits version 2");

  // Read it back with SQL.
  std::unique_ptr<basin::Session> session =
      OrDie(basin::Session::Open({.warehouse = warehouse.location()}), "Session::Open");
  std::vector<basin::StatementResult> results = OrDie(
      session->Execute("SELECT day, count(*) AS orders, sum(amount) AS total FROM sales.orders GROUP BY day "
                       "ORDER BY day"),
      "SELECT");
  const basin::QueryResult& rows = results.at(0).result;
  for (const basin::Row& row : rows.rows) {
    std::cout << "  " << row[0].value_or("NULL") << ": " << row[1].value_or("NULL") << " orders, total "
              << row[2].value_or("NULL") << "\n";
  }
  Check(rows.row_count() == 2, "two days");
  Check(rows.row_count() == 2 && rows.rows[0][1] == "100" && rows.rows[1][1] == "100", "100 orders a day");
  Check(rows.row_count() == 2 && rows.rows[0][2] == "6187.50", "the first day's total");

  // The snapshot: version, files, rows.
  basin::Snapshot snapshot = OrDie(orders.LatestSnapshot(), "LatestSnapshot");
  std::cout << "version " << snapshot.version() << ", " << snapshot.num_files() << " files, "
            << snapshot.num_records().value_or(-1) << " rows, " << snapshot.size_bytes() << " bytes\n";
  for (const basin::DataFile& file : snapshot.files()) {
    std::cout << "  " << file.path << " (" << file.size_bytes << " bytes, " << file.num_records.value_or(-1)
              << " rows)\n";
  }
  Check(snapshot.version() == 2, "the latest version is 2");
  Check(snapshot.num_files() == 2, "one file per day");
  Check(snapshot.num_records() == 200, "200 rows");

  if (remove_folder) fs::remove_all(folder);
  if (failures > 0) {
    std::cerr << failures << " check(s) failed\n";
    return 1;
  }
  std::cout << "ok\n";
  return 0;
}
