// Object key rules shared by every ObjectStore backend, so that a key valid in memory is
// valid on disk too and no backend lets a key escape its root.
//
// Thread safety: pure functions.
#pragma once

#include <string>
#include <string_view>

#include "common/status.h"

namespace basin {

// A key is non-empty '/'-separated components, none empty, "." or "..", with no NUL byte,
// no leading '/' and no trailing '/'. InvalidArgument (naming the key) otherwise.
Status ValidateObjectKey(std::string_view key);

// A List() prefix: empty, or a key, or a key followed by '/', or a key whose last
// component is cut short ("_delta_log/0000"). InvalidArgument otherwise.
Status ValidateListPrefix(std::string_view prefix);

}  // namespace basin
