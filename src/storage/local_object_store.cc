// LocalObjectStore: objects are files under a root folder.
//
// Replacing writes (Put, OpenWrite kAtomicReplace) go to a hidden temporary file in the
// destination folder, are fsynced, then moved into place with rename(2); PutIfAbsent uses
// rename(2) with RENAME_NOREPLACE (or link(2) where the file system lacks it), which fails
// with EEXIST when the name is taken, atomically across processes. The
// folder is fsynced after the move so the new name survives a machine crash. kFreshKey
// writes go straight to the final name (O_EXCL), and Close() fsyncs the file and every
// folder from its own up to the root, since the write may have created some of them.
//
// Folders are created as keys need them and removed when a Delete (or an aborted write)
// leaves them empty, up to the root, so that the folder tree looks like an object store's
// key space. A writer that finds its folder removed under it creates it again.
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <utility>

#include "basin/object_store.h"
#include "storage/object_key.h"

namespace basin {

namespace {

constexpr std::string_view kTempPrefix = ".basin-tmp-";
// How often a writer recreates a folder that a concurrent Delete removed as empty before
// giving up: each round needs another Delete to empty the folder in between.
constexpr int kFolderRaceAttempts = 8;

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
  // Gives up ownership without closing.
  int Release() { return std::exchange(fd_, -1); }
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

// Device and inode tell replaced files apart (a replace is a rename of a new file); size and
// nanosecond time also catch a file rewritten in place by someone else, and a new file that
// got a deleted one's inode (StampModificationTime makes the time exact, not a clock tick).
std::string VersionTag(const struct stat& st) {
  char tag[96];
  std::snprintf(tag, sizeof(tag), "%llx-%llx-%llx-%llx.%lx", static_cast<unsigned long long>(st.st_dev),
                static_cast<unsigned long long>(st.st_ino), static_cast<unsigned long long>(st.st_size),
                static_cast<unsigned long long>(st.st_mtim.tv_sec), static_cast<long>(st.st_mtim.tv_nsec));
  return tag;
}

ObjectInfo InfoOf(const std::string& key, const struct stat& st) {
  return ObjectInfo{key, static_cast<uint64_t>(st.st_size), ModificationTimeMs(st), VersionTag(st)};
}

// fsyncs the folder `path`. A folder that is gone has nothing left to make durable: a
// concurrent Delete removed the object just written there, and the folder with it.
Status FsyncPath(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_DIRECTORY);
  if (fd < 0 && errno == ENOENT) return Status::OK();
  if (fd < 0) return IOErrorAt("cannot open folder for fsync", path, errno);
  FileDescriptor dir(fd);
  if (::fsync(dir.get()) != 0) return IOErrorAt("cannot fsync folder", path, errno);
  return Status::OK();
}

// Sets the file's modification time to the exact current time: file systems stamp writes
// with a coarse clock (a few milliseconds), too coarse for version tags.
Status StampModificationTime(int fd, const std::string& path) {
  struct timespec times[2];
  times[0].tv_nsec = UTIME_OMIT;
  if (::clock_gettime(CLOCK_REALTIME, &times[1]) != 0 || ::futimens(fd, times) != 0) {
    return IOErrorAt("cannot set the modification time of", path, errno);
  }
  return Status::OK();
}

// Moves the file at `from` to `to` unless `to` exists (then -1 with errno EEXIST), atomically
// across processes: rename(2) with RENAME_NOREPLACE, one step; where the file system lacks
// it, link(2), which fails the same way, and an unlink of `from`.
int MoveIfAbsent(const std::string& from, const std::string& to) {
  if (::renameat2(AT_FDCWD, from.c_str(), AT_FDCWD, to.c_str(), RENAME_NOREPLACE) == 0) return 0;
  if (errno != EINVAL && errno != ENOSYS && errno != ENOTSUP) return -1;
  if (::link(from.c_str(), to.c_str()) != 0) return -1;
  ::unlink(from.c_str());
  return 0;
}

// Writes all of `data` at the file's position.
Status WriteAll(int fd, const std::string& path, std::string_view data) {
  size_t written = 0;
  while (written < data.size()) {
    ssize_t n = ::write(fd, data.data() + written, data.size() - written);
    if (n < 0) {
      if (errno == EINTR) continue;
      return IOErrorAt("cannot write", path, errno);
    }
    written += static_cast<size_t>(n);
  }
  return Status::OK();
}

std::string ParentOf(const std::string& path) { return path.substr(0, path.rfind('/')); }

// The folders and files of one store root; shared by the store and its open objects.
class LocalTree {
 public:
  explicit LocalTree(std::string root) : root_(std::move(root)) {}

