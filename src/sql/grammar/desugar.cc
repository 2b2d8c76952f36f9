#include "sql/grammar/desugar.h"

#include <algorithm>

#include "common/strings.h"
#include "engine/pg_catalog.h"
#include "engine/stream_calls.h"
#include "sql/grammar/token_stream.h"

namespace basin::sql::grammar {

namespace {

using engine::SqlTokenKind;

// The end (exclusive token index) of the longest expression DuckDB reads starting at token
// `from`: at most kMaxValueTokens tokens, never past a ',' or the bracket enclosing it.
std::optional<size_t> LongestExpression(const TokenStream& s, size_t from) {
  std::optional<size_t> best;
  int depth = 0;
  for (size_t i = from; i < s.size() && i < from + kMaxValueTokens; i++) {
    if (depth == 0 && (s.IsSymbolAt(i, ",") || s.ClosesGroupAt(i))) break;
    if (s.OpensGroupAt(i)) depth++;
    if (s.ClosesGroupAt(i)) depth--;
    if (depth == 0 && !engine::CheckSqlSlot(s.TextBetween(from, i + 1), engine::SqlSlot::kExpression))
      best = i + 1;
  }
  return best;
}

// `pg_catalog .` at `i`: the schema PostgreSQL's clients qualify its operators, collations
// and types with.
bool IsSchemaQualifierAt(const TokenStream& s, size_t i) {
  return s.IsWordAt(i, "pg_catalog") && s.IsSymbolAt(i + 1, ".");
}

// PostgreSQL's spellings that DuckDB reads otherwise, by the token they start at.
enum class PgSpelling {
  kOperator,  // OPERATOR(pg_catalog.op)
  kCollate,   // COLLATE pg_catalog.name
  kSeries,    // pg_catalog.generate_series(...)
  kCast,      // ::pg_catalog.type, or 'name'::regclass
};

std::optional<PgSpelling> PostgresSpellingAt(const TokenStream& s, size_t i) {
  if (s.IsWordAt(i, "OPERATOR") && s.IsSymbolAt(i + 1, "(") && IsSchemaQualifierAt(s, i + 2)) {
    return PgSpelling::kOperator;
  }
  if (s.IsWordAt(i, "COLLATE") && IsSchemaQualifierAt(s, i + 1)) return PgSpelling::kCollate;
  if (IsSchemaQualifierAt(s, i) && s.IsWordAt(i + 2, "generate_series") && s.IsSymbolAt(i + 3, "(")) {
    return PgSpelling::kSeries;
  }
  const bool regclass = i > 0 && s.At(i - 1).kind == SqlTokenKind::kString && s.IsWordAt(i + 1, "regclass");
  if (s.IsSymbolAt(i, "::") && (IsSchemaQualifierAt(s, i + 1) || regclass)) return PgSpelling::kCast;
  return std::nullopt;
}

// name [. name]* starting at `i`: the index after it, or nullopt.
std::optional<size_t> NameEnd(const TokenStream& s, size_t i) {
  if (!s.IsNameAt(i)) return std::nullopt;
  while (s.IsSymbolAt(i + 1, ".") && s.IsNameAt(i + 2)) i += 2;
  return i + 1;
}

// The token after an optional alias at `i`: [AS] name [(columns)].
size_t AfterAlias(const TokenStream& s, size_t i) {
  size_t end = i;
  if (s.IsWordAt(i, "AS") && s.IsNameAt(i + 1)) {
    end = i + 2;
  } else if (s.At(i).kind == SqlTokenKind::kIdentifier && !s.IsWordAt(i, "WATERMARK")) {
    end = i + 1;
  }
  if (end > i && s.IsSymbolAt(end, "(")) end = s.GroupEnd(end) + 1;
  return std::min(end, s.size());
}

// `, name => value [, ...]` from `i` to `close` (STREAM(t, ...)'s options): each value is
// the text up to the next comma outside parentheses. nullopt when it is not that.
std::optional<std::vector<StreamOption>> StreamOptions(const TokenStream& s, size_t i, size_t close) {
  std::vector<StreamOption> options;
  while (i < close) {
    if (!s.IsSymbolAt(i, ",") || !s.IsNameAt(i + 1)) return std::nullopt;
    size_t value = i + 2;
    if (s.IsSymbolAt(value, "=>")) {
      value += 1;
    } else if (s.IsSymbolAt(value, "=") && s.IsSymbolAt(value + 1, ">")) {
      value += 2;
    } else {
      return std::nullopt;
    }
    size_t end = value;
    while (end < close && !s.IsSymbolAt(end, ",")) end = s.OpensGroupAt(end) ? s.GroupEnd(end) + 1 : end + 1;
    if (end == value || end > close) return std::nullopt;
    options.push_back({s.NameAt(i + 1), s.TextBetween(value, end)});
    i = end;
  }
  return options;
}

class Rewriter {
 public:
  Rewriter(std::string_view sql, const std::vector<engine::SqlToken>& tokens,
           std::string_view stream_relation)
      : stream_(sql, tokens), text_(sql), removed_(tokens.size(), false), stream_relation_(stream_relation) {}

