#include "commands/table_ddl.h"

#include <gtest/gtest.h>

#include <set>

#include "delta/log_segment.h"
#include "delta/snapshot.h"
#include "engine/scan.h"
#include "testing/interop.h"
#include "testing/test_util.h"
#include "write_fixture.h"

namespace basin::commands {
namespace {

using Kind = AlterTableRequest::Kind;

using testing::Field;
using testing::Struct;

// WriteFixture's table "t", created, altered and replaced through requests.
class TableDdlTest : public testing::WriteFixture {
 protected:
  using WriteFixture::Create;

  Result<CommandResult> Create(CreateTableRequest request) {
    if (request.name.empty()) request.name = "t";
    return CreateTable(ctx_, Store(), Root(), request);
  }

  Result<CommandResult> Alter(const AlterTableRequest& request) {
    auto snapshot = Load();
    if (snapshot == nullptr) return Status::Internal("no table to alter");
    return AlterTable(ctx_, snapshot, request);
  }

  Result<CommandResult> Replace(CreateTableRequest request) {
    if (request.name.empty()) request.name = "t";
    auto snapshot = Load();
    if (snapshot == nullptr) return Status::Internal("no table to replace");
    return ReplaceTable(ctx_, snapshot, request);
  }

  // The actions of commit `version`.
  std::vector<delta::Action> CommitActions(int64_t version) {
    const std::string name = delta::CommitKey(version);
    auto content = Store()->Get(name);
    EXPECT_TRUE(content.ok()) << content.status().ToString();
    if (!content.ok()) return {};
    auto actions = delta::ParseCommitFile(*content, name);
    EXPECT_TRUE(actions.ok()) << actions.status().ToString();
    return actions.ok() ? *actions : std::vector<delta::Action>{};
  }

  nlohmann::json CommitInfoOf(int64_t version) {
    for (const auto& action : CommitActions(version)) {
      if (const auto* info = std::get_if<delta::CommitInfo>(&action)) return info->raw;
    }
    ADD_FAILURE() << "no commitInfo in version " << version;
    return nlohmann::json::object();
  }

