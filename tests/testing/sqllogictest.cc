#include "testing/sqllogictest.h"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>

#include "basin/pipeline.h"
#include "sql/session.h"
#include "testing/test_util.h"

namespace basin::testing::slt {

namespace {

namespace fs = std::filesystem;

std::vector<std::string> SplitLines(std::string_view text) {
  std::vector<std::string> lines;
  std::string current;
  for (char c : text) {
    if (c == '\n') {
      lines.push_back(std::move(current));
      current.clear();
    } else if (c != '\r') {
      current.push_back(c);
    }
  }
  if (!current.empty()) lines.push_back(std::move(current));
  return lines;
}

std::vector<std::string> SplitWhitespace(std::string_view text) {
  std::vector<std::string> out;
  std::istringstream in{std::string(text)};
  std::string word;
  while (in >> word) out.push_back(word);
  return out;
}

bool IsBlank(std::string_view line) {
  return std::all_of(line.begin(), line.end(), [](unsigned char c) { return std::isspace(c); });
}

std::string Join(const std::vector<std::string>& parts, std::string_view separator) {
  std::string out;
  for (size_t i = 0; i < parts.size(); i++) {
    if (i > 0) out += separator;
    out += parts[i];
  }
  return out;
}

std::optional<ErrorCode> ErrorCodeNamed(std::string_view name) {
  for (int i = static_cast<int>(ErrorCode::kInvalidArgument); i <= static_cast<int>(ErrorCode::kInternal);
       i++) {
    const ErrorCodeInfo& info = GetErrorCodeInfo(static_cast<ErrorCode>(i));
    if (info.name == name) return info.code;
  }
  return std::nullopt;
}

std::string ReplaceAll(std::string text, std::string_view from, std::string_view to) {
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) {
    text.replace(at, from.size(), to);
  }
  return text;
}

// Replaces ${name} by `value` everywhere a record holds text.
void SubstituteInRecord(Record& record, const std::string& name, const std::string& value) {
  const std::string pattern = "${" + name + "}";
  record.sql = ReplaceAll(record.sql, pattern, value);
  for (std::string& line : record.expected_lines) line = ReplaceAll(line, pattern, value);
  if (record.error_substring) record.error_substring = ReplaceAll(*record.error_substring, pattern, value);
}

class Parser {
 public:
  Parser(std::string_view text, std::string name) : lines_(SplitLines(text)), name_(std::move(name)) {}

  Result<Script> Parse() {
    Script script;
    script.name = name_;
    std::vector<Loop> loops;
    while (true) {
      while (next_ < lines_.size() && (IsBlank(lines_[next_]) || lines_[next_][0] == '#')) next_++;
      if (next_ >= lines_.size()) break;
      const int line = static_cast<int>(next_) + 1;
      std::vector<std::string> header = SplitWhitespace(lines_[next_++]);
      const std::string& kind = header[0];
      if (kind == "loop") {
        Loop loop;
        loop.line = line;
        loop.first_record = script.records.size();
        if (header.size() != 4 || !ParseInt(header[2], loop.begin) || !ParseInt(header[3], loop.end) ||
            loop.end < loop.begin) {
          return Error(line, "expected 'loop <name> <begin> <end>' with begin <= end");
        }
        loop.variable = header[1];
        RETURN_IF_ERROR(ExpectNoBody(line, "loop"));
        loops.push_back(std::move(loop));
        continue;
      }
      if (kind == "endloop") {
        if (loops.empty()) return Error(line, "endloop without loop");
        RETURN_IF_ERROR(ExpectNoBody(line, "endloop"));
        Expand(loops.back(), script.records);
        loops.pop_back();
        continue;
      }
      ASSIGN_OR_RETURN(Record record, ParseRecord(line, header));
      script.records.push_back(std::move(record));
    }
    if (!loops.empty()) return Error(loops.back().line, "loop without endloop");
    return script;
  }

 private:
  struct Loop {
    int line = 0;
    std::string variable;
    int64_t begin = 0, end = 0;
    size_t first_record = 0;
  };

  static bool ParseInt(const std::string& text, int64_t& out) {
    if (text.empty()) return false;
    size_t used = 0;
    try {
      out = std::stoll(text, &used);
    } catch (const std::exception&) {
      return false;
    }
    return used == text.size();
  }

  Status Error(int line, const std::string& what) const {
    return Status::InvalidArgument(name_ + ":" + std::to_string(line) + ": " + what);
  }

