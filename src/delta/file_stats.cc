#include "delta/file_stats.h"

#include <simdjson.h>

#include <algorithm>
#include <bit>
#include <cassert>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>
#include <unordered_map>

#include "common/strings.h"
#include "delta/decimal_text.h"
#include "delta/parsed_stats.h"
#include "delta/temporal.h"

namespace basin::delta {

namespace ondemand = simdjson::ondemand;

namespace {

// Strings in stats may be cut to a prefix; a max this long might be a cut one.
constexpr size_t kTruncatedStringLength = 32;
// Spark writes timestamp stats truncated to milliseconds.
constexpr int64_t kTimestampStatSlackMicros = 1000;
// Decimals up to this precision keep their unscaled value in an int64.
constexpr int kMaxNarrowDecimalPrecision = 18;
// Strings live in one buffer per column, addressed by (offset << kLengthBits) | length.
constexpr int kLengthBits = 24;
constexpr uint64_t kMaxStringLength = (uint64_t{1} << kLengthBits) - 1;
constexpr uint64_t kMaxStringOffset = (uint64_t{1} << (63 - kLengthBits)) - 1;

enum : uint8_t { kHasMin = 1, kHasMax = 2, kPartitionKnown = 4 };
enum class Bound : uint8_t { kMin, kMax, kNullCount };

size_t Utf8Length(std::string_view s) {
  return static_cast<size_t>(std::count_if(
      s.begin(), s.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

}  // namespace

StatsFamily StatsFamilyOf(const DataType& type) {
  if (type.kind != DataType::Kind::kPrimitive) return StatsFamily::kNone;
  const std::string& p = type.primitive;
  if (p == "byte" || p == "short" || p == "integer" || p == "long") return StatsFamily::kInteger;
  if (p == "float" || p == "double") return StatsFamily::kFloat;
  if (p == "decimal") return StatsFamily::kDecimal;
  if (p == "string") return StatsFamily::kString;
  if (p == "date") return StatsFamily::kDate;
  if (p == "timestamp" || p == "timestamp_ntz") return StatsFamily::kTimestamp;
  if (p == "boolean") return StatsFamily::kBoolean;
  return StatsFamily::kNone;
}

// --- layout ---

struct LayoutColumn {
  const StructField* field = nullptr;
  StatsFamily family = StatsFamily::kNone;
  bool wide = false;     // decimal kept as Int128
  bool float32 = false;  // float: statistics rounded to float
  int scale = 0;         // decimal
  // Partition columns: the keys their value may have in partitionValues.
  bool partition = false;
  std::vector<std::string> partition_keys;
};

// One struct level of the stats objects: physical (or logical) name -> column or nested level.
struct StatsNode {
  struct Child {
    int column = -1;
    std::unique_ptr<StatsNode> nested;
  };
  struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>()(s); }
  };
  std::unordered_map<std::string, Child, Hash, std::equal_to<>> children;
};

class StatsLayout {
 public:
  const StructType* schema = nullptr;
  std::vector<LayoutColumn> columns;
  StatsNode root;
  std::unordered_map<const StructField*, size_t> column_of_field;
  std::vector<size_t> partition_columns;

