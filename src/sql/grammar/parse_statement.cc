// The statement dispatcher (parse.h): chooses the rule by the first words, reads DuckDB's
// statements through DuckDB's parser, and turns syntax errors into script positions.
#include <functional>

#include "engine/stream_calls.h"
#include "sql/grammar/desugar.h"
#include "sql/grammar/parse.h"
#include "sql/grammar/rules.h"
#include "sql/grammar/slots.h"
#include "sql/grammar/token_stream.h"

namespace basin::sql::grammar {

std::string JoinName(const QualifiedName& name) {
  std::string out;
  for (const std::string& part : name) out += (out.empty() ? "" : ".") + part;
  return out;
}

namespace {

using engine::SqlSyntaxError;

bool IsSyntaxError(const Status& status) {
  return status.code() == ErrorCode::kInvalidArgument && status.message() == TokenStream::kSyntaxErrorMarker;
}

// Where the statement sits in its script, to name lines and columns there.
struct Source {
  std::string_view script;
  size_t offset = 0;

  Status SyntaxError(const SqlSyntaxError& error) const {
    return Status::InvalidArgument(engine::DescribePosition(script, offset + error.offset) + ": " +
                                   error.message);
  }
  // `status` as the statement's error: a syntax error becomes the furthest one `tokens` saw.
  Status Final(const Status& status, const TokenStream& tokens) const {
    if (!IsSyntaxError(status)) return status;
    if (!tokens.furthest_error())
      return Status::InvalidArgument(engine::DescribePosition(script, offset) + ": syntax error");
    return SyntaxError(*tokens.furthest_error());
  }
};

// The statement read by DuckDB's parser (after Desugar when DuckDB refuses it as written).
class DuckDbReader {
 public:
  DuckDbReader(TokenStream& tokens, ParsedStatement& out) : tokens_(tokens), out_(out) {}

  // `sql` must be `out_.text` or a same-length copy of it (offsets of errors stay).
  Result<StatementBody> Read(const std::string& sql) {
    engine::SqlParse<std::vector<engine::DuckDbStatement>> parsed = engine::ParseWithDuckDb(sql);
    // DuckDB accepts STREAM(t) as a call of a table function `stream`, and STREAM f('x') as
    // the table stream aliased; its tree says so.
    out_.duckdb_sql = sql;
    if (!parsed.ok() || HasPostgresSpelling(tokens_, 0, tokens_.size()) ||
        (HasStreamCall(tokens_, 0, tokens_.size()) && engine::ReadsStreamMarker(sql))) {
      std::vector<engine::SqlToken> tokens = tokens_.tokens();
      if (std::optional<Desugared> desugared = Desugar(sql, tokens)) {
        auto again = engine::ParseWithDuckDb(desugared->sql);
        if (again.ok()) {
          out_.duckdb_sql = std::move(desugared->sql);
          out_.streams = std::move(desugared->streams);
          parsed = std::move(again);
        }
      }
    }
    if (!parsed.ok()) return tokens_.ErrorAt(parsed.error().offset, parsed.error().message);
    if (parsed.value().size() != 1) return tokens_.ErrorAt(0, "expected one statement");
    engine::DuckDbStatement& statement = parsed.value()[0];
    if (auto* insert = std::get_if<engine::SqlInsert>(&statement.dml)) {
      grammar::Insert body;
      body.insert = std::move(*insert);
      return StatementBody(std::move(body));
    }
    if (auto* update = std::get_if<engine::SqlUpdate>(&statement.dml)) return StatementBody(Update{*update});
    if (auto* del = std::get_if<engine::SqlDelete>(&statement.dml)) return StatementBody(Delete{*del});
    if (auto* merge = std::get_if<engine::SqlMerge>(&statement.dml)) return StatementBody(Merge{*merge});
    if (auto* copy = std::get_if<engine::SqlCopy>(&statement.dml)) {
      const bool stdio = copy->file == (copy->from ? "/dev/stdin" : "/dev/stdout");
      if (stdio) return StatementBody(CopyStdio{std::move(*copy)});
    }
    if (auto* transaction = std::get_if<engine::SqlTransaction>(&statement.dml)) {
      return StatementBody(TransactionControl{transaction->kind});
    }
    if (auto* set = std::get_if<engine::SqlSet>(&statement.dml))
      return StatementBody(SetVariable{std::move(*set)});
    // DuckDB reads DESCRIBE name as it reads SHOW name; only SHOW asks for a setting.
    auto* show = std::get_if<engine::SqlShow>(&statement.dml);
    if (show != nullptr && tokens_.IsWordAt(0, "SHOW"))
      return StatementBody(ShowVariable{std::move(show->name)});
    return StatementBody(DuckDbStatement{statement.type});
  }

