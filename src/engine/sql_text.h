// SQL text as DuckDB's parser reads it: its tokens, where a script's statements begin and
// end, whether a piece of text is one expression, a list of them, a query or a type, and
// the syntax trees of DuckDB's INSERT, UPDATE, DELETE and MERGE, read into Basin's own
// structs. Basin's grammar (sql/grammar/) is built on these, so that every piece of a
// statement that DuckDB understands is read by DuckDB, never by scanning text.
//
// The DuckDB C++ API behind this header is confined to engine/duckdb/sql_text.cc
// (docs/duckdb-integration.md). Offsets are byte offsets into the text given. Unicode
// spaces that DuckDB's parser treats as whitespace (U+00A0, U+2000..U+200B, ...) are read
// as spaces here too, without changing any offset.
//
// Thread safety: functions of their arguments; any thread may call them.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace basin::engine {

// A syntax error found by DuckDB's parser or Basin's grammar, at a byte offset of the text
// that was parsed.
struct SqlSyntaxError {
  std::string message;  // "syntax error at or near \"x\"", "unterminated quoted string ..."
  size_t offset = 0;
};

// What a parse gives: a value, or the syntax error that stopped it.
template <typename T>
class SqlParse {
 public:
  SqlParse(T value) : v_(std::move(value)) {}               // NOLINT(google-explicit-constructor)
  SqlParse(SqlSyntaxError error) : v_(std::move(error)) {}  // NOLINT(google-explicit-constructor)
  bool ok() const { return std::holds_alternative<T>(v_); }
  // REQUIRES: ok()
  T& value() { return std::get<T>(v_); }
  const T& value() const { return std::get<T>(v_); }
  // REQUIRES: !ok()
  const SqlSyntaxError& error() const { return std::get<SqlSyntaxError>(v_); }

 private:
  std::variant<T, SqlSyntaxError> v_;
};

// --- tokens ---

enum class SqlTokenKind {
  kIdentifier,  // a name, quoted ("a b") or not
  kKeyword,     // a word DuckDB's grammar knows: SELECT, TABLE, NAME, TIMESTAMP...
  kNumber,
  kString,    // 'x', E'x', $$x$$, $tag$x$tag$, X'..', adjacent 'a'\n'b' as one
  kOperator,  // everything else: ( ) , ; . :: => <= -> + ...
};

// One token: text[begin, end) is exactly its text. Comments and whitespace are between
// tokens, never inside one.
struct SqlToken {
  SqlTokenKind kind = SqlTokenKind::kOperator;
  size_t begin = 0;
  size_t end = 0;
};

// DuckDB's tokens of `text` (its scanner decides where each begins and what kind it is;
// the ends are checked against the same scanner). A syntax error for text the scanner
// cannot read: an unterminated string, quoted identifier, dollar quote or comment.
SqlParse<std::vector<SqlToken>> TokenizeSql(std::string_view text);

// A string literal token's value ('it''s' -> it's, E'\n', $$x$$, 'a'\n'b' -> ab), as
// DuckDB's parser reads it; nullopt when the token is not a string constant.
std::optional<std::string> SqlStringValue(std::string_view literal);

// --- statements of a script ---

// One statement of a script: `text` is script[offset, offset + text.size()), from its
// first token to its last, without the ';' that ends it.
struct ScriptStatement {
  std::string text;
  size_t offset = 0;
};

// The statements of `script`, split exactly where DuckDB splits them: when the whole
// script parses, at the boundaries of DuckDB's statements; otherwise at each ';' operator
// token, as DuckDB's Parser::ParseQuery does when parser extensions are loaded. Empty
// statements (";;", a comment alone) are dropped. Text DuckDB's scanner cannot read (an
// unterminated string) ends up in the last statement, whose parse then reports it.
std::vector<ScriptStatement> SplitSqlScript(std::string_view script);

// Whether `text` holds at least one statement, every string and comment in it is closed,
// and its last token is ';': what an interactive shell waits for before running input.
bool IsCompleteSqlInput(std::string_view text);

