// The DuckDB FileSystem behind basin:// URLs: every path is resolved through the store
// registry (engine/store_registry.h) to an ObjectStore and a key, and every call becomes
// ObjectStore calls.
//
// - Reads: one ObjectStore::OpenRead per DuckDB file handle, then ReadAt for each read (the
//   local store keeps one descriptor and uses pread). The size and modification time a
//   glob, a listing or the caller put in OpenFileInfo::extended_info ("file_size",
//   "last_modified", as DuckDB's own local file system fills them, and "etag") are handed
//   to OpenRead, so that opening a listed file asks the store nothing more. Version tags
//   (ObjectInfo::version_tag) let DuckDB's caches trust recently written files, as the
//   local file system's device/inode tags do.
// - Writes: sequential, through OpenWrite in kFreshKey mode (durable and visible at Close,
//   no temporary copy), falling back to kAtomicReplace when the key exists (COPY with
//   OVERWRITE_OR_IGNORE into a fixed file name). A handle destroyed without Close leaves
//   nothing behind. FileSync is a no-op: Close is what makes a file durable.
// - Folders do not exist on object stores: CreateDirectory does nothing, DirectoryExists
//   says whether any object lies below the folder (the store root always exists), and
//   listings and globs are computed from one recursive List of the longest literal prefix.
//
// Store errors become duckdb::IOException naming the operation, the URL and the store.
#include "engine/duckdb/store_file_system.h"

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "duckdb/common/exception.hpp"
#include "duckdb/common/file_system.hpp"
#include "duckdb/common/types/timestamp.hpp"
#include "duckdb/common/types/value.hpp"
#include "duckdb/main/capi/capi_internal.hpp"
#include "duckdb/main/database.hpp"
#include "engine/store_registry.h"
#include "storage/object_key.h"

// DuckDB's glob matcher, as libduckdb exports it. Its header
// (function/scalar/string_common.hpp) needs headers the packaged include folder lacks.
namespace duckdb {
bool Glob(const char* s, idx_t slen, const char* pattern, idx_t plen, bool allow_question_mark);
}  // namespace duckdb

namespace basin::engine {

namespace {

using duckdb::idx_t;

constexpr const char* kFileSystemName = "BasinStoreFileSystem";

[[noreturn]] void ThrowStoreError(const Status& status, std::string_view operation, std::string_view url,
                                  const ObjectStore* store) {
  std::string message = std::string(operation) + " " + std::string(url);
  if (store != nullptr) message += " (store " + store->Describe() + ")";
  throw duckdb::IOException(message + ": " + status.ToString());
}

StoreUrlTarget Resolve(std::string_view url, std::string_view operation) {
  Result<StoreUrlTarget> target = ResolveStoreUrl(url);
  if (!target.ok()) ThrowStoreError(target.status(), operation, url, nullptr);
  return std::move(target).value();
}

// A listed object as DuckDB's local file system describes a file, so that opening it
// later needs no Head and the Parquet metadata cache can be checked without opening it.
duckdb::OpenFileInfo FileInfoOf(std::string path, const ObjectInfo& object) {
  duckdb::OpenFileInfo info(std::move(path));
  info.extended_info = duckdb::make_shared_ptr<duckdb::ExtendedOpenFileInfo>();
  auto& options = info.extended_info->options;
  options.emplace("type", duckdb::Value("file"));
  options.emplace("file_size", duckdb::Value::BIGINT(static_cast<int64_t>(object.size_bytes)));
  options.emplace("last_modified",
                  duckdb::Value::TIMESTAMP(duckdb::Timestamp::FromEpochMs(object.modification_time_ms)));
  if (!object.version_tag.empty()) options.emplace("etag", duckdb::Value(object.version_tag));
  return info;
}

duckdb::OpenFileInfo FolderInfoOf(std::string path) {
  duckdb::OpenFileInfo info(std::move(path));
  info.extended_info = duckdb::make_shared_ptr<duckdb::ExtendedOpenFileInfo>();
  info.extended_info->options.emplace("type", duckdb::Value("directory"));
  return info;
}

// What OpenFileInfo::extended_info says about the file, as OpenRead takes it.
ObjectReadOptions ReadOptionsOf(const duckdb::OpenFileInfo& info) {
  ObjectReadOptions options;
  if (!info.extended_info) return options;
  const auto& known = info.extended_info->options;
  if (auto it = known.find("file_size"); it != known.end() && !it->second.IsNull()) {
    const auto size = it->second.GetValue<int64_t>();
    if (size >= 0) options.size_bytes = static_cast<uint64_t>(size);
  }
  if (auto it = known.find("last_modified"); it != known.end() && !it->second.IsNull()) {
    options.modification_time_ms = duckdb::Timestamp::GetEpochMs(it->second.GetValue<duckdb::timestamp_t>());
  }
  if (auto it = known.find("etag"); it != known.end() && !it->second.IsNull()) {
    options.version_tag = it->second.ToString();
  }
  return options;
}

class StoreFileHandle final : public duckdb::FileHandle {
 public:
  StoreFileHandle(duckdb::FileSystem& file_system, const std::string& path, duckdb::FileOpenFlags flags,
                  StoreUrlTarget target_p)
      : FileHandle(file_system, path, flags), target(std::move(target_p)) {}
  // A writer not closed is aborted by its destructor: nothing becomes visible.
  ~StoreFileHandle() override = default;

