#include "engine/refused_rows.h"

#include <duckdb.h>

#include <atomic>
#include <map>

#include "engine/vector_access.h"

namespace basin::engine {
namespace {

constexpr char kRefuseFunction[] = "basin_refuse";

// The RefusedRows alive, by token: basin_refuse finds its own through its first argument.
struct Registry {
  std::mutex mu;
  std::map<int64_t, RefusedRows*> live;  // guarded by mu
};

Registry& Live() {
  static auto* registry = new Registry;  // never destroyed: queries may outlive static destruction order
  return *registry;
}

int64_t NextToken() {
  static std::atomic<int64_t> next{1};
  return next++;
}

void RefuseFunction(duckdb_function_info info, duckdb_data_chunk input, duckdb_vector output) {
  const idx_t rows = duckdb_data_chunk_get_size(input);
  auto* out = static_cast<bool*>(duckdb_vector_get_data(output));
  if (rows == 0) return;
  duckdb_vector tokens = duckdb_data_chunk_get_vector(input, 0);
  duckdb_vector values = duckdb_data_chunk_get_vector(input, 1);
  duckdb_vector errors = duckdb_data_chunk_get_vector(input, 2);
  RefusedRows* refused = nullptr;
  {
    Registry& registry = Live();
    std::lock_guard<std::mutex> lock(registry.mu);
    auto it = RowIsValid(tokens, 0) ? registry.live.find(At<int64_t>(tokens, 0)) : registry.live.end();
    if (it != registry.live.end()) refused = it->second;
  }
  if (refused == nullptr) {
    duckdb_scalar_function_set_error(info, "basin_refuse: no write keeps refused rows under this token");
    return;
  }
  for (idx_t row = 0; row < rows; row++) {
    refused->Add(RowIsValid(values, row) ? std::string(BytesAt(values, row)) : std::string(),
                 RowIsValid(errors, row) ? std::string(BytesAt(errors, row)) : std::string());
    out[row] = false;
  }
}

}  // namespace

RefusedRows::RefusedRows() : token_(NextToken()) {
  Registry& registry = Live();
  std::lock_guard<std::mutex> lock(registry.mu);
  registry.live[token_] = this;
}

RefusedRows::~RefusedRows() {
  Registry& registry = Live();
  std::lock_guard<std::mutex> lock(registry.mu);
  registry.live.erase(token_);
}

std::vector<std::pair<std::string, std::string>> RefusedRows::Take() {
  std::lock_guard<std::mutex> lock(mu_);
  return std::exchange(rows_, {});
}

void RefusedRows::Add(std::string value, std::string error) {
  std::lock_guard<std::mutex> lock(mu_);
  rows_.emplace_back(std::move(value), std::move(error));
}

Status RegisterRefuseFunction(duckdb_connection conn) {
  duckdb_scalar_function function = duckdb_create_scalar_function();
  duckdb_scalar_function_set_name(function, kRefuseFunction);
  LogicalTypeGuard bigint{duckdb_create_logical_type(DUCKDB_TYPE_BIGINT)};
  LogicalTypeGuard varchar{duckdb_create_logical_type(DUCKDB_TYPE_VARCHAR)};
  LogicalTypeGuard boolean{duckdb_create_logical_type(DUCKDB_TYPE_BOOLEAN)};
  duckdb_scalar_function_add_parameter(function, bigint.type);
  duckdb_scalar_function_add_parameter(function, varchar.type);
  duckdb_scalar_function_add_parameter(function, varchar.type);
  duckdb_scalar_function_set_return_type(function, boolean.type);
  // Called for what it does, once for each row it is given: never folded, moved or skipped.
  duckdb_scalar_function_set_volatile(function);
  // NULL arguments are its to read, not a NULL result.
  duckdb_scalar_function_set_special_handling(function);
  duckdb_scalar_function_set_function(function, RefuseFunction);
  const duckdb_state state = duckdb_register_scalar_function(conn, function);
  duckdb_destroy_scalar_function(&function);
  if (state == DuckDBSuccess) return Status::OK();
  return Status::Internal(std::string("DuckDB refused to register function ") + kRefuseFunction);
}

}  // namespace basin::engine
