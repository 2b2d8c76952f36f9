// INSERT INTO, INSERT OVERWRITE and INSERT INTO ... REPLACE WHERE on warehouse tables
// (sql/statements.h), handed to commands/write.h. INSERTs into a table the warehouse does
// not have are DuckDB's.
#include <algorithm>
#include <cctype>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "commands/write.h"
#include "engine/duckdb.h"
#include "engine/lakehouse.h"
#include "sql/statements.h"

namespace basin::sql {

namespace {

using engine::QuoteIdentifier;

// The write a parsed INSERT asks for. Static partition values become columns added to the
// query (and, for an overwrite, the predicate of the rows replaced).
Result<commands::WriteRequest> BuildRequest(SessionContext& session, const grammar::Insert& insert,
                                            const delta::Snapshot& table, std::string resolved_query) {
  commands::WriteRequest request;
  request.shape.schema_evolution = insert.schema_evolution;
  request.shape.by_name = insert.insert.by_name;
  if (!insert.insert.columns.empty()) request.shape.columns = insert.insert.columns;
  std::string static_columns, static_predicate;
  bool dynamic = false;
  std::vector<std::string> static_names;
  for (const grammar::PartitionValue& spec : insert.partitions) {
    const delta::StructField* field = table.schema.Find(spec.column);
    const bool is_partition =
        field != nullptr &&
        std::any_of(table.metadata.partition_columns.begin(), table.metadata.partition_columns.end(),
                    [&](const std::string& p) { return table.schema.Find(p) == field; });
    if (!is_partition) {
      return Status::InvalidArgument("table " + table.table_root + ": " + spec.column +
                                     " is not a partition column of the table");
    }
    if (!spec.value) {
      dynamic = true;
      continue;
    }
    static_columns += ", " + *spec.value + " AS " + QuoteIdentifier(field->name);
    static_predicate += (static_predicate.empty() ? "" : " AND ") + QuoteIdentifier(field->name) +
                        " IS NOT DISTINCT FROM (" + *spec.value + ")";
    static_names.push_back(field->name);
  }
  request.source_sql = resolved_query;
  if (!static_names.empty()) {
    request.source_sql = "SELECT *" + static_columns + " FROM (" + resolved_query + "\n) AS __basin_query";
    if (!insert.insert.by_name) {
      // By position, the query gives the other columns in table order (or those it names).
      std::vector<std::string> columns;
      if (!insert.insert.columns.empty()) {
        columns = insert.insert.columns;
      } else {
        for (const delta::StructField& f : table.schema.fields) {
          bool is_static = std::find(static_names.begin(), static_names.end(), f.name) != static_names.end();
          if (!is_static && !f.metadata.contains("delta.generationExpression")) columns.push_back(f.name);
        }
      }
      columns.insert(columns.end(), static_names.begin(), static_names.end());
      request.shape.columns = std::move(columns);
    }
  }

  if (insert.replace_where) {
    request.mode = commands::WriteMode::kReplaceWhere;
    request.replace_where = *insert.replace_where;
  } else if (insert.overwrite) {
    std::optional<std::string> mode = session.Setting("partition_overwrite_mode");
    std::string mode_lower = mode.value_or("static");
    std::transform(mode_lower.begin(), mode_lower.end(), mode_lower.begin(),
                   [](unsigned char c) { return std::tolower(c); });
    if (mode_lower != "static" && mode_lower != "dynamic") {
      return Status::InvalidArgument("basin.partition_overwrite_mode must be 'static' or 'dynamic', got '" +
                                     *mode + "'");
    }
    if (dynamic ||
        (mode_lower == "dynamic" && static_names.size() < table.metadata.partition_columns.size())) {
      request.mode = commands::WriteMode::kDynamicPartitionOverwrite;
    } else if (!static_names.empty()) {
      request.mode = commands::WriteMode::kReplaceWhere;
      request.replace_where = static_predicate;
    } else {
      request.mode = commands::WriteMode::kOverwrite;
    }
  }
  return request;
}

// What INSERT may ask that Basin does not do on Delta tables.
Status RefuseUnsupported(const engine::SqlInsert& insert, const std::string& table) {
  if (insert.on_conflict != engine::SqlInsert::OnConflict::kNone) {
    return Status::NotImplemented("INSERT OR REPLACE / OR IGNORE / ON CONFLICT is not supported on table " +
                                  table + "; use MERGE INTO");
  }
  if (!insert.returning.empty()) {
    return Status::NotImplemented("INSERT ... RETURNING is not supported on table " + table);
  }
  if (insert.default_values) {
    return Status::NotImplemented("INSERT ... DEFAULT VALUES is not supported on table " + table);
  }
  return Status::OK();
}

}  // namespace

StatementOutcome RunInsert(SessionContext& session, const std::string& statement,
                           const grammar::Insert& insert) {
  using Outcome = std::optional<StatementResult>;
  ASSIGN_OR_RETURN(std::optional<catalog::TableEntry> entry, LookupTarget(session, insert.insert.target));
  if (!entry) return Outcome();
  RETURN_IF_ERROR(session.governor().RequireOnTable(security::Privilege::kModify, entry->name));
  RETURN_IF_ERROR(RefuseUnsupported(insert.insert, entry->name.ToString()));
  if (!session.streams_allowed()) RETURN_IF_ERROR(RefuseStreams(insert.query_streams, "INSERT"));
  // The statement's CTEs belong to its query.
  std::string query = insert.insert.query;
  if (!insert.insert.ctes.empty()) query = insert.insert.ctes + " SELECT * FROM (" + query + "\n)";
  ASSIGN_OR_RETURN(auto table, session.LoadTable(entry->location));
  ASSIGN_OR_RETURN(commands::WriteRequest request, BuildRequest(session, insert, *table, query));
  engine::TakeScanStats(session.conn());
  auto written = commands::Write(session.MakeCommandContext(), table, request);
  if (!written.ok()) return written.status().WithContext(entry->name.ToString());
  commands::CommandResult result = std::move(*written);
  const int64_t inserted = result.metrics.value("numOutputRows", int64_t{0});
  result.metrics["num_affected_rows"] = inserted;
  result.metrics["num_inserted_rows"] = inserted;
  StatementResult out = CommandResultRow(statement, result, {"num_affected_rows", "num_inserted_rows"});
  // What the query's Delta scans read (data skipping), as for a SELECT.
  engine::ScanStats scanned = engine::TakeScanStats(session.conn());
  out.files_read = scanned.files_read;
  out.files_total = scanned.files_total;
  return Outcome(std::move(out));
}

}  // namespace basin::sql