  void Close() override {
    if (writer) {
      std::unique_ptr<WritableObject> closing = std::move(writer);
      Status st = closing->Close();
      if (!st.ok()) ThrowStoreError(st, "cannot close", path, target.store.get());
    }
    reader.reset();
  }

  uint64_t Size() const { return reader ? reader->size_bytes() : writer ? writer->size_bytes() : 0; }

  StoreUrlTarget target;
  std::unique_ptr<ReadableObject> reader;  // when opened for reading
  std::unique_ptr<WritableObject> writer;  // when opened for writing, until closed
  uint64_t position = 0;                   // of sequential reads and writes
  // The reader's, or looked up on first use when the opener knew only the size.
  std::optional<int64_t> modification_time_ms;
};

// Whether `components` (a key split at '/') match `pattern` (a glob split at '/'), where
// "**" matches any number of components and the others match one component each, as
// DuckDB's local file system matches paths.
bool MatchesGlob(const std::vector<std::string_view>& pattern, size_t p,
                 const std::vector<std::string_view>& components, size_t c) {
  if (p == pattern.size()) return c == components.size();
  if (pattern[p] == "**") {
    for (size_t skip = c; skip <= components.size(); skip++) {
      if (MatchesGlob(pattern, p + 1, components, skip)) return true;
    }
    return false;
  }
  if (c == components.size()) return false;
  return duckdb::Glob(components[c].data(), components[c].size(), pattern[p].data(), pattern[p].size(),
                      true) &&
         MatchesGlob(pattern, p + 1, components, c + 1);
}

class StoreFileSystem final : public duckdb::FileSystem {
 public:
  std::string GetName() const override { return kFileSystemName; }

  bool CanHandleFile(const std::string& path) override { return IsStoreUrl(path); }

  // --- reading and writing files ---

  void Read(duckdb::FileHandle& handle, void* buffer, int64_t nr_bytes, idx_t location) override {
    auto& file = Reader(handle);
    Status st = file.reader->ReadAt(location, static_cast<uint64_t>(nr_bytes), static_cast<char*>(buffer));
    if (!st.ok()) ThrowStoreError(st, "cannot read", file.path, file.target.store.get());
  }

  int64_t Read(duckdb::FileHandle& handle, void* buffer, int64_t nr_bytes) override {
    auto& file = Reader(handle);
    const uint64_t size = file.reader->size_bytes();
    const uint64_t count =
        std::min<uint64_t>(static_cast<uint64_t>(nr_bytes), size - std::min(size, file.position));
    Status st = file.reader->ReadAt(file.position, count, static_cast<char*>(buffer));
    if (!st.ok()) ThrowStoreError(st, "cannot read", file.path, file.target.store.get());
    file.position += count;
    return static_cast<int64_t>(count);
  }

  void Write(duckdb::FileHandle& handle, void* buffer, int64_t nr_bytes, idx_t location) override {
    auto& file = Writer(handle);
    if (location != file.position) {
      throw duckdb::NotImplementedException("%s is written sequentially: cannot write at offset %llu of %llu",
                                            file.path, static_cast<unsigned long long>(location),
                                            static_cast<unsigned long long>(file.position));
    }
    Write(handle, buffer, nr_bytes);
  }

