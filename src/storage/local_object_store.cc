// LocalObjectStore: objects are files under a root folder.
//
// Writes go to a hidden temporary file in the destination folder, are fsynced, then moved
// into place: rename(2) for Put (replace) and link(2) for PutIfAbsent, which fails with
// EEXIST when the name is taken, atomically across processes. The folder is fsynced after
// the move so the new name survives a machine crash.
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <set>

#include "storage/object_key.h"
#include "storage/object_store.h"

namespace basin {

namespace {

constexpr std::string_view kTempPrefix = ".basin-tmp-";

std::string ErrnoText(int err) { return std::strerror(err); }

Status IOErrorAt(const std::string& what, const std::string& path, int err) {
  // Interrupted or resource-starved calls may succeed if repeated; the rest will not.
  bool retryable = err == EINTR || err == EAGAIN || err == ENOSPC || err == EMFILE || err == ENFILE;
  return Status::IOError(what + " '" + path + "': " + ErrnoText(err), retryable);
}

// Closes a file descriptor when it goes out of scope.
class FileDescriptor {
 public:
  explicit FileDescriptor(int fd) : fd_(fd) {}
  ~FileDescriptor() {
    if (fd_ >= 0) ::close(fd_);
  }
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  int get() const { return fd_; }
  void Reset(int fd) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = fd;
  }
  // Closes now, reporting the error close(2) may carry for buffered writes.
  int Close() {
    int rc = ::close(fd_);
    fd_ = -1;
    return rc;
  }

 private:
  int fd_;
};

int64_t ModificationTimeMs(const struct stat& st) {
  return static_cast<int64_t>(st.st_mtim.tv_sec) * 1000 + st.st_mtim.tv_nsec / 1000000;
}

Status FsyncPath(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_DIRECTORY);
  if (fd < 0) return IOErrorAt("cannot open folder for fsync", path, errno);
  FileDescriptor dir(fd);
  if (::fsync(dir.get()) != 0) return IOErrorAt("cannot fsync folder", path, errno);
  return Status::OK();
}

class LocalObjectStore final : public ObjectStore {
 public:
  explicit LocalObjectStore(std::string root) : root_(std::move(root)) {}

  Result<std::string> Get(const std::string& key) override {
    FileDescriptor file(-1);
    std::string path = PathOf(key);
    ASSIGN_OR_RETURN(uint64_t size, OpenForRead(key, path, file));
    std::string data;
    data.resize(static_cast<size_t>(size));
    ASSIGN_OR_RETURN(size_t n, ReadAt(file.get(), path, 0, data.data(), data.size()));
    data.resize(n);
    // The file may have grown since fstat (a concurrent in-place writer; not Basin's own
    // writes, which replace files whole). Read to the end so the result is one file.
    char buffer[65536];
    while (true) {
      ASSIGN_OR_RETURN(size_t more, ReadAt(file.get(), path, data.size(), buffer, sizeof(buffer)));
      if (more == 0) break;
      data.append(buffer, more);
    }
    return data;
  }

  Result<std::string> GetRange(const std::string& key, uint64_t offset, uint64_t length) override {
    FileDescriptor file(-1);
    std::string path = PathOf(key);
    ASSIGN_OR_RETURN(uint64_t size, OpenForRead(key, path, file));
    if (offset > size || length > size - offset) {
      return ShortObject(key, offset, length, size);
    }
    std::string data(static_cast<size_t>(length), '\0');
    ASSIGN_OR_RETURN(size_t n, ReadAt(file.get(), path, offset, data.data(), data.size()));
    if (n != data.size()) return ShortObject(key, offset, length, offset + n);
    return data;
  }

  // Opens the object at `path` into `file` and returns its size. NotFound when absent.
  Result<uint64_t> OpenForRead(const std::string& key, const std::string& path, FileDescriptor& file) const {
    RETURN_IF_ERROR(ValidateObjectKey(key));
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return OpenError(key, path, errno);
    file.Reset(fd);
    struct stat st;
    if (::fstat(file.get(), &st) != 0) return IOErrorAt("cannot stat", path, errno);
    if (!S_ISREG(st.st_mode)) return NotAnObject(key);
    return static_cast<uint64_t>(st.st_size);
  }