  void AddFields(const StructType& type, bool mapped, StatsNode& node, bool top_level,
                 const Metadata& metadata) {
    for (const StructField& field : type.fields) {
      const std::string key = mapped ? field.PhysicalName() : field.name;
      StatsNode::Child& child = node.children[key];
      if (field.type->kind == DataType::Kind::kStruct) {
        child.nested = std::make_unique<StatsNode>();
        AddFields(field.type->struct_type, mapped, *child.nested, false, metadata);
        continue;
      }
      LayoutColumn column;
      column.field = &field;
      column.family = StatsFamilyOf(*field.type);
      column.wide =
          column.family == StatsFamily::kDecimal && field.type->precision > kMaxNarrowDecimalPrecision;
      column.float32 = field.type->kind == DataType::Kind::kPrimitive && field.type->primitive == "float";
      column.scale = field.type->scale;
      if (top_level) {
        for (const std::string& name : metadata.partition_columns) {
          if (!EqualsIgnoreCase(name, field.name)) continue;
          column.partition = true;
          column.partition_keys = {field.name, field.PhysicalName(), name};
        }
      }
      child.column = static_cast<int>(columns.size());
      column_of_field.emplace(&field, columns.size());
      if (column.partition) partition_columns.push_back(columns.size());
      columns.push_back(std::move(column));
    }
  }
};

// --- per-file values ---

struct FileStatsIndex::Column {
  // Each vector is empty until some file has a value of its kind, then one per file.
  std::vector<int64_t> min, max;           // the family's encoding (see Encode)
  std::vector<Int128> wide_min, wide_max;  // wide decimals
  std::vector<int64_t> null_count;         // -1: unknown
  std::vector<uint8_t> flags;              // kHasMin | kHasMax | kPartitionKnown
  std::string strings;

  size_t MemoryBytes() const {
    return (min.capacity() + max.capacity() + null_count.capacity()) * sizeof(int64_t) +
           (wide_min.capacity() + wide_max.capacity()) * sizeof(Int128) + flags.capacity() +
           strings.capacity();
  }
};

namespace {

// A value parsed for one bound of one column, before it is stored.
struct ParsedValue {
  Int128 integer = 0;
  double real = 0;
  std::string_view bytes;
};

template <typename T>
void Grow(std::vector<T>& values, size_t n, T fill) {
  if (values.empty()) values.assign(n, fill);
}

}  // namespace

// Parses stats JSON and partition values into an index's columns.
class StatsParser {
 public:
  StatsParser(const StatsLayout& layout, std::vector<FileStatsIndex::Column>& columns, size_t num_files)
      : layout_(layout), columns_(columns), num_files_(num_files) {}

  // Reads what `add` says into the columns at `file`: its stats, in whichever form it has
  // them, and its partition values. Returns its numRecords, -1 when unknown.
  int64_t ParseFile(size_t file, const AddFile& add) {
    int64_t num_records = -1;
    if (add.stats) {
      num_records = ParseStats(file, *add.stats);
    } else if (add.parsed_stats) {
      num_records = ParseTyped(file, *add.parsed_stats, add.parsed_stats_row);
    }
    ParsePartitionValues(file, add.partition_values);
    return num_records;
  }

 private:
  struct Pending {
    size_t column;
    Bound bound;
    ParsedValue value;
  };
  // A leaf of a ParsedStats that holds a bound of a layout column.
  struct MappedLeaf {
    size_t leaf;
    size_t column;
    Bound bound;
  };

  int64_t ParseStats(size_t file, const std::string& stats) {
    pending_.clear();
    int64_t num_records = -1;
    if (!Parse(stats, num_records)) return -1;  // unreadable: nothing is known
    for (const Pending& p : pending_) Store(file, p.column, p.bound, p.value);
    return num_records;
  }

  int64_t ParseTyped(size_t file, const ParsedStats& stats, uint32_t row) {
    for (const MappedLeaf& m : MappingOf(stats)) {
      if (!stats.Valid(m.leaf, row)) continue;
      std::optional<ParsedValue> value;
      if (m.bound == Bound::kNullCount) {
        const int64_t n = stats.Integer(m.leaf, row);
        if (stats.leaves()[m.leaf].kind == ParsedStats::Kind::kInteger && n >= 0) value = ParsedValue{n, 0, {}};
      } else {
        value = FromTyped(layout_.columns[m.column], stats, m.leaf, row, m.bound);
      }
      if (value) Store(file, m.column, m.bound, *value);
    }
    const std::optional<int64_t> num_records = stats.NumRecords(row);
    return num_records && *num_records >= 0 ? *num_records : -1;
  }

