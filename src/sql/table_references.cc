#include "sql/table_references.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "common/strings.h"
#include "engine/sql_text.h"
#include "sql/grammar/token_stream.h"

namespace basin::sql {

namespace {

using grammar::TokenStream;
using nlohmann::json;

Result<TokenStream> Tokens(std::string_view sql) {
  auto tokens = engine::TokenizeSql(sql);
  if (!tokens.ok()) {
    return Status::InvalidArgument(tokens.error().message + " (" +
                                   engine::DescribePosition(sql, tokens.error().offset) + ")");
  }
  return TokenStream(sql, std::move(tokens.value()));
}

std::string Str(const json& obj, const char* key) {
  if (!obj.is_object()) return "";
  auto it = obj.find(key);
  return it != obj.end() && it->is_string() ? it->get<std::string>() : "";
}

// Words after which a table name cannot be an alias: they continue the query instead.
bool IsClauseWord(const TokenStream& tokens, size_t i) {
  static const std::set<std::string> kWords = {
      "where",  "join",    "inner",  "left",  "right",  "full",      "cross",      "natural",   "on",
      "using",  "group",   "order",  "limit", "offset", "having",    "union",      "intersect", "except",
      "window", "qualify", "set",    "when",  "select", "returning", "positional", "anti",      "semi",
      "asof",   "lateral", "values", "by",    "at",     "from"};
  if (i >= tokens.size() || tokens.TextOf(tokens.At(i)).starts_with('"')) return false;
  return tokens.IsNameAt(i) && kWords.count(AsciiLower(std::string(tokens.TextOf(tokens.At(i))))) > 0;
}

struct NameRef {
  size_t begin = 0;  // offset of the name's first token
  size_t end = 0;    // one past its last token (or its AT clause's)
  std::vector<std::string> parts;
  bool has_alias = false;
  std::string alias;  // an alias between the name and an AT clause, which the scan keeps
  std::optional<int64_t> version;
  std::optional<std::string> timestamp;
};

// The qualified name starting at token `i` (a.b or a), its end token index.
size_t NameEnd(const TokenStream& tokens, size_t i) {
  size_t j = i + 1;
  while (tokens.IsSymbolAt(j, ".") && tokens.IsNameAt(j + 1)) j += 2;
  return j;
}

bool IsName(const TokenStream& tokens, size_t i) { return tokens.IsNameAt(i); }

Status SetVersion(const TokenStream& tokens, size_t i, NameRef& ref) {
  std::string_view text = tokens.TextOf(tokens.At(i));
  // from_chars, not stoll: a version past int64 must be an error, not an exception.
  int64_t version = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), version);
  if (tokens.At(i).kind != engine::SqlTokenKind::kNumber ||
      text.find_first_not_of("0123456789") != std::string::npos || ec != std::errc() ||
      end != text.data() + text.size()) {
    return Status::InvalidArgument("VERSION AS OF expects a version number, got '" + std::string(text) + "'");
  }
  ref.version = version;
  return Status::OK();
}

Status SetTimestamp(const TokenStream& tokens, size_t i, NameRef& ref) {
  std::optional<std::string> value;
  if (tokens.At(i).kind == engine::SqlTokenKind::kString)
    value = engine::SqlStringValue(tokens.TextOf(tokens.At(i)));
  if (!value) {
    return Status::InvalidArgument("TIMESTAMP AS OF expects a quoted timestamp, got '" +
                                   std::string(tokens.TextOf(tokens.At(i))) + "'");
  }
  ref.timestamp = std::move(value);
  return Status::OK();
}

