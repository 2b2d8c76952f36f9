#include "engine/status_transport.h"

namespace basin::engine {

namespace {
constexpr char kMarker[] = "[basin:";
}  // namespace

std::string EncodeStatus(const Status& status) {
  return std::string(kMarker) + std::string(GetErrorCodeInfo(status.code()).name) + "] " + status.message();
}

std::optional<Status> DecodeStatus(const std::string& duckdb_message) {
  size_t start = duckdb_message.find(kMarker);
  if (start == std::string::npos) return std::nullopt;
  size_t name_start = start + sizeof(kMarker) - 1;
  size_t name_end = duckdb_message.find("] ", name_start);
  if (name_end == std::string::npos) return std::nullopt;
  std::string name = duckdb_message.substr(name_start, name_end - name_start);
  for (int code = static_cast<int>(ErrorCode::kInvalidArgument); code <= static_cast<int>(ErrorCode::kInternal);
       code++) {
    const ErrorCodeInfo& info = GetErrorCodeInfo(static_cast<ErrorCode>(code));
    if (info.name != name) continue;
    std::string message = duckdb_message.substr(name_end + 2);
    size_t excerpt = message.find("\n\nLINE ");
    if (excerpt != std::string::npos) message.resize(excerpt);
    return Status(info.code, message);
  }
  return std::nullopt;
}

}  // namespace basin::engine
