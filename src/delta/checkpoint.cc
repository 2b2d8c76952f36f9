#include "delta/checkpoint.h"

#include <filesystem>

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
  const std::filesystem::path path(decoded);
  std::error_code ec;
  // Opening a store creates its folder; a sidecar in a folder that is gone is just missing.
  if (!std::filesystem::is_regular_file(path, ec)) return Status::Corruption(name + ": file is missing");
  ASSIGN_OR_RETURN(auto folder, OpenLocalObjectStore(path.parent_path().string()));
  return ReadParquet(*folder, io, path.filename().string(), out).WithContext(name);
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