// Reads an optional VERSION AS OF n / TIMESTAMP AS OF '...' at token `j`, or DuckDB's
// AT (VERSION => n) / AT (TIMESTAMP => '...'), into `ref`; returns the token after it.
Result<size_t> ReadTimeTravel(const TokenStream& tokens, size_t j, NameRef& ref) {
  const bool delta = tokens.IsWordAt(j + 1, "as") && tokens.IsWordAt(j + 2, "of") && j + 3 < tokens.size();
  const bool duckdb = tokens.IsWordAt(j, "at") && tokens.IsSymbolAt(j + 1, "(") &&
                      tokens.IsSymbolAt(j + 3, "=>") && tokens.IsSymbolAt(j + 5, ")");
  const size_t kind = duckdb ? j + 2 : j;
  const size_t value = duckdb ? j + 4 : j + 3;
  if (!delta && !duckdb) return j;
  if (tokens.IsWordAt(kind, "version")) {
    RETURN_IF_ERROR(SetVersion(tokens, value, ref));
  } else if (tokens.IsWordAt(kind, "timestamp")) {
    RETURN_IF_ERROR(SetTimestamp(tokens, value, ref));
  } else {
    return j;
  }
  return duckdb ? j + 6 : j + 4;
}

// The alias at token `j` ([AS] name), its end token index (j when there is none).
size_t AliasEnd(const TokenStream& tokens, size_t j) {
  if (tokens.IsWordAt(j, "as") && tokens.IsNameAt(j + 1)) return j + 2;
  if (IsName(tokens, j) && !IsClauseWord(tokens, j)) return j + 1;
  return j;
}

// Fills ref.end/has_alias/time travel for a name whose tokens begin at `i`.
Result<NameRef> ReadNameRef(const TokenStream& tokens, size_t i) {
  NameRef ref;
  size_t j = NameEnd(tokens, i);
  for (size_t k = i; k < j; k += 2) ref.parts.push_back(tokens.NameAt(k));
  ref.begin = tokens.At(i).begin;
  ref.end = tokens.At(j - 1).end;
  ASSIGN_OR_RETURN(size_t after, ReadTimeTravel(tokens, j, ref));
  if (after == j && tokens.At(i).kind == engine::SqlTokenKind::kIdentifier) {
    // DuckDB's spelling: name [AS] alias AT (...).
    const size_t alias_end = AliasEnd(tokens, j);
    if (alias_end > j) {
      ASSIGN_OR_RETURN(size_t at_end, ReadTimeTravel(tokens, alias_end, ref));
      if (at_end > alias_end && tokens.IsWordAt(alias_end, "at")) {
        ref.alias = tokens.TextBetween(j, alias_end);
        ref.has_alias = true;
        ref.end = tokens.At(at_end - 1).end;
        return ref;
      }
      ref.version.reset();
      ref.timestamp.reset();
    }
  }
  if (after != j) ref.end = tokens.At(after - 1).end;
  ref.has_alias = AliasEnd(tokens, after) > after;
  return ref;
}

void CollectCteNames(const json& node, std::set<std::string>& out) {
  if (node.is_array()) {
    for (const json& child : node) CollectCteNames(child, out);
    return;
  }
  if (!node.is_object()) return;
  auto cte = node.find("cte_map");
  if (cte != node.end() && cte->is_object() && cte->contains("map") && (*cte)["map"].is_array()) {
    for (const json& entry : (*cte)["map"]) out.insert(AsciiLower(Str(entry, "key")));
  }
  for (const auto& [key, child] : node.items()) {
    if (child.is_structured()) CollectCteNames(child, out);
  }
}

void CollectBaseTables(const json& node, std::set<uint64_t>& out) {
  if (node.is_array()) {
    for (const json& child : node) CollectBaseTables(child, out);
    return;
  }
  if (!node.is_object()) return;
  if (Str(node, "type") == "BASE_TABLE" && Str(node, "catalog_name").empty()) {
    auto location = node.find("query_location");
    if (location != node.end() && location->is_number_unsigned()) out.insert(location->get<uint64_t>());
  }
  for (const auto& [key, child] : node.items()) {
    if (child.is_structured()) CollectBaseTables(child, out);
  }
}

// Offsets of table references according to DuckDB's parser; nullopt when it cannot
// serialize the statement.
std::optional<std::set<uint64_t>> ParsedTableOffsets(const std::string& sql, engine::Connection& conn,
                                                     std::set<std::string>& cte_names) {
  auto r = conn.Query("SELECT json_serialize_sql(" + engine::QuoteLiteral(sql) + ")");
  if (!r.ok() || r->row_count() != 1 || !r->at(0, 0)) return std::nullopt;
  json tree = json::parse(*r->at(0, 0), nullptr, false);
  if (tree.is_discarded() || !tree.is_object() || tree.value("error", true) || !tree.contains("statements"))
    return std::nullopt;
  std::set<uint64_t> out;
  CollectBaseTables(tree["statements"], out);
  CollectCteNames(tree["statements"], cte_names);
  return out;
}