  // A CTAS with ids 1..10 (5 and 7 NULL in `maybe`) partitioned by `part`.
  void CreateWithRows(std::map<std::string, std::string> properties = {}) {
    CreateTableRequest request;
    request.source_sql =
        "SELECT range::BIGINT AS id, CASE WHEN range IN (5, 7) THEN NULL ELSE range * 10 END::INTEGER AS "
        "maybe, "
        "'p' || (range % 2)::VARCHAR AS part FROM range(1, 11)";
    request.partition_columns = {"part"};
    request.properties = std::move(properties);
    ASSERT_OK_AND_ASSIGN(CommandResult result, Create(request));
    ASSERT_EQ(result.commit.version, 0);
    EXPECT_EQ(result.metrics.value("numOutputRows", int64_t{-1}), 10);
  }
};

TEST_F(TableDdlTest, CreateWritesVersionZeroWithSchemaAndProtocol) {
  CreateTableRequest request;
  request.schema.fields = {Field("id", "long", false), Field("name", "string"), Field("day", "date")};
  request.partition_columns = {"DAY"};  // matched case-insensitively, stored as the schema spells it
  request.properties = {{"owner", "me"}, {"delta.appendOnly", "true"}};
  request.description = "people";
  ASSERT_OK_AND_ASSIGN(CommandResult result, Create(request));
  EXPECT_EQ(result.commit.version, 0);

  auto snapshot = Load();
  ASSERT_NE(snapshot, nullptr);
  EXPECT_EQ(snapshot->version, 0);
  EXPECT_EQ(snapshot->protocol.min_reader_version, 1);
  EXPECT_EQ(snapshot->protocol.min_writer_version, 2);
  ASSERT_EQ(snapshot->schema.fields.size(), 3u);
  EXPECT_FALSE(snapshot->schema.fields[0].nullable);
  EXPECT_EQ(snapshot->metadata.partition_columns, std::vector<std::string>{"day"});
  EXPECT_EQ(snapshot->metadata.configuration.at("owner"), "me");
  EXPECT_EQ(snapshot->metadata.name, "t");
  EXPECT_EQ(snapshot->metadata.description, "people");
  EXPECT_EQ(snapshot->metadata.id.size(), 36u);
  EXPECT_TRUE(snapshot->metadata.created_time.has_value());
  EXPECT_TRUE(snapshot->files.empty());
  const delta::CommitSummary commit = LastCommit();
  EXPECT_EQ(commit.operation, "CREATE TABLE");
  const auto& params = commit.operation_parameters;
  EXPECT_EQ(params.value("partitionBy", ""), "[\"day\"]");
  EXPECT_EQ(params.value("isManaged", ""), "false");
  EXPECT_NE(params.value("properties", "").find("delta.appendOnly"), std::string::npos);

  EXPECT_TRUE(Query("SELECT count(*) FROM t")[0][0] == "0");
}

TEST_F(TableDdlTest, CreateRefusesAnExistingTable) {
  CreateTableRequest request;
  request.schema.fields = {Field("id", "long")};
  ASSERT_OK(Create(request));
  ASSERT_ERROR_CODE(Create(request), kAlreadyExists);
}

TEST_F(TableDdlTest, CreateRejectsBadSchemasNamingTheColumn) {
  struct Case {
    std::vector<delta::StructField> fields;
    std::vector<std::string> partitions;
    std::map<std::string, std::string> properties;
    std::string named;
  };
  auto nested = Field("s", Struct({Field("x", "long")}));
  const Case kCases[] = {
      {{}, {}, {}, "at least one column"},
      {{Field("a", "long"), Field("A", "long")}, {}, {}, "'A'"},
      {{Field("a", "long")}, {"b"}, {}, "'b'"},
      {{Field("a", "long"), nested}, {"s"}, {}, "'s'"},
      {{Field("a", "long")}, {"a"}, {}, "every column"},
      {{Field("a b", "long")}, {}, {}, "'a b'"},
      {{Field("a", "long")},
       {},
       {{"delta.enableDeletionVectors", "sometimes"}},
       "delta.enableDeletionVectors"},
      {{Field("a", "long")}, {}, {{"delta.constraints.pos", "b > 0"}}, "pos"},
      {{Field("a", "long")}, {}, {{"delta.constraints.pos", "a + 1"}}, "boolean"},
  };
  for (const auto& c : kCases) {
    CreateTableRequest request;
    request.schema.fields = c.fields;
    request.partition_columns = c.partitions;
    request.properties = c.properties;
    SCOPED_TRACE(c.named);
    ASSERT_ERROR_WITH(Create(request), kInvalidArgument, c.named);
  }
  // Nothing was committed by the failures.
  ASSERT_OK_AND_ASSIGN(auto listing, Store()->List("_delta_log/"));
  EXPECT_TRUE(listing.empty());
}

TEST_F(TableDdlTest, GenerationExpressionsAreCheckedByDuckDB) {
  auto generated = [](const std::string& name, const std::string& type, const std::string& expr) {
    delta::StructField field = Field(name, type);
    field.metadata["delta.generationExpression"] = expr;
    return field;
  };
  const std::pair<std::string, std::string> kBad[] = {
      {"no_such_column + 1", "g"},
      {"other_generated + 1", "g"},  // generated columns may not use each other
      {"(SELECT 1)", "subquery"},
      {"id +", "g"},
  };
  for (const auto& [expr, named] : kBad) {
    CreateTableRequest request;
    request.schema.fields = {Field("id", "long"), generated("g", "long", expr),
                             generated("other_generated", "long", "id * 2")};
    SCOPED_TRACE(expr);
    ASSERT_ERROR_WITH(Create(request), kInvalidArgument, named);
  }
  CreateTableRequest request;
  request.schema.fields = {Field("ts", "timestamp"), generated("day", "date", "CAST(ts AS DATE)")};
  request.partition_columns = {"day"};
  ASSERT_OK(Create(request));
  auto snapshot = Load();
  EXPECT_EQ(snapshot->protocol.min_writer_version, 4);
  EXPECT_EQ(snapshot->schema.fields[1].metadata.value("delta.generationExpression", ""), "CAST(ts AS DATE)");
}

TEST_F(TableDdlTest, ColumnMappingAssignsPhysicalNames) {
  CreateTableRequest request;
  request.schema.fields = {Field("id", "long"), Field("a name with spaces", "string")};
  request.properties = {{"delta.columnMapping.mode", "name"}};
  ASSERT_OK(Create(request));
  auto snapshot = Load();
  EXPECT_EQ(snapshot->protocol.min_reader_version, 2);
  EXPECT_EQ(snapshot->protocol.min_writer_version, 5);
  EXPECT_EQ(snapshot->metadata.configuration.at("delta.columnMapping.maxColumnId"), "2");
  std::set<std::string> physical;
  for (const auto& field : snapshot->schema.fields) {
    ASSERT_TRUE(field.ColumnMappingId().has_value());
    EXPECT_EQ(field.PhysicalName().rfind("col-", 0), 0u);
    physical.insert(field.PhysicalName());
  }
  EXPECT_EQ(physical.size(), 2u);
}

TEST_F(TableDdlTest, FeaturePropertiesGoToTheProtocolOnly) {
  CreateTableRequest request;
  request.schema.fields = {Field("id", "long"), Field("at", "timestamp_ntz")};
  request.properties = {{"delta.enableDeletionVectors", "true"},
                        {"delta.feature.domainMetadata", "supported"}};
  ASSERT_OK(Create(request));
  auto snapshot = Load();
  EXPECT_EQ(snapshot->protocol.min_reader_version, 3);
  EXPECT_EQ(snapshot->protocol.min_writer_version, 7);
  EXPECT_TRUE(snapshot->protocol.HasReaderFeature("deletionVectors"));
  EXPECT_TRUE(snapshot->protocol.HasReaderFeature("timestampNtz"));
  EXPECT_TRUE(snapshot->protocol.HasWriterFeature("domainMetadata"));
  EXPECT_FALSE(snapshot->protocol.HasReaderFeature("domainMetadata"));
  EXPECT_EQ(snapshot->metadata.configuration.count("delta.feature.domainMetadata"), 0u);
}

TEST_F(TableDdlTest, CreateTableAsSelectCommitsRowsInVersionZero) {
  CreateWithRows();
  auto snapshot = Load();
  EXPECT_EQ(snapshot->version, 0);
  EXPECT_EQ(snapshot->metadata.partition_columns, std::vector<std::string>{"part"});
  ASSERT_EQ(snapshot->schema.fields.size(), 3u);
  EXPECT_EQ(snapshot->schema.fields[0].type->primitive, "long");
  EXPECT_EQ(snapshot->schema.fields[1].type->primitive, "integer");
  EXPECT_EQ(snapshot->schema.fields[2].type->primitive, "string");
  EXPECT_GE(snapshot->files.size(), 2u);  // one per partition at least
  EXPECT_EQ(LastCommit().operation, "CREATE TABLE AS SELECT");
  auto rows =
      Query("SELECT count(*), sum(id), count(maybe), string_agg(DISTINCT part, ',' ORDER BY part) FROM t");
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0][0], "10");
  EXPECT_EQ(rows[0][1], "55");
  EXPECT_EQ(rows[0][2], "8");
  EXPECT_EQ(rows[0][3], "p0,p1");
  ASSERT_INTEROP(Root(), 10);
}

