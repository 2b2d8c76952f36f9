// Data file paths as the Delta log records them: URIs, percent-encoded, relative to the
// table root or absolute ("file:/data/t/part-0.parquet", "s3://bucket/t/part-0.parquet").
//
// Thread safety: stateless functions.
#pragma once

#include <string>
#include <string_view>

namespace basin::delta {

// Decodes %XX escapes; a '%' not followed by two hex digits is kept as is.
std::string PercentDecode(std::string_view text);

// The path to open for a log path: percent-decoded; "file:" URIs become local absolute
// paths ("file:///a/b%20c" -> "/a/b c"); other absolute URIs keep their scheme.
// Relative paths stay relative to the table root.
std::string DecodeDataPath(const std::string& log_path);

// True when a decoded path does not lie relative to the table root ("/x", "s3://b/x").
bool IsAbsoluteDataPath(const std::string& decoded_path);

}  // namespace basin::delta