  int64_t Write(duckdb::FileHandle& handle, void* buffer, int64_t nr_bytes) override {
    auto& file = Writer(handle);
    Status st = file.writer->Append(
        std::string_view(static_cast<const char*>(buffer), static_cast<size_t>(nr_bytes)));
    if (!st.ok()) ThrowStoreError(st, "cannot write", file.path, file.target.store.get());
    file.position += static_cast<uint64_t>(nr_bytes);
    return nr_bytes;
  }

  int64_t GetFileSize(duckdb::FileHandle& handle) override {
    return static_cast<int64_t>(handle.Cast<StoreFileHandle>().Size());
  }

  duckdb::timestamp_t GetLastModifiedTime(duckdb::FileHandle& handle) override {
    auto& file = handle.Cast<StoreFileHandle>();
    if (!file.modification_time_ms) {
      Result<ObjectInfo> info = file.target.store->Head(file.target.key);
      if (!info.ok()) ThrowStoreError(info.status(), "cannot stat", file.path, file.target.store.get());
      file.modification_time_ms = info->modification_time_ms;
    }
    return duckdb::Timestamp::FromEpochMs(*file.modification_time_ms);
  }

  // With a tag, DuckDB's caches (Parquet metadata, file ranges) trust what they hold;
  // without one, they distrust files changed in the last ten seconds.
  std::string GetVersionTag(duckdb::FileHandle& handle) override {
    auto& file = handle.Cast<StoreFileHandle>();
    return file.reader ? file.reader->version_tag() : "";
  }

  duckdb::FileType GetFileType(duckdb::FileHandle& handle) override {
    return duckdb::FileType::FILE_TYPE_REGULAR;
  }

  void Truncate(duckdb::FileHandle& handle, int64_t new_size) override {
    throw duckdb::NotImplementedException("%s: files in object stores cannot be truncated", handle.path);
  }

  // Close() is what makes a written file durable.
  void FileSync(duckdb::FileHandle& handle) override {}

  void Seek(duckdb::FileHandle& handle, idx_t location) override {
    handle.Cast<StoreFileHandle>().position = location;
  }
  idx_t SeekPosition(duckdb::FileHandle& handle) override { return handle.Cast<StoreFileHandle>().position; }
  bool CanSeek() override { return true; }
  bool OnDiskFile(duckdb::FileHandle& handle) override {
    return handle.Cast<StoreFileHandle>().target.store->CheapRandomReads();
  }

  // --- names ---

  bool FileExists(const std::string& filename, duckdb::optional_ptr<duckdb::FileOpener> opener) override {
    StoreUrlTarget target = Resolve(filename, "cannot check");
    if (target.key.empty()) return false;  // the root is a folder
    Result<ObjectInfo> info = target.store->Head(target.key);
    if (info.ok()) return true;
    if (info.status().IsNotFound() || info.status().code() == ErrorCode::kInvalidArgument) return false;
    ThrowStoreError(info.status(), "cannot check", filename, target.store.get());
  }

  bool DirectoryExists(const std::string& directory,
                       duckdb::optional_ptr<duckdb::FileOpener> opener) override {
    StoreUrlTarget target = Resolve(directory, "cannot check folder");
    if (target.key.empty()) return true;
    Result<bool> any = target.store->HasObjectsWithPrefix(target.key + "/");
    if (!any.ok()) {
      if (any.status().code() == ErrorCode::kInvalidArgument) return false;
      ThrowStoreError(any.status(), "cannot check folder", directory, target.store.get());
    }
    return *any;
  }

  // Folders come into being with the objects below them.
  void CreateDirectory(const std::string& directory,
                       duckdb::optional_ptr<duckdb::FileOpener> opener) override {
    Resolve(directory, "cannot create folder");
  }

  void RemoveDirectory(const std::string& directory,
                       duckdb::optional_ptr<duckdb::FileOpener> opener) override {
    StoreUrlTarget target = Resolve(directory, "cannot remove folder");
    Result<std::vector<ObjectInfo>> listed = target.store->List(target.key.empty() ? "" : target.key + "/");
    if (!listed.ok()) ThrowStoreError(listed.status(), "cannot list", directory, target.store.get());
    for (const ObjectInfo& object : *listed) {
      Status st = target.store->Delete(object.key);
      if (!st.ok()) ThrowStoreError(st, "cannot delete", target.UrlOf(object.key), target.store.get());
    }
  }

