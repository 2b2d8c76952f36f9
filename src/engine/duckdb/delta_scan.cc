#include "engine/duckdb/delta_scan.h"

#include <algorithm>
#include <mutex>

#include "common/strings.h"
#include "delta/actions.h"
#include "delta/deletion_vector.h"
#include "delta/paths.h"
#include "delta/skipping.h"
#include "duckdb/catalog/catalog_entry/table_function_catalog_entry.hpp"
#include "duckdb/common/multi_file/multi_file_function.hpp"
#include "duckdb/common/multi_file/multi_file_reader.hpp"
#include "duckdb/execution/expression_executor.hpp"
#include "duckdb/main/extension/extension_loader.hpp"
#include "duckdb/parser/expression/constant_expression.hpp"
#include "duckdb/parser/tableref/table_function_ref.hpp"
#include "duckdb/planner/expression/bound_reference_expression.hpp"
#include "engine/duckdb/client_state.h"
#include "engine/duckdb/errors.h"
#include "engine/duckdb/table_filters.h"
#include "engine/duckdb/type_mapping.h"
#include "engine/duckdb/variant_columns.h"

namespace basin::engine::duckdb_ext {

namespace {

using duckdb::idx_t;

// Virtual column: the index of the row's file in the snapshot's file list.
const duckdb::column_t kFileIndexColumnId = duckdb::VIRTUAL_COLUMN_START + 1000;
// The file's path as the log records it, passed along with each file DuckDB opens.
constexpr char kLogPathOption[] = "basin_log_path";

std::string Where(const DeltaScanSource& source) {
  return "table " + source.name + " version " + std::to_string(source.snapshot->version);
}

// Where DuckDB opens a data file: a basin:// URL of the table's store, or the absolute
// location the log gives (a table whose files live elsewhere, as shallow clones make).
std::string DataFilePath(const DeltaScanSource& source, const delta::AddFile& add) {
  std::string decoded = delta::DecodeDataPath(add.path);
  if (delta::IsAbsoluteDataPath(decoded)) return decoded;
  return StoreUrl(*source.store, decoded);
}

bool IsPartitionColumn(const delta::Metadata& metadata, const std::string& name) {
  return std::any_of(metadata.partition_columns.begin(), metadata.partition_columns.end(),
                     [&](const std::string& p) { return EqualsIgnoreCase(p, name); });
}

// The partition value of `field` in `add`: partition values are keyed by logical name, or
// by physical name under column mapping.
std::optional<std::string> PartitionValueOf(const delta::AddFile& add, const delta::StructField& field,
                                            bool column_mapping) {
  for (const auto& [name, value] : add.partition_values) {
    if (EqualsIgnoreCase(name, field.name) || (column_mapping && name == field.PhysicalName())) return value;
  }
  return std::nullopt;
}

// Rows a deletion vector removes, applied by the Parquet reader as it scans.
class DeletionVectorFilter : public duckdb::DeleteFilter {
 public:
  explicit DeletionVectorFilter(std::vector<uint64_t> deleted) : deleted_(std::move(deleted)) {
    std::sort(deleted_.begin(), deleted_.end());
  }

  idx_t Filter(duckdb::row_t start_row_index, idx_t count, duckdb::SelectionVector& result_sel) override {
    result_sel.Initialize(STANDARD_VECTOR_SIZE);
    auto start = static_cast<uint64_t>(start_row_index);
    auto next = std::lower_bound(deleted_.begin(), deleted_.end(), start);
    idx_t selected = 0;
    for (idx_t i = 0; i < count; i++) {
      if (next != deleted_.end() && *next == start + i) {
        ++next;
        continue;
      }
      result_sel.set_index(selected++, i);
    }
    return selected;
  }

 private:
  std::vector<uint64_t> deleted_;
};

}  // namespace

std::shared_ptr<DeltaScanSource> MakeScanSource(std::shared_ptr<const delta::Snapshot> snapshot,
                                                std::string name) {
  auto source = std::make_shared<DeltaScanSource>();
  source->store = std::make_shared<const StoreHandle>(RegisterStore(snapshot->store));
  source->snapshot = std::move(snapshot);
  source->name = std::move(name);
  return source;
}

namespace {

// The function_info of a delta_scan bound to a snapshot (catalog tables, commands).
struct PinnedSource : public duckdb::TableFunctionInfo {
  explicit PinnedSource(std::shared_ptr<const DeltaScanSource> source_p) : source(std::move(source_p)) {}
  std::shared_ptr<const DeltaScanSource> source;
};

// The files of one Delta scan. delta_scan('path') resolves its snapshot at bind time, when
// the version or timestamp option is known; pinned sources come resolved.
class DeltaFileList : public duckdb::MultiFileList {
 public:
  DeltaFileList(duckdb::ClientContext& context, const std::string& path,
                std::shared_ptr<const DeltaScanSource> source)
      : MultiFileList(duckdb::vector<duckdb::OpenFileInfo>{duckdb::OpenFileInfo(path)},
                      duckdb::FileGlobOptions::ALLOW_EMPTY),
        context_(context),
        source_(std::move(source)) {}

