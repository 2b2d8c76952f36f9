#include "commands/table_ddl.h"

#include <gtest/gtest.h>

#include <set>

#include "delta/snapshot.h"
#include "engine/scan.h"
#include "testing/interop.h"
#include "testing/test_util.h"

namespace basin::commands {
namespace {

using Kind = AlterTableRequest::Kind;

delta::DataTypePtr Primitive(const std::string& name) {
  auto type = std::make_shared<delta::DataType>();
  type->primitive = name;
  return type;
}

delta::StructField Field(const std::string& name, const std::string& type, bool nullable = true) {
  delta::StructField field;
  field.name = name;
  field.type = Primitive(type);
  field.nullable = nullable;
  return field;
}

class TableDdlTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_OK_AND_ASSIGN(db_, engine::Database::Open());
    ASSERT_OK_AND_ASSIGN(conn_, engine::Connection::Open(db_));
    ctx_.conn = conn_.get();
    ctx_.txn_options.seed = 7;
  }

  std::string Root() const { return (dir_.path() / "t").string(); }

  std::shared_ptr<ObjectStore> Store() {
    auto store = OpenLocalObjectStore(Root());
    EXPECT_TRUE(store.ok()) << store.status().ToString();
    return *store;
  }

  Result<CommandResult> Create(CreateTableRequest request) {
    if (request.name.empty()) request.name = "t";
    return CreateTable(ctx_, Store(), Root(), request);
  }

  std::shared_ptr<const delta::Snapshot> Load() {
    auto snapshot = delta::LoadSnapshot(Store(), Root(), *conn_);
    EXPECT_TRUE(snapshot.ok()) << snapshot.status().ToString();
    return snapshot.ok() ? std::shared_ptr<const delta::Snapshot>(*snapshot) : nullptr;
  }

  Result<CommandResult> Alter(const AlterTableRequest& request) {
    auto snapshot = Load();
    if (snapshot == nullptr) return Status::Internal("no table to alter");
    return AlterTable(ctx_, snapshot, request);
  }

  // `select` over the table's rows (FROM t), through Basin's own scan.
  std::vector<std::vector<std::optional<std::string>>> Query(const std::string& select) {
    auto snapshot = Load();
    if (snapshot == nullptr) return {};
    auto plan = engine::BuildScanSql(*snapshot, *conn_);
    EXPECT_TRUE(plan.ok()) << plan.status().ToString();
    if (!plan.ok()) return {};
    std::string sql = select;
    sql.replace(sql.find("FROM t"), 6, "FROM (" + plan->sql + ") AS t");
    auto result = conn_->Query(sql);
    engine::DropScanTempTables(*conn_, *plan);
    EXPECT_TRUE(result.ok()) << result.status().ToString();
    return result.ok() ? result->rows : std::vector<std::vector<std::optional<std::string>>>{};
  }

  std::string LastOperation() {
    auto history = delta::ReadHistory(Store(), 1);
    EXPECT_TRUE(history.ok() && !history->empty());
    return history.ok() && !history->empty() ? history->front().operation.value_or("") : "";
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

  testing::TempDir dir_;
  std::shared_ptr<engine::Database> db_;
  std::unique_ptr<engine::Connection> conn_;
  CommandContext ctx_;
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
  EXPECT_EQ(LastOperation(), "CREATE TABLE");

  auto history = delta::ReadHistory(Store(), 1);
  ASSERT_OK(history.status());
  const auto& params = history->front().operation_parameters;
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
  auto nested = Field("s", "long");
  auto st = std::make_shared<delta::DataType>();
  st->kind = delta::DataType::Kind::kStruct;
  st->struct_type.fields = {Field("x", "long")};
  nested.type = st;
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
    auto result = Create(request);
    ASSERT_EQ(result.status().code(), ErrorCode::kInvalidArgument)
        << c.named << ": " << result.status().ToString();
    EXPECT_NE(result.status().message().find(c.named), std::string::npos) << result.status().message();
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
    auto result = Create(request);
    ASSERT_EQ(result.status().code(), ErrorCode::kInvalidArgument)
        << expr << ": " << result.status().ToString();
    EXPECT_NE(result.status().message().find(named), std::string::npos) << result.status().message();
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
  EXPECT_EQ(LastOperation(), "CREATE TABLE AS SELECT");
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
  auto result = Create(request);
  ASSERT_EQ(result.status().code(), ErrorCode::kInvalidArgument) << result.status().ToString();
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
  EXPECT_EQ(LastOperation(), "ADD COLUMNS");
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
  EXPECT_EQ(LastOperation(), "SET TBLPROPERTIES");

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
  EXPECT_EQ(LastOperation(), "UNSET TBLPROPERTIES");
}

TEST_F(TableDdlTest, AddConstraintChecksExistingRows) {
  CreateWithRows();
  AlterTableRequest add;
  add.kind = Kind::kAddConstraint;
  add.constraint_name = "Big";
  add.constraint_expr = "id > 3";
  auto violated = Alter(add);
  ASSERT_EQ(violated.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(violated.status().message().find("3 existing row(s)"), std::string::npos)
      << violated.status().message();

  // NULL is a violation, as in Delta: rows 5 and 7 hold NULL in maybe.
  add.constraint_expr = "maybe > 0";
  violated = Alter(add);
  ASSERT_EQ(violated.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(violated.status().message().find("2 existing row(s)"), std::string::npos)
      << violated.status().message();

  add.constraint_expr = "id BETWEEN 1 AND 10";
  ASSERT_OK(Alter(add));
  auto snapshot = Load();
  EXPECT_EQ(snapshot->metadata.configuration.at("delta.constraints.big"), "id BETWEEN 1 AND 10");
  EXPECT_EQ(snapshot->protocol.min_writer_version, 3);
  EXPECT_EQ(LastOperation(), "ADD CONSTRAINT");
  ASSERT_ERROR_CODE(Alter(add), kAlreadyExists);

  add.constraint_name = "bad";
  add.constraint_expr = "nope > 1";
  ASSERT_ERROR_CODE(Alter(add), kInvalidArgument);

  AlterTableRequest drop;
  drop.kind = Kind::kDropConstraint;
  drop.constraint_name = "BIG";
  ASSERT_OK(Alter(drop));
  EXPECT_EQ(Load()->metadata.configuration.count("delta.constraints.big"), 0u);
  EXPECT_EQ(LastOperation(), "DROP CONSTRAINT");
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
  auto violated = Alter(request);
  ASSERT_EQ(violated.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(violated.status().message().find("2 existing row(s)"), std::string::npos)
      << violated.status().message();

  request.column = "ID";
  ASSERT_OK(Alter(request));
  EXPECT_FALSE(Load()->schema.fields[0].nullable);
  EXPECT_EQ(LastOperation(), "CHANGE COLUMN");

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
  auto refused = Alter(rename);
  ASSERT_EQ(refused.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(refused.status().message().find("delta.columnMapping.mode"), std::string::npos);

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
  EXPECT_EQ(LastOperation(), "RENAME COLUMN");
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
  EXPECT_EQ(LastOperation(), "DROP COLUMNS");
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

TEST_F(TableDdlTest, TxnIdMakesCreateIdempotent) {
  ctx_.txn_id = delta::SetTransaction{"job", 1, std::nullopt};
  CreateTableRequest request;
  request.schema.fields = {Field("id", "long")};
  ASSERT_OK(Create(request));
  EXPECT_EQ(Load()->set_transactions.at("job").version, 1);
}

}  // namespace
}  // namespace basin::commands
