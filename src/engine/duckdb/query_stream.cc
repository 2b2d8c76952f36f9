// Connection::Stream (engine/duckdb.h): DuckDB's streaming query results, read through its
// C++ API, with cells rendered by the C API's readers so they print as QueryResult does.
#include "duckdb/main/capi/capi_internal.hpp"
#include "duckdb/main/connection.hpp"
#include "engine/duckdb.h"
#include "engine/duckdb/client_state.h"
#include "engine/vector_access.h"

namespace basin::engine {

namespace {

Status ErrorStatus(const duckdb::ErrorData& error) {
  return StatusFromDuckDbError(error.Message().c_str(), duckdb::ErrorTypeToC(error.Type()));
}

class DuckDbQueryStream : public QueryStream {
 public:
  explicit DuckDbQueryStream(duckdb::unique_ptr<duckdb::QueryResult> result) : result_(std::move(result)) {
    for (idx_t c = 0; c < result_->ColumnCount(); c++) {
      names_.push_back(result_->ColumnName(c));
      duckdb::LogicalType type = result_->types[c];
      types_.push_back(DuckDbTypeName(reinterpret_cast<duckdb_logical_type>(&type)));
    }
  }

  const std::vector<std::string>& column_names() const override { return names_; }
  const std::vector<std::string>& column_types() const override { return types_; }

  Result<bool> Next(std::vector<std::vector<std::optional<std::string>>>* rows) override {
    rows->clear();
    duckdb::unique_ptr<duckdb::DataChunk> chunk;
    try {
      chunk = result_->Fetch();
    } catch (std::exception& e) {
      return ErrorStatus(duckdb::ErrorData(e));
    }
    if (result_->HasError()) return ErrorStatus(result_->GetErrorObject());
    if (!chunk || chunk->size() == 0) return false;
    chunk->Flatten();
    const idx_t size = chunk->size();
    rows->assign(size, std::vector<std::optional<std::string>>(chunk->ColumnCount()));
    for (idx_t c = 0; c < chunk->ColumnCount(); c++) {
      auto vector = reinterpret_cast<duckdb_vector>(&chunk->data[c]);
      for (idx_t r = 0; r < size; r++) {
        ASSIGN_OR_RETURN(Value value, CellAt(vector, r));
        if (value.kind == Value::Kind::kScalar) {
          (*rows)[r][c] = std::move(value.text);
        } else if (!value.is_null()) {
          (*rows)[r][c] = value.ToString();
        }
      }
    }
    return true;
  }

 private:
  duckdb::unique_ptr<duckdb::QueryResult> result_;
  std::vector<std::string> names_;
  std::vector<std::string> types_;
};

}  // namespace

Result<std::unique_ptr<QueryStream>> Connection::Stream(const std::string& sql) {
  auto& connection = *reinterpret_cast<duckdb::Connection*>(conn_);
  duckdb::unique_ptr<duckdb::QueryResult> result;
  try {
    result = connection.SendQuery(sql);
  } catch (std::exception& e) {
    return ErrorStatus(duckdb::ErrorData(e));
  }
  if (result->HasError()) return ErrorStatus(result->GetErrorObject());
  return std::unique_ptr<QueryStream>(new DuckDbQueryStream(std::move(result)));
}

}  // namespace basin::engine