  const std::string& root() const { return root_; }
  std::string PathOf(const std::string& key) const { return root_ + "/" + key; }
  std::string Describe() const { return "local:" + root_; }

  Status NotFound(const std::string& key, const std::string& why = "") const {
    return Status::NotFound("object '" + key + "' not found in " + Describe() + why);
  }

  Status OpenError(const std::string& key, const std::string& path, int err) const {
    if (err == ENOENT || err == ENOTDIR) return NotFound(key);
    return IOErrorAt("cannot open", path, err);
  }

  // Creates the file for `key` at `path` (the key's own path, or a temporary name in its
  // folder) with open(2) `flags`, creating the folders above it first. Folders a concurrent
  // Delete removes in between are created again. Returns the descriptor, or -errno when
  // open(2) itself fails for another reason.
  Result<int> CreateFile(const std::string& key, const std::string& path, int flags) const {
    for (int attempt = 0; attempt < kFolderRaceAttempts; attempt++) {
      RETURN_IF_ERROR(EnsureFolder(key));
      int fd = ::open(path.c_str(), flags | O_CREAT | O_CLOEXEC, 0644);
      if (fd >= 0) return fd;
      if (errno != ENOENT) return -errno;
      // A store opened without create_root gets its folder at the first write.
      if (key.find('/') == std::string::npos) RETURN_IF_ERROR(CreateRoot());
    }
    return IOErrorAt("cannot create (its folder keeps disappearing)", path, ENOENT);
  }

  // Removes the folders above `key` that are empty, deepest first, up to (not including)
  // the root. Best effort: a folder that is not empty, or gone, ends the walk.
  void RemoveEmptyFolders(const std::string& key) const {
    for (size_t slash = key.rfind('/'); slash != std::string::npos && slash > 0;
         slash = key.rfind('/', slash - 1)) {
      if (::rmdir(PathOf(key.substr(0, slash)).c_str()) != 0) break;
    }
  }

  // fsyncs every folder from the one holding `key` up to the root, so that every name on
  // the way to the file survives a crash.
  Status FsyncFoldersUpToRoot(const std::string& key) const {
    for (size_t slash = key.rfind('/'); slash != std::string::npos; slash = key.rfind('/', slash - 1)) {
      RETURN_IF_ERROR(FsyncPath(PathOf(key.substr(0, slash))));
      if (slash == 0) break;
    }
    return FsyncPath(root_);
  }

 private:
  // Creates the folders above `key` (and the root, when it is missing), fsyncing each
  // parent that gains a new folder so the object's path survives a crash with the object.
  // A parent that vanishes on the way (a concurrent delete removed it as empty: a DROP
  // racing a CREATE of the same name) sends it back to the top, a bounded number of times.
  Status EnsureFolder(const std::string& key) const {
    int restarts = 0;
    size_t slash = key.find('/');
    while (slash != std::string::npos) {
      std::string folder = PathOf(key.substr(0, slash));
      if (::mkdir(folder.c_str(), 0755) == 0) {
        RETURN_IF_ERROR(FsyncPath(ParentOf(folder)));
      } else if (errno == ENOENT && restarts++ < kFolderRaceAttempts) {
        if (key.find('/') == slash) RETURN_IF_ERROR(CreateRoot());
        slash = key.find('/');
        continue;  // from the top, now that the root exists
      } else if (errno != EEXIST) {
        return IOErrorAt("cannot create folder", folder, errno);
      }
      slash = key.find('/', slash + 1);
    }
    return Status::OK();
  }

  Status CreateRoot() const {
    std::error_code ec;
    std::filesystem::create_directories(root_, ec);
    if (ec) return Status::IOError("cannot create local store root '" + root_ + "': " + ec.message());
    return FsyncPath(ParentOf(root_));
  }

  const std::string root_;  // absolute, without a trailing '/'
};

class LocalReadable final : public ReadableObject {
 public:
  LocalReadable(std::shared_ptr<const LocalTree> tree, std::string key, int fd, uint64_t size,
                std::optional<int64_t> modification_time_ms, std::string version_tag)
      : tree_(std::move(tree)),
        key_(std::move(key)),
        file_(fd),
        size_(size),
        modification_time_ms_(modification_time_ms),
        version_tag_(std::move(version_tag)) {}

  uint64_t size_bytes() const override { return size_; }
  std::optional<int64_t> modification_time_ms() const override { return modification_time_ms_; }
  std::string version_tag() const override { return version_tag_; }

