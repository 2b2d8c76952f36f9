#include "engine/duckdb/table_changes_function.h"

#include <map>
#include <string>

#include "duckdb/common/string_util.hpp"
#include "duckdb/main/extension/extension_loader.hpp"
#include "duckdb/parser/parser.hpp"
#include "duckdb/parser/qualified_name.hpp"
#include "duckdb/parser/statement/select_statement.hpp"
#include "duckdb/parser/tableref/subqueryref.hpp"
#include "engine/duckdb/client_state.h"
#include "engine/duckdb/errors.h"

namespace basin::engine::duckdb_ext {

namespace {

constexpr char kFunctionName[] = "table_changes";
constexpr char kReadFilesFunction[] = "read_files";

// The warehouse table the function's first argument names, as name parts.
std::vector<std::string> TableNameParts(const duckdb::Value& argument) {
  duckdb::QualifiedName name = duckdb::QualifiedName::Parse(duckdb::StringValue::Get(argument));
  std::vector<std::string> parts;
  for (const std::string* part : {&name.catalog, &name.schema, &name.name}) {
    if (!part->empty()) parts.push_back(*part);
  }
  return parts;
}

// The query `feed` holds as the subquery `function` is replaced by; what the query reads
// lives until the query ends.
duckdb::unique_ptr<duckdb::TableRef> FeedSubquery(ClientState& state,
                                                  const Result<Lakehouse::ChangeFeed>& feed,
                                                  const char* function) {
  if (!feed.ok()) ThrowStatus(feed.status());
  state.KeepUntilQueryEnd(feed->keepalive);
  duckdb::Parser parser;
  parser.ParseQuery(feed->sql);
  if (parser.statements.size() != 1 ||
      parser.statements[0]->type != duckdb::StatementType::SELECT_STATEMENT) {
    throw duckdb::InternalException(std::string(function) + ": the feed is not one query");
  }
  auto select =
      duckdb::unique_ptr_cast<duckdb::SQLStatement, duckdb::SelectStatement>(std::move(parser.statements[0]));
  return duckdb::make_uniq<duckdb::SubqueryRef>(std::move(select), function);
}

void ThrowOnNull(const duckdb::TableFunctionBindInput& input, const char* function) {
  for (const duckdb::Value& value : input.inputs) {
    if (value.IsNull()) throw duckdb::BinderException(std::string(function) + ": arguments must not be NULL");
  }
}

duckdb::unique_ptr<duckdb::TableRef> BindTableChanges(duckdb::ClientContext& context,
                                                      duckdb::TableFunctionBindInput& input) {
  auto& state = GetClientState(context);
  if (!state.lakehouse || !state.lakehouse->table_changes) {
    throw duckdb::BinderException(
        "table_changes: this connection has no warehouse to read change feeds from");
  }
  ThrowOnNull(input, kFunctionName);
  int64_t start = input.inputs[1].GetValue<int64_t>();
  std::optional<int64_t> end;
  if (input.inputs.size() > 2) end = input.inputs[2].GetValue<int64_t>();
  return FeedSubquery(state, state.lakehouse->table_changes(TableNameParts(input.inputs[0]), start, end),
                      kFunctionName);
}

// The STREAM source's place among the statement's (engine/stream_calls.h); nullopt when the
// call has none, being no stream's source.
std::optional<int64_t> StreamSourceOf(const duckdb::TableFunctionBindInput& input) {
  auto it = input.named_parameters.find(kStreamSourceParameter);
  if (it == input.named_parameters.end() || it->second.IsNull()) return std::nullopt;
  return it->second.GetValue<int64_t>();
}

duckdb::unique_ptr<duckdb::TableRef> BindStreamTable(duckdb::ClientContext& context,
                                                     duckdb::TableFunctionBindInput& input) {
  auto& state = GetClientState(context);
  if (!state.lakehouse || !state.lakehouse->stream_table) {
    throw duckdb::BinderException("STREAM(table): this connection has no warehouse to stream tables from");
  }
  ThrowOnNull(input, kStreamTableFunction);
  return FeedSubquery(
      state,
      state.lakehouse->stream_table(TableNameParts(input.inputs[0]), std::nullopt, StreamSourceOf(input)),
      kStreamTableFunction);
}

// STREAM table_changes(...) takes any arguments, so that a wrong count is reported as the
// user wrote it rather than as a mismatch of basin_stream_changes.
duckdb::unique_ptr<duckdb::TableRef> BindStreamChanges(duckdb::ClientContext& context,
                                                       duckdb::TableFunctionBindInput& input) {
  auto& state = GetClientState(context);
  if (!state.lakehouse || !state.lakehouse->stream_table) {
    throw duckdb::BinderException(
        "STREAM table_changes(...): this connection has no warehouse to stream tables from");
  }
  if (input.inputs.size() != 2) {
    throw duckdb::BinderException(
        "STREAM table_changes('table', start_version) takes two arguments: the table and the version the "
        "stream starts at");
  }
  ThrowOnNull(input, kStreamChangesFunction);
  const int64_t start = input.inputs[1].DefaultCastAs(duckdb::LogicalType::BIGINT).GetValue<int64_t>();
  return FeedSubquery(state,
                      state.lakehouse->stream_table(
                          TableNameParts(input.inputs[0].DefaultCastAs(duckdb::LogicalType::VARCHAR)), start,
                          StreamSourceOf(input)),
                      kStreamChangesFunction);
}

duckdb::unique_ptr<duckdb::TableRef> BindReadFiles(duckdb::ClientContext& context,
                                                   duckdb::TableFunctionBindInput& input) {
  auto& state = GetClientState(context);
  if (!state.lakehouse || !state.lakehouse->read_files) {
    throw duckdb::BinderException("read_files: this connection cannot read folders of files");
  }
  ThrowOnNull(input, kReadFilesFunction);
  std::map<std::string, std::string> options;
  for (const auto& [name, value] : input.named_parameters) {
    if (name == kStreamSourceParameter) continue;
    if (value.IsNull()) throw duckdb::BinderException("read_files: option %s must not be NULL", name);
    options[duckdb::StringUtil::Lower(name)] = value.ToString();
  }
  return FeedSubquery(
      state,
      state.lakehouse->read_files(duckdb::StringValue::Get(input.inputs[0]), options, StreamSourceOf(input)),
      kReadFilesFunction);
}

}  // namespace

void RegisterTableChanges(duckdb::DatabaseInstance& db) {
  duckdb::TableFunctionSet set(kFunctionName);
  for (size_t arguments : {2, 3}) {
    duckdb::vector<duckdb::LogicalType> types = {duckdb::LogicalType::VARCHAR, duckdb::LogicalType::BIGINT};
    if (arguments == 3) types.push_back(duckdb::LogicalType::BIGINT);
    duckdb::TableFunction function(kFunctionName, types, nullptr, nullptr);
    function.bind_replace = BindTableChanges;
    set.AddFunction(function);
  }
  duckdb::TableFunction stream_table(kStreamTableFunction, {duckdb::LogicalType::VARCHAR}, nullptr, nullptr);
  stream_table.bind_replace = BindStreamTable;
  stream_table.named_parameters[kStreamSourceParameter] = duckdb::LogicalType::BIGINT;
  duckdb::TableFunction stream_changes(kStreamChangesFunction, {}, nullptr, nullptr);
  stream_changes.varargs = duckdb::LogicalType::ANY;
  stream_changes.bind_replace = BindStreamChanges;
  stream_changes.named_parameters[kStreamSourceParameter] = duckdb::LogicalType::BIGINT;
  duckdb::ExtensionLoader loader(db, "basin");
  loader.RegisterFunction(set);
  loader.RegisterFunction(stream_table);
  loader.RegisterFunction(stream_changes);
  duckdb::TableFunction read_files(kReadFilesFunction, {duckdb::LogicalType::VARCHAR}, nullptr, nullptr);
  for (const char* name :
       {"format", "schema", "maxBytesPerTrigger", "schemaEvolutionMode", "deadLetterTable"}) {
    read_files.named_parameters[name] = duckdb::LogicalType::VARCHAR;
  }
  read_files.named_parameters["header"] = duckdb::LogicalType::BOOLEAN;
  read_files.named_parameters["maxFilesPerTrigger"] = duckdb::LogicalType::BIGINT;
  read_files.named_parameters["maxDeadLetterFraction"] = duckdb::LogicalType::DOUBLE;
  read_files.named_parameters[kStreamSourceParameter] = duckdb::LogicalType::BIGINT;
  read_files.bind_replace = BindReadFiles;
  loader.RegisterFunction(read_files);
}

}  // namespace basin::engine::duckdb_ext