  // Lines up to the next blank line (or the end); stops before "----" when `stop_at_dashes`.
  std::vector<std::string> Body(bool stop_at_dashes) {
    std::vector<std::string> body;
    while (next_ < lines_.size() && !IsBlank(lines_[next_])) {
      if (stop_at_dashes && lines_[next_] == "----") break;
      body.push_back(lines_[next_++]);
    }
    return body;
  }

  // Consumes a "----" line if one is next.
  bool Dashes() {
    if (next_ < lines_.size() && lines_[next_] == "----") {
      next_++;
      return true;
    }
    return false;
  }

  Status ExpectNoBody(int line, const std::string& kind) {
    if (next_ < lines_.size() && !IsBlank(lines_[next_])) {
      return Error(line, "'" + kind + "' takes no lines after it; separate records with a blank line");
    }
    return Status::OK();
  }

  Result<std::string> Sql(int line, bool stop_at_dashes) {
    std::string sql = Join(Body(stop_at_dashes), "\n");
    if (IsBlank(sql)) return Error(line, "the record has no SQL");
    return sql;
  }

  Result<Record> ParseRecord(int line, const std::vector<std::string>& header) {
    Record record;
    record.line = line;
    const std::string& kind = header[0];
    if (kind == "statement" && header.size() == 2 && header[1] == "ok") {
      record.kind = Record::Kind::kStatementOk;
      ASSIGN_OR_RETURN(record.sql, Sql(line, true));
      if (Dashes()) return Error(line, "'statement ok' has no '----' section");
      return record;
    }
    if (kind == "statement" && header.size() >= 2 && header.size() <= 3 && header[1] == "error") {
      record.kind = Record::Kind::kStatementError;
      if (header.size() == 3) {
        record.error_code = ErrorCodeNamed(header[2]);
        if (!record.error_code)
          return Error(line, "unknown error code '" + header[2] + "' (see include/basin/error_codes.h)");
      }
      ASSIGN_OR_RETURN(record.sql, Sql(line, true));
      if (Dashes()) {
        std::string substring = Join(Body(false), "\n");
        if (substring.empty()) return Error(line, "'----' must be followed by the expected message text");
        record.error_substring = std::move(substring);
      }
      return record;
    }
    if (kind == "query" && header.size() >= 2 && header.size() <= 3) {
      record.kind = Record::Kind::kQuery;
      record.column_types = header[1];
      if (record.column_types.find_first_not_of("ITR") != std::string::npos) {
        return Error(line, "column types '" + header[1] + "' must be letters I, R or T");
      }
      if (header.size() == 3) {
        if (header[2] == "nosort") {
          record.sort = SortMode::kNoSort;
        } else if (header[2] == "rowsort") {
          record.sort = SortMode::kRowSort;
        } else if (header[2] == "valuesort") {
          record.sort = SortMode::kValueSort;
        } else {
          return Error(line, "unknown sort mode '" + header[2] + "' (nosort, rowsort or valuesort)");
        }
      }
      ASSIGN_OR_RETURN(record.sql, Sql(line, true));
      if (Dashes()) record.expected_lines = Body(false);
      return record;
    }
    if (kind == "pipeline" && header.size() == 3 && header[1] == "file") {
      record.kind = Record::Kind::kPipelineFile;
      record.file = header[2];
      ASSIGN_OR_RETURN(record.sql, Sql(line, false));
      return record;
    }
    if (kind == "pipeline" && header.size() >= 2 && header[1] == "run") {
      record.kind = Record::Kind::kPipelineRun;
      if (header.size() == 4 && header[2] == "full-refresh") {
        std::istringstream names(header[3]);
        for (std::string name; std::getline(names, name, ',');) record.full_refresh.push_back(name);
      } else if (header.size() >= 3 && header.size() <= 4 && header[2] == "error") {
        record.fails = true;
        if (header.size() == 4) {
          record.error_code = ErrorCodeNamed(header[3]);
          if (!record.error_code)
            return Error(line, "unknown error code '" + header[3] + "' (see include/basin/error_codes.h)");
        }
        if (Dashes()) {
          std::string substring = Join(Body(false), "\n");
          if (substring.empty()) return Error(line, "'----' must be followed by the expected message text");
          record.error_substring = std::move(substring);
        }
        return record;
      } else if (header.size() != 2) {
        return Error(
            line, "expected 'pipeline run', 'pipeline run full-refresh a,b' or 'pipeline run error [code]'");
      }
      RETURN_IF_ERROR(ExpectNoBody(line, "pipeline run"));
      return record;
    }
    if (kind == "connect" && header.size() <= 2) {
      record.kind = Record::Kind::kConnect;
      if (header.size() == 2) record.user = header[1];
      RETURN_IF_ERROR(ExpectNoBody(line, kind));
      return record;
    }
    if (kind == "restart" && header.size() == 1) {
      record.kind = Record::Kind::kRestart;
      RETURN_IF_ERROR(ExpectNoBody(line, kind));
      return record;
    }
    if (kind == "require" && header.size() == 2) {
      if (header[1] != "testdata")
        return Error(line, "unknown requirement '" + header[1] + "' (known: testdata)");
      record.kind = Record::Kind::kRequire;
      record.requirement = header[1];
      RETURN_IF_ERROR(ExpectNoBody(line, kind));
      return record;
    }
    return Error(line, "cannot read record header '" + Join(header, " ") + "'");
  }