 private:
  TokenStream& tokens_;
  ParsedStatement& out_;
};

class Dispatcher {
 public:
  Dispatcher(TokenStream& tokens, ParsedStatement& out, const Source& source, bool pipeline)
      : tokens_(tokens), out_(out), source_(source), duckdb_(tokens, out), pipeline_(pipeline) {}

  Result<StatementBody> Run() {
    TokenStream& s = tokens_;
    if (s.PeekWords({"CREATE", "TABLE"}) || s.PeekWords({"CREATE", "OR", "REPLACE", "TABLE"})) {
      const bool or_replace = s.PeekWords({"CREATE", "OR"});
      s.Reset(or_replace ? 4 : 2);
      return ParseCreateTable(s, or_replace);
    }
    if (s.IsWordAt(0, "CREATE")) {
      const bool or_refresh = s.PeekWords({"CREATE", "OR", "REFRESH"});
      const size_t at = or_refresh ? 3 : 1;
      const bool streaming = s.IsWordAt(at, "STREAMING") && s.IsWordAt(at + 1, "TABLE");
      const bool view = s.IsWordAt(at, "MATERIALIZED") && s.IsWordAt(at + 1, "VIEW");
      if (streaming || view) {
        s.Reset(at + 2);
        return ParsePipelineTable(s, or_refresh, view);
      }
      const bool temporary = s.IsWordAt(at, "TEMPORARY") || s.IsWordAt(at, "TEMP");
      const size_t live = temporary && s.IsWordAt(at + 1, "LIVE") ? 1 : 0;
      if (pipeline_ && temporary && s.IsWordAt(at + 1 + live, "VIEW")) {
        s.Reset(at + 2 + live);
        CreateTemporaryView create;
        ASSIGN_OR_RETURN(create.name, s.QualifiedName("a view name"));
        RETURN_IF_ERROR(s.ExpectWords({"AS"}));
        ASSIGN_OR_RETURN(create.query, QueryToEnd(s, "a query after AS"));
        return StatementBody(std::move(create));
      }
      if (or_refresh) {
        s.Reset(at);
        return s.Error("STREAMING TABLE or MATERIALIZED VIEW");
      }
    }
    if (s.AcceptWords({"CREATE", "FLOW"})) return ParseCreateFlow(s);
    if (s.PeekWords({"ALTER", "TABLE"})) return AlterTableOrDuckDb();
    if (s.AcceptWords({"SHOW", "TBLPROPERTIES"})) return ParseShowTblProperties(s);
    // PostgreSQL's SHOW ALL (every setting); DuckDB reads it as its SHOW ALL TABLES.
    if (s.PeekWords({"SHOW", "ALL"}) && s.size() == 2) return StatementBody(ShowVariable{"all"});
    if (s.AcceptWords({"OPTIMIZE"})) return ParseOptimize(s);
    if (s.AcceptWords({"RESTORE"})) return ParseRestore(s);
    if (s.PeekWords({"INSERT"})) return Insert();
    if (s.PeekWords({"MERGE", "WITH", "SCHEMA", "EVOLUTION"})) return MergeWithSchemaEvolution();

    BodyOrDuckDb basin = std::optional<StatementBody>();
    if (s.AcceptWords({"DROP", "TABLE"})) {
      basin = ParseDropTable(s);
    } else if (s.AcceptWords({"SHOW", "TABLES"})) {
      basin = ParseShowTables(s);
    } else if (s.AcceptWords({"DESCRIBE"}) || s.AcceptWords({"DESC"})) {
      basin = ParseDescribe(s);
    } else if (s.AcceptWords({"VACUUM"})) {
      basin = ParseVacuum(s);
    } else if (s.PeekWords({"SET"}) || s.PeekWords({"RESET"})) {
      basin = ParseSetting(s);
    } else {
      basin = ParseGovernance(s);
    }
    if (!basin.ok()) return basin.status();
    if (basin->has_value()) return std::move(**basin);
    return duckdb_.Read(out_.text);
  }

 private:
  // INSERT as DuckDB reads it; else Basin's forms (OVERWRITE, PARTITION, ...).
  Result<StatementBody> Insert() {
    Result<StatementBody> duckdb = duckdb_.Read(out_.text);
    if (duckdb.ok() || !IsSyntaxError(duckdb.status())) return duckdb;
    out_.duckdb_sql = out_.text;
    out_.streams.clear();
    tokens_.Reset(1);
    return ParseBasinInsert(tokens_);
  }

  // MERGE WITH SCHEMA EVOLUTION INTO ...: DuckDB's MERGE once the three words are blanked.
  Result<StatementBody> MergeWithSchemaEvolution() {
    std::string sql = out_.text;
    for (size_t k = tokens_.OffsetOf(1); k < tokens_.At(3).end; k++) sql[k] = sql[k] == '\n' ? '\n' : ' ';
    ASSIGN_OR_RETURN(StatementBody body, duckdb_.Read(sql));
    auto* merge = std::get_if<Merge>(&body);
    if (merge == nullptr)
      return tokens_.ErrorAt(tokens_.OffsetOf(4), "expected INTO after WITH SCHEMA EVOLUTION");
    merge->schema_evolution = true;
    return body;
  }

