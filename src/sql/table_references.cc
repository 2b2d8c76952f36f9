#include "sql/table_references.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "common/strings.h"
#include "sql/token_cursor.h"

namespace basin::sql {

namespace {

using nlohmann::json;

std::string Str(const json& obj, const char* key) {
  if (!obj.is_object()) return "";
  auto it = obj.find(key);
  return it != obj.end() && it->is_string() ? it->get<std::string>() : "";
}

// Words after which a table name cannot be an alias: they continue the query instead.
bool IsClauseWord(const Token& t) {
  static const std::set<std::string> kWords = {
      "where",      "join",   "inner",  "left",    "right",   "full",   "cross",  "natural",
      "on",         "using",  "group",  "order",   "limit",   "offset", "having", "union",
      "intersect",  "except", "window", "qualify", "set",     "when",   "select", "returning",
      "positional", "anti",   "semi",   "asof",    "lateral", "values", "by"};
  return t.kind == Token::Kind::kIdentifier && kWords.count(AsciiLower(t.text)) > 0;
}

struct NameRef {
  size_t begin = 0;  // offset of the name's first token
  size_t end = 0;    // one past its last token
  std::vector<std::string> parts;
  bool has_alias = false;
  std::optional<int64_t> version;
  std::optional<std::string> timestamp;
};

// The qualified name starting at token `i` (a.b or a), its end token index.
size_t NameEnd(const std::vector<Token>& tokens, size_t i) {
  size_t j = i + 1;
  while (j + 1 < tokens.size() && tokens[j].kind == Token::Kind::kOperator && tokens[j].text == "." &&
         (tokens[j + 1].kind == Token::Kind::kIdentifier ||
          tokens[j + 1].kind == Token::Kind::kQuotedIdentifier)) {
    j += 2;
  }
  return j;
}

bool IsName(const Token& t) {
  return t.kind == Token::Kind::kIdentifier || t.kind == Token::Kind::kQuotedIdentifier;
}

bool IsWord(const Token& t, const char* word) {
  return t.kind == Token::Kind::kIdentifier && AsciiLower(t.text) == word;
}

// Reads an optional VERSION AS OF n / TIMESTAMP AS OF '...' at token `j` into `ref`; returns
// the token after it.
Result<size_t> ReadTimeTravel(const std::vector<Token>& tokens, size_t j, NameRef& ref) {
  if (j + 3 >= tokens.size() || !IsWord(tokens[j + 1], "as") || !IsWord(tokens[j + 2], "of")) return j;
  if (IsWord(tokens[j], "version")) {
    const Token& value = tokens[j + 3];
    // from_chars, not stoll: a version past int64 must be an error, not an exception.
    int64_t version = 0;
    const char* last = value.text.data() + value.text.size();
    auto [end, ec] = std::from_chars(value.text.data(), last, version);
    if (value.kind != Token::Kind::kNumber ||
        value.text.find_first_not_of("0123456789") != std::string::npos || ec != std::errc() || end != last) {
      return Status::InvalidArgument("VERSION AS OF expects a version number, got '" + value.text + "'");
    }
    ref.version = version;
    return j + 4;
  }
  if (IsWord(tokens[j], "timestamp")) {
    const Token& value = tokens[j + 3];
    if (value.kind != Token::Kind::kString) {
      return Status::InvalidArgument("TIMESTAMP AS OF expects a quoted timestamp, got '" + value.text + "'");
    }
    ref.timestamp = value.text;
    return j + 4;
  }
  return j;
}

// Fills ref.end/has_alias/time travel for a name whose tokens begin at `i`.
Result<NameRef> ReadNameRef(const std::vector<Token>& tokens, size_t i) {
  NameRef ref;
  size_t j = NameEnd(tokens, i);
  for (size_t k = i; k < j; k += 2) ref.parts.push_back(tokens[k].text);
  ref.begin = tokens[i].begin;
  ref.end = tokens[j - 1].end;
  ASSIGN_OR_RETURN(size_t after, ReadTimeTravel(tokens, j, ref));
  if (after != j) ref.end = tokens[after - 1].end;
  if (after < tokens.size()) {
    const Token& next = tokens[after];
    ref.has_alias = IsWord(next, "as") || (IsName(next) && !IsClauseWord(next));
  }
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
  ASSIGN_OR_RETURN(std::vector<Token> tokens, Tokenize(sql));
  std::vector<NameRef> refs;
  std::set<size_t> taken;  // token indexes already part of a reference

  // Time travel first: DuckDB cannot parse it, and the words make the reference certain.
  for (size_t i = 0; i < tokens.size(); i++) {
    if (!IsName(tokens[i]) ||
        (i > 0 && tokens[i - 1].kind == Token::Kind::kOperator && tokens[i - 1].text == "."))
      continue;
    size_t j = NameEnd(tokens, i);
    NameRef probe;
    ASSIGN_OR_RETURN(size_t after, ReadTimeTravel(tokens, j, probe));
    if (after == j) continue;
    ASSIGN_OR_RETURN(NameRef ref, ReadNameRef(tokens, i));
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
    if (taken.count(i) || !IsName(tokens[i])) continue;
    if (i > 0 && tokens[i - 1].kind == Token::Kind::kOperator && tokens[i - 1].text == ".") continue;
    bool candidate = false;
    if (offsets) {
      candidate = offsets->count(tokens[i].begin) > 0;
    } else if (i > 0) {
      const Token& prev = tokens[i - 1];
      candidate =
          IsWord(prev, "from") || IsWord(prev, "join") || IsWord(prev, "using") || IsWord(prev, "into");
    }
    if (!candidate) continue;
    size_t j = NameEnd(tokens, i);
    if (j < tokens.size() && tokens[j].kind == Token::Kind::kPunctuation && tokens[j].text == "(") continue;
    if (j == i + 1 && cte_names.count(AsciiLower(tokens[i].text))) continue;
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
    if (!it->has_alias) scan += " AS " + Quote(it->parts.back());
    out.replace(it->begin, it->end - it->begin, scan);
  }
  return out;
}

Result<std::vector<TableChangesCall>> FindTableChangesCalls(std::string_view sql) {
  ASSIGN_OR_RETURN(std::vector<Token> tokens, Tokenize(sql));
  std::vector<TableChangesCall> out;
  for (size_t i = 0; i + 1 < tokens.size(); i++) {
    if (!IsWord(tokens[i], "table_changes") || tokens[i + 1].text != "(" ||
        tokens[i + 1].kind != Token::Kind::kPunctuation)
      continue;
    TokenCursor cursor(sql,
                       std::vector<Token>(tokens.begin() + static_cast<std::ptrdiff_t>(i) + 2, tokens.end()));
    TableChangesCall call;
    call.begin = tokens[i].begin;
    auto usage = [] {
      return Status::InvalidArgument("table_changes expects ('table name', start version [, end version])");
    };
    auto name = cursor.StringLiteral("a table name");
    if (!name.ok()) return usage();
    // 'schema.table' or 'table'.
    std::string text = *name;
    size_t dot = text.find('.');
    if (dot == std::string::npos) {
      call.name = {text};
    } else {
      call.name = {text.substr(0, dot), text.substr(dot + 1)};
    }
    if (!cursor.AcceptSymbol(",")) return usage();
    auto start = cursor.Integer("a start version");
    if (!start.ok()) return usage();
    call.start_version = *start;
    if (cursor.AcceptSymbol(",")) {
      auto end = cursor.Integer("an end version");
      if (!end.ok()) return usage();
      call.end_version = *end;
    }
    if (!cursor.PeekSymbol(")")) return usage();
    call.end = cursor.Peek().end;
    out.push_back(std::move(call));
  }
  return out;
}

}  // namespace basin::sql