std::string Quote(const std::string& identifier) { return engine::QuoteIdentifier(identifier); }

}  // namespace

Result<std::string> RewriteTableNames(const std::string& sql, engine::Connection& conn,
                                      const TableLocationLookup& lookup) {
  ASSIGN_OR_RETURN(TokenStream tokens, Tokens(sql));
  std::vector<NameRef> refs;
  std::set<size_t> taken;  // token indexes already part of a reference

  // Time travel first: the words make the reference certain.
  for (size_t i = 0; i < tokens.size(); i++) {
    if (!IsName(tokens, i) || tokens.IsSymbolAt(i - 1, ".")) continue;
    ASSIGN_OR_RETURN(NameRef ref, ReadNameRef(tokens, i));
    if (!ref.version && !ref.timestamp) continue;
    size_t after = i;
    while (after < tokens.size() && tokens.At(after).begin < ref.end) after++;
    refs.push_back(std::move(ref));
    for (size_t k = i; k < after; k++) taken.insert(k);
    i = after - 1;
  }

  // Then plain names, where DuckDB's parser says a table is referenced; with time travel
  // blanked out so the rest parses.
  std::string parseable = sql;
  for (auto it = refs.rbegin(); it != refs.rend(); ++it) {
    // Same length, so offsets stay valid: the reference becomes a bare identifier.
    std::string blank(it->end - it->begin, ' ');
    blank[0] = 'x';
    parseable.replace(it->begin, it->end - it->begin, blank);
  }
  std::set<std::string> cte_names;
  std::optional<std::set<uint64_t>> offsets = ParsedTableOffsets(parseable, conn, cte_names);
  for (size_t i = 0; i < tokens.size(); i++) {
    if (taken.count(i) || !IsName(tokens, i)) continue;
    if (tokens.IsSymbolAt(i - 1, ".")) continue;
    bool candidate = false;
    if (offsets) {
      candidate = offsets->count(tokens.At(i).begin) > 0;
    } else if (i > 0) {
      candidate = tokens.IsWordAt(i - 1, "from") || tokens.IsWordAt(i - 1, "join") ||
                  tokens.IsWordAt(i - 1, "using") || tokens.IsWordAt(i - 1, "into");
    }
    if (!candidate) continue;
    size_t j = NameEnd(tokens, i);
    if (tokens.IsSymbolAt(j, "(")) continue;
    if (j == i + 1 && cte_names.count(AsciiLower(tokens.NameAt(i)))) continue;
    ASSIGN_OR_RETURN(NameRef ref, ReadNameRef(tokens, i));
    refs.push_back(std::move(ref));
    i = j - 1;
  }

  std::sort(refs.begin(), refs.end(), [](const NameRef& a, const NameRef& b) { return a.begin < b.begin; });
  std::string out = sql;
  for (auto it = refs.rbegin(); it != refs.rend(); ++it) {
    ASSIGN_OR_RETURN(std::optional<std::string> location, lookup(it->parts));
    if (!location) {
      if (it->version || it->timestamp) {
        std::string name;
        for (const auto& p : it->parts) name += (name.empty() ? "" : ".") + p;
        return Status::NotFound("time travel on " + name + ": no such table in the warehouse");
      }
      continue;  // a DuckDB table, view or CTE
    }
    std::string scan = "delta_scan(" + engine::QuoteLiteral(*location);
    if (it->version) scan += ", version => " + std::to_string(*it->version);
    if (it->timestamp) scan += ", timestamp => " + engine::QuoteLiteral(*it->timestamp);
    scan += ")";
    if (!it->alias.empty()) {
      scan += " " + it->alias;
    } else if (!it->has_alias) {
      scan += " AS " + Quote(it->parts.back());
    }
    out.replace(it->begin, it->end - it->begin, scan);
  }
  return out;
}