  // Which leaves of `stats` bound which layout columns; worked out once per ParsedStats
  // (the files of one checkpoint share one, so this runs once or a few times per index).
  const std::vector<MappedLeaf>& MappingOf(const ParsedStats& stats) {
    if (mapped_for_ == &stats) return mapped_;
    mapped_for_ = &stats;
    mapped_.clear();
    const std::vector<ParsedStats::Leaf>& leaves = stats.leaves();
    for (size_t i = 0; i < leaves.size(); i++) {
      const std::vector<std::string>& path = leaves[i].path;
      Bound bound;
      if (path[0] == "minValues") {
        bound = Bound::kMin;
      } else if (path[0] == "maxValues") {
        bound = Bound::kMax;
      } else if (path[0] == "nullCount") {
        bound = Bound::kNullCount;
      } else {
        continue;
      }
      const StatsNode* node = &layout_.root;
      for (size_t depth = 1; depth < path.size() && node != nullptr; depth++) {
        auto it = node->children.find(path[depth]);
        if (it == node->children.end()) break;
        if (depth + 1 == path.size()) {
          if (it->second.column >= 0) mapped_.push_back({i, static_cast<size_t>(it->second.column), bound});
        } else {
          node = it->second.nested.get();
        }
      }
    }
    return mapped_;
  }

  void ParsePartitionValues(size_t file, const PartitionValues& values) {
    for (size_t c : layout_.partition_columns) {
      const LayoutColumn& column = layout_.columns[c];
      FileStatsIndex::Column& out = columns_[c];
      Grow<uint8_t>(out.flags, num_files_, 0);
      auto it = values.end();
      for (const std::string& key : column.partition_keys) {
        it = values.find(key);
        if (it != values.end()) break;
      }
      if (it == values.end()) continue;  // unknown: kPartitionKnown stays unset
      out.flags[file] |= kPartitionKnown;
      Grow<int64_t>(out.null_count, num_files_, -1);
      const bool is_null = !it->second || (column.family != StatsFamily::kString && it->second->empty());
      out.null_count[file] = is_null ? 1 : 0;
      if (is_null) continue;
      if (auto value = FromText(column, *it->second)) {
        Store(file, c, Bound::kMin, *value);
        Store(file, c, Bound::kMax, *value);
      }
    }
  }

  bool Parse(const std::string& stats, int64_t& num_records) {
    buffer_.resize(stats.size() + simdjson::SIMDJSON_PADDING);
    std::memcpy(buffer_.data(), stats.data(), stats.size());
    ondemand::document doc;
    if (parser_.iterate(buffer_.data(), stats.size(), buffer_.size()).get(doc)) return false;
    ondemand::object root;
    if (doc.get_object().get(root)) return false;
    for (auto field : root) {
      std::string_view key;
      ondemand::value value;
      if (field.unescaped_key().get(key) || field.value().get(value)) return false;
      if (key == "numRecords") {
        int64_t n = 0;
        if (value.get_int64().get(n) == simdjson::SUCCESS) num_records = n;
        continue;
      }
      Bound bound;
      if (key == "minValues") {
        bound = Bound::kMin;
      } else if (key == "maxValues") {
        bound = Bound::kMax;
      } else if (key == "nullCount") {
        bound = Bound::kNullCount;
      } else {
        continue;
      }
      ondemand::object object;
      if (value.get_object().get(object) != simdjson::SUCCESS) continue;
      if (!ParseLevel(object, layout_.root, bound)) return false;
    }
    return true;
  }

  // One struct level of minValues/maxValues/nullCount; false on malformed JSON.
  bool ParseLevel(ondemand::object object, const StatsNode& node, Bound bound) {
    for (auto field : object) {
      std::string_view key;
      ondemand::value value;
      if (field.unescaped_key().get(key) || field.value().get(value)) return false;
      auto it = node.children.find(key);
      if (it == node.children.end()) continue;
      const StatsNode::Child& child = it->second;
      if (child.nested) {
        ondemand::object nested;
        if (value.get_object().get(nested) != simdjson::SUCCESS) continue;
        if (!ParseLevel(nested, *child.nested, bound)) return false;
        continue;
      }
      const LayoutColumn& column = layout_.columns[child.column];
      std::optional<ParsedValue> parsed =
          bound == Bound::kNullCount ? NullCount(value) : FromJson(column, value, bound);
      if (parsed) pending_.push_back(Pending{static_cast<size_t>(child.column), bound, *parsed});
    }
    return true;
  }