  // Replaces the loop's records by one copy per iteration, ${variable} substituted.
  static void Expand(const Loop& loop, std::vector<Record>& records) {
    std::vector<Record> body(records.begin() + static_cast<std::ptrdiff_t>(loop.first_record), records.end());
    records.resize(loop.first_record);
    for (int64_t i = loop.begin; i < loop.end; i++) {
      const std::string value = std::to_string(i);
      for (Record copy : body) {
        SubstituteInRecord(copy, loop.variable, value);
        const std::string here = loop.variable + "=" + value;
        copy.iteration = copy.iteration.empty() ? here : here + ", " + copy.iteration;
        records.push_back(std::move(copy));
      }
    }
  }

  std::vector<std::string> lines_;
  std::string name_;
  size_t next_ = 0;
};

bool IsIntegerType(const std::string& type) {
  static const char* const kTypes[] = {"TINYINT",  "SMALLINT",  "INTEGER",  "BIGINT",  "HUGEINT",
                                       "UTINYINT", "USMALLINT", "UINTEGER", "UBIGINT", "UHUGEINT"};
  return std::find(std::begin(kTypes), std::end(kTypes), type) != std::end(kTypes);
}

bool IsRealType(const std::string& type) {
  return type == "FLOAT" || type == "DOUBLE" || type.rfind("DECIMAL", 0) == 0;
}

using Rows = std::vector<std::vector<std::string>>;

std::string Render(const std::optional<std::string>& cell) {
  if (!cell) return "NULL";
  if (cell->empty()) return "(empty)";
  return *cell;
}

// One expected line's values: tab-separated when it holds a tab, else one value per column
// separated by runs of spaces (a single-column line is taken whole).
std::vector<std::string> SplitExpectedLine(const std::string& line, size_t columns) {
  if (line.find('\t') != std::string::npos) {
    std::vector<std::string> out;
    std::string cell;
    std::istringstream in(line);
    while (std::getline(in, cell, '\t')) out.push_back(cell);
    if (line.back() == '\t') out.emplace_back();
    return out;
  }
  if (columns == 1) return {line};
  return SplitWhitespace(line);
}

std::string FormatRows(const Rows& rows) {
  std::string out;
  for (const auto& row : rows) out += "  " + Join(row, "\t") + "\n";
  if (rows.empty()) out = "  (no rows)\n";
  return out;
}

class Runner {
 public:
  Runner(const Script& script, const RunOptions& options) : script_(script), options_(options) {}

  RunReport Run() {
    sql::SessionOptions session_options;
    session_options.warehouse_dir = options_.warehouse_dir;
    for (const Record& record : script_.records) {
      if (record.kind == Record::Kind::kRequire) {
        if (!options_.testdata) {
          report_.skip_reason = script_.name + ":" + std::to_string(record.line) +
                                ": requires ../shared/testdata, which was not found (set BASIN_TESTDATA)";
          return std::move(report_);
        }
        continue;
      }
      report_.records_run++;
      const bool reopen = record.kind == Record::Kind::kRestart || record.kind == Record::Kind::kConnect;
      if (record.kind == Record::Kind::kConnect) session_options.user = record.user;
      if (!session_ || reopen) {
        session_.reset();  // the old Session closes before the new one opens on the same warehouse
        auto session = sql::Session::Open(session_options);
        if (!session.ok()) {
          Fail(record, "cannot open a Session: " + session.status().ToString());
          return std::move(report_);
        }
        session_ = std::move(session).value();
        if (reopen) continue;
      }
      // A pipeline file's ${name}s are the pipeline's configuration values, left to it.
      auto sql = record.kind == Record::Kind::kPipelineFile ? Result<std::string>(SubstituteKnown(record.sql))
                                                            : Substitute(record.sql);
      if (!sql.ok()) {
        Fail(record, sql.status().message());
        continue;
      }
      switch (record.kind) {
        case Record::Kind::kPipelineFile:
          WritePipelineFile(record, *sql);
          break;
        case Record::Kind::kPipelineRun:
          RunPipeline(record);
          break;
        case Record::Kind::kStatementOk:
          RunStatementOk(record, *sql);
          break;
        case Record::Kind::kStatementError:
          RunStatementError(record, *sql);
          break;
        case Record::Kind::kQuery:
          RunQuery(record, *sql);
          break;
        case Record::Kind::kRestart:
        case Record::Kind::kConnect:
        case Record::Kind::kRequire:
          break;
      }
    }
    return std::move(report_);
  }

