// Per-file statistics as a checkpoint's `add.stats_parsed` column holds them (PROTOCOL.md
// "Checkpoint Schema", written by Spark with writeStatsAsStruct): typed values, kept in
// columns the way the checkpoint stores them, so that neither reading the checkpoint nor
// building the stats index (delta/file_stats.h) turns them into JSON text and back.
//
// One ParsedStats holds the rows of one checkpoint file: one column per scalar leaf of the
// stats struct (numRecords, minValues.<column>..., maxValues..., nullCount..., tightBounds),
// each with the type the checkpoint gave it, in the struct's field order. Files point at
// their row (AddFile::parsed_stats, parsed_stats_row). Json() renders a row as the log's
// `stats` text for the few places that write stats back out.
//
// Thread safety: filled by one thread while the checkpoint is read (AddLeaf, AddRow, Set*),
// then immutable; share freely.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "delta/predicate.h"

namespace basin::delta {

class ParsedStats {
 public:
  // How a leaf's values are typed, and so how they read and print.
  enum class Kind : uint8_t {
    kBoolean,       // 0/1
    kInteger,       // any integer width
    kFloat,         // float32, kept as the double it widens to
    kDouble,
    kDecimal,       // unscaled at `scale`
    kString,        // bytes
    kDate,          // days since the epoch
    kTimestamp,     // microseconds since the epoch, UTC (prints with 'Z')
    kTimestampNtz,  // microseconds since the epoch, no time zone
  };

  struct Leaf {
    std::vector<std::string> path;  // field names from the stats root: {"minValues", "a", "b"}
    Kind kind = Kind::kInteger;
    int scale = 0;  // kDecimal
  };

  // Building. A new leaf (its index) with no value in any row yet; leaves must be added in
  // the struct's field order, before the rows that use them.
  size_t AddLeaf(Leaf leaf);
  // A new row, every leaf NULL in it; its index.
  uint32_t AddRow() { return AddRows(1); }
  // `n` new rows, every leaf NULL in them; the first one's index.
  uint32_t AddRows(size_t n);
  // Sets a leaf's value in `row` (the setter must match the leaf's kind: SetInteger for
  // kBoolean, kInteger, kDate and timestamps, SetReal for floats, SetDecimal, SetString).
  void SetInteger(size_t leaf, uint32_t row, int64_t value);
  void SetReal(size_t leaf, uint32_t row, double value);
  void SetDecimal(size_t leaf, uint32_t row, Int128 unscaled);
  void SetString(size_t leaf, uint32_t row, std::string_view value);
  // Releases spare capacity once the last row is in.
  void ShrinkToFit();

  // Reading.
  size_t num_rows() const { return num_rows_; }
  const std::vector<Leaf>& leaves() const { return leaves_; }
  bool Valid(size_t leaf, uint32_t row) const { return values_[leaf].valid[row] != 0; }
  // REQUIRES: Valid(leaf, row), and the accessor that matches the leaf's kind.
  int64_t Integer(size_t leaf, uint32_t row) const { return values_[leaf].bits[row]; }
  double Real(size_t leaf, uint32_t row) const;
  Int128 Decimal(size_t leaf, uint32_t row) const { return values_[leaf].wide[row]; }
  std::string_view String(size_t leaf, uint32_t row) const;
  // The row's numRecords; nullopt when NULL or not an integer.
  std::optional<int64_t> NumRecords(uint32_t row) const;

  // The row's statistics as the JSON text a commit's `stats` holds: NULL values and
  // non-finite floats left out, dates and timestamps as ISO text, numbers exact (a float
  // as the shortest text of its exact double value).
  std::string Json(uint32_t row) const;

  // Bytes held (for tests and benchmarks).
  size_t MemoryBytes() const;

 private:
  struct Values {
    std::vector<uint8_t> valid;
    std::vector<int64_t> bits;  // integers, doubles' bits, string (offset << 24 | length)
    std::vector<Int128> wide;   // kDecimal
    std::string strings;
  };

  std::vector<Leaf> leaves_;
  std::vector<Values> values_;
  std::optional<size_t> num_records_;  // the leaf {"numRecords"}
  uint32_t num_rows_ = 0;
};

}  // namespace basin::delta
