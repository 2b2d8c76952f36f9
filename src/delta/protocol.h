// Which Delta protocols Basin can read and write (PROTOCOL.md "Protocol Evolution", "Table
// Features").
//
// Thread safety: stateless functions over immutable data.
#pragma once

#include <string>
#include <vector>

#include "basin/status.h"
#include "delta/actions.h"
#include "delta/schema.h"

namespace basin::delta {

// Reader features Basin reads correctly. Reader version 3 tables may list only these.
const std::vector<std::string>& SupportedReaderFeatures();

// OK when Basin can read a table with `protocol`. Reader versions 1 and 2 are accepted
// (2 means column mapping); version 3 requires a readerFeatures list whose every entry is
// supported. Otherwise Unsupported naming the version or the feature; `where` names the
// table (and version) for the message.
Status ValidateReadProtocol(const Protocol& protocol, const std::string& where);

// Writer features Basin writes correctly: commits by Basin keep their requirements.
// `invariants` is among them only in the sense CheckWritable gives it below.
const std::vector<std::string>& SupportedWriterFeatures();

// OK when Basin can commit to a table with `protocol` and `schema` without breaking a
// writer requirement. Writer versions 1 to 5 are accepted; 6 (identity columns) is not;
// version 7 requires a writerFeatures list whose every entry is supported. Basin enforces
// NOT NULL but not the legacy `delta.invariants` column expressions, so writer version 2+
// or the `invariants` feature is writable only while no column (at any depth) carries
// `delta.invariants` metadata. Refused, among others: identityColumns, rowTracking,
// clustering, variantType (and its previews), icebergCompat*, materializePartitionColumns,
// catalogManaged, and unknown features. Otherwise Unsupported naming every refused version,
// feature or column; Corruption for writer version 7 without a writerFeatures list.
// `where` names the table (and version) for the message.
Status CheckWritable(const Protocol& protocol, const StructType& schema, const std::string& where);

}  // namespace basin::delta