  void Resolve(const duckdb::MultiFileOptions& options) {
    if (source_) return;
    auto& state = GetClientState(context_);
    if (!state.lakehouse) {
      ThrowStatus(Status::InvalidArgument("delta_scan('" + paths[0].path +
                                          "'): this connection has no warehouse to find tables in"));
    }
    const Lakehouse& lakehouse = *state.lakehouse;
    const std::string& path = paths[0].path;
    delta::SnapshotOptions snapshot_options;
    auto version = options.custom_options.find("version");
    if (version != options.custom_options.end())
      snapshot_options.version = version->second.GetValue<int64_t>();
    auto timestamp = options.custom_options.find("timestamp");
    if (timestamp != options.custom_options.end()) snapshot_options.timestamp = timestamp->second.ToString();
    std::string location = path;
    if (!lakehouse.base_dir.empty() && !path.empty() && path[0] != '/' &&
        path.find("://") == std::string::npos) {
      location = lakehouse.base_dir + "/" + path;
    }
    if (lakehouse.authorize_read) {
      Status allowed = lakehouse.authorize_read(std::nullopt, location);
      if (!allowed.ok()) ThrowStatus(allowed);
    }
    auto store = lakehouse.snapshots->StoreOf(
        path, [&](const std::string&) { return lakehouse.open_table_store(location); });
    if (!store.ok()) ThrowStatus(store.status());
    auto snapshot = lakehouse.snapshots->Get(*store, path, snapshot_options);
    if (!snapshot.ok()) ThrowStatus(snapshot.status());
    source_ = MakeScanSource(*snapshot, path);
  }

  const DeltaScanSource& source() const {
    if (!source_) throw duckdb::InternalException("delta_scan: the snapshot was not resolved");
    return *source_;
  }
  const std::shared_ptr<const DeltaScanSource>& source_ptr() const { return source_; }

  idx_t Count() const {
    const DeltaScanSource& s = source();
    return s.files ? s.files->size() : s.snapshot->files.size();
  }
  // The index in the snapshot's file list of this list's file `i`.
  uint32_t SnapshotIndex(idx_t i) const {
    const DeltaScanSource& s = source();
    return s.files ? (*s.files)[i] : static_cast<uint32_t>(i);
  }
  const delta::AddFile& AddFileAt(idx_t i) const { return source().snapshot->files[SnapshotIndex(i)]; }

  duckdb::vector<duckdb::OpenFileInfo> GetAllFiles() override {
    duckdb::vector<duckdb::OpenFileInfo> out;
    for (idx_t i = 0; i < Count(); i++) out.push_back(GetFile(i));
    return out;
  }
  duckdb::FileExpandResult GetExpandResult() override {
    idx_t count = Count();
    if (count == 0) return duckdb::FileExpandResult::NO_FILES;
    return count == 1 ? duckdb::FileExpandResult::SINGLE_FILE : duckdb::FileExpandResult::MULTIPLE_FILES;
  }
  idx_t GetTotalFileCount() override { return Count(); }

  duckdb::unique_ptr<duckdb::NodeStatistics> GetCardinality(duckdb::ClientContext&) override {
    const delta::FileStatsIndex& stats = source().snapshot->stats_index();
    idx_t rows = 0;
    for (idx_t i = 0; i < Count(); i++) {
      std::optional<int64_t> n = stats.NumRecords(SnapshotIndex(i));
      if (!n) return nullptr;
      rows += static_cast<idx_t>(*n);
    }
    return duckdb::make_uniq<duckdb::NodeStatistics>(rows, rows);
  }

  // The exact number of live rows, when every file's statistics give it.
  std::optional<idx_t> ExactRowCount() const {
    const delta::FileStatsIndex& stats = source().snapshot->stats_index();
    idx_t rows = 0;
    for (idx_t i = 0; i < Count(); i++) {
      const delta::AddFile& add = AddFileAt(i);
      std::optional<int64_t> n = stats.NumRecords(SnapshotIndex(i));
      if (!n) return std::nullopt;
      int64_t live = *n - (add.deletion_vector ? add.deletion_vector->cardinality : 0);
      rows += static_cast<idx_t>(std::max<int64_t>(live, 0));
    }
    return rows;
  }