TEST_F(TableDdlTest, CreateTableAsSelectEnforcesConstraints) {
  CreateTableRequest request;
  request.source_sql = "SELECT range AS id FROM range(5)";
  request.properties = {{"delta.constraints.small", "id < 3"}};
  ASSERT_ERROR_CODE(Create(request), kInvalidArgument);
  ASSERT_OK_AND_ASSIGN(auto listing, Store()->List("_delta_log/"));
  EXPECT_TRUE(listing.empty());
}

TEST_F(TableDdlTest, AddColumnsAppendsNullableColumns) {
  CreateWithRows();
  AlterTableRequest request;
  request.kind = Kind::kAddColumns;
  request.columns = {Field("note", "string"), Field("at", "timestamp_ntz")};
  ASSERT_OK_AND_ASSIGN(CommandResult result, Alter(request));
  EXPECT_EQ(result.commit.version, 1);
  EXPECT_EQ(LastCommit().operation, "ADD COLUMNS");
  auto snapshot = Load();
  ASSERT_EQ(snapshot->schema.fields.size(), 5u);
  EXPECT_EQ(snapshot->schema.fields[3].name, "note");
  // timestamp_ntz needs its table feature: the protocol went up with the column.
  EXPECT_TRUE(snapshot->protocol.HasReaderFeature("timestampNtz"));
  EXPECT_TRUE(snapshot->protocol.HasWriterFeature("appendOnly"));  // (1,2) implied it
  auto rows = Query("SELECT count(*), count(note) FROM t");
  EXPECT_EQ(rows[0][0], "10");
  EXPECT_EQ(rows[0][1], "0");

  request.columns = {Field("ID", "long")};
  ASSERT_ERROR_CODE(Alter(request), kAlreadyExists);
  request.columns = {Field("strict", "long", false)};
  ASSERT_ERROR_CODE(Alter(request), kInvalidArgument);
}

