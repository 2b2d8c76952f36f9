// The statistics and partition values of a snapshot's files in a compact typed form, for
// data skipping (delta/skipping.h).
//
// The log holds per-file statistics as JSON text (PROTOCOL.md "Per-file Statistics":
// numRecords, minValues, maxValues, nullCount, keyed by physical column names under column
// mapping) and partition values as text. FileStatsIndex parses both once into columns of
// fixed-width values: per file and column a min, a max and a null count (25 bytes), strings
// in one buffer per column. Values are typed by the column's Delta type:
//   integers, booleans, dates       int64 (booleans 0/1, dates in days)
//   timestamp, timestamp_ntz        int64 microseconds
//   float, double                   double (float statistics rounded to float first)
//   decimal(p,s)                    the unscaled value at scale s, exact
//   string                          the bytes
//   binary, arrays, maps, variant   null counts only
// Anything unreadable (a value of the wrong type, NaN, a decimal with more digits than
// its scale, malformed JSON) is left unknown rather than guessed, so that skipping keeps
// the file. Two bounds are widened on purpose: a string max of 32 characters or more may
// be a truncated prefix and is dropped, and a timestamp max gains 1 ms because Spark
// writes timestamp statistics truncated to milliseconds.
//
// Thread safety: immutable after Build; share freely.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "delta/actions.h"
#include "delta/file_list.h"
#include "delta/predicate.h"
#include "delta/schema.h"

namespace basin::delta {

// How a column's values compare.
enum class StatsFamily : uint8_t {
  kNone,       // null counts only
  kBoolean,    // int64 0/1
  kInteger,    // byte, short, integer, long: int64
  kFloat,      // float, double: double
  kDecimal,    // Int128 unscaled at the column's scale
  kString,     // bytes
  kDate,       // int64 days
  kTimestamp,  // int64 microseconds (timestamp and timestamp_ntz)
};

StatsFamily StatsFamilyOf(const DataType& type);

// One column's bound, typed by the column's family (only the matching member is set).
struct StatsValue {
  Int128 integer = 0;      // kBoolean, kInteger, kDecimal, kDate, kTimestamp
  double real = 0;         // kFloat
  std::string_view bytes;  // kString: views the index's (or the literal's) memory
};

// What one file says about one column.
struct ColumnSummary {
  StatsFamily family = StatsFamily::kNone;
  std::optional<StatsValue> min, max;  // max is unset too where it may have been truncated
  std::optional<int64_t> null_count;
  std::optional<int64_t> num_records;

  bool AllNull() const { return null_count && num_records && *null_count == *num_records; }
};

// The columns statistics may describe, derived from a schema once and shared by the
// indexes of one snapshot (file_stats.cc).
class StatsLayout;

class FileStatsIndex {
 public:
  // The layout of the columns of `schema` (physical names in stats when `metadata` enables
  // column mapping; `metadata.partition_columns` read from partition values).
  // REQUIRES: `schema` outlives the layout and every index built with it.
  static std::shared_ptr<const StatsLayout> MakeLayout(const StructType& schema, const Metadata& metadata);

  // Parses the stats and partition values of `files`.
  static std::unique_ptr<FileStatsIndex> Build(std::shared_ptr<const StatsLayout> layout,
                                               const FileList& files);
  // The index of `files` when its first kept.size() files are `previous`'s files kept[i]
  // (increasing) and the rest are new: the kept files' entries are copied, only the new
  // files are parsed, so a commit costs what it adds, not what the table holds. `layout`
  // must have the same columns as `previous`'s (the same schema and metadata). Null when
  // rebuilding is better: most of `previous`'s string bytes belong to files since removed.
  static std::unique_ptr<FileStatsIndex> Extend(const FileStatsIndex& previous,
                                                std::shared_ptr<const StatsLayout> layout,
                                                std::span<const uint32_t> kept,
                                                const FileList& files);
  ~FileStatsIndex();

  const std::shared_ptr<const StatsLayout>& layout() const { return layout_; }
  size_t num_files() const { return num_files_; }

  // The column at `path` (logical names, matched case-insensitively as Spark does), nullopt
  // when the schema has no such column or it is a struct.
  std::optional<size_t> FindColumn(const ColumnPath& path) const;
  StatsFamily family(size_t column) const;
  const DataType& type(size_t column) const;

  // What `file` says about `column`; nullopt when nothing is known (a partition column
  // the file has no value for).
  std::optional<ColumnSummary> Summary(size_t file, size_t column) const;

  // numRecords of `file`'s stats; nullopt when absent or unreadable.
  std::optional<int64_t> NumRecords(size_t file) const;

  // Bytes held by the index (for tests and benchmarks).
  size_t MemoryBytes() const;

  struct Column;  // per-file values of one column (file_stats.cc)

 private:
  FileStatsIndex() = default;

  std::shared_ptr<const StatsLayout> layout_;
  size_t num_files_ = 0;
  // Files whose strings are in the columns' string buffers, removed ones included: Extend
  // copies the buffers whole and rebuilds once they hold more dead files than live ones.
  size_t files_in_strings_ = 0;
  std::vector<int64_t> num_records_;  // -1: unknown
  std::vector<Column> columns_;       // as the layout's columns
};

// A FileStatsIndex built on first use, once, by whichever thread asks first: what a
// Snapshot holds. Copies start empty (a copied snapshot may change its files).
class LazyFileStatsIndex {
 public:
  LazyFileStatsIndex() = default;
  LazyFileStatsIndex(const LazyFileStatsIndex&) {}
  LazyFileStatsIndex& operator=(const LazyFileStatsIndex&) {
    once_ = std::make_unique<std::once_flag>();
    index_.reset();
    built_.store(false);
    return *this;
  }

  // The index of `files` under `schema`; REQUIRES: the same arguments on every call.
  const FileStatsIndex& Get(const StructType& schema, const Metadata& metadata,
                            const FileList& files) const;
  // The index if Get or Seed made it, else null; never builds it.
  const FileStatsIndex* IfBuilt() const;
  // Makes `index` what Get returns. REQUIRES: no Get yet, and `index` is the index Get
  // would build.
  void Seed(std::unique_ptr<FileStatsIndex> index);

 private:
  std::unique_ptr<std::once_flag> once_ = std::make_unique<std::once_flag>();
  mutable std::unique_ptr<FileStatsIndex> index_;
  mutable std::atomic<bool> built_{false};
};

}  // namespace basin::delta
