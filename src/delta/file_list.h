// FileList / TombstoneList: a snapshot's live files and its tombstones, as immutable chunks
// shared between snapshots.
//
// A snapshot brought forward by a commit (UpdateSnapshot) holds the same files as the one
// it came from, less the few the commit removed, plus the few it added. Copying every
// AddFile (its path, stats text and maps: kilobytes each) made that cost what the table
// holds, not what the commit changed. Here the files live in chunks of at most
// kMaxChunkFiles, shared by every list that holds them unchanged: Updated() copies only
// the chunks holding a removed or replaced file, appends the new files as a chunk of their
// own, and merges small chunks at the tail (a binary counter: a file is copied O(log n)
// times over its life, and a list holds O(n / kMaxChunkFiles + log n) chunks). Each chunk
// keeps its files' replay-key hashes sorted, so finding a commit's keys costs a binary
// search per chunk, not a pass over the table.
//
// Order is not meaningful (a snapshot's files are "in no particular order") but is stable:
// Updated() keeps the surviving files in their order, followed by the new ones.
//
// Thread safety: immutable once built; copies share chunks and may be used from any thread.
#pragma once

#include <algorithm>
#include <cassert>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <iterator>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "delta/actions.h"

namespace basin::delta {

// The hash of a file's replay key (AddFile::ReplayKey()), without building the key when the
// path is its own decoded form.
size_t ReplayKeyHash(const std::string& path, const std::optional<DeletionVectorDescriptor>& dv);

// A replay key to remove from a list, with its hash.
struct KeyToRemove {
  size_t hash = 0;
  std::string key;
};

template <typename File>  // AddFile or RemoveFile
class ChunkedFiles {
  struct Chunk;

 public:
  static constexpr size_t kMaxChunkFiles = 4096;

  ChunkedFiles() = default;
  // The files of `files`, in order (implicit: replay and tests build lists from vectors).
  ChunkedFiles(std::vector<File> files) {  // NOLINT(google-explicit-constructor)
    AppendChunks(std::move(files));
  }
  ChunkedFiles(std::initializer_list<File> files) : ChunkedFiles(std::vector<File>(files)) {}

  // Files with their ReplayKeyHash, as replay collects them.
  struct HashedFiles {
    std::vector<File> files;
    std::vector<size_t> hashes;  // hashes[i]: of files[i]
  };
  // The files of `parts` in order, each part (of at most kMaxChunkFiles) kept as a chunk:
  // no file is moved and no hash computed again. Empty parts are skipped.
  static ChunkedFiles FromHashed(std::vector<HashedFiles> parts) {
    ChunkedFiles out;
    for (HashedFiles& part : parts) {
      assert(part.files.size() <= kMaxChunkFiles && part.files.size() == part.hashes.size());
      if (!part.files.empty()) out.Push(std::make_shared<const Chunk>(std::move(part.files), part.hashes));
    }
    return out;
  }

  size_t size() const { return ends_.empty() ? 0 : ends_.back(); }
  bool empty() const { return size() == 0; }
  // REQUIRES: i < size(). O(log chunks).
  const File& operator[](size_t i) const {
    assert(i < size());
    const size_t c = static_cast<size_t>(std::upper_bound(ends_.begin(), ends_.end(), i) - ends_.begin());
    return chunks_[c]->files[i - (c == 0 ? 0 : ends_[c - 1])];
  }
  const File& front() const { return (*this)[0]; }
  size_t num_chunks() const { return chunks_.size(); }

  class const_iterator {
   public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = File;
    using difference_type = std::ptrdiff_t;
    using pointer = const File*;
    using reference = const File&;

    const_iterator() = default;
    reference operator*() const { return (*chunks_)[chunk_]->files[position_]; }
    pointer operator->() const { return &**this; }
    const_iterator& operator++() {
      if (++position_ == (*chunks_)[chunk_]->files.size()) {
        chunk_++;
        position_ = 0;
      }
      return *this;
    }
    const_iterator operator++(int) {
      const_iterator before = *this;
      ++*this;
      return before;
    }
    bool operator==(const const_iterator& other) const {
      return chunk_ == other.chunk_ && position_ == other.position_;
    }

   private:
    friend class ChunkedFiles;
    using Chunks = std::vector<std::shared_ptr<const Chunk>>;
    const_iterator(const Chunks* chunks, size_t chunk) : chunks_(chunks), chunk_(chunk) {}
    const Chunks* chunks_ = nullptr;
    size_t chunk_ = 0;
    size_t position_ = 0;
  };
  const_iterator begin() const { return const_iterator(&chunks_, 0); }
  const_iterator end() const { return const_iterator(&chunks_, chunks_.size()); }

  // Appends one file (lists are values: copies made before are not changed).
  void push_back(File file) {
    std::vector<File> one;
    one.push_back(std::move(file));
    AppendChunks(std::move(one));
  }
  void clear() {
    chunks_.clear();
    ends_.clear();
  }
  std::vector<File> ToVector() const { return std::vector<File>(begin(), end()); }