TEST_F(TableDdlTest, SetAndUnsetProperties) {
  CreateWithRows();
  AlterTableRequest set;
  set.kind = Kind::kSetProperties;
  set.properties = {{"delta.enableChangeDataFeed", "true"}, {"team", "a"}};
  ASSERT_OK(Alter(set));
  auto snapshot = Load();
  EXPECT_EQ(snapshot->protocol.min_writer_version, 4);
  EXPECT_EQ(snapshot->metadata.configuration.at("team"), "a");
  EXPECT_EQ(LastCommit().operation, "SET TBLPROPERTIES");

  set.properties = {{"delta.enableDeletionVectors", "true"}};
  ASSERT_OK(Alter(set));
  snapshot = Load();
  EXPECT_EQ(snapshot->protocol.min_reader_version, 3);
  EXPECT_TRUE(snapshot->protocol.HasReaderFeature("deletionVectors"));
  EXPECT_TRUE(snapshot->protocol.HasWriterFeature("changeDataFeed"));

  set.properties = {{"delta.logRetentionDuration", "soon"}};
  ASSERT_ERROR_CODE(Alter(set), kInvalidArgument);
  set.properties = {{"delta.constraints.x", "id > 0"}};
  ASSERT_ERROR_CODE(Alter(set), kInvalidArgument);

  AlterTableRequest unset;
  unset.kind = Kind::kUnsetProperties;
  unset.property_keys = {"team"};
  ASSERT_OK(Alter(unset));
  EXPECT_EQ(Load()->metadata.configuration.count("team"), 0u);
  ASSERT_ERROR_CODE(Alter(unset), kNotFound);
  unset.if_exists = true;
  ASSERT_OK(Alter(unset));
  EXPECT_EQ(LastCommit().operation, "UNSET TBLPROPERTIES");
}

