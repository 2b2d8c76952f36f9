// Avro values in Confluent's wire format: writer schemas from a schema registry on loopback,
// every type converted exactly, a schema inferred from the writer schema, bad records
// refused with the reason (dead letters in a stream), and a registry out of reach failing
// the batch instead of dead-lettering its records.
#include "stream/avro/avro_record.h"

#include <gtest/gtest.h>

#include "avro_test_util.h"
#include "kafka_test_util.h"
#include "runner_test_util.h"
#include "stream/avro/schema_registry.h"
#include "stream/runner.h"

namespace basin::stream {
namespace {

using testing::AvroEncoder;

constexpr char kPaymentSchema[] = R"({"type": "record", "name": "Payment", "fields": [
  {"name": "id", "type": "long"},
  {"name": "amount", "type": {"type": "bytes", "logicalType": "decimal", "precision": 12, "scale": 2}},
  {"name": "ts", "type": {"type": "long", "logicalType": "timestamp-micros"}},
  {"name": "note", "type": ["null", "string"]},
  {"name": "ok", "type": "boolean"},
  {"name": "kind", "type": {"type": "enum", "name": "Kind", "symbols": ["CARD", "CASH"]}},
  {"name": "tags", "type": {"type": "array", "items": "string"}},
  {"name": "day", "type": {"type": "int", "logicalType": "date"}},
  {"name": "score", "type": "double"}]})";