  static std::optional<ParsedValue> NullCount(ondemand::value& value) {
    int64_t n = 0;
    if (value.get_int64().get(n) != simdjson::SUCCESS || n < 0) return std::nullopt;
    return ParsedValue{n, 0, {}};
  }

  // A min or max value from stats JSON; nullopt when it does not fit the column.
  std::optional<ParsedValue> FromJson(const LayoutColumn& column, ondemand::value& value, Bound bound) {
    ParsedValue out;
    switch (column.family) {
      case StatsFamily::kNone:
        return std::nullopt;
      case StatsFamily::kBoolean: {
        bool b = false;
        if (value.get_bool().get(b) != simdjson::SUCCESS) return std::nullopt;
        out.integer = b ? 1 : 0;
        return out;
      }
      case StatsFamily::kInteger: {
        int64_t n = 0;
        if (value.get_int64().get(n) != simdjson::SUCCESS) return std::nullopt;
        out.integer = n;
        return out;
      }
      case StatsFamily::kFloat: {
        double d = 0;
        if (value.get_double().get(d) != simdjson::SUCCESS) return std::nullopt;
        return FromReal(column, d);
      }
      case StatsFamily::kDecimal: {
        std::string_view text;
        if (value.type() == ondemand::json_type::string) {
          if (value.get_string().get(text) != simdjson::SUCCESS) return std::nullopt;
        } else {
          text = value.raw_json_token();
        }
        while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.remove_suffix(1);
        return FromText(column, text);
      }
      case StatsFamily::kString:
      case StatsFamily::kDate:
      case StatsFamily::kTimestamp: {
        std::string_view text;
        if (value.get_string().get(text) != simdjson::SUCCESS) return std::nullopt;
        return Widened(column, bound, FromText(column, text));
      }
    }
    return std::nullopt;
  }

  // A min or max value from a checkpoint's typed stats; nullopt when it does not fit the
  // column. The stats keep the type the column had when the checkpoint was written, so a
  // column widened since (integer to double or decimal, date to timestamp_ntz, a decimal's
  // scale) reads its older statistics too.
  std::optional<ParsedValue> FromTyped(const LayoutColumn& column, const ParsedStats& stats, size_t leaf,
                                       uint32_t row, Bound bound) {
    using Kind = ParsedStats::Kind;
    const Kind kind = stats.leaves()[leaf].kind;
    std::optional<ParsedValue> out;
    auto integer_of = [&](Kind expected) {
      if (kind == expected) out = ParsedValue{stats.Integer(leaf, row), 0, {}};
    };
    switch (column.family) {
      case StatsFamily::kNone:
        break;
      case StatsFamily::kBoolean:
        integer_of(Kind::kBoolean);
        break;
      case StatsFamily::kInteger:
        integer_of(Kind::kInteger);
        break;
      case StatsFamily::kDate:
        integer_of(Kind::kDate);
        break;
      case StatsFamily::kFloat:
        if (kind == Kind::kFloat || kind == Kind::kDouble) return FromReal(column, stats.Real(leaf, row));
        if (kind == Kind::kInteger) return FromReal(column, static_cast<double>(stats.Integer(leaf, row)));
        break;
      case StatsFamily::kDecimal: {
        std::optional<Int128> unscaled;
        if (kind == Kind::kDecimal) {
          unscaled = Rescale(stats.Decimal(leaf, row), stats.leaves()[leaf].scale, column.scale);
        } else if (kind == Kind::kInteger) {
          unscaled = Rescale(stats.Integer(leaf, row), 0, column.scale);
        }
        if (unscaled) out = ParsedValue{*unscaled, 0, {}};
        break;
      }
      case StatsFamily::kString:
        if (kind == Kind::kString) out = ParsedValue{0, 0, stats.String(leaf, row)};
        break;
      case StatsFamily::kTimestamp:
        if (kind == Kind::kTimestamp || kind == Kind::kTimestampNtz) {
          out = ParsedValue{stats.Integer(leaf, row), 0, {}};
        } else if (kind == Kind::kDate) {
          out = ParsedValue{Int128{stats.Integer(leaf, row)} * kMicrosPerDay, 0, {}};
        }
        break;
    }
    return Widened(column, bound, out);
  }

