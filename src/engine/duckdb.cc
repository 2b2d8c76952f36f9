#include "engine/duckdb.h"

#include <duckdb.h>

#include <cstring>

#include "engine/duckdb/store_file_system.h"
#include "engine/functions.h"
#include "engine/pg_catalog.h"
#include "engine/status_transport.h"
#include "engine/vector_access.h"

namespace basin::engine {

namespace {

Status StatusFromDuckDB(const char* error, duckdb_error_type type) {
  std::string msg = error ? error : "unknown DuckDB error";
  if (std::optional<Status> basin = DecodeStatus(msg)) return *basin;
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
    case DUCKDB_ERROR_PERMISSION:
      return Status::PermissionDenied(msg);
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
    case DUCKDB_TYPE_BOOLEAN:
      return "BOOLEAN";
    case DUCKDB_TYPE_TINYINT:
      return "TINYINT";
    case DUCKDB_TYPE_SMALLINT:
      return "SMALLINT";
    case DUCKDB_TYPE_INTEGER:
      return "INTEGER";
    case DUCKDB_TYPE_BIGINT:
      return "BIGINT";
    case DUCKDB_TYPE_HUGEINT:
      return "HUGEINT";
    case DUCKDB_TYPE_UTINYINT:
      return "UTINYINT";
    case DUCKDB_TYPE_USMALLINT:
      return "USMALLINT";
    case DUCKDB_TYPE_UINTEGER:
      return "UINTEGER";
    case DUCKDB_TYPE_UBIGINT:
      return "UBIGINT";
    case DUCKDB_TYPE_FLOAT:
      return "FLOAT";
    case DUCKDB_TYPE_DOUBLE:
      return "DOUBLE";
    case DUCKDB_TYPE_VARCHAR:
      return "VARCHAR";
    case DUCKDB_TYPE_BLOB:
      return "BLOB";
    case DUCKDB_TYPE_DATE:
      return "DATE";
    case DUCKDB_TYPE_TIME:
      return "TIME";
    case DUCKDB_TYPE_TIMESTAMP:
      return "TIMESTAMP";
    case DUCKDB_TYPE_TIMESTAMP_TZ:
      return "TIMESTAMP WITH TIME ZONE";
    case DUCKDB_TYPE_TIMESTAMP_S:
      return "TIMESTAMP_S";
    case DUCKDB_TYPE_TIMESTAMP_MS:
      return "TIMESTAMP_MS";
    case DUCKDB_TYPE_TIMESTAMP_NS:
      return "TIMESTAMP_NS";
    case DUCKDB_TYPE_INTERVAL:
      return "INTERVAL";
    case DUCKDB_TYPE_UUID:
      return "UUID";
    case DUCKDB_TYPE_DECIMAL:
      return "DECIMAL(" + std::to_string(duckdb_decimal_width(type)) + "," +
             std::to_string(duckdb_decimal_scale(type)) + ")";
    case DUCKDB_TYPE_LIST: {
      duckdb_logical_type child = duckdb_list_type_child_type(type);
      std::string name = TypeName(child) + "[]";
      duckdb_destroy_logical_type(&child);
      return name;
    }
    case DUCKDB_TYPE_ARRAY: {
      duckdb_logical_type child = duckdb_array_type_child_type(type);
      std::string name = TypeName(child) + "[" + std::to_string(duckdb_array_type_array_size(type)) + "]";
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

// A scalar cell as a duckdb_value, so DuckDB renders it exactly as it renders columns.
Result<duckdb_value> ScalarValue(duckdb_vector vector, duckdb_logical_type type, idx_t row) {
  switch (duckdb_get_type_id(type)) {
    case DUCKDB_TYPE_BOOLEAN:
      return duckdb_create_bool(At<bool>(vector, row));
    case DUCKDB_TYPE_TINYINT:
      return duckdb_create_int8(At<int8_t>(vector, row));
    case DUCKDB_TYPE_SMALLINT:
      return duckdb_create_int16(At<int16_t>(vector, row));
    case DUCKDB_TYPE_INTEGER:
      return duckdb_create_int32(At<int32_t>(vector, row));
    case DUCKDB_TYPE_BIGINT:
      return duckdb_create_int64(At<int64_t>(vector, row));
    case DUCKDB_TYPE_UTINYINT:
      return duckdb_create_uint8(At<uint8_t>(vector, row));
    case DUCKDB_TYPE_USMALLINT:
      return duckdb_create_uint16(At<uint16_t>(vector, row));
    case DUCKDB_TYPE_UINTEGER:
      return duckdb_create_uint32(At<uint32_t>(vector, row));
    case DUCKDB_TYPE_UBIGINT:
      return duckdb_create_uint64(At<uint64_t>(vector, row));
    case DUCKDB_TYPE_HUGEINT:
      return duckdb_create_hugeint(At<duckdb_hugeint>(vector, row));
    case DUCKDB_TYPE_UHUGEINT:
      return duckdb_create_uhugeint(At<duckdb_uhugeint>(vector, row));
    case DUCKDB_TYPE_FLOAT:
      return duckdb_create_float(At<float>(vector, row));
    case DUCKDB_TYPE_DOUBLE:
      return duckdb_create_double(At<double>(vector, row));
    case DUCKDB_TYPE_DATE:
      return duckdb_create_date(At<duckdb_date>(vector, row));
    case DUCKDB_TYPE_TIME:
      return duckdb_create_time(At<duckdb_time>(vector, row));
    case DUCKDB_TYPE_TIME_NS:
      return duckdb_create_time_ns(At<duckdb_time_ns>(vector, row));
    case DUCKDB_TYPE_TIME_TZ:
      return duckdb_create_time_tz_value(At<duckdb_time_tz>(vector, row));
    case DUCKDB_TYPE_TIMESTAMP:
      return duckdb_create_timestamp(At<duckdb_timestamp>(vector, row));
    case DUCKDB_TYPE_TIMESTAMP_TZ:
      return duckdb_create_timestamp_tz(At<duckdb_timestamp>(vector, row));
    case DUCKDB_TYPE_TIMESTAMP_S:
      return duckdb_create_timestamp_s(At<duckdb_timestamp_s>(vector, row));
    case DUCKDB_TYPE_TIMESTAMP_MS:
      return duckdb_create_timestamp_ms(At<duckdb_timestamp_ms>(vector, row));
    case DUCKDB_TYPE_TIMESTAMP_NS:
      return duckdb_create_timestamp_ns(At<duckdb_timestamp_ns>(vector, row));
    case DUCKDB_TYPE_INTERVAL:
      return duckdb_create_interval(At<duckdb_interval>(vector, row));
    case DUCKDB_TYPE_VARCHAR:
    case DUCKDB_TYPE_BLOB: {
      auto str = At<duckdb_string_t>(vector, row);
      const char* data = duckdb_string_t_data(&str);
      uint32_t length = duckdb_string_t_length(str);
      // `str` is a copy: inlined strings live inside it, so use them before it goes away.
      if (duckdb_get_type_id(type) == DUCKDB_TYPE_VARCHAR) return duckdb_create_varchar_length(data, length);
      return duckdb_create_blob(reinterpret_cast<const uint8_t*>(data), length);
    }
    case DUCKDB_TYPE_UUID: {
      // DuckDB stores UUIDs as a hugeint with the top bit flipped, so they sort as strings.
      auto stored = At<duckdb_hugeint>(vector, row);
      duckdb_uhugeint uuid{stored.lower, static_cast<uint64_t>(stored.upper) ^ (uint64_t{1} << 63)};
      return duckdb_create_uuid(uuid);
    }
    case DUCKDB_TYPE_DECIMAL: {
      duckdb_decimal decimal{duckdb_decimal_width(type), duckdb_decimal_scale(type), {}};
      auto widen = [](int64_t v) { return duckdb_hugeint{static_cast<uint64_t>(v), v < 0 ? -1 : 0}; };
      switch (duckdb_decimal_internal_type(type)) {
        case DUCKDB_TYPE_SMALLINT:
          decimal.value = widen(At<int16_t>(vector, row));
          break;
        case DUCKDB_TYPE_INTEGER:
          decimal.value = widen(At<int32_t>(vector, row));
          break;
        case DUCKDB_TYPE_BIGINT:
          decimal.value = widen(At<int64_t>(vector, row));
          break;
        default:
          decimal.value = At<duckdb_hugeint>(vector, row);
          break;
      }
      return duckdb_create_decimal(decimal);
    }
    case DUCKDB_TYPE_ENUM: {
      uint64_t index = 0;
      switch (duckdb_enum_internal_type(type)) {
        case DUCKDB_TYPE_UTINYINT:
          index = At<uint8_t>(vector, row);
          break;
        case DUCKDB_TYPE_USMALLINT:
          index = At<uint16_t>(vector, row);
          break;
        default:
          index = At<uint32_t>(vector, row);
          break;
      }
      char* text = duckdb_enum_dictionary_value(type, index);
      duckdb_value value = duckdb_create_varchar(text);
      duckdb_free(text);
      return value;
    }
    default:
      return Status::NotImplemented("cannot read DuckDB values of type " + TypeName(type) + " in results");
  }
}

Result<Value> CellValue(duckdb_vector vector, idx_t row) {
  Value out;
  if (!RowIsValid(vector, row)) return out;
  LogicalTypeGuard type{duckdb_vector_get_column_type(vector)};
  switch (duckdb_get_type_id(type.type)) {
    case DUCKDB_TYPE_LIST:
    case DUCKDB_TYPE_MAP: {
      bool is_map = duckdb_get_type_id(type.type) == DUCKDB_TYPE_MAP;
      out.kind = is_map ? Value::Kind::kMap : Value::Kind::kList;
      auto entry = At<duckdb_list_entry>(vector, row);
      duckdb_vector child = duckdb_list_vector_get_child(vector);
      for (idx_t i = 0; i < entry.length; i++) {
        if (is_map) {
          ASSIGN_OR_RETURN(Value key, CellValue(duckdb_struct_vector_get_child(child, 0), entry.offset + i));
          ASSIGN_OR_RETURN(Value value,
                           CellValue(duckdb_struct_vector_get_child(child, 1), entry.offset + i));
          out.AddChild(key.ToString(), std::move(value));
        } else {
          ASSIGN_OR_RETURN(Value element, CellValue(child, entry.offset + i));
          out.AddChild("", std::move(element));
        }
      }
      return out;
    }
    case DUCKDB_TYPE_ARRAY: {
      out.kind = Value::Kind::kList;
      idx_t size = duckdb_array_type_array_size(type.type);
      duckdb_vector child = duckdb_array_vector_get_child(vector);
      for (idx_t i = 0; i < size; i++) {
        ASSIGN_OR_RETURN(Value element, CellValue(child, row * size + i));
        out.AddChild("", std::move(element));
      }
      return out;
    }
    case DUCKDB_TYPE_STRUCT: {
      out.kind = Value::Kind::kStruct;
      idx_t n = duckdb_struct_type_child_count(type.type);
      for (idx_t i = 0; i < n; i++) {
        char* name = duckdb_struct_type_child_name(type.type, i);
        std::string field = name;
        duckdb_free(name);
        ASSIGN_OR_RETURN(Value value, CellValue(duckdb_struct_vector_get_child(vector, i), row));
        out.AddChild(std::move(field), std::move(value));
      }
      return out;
    }
    case DUCKDB_TYPE_UNION: {
      // A union is a struct whose first child is the tag of the member that holds the value.
      auto tag = At<uint8_t>(duckdb_struct_vector_get_child(vector, 0), row);
      return CellValue(duckdb_struct_vector_get_child(vector, tag + 1), row);
    }
    case DUCKDB_TYPE_VARCHAR: {
      auto str = At<duckdb_string_t>(vector, row);
      out.kind = Value::Kind::kScalar;
      out.text.assign(duckdb_string_t_data(&str), duckdb_string_t_length(str));
      return out;
    }
    case DUCKDB_TYPE_INTEGER:
      out.kind = Value::Kind::kScalar;
      out.text = std::to_string(At<int32_t>(vector, row));
      return out;
    case DUCKDB_TYPE_BIGINT:
      out.kind = Value::Kind::kScalar;
      out.text = std::to_string(At<int64_t>(vector, row));
      return out;
    default: {
      ASSIGN_OR_RETURN(duckdb_value raw, ScalarValue(vector, type.type, row));
      ValueGuard value{raw};
      char* text = duckdb_get_varchar(value.value);
      out.kind = Value::Kind::kScalar;
      out.text = text != nullptr ? text : "";
      duckdb_free(text);
      return out;
    }
  }
}

ColumnType DescribeType(std::string name, duckdb_logical_type type) {
  ColumnType out;
  out.name = std::move(name);
  out.type_name = TypeName(type);
  switch (duckdb_get_type_id(type)) {
    case DUCKDB_TYPE_DECIMAL:
      out.width = duckdb_decimal_width(type);
      out.scale = duckdb_decimal_scale(type);
      break;
    case DUCKDB_TYPE_LIST: {
      out.kind = ColumnType::Kind::kList;
      LogicalTypeGuard child{duckdb_list_type_child_type(type)};
      out.children.push_back(DescribeType("", child.type));
      break;
    }
    case DUCKDB_TYPE_ARRAY: {
      out.kind = ColumnType::Kind::kList;
      LogicalTypeGuard child{duckdb_array_type_child_type(type)};
      out.children.push_back(DescribeType("", child.type));
      break;
    }
    case DUCKDB_TYPE_MAP: {
      out.kind = ColumnType::Kind::kMap;
      LogicalTypeGuard key{duckdb_map_type_key_type(type)};
      LogicalTypeGuard value{duckdb_map_type_value_type(type)};
      out.children.push_back(DescribeType("", key.type));
      out.children.push_back(DescribeType("", value.type));
      break;
    }
    case DUCKDB_TYPE_STRUCT: {
      out.kind = ColumnType::Kind::kStruct;
      idx_t n = duckdb_struct_type_child_count(type);
      for (idx_t i = 0; i < n; i++) {
        char* child_name = duckdb_struct_type_child_name(type, i);
        LogicalTypeGuard child{duckdb_struct_type_child_type(type, i)};
        out.children.push_back(DescribeType(child_name, child.type));
        duckdb_free(child_name);
      }
      break;
    }
    default:
      break;
  }
  return out;
}

// Walks a materialized result chunk by chunk, calling `cell(column, row, value)` for the
// columns selected by `want`.
template <typename Want, typename Cell>
Status ForEachCell(duckdb_result& result, Want want, Cell cell) {
  idx_t columns = duckdb_column_count(&result);
  idx_t chunks = duckdb_result_chunk_count(result);
  idx_t row_base = 0;
  for (idx_t k = 0; k < chunks; k++) {
    duckdb_data_chunk chunk = duckdb_result_get_chunk(result, k);
    idx_t size = duckdb_data_chunk_get_size(chunk);
    Status st;
    for (idx_t c = 0; c < columns && st.ok(); c++) {
      if (!want(c)) continue;
      duckdb_vector vector = duckdb_data_chunk_get_vector(chunk, c);
      for (idx_t r = 0; r < size; r++) {
        Result<Value> value = CellValue(vector, r);
        if (!value.ok()) {
          st = value.status();
          break;
        }
        cell(c, row_base + r, std::move(value).value());
      }
    }
    duckdb_destroy_data_chunk(&chunk);
    RETURN_IF_ERROR(st);
    row_base += size;
  }
  return Status::OK();
}

}  // namespace

const IntegerType* FindIntegerType(const std::string& type_name) {
  static constexpr IntegerType kIntegerTypes[] = {
      {"TINYINT", 8, true},   {"SMALLINT", 16, true},  {"INTEGER", 32, true},    {"BIGINT", 64, true},
      {"HUGEINT", 128, true}, {"UTINYINT", 8, false},  {"USMALLINT", 16, false}, {"UINTEGER", 32, false},
      {"UBIGINT", 64, false}, {"UHUGEINT", 128, false}};
  for (const IntegerType& type : kIntegerTypes) {
    if (type_name == type.name) return &type;
  }
  return nullptr;
}

Result<Value> CellAt(duckdb_vector vector, idx_t row) { return CellValue(vector, row); }
std::string DuckDbTypeName(duckdb_logical_type type) { return TypeName(type); }
Status StatusFromDuckDbError(const char* error, duckdb_error_type type) {
  return StatusFromDuckDB(error, type);
}

Result<std::shared_ptr<Database>> Database::Open(const DatabaseOptions& options) {
  std::shared_ptr<Database> db(new Database());
  duckdb_config config = nullptr;
  if (duckdb_create_config(&config) != DuckDBSuccess) return Status::Internal("duckdb_create_config failed");
  if (options.threads > 0) duckdb_set_config(config, "threads", std::to_string(options.threads).c_str());
  if (!options.memory_limit.empty()) duckdb_set_config(config, "memory_limit", options.memory_limit.c_str());
  // DuckDB keeps the bytes it reads through file systems other than its local one
  // (basin:// included) in its buffer pool. Basin's stores are local folders and memory,
  // where the OS page cache already does that: caching again doubled the time of a scan
  // of many small files and held memory in proportion to the bytes read (small_files_bench).
  // A remote store backend should decide this per store.
  duckdb_set_config(config, "enable_external_file_cache", "false");
  // DuckDB allocates through its own jemalloc. Its threads keep what they free in caches,
  // flushed only after a task whose allocations peaked past allocator_flush_threshold (128
  // MiB by default), and freed pages go back to the system only as it allocates again: a
  // long-running stream's resident set climbed 76 to 90 MiB in ten minutes
  // (stream_memory_bench); with these, 69 to 80, at no cost in time that the stream
  // benchmarks could measure.
  duckdb_set_config(config, "allocator_flush_threshold", kAllocatorFlushThreshold);
  duckdb_set_config(config, "allocator_background_threads", "true");
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
  RETURN_IF_ERROR(InstallStoreFileSystem(raw));
  // TimeZone belongs to the ICU extension, which loads only once the database is open, so
  // it cannot be part of the open config.
  duckdb_connection setup = nullptr;
  if (duckdb_connect(raw, &setup) != DuckDBSuccess) return Status::Internal("cannot connect to DuckDB");
  ResultGuard guard;
  duckdb_state state = duckdb_query(setup, "SET GLOBAL TimeZone='UTC'", &guard.result);
  Status st = state == DuckDBSuccess ? Status::OK()
                                     : StatusFromDuckDB(duckdb_result_error(&guard.result),
                                                        duckdb_result_error_type(&guard.result));
  // Functions live in the database's catalog: registered once here, every connection of
  // the database can call them.
  if (st.ok()) st = RegisterBasinFunctions(setup);
  if (st.ok()) st = InstallPgCatalog(raw);
  duckdb_disconnect(&setup);
  RETURN_IF_ERROR(st);
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
  // DuckDB's Parquet footer cache stays off (its default): it holds every footer read,
  // about 15 KB a file, without bound (1.5 GB for a table of 100,000 small files), and
  // re-reading a footer from a local file costs less than keeping it (small_files_bench).
  // The time zone is the database's (SET GLOBAL in Database::Open).
  RETURN_IF_ERROR(CreateBasinMacros(conn->conn_));
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

Status Connection::ForgetOpenedFiles() { return Execute("SET GLOBAL enable_external_file_cache = false"); }

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
  // Walks chunks rather than using duckdb_value_varchar, which renders nested values and
  // TIMESTAMP WITH TIME ZONE as NULL (and cannot be mixed with chunk access).
  out.rows.assign(duckdb_row_count(&guard.result), std::vector<std::optional<std::string>>(columns));
  RETURN_IF_ERROR(ForEachCell(
      guard.result, [](idx_t) { return true; },
      [&](idx_t c, idx_t r, Value value) {
        if (value.kind == Value::Kind::kScalar) {
          out.rows[r][c] = std::move(value.text);
        } else if (!value.is_null()) {
          out.rows[r][c] = value.ToString();
        }
      }));
  return out;
}

Result<ValueResult> Connection::QueryValues(const std::string& sql) {
  ResultGuard guard;
  if (duckdb_query(conn_, sql.c_str(), &guard.result) != DuckDBSuccess) {
    return StatusFromDuckDB(duckdb_result_error(&guard.result), duckdb_result_error_type(&guard.result));
  }
  ValueResult out;
  idx_t columns = duckdb_column_count(&guard.result);
  for (idx_t c = 0; c < columns; c++) {
    out.column_names.emplace_back(duckdb_column_name(&guard.result, c));
    LogicalTypeGuard type{duckdb_column_logical_type(&guard.result, c)};
    out.column_types.push_back(TypeName(type.type));
  }
  out.rows.assign(duckdb_row_count(&guard.result), std::vector<Value>(columns));
  RETURN_IF_ERROR(ForEachCell(
      guard.result, [](idx_t) { return true; },
      [&](idx_t c, idx_t r, Value value) { out.rows[r][c] = std::move(value); }));
  return out;
}

Result<std::vector<ColumnType>> Connection::DescribeQuery(const std::string& select_sql) {
  // Prepared, not run: binding and planning tell the columns.
  const std::string sql = "SELECT * FROM (" + select_sql + "\n)";
  duckdb_prepared_statement prepared = nullptr;
  const bool ok = duckdb_prepare(conn_, sql.c_str(), &prepared) == DuckDBSuccess;
  std::vector<ColumnType> out;
  if (ok) {
    const idx_t columns = duckdb_prepared_statement_column_count(prepared);
    for (idx_t c = 0; c < columns; c++) {
      LogicalTypeGuard type{duckdb_prepared_statement_column_logical_type(prepared, c)};
      out.push_back(DescribeType(duckdb_prepared_statement_column_name(prepared, c), type.type));
    }
  }
  duckdb_destroy_prepare(&prepared);
  if (ok) return out;
  // A failed prepare's error has no type; running the query gives DuckDB's typed error. When
  // it runs (the prepare's failure passed, as a store's failed read), its result's columns.
  ResultGuard guard;
  if (duckdb_query(conn_, (sql + " LIMIT 0").c_str(), &guard.result) != DuckDBSuccess) {
    return StatusFromDuckDB(duckdb_result_error(&guard.result), duckdb_result_error_type(&guard.result));
  }
  for (idx_t c = 0; c < duckdb_column_count(&guard.result); c++) {
    LogicalTypeGuard type{duckdb_column_logical_type(&guard.result, c)};
    out.push_back(DescribeType(duckdb_column_name(&guard.result, c), type.type));
  }
  return out;
}

std::optional<Connection::PreparedShape> Connection::DescribePrepared(const std::string& sql) {
  duckdb_prepared_statement prepared = nullptr;
  std::optional<PreparedShape> out;
  if (duckdb_prepare(conn_, sql.c_str(), &prepared) == DuckDBSuccess) {
    out.emplace();
    const idx_t count = duckdb_nparams(prepared);
    for (idx_t i = 1; i <= count; i++) {
      LogicalTypeGuard type{duckdb_param_logical_type(prepared, i)};
      const duckdb_type id = type.type != nullptr ? duckdb_get_type_id(type.type) : DUCKDB_TYPE_INVALID;
      out->parameter_types.push_back(id == DUCKDB_TYPE_INVALID || id == DUCKDB_TYPE_ANY ||
                                             id == DUCKDB_TYPE_SQLNULL
                                         ? std::string()
                                         : TypeName(type.type));
    }
    // Unbound parameters leave one column "unknown", of no type.
    out->columns_known = true;
    const idx_t columns = duckdb_prepared_statement_column_count(prepared);
    for (idx_t c = 0; c < columns; c++) {
      LogicalTypeGuard type{duckdb_prepared_statement_column_logical_type(prepared, c)};
      if (type.type == nullptr || duckdb_get_type_id(type.type) == DUCKDB_TYPE_INVALID) {
        out->columns_known = false;
        break;
      }
      out->column_names.push_back(duckdb_prepared_statement_column_name(prepared, c));
      out->column_types.push_back(TypeName(type.type));
    }
    if (!out->columns_known) {
      out->column_names.clear();
      out->column_types.clear();
    }
  }
  duckdb_destroy_prepare(&prepared);
  return out;
}

Result<uint64_t> Connection::CountRows(const std::string& sql) {
  ResultGuard guard;
  if (duckdb_query(conn_, sql.c_str(), &guard.result) != DuckDBSuccess) {
    return StatusFromDuckDB(duckdb_result_error(&guard.result), duckdb_result_error_type(&guard.result));
  }
  return static_cast<uint64_t>(duckdb_row_count(&guard.result));
}

void Connection::Interrupt() {
  cancellation_.Cancel();
  duckdb_interrupt(conn_);
}

double Connection::Progress() { return duckdb_query_progress(conn_).percentage; }

std::string Value::ToString() const {
  switch (kind) {
    case Kind::kNull:
      return "NULL";
    case Kind::kScalar:
      return text;
    case Kind::kList: {
      std::string out = "[";
      for (size_t i = 0; i < children.size(); i++) {
        if (i > 0) out += ", ";
        out += children[i].ToString();
      }
      return out + "]";
    }
    case Kind::kStruct: {
      std::string out = "{";
      for (size_t i = 0; i < children.size(); i++) {
        if (i > 0) out += ", ";
        out += QuoteLiteral(child_names[i]) + ": " + children[i].ToString();
      }
      return out + "}";
    }
    case Kind::kMap: {
      std::string out = "{";
      for (size_t i = 0; i < children.size(); i++) {
        if (i > 0) out += ", ";
        out += child_names[i] + "=" + children[i].ToString();
      }
      return out + "}";
    }
  }
  return "";
}

const Value* Value::Find(std::string_view name) const {
  for (size_t i = 0; i < children.size(); i++) {
    if (child_names[i] == name) return &children[i];
  }
  return nullptr;
}

Result<std::unique_ptr<Appender>> Appender::Open(Connection& conn, const std::string& schema,
                                                 const std::string& table) {
  std::unique_ptr<Appender> out(new Appender());
  out->table_ = schema + "." + table;
  duckdb_appender raw = nullptr;
  const char* catalog = schema == "temp" ? "temp" : nullptr;
  const char* schema_name = schema == "temp" ? "main" : schema.c_str();
  if (duckdb_appender_create_ext(conn.raw(), catalog, schema_name, table.c_str(), &raw) != DuckDBSuccess) {
    std::string msg =
        raw != nullptr && duckdb_appender_error(raw) ? duckdb_appender_error(raw) : "unknown error";
    duckdb_appender_destroy(&raw);
    return Status::NotFound("cannot append to table " + out->table_ + ": " + msg);
  }
  out->appender_ = raw;
  return out;
}

Appender::~Appender() {
  if (appender_ != nullptr) duckdb_appender_destroy(&appender_);
}

Status Appender::Check(int state, const char* what) {
  if (state == DuckDBSuccess) return Status::OK();
  const char* error = duckdb_appender_error(appender_);
  return Status::InvalidArgument(std::string(what) + " into " + table_ +
                                 " failed: " + (error ? error : "unknown error"));
}

Status Appender::Append(int64_t value) { return Check(duckdb_append_int64(appender_, value), "append"); }
Status Appender::Append(std::string_view value) {
  return Check(duckdb_append_varchar_length(appender_, value.data(), value.size()), "append");
}
Status Appender::AppendNull() { return Check(duckdb_append_null(appender_), "append"); }
Status Appender::EndRow() { return Check(duckdb_appender_end_row(appender_), "append"); }
Status Appender::Close() { return Check(duckdb_appender_close(appender_), "close appender"); }

}  // namespace basin::engine
