// Typed checkpoint statistics (delta/parsed_stats.h): their JSON form, and the stats index
// built from them directly, which must know exactly what it knows from the same values as
// JSON text, including columns whose type was widened after the checkpoint was written.
#include "delta/parsed_stats.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <random>

#include "delta/file_stats.h"
#include "delta/temporal.h"
#include "testing/test_util.h"

namespace basin::delta {
namespace {

using Kind = ParsedStats::Kind;

Result<StructType> Schema(const std::string& fields) {
  return ParseSchema(R"({"type":"struct","fields":[)" + fields + "]}");
}

std::string Field(const std::string& name, const std::string& type) {
  return R"({"name":")" + name + R"(","type":)" + type + R"(,"nullable":true,"metadata":{}})";
}

TEST(ParsedStatsTest, JsonNestsLeavesAndLeavesOutNullsAndNonFiniteFloats) {
  ParsedStats stats;
  const size_t records = stats.AddLeaf({{"numRecords"}, Kind::kInteger});
  const size_t a = stats.AddLeaf({{"minValues", "a"}, Kind::kInteger});
  const size_t x = stats.AddLeaf({{"minValues", "s", "x"}, Kind::kDouble});
  const size_t y = stats.AddLeaf({{"minValues", "s", "y"}, Kind::kString});
  const size_t dec = stats.AddLeaf({{"minValues", "dec"}, Kind::kDecimal, 2});
  const size_t day = stats.AddLeaf({{"maxValues", "day"}, Kind::kDate});
  const size_t ts = stats.AddLeaf({{"maxValues", "ts"}, Kind::kTimestamp});
  const size_t ntz = stats.AddLeaf({{"maxValues", "ntz"}, Kind::kTimestampNtz});
  const size_t f = stats.AddLeaf({{"maxValues", "f"}, Kind::kFloat});
  const size_t nulls = stats.AddLeaf({{"nullCount", "s", "x"}, Kind::kInteger});
  const size_t tight = stats.AddLeaf({{"tightBounds"}, Kind::kBoolean});

  const uint32_t full = stats.AddRow();
  stats.SetInteger(records, full, 7);
  stats.SetInteger(a, full, -3);
  stats.SetReal(x, full, 0.1);
  stats.SetString(y, full, "q\"\\\n");
  stats.SetDecimal(dec, full, -1205);
  stats.SetInteger(day, full, *ParseDate("2024-02-29"));
  stats.SetInteger(ts, full, *ParseTimestampMicros("2024-01-01 10:00:00.123456"));
  stats.SetInteger(ntz, full, *ParseTimestampMicros("1969-12-31 23:59:59"));
  stats.SetReal(f, full, static_cast<float>(0.1));
  stats.SetInteger(nulls, full, 2);
  stats.SetInteger(tight, full, 0);
  EXPECT_EQ(stats.Json(full),
            R"({"numRecords":7,"minValues":{"a":-3,"s":{"x":0.1,"y":"q\"\\\u000a"},)"
            R"("dec":-12.05},"maxValues":{"day":"2024-02-29","ts":"2024-01-01T10:00:00.123456Z",)"
            R"("ntz":"1969-12-31T23:59:59","f":0.10000000149011612},"nullCount":{"s":{"x":2}},"tightBounds":false})");
  EXPECT_EQ(stats.NumRecords(full), 7);

  // A NULL leaf is left out; an object none of whose leaves has a value is left out whole.
  const uint32_t sparse = stats.AddRow();
  stats.SetInteger(a, sparse, 1);
  stats.SetReal(f, sparse, std::numeric_limits<double>::quiet_NaN());
  stats.SetString(y, sparse, "");
  EXPECT_EQ(stats.Json(sparse), R"({"minValues":{"a":1,"s":{"y":""}}})");
  EXPECT_EQ(stats.NumRecords(sparse), std::nullopt);

  // A leaf added after rows exist is NULL in them.
  const size_t late = stats.AddLeaf({{"maxValues", "late"}, Kind::kInteger});
  EXPECT_FALSE(stats.Valid(late, full));
  EXPECT_EQ(stats.Json(sparse), R"({"minValues":{"a":1,"s":{"y":""}}})");

  // The JSON parses back to the values.
  const nlohmann::json parsed = nlohmann::json::parse(stats.Json(full));
  EXPECT_EQ(parsed["minValues"]["s"]["x"].get<double>(), 0.1);
  EXPECT_EQ(parsed["minValues"]["s"]["y"], "q\"\\\n");
  EXPECT_EQ(parsed["maxValues"]["f"].get<double>(), static_cast<double>(static_cast<float>(0.1)));
}

