// Lines of rows in PostgreSQL's text format (tab-separated, backslash escapes, \N for NULL)
// and CSV (RFC 4180 quoting), with the options of a basin::CopyFormat: COPY ... TO STDOUT's
// CopyData messages and the HTTP API's CSV results.
//
// Thread safety: functions of their arguments.
#pragma once

#include <string>
#include <vector>

#include "basin/copy_format.h"
#include "basin/session.h"

namespace basin::server {

// One row's line, '\n' included. `cells` are in PostgreSQL's text form (ToPgText).
std::string CopyLine(const CopyFormat& format, const Row& cells);

// The HEADER line: the column names, escaped or quoted as values are.
std::string CopyHeaderLine(const CopyFormat& format, const std::vector<std::string>& names);

}  // namespace basin::server