  duckdb::unique_ptr<duckdb::MultiFileList> Copy() override {
    return duckdb::make_uniq<DeltaFileList>(context_, paths[0].path, source_);
  }

  // Data skipping at plan time, on the filters the optimizer could not turn into table
  // filters (an OR across columns, say): the files that may hold rows passing all of
  // them. The filters stay in the plan; only files are dropped.
  duckdb::unique_ptr<duckdb::MultiFileList> ComplexFilterPushdown(
      duckdb::ClientContext& context, const duckdb::MultiFileOptions&, duckdb::MultiFilePushdownInfo& info,
      duckdb::vector<duckdb::unique_ptr<duckdb::Expression>>& filters) override {
    if (filters.empty() || !GetClientState(context).settings.data_skipping) return nullptr;
    auto column_of = [&](const duckdb::BoundColumnRefExpression& ref) -> std::optional<delta::ColumnPath> {
      if (ref.binding.table_index != info.table_index || ref.binding.column_index >= info.column_ids.size()) {
        return std::nullopt;
      }
      return ColumnAt(info.column_ids[ref.binding.column_index]);
    };
    std::vector<delta::Predicate> conjuncts;
    for (const auto& filter : filters) conjuncts.push_back(ToPredicate(*filter, column_of));
    return Keeping(delta::FilesMatching(*source().snapshot, delta::Predicate::And(std::move(conjuncts))));
  }

  // Data skipping, when the scan starts: the files whose partition values and statistics
  // may hold rows passing `filters`. These are all the filters DuckDB pushed into the
  // scan: the query's own, IN lists, and those a join derives from its build side (its
  // probe side starts after the build side is done, so their bounds are known here).
  // `filters` is keyed by position in `column_ids`.
  duckdb::unique_ptr<duckdb::MultiFileList> DynamicFilterPushdown(
      duckdb::ClientContext& context, const duckdb::MultiFileOptions&, const duckdb::vector<std::string>&,
      const duckdb::vector<duckdb::LogicalType>&, const duckdb::vector<duckdb::column_t>& column_ids,
      duckdb::TableFilterSet& filters) const override {
    if (filters.filters.empty() || !GetClientState(context).settings.data_skipping) return nullptr;
    delta::Predicate predicate = ToPredicate(filters, [&](idx_t key) -> std::optional<delta::ColumnPath> {
      if (key >= column_ids.size()) return std::nullopt;
      return ColumnAt(column_ids[key]);
    });
    return Keeping(delta::FilesMatching(*source().snapshot, predicate));
  }

 protected:
  duckdb::OpenFileInfo GetFile(idx_t i) override {
    if (i >= Count()) return duckdb::OpenFileInfo();
    const delta::AddFile& add = AddFileAt(i);
    duckdb::OpenFileInfo file(DataFilePath(source(), add));
    file.extended_info = duckdb::make_shared_ptr<duckdb::ExtendedOpenFileInfo>();
    auto& options = file.extended_info->options;
    options["file_size"] = duckdb::Value::UBIGINT(static_cast<uint64_t>(add.size));
    options[kLogPathOption] = duckdb::Value(add.path);
    options["last_modified"] =
        duckdb::Value::TIMESTAMP(duckdb::Timestamp::FromEpochMs(add.modification_time));
    if (add.deletion_vector && add.deletion_vector->cardinality > 0)
      options["has_deletes"] = duckdb::Value(true);
    return file;
  }

 private:
  // The table column DuckDB's column id `id` names; nullopt for a virtual column.
  std::optional<delta::ColumnPath> ColumnAt(duckdb::column_t id) const {
    const delta::StructType& schema = source().snapshot->schema;
    if (duckdb::IsVirtualColumn(id) || id >= schema.fields.size()) return std::nullopt;
    return delta::ColumnPath{schema.fields[id].name};
  }

  // This list without the files not in `matching` (snapshot indexes, increasing); nullptr
  // when that drops none.
  duckdb::unique_ptr<duckdb::MultiFileList> Keeping(const std::vector<size_t>& matching) const {
    const DeltaScanSource& s = source();
    std::vector<uint32_t> kept;
    for (idx_t i = 0; i < Count(); i++) {
      uint32_t index = SnapshotIndex(i);
      if (std::binary_search(matching.begin(), matching.end(), size_t{index})) kept.push_back(index);
    }
    if (kept.size() == Count()) return nullptr;
    auto skipped = std::make_shared<DeltaScanSource>(s);
    skipped->files = std::make_shared<const std::vector<uint32_t>>(std::move(kept));
    return duckdb::make_uniq<DeltaFileList>(context_, paths[0].path, std::move(skipped));
  }

