#include "basin/object_store.h"

namespace basin {

Result<std::shared_ptr<ObjectStore>> OpenStoreAt(const std::string& location) {
  if (location.empty()) return Status::InvalidArgument("a store location is empty");
  std::string path = location;
  if (path.starts_with("file:")) {
    path = path.substr(5);
    // file:///x and file://localhost/x name /x; file:/x does too.
    if (path.starts_with("//localhost/")) {
      path = path.substr(11);
    } else if (path.starts_with("///")) {
      path = path.substr(2);
    }
    if (!path.starts_with('/') || path.starts_with("//")) {
      return Status::InvalidArgument("'" + location + "' is not a local file URI");
    }
  } else if (size_t scheme = path.find("://"); scheme != std::string::npos) {
    return Status::NotImplemented("no object store for '" + location + "': only local folders are supported");
  }
  LocalStoreOptions options;
  options.create_root = false;
  return OpenLocalObjectStore(path, options);
}

}  // namespace basin
