#include "server/table_metrics.h"

#include <algorithm>

#include "basin/object_store.h"
#include "catalog/warehouse.h"
#include "commands/table_features.h"
#include "delta/log_tail.h"
#include "engine/parquet_log_io.h"

namespace basin::server {

Result<TableFigures> FiguresOf(const delta::Snapshot& snapshot) {
  ASSIGN_OR_RETURN(int64_t target_bytes, commands::TargetFileSizeBytes(snapshot.metadata));
  TableFigures figures;
  figures.version = snapshot.version;
  figures.commit_timestamp_ms = snapshot.timestamp_ms;
  for (const delta::AddFile& file : snapshot.files) {
    figures.files++;
    figures.bytes += file.size;
    if (file.size < target_bytes / 4) figures.small_files++;
  }
  return figures;
}

TableMetrics::TableMetrics(std::string warehouse, std::shared_ptr<const Clock> clock)
    : warehouse_(std::move(warehouse)),
      clock_(std::move(clock)),
      log_io_(std::make_unique<engine::DuckDBParquetLogIO>()) {}

TableMetrics::~TableMetrics() = default;

Result<bool> TableMetrics::FollowLog(const std::string& location, Kept& kept) const {
  ASSIGN_OR_RETURN(std::optional<std::vector<delta::LogFile>> commits,
                   delta::CommitFilesAfter(*kept.store, location, kept.figures.version, kept.commit_file));
  if (!commits) return false;
  Kept next = kept;  // `kept` stays as it was unless every commit is followed
  for (const delta::LogFile& commit : *commits) {
    bool followed = true;
    bool removes = false;     // the commit removes a file
    bool quiet_adds = false;  // it adds a file with dataChange false
    std::optional<delta::CommitInfo> info;
    // Adds `sign` files of `size` bytes.
    auto count = [&](int64_t size, int64_t sign) {
      next.figures.files += sign;
      next.figures.bytes += sign * size;
      if (size < next.target_bytes / 4) next.figures.small_files += sign;
    };
    RETURN_IF_ERROR(
        delta::ForEachCommitAction(*next.store, commit, location, [&](delta::Action& action) -> Status {
          if (const auto* add = std::get_if<delta::AddFile>(&action)) {
            count(add->size, 1);
            quiet_adds = quiet_adds || !add->data_change;
          } else if (const auto* remove = std::get_if<delta::RemoveFile>(&action)) {
            removes = true;
            if (!remove->size) followed = false;  // what it took away is not known
            count(remove->size.value_or(0), -1);
          } else if (auto* metadata = std::get_if<delta::Metadata>(&action)) {
            ASSIGN_OR_RETURN(int64_t target_bytes, commands::TargetFileSizeBytes(*metadata));
            if (target_bytes != next.target_bytes) followed = false;  // the small files are others
            next.metadata = std::move(*metadata);
          } else if (auto* commit_info = std::get_if<delta::CommitInfo>(&action)) {
            info = std::move(*commit_info);
          }
          return Status::OK();
        }));
    // Adds that change no data without removes are files the table holds added again (a
    // writer recomputing statistics, a compaction that changed nothing), not new ones.
    if (!followed || (quiet_adds && !removes)) return false;
    next.figures.version = commit.version;
    next.figures.commit_timestamp_ms =
        delta::CommitTimestampMs(next.metadata, info, commit.object.modification_time_ms);
    next.commit_file = commit.object;
  }
  kept = std::move(next);
  return true;
}

Result<TableFigures> TableMetrics::Figures(const std::string& location) {
  if (auto kept = kept_.find(location); kept != kept_.end()) {
    ASSIGN_OR_RETURN(bool followed, FollowLog(location, kept->second));
    if (followed) return kept->second.figures;
  }
  ASSIGN_OR_RETURN(std::shared_ptr<ObjectStore> store, OpenStoreAt(location));
  ASSIGN_OR_RETURN(std::shared_ptr<delta::Snapshot> snapshot, delta::LoadSnapshot(store, location, *log_io_));
  full_reads_++;
  ASSIGN_OR_RETURN(TableFigures figures, FiguresOf(*snapshot));
  ASSIGN_OR_RETURN(int64_t target_bytes, commands::TargetFileSizeBytes(snapshot->metadata));
  kept_[location] = Kept{figures, std::move(snapshot->metadata), target_bytes, snapshot->commit_file, store};
  return figures;
}

int64_t TableMetrics::full_reads() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return full_reads_;
}

std::vector<metrics::FamilySamples> TableMetrics::Collect(
    const std::function<bool(const catalog::TableName&)>& visible) {
  using metrics::MetricType;
  std::vector<metrics::FamilySamples> families = {
      {"basin_table_version", "The table's latest version.", MetricType::kGauge, {}},
      {"basin_table_files", "Data files in the table's latest version.", MetricType::kGauge, {}},
      {"basin_table_small_files",
       "Data files under a quarter of the table's delta.targetFileSize.",
       MetricType::kGauge,
       {}},
      {"basin_table_bytes", "Bytes of the data files in the table's latest version.", MetricType::kGauge, {}},
      {"basin_table_last_commit_age_seconds",
       "Seconds since the table's latest commit.",
       MetricType::kGauge,
       {}},
  };
  metrics::FamilySamples errors{"basin_table_scrape_errors",
                                "Tables left out of this scrape: their log could not be read.",
                                MetricType::kGauge,
                                {}};
  std::lock_guard<std::mutex> lock(mutex_);
  Result<std::shared_ptr<catalog::Warehouse>> warehouse = catalog::Warehouse::Open(warehouse_);
  Result<std::vector<catalog::TableEntry>> tables =
      warehouse.ok() ? (*warehouse)->List() : Result<std::vector<catalog::TableEntry>>(warehouse.status());
  int64_t failed = tables.ok() ? 0 : 1;
  std::map<std::string, Kept> listed;  // what is kept for the next scrape: tables that still exist
  for (const catalog::TableEntry& table : tables.ok() ? *tables : std::vector<catalog::TableEntry>()) {
    if (!visible(table.name)) {
      // Another user's scrape may show it: what is kept for it stays.
      if (auto kept = kept_.find(table.location); kept != kept_.end())
        listed[table.location] = std::move(kept->second);
      continue;
    }
    Result<TableFigures> figures = Figures(table.location);
    if (!figures.ok()) {
      failed++;
      continue;
    }
    listed[table.location] = std::move(kept_[table.location]);
    const metrics::Labels labels = {{"schema", table.name.schema}, {"table", table.name.table}};
    const double age_seconds = std::max<int64_t>(0, clock_->NowMs() - figures->commit_timestamp_ms) / 1000.0;
    const double values[] = {static_cast<double>(figures->version), static_cast<double>(figures->files),
                             static_cast<double>(figures->small_files), static_cast<double>(figures->bytes),
                             age_seconds};
    for (size_t f = 0; f < families.size(); f++) families[f].samples.push_back({"", labels, values[f]});
  }
  kept_ = std::move(listed);
  errors.samples.push_back({"", {}, static_cast<double>(failed)});
  families.push_back(std::move(errors));
  return families;
}

}  // namespace basin::server