  std::optional<Desugared> Run() {
    for (size_t i = 0; i < stream_.size(); i++) {
      if (auto next = PostgresSpelling(i)) i = *next - 1;
    }
    for (size_t i = 0; i < stream_.size(); i++) {
      if (removed_[i]) continue;
      if (auto next = StreamMarker(i)) i = *next - 1;
    }
    QualifiedSetTargets();
    for (size_t i = 0; i < stream_.size(); i++) {
      if (auto next = TimeTravel(i)) i = *next - 1;
      if (auto next = HoppingWindow(i)) {
        i = *next - 1;
        continue;
      }
      QuoteKeywordName(i);
    }
    if (streams_.empty() && edits_.empty() && !blanked_) return std::nullopt;
    std::sort(edits_.begin(), edits_.end(), [](const Edit& a, const Edit& b) { return a.begin < b.begin; });
    Desugared out;
    size_t copied = 0;
    for (const Edit& edit : edits_) {
      out.sql.append(text_, copied, edit.begin - copied);
      out.sql += edit.replacement;
      copied = edit.end;
    }
    out.sql.append(text_, copied, std::string::npos);
    for (StreamSource& stream : streams_) {
      stream.offset = MapOffset(stream.offset);
      out.streams.push_back(std::move(stream));
    }
    return out;
  }

 private:
  struct Edit {
    size_t begin = 0;
    size_t end = 0;
    std::string replacement;
  };

  // Blanks bytes [begin, end) of the text, keeping line breaks.
  void Blank(size_t begin, size_t end) {
    blanked_ = true;
    for (size_t k = begin; k < end; k++) {
      if (text_[k] != '\n') text_[k] = ' ';
    }
  }

  // PostgreSQL's spelling at token `i` (PostgresSpellingAt) as DuckDB's: the token after
  // what was rewritten, or nullopt.
  std::optional<size_t> PostgresSpelling(size_t i) {
    const TokenStream& s = stream_;
    std::optional<PgSpelling> spelling = PostgresSpellingAt(s, i);
    if (!spelling) return std::nullopt;
    switch (*spelling) {
      case PgSpelling::kOperator:
        // DuckDB calls a function named after the schema; OPERATOR(~) is its operator.
        Blank(s.OffsetOf(i + 2), s.At(i + 3).end);
        removed_[i + 2] = removed_[i + 3] = true;
        return i + 4;
      case PgSpelling::kCollate:
        // COLLATE pg_catalog.default: the database's collation, which is no collation at all.
        if (!s.IsWordAt(i + 3, "default")) return std::nullopt;
        Blank(s.OffsetOf(i), s.At(i + 3).end);
        for (size_t k = i; k <= i + 3; k++) removed_[k] = true;
        return i + 4;
      case PgSpelling::kSeries:
        return SeriesFunction(i);
      case PgSpelling::kCast:
        break;
    }
    size_t type = i + 1;
    if (IsSchemaQualifierAt(s, type)) {  // ::pg_catalog.text: DuckDB's types are not in pg_catalog
      Blank(s.OffsetOf(type), s.At(type + 1).end);
      removed_[type] = removed_[type + 1] = true;
      type += 2;
    }
    // 'name'::regclass: the OID of the relation so named.
    if (i > 0 && s.At(i - 1).kind == SqlTokenKind::kString && s.IsWordAt(type, "regclass")) {
      edits_.push_back({s.OffsetOf(i - 1), s.At(type).end,
                        std::string(engine::kRegclassFunction) + "(" + s.TextBetween(i - 1, i) + ")"});
      for (size_t k = i - 1; k <= type; k++) removed_[k] = true;
    }
    return type + 1;
  }

