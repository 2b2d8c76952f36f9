// Table features: which protocol a table's properties and schema need, the table
// properties Basin understands, and column mapping for new columns
// (PROTOCOL.md "Table Features", "Column Mapping").
//
// Thread safety: functions of their arguments.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "basin/status.h"
#include "delta/actions.h"
#include "delta/schema.h"

namespace basin::commands {

// InvalidArgument naming the property for an unknown `delta.*` key or a value it cannot
// take (delta.enableDeletionVectors=maybe, delta.columnMapping.mode=foo,
// delta.checkpointInterval=0, ...). Keys outside `delta.` are the user's and pass.
// Properties Basin understands: delta.enableDeletionVectors, delta.enableChangeDataFeed,
// delta.columnMapping.mode, delta.appendOnly, delta.enableInCommitTimestamps,
// delta.checkpointInterval, delta.logRetentionDuration,
// delta.deletedFileRetentionDuration, delta.checkpointPolicy,
// delta.dataSkippingNumIndexedCols, delta.dataSkippingStatsColumns, delta.targetFileSize,
// delta.enableTypeWidening,
// delta.enableExpiredLogCleanup, delta.isolationLevel (Serializable or WriteSerializable,
// as Delta spells them), delta.constraints.<name> (CHECK constraints), and the
// delta.feature.<name>=supported form.
Status ValidateTableProperties(const std::map<std::string, std::string>& properties);

// The one parser of each numeric table property, called both by ValidateTableProperties and
// by the commands that use the value, so a value accepted when set is one they understand.
//
// A positive size in bytes: a byte count, or a number with a unit as Delta writers accept
// it ("134217728", "64mb", "1g", "512 KB"; b, k, m, g, t with an optional b,
// case-insensitive, powers of 1024); nullopt for anything else.
std::optional<int64_t> ParseByteSize(std::string_view size);
// delta.targetFileSize in bytes (ParseByteSize); 128 MiB when unset. InvalidArgument naming
// the property and value otherwise.
Result<int64_t> TargetFileSizeBytes(const delta::Metadata& metadata);
// delta.dataSkippingNumIndexedCols: an integer of at least -1 (-1: every column); 32 when
// unset. InvalidArgument naming the property and value otherwise.
Result<int64_t> DataSkippingNumIndexedCols(const delta::Metadata& metadata);

// The lowest protocol that `metadata`'s configuration and `schema` need: (1,2) for a
// plain table, legacy versions while legacy features suffice (appendOnly/invariants 2,
// CHECK constraints 3, change data feed and generated columns 4, column mapping 2/5),
// reader 3 / writer 7 with explicit feature lists once a table feature is needed
// (deletion vectors, timestampNtz, in-commit timestamps, v2 checkpoints, type widening,
// vacuumProtocolCheck). Never lower than `current`: a protocol is only ever upgraded, and
// features already listed stay listed.
Result<delta::Protocol> RequiredProtocol(const delta::Metadata& metadata, const delta::StructType& schema,
                                         const std::optional<delta::Protocol>& current = std::nullopt);

// When `configuration` has delta.columnMapping.mode name or id: gives every field (nested
// ones too) that has none a column mapping id and a physical name ("col-<uuid>"), and
// advances delta.columnMapping.maxColumnId. No change otherwise.
void AssignColumnMapping(delta::StructType& schema, std::map<std::string, std::string>& configuration);

// Physical names for fields that get column mapping: new unique ones ("col-<uuid>", for new
// columns), or the current names (when column mapping is enabled on an existing table,
// whose data files hold the columns under those names, as Delta does).
enum class PhysicalNames { kNew, kSameAsName };
void AssignColumnMapping(delta::StructType& schema, std::map<std::string, std::string>& configuration,
                         PhysicalNames physical_names);

// Whether a boolean table property is "true" (case-insensitive); `fallback` when unset.
bool TablePropertyIsTrue(const delta::Metadata& metadata, const std::string& key, bool fallback = false);

}  // namespace basin::commands
