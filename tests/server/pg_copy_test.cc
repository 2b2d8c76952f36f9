// COPY ... TO STDOUT's options (sql/copy_format.h, read from DuckDB's parse of the statement)
// and the lines they give (server/copy_lines.h), against PostgreSQL's text and CSV formats.
#include <gtest/gtest.h>

#include "engine/sql_text.h"
#include "server/copy_lines.h"
#include "sql/copy_format.h"
#include "testing/test_util.h"

namespace basin::server::pg {
namespace {

Result<CopyFormat> FormatOf(const std::string& statement) {
  engine::SqlParse<std::vector<engine::DuckDbStatement>> parsed = engine::ParseWithDuckDb(statement);
  if (!parsed.ok()) return Status::InvalidArgument(parsed.error().message);
  const auto* copy = std::get_if<engine::SqlCopy>(&parsed.value().at(0).dml);
  if (copy == nullptr) return Status::InvalidArgument("not a COPY");
  return sql::ParseCopyFormat(*copy);
}

TEST(PgCopyTest, DuckDbsParseGivesTheRowsAndTheTarget) {
  auto parsed = engine::ParseWithDuckDb("COPY s.\"Odd Name\" (a, \"B c\") TO STDOUT");
  ASSERT_TRUE(parsed.ok());
  const auto& copy = std::get<engine::SqlCopy>(parsed.value()[0].dml);
  EXPECT_FALSE(copy.from);
  EXPECT_EQ(copy.file, "/dev/stdout");
  EXPECT_EQ(copy.query, "SELECT a, \"B c\" FROM s.\"Odd Name\"");
  auto query = engine::ParseWithDuckDb("COPY (SELECT 1 AS x) TO '/tmp/out.csv' (HEADER)");
  ASSERT_TRUE(query.ok());
  EXPECT_EQ(std::get<engine::SqlCopy>(query.value()[0].dml).file, "/tmp/out.csv");
  EXPECT_EQ(std::get<engine::SqlCopy>(query.value()[0].dml).query, "SELECT 1 AS x");
}

TEST(PgCopyTest, OptionsFollowPostgres) {
  ASSERT_OK_AND_ASSIGN(CopyFormat text, FormatOf("COPY t TO STDOUT"));
  EXPECT_EQ(text.kind, CopyFormat::Kind::kText);
  EXPECT_EQ(text.delimiter, '\t');
  EXPECT_EQ(text.null_string, "\\N");
  EXPECT_FALSE(text.header);
  ASSERT_OK_AND_ASSIGN(CopyFormat csv,
                       FormatOf("COPY t TO STDOUT (FORMAT csv, HEADER true, DELIMITER ';', QUOTE '''')"));
  EXPECT_EQ(csv.kind, CopyFormat::Kind::kCsv);
  EXPECT_TRUE(csv.header);
  EXPECT_EQ(csv.delimiter, ';');
  EXPECT_EQ(csv.null_string, "");
  EXPECT_EQ(csv.quote, '\'');
  EXPECT_EQ(csv.escape, '\'');  // ESCAPE defaults to QUOTE
  // PostgreSQL's older spelling.
  ASSERT_OK_AND_ASSIGN(CopyFormat old, FormatOf("COPY t TO STDOUT WITH CSV HEADER NULL 'none'"));
  EXPECT_EQ(old.kind, CopyFormat::Kind::kCsv);
  EXPECT_TRUE(old.header);
  EXPECT_EQ(old.null_string, "none");

  EXPECT_EQ(FormatOf("COPY t TO STDOUT (FORMAT 'binary')").status().code(), ErrorCode::kNotImplemented);
  EXPECT_EQ(FormatOf("COPY t TO STDOUT (FORMAT parquet)").status().code(), ErrorCode::kNotImplemented);
  EXPECT_EQ(FormatOf("COPY t TO STDOUT (QUOTE '\"')").status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(FormatOf("COPY t TO STDOUT (DELIMITER '--')").status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(FormatOf("COPY t TO STDOUT (FORMAT csv, DELIMITER '\"')").status().code(),
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(FormatOf("COPY t TO STDOUT (ROW_GROUP_SIZE 10)").status().code(), ErrorCode::kInvalidArgument);
}

TEST(PgCopyTest, TextLinesEscapeWithBackslashes) {
  CopyFormat text;
  EXPECT_EQ(CopyLine(text, {"1", std::nullopt, "a\tb\\c\nd"}), "1\t\\N\ta\\tb\\\\c\\nd\n");
  text.delimiter = '|';
  text.null_string = "";
  EXPECT_EQ(CopyLine(text, {"x|y", std::nullopt}), "x\\|y|\n");
  text.header = true;
  EXPECT_EQ(CopyHeaderLine(text, {"id", "a|b"}), "id|a\\|b\n");
}

TEST(PgCopyTest, CsvLinesQuoteWhatNeedsIt) {
  CopyFormat csv;
  csv.kind = CopyFormat::Kind::kCsv;
  csv.delimiter = ',';
  csv.null_string = "";
  // An empty string is quoted so that it differs from NULL.
  EXPECT_EQ(CopyLine(csv, {"1", std::nullopt, "", "a,b", "say \"hi\"", "two\nlines", "plain"}),
            "1,,\"\",\"a,b\",\"say \"\"hi\"\"\",\"two\nlines\",plain\n");
  EXPECT_EQ(CopyLine(csv, {"\\."}), "\"\\.\"\n");  // COPY FROM's end marker, alone on a line
  csv.escape = '\\';
  EXPECT_EQ(CopyLine(csv, {"a\"b\\c,"}), "\"a\\\"b\\\\c,\"\n");
  csv.null_string = "NULL";
  EXPECT_EQ(CopyLine(csv, {"NULL", std::nullopt}), "\"NULL\",NULL\n");
}

}  // namespace
}  // namespace basin::server::pg