  Status ReadAt(uint64_t offset, uint64_t length, char* out) override {
    if (!RangeFits(offset, length, size_))
      return ShortObjectError(key_, tree_->Describe(), offset, length, size_);
    uint64_t done = 0;
    while (done < length) {
      ssize_t n = ::pread(file_.get(), out + done, static_cast<size_t>(length - done),
                          static_cast<off_t>(offset + done));
      if (n < 0) {
        if (errno == EINTR) continue;
        // Opened with a size from a listing, without a stat: the key named a folder.
        if (errno == EISDIR) return tree_->NotFound(key_, " (it is a folder)");
        return IOErrorAt("cannot read", tree_->PathOf(key_), errno);
      }
      // The file is shorter than the size it was opened with (a wrong size was given).
      if (n == 0) return ShortObjectError(key_, tree_->Describe(), offset, length, offset + done);
      done += static_cast<uint64_t>(n);
    }
    return Status::OK();
  }

 private:
  const std::shared_ptr<const LocalTree> tree_;
  const std::string key_;
  FileDescriptor file_;
  const uint64_t size_;
  const std::optional<int64_t> modification_time_ms_;
  const std::string version_tag_;
};

class LocalWritable final : public WritableObject {
 public:
  // `path` is where the bytes go: the key's own path (kFreshKey) or a temporary file in
  // its folder, renamed onto the key's path by Close (kAtomicReplace).
  LocalWritable(std::shared_ptr<const LocalTree> tree, std::string key, WriteMode mode, std::string path,
                int fd)
      : tree_(std::move(tree)), key_(std::move(key)), mode_(mode), path_(std::move(path)), file_(fd) {}

  ~LocalWritable() override {
    if (!done_) Abort();
  }

  Status Append(std::string_view data) override {
    if (done_) return Finished();
    Status st = WriteAll(file_.get(), path_, data);
    if (!st.ok()) {
      Abort();
      return st;
    }
    size_ += data.size();
    return Status::OK();
  }

  Status Close() override {
    if (done_) return Finished();
    Status stamped = StampModificationTime(file_.get(), path_);
    if (!stamped.ok()) {
      Abort();
      return stamped;
    }
    if (::fsync(file_.get()) != 0 || file_.Close() != 0) {
      Status st = IOErrorAt("cannot fsync", path_, errno);
      Abort();
      return st;
    }
    const std::string final_path = tree_->PathOf(key_);
    if (mode_ == WriteMode::kAtomicReplace) {
      if (::rename(path_.c_str(), final_path.c_str()) != 0) {
        Status st = IOErrorAt("cannot rename temporary file onto", final_path, errno);
        Abort();
        return st;
      }
      done_ = true;
      return FsyncPath(ParentOf(final_path));
    }
    done_ = true;
    return tree_->FsyncFoldersUpToRoot(key_);
  }

  void Abort() override {
    if (done_) return;
    done_ = true;
    if (file_.get() >= 0) file_.Close();
    ::unlink(path_.c_str());
    tree_->RemoveEmptyFolders(key_);
  }

  uint64_t size_bytes() const override { return size_; }

 private:
  Status Finished() const { return FinishedWriterError(key_, tree_->Describe()); }

  const std::shared_ptr<const LocalTree> tree_;
  const std::string key_;
  const WriteMode mode_;
  const std::string path_;
  FileDescriptor file_;
  uint64_t size_ = 0;
  bool done_ = false;
};

class LocalObjectStore final : public ObjectStore {
 public:
  explicit LocalObjectStore(std::string root) : tree_(std::make_shared<LocalTree>(std::move(root))) {}

  Result<std::unique_ptr<ReadableObject>> OpenRead(const std::string& key,
                                                   const ObjectReadOptions& options = {}) override {
    RETURN_IF_ERROR(ValidateObjectKey(key));
    const std::string path = tree_->PathOf(key);
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return tree_->OpenError(key, path, errno);
    FileDescriptor file(fd);
    uint64_t size = 0;
    std::optional<int64_t> modification_time_ms = options.modification_time_ms;
    std::string version_tag = options.version_tag.value_or("");
    if (options.size_bytes) {
      size = *options.size_bytes;
    } else {
      struct stat st;
      if (::fstat(file.get(), &st) != 0) return IOErrorAt("cannot stat", path, errno);
      if (!S_ISREG(st.st_mode)) return tree_->NotFound(key, " (it is a folder)");
      size = static_cast<uint64_t>(st.st_size);
      modification_time_ms = ModificationTimeMs(st);
      version_tag = VersionTag(st);
    }
    return std::unique_ptr<ReadableObject>(std::make_unique<LocalReadable>(
        tree_, key, file.Release(), size, modification_time_ms, std::move(version_tag)));
  }