  // `value` as a bound that holds whatever the writer cut: a string max that may be a
  // truncated prefix is dropped, a timestamp max gains the milliseconds Spark truncates.
  static std::optional<ParsedValue> Widened(const LayoutColumn& column, Bound bound,
                                            std::optional<ParsedValue> value) {
    if (!value || bound != Bound::kMax) return value;
    if (column.family == StatsFamily::kString && Utf8Length(value->bytes) >= kTruncatedStringLength) {
      return std::nullopt;
    }
    if (column.family == StatsFamily::kTimestamp) value->integer += kTimestampStatSlackMicros;
    return value;
  }

  static std::optional<ParsedValue> FromReal(const LayoutColumn& column, double d) {
    if (column.float32) d = static_cast<float>(d);
    if (!std::isfinite(d)) return std::nullopt;
    return ParsedValue{0, d, {}};
  }

  // A partition value, or a decimal/string/date/timestamp statistic, from its text.
  static std::optional<ParsedValue> FromText(const LayoutColumn& column, std::string_view text) {
    ParsedValue out;
    switch (column.family) {
      case StatsFamily::kNone:
        return std::nullopt;
      case StatsFamily::kBoolean:
        if (EqualsIgnoreCase(text, "true")) return ParsedValue{1, 0, {}};
        if (EqualsIgnoreCase(text, "false")) return ParsedValue{0, 0, {}};
        return std::nullopt;
      case StatsFamily::kInteger: {
        int64_t n = 0;
        auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
        if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
        out.integer = n;
        return out;
      }
      case StatsFamily::kFloat: {
        double d = 0;
        auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), d);
        if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
        return FromReal(column, d);
      }
      case StatsFamily::kDecimal: {
        auto unscaled = ParseDecimalText(text, column.scale);
        if (!unscaled) return std::nullopt;
        out.integer = *unscaled;
        return out;
      }
      case StatsFamily::kString:
        out.bytes = text;
        return out;
      case StatsFamily::kDate: {
        auto days = ParseDate(text);
        if (!days) return std::nullopt;
        out.integer = *days;
        return out;
      }
      case StatsFamily::kTimestamp: {
        auto micros = ParseTimestampMicros(text);
        if (!micros) return std::nullopt;
        out.integer = *micros;
        return out;
      }
    }
    return std::nullopt;
  }

  void Store(size_t file, size_t c, Bound bound, const ParsedValue& value) {
    const LayoutColumn& column = layout_.columns[c];
    FileStatsIndex::Column& out = columns_[c];
    if (bound == Bound::kNullCount) {
      Grow<int64_t>(out.null_count, num_files_, -1);
      out.null_count[file] = static_cast<int64_t>(value.integer);
      return;
    }
    const bool is_min = bound == Bound::kMin;
    Grow<uint8_t>(out.flags, num_files_, 0);
    if (column.wide) {
      auto& values = is_min ? out.wide_min : out.wide_max;
      Grow<Int128>(values, num_files_, 0);
      values[file] = value.integer;
    } else {
      int64_t encoded = 0;
      if (column.family == StatsFamily::kFloat) {
        encoded = std::bit_cast<int64_t>(value.real);
      } else if (column.family == StatsFamily::kString) {
        if (value.bytes.size() > kMaxStringLength || out.strings.size() > kMaxStringOffset) return;
        encoded = static_cast<int64_t>((static_cast<uint64_t>(out.strings.size()) << kLengthBits) |
                                       value.bytes.size());
        out.strings.append(value.bytes);
      } else {
        if (value.integer > std::numeric_limits<int64_t>::max() ||
            value.integer < std::numeric_limits<int64_t>::min()) {
          return;  // a decimal statistic beyond its column's precision
        }
        encoded = static_cast<int64_t>(value.integer);
      }
      auto& values = is_min ? out.min : out.max;
      Grow<int64_t>(values, num_files_, 0);
      values[file] = encoded;
    }
    out.flags[file] |= is_min ? kHasMin : kHasMax;
  }

