// The lines of COPY ... TO STDOUT, each sent as one CopyData message: PostgreSQL's text
// format (tab-separated, backslash escapes, \N for NULL) and CSV (RFC 4180 quoting), with
// the options of a basin::CopyFormat.
//
// Thread safety: functions of their arguments.
#pragma once

#include <string>
#include <vector>

#include "basin/copy_format.h"
#include "basin/session.h"

namespace basin::server::pg {

// One row's line, '\n' included. `cells` are in PostgreSQL's text form (ToPgText).
std::string CopyLine(const CopyFormat& format, const Row& cells);

// The HEADER line: the column names, escaped or quoted as values are.
std::string CopyHeaderLine(const CopyFormat& format, const std::vector<std::string>& names);

}  // namespace basin::server::pg