  Result<std::unique_ptr<WritableObject>> OpenWrite(const std::string& key,
                                                    const ObjectWriteOptions& options = {}) override {
    RETURN_IF_ERROR(ValidateObjectKey(key));
    std::string path = tree_->PathOf(key);
    int fd = -1;
    if (options.mode == WriteMode::kFreshKey) {
      ASSIGN_OR_RETURN(fd, tree_->CreateFile(key, path, O_WRONLY | O_EXCL));
      if (fd == -EEXIST) return Status::AlreadyExists("object '" + key + "' already exists in " + Describe());
      if (fd < 0) return IOErrorAt("cannot create", path, -fd);
    } else {
      ASSIGN_OR_RETURN(std::tie(path, fd), CreateTempFile(key));
    }
    return std::unique_ptr<WritableObject>(
        std::make_unique<LocalWritable>(tree_, key, options.mode, std::move(path), fd));
  }

  Result<ObjectInfo> Head(const std::string& key) override {
    RETURN_IF_ERROR(ValidateObjectKey(key));
    std::string path = tree_->PathOf(key);
    struct stat st;
    if (::stat(path.c_str(), &st) != 0) return tree_->OpenError(key, path, errno);
    if (!S_ISREG(st.st_mode)) return tree_->NotFound(key, " (it is a folder)");
    return InfoOf(key, st);
  }

  Status PutIfAbsent(const std::string& key, const std::string& data) override {
    RETURN_IF_ERROR(ValidateObjectKey(key));
    std::string path = tree_->PathOf(key);
    ASSIGN_OR_RETURN(auto temp, CreateTempFile(key));
    const std::string& temp_path = temp.first;
    FileDescriptor file(temp.second);
    Status written = WriteAll(file.get(), temp_path, data);
    if (written.ok()) written = StampModificationTime(file.get(), temp_path);
    if (written.ok() && (::fsync(file.get()) != 0 || file.Close() != 0)) {
      written = IOErrorAt("cannot fsync", temp_path, errno);
    }
    int rc = written.ok() ? MoveIfAbsent(temp_path, path) : -1;
    int err = errno;
    if (rc != 0) ::unlink(temp_path.c_str());
    if (rc != 0) tree_->RemoveEmptyFolders(key);
    RETURN_IF_ERROR(written);
    if (rc != 0) {
      if (err == EEXIST) return Status::AlreadyExists("object '" + key + "' already exists in " + Describe());
      return IOErrorAt("cannot move temporary file to", path, err);
    }
    return FsyncPath(ParentOf(path));
  }

  Status Delete(const std::string& key) override {
    RETURN_IF_ERROR(ValidateObjectKey(key));
    std::string path = tree_->PathOf(key);
    if (::unlink(path.c_str()) != 0) {
      int err = errno;
      // A folder is not an object, so deleting one by its key finds nothing.
      if (err == ENOENT || err == ENOTDIR || err == EISDIR) return Status::OK();
      return IOErrorAt("cannot delete", path, err);
    }
    RETURN_IF_ERROR(FsyncPath(ParentOf(path)));
    tree_->RemoveEmptyFolders(key);
    return Status::OK();
  }

  Result<std::vector<ObjectInfo>> List(const std::string& prefix) override {
    RETURN_IF_ERROR(ValidateListPrefix(prefix));
    std::vector<ObjectInfo> out;
    RETURN_IF_ERROR(ListFolder(FolderOf(prefix), prefix, SIZE_MAX, out));
    std::sort(out.begin(), out.end(), [](const ObjectInfo& a, const ObjectInfo& b) { return a.key < b.key; });
    return out;
  }

  Result<bool> HasObjectsWithPrefix(const std::string& prefix) override {
    RETURN_IF_ERROR(ValidateListPrefix(prefix));
    std::vector<ObjectInfo> out;
    RETURN_IF_ERROR(ListFolder(FolderOf(prefix), prefix, 1, out));
    return !out.empty();
  }

  bool CheapRandomReads() const override { return true; }

  std::optional<std::string> LocalPath(const std::string& key) const override {
    if (key.empty()) return tree_->root();
    if (!ValidateObjectKey(key).ok()) return std::nullopt;
    return tree_->PathOf(key);
  }

  std::string Describe() const override { return tree_->Describe(); }

 private:
  // The deepest folder a List prefix names completely; the rest of it filters names.
  static std::string FolderOf(const std::string& prefix) {
    size_t slash = prefix.rfind('/');
    return slash == std::string::npos ? "" : prefix.substr(0, slash + 1);
  }

