// Object key rules shared by every ObjectStore backend, so that a key valid in memory is
// valid on disk too and no backend lets a key escape its root; and the errors the backends
// share, so that they say the same things.
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "basin/status.h"

namespace basin {

// A key is non-empty '/'-separated components, none empty, "." or "..", with no NUL byte,
// no leading '/' and no trailing '/'. InvalidArgument (naming the key) otherwise.
Status ValidateObjectKey(std::string_view key);

// The components of a key or a glob pattern, split at '/' (empty components dropped).
// They view `key`.
std::vector<std::string_view> SplitKey(std::string_view key);

// A List() prefix: empty, or a key, or a key followed by '/', or a key whose last
// component is cut short ("_delta_log/0000"). InvalidArgument otherwise.
Status ValidateListPrefix(std::string_view prefix);

// Whether bytes [offset, offset + length) lie within an object of `size` bytes (no overflow).
inline bool RangeFits(uint64_t offset, uint64_t length, uint64_t size) {
  return offset <= size && length <= size - offset;
}

// Corruption naming the object and its store: it has `size` bytes, too few for the range.
Status ShortObjectError(std::string_view key, std::string_view store, uint64_t offset, uint64_t length,
                        uint64_t size);

// Internal: a WritableObject used after Close() or Abort().
Status FinishedWriterError(std::string_view key, std::string_view store);

}  // namespace basin