 private:
  // `text` with ${WAREHOUSE} and ${TESTDATA} (when known) replaced.
  std::string SubstituteKnown(const std::string& text) const {
    std::string out = ReplaceAll(text, "${WAREHOUSE}", options_.warehouse_dir);
    if (options_.testdata) out = ReplaceAll(out, "${TESTDATA}", options_.testdata->string());
    return out;
  }

  Result<std::string> Substitute(const std::string& text) const {
    std::string out = SubstituteKnown(text);
    if (size_t at = out.find("${"); at != std::string::npos) {
      size_t end = out.find('}', at);
      std::string variable = out.substr(at, end == std::string::npos ? std::string::npos : end - at + 1);
      if (variable == "${TESTDATA}") {
        return Status::InvalidArgument(
            "uses ${TESTDATA} but ../shared/testdata is absent; add 'require testdata'");
      }
      return Status::InvalidArgument("unknown variable " + variable +
                                     " (known: ${WAREHOUSE}, ${TESTDATA}, loop variables)");
    }
    return out;
  }

  void Fail(const Record& record, const std::string& what, const std::string& sql = "",
            const std::string& details = "") {
    std::string message = script_.name + ":" + std::to_string(record.line);
    if (!record.iteration.empty()) message += " (" + record.iteration + ")";
    message += ": " + what + "\n";
    if (!sql.empty()) message += "SQL:\n  " + ReplaceAll(sql, "\n", "\n  ") + "\n";
    message += details;
    report_.failures.push_back(std::move(message));
  }

  void RunStatementOk(const Record& record, const std::string& sql) {
    auto result = session_->Execute(sql);
    if (!result.ok()) Fail(record, "statement failed: " + result.status().ToString(), sql);
  }

  void RunStatementError(const Record& record, const std::string& sql) {
    CheckError(record, session_->Execute(sql).status(), sql, "the statement");
  }

  // A pipeline's files are in a folder of the run's, beside the warehouse.
  void WritePipelineFile(const Record& record, const std::string& text) {
    if (!pipeline_dir_) pipeline_dir_ = std::make_unique<TempDir>();
    std::ofstream out(pipeline_dir_->path() / record.file, std::ios::binary | std::ios::trunc);
    out << text << "\n";
    if (!out) Fail(record, "cannot write pipeline file " + record.file);
  }

  void RunPipeline(const Record& record) {
    if (!pipeline_dir_) {
      Fail(record, "'pipeline run' before any 'pipeline file'");
      return;
    }
    PipelineOptions options;
    options.folder = pipeline_dir_->str();
    options.warehouse = options_.warehouse_dir;
    options.full_refresh_all = record.full_refresh == std::vector<std::string>{"all"};
    if (!options.full_refresh_all) options.full_refresh = record.full_refresh;
    Status ran = [&]() -> Status {
      ASSIGN_OR_RETURN(std::unique_ptr<Pipeline> pipeline, Pipeline::Open(options));
      return pipeline->Run().status();
    }();
    const std::string what = "pipeline run";
    if (record.fails) {
      CheckError(record, ran, what, "the pipeline run");
    } else if (!ran.ok()) {
      Fail(record, "the pipeline run failed: " + ran.ToString(), what);
    }
  }

  // `status` is the error `record` expects from `what`.
  void CheckError(const Record& record, const Status& status, const std::string& sql,
                  const std::string& what) {
    std::string expected =
        record.error_code ? std::string(GetErrorCodeInfo(*record.error_code).name) : "an error";
    if (status.ok()) {
      Fail(record, "expected " + expected + " but " + what + " succeeded", sql);
      return;
    }
    if (record.error_code && status.code() != *record.error_code) {
      Fail(record, "expected " + expected + ", got " + status.ToString(), sql);
      return;
    }
    if (record.error_substring) {
      std::string wanted = Substitute(*record.error_substring).ValueOr(*record.error_substring);
      if (status.message().find(wanted) == std::string::npos) {
        Fail(record, "error message does not contain the expected text", sql,
             "expected to contain:\n  " + wanted + "\nactual:\n  " + status.ToString() + "\n");
      }
    }
  }