  void RemoveFile(const std::string& filename, duckdb::optional_ptr<duckdb::FileOpener> opener) override {
    StoreUrlTarget target = Resolve(filename, "cannot delete");
    Status st = target.store->Delete(target.key);
    if (!st.ok()) ThrowStoreError(st, "cannot delete", filename, target.store.get());
  }

  bool TryRemoveFile(const std::string& filename, duckdb::optional_ptr<duckdb::FileOpener> opener) override {
    if (!FileExists(filename, opener)) return false;
    RemoveFile(filename, opener);
    return true;
  }

  // Object stores cannot rename: the object is copied, then the source deleted.
  void MoveFile(const std::string& source, const std::string& target,
                duckdb::optional_ptr<duckdb::FileOpener> opener) override {
    StoreUrlTarget from = Resolve(source, "cannot move");
    StoreUrlTarget to = Resolve(target, "cannot move to");
    if (from.store == to.store && from.key == to.key) return;
    Status st = CopyObject(*from.store, from.key, *to.store, to.key);
    if (!st.ok()) ThrowStoreError(st, "cannot move " + source + " to", target, to.store.get());
    st = from.store->Delete(from.key);
    if (!st.ok()) ThrowStoreError(st, "cannot delete moved", source, from.store.get());
  }

  duckdb::vector<duckdb::OpenFileInfo> Glob(const std::string& path, duckdb::FileOpener* opener) override {
    StoreUrlTarget target = Resolve(path, "cannot glob");
    duckdb::vector<duckdb::OpenFileInfo> out;
    if (!HasGlob(target.key)) {
      if (auto info = HeadOrNothing(target, path)) out.push_back(FileInfoOf(path, *info));
      return out;
    }
    const std::vector<std::string_view> pattern = SplitKey(target.key);
    if (std::count(pattern.begin(), pattern.end(), "**") > 1) {
      throw duckdb::IOException("Cannot use multiple '**' in one path: %s", path);
    }
    // One listing of everything below the components without wildcards.
    size_t literal = 0;
    std::string prefix;
    while (literal < pattern.size() && !HasGlob(std::string(pattern[literal]))) {
      prefix.append(pattern[literal++]).append("/");
    }
    Result<std::vector<ObjectInfo>> listed = target.store->List(prefix);
    if (!listed.ok()) ThrowStoreError(listed.status(), "cannot list", path, target.store.get());
    for (const ObjectInfo& object : *listed) {
      std::vector<std::string_view> components = SplitKey(std::string_view(object.key).substr(prefix.size()));
      if (MatchesGlob(pattern, literal, components, 0))
        out.push_back(FileInfoOf(target.UrlOf(object.key), object));
    }
    // As DuckDB does: a pattern matching nothing may still be a file's literal name.
    if (out.empty()) {
      if (auto info = HeadOrNothing(target, path)) out.push_back(FileInfoOf(path, *info));
    }
    return out;
  }

 protected:
  bool SupportsOpenFileExtended() const override { return true; }

  duckdb::unique_ptr<duckdb::FileHandle> OpenFileExtended(
      const duckdb::OpenFileInfo& info, duckdb::FileOpenFlags flags,
      duckdb::optional_ptr<duckdb::FileOpener> opener) override {
    StoreUrlTarget target = Resolve(info.path, "cannot open");
    ObjectStore& store = *target.store;
    auto handle = duckdb::make_uniq<StoreFileHandle>(*this, info.path, flags, std::move(target));
    const std::string& key = handle->target.key;
    if (flags.OpenForWriting()) {
      if (flags.OpenForReading() || flags.OpenForAppending()) {
        throw duckdb::NotImplementedException(
            "%s: files in object stores are read, or written whole; not both", info.path);
      }
      Result<std::unique_ptr<WritableObject>> writer = store.OpenWrite(key, {WriteMode::kFreshKey});
      if (writer.status().IsAlreadyExists()) {
        if (flags.ReturnNullIfExists()) return nullptr;
        if (!flags.ExclusiveCreate()) writer = store.OpenWrite(key, {WriteMode::kAtomicReplace});
      }
      if (!writer.ok()) ThrowStoreError(writer.status(), "cannot create", info.path, &store);
      handle->writer = std::move(writer).value();
      return handle;
    }
    const ObjectReadOptions options = ReadOptionsOf(info);
    Result<std::unique_ptr<ReadableObject>> reader = store.OpenRead(key, options);
    if (!reader.ok()) {
      if (reader.status().IsNotFound() && flags.ReturnNullIfNotExists()) return nullptr;
      ThrowStoreError(reader.status(), "cannot open", info.path, &store);
    }
    handle->reader = std::move(reader).value();
    handle->modification_time_ms = handle->reader->modification_time_ms();
    return handle;
  }