Result<std::vector<TableChangesCall>> FindTableChangesCalls(std::string_view sql) {
  ASSIGN_OR_RETURN(TokenStream tokens, Tokens(sql));
  std::vector<TableChangesCall> out;
  for (size_t i = 0; i + 1 < tokens.size(); i++) {
    if (!tokens.IsWordAt(i, "table_changes") || !tokens.IsSymbolAt(i + 1, "(")) continue;
    TableChangesCall call;
    call.begin = tokens.At(i).begin;
    auto usage = [] {
      return Status::InvalidArgument("table_changes expects ('table name', start version [, end version])");
    };
    tokens.Reset(i + 2);
    auto name = tokens.StringLiteral("a table name");
    if (!name.ok()) return usage();
    // 'schema.table' or 'table'.
    const std::string& text = *name;
    size_t dot = text.find('.');
    if (dot == std::string::npos) {
      call.name = {text};
    } else {
      call.name = {text.substr(0, dot), text.substr(dot + 1)};
    }
    if (!tokens.AcceptSymbol(",")) return usage();
    auto start = tokens.Integer("a start version");
    if (!start.ok()) return usage();
    call.start_version = *start;
    if (tokens.AcceptSymbol(",")) {
      auto end = tokens.Integer("an end version");
      if (!end.ok()) return usage();
      call.end_version = *end;
    }
    if (!tokens.PeekSymbol(")")) return usage();
    call.end = tokens.Peek().end;
    out.push_back(std::move(call));
  }
  return out;
}

Result<std::vector<DeltaScanCall>> FindDeltaScanCalls(std::string_view statement) {
  ASSIGN_OR_RETURN(TokenStream tokens, Tokens(statement));
  std::vector<DeltaScanCall> out;
  for (size_t i = 0; i + 1 < tokens.size(); i++) {
    if (!tokens.IsWordAt(i, "delta_scan") || !tokens.IsSymbolAt(i + 1, "(")) continue;
    DeltaScanCall call;
    call.begin = tokens.At(i).begin;
    auto bad = [&](const std::string& why) {
      size_t stop = std::min(statement.size(), call.begin + 80);
      return Status::InvalidArgument("bad delta_scan call at offset " + std::to_string(call.begin) + " (" +
                                     std::string(statement.substr(call.begin, stop - call.begin)) +
                                     "): " + why);
    };
    tokens.Reset(i + 2);
    auto path = tokens.StringLiteral("a path");
    if (!path.ok()) return bad("the first argument must be a path string");
    call.path = *path;
    while (tokens.AcceptSymbol(",")) {
      const size_t arg = tokens.position();
      if (!tokens.IsNameAt(arg) || !(tokens.IsSymbolAt(arg + 1, "=>") || tokens.IsSymbolAt(arg + 1, ":="))) {
        return bad("expected version => N or timestamp => '...'");
      }
      const std::string name = tokens.NameAt(arg);
      tokens.Reset(arg + 2);
      if (EqualsIgnoreCase(name, "version")) {
        const std::string value(tokens.TextOf(tokens.Peek()));
        auto version = tokens.Integer("a version");
        if (!version.ok() || *version < 0) return bad("version must be a non-negative integer, got " + value);
        if (call.version) return bad("version is given twice");
        call.version = *version;
      } else if (EqualsIgnoreCase(name, "timestamp")) {
        auto timestamp = tokens.StringLiteral("a timestamp");
        if (!timestamp.ok()) return bad("timestamp must be a string such as '2024-06-01 12:00:00'");
        if (call.timestamp) return bad("timestamp is given twice");
        call.timestamp = *timestamp;
      } else {
        return bad("unknown argument '" + name + "' (expected version or timestamp)");
      }
    }
    if (!tokens.PeekSymbol(")")) return bad("expected ')'");
    if (call.version && call.timestamp) return bad("give version or timestamp, not both");
    call.end = tokens.Peek().end;
    i = tokens.position();
    out.push_back(std::move(call));
  }
  return out;
}

}  // namespace basin::sql