TEST_F(TableDdlTest, AddConstraintChecksExistingRows) {
  CreateWithRows();
  AlterTableRequest add;
  add.kind = Kind::kAddConstraint;
  add.constraint_name = "Big";
  add.constraint_expr = "id > 3";
  ASSERT_ERROR_WITH(Alter(add), kInvalidArgument, "3 existing row(s)");

  // NULL is a violation, as in Delta: rows 5 and 7 hold NULL in maybe.
  add.constraint_expr = "maybe > 0";
  ASSERT_ERROR_WITH(Alter(add), kInvalidArgument, "2 existing row(s)");

  add.constraint_expr = "id BETWEEN 1 AND 10";
  ASSERT_OK(Alter(add));
  auto snapshot = Load();
  EXPECT_EQ(snapshot->metadata.configuration.at("delta.constraints.big"), "id BETWEEN 1 AND 10");
  EXPECT_EQ(snapshot->protocol.min_writer_version, 3);
  EXPECT_EQ(LastCommit().operation, "ADD CONSTRAINT");
  ASSERT_ERROR_CODE(Alter(add), kAlreadyExists);

  add.constraint_name = "bad";
  add.constraint_expr = "nope > 1";
  ASSERT_ERROR_CODE(Alter(add), kInvalidArgument);

  AlterTableRequest drop;
  drop.kind = Kind::kDropConstraint;
  drop.constraint_name = "BIG";
  ASSERT_OK(Alter(drop));
  EXPECT_EQ(Load()->metadata.configuration.count("delta.constraints.big"), 0u);
  EXPECT_EQ(LastCommit().operation, "DROP CONSTRAINT");
  ASSERT_ERROR_CODE(Alter(drop), kNotFound);
  drop.if_exists = true;
  ASSERT_OK_AND_ASSIGN(CommandResult nothing, Alter(drop));
  EXPECT_EQ(nothing.commit.version, Load()->version);
  EXPECT_FALSE(nothing.notices.empty());
}

TEST_F(TableDdlTest, SetNotNullChecksExistingRows) {
  CreateWithRows();
  AlterTableRequest request;
  request.kind = Kind::kSetNotNull;
  request.column = "maybe";
  ASSERT_ERROR_WITH(Alter(request), kInvalidArgument, "2 existing row(s)");

  request.column = "ID";
  ASSERT_OK(Alter(request));
  EXPECT_FALSE(Load()->schema.fields[0].nullable);
  EXPECT_EQ(LastCommit().operation, "CHANGE COLUMN");

  request.kind = Kind::kDropNotNull;
  ASSERT_OK(Alter(request));
  EXPECT_TRUE(Load()->schema.fields[0].nullable);
  request.column = "missing";
  ASSERT_ERROR_CODE(Alter(request), kNotFound);
}

TEST_F(TableDdlTest, RenameAndDropNeedColumnMapping) {
  CreateWithRows();
  AlterTableRequest rename;
  rename.kind = Kind::kRenameColumn;
  rename.column = "maybe";
  rename.new_name = "value";
  ASSERT_ERROR_WITH(Alter(rename), kInvalidArgument, "delta.columnMapping.mode");

  AlterTableRequest enable;
  enable.kind = Kind::kSetProperties;
  enable.properties = {{"delta.columnMapping.mode", "name"}};
  ASSERT_OK(Alter(enable));
  auto snapshot = Load();
  EXPECT_EQ(snapshot->protocol.min_reader_version, 2);
  EXPECT_EQ(snapshot->protocol.min_writer_version, 5);
  // Existing columns keep their names as physical names: the files hold them so.
  EXPECT_EQ(snapshot->schema.fields[1].PhysicalName(), "maybe");

  ASSERT_OK(Alter(rename));
  EXPECT_EQ(LastCommit().operation, "RENAME COLUMN");
  auto rows = Query("SELECT sum(value) FROM t");
  EXPECT_EQ(rows[0][0], "430");  // 10 * (55 - 5 - 7)

  // Renaming the partition column renames it in the metadata too.
  rename.column = "part";
  rename.new_name = "bucket";
  ASSERT_OK(Alter(rename));
  EXPECT_EQ(Load()->metadata.partition_columns, std::vector<std::string>{"bucket"});
  rows = Query("SELECT count(*) FROM t WHERE bucket = 'p1'");
  EXPECT_EQ(rows[0][0], "5");

  AlterTableRequest constraint;
  constraint.kind = Kind::kAddConstraint;
  constraint.constraint_name = "positive";
  constraint.constraint_expr = "id > 0";
  ASSERT_OK(Alter(constraint));

  AlterTableRequest drop;
  drop.kind = Kind::kDropColumn;
  drop.column = "id";
  ASSERT_ERROR_CODE(Alter(drop), kInvalidArgument);  // the constraint uses it
  drop.column = "bucket";
  ASSERT_ERROR_CODE(Alter(drop), kInvalidArgument);  // partition column
  drop.column = "value";
  ASSERT_OK(Alter(drop));
  EXPECT_EQ(LastCommit().operation, "DROP COLUMNS");
  snapshot = Load();
  ASSERT_EQ(snapshot->schema.fields.size(), 2u);
  rows = Query("SELECT * FROM t LIMIT 1");
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].size(), 2u);
  drop.column = "value";
  ASSERT_ERROR_CODE(Alter(drop), kNotFound);
  drop.if_exists = true;
  ASSERT_OK(Alter(drop));

  // Modes other than none -> name cannot be switched on an existing table.
  enable.properties = {{"delta.columnMapping.mode", "id"}};
  ASSERT_ERROR_CODE(Alter(enable), kInvalidArgument);
  ASSERT_INTEROP(Root(), 10);
}

