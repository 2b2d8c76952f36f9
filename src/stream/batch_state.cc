#include "stream/batch_state.h"

#include <charconv>
#include <string_view>
#include <utility>
#include <vector>

#include "common/strings.h"

namespace basin::stream {
namespace {

using json = nlohmann::json;

std::string StateKey(int64_t batch_id, const char* extension) { return std::to_string(batch_id) + extension; }

}  // namespace

BatchStateFiles::BatchStateFiles(engine::Connection& conn, std::shared_ptr<ObjectStore> store,
                                 std::string where)
    : conn_(conn), store_(std::move(store)), where_(std::move(where)) {
  handle_ = engine::RegisterStore(store_);
}

Result<std::optional<json>> BatchStateFiles::Load(int64_t batch_id, const std::string& table) {
  if (batch_id < 0) return std::optional<json>();
  const std::string key = StateKey(batch_id, ".json");
  Result<std::string> text = store_->Get(key);
  if (!text.ok()) {
    if (text.status().IsNotFound()) {
      return Status::Corruption(where_ + ": the checkpoint has no state " + key + " for the batch before");
    }
    return text.status().WithContext(where_ + " state " + key);
  }
  json state = json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (!state.is_object() || !state.contains("rows") || !state["rows"].is_number_integer()) {
    return Status::Corruption(where_ + ": state " + key + " is not an object with \"rows\": n");
  }
  if (!table.empty() && state["rows"].get<int64_t>() > 0) {
    const std::string url = engine::StoreUrl(handle_, StateKey(batch_id, ".parquet"));
    RETURN_IF_ERROR(conn_
                        .Execute("INSERT INTO " + table + " BY NAME SELECT * FROM read_parquet(" +
                                 QuoteLiteral(url) + ")")
                        .WithContext(where_ + " state " + StateKey(batch_id, ".parquet")));
  }
  return std::optional<json>(std::move(state));
}

Result<std::optional<int64_t>> BatchStateFiles::Latest() {
  ASSIGN_OR_RETURN(std::vector<ObjectInfo> objects, store_->List(""));
  std::optional<int64_t> latest;
  for (const ObjectInfo& object : objects) {
    const std::string_view key = object.key;
    if (key.size() <= 5 || key.substr(key.size() - 5) != ".json") continue;
    int64_t id = 0;
    const char* end = key.data() + key.size() - 5;
    auto [rest, error] = std::from_chars(key.data(), end, id);
    if (error == std::errc() && rest == end && (!latest || id > *latest)) latest = id;
  }
  return latest;
}

Status BatchStateFiles::Save(int64_t batch_id, json meta, const std::optional<std::string>& rows_sql) {
  // The rows are written once (COPY reports how many); a state of none keeps no file.
  const std::string parquet = StateKey(batch_id, ".parquet");
  int64_t rows = 0;
  if (rows_sql) {
    ASSIGN_OR_RETURN(engine::QueryResult copied,
                     conn_.Query("COPY (" + *rows_sql + ") TO " +
                                 QuoteLiteral(engine::StoreUrl(handle_, parquet)) + " (FORMAT parquet)"));
    rows = std::stoll(copied.at(0, 0).value_or("0"));
    if (rows == 0) RETURN_IF_ERROR(store_->Delete(parquet));
  }
  meta["rows"] = rows;
  RETURN_IF_ERROR(store_->Put(StateKey(batch_id, ".json"), meta.dump()));
  for (const char* extension : {".json", ".parquet"}) {
    if (batch_id >= 2) RETURN_IF_ERROR(store_->Delete(StateKey(batch_id - 2, extension)));
  }
  return Status::OK();
}

}  // namespace basin::stream