  const StatsLayout& layout_;
  std::vector<FileStatsIndex::Column>& columns_;
  const size_t num_files_;
  ondemand::parser parser_;
  std::vector<char> buffer_;
  std::vector<Pending> pending_;
  const ParsedStats* mapped_for_ = nullptr;  // the stats mapped_ belongs to
  std::vector<MappedLeaf> mapped_;
};

// --- FileStatsIndex ---

std::shared_ptr<const StatsLayout> FileStatsIndex::MakeLayout(const StructType& schema,
                                                              const Metadata& metadata) {
  auto layout = std::make_shared<StatsLayout>();
  layout->schema = &schema;
  layout->AddFields(schema, ColumnMappingEnabled(metadata), layout->root, true, metadata);
  return layout;
}

std::unique_ptr<FileStatsIndex> FileStatsIndex::Build(std::shared_ptr<const StatsLayout> layout,
                                                      const FileList& files) {
  std::unique_ptr<FileStatsIndex> index(new FileStatsIndex());
  index->layout_ = std::move(layout);
  index->num_files_ = files.size();
  index->columns_.resize(index->layout_->columns.size());
  index->num_records_.assign(files.size(), -1);
  StatsParser parser(*index->layout_, index->columns_, files.size());
  size_t i = 0;
  for (const AddFile& file : files) {
    index->num_records_[i] = parser.ParseFile(i, file);
    i++;
  }
  for (Column& column : index->columns_) column.strings.shrink_to_fit();
  index->files_in_strings_ = files.size();
  return index;
}

namespace {

// `to` holds `from`'s values at `kept` positions, then `fill` for `added` more files;
// empty when `from` is (no file had a value of this kind).
template <typename T>
void Gather(const std::vector<T>& from, std::span<const uint32_t> kept, size_t added, T fill,
            std::vector<T>& to) {
  if (from.empty()) return;
  to.reserve(kept.size() + added);
  for (uint32_t i : kept) to.push_back(from[i]);
  to.resize(kept.size() + added, fill);
}

}  // namespace

std::unique_ptr<FileStatsIndex> FileStatsIndex::Extend(const FileStatsIndex& previous,
                                                       std::shared_ptr<const StatsLayout> layout,
                                                       std::span<const uint32_t> kept,
                                                       const FileList& files) {
  assert(layout->columns.size() == previous.columns_.size() && kept.size() <= files.size());
  const size_t added = files.size() - kept.size();
  const size_t files_in_strings = previous.files_in_strings_ + added;
  if (files_in_strings > 2 * files.size() + 64) return nullptr;  // mostly dead strings: rebuild
  std::unique_ptr<FileStatsIndex> index(new FileStatsIndex());
  index->layout_ = std::move(layout);
  index->num_files_ = files.size();
  index->files_in_strings_ = files_in_strings;
  index->num_records_.reserve(files.size());
  for (uint32_t i : kept) index->num_records_.push_back(previous.num_records_[i]);
  index->num_records_.resize(files.size(), -1);
  index->columns_.resize(previous.columns_.size());
  for (size_t c = 0; c < previous.columns_.size(); c++) {
    const Column& from = previous.columns_[c];
    Column& to = index->columns_[c];
    Gather<int64_t>(from.min, kept, added, 0, to.min);
    Gather<int64_t>(from.max, kept, added, 0, to.max);
    Gather<Int128>(from.wide_min, kept, added, 0, to.wide_min);
    Gather<Int128>(from.wide_max, kept, added, 0, to.wide_max);
    Gather<int64_t>(from.null_count, kept, added, -1, to.null_count);
    Gather<uint8_t>(from.flags, kept, added, 0, to.flags);
    to.strings = from.strings;  // offsets into it stay valid
  }
  StatsParser parser(*index->layout_, index->columns_, files.size());
  for (size_t i = kept.size(); i < files.size(); i++) index->num_records_[i] = parser.ParseFile(i, files[i]);
  return index;
}

