// COPY ... TO STDOUT's options, read as PostgreSQL reads them (FORMAT text | csv, HEADER,
// DELIMITER, NULL, QUOTE, ESCAPE), into the CopyFormat its rows are written in.
//
// Thread safety: functions of their arguments.
#pragma once

#include "basin/copy_format.h"
#include "basin/status.h"
#include "engine/sql_text.h"

namespace basin::sql {

// InvalidArgument naming the option for a value PostgreSQL refuses (a delimiter of two
// characters, QUOTE outside CSV) or an option COPY TO STDOUT does not take;
// NotImplemented for FORMAT binary and DuckDB's file formats.
Result<CopyFormat> ParseCopyFormat(const engine::SqlCopy& copy);

}  // namespace basin::sql
