// Names taken from an HTTP API path ({schema}, {name}): checked to be plain SQL identifiers
// before they reach SQL, where they are always quoted, so that no path text is ever spliced
// into a statement or reaches the file system.
//
// Thread safety: pure functions.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "basin/status.h"

namespace basin::server::http {

// `schema.table` or `table`.
struct TableName {
  std::optional<std::string> schema;
  std::string table;

  // The name as SQL: each part quoted as an identifier.
  std::string Sql() const;
};

// InvalidArgument naming `what` unless `text` is 1 to 128 letters, digits and _, not
// starting with a digit.
Status CheckIdentifier(std::string_view text, std::string_view what);
// `schema.table` or `table`, each part an identifier; InvalidArgument otherwise (`..`, `/`,
// encoded slashes once decoded, quotes, empty parts).
Result<TableName> ParseTableName(std::string_view text);

}  // namespace basin::server::http
