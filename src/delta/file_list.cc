#include "delta/file_list.h"

#include <functional>
#include <string_view>

#include "delta/paths.h"

namespace basin::delta {

size_t ReplayKeyHash(const std::string& path, const std::optional<DeletionVectorDescriptor>& dv) {
  // Two memchr scans: find_first_of with a set calls memchr once per character of `path`.
  const bool plain = path.find('%') == std::string::npos && path.find(':') == std::string::npos;
  size_t h = plain ? std::hash<std::string_view>()(path) : std::hash<std::string>()(DecodeDataPath(path));
  if (dv) h ^= std::hash<std::string>()(dv->UniqueId()) + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
  return h;
}

}  // namespace basin::delta