  // Creates a new hidden file in the folder of `key`; returns its path and descriptor.
  Result<std::pair<std::string, int>> CreateTempFile(const std::string& key) {
    const size_t slash = key.rfind('/');
    const std::string folder =
        slash == std::string::npos ? tree_->root() : tree_->PathOf(key.substr(0, slash));
    std::string temp;
    // A name left behind by a crashed process may collide; the next counter value won't.
    for (int attempt = 0; attempt < 100; attempt++) {
      temp = folder + "/" + std::string(kTempPrefix) + std::to_string(::getpid()) + "-" +
             std::to_string(temp_counter_.fetch_add(1, std::memory_order_relaxed));
      ASSIGN_OR_RETURN(int fd, tree_->CreateFile(key, temp, O_WRONLY | O_EXCL));
      if (fd >= 0) return std::make_pair(temp, fd);
      if (fd != -EEXIST) return IOErrorAt("cannot create temporary file", temp, -fd);
    }
    return IOErrorAt("cannot create temporary file", temp, EEXIST);
  }

  // Appends objects under `folder_key` (a key ending in '/', or "" for the root) whose keys
  // start with `prefix`, descending only into folders that can hold such keys, until `out`
  // holds `limit` objects.
  Status ListFolder(const std::string& folder_key, const std::string& prefix, size_t limit,
                    std::vector<ObjectInfo>& out) const {
    std::string folder =
        folder_key.empty() ? tree_->root() : tree_->PathOf(folder_key.substr(0, folder_key.size() - 1));
    DIR* dir = ::opendir(folder.c_str());
    if (dir == nullptr) {
      // A folder that is missing (or a file) holds no objects.
      if (errno == ENOENT || errno == ENOTDIR) return Status::OK();
      return IOErrorAt("cannot list folder", folder, errno);
    }
    std::unique_ptr<DIR, int (*)(DIR*)> closer(dir, ::closedir);
    std::vector<std::string> subfolders;
    while (out.size() < limit) {
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
        size_t common = std::min(sub.size(), prefix.size());
        if (sub.compare(0, common, prefix, 0, common) == 0) subfolders.push_back(sub);
        continue;
      }
      if (S_ISLNK(st.st_mode) && ::fstatat(::dirfd(dir), entry->d_name, &st, 0) != 0) continue;  // dangling
      if (!S_ISREG(st.st_mode)) continue;
      if (key.compare(0, prefix.size(), prefix) != 0) continue;
      out.push_back(InfoOf(key, st));
    }
    closer.reset();
    for (const auto& sub : subfolders) {
      if (out.size() >= limit) break;
      RETURN_IF_ERROR(ListFolder(sub, prefix, limit, out));
    }
    return Status::OK();
  }

  const std::shared_ptr<const LocalTree> tree_;
  std::atomic<uint64_t> temp_counter_{0};
};

}  // namespace

Result<std::string> AbsoluteLocalPath(const std::string& folder) {
  std::error_code ec;
  std::filesystem::path path = std::filesystem::absolute(folder.empty() ? "." : folder, ec);
  if (ec) return Status::IOError("cannot resolve local path '" + folder + "': " + ec.message());
  std::string text = path.lexically_normal().string();
  while (text.size() > 1 && text.back() == '/') text.pop_back();
  return text;
}

Result<std::shared_ptr<ObjectStore>> OpenLocalObjectStore(const std::string& root,
                                                          const LocalStoreOptions& options) {
  if (root.empty()) return Status::InvalidArgument("local store root is empty");
  ASSIGN_OR_RETURN(std::string text, AbsoluteLocalPath(root));
  std::error_code ec;
  if (options.create_root) {
    std::filesystem::create_directories(text, ec);
    if (ec && !std::filesystem::is_directory(text)) {
      if (std::filesystem::exists(text)) {
        return Status::InvalidArgument("local store root '" + text + "' is not a folder");
      }
      return Status::IOError("cannot create local store root '" + text + "': " + ec.message());
    }
  }
  if (std::filesystem::exists(text, ec) && !std::filesystem::is_directory(text, ec)) {
    return Status::InvalidArgument("local store root '" + text + "' is not a folder");
  }
  return std::shared_ptr<ObjectStore>(std::make_shared<LocalObjectStore>(text));
}

bool IsLocalTempFile(std::string_view key) {
  const size_t slash = key.rfind('/');
  return key.substr(slash == std::string_view::npos ? 0 : slash + 1).starts_with(kTempPrefix);
}

}  // namespace basin
