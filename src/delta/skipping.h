// File-level data skipping: which files of a snapshot MAY hold rows for which a predicate
// (delta/predicate.h) is true, judged from each file's partition values and statistics
// (numRecords, minValues, maxValues, nullCount; physical column names under column
// mapping), parsed once per snapshot (Snapshot::stats_index(), delta/file_stats.h).
//
// Understood: column <op> literal (=, <>, <, <=, >, >=, either operand order), IS [NOT]
// NULL, IN (literals), AND, OR, NOT (pushed down to the comparisons), boolean literals and
// bare boolean columns. A literal must have the column's type (any integer type for an
// integer column; decimals of any scale that converts exactly; timestamp for timestamp,
// timestamp_ntz for timestamp_ntz). Anything else (unknown nodes, columns compared with
// columns, missing statistics, NaN, a literal of another type) keeps the file: skipping
// never drops a file that could match.
//
// Thread safety: functions of their arguments; the snapshot's index is built once, by the
// first caller, and shared.
#pragma once

#include <cstddef>
#include <vector>

#include "delta/actions.h"
#include "delta/predicate.h"
#include "delta/snapshot.h"

namespace basin::delta {

// Indexes into snapshot.files of the files that may contain rows for which `predicate`
// is true, in increasing order.
std::vector<size_t> FilesMatching(const Snapshot& snapshot, const Predicate& predicate);

// Whether snapshot.files[file_index] may contain such rows.
bool FileMayMatch(const Snapshot& snapshot, size_t file_index, const Predicate& predicate);

// Whether `file` may contain such rows, judged with the schema, partition columns and
// column mapping of `snapshot`. `file` need not be one of snapshot.files: conflict
// detection asks this of files that concurrent commits added. Parses `file`'s stats on
// each call.
bool FileMayMatch(const Snapshot& snapshot, const AddFile& file, const Predicate& predicate);

}  // namespace basin::delta
