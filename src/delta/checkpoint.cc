#include "delta/checkpoint.h"

#include "delta/paths.h"

namespace basin::delta {

namespace {

// A checkpoint file that vanished between listing and reading is a broken log, not a
// missing table.
Status MissingAsCorruption(const Status& status, const std::string& key) {
  if (status.IsNotFound()) return Status::Corruption(key + ": checkpoint file is missing");
  return status;
}

Status ReadParquet(ObjectStore& store, ParquetLogIO& io, const std::string& key, std::vector<Action>* out) {
  return MissingAsCorruption(io.ReadActions(store, key, out), key);
}

// A sidecar outside the table's store, at an absolute local path.
Status ReadAbsoluteSidecar(ParquetLogIO& io, const Sidecar& sidecar, const std::string& decoded,
                           std::vector<Action>* out) {
  const std::string name = "sidecar " + sidecar.path;
  if (!decoded.starts_with("/")) {
    return Status::NotImplemented(name + ": only local absolute sidecar paths are supported");
  }
  const size_t slash = decoded.rfind('/');
  // A store that creates its folder on the first write only: reading leaves no trace.
  ASSIGN_OR_RETURN(auto folder, OpenStoreAt(slash == 0 ? "/" : decoded.substr(0, slash)));
  return ReadParquet(*folder, io, decoded.substr(slash + 1), out).WithContext(name);
}

}  // namespace

Result<std::vector<Action>> ReadCheckpointFiles(ObjectStore& store, ParquetLogIO& io,
                                                const CheckpointFiles& checkpoint) {
  std::vector<Action> actions;
  for (const auto& file : checkpoint.files) {
    const std::string& key = file.key;
    if (key.ends_with(".json")) {
      auto content = store.Get(key);
      if (!content.ok()) return MissingAsCorruption(content.status(), key);
      ASSIGN_OR_RETURN(auto parsed, ParseCommitFile(*content, key));
      for (auto& a : parsed) actions.push_back(std::move(a));
    } else {
      RETURN_IF_ERROR(ReadParquet(store, io, key, &actions));
    }
  }
  return actions;
}

Status ReadSidecars(ObjectStore& store, ParquetLogIO& io, const std::vector<Sidecar>& sidecars,
                    std::vector<Action>* out) {
  for (const auto& sidecar : sidecars) {
    std::string decoded = DecodeDataPath(sidecar.path);
    if (IsAbsoluteDataPath(decoded)) {
      RETURN_IF_ERROR(ReadAbsoluteSidecar(io, sidecar, decoded, out));
    } else {
      RETURN_IF_ERROR(ReadParquet(store, io, std::string(kLogFolder) + "_sidecars/" + decoded, out));
    }
  }
  return Status::OK();
}

}  // namespace basin::delta