// 1-based line and column of byte `offset` of `text` (columns count characters, not bytes).
struct SqlPosition {
  size_t line = 1;
  size_t column = 1;
};
SqlPosition PositionInText(std::string_view text, size_t offset);
// "line 3, column 14"
std::string DescribePosition(std::string_view text, size_t offset);

// --- slots: is this text one ... as DuckDB reads it? ---

enum class SqlSlot {
  kExpression,      // one expression, without an alias: x + 1, CASE ... END, (SELECT ...), x -> x + 1
  kExpressionList,  // one or more expressions separated by commas
  kQuery,           // one query: SELECT, VALUES, WITH ..., TABLE t, FROM t, set operations
  kType,            // one column type: INTEGER, DECIMAL(10,2), STRUCT(a INT)[], ...
};

// nullopt when `text` is one `slot` for DuckDB's parser; else DuckDB's error (or a
// message saying what the text is instead), at an offset of `text`.
std::optional<SqlSyntaxError> CheckSqlSlot(std::string_view text, SqlSlot slot);

// --- DuckDB's syntax trees of INSERT, UPDATE, DELETE, MERGE, COPY, SET and SHOW ---
// Every expression, query and table reference is SQL text as DuckDB prints the subtree
// (its ToString()), which DuckDB parses back to the same tree.

// catalog.schema.table; empty parts were not given.
struct SqlTableName {
  std::string catalog;
  std::string schema;
  std::string table;
  // The given parts in order: ["t"], ["s", "t"], ["c", "s", "t"].
  std::vector<std::string> Parts() const;
};

// The table a statement changes.
struct SqlTarget {
  SqlTableName name;
  std::string alias;  // as given; empty when none
};

struct SqlAssignment {
  std::string column;      // as given (DuckDB keeps only the column of `t.col = ...`)
  std::string expression;  // SQL text
};

// INSERT [OR REPLACE | OR IGNORE] INTO name [(cols) | BY NAME] {query | VALUES ... | DEFAULT
// VALUES} [ON CONFLICT ...] [RETURNING ...], with its CTEs.
struct SqlInsert {
  enum class OnConflict { kNone, kNothing, kUpdate, kReplace };  // OR IGNORE = kNothing
  std::string ctes;                                              // "WITH a AS (...), b AS (...)", or empty
  SqlTableName target;
  std::vector<std::string> columns;  // empty when not given
  bool by_name = false;              // BY NAME (else BY POSITION)
  std::string query;                 // the rows; VALUES as "SELECT * FROM (VALUES ...) AS valueslist"
  bool default_values = false;       // DEFAULT VALUES: `query` is empty
  OnConflict on_conflict = OnConflict::kNone;
  std::vector<std::string> returning;  // RETURNING expressions; empty when none
};

// UPDATE name [[AS] alias] SET col = expr, ... [FROM ...] [WHERE ...] [RETURNING ...].
struct SqlUpdate {
  std::string ctes;
  SqlTarget target;
  std::vector<SqlAssignment> assignments;  // SET (a, b) = (1, 2) comes as two
  std::string from;                        // the FROM clause's table reference, or empty
  std::string where;                       // empty when none
  std::vector<std::string> returning;
};

// DELETE FROM name [[AS] alias] [USING ...] [WHERE ...] [RETURNING ...].
struct SqlDelete {
  std::string ctes;
  SqlTarget target;
  std::vector<std::string> using_tables;  // table references of USING
  std::string where;
  std::vector<std::string> returning;
};

// One WHEN clause of a MERGE.
struct SqlMergeAction {
  enum class When { kMatched, kNotMatchedByTarget, kNotMatchedBySource };
  enum class Kind { kUpdate, kDelete, kInsert, kDoNothing, kError };
  When when = When::kMatched;
  Kind kind = Kind::kUpdate;
  std::string condition;  // the AND condition; empty when none
  // kUpdate: `update_star` for UPDATE SET * and DuckDB's bare UPDATE (no SET list);
  // otherwise the assignments.
  bool update_star = false;
  std::vector<SqlAssignment> assignments;
  // kInsert: `insert_star` for INSERT * and DuckDB's bare INSERT (no VALUES); otherwise
  // `insert_values`, for `insert_columns` (empty: every column in order).
  bool insert_star = false;
  std::vector<std::string> insert_columns;
  std::vector<std::string> insert_values;
  bool default_values = false;  // INSERT DEFAULT VALUES
  bool by_name = false;         // INSERT BY NAME / UPDATE BY NAME
  std::string error_message;    // kError: the message expression, or empty
};