  duckdb::ClientContext& context_;
  std::shared_ptr<const DeltaScanSource> source_;
};

// The child definitions a list or map needs to be read from `local`: element (or key and
// value) names as this file spells them, nested renames kept. Struct definitions keep
// their names, which the reader matches case-insensitively (as Spark does).
duckdb::MultiFileColumnDefinition ForFile(const duckdb::MultiFileColumnDefinition& global,
                                          const delta::DataType& type,
                                          const duckdb::MultiFileColumnDefinition* local,
                                          bool column_mapping);

duckdb::vector<duckdb::MultiFileColumnDefinition> ChildrenForFile(
    const duckdb::vector<duckdb::MultiFileColumnDefinition>& globals, const delta::StructType& type,
    const duckdb::vector<duckdb::MultiFileColumnDefinition>& locals, bool column_mapping) {
  duckdb::vector<duckdb::MultiFileColumnDefinition> out;
  for (size_t i = 0; i < globals.size(); i++) {
    const duckdb::MultiFileColumnDefinition* local = nullptr;
    std::string wanted = globals[i].GetIdentifierName();
    for (const auto& candidate : locals) {
      if (candidate.name == wanted) local = &candidate;
    }
    if (local == nullptr) {
      for (const auto& candidate : locals) {
        if (EqualsIgnoreCase(candidate.name, wanted)) local = &candidate;
      }
    }
    out.push_back(ForFile(globals[i], *type.fields[i].type, local, column_mapping));
  }
  return out;
}

duckdb::MultiFileColumnDefinition ForFile(const duckdb::MultiFileColumnDefinition& global,
                                          const delta::DataType& type,
                                          const duckdb::MultiFileColumnDefinition* local,
                                          bool column_mapping) {
  duckdb::MultiFileColumnDefinition out = global;
  if (local == nullptr) return out;
  switch (type.kind) {
    case delta::DataType::Kind::kStruct:
      out.children = ChildrenForFile(global.children, type.struct_type, local->children, column_mapping);
      break;
    case delta::DataType::Kind::kArray: {
      // Without column mapping the file's element names do not matter: a cast maps the list.
      if (!column_mapping || local->type.id() != duckdb::LogicalTypeId::LIST || local->children.size() != 1)
        break;
      const auto& local_element = local->children[0];
      out.children = {
          ForFile(TypeDefinition(local_element.name, local_element.name, *type.element_type, column_mapping),
                  *type.element_type, &local_element, column_mapping)};
      break;
    }
    case delta::DataType::Kind::kMap: {
      if (!column_mapping || local->type.id() != duckdb::LogicalTypeId::MAP || local->children.size() != 1 ||
          local->children[0].children.size() != 2)
        break;
      const auto& key_value = local->children[0].children;
      out.children = {
          ForFile(TypeDefinition(key_value[0].name, key_value[0].name, *type.key_type, column_mapping),
                  *type.key_type, &key_value[0], column_mapping),
          ForFile(TypeDefinition(key_value[1].name, key_value[1].name, *type.value_type, column_mapping),
                  *type.value_type, &key_value[1], column_mapping)};
      break;
    }
    case delta::DataType::Kind::kPrimitive:
      break;
  }
  return out;
}

// The scan's state across files: the filters on columns holding variants, which the
// reader cannot apply to the groups it reads; they run on the decoded rows (FinalizeChunk).
struct DeltaGlobalState : public duckdb::MultiFileReaderGlobalState {
  explicit DeltaGlobalState(duckdb::optional_ptr<const duckdb::MultiFileList> file_list)
      : MultiFileReaderGlobalState({}, file_list) {}

  std::once_flag variant_filters_once;
  duckdb::vector<duckdb::unique_ptr<duckdb::Expression>> variant_filters;  // over the output chunk
};

struct DeltaMultiFileReader : public duckdb::MultiFileReader {
  std::shared_ptr<const DeltaScanSource> pinned;

  static duckdb::unique_ptr<duckdb::MultiFileReader> Create(const duckdb::TableFunction& function) {
    auto reader = duckdb::make_uniq<DeltaMultiFileReader>();
    if (function.function_info) reader->pinned = function.function_info->Cast<PinnedSource>().source;
    return reader;
  }