// A Payment record: its fields in the schema's order.
std::string Payment(int32_t schema_id, int64_t id, int16_t cents, const char* note) {
  AvroEncoder record;
  record.Long(id).Decimal16(cents).Long(1'764'547'200'000'000 + id);
  if (note == nullptr) {
    record.Long(0);  // the union's null branch
  } else {
    record.Long(1).String(note);
  }
  record.Boolean(id % 2 == 0).Int(static_cast<int32_t>(id % 2)).Long(2).String("a").String("b").Long(0);
  record.Int(20'424).Double(0.5);
  return record.Framed(schema_id);
}

class AvroRecordTest : public ::testing::Test {
 protected:
  void SetUp() override {
    payment_id_ = registry_.Register(kPaymentSchema);
    ASSERT_OK_AND_ASSIGN(client_, SchemaRegistry::At(registry_.url()));
  }

  Result<std::vector<std::string>> Row(const std::string& schema_text, const std::string& record) {
    ASSIGN_OR_RETURN(RecordSchema schema, ParseRecordSchema(schema_text));
    AvroRecordParser parser(schema, client_);
    std::vector<RecordCell> cells;
    RETURN_IF_ERROR(parser.Parse(record, &cells));
    std::vector<std::string> out;
    for (const RecordCell& cell : cells) {
      out.push_back(std::visit(
          [](const auto& v) -> std::string {
            using T = std::decay_t<decltype(v)>;
            if constexpr (std::is_same_v<T, std::monostate>) return "NULL";
            if constexpr (std::is_same_v<T, std::string>) return v;
            if constexpr (std::is_same_v<T, __int128>) return std::to_string(static_cast<int64_t>(v));
            if constexpr (std::is_same_v<T, bool>) return v ? "true" : "false";
            if constexpr (std::is_same_v<T, int64_t> || std::is_same_v<T, double>) return std::to_string(v);
          },
          cell));
    }
    return out;
  }

  testing::TestSchemaRegistry registry_;
  int32_t payment_id_ = 0;
  std::shared_ptr<SchemaRegistry> client_;
};

TEST_F(AvroRecordTest, FieldsFillTheirColumnsExactly) {
  ASSERT_OK_AND_ASSIGN(std::vector<std::string> row,
                       Row("id BIGINT NOT NULL, amount DECIMAL(14,3), ts TIMESTAMP, note STRING, ok BOOLEAN, "
                           "kind STRING, tags STRING, day DATE, score DOUBLE, missing INT",
                           Payment(payment_id_, 7, -1234, "hi")));
  EXPECT_EQ(row, (std::vector<std::string>{"7", "-12340", std::to_string(1'764'547'200'000'007), "hi",
                                           "false", "CASH", row[6], "20424", std::to_string(0.5), "NULL"}));
  EXPECT_NE(row[6].find("\"a\""), std::string::npos) << row[6];  // an array as its JSON text
  ASSERT_OK_AND_ASSIGN(row, Row("note STRING, ID INT", Payment(payment_id_, 8, 5, nullptr)));
  EXPECT_EQ(row, (std::vector<std::string>{"NULL", "8"}));
  EXPECT_EQ(registry_.gets(), 1);  // the writer schema is fetched once
}

TEST_F(AvroRecordTest, RecordsThatDoNotFitAreRefusedWithTheReason) {
  auto refusal = [&](const std::string& schema, const std::string& record) {
    Result<std::vector<std::string>> row = Row(schema, record);
    EXPECT_FALSE(row.ok());
    EXPECT_EQ(row.status().code(), ErrorCode::kInvalidArgument) << row.status().ToString();
    return row.status().message();
  };
  EXPECT_NE(refusal("id BIGINT", "{\"id\": 1}").find("wire format"), std::string::npos);
  EXPECT_NE(refusal("id BIGINT", AvroEncoder().Long(1).Framed(999)).find("has no schema with id 999"),
            std::string::npos);
  EXPECT_NE(refusal("id BIGINT", AvroEncoder().Long(1).Framed(payment_id_))
                .find("not a record of its writer schema"),
            std::string::npos);
  // What avro-c would trust (the fuzzer's finds): a negative length, an enum symbol beyond the
  // schema's, a union branch it does not have.
  EXPECT_NE(refusal("id BIGINT", AvroEncoder().Long(1).Long(-26).Framed(payment_id_)).find("negative length"),
            std::string::npos);
  AvroEncoder bad_enum;
  bad_enum.Long(1).Decimal16(1).Long(1).Long(0).Boolean(true).Int(57);
  EXPECT_NE(refusal("id BIGINT", bad_enum.Framed(payment_id_)).find("enum symbol 57 of 2"),
            std::string::npos);
  AvroEncoder bad_branch;
  bad_branch.Long(1).Decimal16(1).Long(1).Long(5);
  EXPECT_NE(refusal("id BIGINT", bad_branch.Framed(payment_id_)).find("union branch 5 of 2"),
            std::string::npos);
  EXPECT_NE(refusal("amount DECIMAL(4,1)", Payment(payment_id_, 1, 1234, "x")).find("column amount"),
            std::string::npos);  // 12.34 has more digits than one decimal place
  EXPECT_NE(refusal("id TINYINT", Payment(payment_id_, 300, 1, "x")).find("out of the range"),
            std::string::npos);
  EXPECT_NE(refusal("note STRING NOT NULL", Payment(payment_id_, 1, 1, nullptr)).find("NOT NULL"),
            std::string::npos);
  EXPECT_NE(refusal("ok BIGINT", Payment(payment_id_, 1, 1, "x")).find("an Avro boolean is not a bigint"),
            std::string::npos);
}

TEST_F(AvroRecordTest, TheWriterSchemaGivesTheInferredColumns) {
  const std::string record = Payment(payment_id_, 1, 1, "x");
  ASSERT_OK_AND_ASSIGN(std::string schema, InferAvroSchema({"not avro", record}, *client_));
  EXPECT_EQ(
      schema,
      "\"id\" BIGINT NOT NULL, \"amount\" DECIMAL(12,2) NOT NULL, \"ts\" TIMESTAMP NOT NULL, \"note\" "
      "STRING, "
      "\"ok\" BOOLEAN NOT NULL, \"kind\" STRING NOT NULL, \"tags\" STRING NOT NULL, \"day\" DATE NOT NULL, "
      "\"score\" DOUBLE NOT NULL");
  ASSERT_OK_AND_ASSIGN(std::vector<std::string> row, Row(schema, record));
  EXPECT_EQ(row[1], "1");  // 0.01 at scale 2
  EXPECT_FALSE(InferAvroSchema({"not avro"}, *client_).ok());
}

TEST_F(AvroRecordTest, ARegistryOutOfReachIsNotTheRecordsFault) {
  // A port nothing listens on: the registry of a test that has ended.
  std::string url;
  {
    testing::TestSchemaRegistry gone;
    url = gone.url();
  }
  ASSERT_OK_AND_ASSIGN(auto unreachable, SchemaRegistry::At(url));
  ASSERT_OK_AND_ASSIGN(RecordSchema schema, ParseRecordSchema("id BIGINT"));
  AvroRecordParser parser(schema, unreachable);
  std::vector<RecordCell> cells;
  Status parsed = parser.Parse(AvroEncoder().Long(1).Framed(1), &cells);
  EXPECT_EQ(parsed.code(), ErrorCode::kIOError) << parsed.ToString();
  EXPECT_TRUE(parsed.retryable());
  EXPECT_FALSE(SchemaRegistry::At("localhost:8081").ok());
}

class AvroStreamTest : public kafka::testing::KafkaStreamTest {
 protected:
  void SetUp() override {
    SetUpSession("CREATE TABLE bronze (id BIGINT NOT NULL, amount DECIMAL(12,2), note STRING)");
    payment_id_ = registry_.Register(kPaymentSchema);
  }

  void ProduceValue(const std::string& value) {
    kafka::ProducerRecord record;
    record.partition = 0;
    record.value = value;
    ASSERT_OK(producer_->Produce("payments", record));
  }

  testing::TestSchemaRegistry registry_;
  int32_t payment_id_ = 0;
};

// A stream of Avro payments: good records land, bad ones (not in the wire format, an unknown
// schema id) go to the dead-letter table; without a schema option the columns come from the
// writer schema, recorded in the offsets.
TEST_F(AvroStreamTest, RecordsLandAndBadOnesAreDeadLettered) {
  for (int id = 0; id < 10; id++)
    ProduceValue(Payment(payment_id_, id, static_cast<int16_t>(id * 100 + 5), "n"));
  ProduceValue("{\"id\": 99}");
  ProduceValue(AvroEncoder().Long(1).Framed(4242));
  ASSERT_OK(producer_->Flush(10'000));
  ASSERT_OK_AND_ASSIGN(auto runner,
                       OpenRunner("INSERT INTO bronze SELECT id, amount, note FROM STREAM read_kafka(" +
                                  std::string("bootstrapServers => '") + cluster_->bootstrap_servers() +
                                  "', subscribe => 'payments', startingOffsets => 'earliest', "
                                  "valueFormat => 'avro', schemaRegistryUrl => '" +
                                  registry_.url() + "', deadLetterTable => 'payments_dlq')"));
  ASSERT_OK_AND_ASSIGN(std::optional<BatchCommit> commit, runner->RunBatch());
  ASSERT_TRUE(commit);
  EXPECT_EQ(commit->rows_out, 10);
  EXPECT_EQ(commit->dead_letters, 2);
  EXPECT_EQ(basin::testing::TwoCounts(*session_,
                                      "SELECT count(DISTINCT id), (sum(amount) * 100)::BIGINT FROM bronze"),
            std::make_pair(int64_t{10}, int64_t{4550}));
  EXPECT_EQ(
      basin::testing::FirstColumn(*session_, "SELECT error FROM payments_dlq ORDER BY \"offset\""),
      (std::vector<std::string>{
          "payments/0 offset 10: not in Confluent's Avro wire format (a zero byte, a 4-byte schema id, then "
          "the record)",
          "payments/0 offset 11: the schema registry " + registry_.url() + " has no schema with id 4242"}));
  ASSERT_OK_AND_ASSIGN(std::string offsets, checkpoint_->Get("offsets/00000000000000000000.json"));
  EXPECT_NE(offsets.find(R"(\"amount\" DECIMAL(12,2) NOT NULL)"), std::string::npos) << offsets;
}

}  // namespace
}  // namespace basin::stream