FileStatsIndex::~FileStatsIndex() = default;

std::optional<size_t> FileStatsIndex::FindColumn(const ColumnPath& path) const {
  const StructType* fields = layout_->schema;
  const StructField* field = nullptr;
  for (size_t i = 0; i < path.size(); i++) {
    if (fields == nullptr) return std::nullopt;
    field = fields->Find(path[i]);
    if (field == nullptr) return std::nullopt;
    fields = field->type->kind == DataType::Kind::kStruct ? &field->type->struct_type : nullptr;
  }
  if (field == nullptr) return std::nullopt;
  auto it = layout_->column_of_field.find(field);
  if (it == layout_->column_of_field.end()) return std::nullopt;
  return it->second;
}

StatsFamily FileStatsIndex::family(size_t column) const { return layout_->columns[column].family; }

const DataType& FileStatsIndex::type(size_t column) const { return *layout_->columns[column].field->type; }

std::optional<ColumnSummary> FileStatsIndex::Summary(size_t file, size_t c) const {
  const LayoutColumn& layout = layout_->columns[c];
  const Column& column = columns_[c];
  const uint8_t flags = column.flags.empty() ? 0 : column.flags[file];
  ColumnSummary out;
  out.family = layout.family;
  if (layout.partition) {
    if ((flags & kPartitionKnown) == 0) return std::nullopt;
    out.num_records = 1;  // every row of the file has the one value
  } else if (num_records_[file] >= 0) {
    out.num_records = num_records_[file];
  }
  if (!column.null_count.empty() && column.null_count[file] >= 0) out.null_count = column.null_count[file];
  auto decode = [&](bool is_min) {
    StatsValue value;
    if (layout.wide) {
      value.integer = (is_min ? column.wide_min : column.wide_max)[file];
      return value;
    }
    const int64_t encoded = (is_min ? column.min : column.max)[file];
    if (layout.family == StatsFamily::kFloat) {
      value.real = std::bit_cast<double>(encoded);
    } else if (layout.family == StatsFamily::kString) {
      const auto bits = static_cast<uint64_t>(encoded);
      value.bytes = std::string_view(column.strings).substr(bits >> kLengthBits, bits & kMaxStringLength);
    } else {
      value.integer = encoded;
    }
    return value;
  };
  if (flags & kHasMin) out.min = decode(true);
  if (flags & kHasMax) out.max = decode(false);
  return out;
}

std::optional<int64_t> FileStatsIndex::NumRecords(size_t file) const {
  if (num_records_[file] < 0) return std::nullopt;
  return num_records_[file];
}

size_t FileStatsIndex::MemoryBytes() const {
  size_t bytes =
      sizeof(*this) + num_records_.capacity() * sizeof(int64_t) + columns_.capacity() * sizeof(Column);
  for (const Column& column : columns_) bytes += column.MemoryBytes();
  return bytes;
}

const FileStatsIndex& LazyFileStatsIndex::Get(const StructType& schema, const Metadata& metadata,
                                              const FileList& files) const {
  std::call_once(
      *once_, [&] { index_ = FileStatsIndex::Build(FileStatsIndex::MakeLayout(schema, metadata), files); });
  built_.store(true, std::memory_order_release);
  return *index_;
}

const FileStatsIndex* LazyFileStatsIndex::IfBuilt() const {
  return built_.load(std::memory_order_acquire) ? index_.get() : nullptr;
}

void LazyFileStatsIndex::Seed(std::unique_ptr<FileStatsIndex> index) {
  assert(!built_.load());
  std::call_once(*once_, [&] { index_ = std::move(index); });
  built_.store(true, std::memory_order_release);
}

}  // namespace basin::delta