  // pg_catalog.generate_series(...) at token `i`: DuckDB's table function of that name, whose
  // column is named after the alias as PostgreSQL names it (`FROM generate_series(1, 3) s`
  // gives a column s). The token after the qualifier: the arguments may hold rewrites too.
  size_t SeriesFunction(size_t i) {
    const TokenStream& s = stream_;
    Blank(s.OffsetOf(i), s.At(i + 1).end);
    removed_[i] = removed_[i + 1] = true;
    size_t alias = s.GroupEnd(i + 3) + 1;
    if (s.IsWordAt(alias, "AS")) alias++;
    if (alias < s.size() && s.At(alias).kind == SqlTokenKind::kIdentifier && !s.IsSymbolAt(alias + 1, "(")) {
      edits_.push_back({s.At(alias).end, s.At(alias).end, "(" + s.TextBetween(alias, alias + 1) + ")"});
    }
    return i + 2;
  }

  // Spark's `UPDATE t SET t.c = ...` (and MERGE's `UPDATE SET t.c = ...`): DuckDB takes
  // only the column, so the qualifier of each SET target goes.
  void QualifiedSetTargets() {
    const TokenStream& s = stream_;
    bool after_update = false;
    for (size_t i = 0; i < s.size(); i++) {
      after_update = after_update || s.IsWordAt(i, "UPDATE");
      if (!after_update || !s.IsWordAt(i, "SET")) continue;
      int depth = 0;
      for (size_t k = i; k < s.size(); k++) {
        if (s.OpensGroupAt(k)) depth++;
        if (s.ClosesGroupAt(k) && --depth < 0) break;
        if (depth != 0) continue;
        if (k > i && (s.IsWordAt(k, "WHERE") || s.IsWordAt(k, "FROM") || s.IsWordAt(k, "RETURNING") ||
                      s.IsWordAt(k, "WHEN"))) {
          break;
        }
        const bool target_start = k == i || s.IsSymbolAt(k, ",");
        if (target_start && s.IsNameAt(k + 1) && s.IsSymbolAt(k + 2, ".") && s.IsNameAt(k + 3) &&
            s.IsSymbolAt(k + 4, "=")) {
          Blank(s.OffsetOf(k + 1), s.At(k + 2).end);
          removed_[k + 1] = removed_[k + 2] = true;
        }
      }
    }
  }

  // A keyword DuckDB reserves where Basin's spelling has a name: a named argument
  // (`delta_scan('p', timestamp => '...')`), a qualifier (`default.t`) or the function
  // window(...) is quoted.
  void QuoteKeywordName(size_t i) {
    const TokenStream& s = stream_;
    if (i >= s.size() || removed_[i] || s.At(i).kind != engine::SqlTokenKind::kKeyword) return;
    const bool argument = s.IsSymbolAt(i + 1, "=>") || s.IsSymbolAt(i + 1, ":=");
    const bool qualifier = s.IsSymbolAt(i + 1, ".") && s.IsNameAt(i + 2) && !s.IsSymbolAt(i - 1, ".");
    if (!argument && !qualifier && !IsWindowCall(i)) return;
    // DuckDB's own AT (VERSION => n) / AT (TIMESTAMP => t) takes the unit unquoted.
    if (argument && i >= 2 && s.IsSymbolAt(i - 1, "(") && s.IsWordAt(i - 2, "AT")) return;
    for (const Edit& edit : edits_) {
      if (edit.begin < s.At(i).end && s.At(i).begin < edit.end) return;
    }
    edits_.push_back({s.At(i).begin, s.At(i).end, "\"" + std::string(s.TextOf(s.At(i))) + "\""});
  }
  // Spark's window(ts, '1 minute') at token `i` (a WINDOW clause names its window before the
  // parenthesis).
  bool IsWindowCall(size_t i) const {
    return stream_.IsWordAt(i, "WINDOW") && stream_.IsSymbolAt(i + 1, "(");
  }

  // window(ts, size, slide) at token `i`, in a statement reading the stream relation: the
  // window the row was read for, basin_hop(basin_window, ts, size, slide). The token after
  // it, or nullopt.
  std::optional<size_t> HoppingWindow(size_t i) {
    const TokenStream& s = stream_;
    if (stream_relation_.empty() || !IsWindowCall(i)) return std::nullopt;
    const size_t close = s.GroupEnd(i + 1);
    if (close >= s.size()) return std::nullopt;
    for (size_t k = i; k <= close; k++) {
      if (removed_[k]) return std::nullopt;  // a rewrite of its own inside
    }
    for (const Edit& edit : edits_) {
      if (edit.begin < s.At(close).end && s.OffsetOf(i) < edit.end) return std::nullopt;
    }
    int commas = 0;
    for (size_t k = i + 2; k < close; k = s.OpensGroupAt(k) ? s.GroupEnd(k) + 1 : k + 1) {
      if (s.IsSymbolAt(k, ",")) commas++;
    }
    if (commas != 2) return std::nullopt;
    edits_.push_back({s.OffsetOf(i), s.At(close).end,
                      std::string(engine::kHopFunction) + "(" + engine::kHoppingWindowColumn + ", " +
                          s.TextBetween(i + 2, close) + ")"});
    for (size_t k = i; k <= close; k++) removed_[k] = true;
    return close + 1;
  }

