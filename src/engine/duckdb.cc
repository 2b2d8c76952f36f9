#include "engine/duckdb.h"

#include <duckdb.h>

namespace basin::engine {

namespace {

Status StatusFromDuckDB(const char* error, duckdb_error_type type) {
  std::string msg = error ? error : "unknown DuckDB error";
  switch (type) {
    case DUCKDB_ERROR_INTERRUPT:
      return Status::Cancelled(msg);
    case DUCKDB_ERROR_IO:
    case DUCKDB_ERROR_OUT_OF_MEMORY:
      return Status::IOError(msg);
    case DUCKDB_ERROR_INTERNAL:
    case DUCKDB_ERROR_FATAL:
      return Status::Internal(msg);
    case DUCKDB_ERROR_NOT_IMPLEMENTED:
      return Status::NotImplemented(msg);
    case DUCKDB_ERROR_CATALOG:
      return Status::NotFound(msg);
    default:
      return Status::InvalidArgument(msg);
  }
}

// Owns a duckdb_result for the duration of a call.
struct ResultGuard {
  duckdb_result result{};
  ~ResultGuard() { duckdb_destroy_result(&result); }
};

std::string TypeName(duckdb_logical_type type) {
  switch (duckdb_get_type_id(type)) {
    case DUCKDB_TYPE_BOOLEAN: return "BOOLEAN";
    case DUCKDB_TYPE_TINYINT: return "TINYINT";
    case DUCKDB_TYPE_SMALLINT: return "SMALLINT";
    case DUCKDB_TYPE_INTEGER: return "INTEGER";
    case DUCKDB_TYPE_BIGINT: return "BIGINT";
    case DUCKDB_TYPE_HUGEINT: return "HUGEINT";
    case DUCKDB_TYPE_UTINYINT: return "UTINYINT";
    case DUCKDB_TYPE_USMALLINT: return "USMALLINT";
    case DUCKDB_TYPE_UINTEGER: return "UINTEGER";
    case DUCKDB_TYPE_UBIGINT: return "UBIGINT";
    case DUCKDB_TYPE_FLOAT: return "FLOAT";
    case DUCKDB_TYPE_DOUBLE: return "DOUBLE";
    case DUCKDB_TYPE_VARCHAR: return "VARCHAR";
    case DUCKDB_TYPE_BLOB: return "BLOB";
    case DUCKDB_TYPE_DATE: return "DATE";
    case DUCKDB_TYPE_TIME: return "TIME";
    case DUCKDB_TYPE_TIMESTAMP: return "TIMESTAMP";
    case DUCKDB_TYPE_TIMESTAMP_TZ: return "TIMESTAMP WITH TIME ZONE";
    case DUCKDB_TYPE_TIMESTAMP_S: return "TIMESTAMP_S";
    case DUCKDB_TYPE_TIMESTAMP_MS: return "TIMESTAMP_MS";
    case DUCKDB_TYPE_TIMESTAMP_NS: return "TIMESTAMP_NS";
    case DUCKDB_TYPE_INTERVAL: return "INTERVAL";
    case DUCKDB_TYPE_UUID: return "UUID";
    case DUCKDB_TYPE_DECIMAL:
      return "DECIMAL(" + std::to_string(duckdb_decimal_width(type)) + "," +
             std::to_string(duckdb_decimal_scale(type)) + ")";
    case DUCKDB_TYPE_LIST: {
      duckdb_logical_type child = duckdb_list_type_child_type(type);
      std::string name = TypeName(child) + "[]";
      duckdb_destroy_logical_type(&child);
      return name;
    }
    case DUCKDB_TYPE_MAP: {
      duckdb_logical_type key = duckdb_map_type_key_type(type);
      duckdb_logical_type value = duckdb_map_type_value_type(type);
      std::string name = "MAP(" + TypeName(key) + ", " + TypeName(value) + ")";
      duckdb_destroy_logical_type(&key);
      duckdb_destroy_logical_type(&value);
      return name;
    }
    case DUCKDB_TYPE_STRUCT: {
      std::string name = "STRUCT(";
      idx_t n = duckdb_struct_type_child_count(type);
      for (idx_t i = 0; i < n; i++) {
        char* child_name = duckdb_struct_type_child_name(type, i);
        duckdb_logical_type child = duckdb_struct_type_child_type(type, i);
        if (i > 0) name += ", ";
        name += QuoteIdentifier(child_name) + " " + TypeName(child);
        duckdb_free(child_name);
        duckdb_destroy_logical_type(&child);
      }
      return name + ")";
    }
    default:
      return "OTHER";
  }
}

}  // namespace

Result<std::shared_ptr<Database>> Database::Open(const DatabaseOptions& options) {
  std::shared_ptr<Database> db(new Database());
  duckdb_config config = nullptr;
  if (duckdb_create_config(&config) != DuckDBSuccess) return Status::Internal("duckdb_create_config failed");
  if (options.threads > 0) duckdb_set_config(config, "threads", std::to_string(options.threads).c_str());
  if (!options.memory_limit.empty()) duckdb_set_config(config, "memory_limit", options.memory_limit.c_str());
  duckdb_set_config(config, "TimeZone", "UTC");
  char* error = nullptr;
  const char* path = options.path.empty() ? nullptr : options.path.c_str();
  duckdb_database raw = nullptr;
  if (duckdb_open_ext(path, &raw, config, &error) != DuckDBSuccess) {
    std::string msg = error ? error : "unknown error";
    duckdb_free(error);
    duckdb_destroy_config(&config);
    return Status::IOError("cannot open DuckDB database '" + options.path + "': " + msg);
  }
  duckdb_destroy_config(&config);
  db->db_ = raw;
  return db;
}

Database::~Database() {
  if (db_ != nullptr) duckdb_close(&db_);
}

Result<std::unique_ptr<Connection>> Connection::Open(std::shared_ptr<Database> db) {
  std::unique_ptr<Connection> conn(new Connection(std::move(db)));
  if (duckdb_connect(conn->db_->raw(), &conn->conn_) != DuckDBSuccess) {
    return Status::Internal("cannot connect to DuckDB");
  }
  RETURN_IF_ERROR(conn->Execute("SET TimeZone='UTC'; SET parquet_metadata_cache=true"));
  return conn;
}

Connection::~Connection() {
  if (conn_ != nullptr) duckdb_disconnect(&conn_);
}

Status Connection::Execute(const std::string& sql) {
  ResultGuard guard;
  if (duckdb_query(conn_, sql.c_str(), &guard.result) != DuckDBSuccess) {
    return StatusFromDuckDB(duckdb_result_error(&guard.result), duckdb_result_error_type(&guard.result));
  }
  return Status::OK();
}

Result<QueryResult> Connection::Query(const std::string& sql) {
  ResultGuard guard;
  if (duckdb_query(conn_, sql.c_str(), &guard.result) != DuckDBSuccess) {
    return StatusFromDuckDB(duckdb_result_error(&guard.result), duckdb_result_error_type(&guard.result));
  }
  QueryResult out;
  idx_t columns = duckdb_column_count(&guard.result);
  for (idx_t c = 0; c < columns; c++) {
    out.column_names.emplace_back(duckdb_column_name(&guard.result, c));
    duckdb_logical_type type = duckdb_column_logical_type(&guard.result, c);
    out.column_types.push_back(TypeName(type));
    duckdb_destroy_logical_type(&type);
  }
  idx_t rows = duckdb_row_count(&guard.result);
  out.rows.reserve(rows);
  for (idx_t r = 0; r < rows; r++) {
    std::vector<std::optional<std::string>> row;
    row.reserve(columns);
    for (idx_t c = 0; c < columns; c++) {
      if (duckdb_value_is_null(&guard.result, c, r)) {
        row.emplace_back(std::nullopt);
        continue;
      }
      char* text = duckdb_value_varchar(&guard.result, c, r);
      row.emplace_back(text != nullptr ? std::optional<std::string>(text) : std::nullopt);
      duckdb_free(text);
    }
    out.rows.push_back(std::move(row));
  }
  return out;
}

Result<uint64_t> Connection::CountRows(const std::string& sql) {
  ResultGuard guard;
  if (duckdb_query(conn_, sql.c_str(), &guard.result) != DuckDBSuccess) {
    return StatusFromDuckDB(duckdb_result_error(&guard.result), duckdb_result_error_type(&guard.result));
  }
  return static_cast<uint64_t>(duckdb_row_count(&guard.result));
}

void Connection::Interrupt() { duckdb_interrupt(conn_); }

double Connection::Progress() { return duckdb_query_progress(conn_).percentage; }

std::string QuoteLiteral(std::string_view s) {
  std::string out = "'";
  for (char ch : s) {
    if (ch == '\'') out += '\'';
    out += ch;
  }
  out += '\'';
  return out;
}

std::string QuoteIdentifier(std::string_view s) {
  std::string out = "\"";
  for (char ch : s) {
    if (ch == '"') out += '"';
    out += ch;
  }
  out += '"';
  return out;
}

}  // namespace basin::engine
