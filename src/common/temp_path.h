// TempPath: a fresh name in the system's temporary folder whose file or folder is removed
// (recursively, errors ignored) when the TempPath goes away, on every return path. It creates
// nothing itself: the owner, or DuckDB's COPY, writes there.
//
// Thread safety: one owner; distinct TempPaths never share a name (random UUIDs), so any
// number may be used from any threads at once.
#pragma once

#include <string>
#include <string_view>

namespace basin {

class TempPath {
 public:
  // <temp folder>/<prefix><uuid><suffix>, e.g. TempPath("basin-checkpoint-", ".parquet").
  // Falls back to /tmp when the system names no usable temporary folder.
  explicit TempPath(std::string_view prefix, std::string_view suffix = "");
  ~TempPath();
  TempPath(const TempPath&) = delete;
  TempPath& operator=(const TempPath&) = delete;

  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace basin
