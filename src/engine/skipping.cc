#include "engine/skipping.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <optional>

#include "common/strings.h"

namespace basin::engine {

namespace {

using delta::DataType;
using nlohmann::json;

// obj[key] when it is a string, else "" (the syntax tree reuses keys with other types).
std::string Str(const json& obj, const char* key) {
  if (!obj.is_object()) return "";
  auto it = obj.find(key);
  return it != obj.end() && it->is_string() ? it->get<std::string>() : "";
}

// Strings in stats may be cut to a prefix; a max this long might be a cut one.
constexpr size_t kTruncatedStringLength = 32;
// Spark writes timestamp stats truncated to milliseconds.
constexpr int64_t kTimestampStatSlackMicros = 1000;

// A value in the order of its column's type.
struct Datum {
  enum class Kind { kInt, kReal, kString };
  Kind kind = Kind::kInt;
  int64_t i = 0;
  long double r = 0;
  std::string s;
};

// -1/0/1, or nullopt when the two cannot be compared.
std::optional<int> Compare(const Datum& a, const Datum& b) {
  if (a.kind == Datum::Kind::kString || b.kind == Datum::Kind::kString) {
    if (a.kind != b.kind) return std::nullopt;
    int c = a.s.compare(b.s);
    return (c > 0) - (c < 0);
  }
  if (a.kind == Datum::Kind::kInt && b.kind == Datum::Kind::kInt) return (a.i > b.i) - (a.i < b.i);
  long double x = a.kind == Datum::Kind::kInt ? static_cast<long double>(a.i) : a.r;
  long double y = b.kind == Datum::Kind::kInt ? static_cast<long double>(b.i) : b.r;
  if (std::isnan(x) || std::isnan(y)) return std::nullopt;
  return (x > y) - (x < y);
}

size_t Utf8Length(const std::string& s) {
  return static_cast<size_t>(std::count_if(
      s.begin(), s.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

int64_t DaysFromCivil(int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const auto yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<int64_t>(doe) - 719468;
}

bool ReadInt(std::string_view s, size_t& pos, size_t digits, int64_t& out) {
  if (pos + digits > s.size()) return false;
  out = 0;
  for (size_t i = 0; i < digits; i++) {
    char c = s[pos + i];
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
    out = out * 10 + (c - '0');
  }
  pos += digits;
  return true;
}

// "YYYY-MM-DD" -> days since 1970-01-01; `pos` ends after the date.
std::optional<int64_t> ParseDatePart(std::string_view s, size_t& pos) {
  int64_t y, m, d;
  if (!ReadInt(s, pos, 4, y) || pos >= s.size() || s[pos++] != '-' || !ReadInt(s, pos, 2, m) ||
      pos >= s.size() || s[pos++] != '-' || !ReadInt(s, pos, 2, d) || m < 1 || m > 12 || d < 1 || d > 31) {
    return std::nullopt;
  }
  return DaysFromCivil(y, static_cast<unsigned>(m), static_cast<unsigned>(d));
}

std::optional<int64_t> ParseDate(std::string_view s) {
  size_t pos = 0;
  auto days = ParseDatePart(s, pos);
  if (!days || pos != s.size()) return std::nullopt;
  return days;
}

// "YYYY-MM-DD[( |T)HH:MM[:SS[.ffffff]]][Z|+HH[:MM]|-HH[:MM]]" -> microseconds since the
// epoch, UTC (no offset means UTC: Basin's session time zone and the protocol's).
std::optional<int64_t> ParseTimestamp(std::string_view s) {
  size_t pos = 0;
  auto days = ParseDatePart(s, pos);
  if (!days) return std::nullopt;
  int64_t micros = *days * 86400LL * 1000000LL;
  if (pos == s.size()) return micros;
  if (s[pos] != ' ' && s[pos] != 'T') return std::nullopt;
  pos++;
  int64_t h, mi, sec = 0;
  if (!ReadInt(s, pos, 2, h) || pos >= s.size() || s[pos++] != ':' || !ReadInt(s, pos, 2, mi))
    return std::nullopt;
  if (pos < s.size() && s[pos] == ':') {
    pos++;
    if (!ReadInt(s, pos, 2, sec)) return std::nullopt;
  }
  micros += ((h * 60 + mi) * 60 + sec) * 1000000LL;
  if (pos < s.size() && s[pos] == '.') {
    pos++;
    int64_t scale = 100000;
    while (pos < s.size() && std::isdigit(static_cast<unsigned char>(s[pos]))) {
      micros += (s[pos] - '0') * scale;  // digits past microseconds add nothing
      scale /= 10;
      pos++;
    }
  }
  if (pos == s.size()) return micros;
  if (s[pos] == 'Z' && pos + 1 == s.size()) return micros;
  if (s[pos] != '+' && s[pos] != '-') return std::nullopt;
  int sign = s[pos++] == '+' ? 1 : -1;
  int64_t oh, om = 0;
  if (!ReadInt(s, pos, 2, oh)) return std::nullopt;
  if (pos < s.size() && s[pos] == ':') pos++;
  if (pos < s.size() && !ReadInt(s, pos, 2, om)) return std::nullopt;
  if (pos != s.size()) return std::nullopt;
  return micros - sign * (oh * 60 + om) * 60 * 1000000LL;
}

enum class Family { kInteger, kReal, kString, kDate, kTimestamp, kOther };

Family FamilyOf(const DataType& type) {
  if (type.kind != DataType::Kind::kPrimitive) return Family::kOther;
  const std::string& p = type.primitive;
  if (p == "byte" || p == "short" || p == "integer" || p == "long") return Family::kInteger;
  if (p == "float" || p == "double" || p == "decimal") return Family::kReal;
  if (p == "string") return Family::kString;
  if (p == "date") return Family::kDate;
  if (p == "timestamp" || p == "timestamp_ntz") return Family::kTimestamp;
  return Family::kOther;  // booleans, binary, nested: never skipped on
}

// A statistic or partition value (JSON from stats, or text from partitionValues).
std::optional<Datum> DatumFromStat(Family family, const json& v) {
  Datum d;
  switch (family) {
    case Family::kInteger:
    case Family::kReal:
      if (v.is_number_integer()) {
        d.kind = Datum::Kind::kInt;
        d.i = v.get<int64_t>();
        return d;
      }
      if (v.is_number_float() && std::isfinite(v.get<double>())) {
        d.kind = Datum::Kind::kReal;
        d.r = v.get<double>();
        return d;
      }
      return std::nullopt;
    case Family::kString:
      if (!v.is_string()) return std::nullopt;
      d.kind = Datum::Kind::kString;
      d.s = v.get<std::string>();
      return d;
    case Family::kDate: {
      if (!v.is_string()) return std::nullopt;
      auto days = ParseDate(v.get<std::string>());
      if (!days) return std::nullopt;
      d.i = *days;
      return d;
    }
    case Family::kTimestamp: {
      if (!v.is_string()) return std::nullopt;
      auto micros = ParseTimestamp(v.get<std::string>());
      if (!micros) return std::nullopt;
      d.i = *micros;
      return d;
    }
    case Family::kOther:
      return std::nullopt;
  }
  return std::nullopt;
}

std::optional<Datum> DatumFromPartitionValue(Family family, const std::string& text) {
  if (family == Family::kInteger) {
    Datum d;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), d.i);
    if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
    return d;
  }
  if (family == Family::kReal) {
    char* end = nullptr;
    long double r = std::strtold(text.c_str(), &end);
    if (text.empty() || end != text.c_str() + text.size() || !std::isfinite(r)) return std::nullopt;
    Datum d;
    d.kind = Datum::Kind::kReal;
    d.r = r;
    return d;
  }
  return DatumFromStat(family, json(text));
}

// A constant from the syntax tree, converted to the column's family; nullopt when the
// constant is not one Basin can compare with that column exactly as DuckDB would.
std::optional<Datum> DatumFromConstant(Family family, const json& node) {
  std::string cast;
  const json* constant = &node;
  if (Str(node, "class") == "CAST") {
    if (!node.contains("child") || !node.contains("cast_type")) return std::nullopt;
    cast = Str(node["cast_type"], "id");
    constant = &node["child"];
  }
  if (Str(*constant, "class") != "CONSTANT" || !constant->contains("value")) return std::nullopt;
  const json& value = (*constant)["value"];
  if (!value.is_object() || !value.contains("value") || !value.contains("type") ||
      !value["is_null"].is_boolean() || value["is_null"].get<bool>()) {
    return std::nullopt;
  }
  std::string id = Str(value["type"], "id");
  const json& raw = value["value"];

  auto numeric = [&]() -> std::optional<Datum> {
    Datum d;
    if (id == "DECIMAL" && raw.is_number_integer()) {
      const json& info = value["type"]["type_info"];
      int scale = info.is_object() && info.contains("scale") && info["scale"].is_number_integer()
                      ? info["scale"].get<int>()
                      : 0;
      d.kind = Datum::Kind::kReal;
      d.r = static_cast<long double>(raw.get<int64_t>()) / std::pow(10.0L, scale);
      if (scale == 0) {
        d.kind = Datum::Kind::kInt;
        d.i = raw.get<int64_t>();
      }
      return d;
    }
    if ((id == "TINYINT" || id == "SMALLINT" || id == "INTEGER" || id == "BIGINT") &&
        raw.is_number_integer()) {
      d.i = raw.get<int64_t>();
      return d;
    }
    if ((id == "DOUBLE" || id == "FLOAT") && raw.is_number() && std::isfinite(raw.get<double>())) {
      d.kind = Datum::Kind::kReal;
      d.r = raw.get<double>();
      return d;
    }
    return std::nullopt;
  };

  switch (family) {
    case Family::kInteger:
    case Family::kReal:
      // A cast to an integer type may round; only casts to exact-or-wider types keep the value.
      if (!cast.empty() && cast != "DOUBLE" && cast != "DECIMAL" && cast != "BIGINT" && cast != "INTEGER") {
        return std::nullopt;
      }
      if (!cast.empty() && (cast == "BIGINT" || cast == "INTEGER")) {
        auto d = numeric();
        if (!d || d->kind != Datum::Kind::kInt) return std::nullopt;
        return d;
      }
      return numeric();
    case Family::kString:
      if (!cast.empty() && cast != "VARCHAR") return std::nullopt;
      if (id != "VARCHAR" || !raw.is_string()) return std::nullopt;
      return DatumFromStat(family, raw);
    case Family::kDate:
      if ((!cast.empty() && cast != "DATE") || id != "VARCHAR" || !raw.is_string()) return std::nullopt;
      return DatumFromStat(family, raw);
    case Family::kTimestamp:
      if (!cast.empty() && cast != "TIMESTAMP" && cast != "TIMESTAMP WITH TIME ZONE" &&
          cast != "TIMESTAMP_TZ" && cast != "DATE") {
        return std::nullopt;
      }
      if (id != "VARCHAR" || !raw.is_string()) return std::nullopt;
      if (cast == "DATE") {
        auto days = ParseDate(raw.get<std::string>());
        if (!days) return std::nullopt;
        Datum d;
        d.i = *days * 86400LL * 1000000LL;
        return d;
      }
      return DatumFromStat(family, raw);
    case Family::kOther:
      return std::nullopt;
  }
  return std::nullopt;
}

// What one file says about one column.
struct ColumnSummary {
  Family family = Family::kOther;
  std::optional<Datum> min, max;  // max nullopt also when it may have been truncated
  std::optional<int64_t> null_count;
  std::optional<int64_t> num_records;

  bool AllNull() const { return null_count && num_records && *null_count == *num_records; }
};

// The member `key` of `obj`, or a null value (never a temporary: callers keep pointers).
const json& Member(const json& obj, const std::string& key) {
  static const json kNull;
  if (!obj.is_object()) return kNull;
  auto it = obj.find(key);
  return it != obj.end() ? *it : kNull;
}

const json* FindPath(const json& root, const std::vector<std::string>& path) {
  const json* node = &root;
  for (const std::string& part : path) {
    if (!node->is_object()) return nullptr;
    auto it = node->find(part);
    if (it == node->end()) return nullptr;
    node = &*it;
  }
  return node;
}

bool Contains(const std::vector<std::string>& names, const std::string& name) {
  return std::any_of(names.begin(), names.end(),
                     [&](const std::string& n) { return EqualsIgnoreCase(n, name); });
}

// A column of this table that the predicate refers to.
struct ColumnRef {
  const DataType* type = nullptr;
  std::vector<std::string> physical_path;  // for stats
  std::string partition_name;              // non-empty for a partition column (its log key)
  std::string physical_partition_name;
};

class Evaluator {
 public:
  Evaluator(const delta::Snapshot& snapshot, const SkippingScope& scope)
      : snapshot_(snapshot), scope_(scope) {
    mapped_ = delta::ColumnMappingEnabled(snapshot.metadata);
  }

  // Prepares the per-file view, then MayMatch answers for that file.
  void SetFile(const delta::AddFile& file, const json& stats) {
    file_ = &file;
    stats_ = &stats;
  }

  bool MayMatch(const json& node) {
    std::string type = Str(node, "type");
    if (type == "CONJUNCTION_AND") {
      for (const json& child : Children(node)) {
        if (!MayMatch(child)) return false;
      }
      return true;
    }
    if (type == "CONJUNCTION_OR") {
      for (const json& child : Children(node)) {
        if (MayMatch(child)) return true;
      }
      return Children(node).empty();
    }
    if (Str(node, "class") == "COMPARISON") return Comparison(node);
    if (type == "COMPARE_IN") return In(node);
    if (type == "COMPARE_BETWEEN") return Between(node);
    if (type == "OPERATOR_IS_NULL" || type == "OPERATOR_IS_NOT_NULL") {
      const json& children = Children(node);
      if (children.size() != 1) return true;
      auto column = Summary(children[0]);
      if (!column) return true;
      if (type == "OPERATOR_IS_NULL") return !column->null_count || *column->null_count > 0;
      return !column->AllNull();
    }
    return true;
  }

 private:
  static const json& Children(const json& node) {
    static const json kEmpty = json::array();
    auto it = node.find("children");
    return it != node.end() && it->is_array() ? *it : kEmpty;
  }

  std::optional<ColumnRef> Resolve(const json& node) const {
    if (Str(node, "class") != "COLUMN_REF") return std::nullopt;
    auto names_json = node.find("column_names");
    if (names_json == node.end() || !names_json->is_array()) return std::nullopt;
    std::vector<std::string> names;
    for (const json& n : *names_json) {
      if (!n.is_string()) return std::nullopt;
      names.push_back(n.get<std::string>());
    }
    if (names.empty()) return std::nullopt;
    if (names.size() >= 2 && Contains(scope_.qualifiers, names[0])) {
      names.erase(names.begin());
    } else if (names.size() >= 2 && Contains(scope_.other_qualifiers, names[0])) {
      return std::nullopt;
    }
    ColumnRef ref;
    const delta::StructType* fields = &snapshot_.schema;
    for (size_t i = 0; i < names.size(); i++) {
      const delta::StructField* field = fields->Find(names[i]);
      if (field == nullptr) return std::nullopt;
      ref.physical_path.push_back(mapped_ ? field->PhysicalName() : field->name);
      ref.type = field->type.get();
      if (i == 0 && Contains(snapshot_.metadata.partition_columns, field->name)) {
        if (names.size() != 1) return std::nullopt;
        ref.partition_name = field->name;
        ref.physical_partition_name = field->PhysicalName();
      }
      if (i + 1 < names.size()) {
        if (field->type->kind != DataType::Kind::kStruct) return std::nullopt;
        fields = &field->type->struct_type;
      }
    }
    return ref;
  }

  std::optional<ColumnSummary> Summary(const json& node) const {
    auto ref = Resolve(node);
    if (!ref) return std::nullopt;
    ColumnSummary out;
    out.family = FamilyOf(*ref->type);
    if (!ref->partition_name.empty()) {
      const delta::PartitionValues& values = file_->partition_values;
      auto it = values.find(ref->partition_name);
      if (it == values.end()) it = values.find(ref->physical_partition_name);
      if (it == values.end()) return std::nullopt;
      out.num_records = 1;
      bool is_null = !it->second || (out.family != Family::kString && it->second->empty());
      out.null_count = is_null ? 1 : 0;
      if (!is_null) {
        out.min = DatumFromPartitionValue(out.family, *it->second);
        out.max = out.min;
      }
      return out;
    }
    if (!stats_->is_object()) return out;
    if (auto it = stats_->find("numRecords"); it != stats_->end() && it->is_number_integer()) {
      out.num_records = it->get<int64_t>();
    }
    if (const json* n = FindPath(Member(*stats_, "nullCount"), ref->physical_path);
        n && n->is_number_integer()) {
      out.null_count = n->get<int64_t>();
    }
    if (const json* v = FindPath(Member(*stats_, "minValues"), ref->physical_path)) {
      out.min = DatumFromStat(out.family, *v);
    }
    if (const json* v = FindPath(Member(*stats_, "maxValues"), ref->physical_path)) {
      out.max = DatumFromStat(out.family, *v);
      if (out.max && out.family == Family::kString && Utf8Length(out.max->s) >= kTruncatedStringLength) {
        out.max.reset();
      }
      if (out.max && out.family == Family::kTimestamp) out.max->i += kTimestampStatSlackMicros;
    }
    return out;
  }

  // May some value in [min, max] compare to `v` as `op` says?
  static bool RangeMayMatch(const ColumnSummary& c, const std::string& op, const Datum& v) {
    if (c.AllNull()) return false;  // comparisons with NULL are never true
    // kUnknown satisfies every test: an unknown bound cannot exclude anything.
    constexpr int kUnknown = 99;
    int lo = c.min ? Compare(*c.min, v).value_or(kUnknown) : kUnknown;  // min vs v
    int hi = c.max ? Compare(*c.max, v).value_or(kUnknown) : kUnknown;  // max vs v
    auto at_most = [](int cmp, int bound) { return cmp == kUnknown || cmp <= bound; };
    auto at_least = [](int cmp, int bound) { return cmp == kUnknown || cmp >= bound; };
    if (op == "COMPARE_EQUAL") return at_most(lo, 0) && at_least(hi, 0);
    if (op == "COMPARE_NOTEQUAL") return !(lo == 0 && hi == 0);
    if (op == "COMPARE_LESSTHAN") return at_most(lo, -1);
    if (op == "COMPARE_LESSTHANOREQUALTO") return at_most(lo, 0);
    if (op == "COMPARE_GREATERTHAN") return at_least(hi, 1);
    if (op == "COMPARE_GREATERTHANOREQUALTO") return at_least(hi, 0);
    return true;
  }

  static std::string Flip(const std::string& op) {
    if (op == "COMPARE_LESSTHAN") return "COMPARE_GREATERTHAN";
    if (op == "COMPARE_GREATERTHAN") return "COMPARE_LESSTHAN";
    if (op == "COMPARE_LESSTHANOREQUALTO") return "COMPARE_GREATERTHANOREQUALTO";
    if (op == "COMPARE_GREATERTHANOREQUALTO") return "COMPARE_LESSTHANOREQUALTO";
    return op;
  }

  bool Comparison(const json& node) const {
    if (!node.contains("left") || !node.contains("right")) return true;
    std::string op = Str(node, "type");
    const json* column = &node["left"];
    const json* constant = &node["right"];
    if (Str(*column, "class") != "COLUMN_REF") {
      std::swap(column, constant);
      op = Flip(op);
    }
    auto summary = Summary(*column);
    if (!summary) return true;
    auto value = DatumFromConstant(summary->family, *constant);
    if (!value) return true;
    return RangeMayMatch(*summary, op, *value);
  }

  bool In(const json& node) const {
    const json& children = Children(node);
    if (children.size() < 2) return true;
    auto summary = Summary(children[0]);
    if (!summary) return true;
    for (size_t i = 1; i < children.size(); i++) {
      auto value = DatumFromConstant(summary->family, children[i]);
      if (!value || RangeMayMatch(*summary, "COMPARE_EQUAL", *value)) return true;
    }
    return false;
  }

  bool Between(const json& node) const {
    if (!node.contains("input") || !node.contains("lower") || !node.contains("upper")) return true;
    auto summary = Summary(node["input"]);
    if (!summary) return true;
    auto lower = DatumFromConstant(summary->family, node["lower"]);
    auto upper = DatumFromConstant(summary->family, node["upper"]);
    if (lower && !RangeMayMatch(*summary, "COMPARE_GREATERTHANOREQUALTO", *lower)) return false;
    if (upper && !RangeMayMatch(*summary, "COMPARE_LESSTHANOREQUALTO", *upper)) return false;
    return true;
  }

  const delta::Snapshot& snapshot_;
  const SkippingScope& scope_;
  bool mapped_ = false;
  const delta::AddFile* file_ = nullptr;
  const json* stats_ = nullptr;
};

// The file's stats as JSON; null when absent or unreadable (nothing can be skipped then).
json ParseStats(const delta::AddFile& file) {
  if (!file.stats) return json();
  json stats = json::parse(*file.stats, nullptr, false);
  if (stats.is_discarded() || !stats.is_object()) return json();
  return stats;
}

}  // namespace

ParsedStats ParseFileStats(const delta::Snapshot& snapshot) {
  ParsedStats out;
  out.reserve(snapshot.files.size());
  for (const delta::AddFile& file : snapshot.files) out.push_back(ParseStats(file));
  return out;
}

bool FileMayMatch(const delta::Snapshot& snapshot, const delta::AddFile& file, const json& predicate,
                  const SkippingScope& scope) {
  if (predicate.is_null()) return true;
  const json stats = ParseStats(file);
  Evaluator evaluator(snapshot, scope);
  evaluator.SetFile(file, stats);
  return evaluator.MayMatch(predicate);
}

std::vector<size_t> FilesMatching(const delta::Snapshot& snapshot, const json& predicate,
                                  const SkippingScope& scope) {
  return FilesMatching(snapshot, ParseFileStats(snapshot), predicate, scope);
}

std::vector<size_t> FilesMatching(const delta::Snapshot& snapshot, const ParsedStats& stats,
                                  const json& predicate, const SkippingScope& scope) {
  Evaluator evaluator(snapshot, scope);
  std::vector<size_t> out;
  for (size_t i = 0; i < snapshot.files.size(); i++) {
    evaluator.SetFile(snapshot.files[i], stats[i]);
    if (evaluator.MayMatch(predicate)) out.push_back(i);
  }
  return out;
}

Result<json> ParsePredicate(Connection& conn, const std::string& where_sql) {
  ASSIGN_OR_RETURN(QueryResult r, conn.Query("SELECT json_serialize_sql(" +
                                             QuoteLiteral("SELECT 1 WHERE " + where_sql) + ")"));
  json tree = json::parse(r.at(0, 0).value_or(""), nullptr, false);
  if (tree.is_discarded() || !tree.is_object() || !tree.contains("error") || tree["error"] != false) {
    std::string message = Str(tree, "error_message");
    if (message.empty()) message = "no syntax tree";
    return Status::InvalidArgument("cannot parse predicate '" + where_sql + "': " + message);
  }
  const json* statements = FindPath(tree, {"statements"});
  if (statements == nullptr || !statements->is_array() || statements->size() != 1) {
    return Status::InvalidArgument("cannot parse predicate '" + where_sql + "': not one expression");
  }
  const json& node = (*statements)[0]["node"];
  if (!node.contains("where_clause") || node["where_clause"].is_null()) {
    return Status::InvalidArgument("cannot parse predicate '" + where_sql + "': no expression");
  }
  return node["where_clause"];
}

Result<std::vector<size_t>> FilesMatchingWhere(Connection& conn, const delta::Snapshot& snapshot,
                                               const std::string& where_sql) {
  ASSIGN_OR_RETURN(json predicate, ParsePredicate(conn, where_sql));
  return FilesMatching(snapshot, predicate);
}

}  // namespace basin::engine