  void RunQuery(const Record& record, const std::string& sql) {
    auto results = session_->Execute(sql);
    if (!results.ok()) {
      Fail(record, "query failed: " + results.status().ToString(), sql);
      return;
    }
    const engine::QueryResult& result = results->back().result;
    const std::string& types = record.column_types;
    if (types.size() != result.column_count()) {
      Fail(record,
           "query declares " + std::to_string(types.size()) + " column(s) (" + types + "), the result has " +
               std::to_string(result.column_count()) + " (" + Join(result.column_names, ", ") + ")",
           sql);
      return;
    }
    for (size_t c = 0; c < types.size(); c++) {
      const std::string& type = result.column_types[c];
      bool fits = types[c] == 'T' || (types[c] == 'I' && IsIntegerType(type)) ||
                  (types[c] == 'R' && IsRealType(type));
      if (!fits) {
        Fail(record,
             "column " + std::to_string(c + 1) + " (" + result.column_names[c] + ") is " + type +
                 ", declared '" + types[c] + "' (I integer, R floating/decimal, T any)",
             sql);
        return;
      }
    }
    Rows actual;
    for (const auto& row : result.rows) {
      std::vector<std::string> cells;
      for (const auto& cell : row) cells.push_back(Render(cell));
      actual.push_back(std::move(cells));
    }
    Rows expected;
    for (size_t i = 0; i < record.expected_lines.size(); i++) {
      auto substituted = Substitute(record.expected_lines[i]);
      if (!substituted.ok()) {
        Fail(record, "expected row " + std::to_string(i + 1) + ": " + substituted.status().message(), sql);
        return;
      }
      std::vector<std::string> cells = SplitExpectedLine(*substituted, types.size());
      if (cells.size() != types.size() && record.sort != SortMode::kValueSort) {
        Fail(record,
             "expected row " + std::to_string(i + 1) + " has " + std::to_string(cells.size()) +
                 " value(s), the query declares " + std::to_string(types.size()) +
                 " column(s); separate values by tabs when they hold spaces",
             sql, "expected row:\n  " + *substituted + "\n");
        return;
      }
      expected.push_back(std::move(cells));
    }
    if (record.sort == SortMode::kRowSort) {
      std::sort(actual.begin(), actual.end());
      std::sort(expected.begin(), expected.end());
    } else if (record.sort == SortMode::kValueSort) {
      auto flatten = [](const Rows& rows) {
        Rows out;
        for (const auto& row : rows) {
          for (const auto& cell : row) out.push_back({cell});
        }
        std::sort(out.begin(), out.end());
        return out;
      };
      actual = flatten(actual);
      expected = flatten(expected);
    }
    if (actual == expected) return;
    std::string first_difference;
    if (actual.size() != expected.size()) {
      first_difference =
          "expected " + std::to_string(expected.size()) + " row(s), got " + std::to_string(actual.size());
    } else {
      for (size_t r = 0; r < actual.size() && first_difference.empty(); r++) {
        if (actual[r] != expected[r]) first_difference = "first difference at row " + std::to_string(r + 1);
      }
    }
    Fail(record, "wrong query result: " + first_difference, sql,
         "expected:\n" + FormatRows(expected) + "actual:\n" + FormatRows(actual));
  }

  const Script& script_;
  const RunOptions& options_;
  std::unique_ptr<sql::Session> session_;
  std::unique_ptr<TempDir> pipeline_dir_;  // the pipeline's .sql files, once a record writes one
  RunReport report_;
};

}  // namespace

Result<Script> ParseScript(std::string_view text, std::string name) {
  return Parser(text, std::move(name)).Parse();
}

Result<Script> ParseScriptFile(const fs::path& path, std::string name) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::NotFound("cannot open " + path.string());
  std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  return ParseScript(text, std::move(name));
}

RunReport RunScript(const Script& script, const RunOptions& options) { return Runner(script, options).Run(); }

fs::path SqlTestRoot() { return fs::path(BASIN_SOURCE_DIR_FOR_TESTS) / "tests" / "sql"; }

std::vector<fs::path> FindTestFiles(const fs::path& root) {
  std::vector<fs::path> files;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(root, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    if (it->is_regular_file() && it->path().extension() == ".test") files.push_back(it->path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace basin::testing::slt