  Result<ObjectInfo> Head(const std::string& key) override {
    RETURN_IF_ERROR(ValidateObjectKey(key));
    std::string path = PathOf(key);
    struct stat st;
    if (::stat(path.c_str(), &st) != 0) return OpenError(key, path, errno);
    if (!S_ISREG(st.st_mode)) return NotAnObject(key);
    return ObjectInfo{key, static_cast<uint64_t>(st.st_size), ModificationTimeMs(st)};
  }

  Status Put(const std::string& key, const std::string& data) override {
    RETURN_IF_ERROR(ValidateObjectKey(key));
    std::string path = PathOf(key);
    std::string folder = std::filesystem::path(path).parent_path().string();
    RETURN_IF_ERROR(EnsureFolder(key));
    ASSIGN_OR_RETURN(std::string temp, WriteTempFile(folder, data));
    if (::rename(temp.c_str(), path.c_str()) != 0) {
      int err = errno;
      ::unlink(temp.c_str());
      return IOErrorAt("cannot rename temporary file onto", path, err);
    }
    return FsyncPath(folder);
  }

  Status PutIfAbsent(const std::string& key, const std::string& data) override {
    RETURN_IF_ERROR(ValidateObjectKey(key));
    std::string path = PathOf(key);
    std::string folder = std::filesystem::path(path).parent_path().string();
    RETURN_IF_ERROR(EnsureFolder(key));
    ASSIGN_OR_RETURN(std::string temp, WriteTempFile(folder, data));
    int rc = ::link(temp.c_str(), path.c_str());
    int err = errno;
    ::unlink(temp.c_str());
    if (rc != 0) {
      if (err == EEXIST) return Status::AlreadyExists("object '" + key + "' already exists in " + Describe());
      return IOErrorAt("cannot link temporary file to", path, err);
    }
    return FsyncPath(folder);
  }

  Status Delete(const std::string& key) override {
    RETURN_IF_ERROR(ValidateObjectKey(key));
    std::string path = PathOf(key);
    if (::unlink(path.c_str()) != 0) {
      int err = errno;
      // A folder is not an object, so deleting one by its key finds nothing.
      if (err == ENOENT || err == ENOTDIR || err == EISDIR) return Status::OK();
      return IOErrorAt("cannot delete", path, err);
    }
    return FsyncPath(std::filesystem::path(path).parent_path().string());
  }

  Result<std::vector<ObjectInfo>> List(const std::string& prefix) override {
    RETURN_IF_ERROR(ValidateListPrefix(prefix));
    // Walk the deepest folder the prefix names completely; the rest of it filters names.
    size_t slash = prefix.rfind('/');
    std::string folder_key = slash == std::string::npos ? "" : prefix.substr(0, slash + 1);
    std::vector<ObjectInfo> out;
    RETURN_IF_ERROR(ListFolder(folder_key, prefix, out));
    std::sort(out.begin(), out.end(), [](const ObjectInfo& a, const ObjectInfo& b) { return a.key < b.key; });
    return out;
  }

  std::optional<std::string> LocalPath(const std::string& key) const override {
    if (key.empty()) return root_;
    if (!ValidateObjectKey(key).ok()) return std::nullopt;
    return PathOf(key);
  }

  std::string Describe() const override { return "local:" + root_; }

 private:
  std::string PathOf(const std::string& key) const { return root_ + "/" + key; }

  Status OpenError(const std::string& key, const std::string& path, int err) const {
    if (err == ENOENT || err == ENOTDIR)
      return Status::NotFound("object '" + key + "' not found in " + Describe());
    return IOErrorAt("cannot open", path, err);
  }

