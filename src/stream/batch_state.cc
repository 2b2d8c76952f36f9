#include "stream/batch_state.h"

#include <algorithm>
#include <atomic>
#include <charconv>
#include <string_view>
#include <utility>
#include <vector>

#include "common/strings.h"

namespace basin::stream {
namespace {

using json = nlohmann::json;

std::string StateKey(int64_t batch_id, const char* extension) { return std::to_string(batch_id) + extension; }

// The batch of a state object's key (<N>.json or <N>.parquet); nullopt for another object.
std::optional<int64_t> BatchOf(std::string_view key) {
  const size_t dot = key.rfind('.');
  if (dot == std::string_view::npos || (key.substr(dot) != ".json" && key.substr(dot) != ".parquet"))
    return std::nullopt;
  int64_t id = 0;
  auto [rest, error] = std::from_chars(key.data(), key.data() + dot, id);
  if (error != std::errc() || rest != key.data() + dot) return std::nullopt;
  return id;
}

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
  Chain chain{batch_id, batch_id, state["rows"].get<int64_t>(), 0, {}};
  std::vector<int64_t> with_rows;  // the batches whose Parquet files hold the state's rows
  if (state.contains("base")) {
    // A state of changes names the batches since its base that added rows.
    const json& base = state["base"];
    const json& changed = state.value("changed", json());
    bool valid = base.is_number_integer() && base.get<int64_t>() >= 0 && base.get<int64_t>() < batch_id &&
                 state.value("baseRows", json()).is_number_integer() &&
                 state.value("changedRows", json()).is_number_integer() && changed.is_array();
    for (size_t i = 0; valid && i < changed.size(); i++) {
      valid = changed[i].is_number_integer() && changed[i].get<int64_t>() > base.get<int64_t>() &&
              changed[i].get<int64_t>() <= batch_id && (i == 0 || changed[i] > changed[i - 1]);
    }
    if (!valid) {
      return Status::Corruption(where_ + ": state " + key +
                                " holds changes without a \"base\" batch before it, its \"baseRows\", "
                                "\"changedRows\" and the \"changed\" batches between them");
    }
    chain = Chain{batch_id,
                  base.get<int64_t>(),
                  state["baseRows"].get<int64_t>(),
                  state["changedRows"].get<int64_t>(),
                  {}};
    for (const json& id : changed) chain.changed.push_back(id.get<int64_t>());
    if (chain.base_rows > 0) with_rows.push_back(chain.base);
    with_rows.insert(with_rows.end(), chain.changed.begin(), chain.changed.end());
  } else if (chain.base_rows > 0) {
    with_rows.push_back(batch_id);
  }
  if (!table.empty() && !with_rows.empty()) {
    std::string urls;
    for (int64_t id : with_rows) {
      urls += std::string(urls.empty() ? "" : ", ") +
              QuoteLiteral(engine::StoreUrl(handle_, StateKey(id, ".parquet")));
    }
    RETURN_IF_ERROR(
        conn_.Execute("INSERT INTO " + table + " BY NAME SELECT * FROM read_parquet([" + urls + "])")
            .WithContext(where_ + " state of batch " + std::to_string(batch_id)));
  }
  before_last_.reset();
  last_ = std::move(chain);
  return std::optional<json>(std::move(state));
}

std::optional<BatchStateFiles::Chain> BatchStateFiles::ChainBefore(int64_t batch_id) const {
  for (const std::optional<Chain>* chain : {&last_, &before_last_}) {
    if (*chain && (*chain)->batch_id == batch_id - 1) return *chain;
  }
  return std::nullopt;
}

void BatchStateFiles::Written(std::optional<Chain> before, std::optional<Chain> chain) {
  before_last_ = std::move(before);
  last_ = std::move(chain);
}

Result<std::optional<int64_t>> BatchStateFiles::Latest() {
  ASSIGN_OR_RETURN(std::vector<ObjectInfo> objects, store_->List(""));
  std::optional<int64_t> latest;
  for (const ObjectInfo& object : objects) {
    const std::string_view key = object.key;
    if (key.size() <= 5 || key.substr(key.size() - 5) != ".json") continue;
    std::optional<int64_t> id = BatchOf(key);
    if (id && (!latest || *id > *latest)) latest = id;
  }
  return latest;
}

Result<int64_t> BatchStateFiles::Write(int64_t batch_id, json meta,
                                       const std::optional<std::string>& rows_sql) {
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
  return rows;
}

Status BatchStateFiles::Save(int64_t batch_id, json meta, const std::optional<std::string>& rows_sql) {
  const std::optional<Chain> before = ChainBefore(batch_id);
  Written(before, std::nullopt);  // until the write is done
  ASSIGN_OR_RETURN(int64_t rows, Write(batch_id, std::move(meta), rows_sql));
  Written(before, Chain{batch_id, batch_id, rows, 0, {}});
  return DeleteBefore(before);
}

Status BatchStateFiles::SaveChanges(int64_t batch_id, json meta, int64_t changes,
                                    const std::string& changes_sql, const std::string& full_sql) {
  const std::optional<Chain> before = ChainBefore(batch_id);
  if (!before || before->base_rows < kMinRowsForChanges || batch_id - before->base > kMaxChangedBatches ||
      2 * (before->changed_rows + changes) > before->base_rows) {
    return Save(batch_id, std::move(meta), full_sql);
  }
  Chain chain{batch_id, before->base, before->base_rows, before->changed_rows + changes, before->changed};
  if (changes > 0) chain.changed.push_back(batch_id);
  meta["base"] = chain.base;
  meta["baseRows"] = chain.base_rows;
  meta["changedRows"] = chain.changed_rows;
  meta["changed"] = chain.changed;
  Written(before, std::nullopt);  // until the write is done
  RETURN_IF_ERROR(Write(batch_id, std::move(meta), changes_sql).status());
  Written(before, std::move(chain));
  return DeleteBefore(before);
}

Status BatchStateFiles::DeleteBefore(const std::optional<Chain>& before) {
  if (!before) return Status::OK();
  // A batch run again starts from the state before it: the chain of `before` stays.
  const int64_t keep = before->base;
  auto remove = [&](int64_t id) -> Status {
    for (const char* extension : {".json", ".parquet"})
      RETURN_IF_ERROR(store_->Delete(StateKey(id, extension)));
    return Status::OK();
  };
  if (deleted_before_) {
    for (int64_t id = *deleted_before_; id < keep; id++) RETURN_IF_ERROR(remove(id));
  } else {
    // What earlier runs left: listed once a run.
    ASSIGN_OR_RETURN(std::vector<ObjectInfo> objects, store_->List(""));
    for (const ObjectInfo& object : objects) {
      std::optional<int64_t> id = BatchOf(object.key);
      if (id && *id < keep) RETURN_IF_ERROR(store_->Delete(object.key));
    }
  }
  deleted_before_ = std::max(deleted_before_.value_or(keep), keep);
  return Status::OK();
}

std::string KeptTableName(const std::string& table) {
  static std::atomic<uint64_t> tables{0};
  return table + "_" + std::to_string(tables++);
}

Result<bool> KeptState::Start(int64_t batch_id, const std::function<Status()>& join,
                              const std::function<Status()>& discard) {
  const int64_t previous = batch_id - 1;
  if (waiting_) {
    const int64_t waiting = *waiting_;
    waiting_.reset();
    if (waiting == previous && held_ == previous - 1) {
      held_.reset();
      RETURN_IF_ERROR(join());
      held_ = previous;
    }
    RETURN_IF_ERROR(discard());
  }
  if (held_ == previous) return true;
  held_.reset();
  return false;
}

}  // namespace basin::stream