  void BlankToken(size_t i) {
    Blank(stream_.At(i).begin, stream_.At(i).end);
    removed_[i] = true;
  }

  size_t MapOffset(size_t offset) const {
    size_t out = offset;
    for (const Edit& edit : edits_) {
      if (edit.end <= offset) out = out + edit.replacement.size() - (edit.end - edit.begin);
    }
    return out;
  }

  // STREAM marker at token `i`: the token after what it consumed, or nullopt.
  std::optional<size_t> StreamMarker(size_t i) {
    const TokenStream& s = stream_;
    if (i == 0 || !s.IsWordAt(i, "STREAM")) return std::nullopt;
    const bool after_from = s.IsWordAt(i - 1, "FROM") || s.IsWordAt(i - 1, "JOIN") ||
                            s.IsWordAt(i - 1, "USING") || s.IsWordAt(i - 1, "LATERAL") ||
                            s.IsSymbolAt(i - 1, ",");
    if (!after_from) return std::nullopt;
    StreamSource source;
    source.index = static_cast<int64_t>(streams_.size());
    size_t close = 0;
    std::string qualifier;           // the rows' qualifier when the source is replaced; empty: kept
    if (s.IsSymbolAt(i + 1, "(")) {  // STREAM(name): read through basin_stream_table
      close = s.GroupEnd(i + 1);
      std::optional<size_t> name_end = NameEnd(s, i + 2);
      if (close >= s.size() || !name_end || *name_end > close) return std::nullopt;
      std::optional<std::vector<StreamOption>> options = StreamOptions(s, *name_end, close);
      if (!options) return std::nullopt;
      source.is_table = true;
      source.source = s.TextBetween(i + 2, *name_end);
      source.options = std::move(*options);
      source.offset = s.OffsetOf(i);
      source.relation = std::string(engine::kStreamTableFunction) + "(" + QuoteLiteral(source.source) +
                        SourceArgument(", ") + ")";
      // Unaliased, the rows keep the table's name as their qualifier (`bronze.id`).
      qualifier = s.NameAt(*name_end - 1);
    } else {  // STREAM function(...)
      std::optional<size_t> name_end = NameEnd(s, i + 1);
      if (!name_end || !s.IsSymbolAt(*name_end, "(")) return std::nullopt;
      close = s.GroupEnd(*name_end);
      if (close >= s.size()) return std::nullopt;
      source.source = s.TextBetween(i + 1, close + 1);
      source.offset = s.OffsetOf(i + 1);
      source.is_changes = *name_end == i + 2 && s.IsWordAt(i + 1, "table_changes");
      source.is_files = *name_end == i + 2 && s.IsWordAt(i + 1, "read_files");
      source.is_kafka = *name_end == i + 2 && s.IsWordAt(i + 1, "read_kafka");
      // The call as written, with the source's place as its last argument.
      const char* separator = close == *name_end + 1 ? "" : ", ";
      const std::string argument = SourceArgument(separator);
      source.relation = s.TextBetween(i + 1, close) + argument + ")";
      if (source.is_changes) {  // read through basin_stream_changes, keeping the rows' qualifier
        source.offset = s.OffsetOf(i);
        source.relation = std::string(engine::kStreamChangesFunction) + "(" +
                          s.TextBetween(*name_end + 1, close) + argument + ")";
        qualifier = "table_changes";
      } else if (!stream_relation_.empty()) {
        qualifier = s.NameAt(*name_end - 1);
      } else {
        BlankToken(i);
        edits_.push_back({s.At(close).begin, s.At(close).begin, argument});
      }
    }
    size_t after = close + 1;
    const bool watermark_first = s.IsWordAt(after, "WATERMARK");
    std::optional<size_t> watermark_end = Watermark(watermark_first ? after : AfterAlias(s, after), source);
    if (watermark_end) after = std::max(after, *watermark_end);
    if (!qualifier.empty()) {
      // An alias follows the call, or the watermark written before it.
      const size_t alias_at = watermark_first && watermark_end ? *watermark_end : close + 1;
      ReplaceSource(i, close, source.relation, AfterAlias(s, alias_at) > alias_at ? "" : qualifier);
    }
    streams_.push_back(std::move(source));
    return after;
  }