// MERGE INTO target [[AS] alias] USING source [[AS] alias] {ON cond | USING (cols)} WHEN ...
//
// The order of `actions` is DuckDB's, not the statement's: DuckDB groups the clauses by
// kind (WHEN MATCHED, then WHEN NOT MATCHED BY SOURCE, then WHEN NOT MATCHED [BY TARGET]),
// keeps the conditional clauses of each kind in statement order, and moves the one
// unconditional clause of a kind (at most one is allowed) after them. Within a kind the
// first clause whose condition holds applies.
struct SqlMerge {
  std::string ctes;
  SqlTarget target;
  std::string source;        // the USING table reference without its alias: "s", "(SELECT ...)", "f(1)"
  std::string source_alias;  // as given; empty when none
  std::optional<SqlTableName> source_table;  // when the source is a plain table name
  std::string on;                            // empty with USING (cols)
  std::vector<std::string> using_columns;
  std::vector<SqlMergeAction> actions;
  std::vector<std::string> returning;
};

// COPY {table [(cols)] | (query)} {TO | FROM} file [(options)].
struct SqlCopy {
  bool from = false;
  // The file as DuckDB's parser gives it: STDOUT is "/dev/stdout", STDIN "/dev/stdin";
  // empty when it is an expression.
  std::string file;
  // COPY ... TO: its rows as a query, the one given or a SELECT of the table's (listed)
  // columns, as PostgreSQL defines COPY table TO.
  std::string query;
  // The options (in no particular order), names as written; a value as text ('csv', csv and "csv" give
  // csv; TRUE gives true), nullopt for an option without one (HEADER).
  std::vector<std::pair<std::string, std::optional<std::string>>> options;
};

// BEGIN [TRANSACTION], COMMIT (END), ROLLBACK (ABORT).
struct SqlTransaction {
  enum class Kind { kBegin, kCommit, kRollback };
  Kind kind = Kind::kBegin;
};

// SET [SESSION] name {= | TO} value, RESET name (and SET name TO DEFAULT, which DuckDB
// reads as RESET).
struct SqlSet {
  std::string name;  // as written, unquoted
  // The value as text: a constant's value, a bare word's name, a cast constant's value as
  // cast; DuckDB's rendering of any other expression. nullopt for RESET.
  std::optional<std::string> value;
  // SET GLOBAL (every session of the database) and SET VARIABLE (a DuckDB variable, not a
  // setting) are DuckDB's own.
  bool global = false;
  bool variable = false;
};

// SHOW name, and PostgreSQL's SHOW forms DuckDB reads as one name: SHOW TRANSACTION
// ISOLATION LEVEL (transaction_isolation) and SHOW TIME ZONE (timezone). Only for one
// unqualified name: DuckDB's SHOW of a query or of a qualified table is not one.
struct SqlShow {
  std::string name;  // as written, unquoted
};

// One statement as DuckDB's parser reads it.
struct DuckDbStatement {
  std::string type;  // DuckDB's statement type: "SELECT", "INSERT", "CREATE", "MERGE_INTO", ...
  std::variant<std::monostate, SqlInsert, SqlUpdate, SqlDelete, SqlMerge, SqlCopy, SqlTransaction, SqlSet,
               SqlShow>
      dml;
};

// DuckDB's statements in `sql` (usually one), or DuckDB's syntax error.
SqlParse<std::vector<DuckDbStatement>> ParseWithDuckDb(std::string_view sql);

// `COPY (query) TO 'url' (FORMAT parquet)` of `query_sql` when it is one query (SELECT,
// VALUES, FROM t, a set operation, SHOW t), built on DuckDB's syntax tree, so that nothing in
// the query's text can reach past its parentheses; nullopt for any other statement.
std::optional<std::string> CopyQueryToParquetSql(std::string_view query_sql, std::string_view url);

}  // namespace basin::engine
