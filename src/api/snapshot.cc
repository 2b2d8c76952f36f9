// basin::Snapshot (include/basin/snapshot.h): a view of a delta::Snapshot.
#include "basin/snapshot.h"

#include <utility>

#include "api/state.h"
#include "sql/type_names.h"

namespace basin {

Snapshot::Snapshot(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}

const std::string& Snapshot::location() const { return impl_->snapshot->table_root; }
int64_t Snapshot::version() const { return impl_->snapshot->version; }
int64_t Snapshot::timestamp_ms() const { return impl_->snapshot->timestamp_ms; }

const std::string& Snapshot::table_id() const { return impl_->snapshot->metadata.id; }
const std::optional<std::string>& Snapshot::name() const { return impl_->snapshot->metadata.name; }
const std::optional<std::string>& Snapshot::description() const {
  return impl_->snapshot->metadata.description;
}

int Snapshot::min_reader_version() const { return impl_->snapshot->protocol.min_reader_version; }
int Snapshot::min_writer_version() const { return impl_->snapshot->protocol.min_writer_version; }
const std::optional<std::vector<std::string>>& Snapshot::reader_features() const {
  return impl_->snapshot->protocol.reader_features;
}
const std::optional<std::vector<std::string>>& Snapshot::writer_features() const {
  return impl_->snapshot->protocol.writer_features;
}

std::vector<Column> Snapshot::columns() const {
  std::vector<Column> out;
  for (const delta::StructField& field : impl_->snapshot->schema.fields) {
    out.push_back({field.name, sql::DeltaTypeName(*field.type, sql::TypeSpelling::kDelta), field.nullable,
                   field.PhysicalName()});
  }
  return out;
}

bool Snapshot::column_mapping() const { return delta::ColumnMappingEnabled(impl_->snapshot->metadata); }

const std::vector<std::string>& Snapshot::partition_columns() const {
  return impl_->snapshot->metadata.partition_columns;
}

const std::map<std::string, std::string>& Snapshot::properties() const {
  return impl_->snapshot->metadata.configuration;
}

size_t Snapshot::num_files() const { return impl_->snapshot->files.size(); }

std::vector<DataFile> Snapshot::files() const {
  const delta::Snapshot& snapshot = *impl_->snapshot;
  const delta::FileStatsIndex& stats = snapshot.stats_index();
  std::vector<DataFile> out;
  out.reserve(snapshot.files.size());
  for (size_t i = 0; i < snapshot.files.size(); i++) {
    const delta::AddFile& file = snapshot.files[i];
    std::optional<int64_t> records = stats.NumRecords(i);
    if (records && file.deletion_vector) *records -= file.deletion_vector->cardinality;
    out.push_back({file.path, file.size, records});
  }
  return out;
}

std::optional<int64_t> Snapshot::num_records() const {
  int64_t records = impl_->snapshot->num_records();
  if (records < 0) return std::nullopt;
  return records;
}

int64_t Snapshot::size_bytes() const { return impl_->snapshot->size_bytes(); }

}  // namespace basin