  duckdb::unique_ptr<duckdb::MultiFileReader> Copy() const override {
    auto copy = duckdb::make_uniq<DeltaMultiFileReader>();
    copy->pinned = pinned;
    copy->function_name = function_name;
    return copy;
  }

  duckdb::shared_ptr<duckdb::MultiFileList> CreateFileList(duckdb::ClientContext& context,
                                                           const duckdb::vector<std::string>& paths,
                                                           const duckdb::FileGlobInput&) override {
    if (paths.size() != 1) throw duckdb::BinderException("delta_scan takes one table path");
    if (!pinned && paths[0].rfind(kScanTokenPrefix, 0) == 0) {
      auto registered = GetClientState(context).FindScan(paths[0].substr(sizeof(kScanTokenPrefix) - 1));
      if (!registered)
        throw duckdb::BinderException("delta_scan: %s is not a scan of this connection", paths[0]);
      return duckdb::make_shared_ptr<DeltaFileList>(context, registered->name, registered);
    }
    return duckdb::make_shared_ptr<DeltaFileList>(context, paths[0], pinned);
  }

  bool ParseOption(const std::string& key, const duckdb::Value& val, duckdb::MultiFileOptions& options,
                   duckdb::ClientContext& context) override {
    if (key == "version" || key == "timestamp") {
      if (val.IsNull()) throw duckdb::BinderException("delta_scan: %s must not be NULL", key);
      if (options.custom_options.count("version") + options.custom_options.count("timestamp") > 0) {
        throw duckdb::BinderException("delta_scan: give version or timestamp, not both");
      }
      if (key == "version" && val.GetValue<int64_t>() < 0) {
        throw duckdb::BinderException("delta_scan: version must not be negative");
      }
      options.custom_options[key] = val;
      return true;
    }
    return duckdb::MultiFileReader::ParseOption(key, val, options, context);
  }

  bool Bind(duckdb::MultiFileOptions& options, duckdb::MultiFileList& files,
            duckdb::vector<duckdb::LogicalType>& return_types, duckdb::vector<std::string>& names,
            duckdb::MultiFileReaderBindData& bind_data) override {
    auto& list = files.Cast<DeltaFileList>();
    list.Resolve(options);
    const delta::Snapshot& snapshot = *list.source().snapshot;
    bool column_mapping = delta::ColumnMappingEnabled(snapshot.metadata);
    for (const delta::StructField& field : snapshot.schema.fields) {
      names.push_back(field.name);
      return_types.push_back(ToLogicalType(*field.type));
      bind_data.schema.push_back(ColumnDefinition(field, column_mapping));
    }
    return true;
  }

  void BindOptions(duckdb::MultiFileOptions& options, duckdb::MultiFileList& files,
                   duckdb::vector<duckdb::LogicalType>& return_types, duckdb::vector<std::string>& names,
                   duckdb::MultiFileReaderBindData& bind_data) override {
    options.auto_detect_hive_partitioning = false;
    options.hive_partitioning = false;
    options.union_by_name = false;
    duckdb::MultiFileReader::BindOptions(options, files, return_types, names, bind_data);
  }

  duckdb::unique_ptr<duckdb::MultiFileReaderGlobalState> InitializeGlobalState(
      duckdb::ClientContext& context, const duckdb::MultiFileOptions& file_options,
      const duckdb::MultiFileReaderBindData& bind_data, const duckdb::MultiFileList& file_list,
      const duckdb::vector<duckdb::MultiFileColumnDefinition>& global_columns,
      const duckdb::vector<duckdb::ColumnIndex>& global_column_ids) override {
    auto& list = file_list.Cast<DeltaFileList>();
    auto& counters = GetClientState(context).counters;
    counters.files_read += list.Count();
    counters.files_total += list.source().snapshot->files.size();
    return duckdb::make_uniq<DeltaGlobalState>(&file_list);
  }

  void FinalizeBind(duckdb::MultiFileReaderData& reader_data, const duckdb::MultiFileOptions& file_options,
                    const duckdb::MultiFileReaderBindData& options,
                    const duckdb::vector<duckdb::MultiFileColumnDefinition>& global_columns,
                    const duckdb::vector<duckdb::ColumnIndex>& global_column_ids,
                    duckdb::ClientContext& context,
                    duckdb::optional_ptr<duckdb::MultiFileReaderGlobalState> global_state) override {
    duckdb::MultiFileReader::FinalizeBind(reader_data, file_options, options, global_columns,
                                          global_column_ids, context, global_state);
  }