// The summary of `column` in `file` as text, for comparing two indexes.
std::string Describe(const FileStatsIndex& index, size_t file, size_t column) {
  std::optional<ColumnSummary> summary = index.Summary(file, column);
  if (!summary) return "unknown";
  auto value = [&](const std::optional<StatsValue>& v) -> std::string {
    if (!v) return "-";
    switch (summary->family) {
      case StatsFamily::kFloat:
        return std::to_string(v->real);
      case StatsFamily::kString:
        return "'" + std::string(v->bytes) + "'";
      default:
        return Int128ToString(v->integer);
    }
  };
  return "min " + value(summary->min) + " max " + value(summary->max) + " nulls " +
         (summary->null_count ? std::to_string(*summary->null_count) : "-") + " records " +
         (summary->num_records ? std::to_string(*summary->num_records) : "-");
}

struct TypedColumn {
  std::string name;
  std::string delta_type;  // the column's type in the schema
  Kind kind;               // the statistics' type in the checkpoint
  int scale = 0;
};

// Random statistics for `columns` (nulls, negative values, long strings, sub-millisecond
// timestamps) as typed rows; files point at them.
std::vector<AddFile> RandomTypedFiles(const std::vector<TypedColumn>& columns, int files, uint32_t seed) {
  auto stats = std::make_shared<ParsedStats>();
  const size_t records = stats->AddLeaf({{"numRecords"}, Kind::kInteger});
  struct Leaves {
    size_t min, max, nulls;
  };
  // In the struct's order: every column's minimum, then maxima, then null counts.
  std::vector<Leaves> leaves(columns.size());
  for (const char* bound : {"minValues", "maxValues", "nullCount"}) {
    for (size_t c = 0; c < columns.size(); c++) {
      const std::string_view b = bound;
      const ParsedStats::Leaf leaf{{bound, "n", columns[c].name},
                                   b == "nullCount" ? Kind::kInteger : columns[c].kind,
                                   columns[c].scale};
      (b == "minValues" ? leaves[c].min : b == "maxValues" ? leaves[c].max : leaves[c].nulls) =
          stats->AddLeaf(leaf);
    }
  }
  std::mt19937 rng(seed);
  auto chance = [&](int percent) { return static_cast<int>(rng() % 100) < percent; };
  auto number = [&] { return static_cast<int64_t>(rng() % 2'000'001) - 1'000'000; };
  std::vector<AddFile> out;
  for (int i = 0; i < files; i++) {
    const uint32_t row = stats->AddRow();
    if (!chance(10)) stats->SetInteger(records, row, static_cast<int64_t>(rng() % 1000));
    for (size_t c = 0; c < columns.size(); c++) {
      for (size_t leaf : {leaves[c].min, leaves[c].max}) {
        if (chance(15)) continue;
        switch (columns[c].kind) {
          case Kind::kBoolean:
            stats->SetInteger(leaf, row, static_cast<int64_t>(rng() % 2));
            break;
          case Kind::kInteger:
            stats->SetInteger(leaf, row, number());
            break;
          case Kind::kDate:  // 1942 to 1997
            stats->SetInteger(leaf, row, number() / 100);
            break;
          case Kind::kTimestamp:
          case Kind::kTimestampNtz:
            stats->SetInteger(leaf, row, number() * 1'000'003);
            break;
          case Kind::kFloat:
            stats->SetReal(leaf, row, static_cast<float>(number()) / 7.0F);
            break;
          case Kind::kDouble:
            stats->SetReal(leaf, row, chance(5) ? std::numeric_limits<double>::infinity()
                                                : static_cast<double>(number()) / 7.0);
            break;
          case Kind::kDecimal:
            stats->SetDecimal(leaf, row, Int128{number()} * (chance(20) ? 1'000'000'000'000'000LL : 1));
            break;
          case Kind::kString:
            stats->SetString(leaf, row, std::string(rng() % 40, static_cast<char>('a' + rng() % 26)));
            break;
        }
      }
      if (!chance(15)) stats->SetInteger(leaves[c].nulls, row, static_cast<int64_t>(rng() % 5));
    }
    AddFile add;
    add.path = "f" + std::to_string(i);
    add.parsed_stats = stats;
    add.parsed_stats_row = row;
    out.push_back(std::move(add));
  }
  return out;
}

// Builds the index from the typed stats and from their JSON, and compares every summary.
void ExpectTypedReadsAsItsJson(const std::vector<TypedColumn>& columns, uint32_t seed) {
  std::string fields;
  for (const TypedColumn& c : columns) fields += (fields.empty() ? "" : ",") + Field(c.name, c.delta_type);
  ASSERT_OK_AND_ASSIGN(StructType schema, Schema(Field("n", R"({"type":"struct","fields":[)" + fields + "]}")));
  const std::vector<AddFile> typed = RandomTypedFiles(columns, 300, seed);
  std::vector<AddFile> text = typed;
  for (AddFile& add : text) {
    add.stats = StatsJson(add);
    add.parsed_stats.reset();
  }
  const Metadata metadata;
  auto typed_index = FileStatsIndex::Build(FileStatsIndex::MakeLayout(schema, metadata), typed);
  auto text_index = FileStatsIndex::Build(FileStatsIndex::MakeLayout(schema, metadata), text);
  ASSERT_EQ(typed_index->num_files(), text_index->num_files());
  size_t known = 0;
  for (const TypedColumn& c : columns) {
    const std::optional<size_t> column = typed_index->FindColumn(ColumnPath{"n", c.name});
    ASSERT_TRUE(column) << c.name;
    for (size_t file = 0; file < typed.size(); file++) {
      const std::string expected = Describe(*text_index, file, *column);
      EXPECT_EQ(Describe(*typed_index, file, *column), expected)
          << c.name << " (" << c.delta_type << ") file " << file << ": " << *text[file].stats;
      known += expected.find("min -") == std::string::npos;
    }
  }
  for (size_t file = 0; file < typed.size(); file++) {
    EXPECT_EQ(typed_index->NumRecords(file), text_index->NumRecords(file));
  }
  EXPECT_GT(known, typed.size());  // the comparison saw values, not only unknowns
}

TEST(ParsedStatsIndexTest, TypedStatsReadAsTheirJsonForEveryType) {
  ExpectTypedReadsAsItsJson({{"b", R"("boolean")", Kind::kBoolean},
                             {"i", R"("integer")", Kind::kInteger},
                             {"l", R"("long")", Kind::kInteger},
                             {"f", R"("float")", Kind::kFloat},
                             {"d", R"("double")", Kind::kDouble},
                             {"narrow", "\"decimal(12,2)\"", Kind::kDecimal, 2},
                             {"wide", "\"decimal(38,4)\"", Kind::kDecimal, 4},
                             {"s", R"("string")", Kind::kString},
                             {"day", R"("date")", Kind::kDate},
                             {"ts", R"("timestamp")", Kind::kTimestamp},
                             {"ntz", R"("timestamp_ntz")", Kind::kTimestampNtz}},
                            1);
}

TEST(ParsedStatsIndexTest, StatsOfAColumnWidenedSinceReadAsTheirJson) {
  ExpectTypedReadsAsItsJson({{"int_to_double", R"("double")", Kind::kInteger},
                             {"float_to_double", R"("double")", Kind::kFloat},
                             {"int_to_decimal", "\"decimal(20,3)\"", Kind::kInteger},
                             {"scale_up", "\"decimal(20,4)\"", Kind::kDecimal, 2},
                             {"date_to_ntz", R"("timestamp_ntz")", Kind::kDate},
                             {"mismatch", R"("string")", Kind::kInteger}},
                            2);
}

TEST(ParsedStatsIndexTest, WidenedBoundsAndExactDecimals) {
  ASSERT_OK_AND_ASSIGN(StructType schema, Schema(Field("s", R"("string")") + "," + Field("ts", R"("timestamp")") +
                                                     "," + Field("dec", "\"decimal(10,2)\"")));
  auto stats = std::make_shared<ParsedStats>();
  const size_t s_max = stats->AddLeaf({{"maxValues", "s"}, Kind::kString});
  const size_t s_min = stats->AddLeaf({{"minValues", "s"}, Kind::kString});
  const size_t ts_max = stats->AddLeaf({{"maxValues", "ts"}, Kind::kTimestamp});
  const size_t dec_min = stats->AddLeaf({{"minValues", "dec"}, Kind::kDecimal, 3});
  const size_t dec_max = stats->AddLeaf({{"maxValues", "dec"}, Kind::kDecimal, 3});
  const uint32_t row = stats->AddRow();
  const std::string long_string(32, 'z');
  stats->SetString(s_max, row, long_string);
  stats->SetString(s_min, row, long_string);
  stats->SetInteger(ts_max, row, 5'000'000);
  stats->SetDecimal(dec_min, row, 1230);  // 1.230: exact at scale 2
  stats->SetDecimal(dec_max, row, 1234);  // 1.234: not
  AddFile add;
  add.parsed_stats = stats;
  auto index = FileStatsIndex::Build(FileStatsIndex::MakeLayout(schema, Metadata()), FileList{add});
  auto s = index->Summary(0, *index->FindColumn(ColumnPath{"s"}));
  ASSERT_TRUE(s);
  EXPECT_FALSE(s->max);  // may be a truncated prefix
  ASSERT_TRUE(s->min);
  EXPECT_EQ(s->min->bytes, long_string);
  auto ts = index->Summary(0, *index->FindColumn(ColumnPath{"ts"}));
  ASSERT_TRUE(ts && ts->max);
  EXPECT_EQ(ts->max->integer, 5'001'000);  // Spark truncates to milliseconds
  auto dec = index->Summary(0, *index->FindColumn(ColumnPath{"dec"}));
  ASSERT_TRUE(dec && dec->min);
  EXPECT_EQ(dec->min->integer, 123);
  EXPECT_FALSE(dec->max);
  EXPECT_EQ(index->NumRecords(0), std::nullopt);
}

}  // namespace
}  // namespace basin::delta