TEST_F(TableDdlTest, IsolationLevelIsATableProperty) {
  CreateWithRows({{"delta.isolationLevel", "Serializable"}});
  EXPECT_EQ(Load()->metadata.configuration.at("delta.isolationLevel"), "Serializable");
  AlterTableRequest set;
  set.kind = Kind::kSetProperties;
  set.properties = {{"team", "a"}};
  ASSERT_OK(Alter(set));
  // Transactions read the level from the table they start from.
  EXPECT_EQ(CommitInfoOf(1).value("isolationLevel", ""), "Serializable");

  set.properties = {{"delta.isolationLevel", "WriteSerializable"}};
  ASSERT_OK(Alter(set));
  set.properties = {{"team", "b"}};
  ASSERT_OK(Alter(set));
  EXPECT_EQ(CommitInfoOf(3).value("isolationLevel", ""), "WriteSerializable");

  set.properties = {{"delta.isolationLevel", "Snapshot"}};
  ASSERT_ERROR_WITH(Alter(set), kInvalidArgument, "delta.isolationLevel");
  EXPECT_EQ(Load()->version, 3);
}

TEST_F(TableDdlTest, ReplaceCommitsNewMetadataAndRemovesEveryFile) {
  CreateWithRows({{"delta.enableDeletionVectors", "true"}, {"team", "a"}});
  auto before = Load();
  ASSERT_NE(before, nullptr);
  const size_t old_files = before->files.size();
  ASSERT_GE(old_files, 2u);

  CreateTableRequest request;
  request.schema.fields = {Field("name", "string", false), Field("score", "double")};
  request.properties = {{"owner", "me"}};
  request.description = "replaced";
  ASSERT_OK_AND_ASSIGN(CommandResult result, Replace(request));
  EXPECT_EQ(result.commit.version, 1);
  EXPECT_EQ(result.metrics.value("numRemovedFiles", int64_t{-1}), static_cast<int64_t>(old_files));

  auto after = Load();
  ASSERT_NE(after, nullptr);
  EXPECT_EQ(after->version, 1);
  EXPECT_EQ(after->metadata.id, before->metadata.id);
  ASSERT_EQ(after->schema.fields.size(), 2u);
  EXPECT_EQ(after->schema.fields[0].name, "name");
  EXPECT_FALSE(after->schema.fields[0].nullable);
  EXPECT_TRUE(after->metadata.partition_columns.empty());
  EXPECT_EQ(after->metadata.configuration, (std::map<std::string, std::string>{{"owner", "me"}}));
  EXPECT_EQ(after->metadata.description, "replaced");
  EXPECT_TRUE(after->files.empty());
  // The protocol is never lowered: deletion vectors stay supported.
  EXPECT_TRUE(after->protocol.HasReaderFeature("deletionVectors"));
  EXPECT_EQ(LastCommit().operation, "CREATE OR REPLACE TABLE");

  size_t removes = 0;
  bool has_protocol = false;
  for (const auto& action : CommitActions(1)) {
    if (const auto* remove = std::get_if<delta::RemoveFile>(&action)) {
      removes++;
      EXPECT_TRUE(remove->data_change) << remove->path;
    }
    if (std::holds_alternative<delta::Protocol>(action)) has_protocol = true;
  }
  EXPECT_EQ(removes, old_files);
  EXPECT_FALSE(has_protocol);  // nothing new was needed

  // Earlier versions stay readable, and the table takes writes under its new schema.
  auto old = LoadVersion(0);
  ASSERT_NE(old, nullptr);
  EXPECT_EQ(old->num_records(), 10);
  EXPECT_EQ(old->schema.fields.size(), 3u);
  EXPECT_TRUE(Query("SELECT count(*) FROM t")[0][0] == "0");
  ASSERT_INTEROP(Root(), 0);
}