  duckdb::ReaderInitializeType InitializeReader(
      duckdb::MultiFileReaderData& reader_data, const duckdb::MultiFileBindData& bind_data,
      const duckdb::vector<duckdb::MultiFileColumnDefinition>& global_columns,
      const duckdb::vector<duckdb::ColumnIndex>& global_column_ids,
      duckdb::optional_ptr<duckdb::TableFilterSet> table_filters, duckdb::ClientContext& context,
      duckdb::MultiFileGlobalState& gstate) override {
    auto& list = gstate.file_list.Cast<DeltaFileList>();
    const DeltaScanSource& source = list.source();
    const delta::Snapshot& snapshot = *source.snapshot;
    auto& reader = *reader_data.reader;
    idx_t file_index = reader.file_list_idx.GetIndex();
    const delta::AddFile& add = list.AddFileAt(file_index);
    bool column_mapping = delta::ColumnMappingEnabled(snapshot.metadata);

    // The table's columns as this file holds them. Columns holding variants are read as
    // stored and decoded after (DecodeVariants).
    duckdb::vector<duckdb::MultiFileColumnDefinition> columns =
        ChildrenForFile(global_columns, snapshot.schema, reader.GetColumns(), column_mapping);
    for (idx_t i = 0; i < columns.size() && i < snapshot.schema.fields.size(); i++) {
      if (!ContainsVariant(*snapshot.schema.fields[i].type)) continue;
      for (const auto& local : reader.GetColumns()) {
        if (!EqualsIgnoreCase(local.name, columns[i].GetIdentifierName())) continue;
        duckdb::MultiFileColumnDefinition stored(columns[i].name, local.type);
        stored.identifier = duckdb::Value(local.name);
        stored.default_expression = duckdb::make_uniq<duckdb::ConstantExpression>(duckdb::Value(local.type));
        columns[i] = std::move(stored);
        break;
      }
    }

    FinalizeBind(reader_data, bind_data.file_options, bind_data.reader_bind, columns, global_column_ids,
                 context, gstate.multi_file_reader_state.get());
    for (idx_t i = 0; i < global_column_ids.size(); i++) {
      duckdb::column_t column_id = global_column_ids[i].GetPrimaryIndex();
      duckdb::MultiFileGlobalIndex global_index(i);
      if (column_id == kFileIndexColumnId) {
        reader_data.constant_map.Add(global_index, duckdb::Value::BIGINT(list.SnapshotIndex(file_index)));
        continue;
      }
      if (duckdb::IsVirtualColumn(column_id) || column_id >= snapshot.schema.fields.size()) continue;
      const delta::StructField& field = snapshot.schema.fields[column_id];
      if (IsPartitionColumn(snapshot.metadata, field.name)) {
        reader_data.constant_map.Add(
            global_index, PartitionValue(context, *field.type, PartitionValueOf(add, field, column_mapping),
                                         Where(source) + " file " + add.path + " column " + field.name));
      }
    }
    if (add.deletion_vector && add.deletion_vector->cardinality > 0) {
      std::string where = Where(source) + " file " + add.path;
      auto deleted = delta::LoadDeletionVector(*snapshot.store, *add.deletion_vector, where);
      if (!deleted.ok()) ThrowStatus(deleted.status());
      reader.deletion_filter = duckdb::make_uniq<DeletionVectorFilter>(std::move(*deleted));
    }
    // Filters on columns holding variants wait for the decoded values (FinalizeChunk).
    auto& state = gstate.multi_file_reader_state->Cast<DeltaGlobalState>();
    duckdb::unique_ptr<duckdb::TableFilterSet> reader_filters;
    if (table_filters) {
      reader_filters = duckdb::make_uniq<duckdb::TableFilterSet>();
      duckdb::vector<std::pair<idx_t, const duckdb::TableFilter*>> deferred;
      for (const auto& [position, filter] : table_filters->filters) {
        duckdb::column_t column_id = global_column_ids[position].GetPrimaryIndex();
        if (column_id < snapshot.schema.fields.size() &&
            ContainsVariant(*snapshot.schema.fields[column_id].type)) {
          deferred.emplace_back(position, filter.get());
        } else {
          reader_filters->filters.emplace(position, filter->Copy());
        }
      }
      std::call_once(state.variant_filters_once, [&] {
        for (const auto& [position, filter] : deferred) {
          duckdb::column_t column_id = global_column_ids[position].GetPrimaryIndex();
          duckdb::BoundReferenceExpression column(ToLogicalType(*snapshot.schema.fields[column_id].type),
                                                  position);
          state.variant_filters.push_back(filter->ToExpression(column));
        }
      });
    }
    auto result = CreateMapping(context, reader_data, columns, global_column_ids, reader_filters.get(),
                                gstate.file_list, bind_data.reader_bind, bind_data.virtual_columns);
    DecodeVariantColumns(reader_data, global_column_ids, snapshot.schema, column_mapping);
    return result;
  }

