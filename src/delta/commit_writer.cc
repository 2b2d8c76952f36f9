#include "delta/commit_writer.h"

#include "delta/log_segment.h"

namespace basin::delta {

Status WriteCommit(ObjectStore& store, int64_t version, const std::vector<Action>& actions) {
  if (version < 0)
    return Status::InvalidArgument("commit version must not be negative, got " + std::to_string(version));
  std::string content;
  for (const auto& action : actions) {
    content += SerializeAction(action);
    content += '\n';
  }
  std::string key = CommitKey(version);
  Status st = store.PutIfAbsent(key, content);
  if (st.IsAlreadyExists()) {
    return Status::Conflict("version " + std::to_string(version) +
                            " was already committed by another writer (" + key + " exists)");
  }
  return st.WithContext("writing " + key);
}

CommitInfo MakeCommitInfo(int64_t timestamp_ms, const std::string& operation,
                          nlohmann::json operation_parameters) {
  CommitInfo info;
  info.timestamp = timestamp_ms;
  info.operation = operation;
  info.raw = {{"timestamp", timestamp_ms},
              {"operation", operation},
              {"operationParameters", std::move(operation_parameters)},
              {"engineInfo", kEngineInfo}};
  return info;
}

}  // namespace basin::delta