  // One of Basin's ALTER TABLE forms; else DuckDB's ALTER TABLE, which DuckDB runs on its
  // own tables, carrying Basin's error for when the name is a warehouse table.
  Result<StatementBody> AlterTableOrDuckDb() {
    tokens_.Reset(2);
    BodyOrDuckDb basin = ParseAlterTable(tokens_);
    if (basin.ok()) return std::move(**basin);
    const Status basin_error = source_.Final(basin.status(), tokens_);
    AlterTable alter;
    tokens_.Reset(2);
    auto name = tokens_.QualifiedName("a table name");
    if (!name.ok() || !engine::ParseWithDuckDb(out_.text).ok()) return basin.status();
    alter.name = std::move(*name);
    alter.unsupported = basin_error;
    return StatementBody(std::move(alter));
  }

  TokenStream& tokens_;
  ParsedStatement& out_;
  const Source& source_;
  DuckDbReader duckdb_;
  const bool pipeline_;  // a pipeline's file: CREATE TEMPORARY VIEW is the pipeline's
};

Result<ParsedStatement> Parse(const Source& source, std::string_view text, bool pipeline = false) {
  ParsedStatement out;
  out.text = std::string(text);
  out.duckdb_sql = out.text;
  engine::SqlParse<std::vector<engine::SqlToken>> tokens = engine::TokenizeSql(out.text);
  if (!tokens.ok()) return source.SyntaxError(tokens.error());
  if (tokens.value().empty()) return source.SyntaxError({"expected a statement", 0});
  TokenStream stream(out.text, std::move(tokens.value()));
  Result<StatementBody> body = Dispatcher(stream, out, source, pipeline).Run();
  if (!body.ok()) return source.Final(body.status(), stream);
  out.body = std::move(*body);
  return out;
}

}  // namespace

Result<ParsedStatement> ParseStatement(std::string_view script, const engine::ScriptStatement& statement) {
  return Parse(Source{script, statement.offset}, statement.text);
}

Result<ParsedStatement> ParsePipelineStatement(std::string_view script,
                                               const engine::ScriptStatement& statement) {
  return Parse(Source{script, statement.offset}, statement.text, /*pipeline=*/true);
}

Result<ParsedStatement> ParseStatement(std::string_view statement) {
  return Parse(Source{statement, 0}, statement);
}

namespace {

// `read` over the tokens of `text`, which it must read to the end; a syntax error names
// the line and column in `text`.
Status ReadWhole(std::string_view text, const std::function<Status(TokenStream&)>& read) {
  const Source source{text, 0};
  engine::SqlParse<std::vector<engine::SqlToken>> tokens = engine::TokenizeSql(text);
  if (!tokens.ok()) return source.SyntaxError(tokens.error());
  TokenStream stream(text, std::move(tokens.value()));
  Status read_status = read(stream);
  if (read_status.ok()) read_status = stream.ExpectEnd();
  return read_status.ok() ? read_status : source.Final(read_status, stream);
}

}  // namespace

Result<std::string> ReplaceStreamSources(std::string_view statement, std::string_view relation) {
  engine::SqlParse<std::vector<engine::SqlToken>> tokens = engine::TokenizeSql(statement);
  if (!tokens.ok()) return Source{statement, 0}.SyntaxError(tokens.error());
  std::optional<Desugared> desugared = Desugar(statement, tokens.value(), relation);
  return desugared ? std::move(desugared->sql) : std::string(statement);
}

Result<std::vector<std::string>> ParseQualifiedName(std::string_view text) {
  std::vector<std::string> name;
  RETURN_IF_ERROR(ReadWhole(text, [&](TokenStream& stream) -> Status {
    ASSIGN_OR_RETURN(name, stream.QualifiedName("a name"));
    return Status::OK();
  }));
  return name;
}

Result<std::vector<delta::StructField>> ParseColumnList(std::string_view text) {
  std::vector<delta::StructField> columns;
  RETURN_IF_ERROR(ReadWhole(text, [&](TokenStream& stream) -> Status {
    do {
      ASSIGN_OR_RETURN(ColumnDefinition column, ParseColumnDefinition(stream));
      RETURN_IF_ERROR(column.unsupported);
      if (!column.field.metadata.empty()) {
        return Status::InvalidArgument("column " + column.field.name +
                                       ": a record's columns take a name, a type and NOT NULL only");
      }
      columns.push_back(std::move(column.field));
    } while (stream.AcceptSymbol(","));
    return Status::OK();
  }));
  if (columns.empty()) return Status::InvalidArgument("expected at least one column");
  return columns;
}

}  // namespace basin::sql::grammar