  Status NotAnObject(const std::string& key) const {
    return Status::NotFound("object '" + key + "' not found in " + Describe() + " (it is a folder)");
  }

  Status ShortObject(const std::string& key, uint64_t offset, uint64_t length, uint64_t size) const {
    return Status::Corruption("object '" + key + "' in " + Describe() + " has " + std::to_string(size) +
                              " bytes; cannot read " + std::to_string(length) + " bytes at offset " +
                              std::to_string(offset));
  }

  // Reads up to `size` bytes at `offset`; fewer only at end of file.
  static Result<size_t> ReadAt(int fd, const std::string& path, uint64_t offset, char* out, size_t size) {
    size_t done = 0;
    while (done < size) {
      ssize_t n = ::pread(fd, out + done, size - done, static_cast<off_t>(offset + done));
      if (n < 0) {
        if (errno == EINTR) continue;
        return IOErrorAt("cannot read", path, errno);
      }
      if (n == 0) break;
      done += static_cast<size_t>(n);
    }
    return done;
  }

  // Creates the folders above `key`, fsyncing each parent that gains a new folder so the
  // object's path survives a crash along with the object.
  Status EnsureFolder(const std::string& key) const {
    size_t slash = key.find('/');
    while (slash != std::string::npos) {
      std::string folder = PathOf(key.substr(0, slash));
      if (::mkdir(folder.c_str(), 0755) == 0) {
        RETURN_IF_ERROR(FsyncPath(std::filesystem::path(folder).parent_path().string()));
      } else if (errno != EEXIST) {
        return IOErrorAt("cannot create folder", folder, errno);
      }
      slash = key.find('/', slash + 1);
    }
    return Status::OK();
  }

  // Writes `data` to a new hidden file in `folder`, fsynced; returns its path.
  Result<std::string> WriteTempFile(const std::string& folder, const std::string& data) {
    std::string temp;
    int fd = -1;
    // A name left behind by a crashed process may collide; the next counter value won't.
    for (int attempt = 0; attempt < 100 && fd < 0; attempt++) {
      temp = folder + "/" + std::string(kTempPrefix) + std::to_string(::getpid()) + "-" +
             std::to_string(temp_counter_.fetch_add(1, std::memory_order_relaxed));
      fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
      if (fd < 0 && errno != EEXIST) return IOErrorAt("cannot create temporary file", temp, errno);
    }
    if (fd < 0) return IOErrorAt("cannot create temporary file", temp, EEXIST);
    FileDescriptor file(fd);
    size_t done = 0;
    while (done < data.size()) {
      ssize_t n = ::write(file.get(), data.data() + done, data.size() - done);
      if (n < 0) {
        if (errno == EINTR) continue;
        int err = errno;
        ::unlink(temp.c_str());
        return IOErrorAt("cannot write", temp, err);
      }
      done += static_cast<size_t>(n);
    }
    if (::fsync(file.get()) != 0 || file.Close() != 0) {
      int err = errno;
      ::unlink(temp.c_str());
      return IOErrorAt("cannot fsync", temp, err);
    }
    return temp;
  }