TEST_F(TableDdlTest, ReplaceAsSelectAddsTheQueryRowsAndUpgradesTheProtocol) {
  CreateWithRows();
  const size_t old_files = Load()->files.size();
  CreateTableRequest request;
  request.source_sql = "SELECT range::INTEGER AS n, 'g' || (range % 3)::VARCHAR AS grp FROM range(7)";
  request.partition_columns = {"grp"};
  request.properties = {{"delta.enableChangeDataFeed", "true"}};
  ASSERT_OK_AND_ASSIGN(CommandResult result, Replace(request));
  EXPECT_EQ(result.commit.version, 1);
  EXPECT_EQ(result.metrics.value("numOutputRows", int64_t{-1}), 7);
  EXPECT_EQ(result.metrics.value("numRemovedFiles", int64_t{-1}), static_cast<int64_t>(old_files));
  EXPECT_EQ(LastCommit().operation, "CREATE OR REPLACE TABLE AS SELECT");

  auto after = Load();
  EXPECT_EQ(after->metadata.partition_columns, std::vector<std::string>{"grp"});
  EXPECT_EQ(after->protocol.min_writer_version, 4);  // change data feed
  EXPECT_EQ(after->schema.fields[0].type->primitive, "integer");
  auto rows = Query("SELECT count(*), sum(n), count(DISTINCT grp) FROM t");
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0][0], "7");
  EXPECT_EQ(rows[0][1], "21");
  EXPECT_EQ(rows[0][2], "3");
  EXPECT_EQ(LoadVersion(0)->num_records(), 10);
  ASSERT_INTEROP(Root(), 7);
}

TEST_F(TableDdlTest, FailedReplaceCommitsNothing) {
  CreateWithRows();
  CreateTableRequest bad_property;
  bad_property.schema.fields = {Field("a", "long")};
  bad_property.properties = {{"delta.isolationLevel", "none"}};
  ASSERT_ERROR_CODE(Replace(bad_property), kInvalidArgument);

  CreateTableRequest violating;
  violating.source_sql = "SELECT range AS id FROM range(5)";
  violating.properties = {{"delta.constraints.small", "id < 3"}};
  ASSERT_ERROR_CODE(Replace(violating), kInvalidArgument);

  EXPECT_EQ(Load()->version, 0);
  EXPECT_TRUE(Query("SELECT count(*) FROM t")[0][0] == "10");
}

TEST_F(TableDdlTest, ReplaceRefusesToRemoveTheRowsOfAnAppendOnlyTable) {
  CreateWithRows({{"delta.appendOnly", "true"}});
  CreateTableRequest request;
  request.schema.fields = {Field("a", "long")};
  ASSERT_ERROR_WITH(Replace(request), kInvalidArgument, "delta.appendOnly");
  EXPECT_EQ(Load()->version, 0);
}

TEST_F(TableDdlTest, TxnIdMakesCreateIdempotent) {
  ctx_.txn_id = delta::SetTransaction{"job", 1, std::nullopt};
  CreateTableRequest request;
  request.schema.fields = {Field("id", "long")};
  ASSERT_OK(Create(request));
  EXPECT_EQ(Load()->set_transactions.at("job").version, 1);
}

}  // namespace
}  // namespace basin::commands
