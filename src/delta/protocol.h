// Which Delta protocols Basin can read (PROTOCOL.md "Protocol Evolution", "Table Features").
//
// Thread safety: stateless functions over immutable data.
#pragma once

#include <string>
#include <vector>

#include "common/status.h"
#include "delta/actions.h"

namespace basin::delta {

// Reader features Basin reads correctly. Reader version 3 tables may list only these.
const std::vector<std::string>& SupportedReaderFeatures();

// OK when Basin can read a table with `protocol`. Reader versions 1 and 2 are accepted
// (2 means column mapping); version 3 requires a readerFeatures list whose every entry is
// supported. Otherwise Unsupported naming the version or the feature; `where` names the
// table (and version) for the message.
Status ValidateReadProtocol(const Protocol& protocol, const std::string& where);

}  // namespace basin::delta