  // Columns holding variant groups, read as stored, become what the table says.
  static void DecodeVariantColumns(duckdb::MultiFileReaderData& reader_data,
                                   const duckdb::vector<duckdb::ColumnIndex>& global_column_ids,
                                   const delta::StructType& schema, bool column_mapping) {
    for (idx_t i = 0; i < global_column_ids.size() && i < reader_data.expressions.size(); i++) {
      duckdb::column_t column_id = global_column_ids[i].GetPrimaryIndex();
      if (duckdb::IsVirtualColumn(column_id) || column_id >= schema.fields.size()) continue;
      const delta::DataTypePtr& type = schema.fields[column_id].type;
      auto& expr = reader_data.expressions[i];
      if (!expr || !ContainsVariant(*type) || expr->return_type == ToLogicalType(*type)) continue;
      expr = DecodeVariants(std::move(expr), type, column_mapping);
    }
  }

  void FinalizeChunk(duckdb::ClientContext& context, const duckdb::MultiFileBindData& bind_data,
                     duckdb::BaseFileReader& reader, const duckdb::MultiFileReaderData& reader_data,
                     duckdb::DataChunk& input_chunk, duckdb::DataChunk& output_chunk,
                     duckdb::ExpressionExecutor& executor,
                     duckdb::optional_ptr<duckdb::MultiFileReaderGlobalState> global_state) override {
    duckdb::MultiFileReader::FinalizeChunk(context, bind_data, reader, reader_data, input_chunk, output_chunk,
                                           executor, global_state);
    auto& state = global_state->Cast<DeltaGlobalState>();
    if (state.variant_filters.empty() || output_chunk.size() == 0) return;
    duckdb::ExpressionExecutor filter(context);
    for (const auto& expr : state.variant_filters) filter.AddExpression(*expr);
    duckdb::SelectionVector selected(STANDARD_VECTOR_SIZE);
    idx_t count = filter.SelectExpression(output_chunk, selected);
    if (count < output_chunk.size()) output_chunk.Slice(selected, count);
  }