  // Appends objects under `folder_key` (a key ending in '/', or "" for the root) whose keys
  // start with `prefix`, descending only into folders that can hold such keys.
  Status ListFolder(const std::string& folder_key, const std::string& prefix,
                    std::vector<ObjectInfo>& out) const {
    std::string folder = folder_key.empty() ? root_ : PathOf(folder_key.substr(0, folder_key.size() - 1));
    DIR* dir = ::opendir(folder.c_str());
    if (dir == nullptr) {
      // A folder that is missing (or a file) holds no objects.
      if (errno == ENOENT || errno == ENOTDIR) return Status::OK();
      return IOErrorAt("cannot list folder", folder, errno);
    }
    std::unique_ptr<DIR, int (*)(DIR*)> closer(dir, ::closedir);
    std::vector<std::string> subfolders;
    while (true) {
      errno = 0;
      struct dirent* entry = ::readdir(dir);
      if (entry == nullptr) {
        if (errno != 0) return IOErrorAt("cannot list folder", folder, errno);
        break;
      }
      std::string name = entry->d_name;
      if (name == "." || name == "..") continue;
      std::string key = folder_key + name;
      struct stat st;
      // Not following symlinks for folders keeps the walk finite; a symlink to a file is
      // an object.
      if (::fstatat(::dirfd(dir), entry->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
        if (errno == ENOENT) continue;  // deleted while listing
        return IOErrorAt("cannot stat", folder + "/" + name, errno);
      }
      if (S_ISDIR(st.st_mode)) {
        std::string sub = key + "/";
        bool may_match = sub.compare(0, std::min(sub.size(), prefix.size()), prefix, 0,
                                     std::min(sub.size(), prefix.size())) == 0;
        if (may_match) subfolders.push_back(sub);
        continue;
      }
      if (S_ISLNK(st.st_mode) && ::fstatat(::dirfd(dir), entry->d_name, &st, 0) != 0) continue;  // dangling
      if (!S_ISREG(st.st_mode)) continue;
      if (key.compare(0, prefix.size(), prefix) != 0) continue;
      out.push_back(ObjectInfo{key, static_cast<uint64_t>(st.st_size), ModificationTimeMs(st)});
    }
    closer.reset();
    for (const auto& sub : subfolders) RETURN_IF_ERROR(ListFolder(sub, prefix, out));
    return Status::OK();
  }

  const std::string root_;  // absolute, without a trailing '/'
  std::atomic<uint64_t> temp_counter_{0};
};

}  // namespace

Result<std::shared_ptr<ObjectStore>> OpenLocalObjectStore(const std::string& root) {
  if (root.empty()) return Status::InvalidArgument("local store root is empty");
  std::error_code ec;
  std::filesystem::path path = std::filesystem::absolute(root, ec);
  if (ec) return Status::IOError("cannot resolve local store root '" + root + "': " + ec.message());
  path = path.lexically_normal();
  std::string text = path.string();
  while (text.size() > 1 && text.back() == '/') text.pop_back();
  std::filesystem::create_directories(text, ec);
  if (ec && !std::filesystem::is_directory(text)) {
    if (std::filesystem::exists(text)) {
      return Status::InvalidArgument("local store root '" + text + "' is not a folder");
    }
    return Status::IOError("cannot create local store root '" + text + "': " + ec.message());
  }
  if (!std::filesystem::is_directory(text)) {
    return Status::InvalidArgument("local store root '" + text + "' is not a folder");
  }
  return std::shared_ptr<ObjectStore>(std::make_shared<LocalObjectStore>(text));
}

bool IsLocalTempFile(std::string_view key) {
  const size_t slash = key.rfind('/');
  return key.substr(slash == std::string_view::npos ? 0 : slash + 1).starts_with(kTempPrefix);
}

Status SyncLocalFiles(const ObjectStore& store, const std::vector<std::string>& keys) {
  std::optional<std::string> root = store.LocalPath("");
  if (!root) return Status::OK();
  std::set<std::string> folders;
  for (const std::string& key : keys) {
    std::optional<std::string> path = store.LocalPath(key);
    if (!path)
      return Status::InvalidArgument("cannot sync '" + key + "' in " + store.Describe() + ": not a file key");
    FileDescriptor file(::open(path->c_str(), O_RDONLY | O_CLOEXEC));
    if (file.get() < 0) return IOErrorAt("cannot open for fsync", *path, errno);
    if (::fsync(file.get()) != 0) return IOErrorAt("cannot fsync", *path, errno);
    for (std::filesystem::path folder = std::filesystem::path(*path).parent_path();
         folder.string().size() >= root->size(); folder = folder.parent_path()) {
      if (!folders.insert(folder.string()).second) break;  // this folder and those above are queued
    }
  }
  for (const std::string& folder : folders) RETURN_IF_ERROR(FsyncPath(folder));
  return Status::OK();
}

}  // namespace basin
