// basin::Table (include/basin/table.h): snapshots and history from the Delta log, read
// with delta::LoadSnapshot and delta::ReadHistory through the table's store.
#include "basin/table.h"

#include <utility>

#include "api/state.h"
#include "delta/history.h"
#include "delta/log_segment.h"

namespace basin {

namespace {

Result<Snapshot> Load(const Table::Impl& table, const delta::SnapshotOptions& options) {
  ASSIGN_OR_RETURN(std::shared_ptr<engine::DuckDBParquetLogIO> log_io, table.warehouse->LogIO());
  ASSIGN_OR_RETURN(std::shared_ptr<delta::Snapshot> loaded,
                   delta::LoadSnapshot(table.store, table.location, *log_io, options));
  auto impl = std::make_shared<Snapshot::Impl>();
  impl->snapshot = std::move(loaded);
  return Snapshot(std::move(impl));
}

}  // namespace

Table::Table(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}

Result<Table> Table::OpenAt(const std::string& location) {
  ASSIGN_OR_RETURN(std::shared_ptr<ObjectStore> store, OpenStoreAt(location));
  ASSIGN_OR_RETURN(bool has_log, store->HasObjectsWithPrefix(std::string(delta::kLogFolder)));
  if (!has_log) return Status::NotFound("no Delta table at '" + location + "' (it has no _delta_log)");
  auto impl = std::make_shared<Impl>();
  impl->warehouse = std::make_shared<api::WarehouseState>();
  impl->location = location;
  impl->store = std::move(store);
  return Table(std::move(impl));
}

const std::string& Table::name() const { return impl_->name; }
const std::string& Table::location() const { return impl_->location; }

Result<Snapshot> Table::LatestSnapshot() const { return Load(*impl_, {}); }

Result<Snapshot> Table::SnapshotAtVersion(int64_t version) const {
  delta::SnapshotOptions options;
  options.version = version;
  return Load(*impl_, options);
}

Result<Snapshot> Table::SnapshotAtTimestamp(int64_t timestamp_ms) const {
  // delta::FormatTimestampMs gives "2024-01-31 12:00:00.000 UTC"; without the zone it is
  // read as UTC.
  std::string text = delta::FormatTimestampMs(timestamp_ms);
  if (text.ends_with(" UTC")) text.resize(text.size() - 4);
  delta::SnapshotOptions options;
  options.timestamp = text;
  return Load(*impl_, options);
}

Result<std::vector<HistoryEntry>> Table::History(size_t limit) const {
  auto commits = delta::ReadHistory(impl_->store, limit);
  if (!commits.ok()) return commits.status().WithContext("table " + impl_->location);
  std::vector<HistoryEntry> out;
  out.reserve(commits->size());
  for (const delta::CommitSummary& commit : *commits) {
    out.push_back({commit.version, commit.timestamp_ms, commit.operation.value_or("")});
  }
  return out;
}

}  // namespace basin