  duckdb::shared_ptr<duckdb::BaseFileReader> CreateReader(
      duckdb::ClientContext& context, duckdb::GlobalTableFunctionState& gstate,
      const duckdb::OpenFileInfo& file, idx_t file_idx, const duckdb::MultiFileBindData& bind_data) override {
    try {
      return duckdb::MultiFileReader::CreateReader(context, gstate, file, file_idx, bind_data);
    } catch (duckdb::IOException& e) {
      // The bound list has the scan's snapshot; the file's log path rides with it (GetFile).
      const DeltaScanSource& source = bind_data.file_list->Cast<DeltaFileList>().source();
      std::string decoded = file.path;
      if (file.extended_info) {
        auto log_path = file.extended_info->options.find(kLogPathOption);
        if (log_path != file.extended_info->options.end())
          decoded = delta::DecodeDataPath(log_path->second.ToString());
      }
      if (!delta::IsAbsoluteDataPath(decoded) &&
          source.snapshot->store->Head(decoded).status().IsNotFound()) {
        ThrowStatus(Status::NotFound(Where(source) + ": data file " + decoded + " is missing"));
      }
      ThrowStatus(Status::IOError(Where(source) + ": data file " + decoded + " cannot be read: " + e.what()));
    }
  }
};

const DeltaFileList& FileListOf(const duckdb::FunctionData& bind_data) {
  return bind_data.Cast<duckdb::MultiFileBindData>().file_list->Cast<DeltaFileList>();
}

duckdb::vector<duckdb::PartitionStatistics> DeltaPartitionStats(duckdb::ClientContext&,
                                                                duckdb::GetPartitionStatsInput& input) {
  duckdb::vector<duckdb::PartitionStatistics> result;
  if (!input.bind_data) return result;
  std::optional<idx_t> rows = FileListOf(*input.bind_data).ExactRowCount();
  if (!rows) return result;
  duckdb::PartitionStatistics stats;
  stats.row_start = 0;
  stats.count = *rows;
  stats.count_type = duckdb::CountType::COUNT_EXACT;
  result.push_back(stats);
  return result;
}

duckdb::table_function_get_virtual_columns_t parquet_virtual_columns = nullptr;

duckdb::virtual_column_map_t DeltaVirtualColumns(duckdb::ClientContext& context,
                                                 duckdb::optional_ptr<duckdb::FunctionData> bind_data) {
  duckdb::virtual_column_map_t result = parquet_virtual_columns(context, bind_data);
  result.insert(std::make_pair(kFileIndexColumnId,
                               duckdb::TableColumn(kScanFileIndexColumn, duckdb::LogicalType::BIGINT)));
  bind_data->Cast<duckdb::MultiFileBindData>().virtual_columns = result;
  return result;
}

duckdb::InsertionOrderPreservingMap<std::string> DeltaToString(duckdb::TableFunctionToStringInput& input) {
  duckdb::InsertionOrderPreservingMap<std::string> result;
  if (!input.bind_data) return result;
  const DeltaFileList& list = FileListOf(*input.bind_data);
  const DeltaScanSource& source = list.source();
  result["Table"] = source.name;
  result["Version"] = std::to_string(source.snapshot->version);
  result["Files"] = std::to_string(list.Count()) + " of " + std::to_string(source.snapshot->files.size());
  return result;
}

void DeltaScanSerialize(duckdb::Serializer&, const duckdb::optional_ptr<duckdb::FunctionData>,
                        const duckdb::TableFunction&) {
  throw duckdb::NotImplementedException("delta_scan cannot be serialized");
}

duckdb::TableFunctionSet MakeDeltaScanSet(duckdb::DatabaseInstance& db) {
  duckdb::ExtensionLoader loader(db, "basin");
  duckdb::TableFunctionSet set = loader.GetTableFunction("parquet_scan").functions;
  set.name = kDeltaScanFunction;
  for (auto& function : set.functions) {
    if (parquet_virtual_columns == nullptr) parquet_virtual_columns = function.get_virtual_columns;
    function.name = kDeltaScanFunction;
    function.get_multi_file_reader = DeltaMultiFileReader::Create;
    function.get_partition_stats = DeltaPartitionStats;
    function.get_virtual_columns = DeltaVirtualColumns;
    function.to_string = DeltaToString;
    function.statistics = nullptr;  // a file's Parquet statistics are not the table's
    function.get_bind_info = nullptr;
    function.late_materialization = false;
    function.serialize = DeltaScanSerialize;
    function.deserialize = nullptr;
    function.named_parameters.clear();
    function.named_parameters["version"] = duckdb::LogicalType::BIGINT;
    function.named_parameters["timestamp"] = duckdb::LogicalType::VARCHAR;
  }
  return set;
}

}  // namespace

void RegisterDeltaScan(duckdb::DatabaseInstance& db) {
  duckdb::ExtensionLoader loader(db, "basin");
  auto set = MakeDeltaScanSet(db);
  // Only the single-path form: a Delta table is one folder.
  duckdb::TableFunctionSet single(kDeltaScanFunction);
  for (auto& function : set.functions) {
    if (function.arguments.size() == 1 && function.arguments[0].id() == duckdb::LogicalTypeId::VARCHAR) {
      single.AddFunction(function);
    }
  }
  loader.RegisterFunction(std::move(single));
}

duckdb::TableFunction BindDeltaScan(duckdb::ClientContext& context,
                                    std::shared_ptr<const DeltaScanSource> source,
                                    duckdb::unique_ptr<duckdb::FunctionData>& bind_data) {
  auto& entry = duckdb::Catalog::GetEntry<duckdb::TableFunctionCatalogEntry>(
      context, SYSTEM_CATALOG, DEFAULT_SCHEMA, kDeltaScanFunction);
  duckdb::TableFunction function =
      entry.functions.GetFunctionByArguments(context, {duckdb::LogicalType::VARCHAR});
  std::string name = source->name;
  function.function_info = duckdb::make_shared_ptr<PinnedSource>(std::move(source));
  duckdb::vector<duckdb::Value> inputs = {duckdb::Value(name)};
  duckdb::named_parameter_map_t parameters;
  duckdb::vector<duckdb::LogicalType> types;
  duckdb::vector<std::string> names;
  duckdb::TableFunctionRef ref;
  duckdb::TableFunctionBindInput input(inputs, parameters, types, names, nullptr, nullptr, function, ref);
  bind_data = function.bind(context, input, types, names);
  return function;
}

}  // namespace basin::engine::duckdb_ext