  // This list without the files whose replay keys are in `removed`, followed by `added`.
  // Chunks that hold none of the keys are shared with this list, not copied. `kept`, when
  // given, receives the indexes (into this list, increasing) of the files the result
  // starts with; the rest of the result is `added`.
  ChunkedFiles Updated(const std::vector<KeyToRemove>& removed, std::vector<File> added,
                       std::vector<uint32_t>* kept = nullptr) const {
    ChunkedFiles out;
    out.chunks_.reserve(chunks_.size() + 1 + added.size() / kMaxChunkFiles);
    if (kept != nullptr) kept->reserve(size());
    std::vector<uint32_t> drop;  // positions in the current chunk
    for (size_t c = 0; c < chunks_.size(); c++) {
      const Chunk& chunk = *chunks_[c];
      const size_t start = c == 0 ? 0 : ends_[c - 1];
      drop.clear();
      for (const KeyToRemove& key : removed) chunk.Find(key, drop);
      if (drop.empty()) {
        out.Push(chunks_[c]);
        if (kept != nullptr) {
          for (size_t i = 0; i < chunk.files.size(); i++) kept->push_back(static_cast<uint32_t>(start + i));
        }
        continue;
      }
      std::sort(drop.begin(), drop.end());
      std::vector<File> survivors;
      survivors.reserve(chunk.files.size() - std::min(drop.size(), chunk.files.size()));
      for (size_t i = 0, d = 0; i < chunk.files.size(); i++) {
        while (d < drop.size() && drop[d] < i) d++;
        if (d < drop.size() && drop[d] == i) continue;
        survivors.push_back(chunk.files[i]);
        if (kept != nullptr) kept->push_back(static_cast<uint32_t>(start + i));
      }
      if (!survivors.empty()) out.Push(std::make_shared<const Chunk>(std::move(survivors)));
    }
    out.AppendChunks(std::move(added));
    return out;
  }

 private:
  struct Chunk {
    explicit Chunk(std::vector<File> f) : files(std::move(f)) {
      by_hash.reserve(files.size());
      for (size_t i = 0; i < files.size(); i++) {
        by_hash.emplace_back(ReplayKeyHash(files[i].path, files[i].deletion_vector),
                             static_cast<uint32_t>(i));
      }
      std::sort(by_hash.begin(), by_hash.end());
    }
    Chunk(std::vector<File> f, const std::vector<size_t>& hashes) : files(std::move(f)) {
      by_hash.reserve(files.size());
      for (size_t i = 0; i < files.size(); i++) by_hash.emplace_back(hashes[i], static_cast<uint32_t>(i));
      std::sort(by_hash.begin(), by_hash.end());
    }

    // Appends to `out` the positions of the files whose replay key is `key`.
    void Find(const KeyToRemove& key, std::vector<uint32_t>& out) const {
      auto it = std::lower_bound(by_hash.begin(), by_hash.end(), std::pair<size_t, uint32_t>(key.hash, 0));
      for (; it != by_hash.end() && it->first == key.hash; ++it) {
        if (files[it->second].ReplayKey() == key.key) out.push_back(it->second);
      }
    }

    std::vector<File> files;
    std::vector<std::pair<size_t, uint32_t>> by_hash;  // (replay key hash, position), sorted
  };

  void Push(std::shared_ptr<const Chunk> chunk) {
    ends_.push_back(size() + chunk->files.size());
    chunks_.push_back(std::move(chunk));
  }

  // Appends `files` in chunks of at most kMaxChunkFiles, then merges tail chunks while the
  // one before the last is at most twice the last and both fit in one chunk.
  void AppendChunks(std::vector<File> files) {
    if (files.empty()) return;
    if (files.size() <= kMaxChunkFiles) {
      Push(std::make_shared<const Chunk>(std::move(files)));
    } else {
      for (size_t begin = 0; begin < files.size(); begin += kMaxChunkFiles) {
        const size_t end = std::min(files.size(), begin + kMaxChunkFiles);
        std::vector<File> part(std::make_move_iterator(files.begin() + static_cast<std::ptrdiff_t>(begin)),
                               std::make_move_iterator(files.begin() + static_cast<std::ptrdiff_t>(end)));
        Push(std::make_shared<const Chunk>(std::move(part)));
      }
    }
    while (chunks_.size() >= 2) {
      const size_t last = chunks_[chunks_.size() - 1]->files.size();
      const size_t before = chunks_[chunks_.size() - 2]->files.size();
      if (before > 2 * last || before + last > kMaxChunkFiles) break;
      std::vector<File> merged;
      merged.reserve(before + last);
      for (size_t c = chunks_.size() - 2; c < chunks_.size(); c++) {
        const std::vector<File>& from = chunks_[c]->files;
        merged.insert(merged.end(), from.begin(), from.end());
      }
      chunks_.resize(chunks_.size() - 2);
      ends_.resize(ends_.size() - 2);
      Push(std::make_shared<const Chunk>(std::move(merged)));
    }
  }

  std::vector<std::shared_ptr<const Chunk>> chunks_;
  std::vector<size_t> ends_;  // ends_[c]: files in chunks 0..c
};

using FileList = ChunkedFiles<AddFile>;
using TombstoneList = ChunkedFiles<RemoveFile>;

}  // namespace basin::delta