  // The named argument giving the next STREAM source's place (engine/stream_calls.h),
  // after `separator`.
  std::string SourceArgument(const char* separator) const {
    return separator + std::string(engine::kStreamSourceParameter) + " => " + std::to_string(streams_.size());
  }

  // Tokens [marker, close] of a STREAM source become `relation` (or the stream relation the
  // rewrite was asked for), aliased `alias` unless it is empty (the text gives one), so the
  // rows keep the qualifier they are referred to by.
  void ReplaceSource(size_t marker, size_t close, const std::string& relation, const std::string& alias) {
    const TokenStream& s = stream_;
    std::string text = stream_relation_.empty() ? relation : std::string(stream_relation_);
    if (!alias.empty()) text += " AS " + QuoteIdentifier(alias);
    edits_.push_back({s.OffsetOf(marker), s.At(close).end, std::move(text)});
    for (size_t k = marker; k <= close; k++) removed_[k] = true;
  }

  // WATERMARK col DELAY OF interval at token `i`, recorded in `source` and blanked.
  std::optional<size_t> Watermark(size_t i, StreamSource& source) {
    const TokenStream& s = stream_;
    if (!s.IsWordAt(i, "WATERMARK")) return std::nullopt;
    std::optional<size_t> column_end = NameEnd(s, i + 1);
    if (!column_end || !s.IsWordAt(*column_end, "DELAY") || !s.IsWordAt(*column_end + 1, "OF"))
      return std::nullopt;
    std::optional<size_t> delay_end = LongestExpression(s, *column_end + 2);
    if (!delay_end) return std::nullopt;
    grammar::Watermark watermark;
    for (size_t k = i + 1; k < *column_end; k += 2) watermark.column.push_back(s.NameAt(k));
    watermark.delay = s.TextBetween(*column_end + 2, *delay_end);
    source.watermark = std::move(watermark);
    Blank(s.OffsetOf(i), s.At(*delay_end - 1).end);
    for (size_t k = i; k < *delay_end; k++) removed_[k] = true;
    return *delay_end;
  }

  // `VERSION AS OF n` / `TIMESTAMP AS OF expr` at token `i`, after a table's name.
  std::optional<size_t> TimeTravel(size_t i) {
    const TokenStream& s = stream_;
    const bool version = s.IsWordAt(i, "VERSION");
    if (!(version || s.IsWordAt(i, "TIMESTAMP")) || !s.IsWordAt(i + 1, "AS") || !s.IsWordAt(i + 2, "OF")) {
      return std::nullopt;
    }
    if (i == 0 || removed_[i - 1] || !s.IsNameAt(i - 1)) return std::nullopt;
    std::optional<size_t> value_end = LongestExpression(s, i + 3);
    if (!value_end) return std::nullopt;
    const size_t alias_end = AfterAlias(s, *value_end);
    std::string replacement;
    if (alias_end > *value_end) replacement = s.TextBetween(*value_end, alias_end) + " ";
    replacement += std::string("AT (") + (version ? "VERSION" : "TIMESTAMP") + " => " +
                   s.TextBetween(i + 3, *value_end) + ")";
    edits_.push_back({s.OffsetOf(i), s.At(alias_end - 1).end, std::move(replacement)});
    return alias_end;
  }

  TokenStream stream_;
  std::string text_;
  std::vector<bool> removed_;
  std::vector<StreamSource> streams_;
  std::vector<Edit> edits_;  // not overlapping; sorted before they are applied
  bool blanked_ = false;
  std::string_view stream_relation_;  // what replaces every STREAM source; empty: their calls
};

}  // namespace

std::optional<Desugared> Desugar(std::string_view sql, const std::vector<engine::SqlToken>& tokens,
                                 std::string_view stream_relation) {
  return Rewriter(sql, tokens, stream_relation).Run();
}

bool HasPostgresSpelling(const TokenStream& tokens, size_t from, size_t to) {
  for (size_t i = from; i < to; i++) {
    if (PostgresSpellingAt(tokens, i)) return true;
  }
  return false;
}

bool HasStreamCall(const TokenStream& tokens, size_t from, size_t to) {
  for (size_t i = from; i + 1 < to; i++) {
    if (!tokens.IsWordAt(i, "STREAM")) continue;
    if (tokens.IsSymbolAt(i + 1, "(")) return true;
    std::optional<size_t> name_end = NameEnd(tokens, i + 1);
    if (name_end && *name_end < to && tokens.IsSymbolAt(*name_end, "(")) return true;
  }
  return false;
}

}  // namespace basin::sql::grammar
