#include "storage/object_key.h"

namespace basin {

namespace {

// Checks the complete components of `path` (every one, or all but a cut-short last one).
Status ValidateComponents(std::string_view path, bool last_may_be_partial, std::string_view what) {
  if (path.find('\0') != std::string_view::npos) {
    return Status::InvalidArgument(std::string(what) + " contains a NUL byte");
  }
  if (!path.empty() && path.front() == '/') {
    return Status::InvalidArgument(std::string(what) + " '" + std::string(path) +
                                   "' is absolute; keys are relative to the store root");
  }
  size_t start = 0;
  while (start <= path.size()) {
    size_t slash = path.find('/', start);
    bool last = slash == std::string_view::npos;
    std::string_view component = path.substr(start, last ? std::string_view::npos : slash - start);
    if (!(last && last_may_be_partial)) {
      if (component.empty()) {
        return Status::InvalidArgument(std::string(what) + " '" + std::string(path) +
                                       "' has an empty component");
      }
      if (component == "." || component == "..") {
        return Status::InvalidArgument(std::string(what) + " '" + std::string(path) + "' has a '" +
                                       std::string(component) +
                                       "' component; keys must stay inside the store root");
      }
    }
    if (last) break;
    start = slash + 1;
  }
  return Status::OK();
}

}  // namespace

Status ValidateObjectKey(std::string_view key) {
  if (key.empty()) return Status::InvalidArgument("object key is empty");
  return ValidateComponents(key, /*last_may_be_partial=*/false, "object key");
}

Status ValidateListPrefix(std::string_view prefix) {
  return ValidateComponents(prefix, /*last_may_be_partial=*/true, "list prefix");
}

Status ShortObjectError(std::string_view key, std::string_view store, uint64_t offset, uint64_t length,
                        uint64_t size) {
  return Status::Corruption("object '" + std::string(key) + "' in " + std::string(store) + " has " +
                            std::to_string(size) + " bytes; cannot read " + std::to_string(length) +
                            " bytes at offset " + std::to_string(offset));
}

Status FinishedWriterError(std::string_view key, std::string_view store) {
  return Status::Internal("object '" + std::string(key) + "' in " + std::string(store) +
                          " was already closed or aborted");
}

std::vector<std::string_view> SplitKey(std::string_view key) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  while (start <= key.size()) {
    size_t slash = key.find('/', start);
    if (slash == std::string_view::npos) slash = key.size();
    if (slash > start) parts.push_back(key.substr(start, slash - start));
    start = slash + 1;
  }
  return parts;
}

}  // namespace basin