  bool SupportsListFilesExtended() const override { return true; }

  // The files and folders directly inside `directory`, by name.
  bool ListFilesExtended(const std::string& directory,
                         const std::function<void(duckdb::OpenFileInfo& info)>& callback,
                         duckdb::optional_ptr<duckdb::FileOpener> opener) override {
    StoreUrlTarget target = Resolve(directory, "cannot list");
    const std::string prefix = target.key.empty() ? "" : target.key + "/";
    Result<std::vector<ObjectInfo>> listed = target.store->List(prefix);
    if (!listed.ok()) ThrowStoreError(listed.status(), "cannot list", directory, target.store.get());
    std::string last_folder;
    for (const ObjectInfo& object : *listed) {
      std::string name = object.key.substr(prefix.size());
      const size_t slash = name.find('/');
      if (slash == std::string::npos) {
        duckdb::OpenFileInfo info = FileInfoOf(name, object);
        callback(info);
      } else if (name.compare(0, slash, last_folder) != 0 || last_folder.size() != slash) {
        // Keys are sorted, so the objects of one folder come one after another.
        last_folder = name.substr(0, slash);
        duckdb::OpenFileInfo info = FolderInfoOf(last_folder);
        callback(info);
      }
    }
    return !listed->empty() || target.key.empty();
  }

 private:
  static StoreFileHandle& Reader(duckdb::FileHandle& handle) {
    auto& file = handle.Cast<StoreFileHandle>();
    if (!file.reader) throw duckdb::IOException("%s was not opened for reading", file.path);
    return file;
  }

  static StoreFileHandle& Writer(duckdb::FileHandle& handle) {
    auto& file = handle.Cast<StoreFileHandle>();
    if (!file.writer) throw duckdb::IOException("%s is not open for writing", file.path);
    return file;
  }

  // The object `target` names, or nothing when there is none (or the key is not one).
  static std::optional<ObjectInfo> HeadOrNothing(const StoreUrlTarget& target, const std::string& url) {
    if (target.key.empty()) return std::nullopt;
    Result<ObjectInfo> info = target.store->Head(target.key);
    if (info.ok()) return std::move(info).value();
    if (info.status().IsNotFound() || info.status().code() == ErrorCode::kInvalidArgument)
      return std::nullopt;
    ThrowStoreError(info.status(), "cannot stat", url, target.store.get());
  }

  static Status CopyObject(ObjectStore& from, const std::string& from_key, ObjectStore& to,
                           const std::string& to_key) {
    constexpr uint64_t kChunkBytes = 8 << 20;
    ASSIGN_OR_RETURN(std::unique_ptr<ReadableObject> reader, from.OpenRead(from_key, {}));
    ASSIGN_OR_RETURN(std::unique_ptr<WritableObject> writer,
                     to.OpenWrite(to_key, {WriteMode::kAtomicReplace}));
    std::string chunk;
    for (uint64_t offset = 0; offset < reader->size_bytes(); offset += chunk.size()) {
      chunk.resize(static_cast<size_t>(std::min(kChunkBytes, reader->size_bytes() - offset)));
      RETURN_IF_ERROR(reader->ReadAt(offset, chunk.size(), chunk.data()));
      RETURN_IF_ERROR(writer->Append(chunk));
    }
    return writer->Close();
  }
};

}  // namespace

Status InstallStoreFileSystem(_duckdb_database* database) {
  if (database == nullptr)
    return Status::Internal("no DuckDB database to install the basin:// file system in");
  // duckdb_database is a DatabaseWrapper (main/capi/capi_internal.hpp) holding the DuckDB.
  auto* wrapper = reinterpret_cast<duckdb::DatabaseWrapper*>(database);
  try {
    duckdb::DatabaseInstance& instance = *wrapper->database->instance;
    instance.GetFileSystem().RegisterSubSystem(duckdb::make_uniq<StoreFileSystem>());
  } catch (const std::exception& e) {
    return Status::Internal(std::string("cannot install the basin:// file system: ") + e.what());
  }
  return Status::OK();
}

}  // namespace basin::engine
