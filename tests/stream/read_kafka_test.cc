// read_kafka as a DuckDB table function: the records of the bounded range a query reads,
// every column as Databricks types it, ranges of many chunks, a query that stops early, the options' parser
// and its errors with their codes.
#include "stream/kafka/read_kafka.h"

#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <thread>
#include <vector>

#include "engine/duckdb.h"
#include "kafka_test_util.h"

namespace basin::stream::kafka {
namespace {

class ReadKafkaTest : public testing::KafkaClusterTest {
 protected:
  void SetUp() override {
    KafkaClusterTest::SetUp();
    ASSERT_OK_AND_ASSIGN(db_, engine::Database::Open());
    ASSERT_OK_AND_ASSIGN(conn_, engine::Connection::Open(db_));
    ASSERT_OK(RegisterReadKafka(conn_->raw()));
  }

  // `select` over read_kafka of the payments topic with `options` added, then `tail`
  // (ORDER BY ...).
  Result<engine::QueryResult> Select(const std::string& select, const std::string& options,
                                     const std::string& tail = "") {
    return conn_->Query(select + " FROM read_kafka(bootstrapServers => '" + cluster_->bootstrap_servers() +
                        "', subscribe => 'payments'" + options + ")" + tail);
  }

  std::shared_ptr<engine::Database> db_;
  std::unique_ptr<engine::Connection> conn_;
};

TEST_F(ReadKafkaTest, ReadsEveryColumnOfTheRecords) {
  ProducerRecord with_headers;
  with_headers.partition = 1;
  with_headers.key = "k-1";
  with_headers.value = R"({"id": 1})";
  with_headers.headers = {{"trace", "abc"}, {"empty", std::nullopt}};
  with_headers.timestamp_ms = 1'700'000'000'123;
  ASSERT_OK(producer_->Produce("payments", with_headers));
  ProducerRecord tombstone;
  tombstone.partition = 2;
  tombstone.key = "k-2";
  ASSERT_OK(producer_->Produce("payments", tombstone));
  ASSERT_OK(producer_->Flush(10'000));
  Produce("payments", 0, 0, 3);

  ASSERT_OK_AND_ASSIGN(
      auto rows,
      Select("SELECT topic, partition, \"offset\", decode(key), decode(value), timestamp::VARCHAR, "
             "timestampType, len(headers), headers[1].key, headers[1].value::VARCHAR, "
             "headers[2].value IS NULL",
             ", startingOffsets => 'earliest'", " ORDER BY partition, \"offset\""));
  ASSERT_EQ(rows.row_count(), 5u);
  EXPECT_EQ(rows.at(0, 0), "payments");
  for (size_t i = 0; i < 3; i++) {
    EXPECT_EQ(rows.at(i, 1), "0");
    EXPECT_EQ(rows.at(i, 2), std::to_string(i));
    EXPECT_EQ(rows.at(i, 3), "k" + std::to_string(i));
    EXPECT_EQ(rows.at(i, 4), "v" + std::to_string(i));
    EXPECT_EQ(rows.at(i, 6), "0");  // create time, set by the producer
    EXPECT_EQ(rows.at(i, 7), "0");
  }
  EXPECT_EQ(rows.at(3, 1), "1");
  EXPECT_EQ(rows.at(3, 4), R"({"id": 1})");
  EXPECT_EQ(rows.at(3, 5), "2023-11-14 22:13:20.123");
  EXPECT_EQ(rows.at(3, 7), "2");
  EXPECT_EQ(rows.at(3, 8), "trace");
  EXPECT_EQ(rows.at(3, 9), "abc");
  EXPECT_EQ(rows.at(3, 10), "true");
  EXPECT_EQ(rows.at(4, 3), "k-2");
  EXPECT_EQ(rows.at(4, 4), std::nullopt);  // a tombstone
}

TEST_F(ReadKafkaTest, ReadsTheBoundedRangeInChunks) {
  constexpr int kRecords = 5'000;  // more than two chunks of one partition
  Produce("payments", 2, 0, kRecords);
  Produce("payments", 0, kRecords, 10);
  ASSERT_OK_AND_ASSIGN(auto all, Select("SELECT count(*), count(DISTINCT value), sum(\"offset\")",
                                        ", startingOffsets => 'earliest'"));
  EXPECT_EQ(all.at(0, 0), std::to_string(kRecords + 10));
  EXPECT_EQ(all.at(0, 1), std::to_string(kRecords + 10));
  EXPECT_EQ(all.at(0, 2), std::to_string(int64_t{kRecords} * (kRecords - 1) / 2 + 45));
  // maxOffsetsPerTrigger bounds what one query reads, shared as a micro-batch would share it.
  ASSERT_OK_AND_ASSIGN(auto bounded, Select("SELECT count(*), count(*) FILTER (WHERE partition = 0) > 0",
                                            ", startingOffsets => 'earliest', maxOffsetsPerTrigger => 1000"));
  EXPECT_EQ(bounded.at(0, 0), "1000");
  EXPECT_EQ(bounded.at(0, 1), "true");  // the small backlog still advances
  // Specific offsets, and the default (latest), which reads nothing that is already there.
  ASSERT_OK_AND_ASSIGN(auto from, Select("SELECT min(\"offset\"), count(*)",
                                         R"(, startingOffsets => '{"payments":{"0":-2,"1":-2,"2":4990}}')"));
  EXPECT_EQ(from.at(0, 0), "0");
  EXPECT_EQ(from.at(0, 1), "20");
  ASSERT_OK_AND_ASSIGN(auto latest, Select("SELECT count(*)", ""));
  EXPECT_EQ(latest.at(0, 0), "0");
}

// A query that stops early (LIMIT) ends the read going on in the background while far more
// records than its queue holds are still to come; the next query reads them all.
TEST_F(ReadKafkaTest, AQueryThatStopsEarlyEndsItsRead) {
  constexpr int kRecords = 40'000;
  Produce("payments", 1, 0, kRecords);
  ASSERT_OK_AND_ASSIGN(auto first,
                       Select("SELECT \"offset\"", ", startingOffsets => 'earliest'", " LIMIT 5"));
  EXPECT_EQ(first.row_count(), 5u);
  ASSERT_OK_AND_ASSIGN(
      auto all, Select("SELECT count(*), count(DISTINCT \"offset\")", ", startingOffsets => 'earliest'"));
  EXPECT_EQ(all.at(0, 0), std::to_string(kRecords));
  EXPECT_EQ(all.at(0, 1), std::to_string(kRecords));
}

// valueFormat 'json' without a schema: the columns are inferred from the records read.
TEST_F(ReadKafkaTest, JsonWithoutASchemaInfersTheColumns) {
  for (int i = 0; i < 4; i++) {
    const std::string value = "{\"id\": " + std::to_string(i) + ", \"name\": \"n" + std::to_string(i) + "\"}";
    ProducerRecord record;
    record.partition = i % 3;
    record.value = value;
    ASSERT_OK(producer_->Produce("payments", record));
  }
  ASSERT_OK(producer_->Flush(10'000));
  ASSERT_OK_AND_ASSIGN(auto rows,
                       Select("SELECT typeof(id), count(*), sum(id), max(name)",
                              ", startingOffsets => 'earliest', valueFormat => 'json'", " GROUP BY ALL"));
  ASSERT_EQ(rows.row_count(), 1u);
  EXPECT_EQ(rows.at(0, 0), "BIGINT");
  EXPECT_EQ(rows.at(0, 1), "4");
  EXPECT_EQ(rows.at(0, 2), "6");
  EXPECT_EQ(rows.at(0, 3), "n3");
  // An empty range has nothing to infer from.
  auto empty = Select("SELECT *", ", startingOffsets => 'latest', valueFormat => 'json'");
  ASSERT_ERROR_CODE(empty, kInvalidArgument);
  EXPECT_NE(empty.status().message().find("give schema"), std::string::npos) << empty.status().ToString();
}

// Parsed records (valueFormat json) are parsed on the read's thread, chunk after chunk: far
// more records than the chunks its queue holds, with one that does not parse among them,
// which fails the query naming it, or is passed over with a dead-letter table.
TEST_F(ReadKafkaTest, ParsedRecordsCrossTheQueueAsRows) {
  constexpr int kRecords = 30'000;  // more than the queue's 8 chunks of 2,048
  constexpr int kBad = 17'123;
  for (int i = 0; i < kRecords; i++) {
    const std::string value =
        i == kBad ? std::string("{\"id\": oops}")
                  : "{\"id\": " + std::to_string(i) + ", \"name\": \"n" + std::to_string(i % 7) + "\"}";
    ProducerRecord record;
    record.partition = 1;
    record.value = value;
    ASSERT_OK(producer_->Produce("payments", record));
  }
  ASSERT_OK(producer_->Flush(30'000));
  const std::string json =
      ", startingOffsets => 'earliest', valueFormat => 'json', schema => 'id BIGINT, name STRING'";
  auto failed = Select("SELECT count(*)", json);
  ASSERT_ERROR_CODE(failed, kInvalidArgument);
  EXPECT_NE(failed.status().message().find("payments/1 offset " + std::to_string(kBad)), std::string::npos)
      << failed.status().ToString();
  EXPECT_NE(failed.status().message().find("deadLetterTable"), std::string::npos)
      << failed.status().ToString();
  ASSERT_OK_AND_ASSIGN(auto rows, Select("SELECT count(*), sum(id), count(DISTINCT name), max(name)",
                                         json + ", deadLetterTable => 'payments_dlq'"));
  EXPECT_EQ(rows.at(0, 0), std::to_string(kRecords - 1));
  EXPECT_EQ(rows.at(0, 1), std::to_string(int64_t{kRecords} * (kRecords - 1) / 2 - kBad));
  EXPECT_EQ(rows.at(0, 2), "7");
  EXPECT_EQ(rows.at(0, 3), "n6");
}

// Strings of every length up to and past the 12 bytes a DuckDB string keeps in its cell,
// with escapes and multi-byte characters, read as rows: each equals the same string as SQL
// spells it, and equal strings from different records (and chunks) group together.
TEST_F(ReadKafkaTest, StringsOfEveryLengthArriveAsTheSqlStringsTheyAre) {
  constexpr int kRounds = 300;  // 6,300 records: chunks of both threads' parsing
  constexpr int kLongest = 20;
  for (int round = 0; round < kRounds; round++) {
    for (int length = 0; length <= kLongest; length++) {
      ProducerRecord record;
      record.partition = 0;
      // Every fifth length is written with an escape (\u00e9, two bytes) and a tab.
      const std::string text = length % 5 == 4 ? std::string(length - 3, 'x') + "\\u00e9\\t"
                                               : std::string(length, static_cast<char>('a' + length));
      const std::string value = "{\"id\": " + std::to_string(round) + ", \"name\": \"" + text + "\"}";
      record.value = value;
      ASSERT_OK(producer_->Produce("payments", record));
    }
  }
  ASSERT_OK(producer_->Flush(30'000));
  ASSERT_OK_AND_ASSIGN(
      auto rows,
      Select("SELECT octet_length(encode(name)), count(*), min(name) = max(name), any_value(name)",
             ", startingOffsets => 'earliest', valueFormat => 'json', schema => 'id BIGINT, name STRING'",
             " GROUP BY name ORDER BY 1"));
  ASSERT_EQ(rows.row_count(), static_cast<size_t>(kLongest + 1));
  for (int length = 0; length <= kLongest; length++) {
    const std::string expected = length % 5 == 4 ? std::string(length - 3, 'x') + "\u00e9\t"
                                                 : std::string(length, static_cast<char>('a' + length));
    EXPECT_EQ(rows.at(length, 0), std::to_string(expected.size())) << "length " << length;
    EXPECT_EQ(rows.at(length, 1), std::to_string(kRounds)) << "length " << length;
    EXPECT_EQ(rows.at(length, 2), "true") << "length " << length;
    EXPECT_EQ(rows.at(length, 3), expected) << "length " << length;
  }
  // Compared with SQL's own strings: the 12-byte one (kept in its cell) and the 13-byte one.
  ASSERT_OK_AND_ASSIGN(auto matched,
                       Select("SELECT count(*) FILTER (name = 'mmmmmmmmmmmm'), count(*) FILTER (name = "
                              "'nnnnnnnnnnnnn')",
                              ", startingOffsets => 'earliest', valueFormat => 'json', schema => 'id BIGINT, "
                              "name STRING'"));
  EXPECT_EQ(matched.at(0, 0), std::to_string(kRounds));
  EXPECT_EQ(matched.at(0, 1), std::to_string(kRounds));
}

// The read's thread parses a chunk when the statement has chunks waiting, else hands it over
// as read (for the statement's thread to parse): a statement that takes its first chunk only
// once the queue is full gets two chunks as read, then parsed ones, and every record once in
// offset order either way.
TEST_F(ReadKafkaTest, TheReadParsesAChunkWhenTheStatementIsBusy) {
  constexpr int kRecords = 12 * 2'048;  // more chunks than the queue holds
  for (int i = 0; i < kRecords; i++) {
    ProducerRecord record;
    record.partition = 0;
    record.value = "{\"id\": " + std::to_string(i) + "}";
    ASSERT_OK(producer_->Produce("payments", record));
  }
  ASSERT_OK(producer_->Flush(30'000));
  ASSERT_OK_AND_ASSIGN(RecordOptions records,
                       ParseRecordOptions({{"valueFormat", "json"}, {"schema", "id BIGINT"}}));
  // A client that knows the partitions' leaders fetches at once (KafkaReader::OpenToRead).
  ASSERT_OK(
      reader_->ListPartitions(testing::ReaderOptions(cluster_->bootstrap_servers()).subscription).status());
  BackgroundRead read(*reader_, {PartitionRange{{"payments", 0}, 0, kRecords}}, nullptr, 2'048, records);
  std::this_thread::sleep_for(std::chrono::seconds(1));  // the queue fills up: 8 chunks
  RowParser parser(records);
  std::vector<RecordCell> cells(1);
  CellRow row(&cells);
  std::vector<bool> parsed;
  int64_t next_id = 0;
  for (;;) {
    ASSERT_OK_AND_ASSIGN(std::optional<ReadChunk> chunk, read.Next());
    if (!chunk) break;
    parsed.push_back(chunk->parsed);
    ASSERT_EQ(chunk->parsed, chunk->table.has_value());
    for (size_t r = 0; r < chunk->size(); r++) {
      if (chunk->parsed) {
        // The rows of a DuckDB chunk: column 0 a BIGINT.
        const auto* ids = static_cast<const int64_t*>(
            duckdb_vector_get_data(duckdb_data_chunk_get_vector(chunk->table->chunk, 0)));
        cells[0] = ids[r];
      } else {
        ASSERT_OK_AND_ASSIGN(bool made, parser.Parse(ViewOf(chunk->records[r]), row));
        ASSERT_TRUE(made);
      }
      ASSERT_EQ(std::get<int64_t>(cells.at(0)), next_id++);
    }
    read.Recycle(*std::move(chunk));
  }
  EXPECT_EQ(next_id, kRecords);
  ASSERT_EQ(parsed.size(), 12u);
  EXPECT_FALSE(parsed[0]);
  EXPECT_FALSE(parsed[1]);
  // Those filled while the statement slept; later ones depend on how fast it takes them.
  for (size_t c = 2; c < 8; c++) EXPECT_TRUE(parsed[c]) << "chunk " << c;
}

// With a dead-letter table, a stream's batch finds its bad records in its one read: those of
// the chunks parsed on the read's thread there, those of the chunks handed over as read where
// the statement parses them. The finding is whole once the statement has taken every chunk,
// and there is none when it stopped before.
TEST_F(ReadKafkaTest, TheReadAndTheStatementFindTheBadRecordsTogether) {
  constexpr int kRecords = 12 * 2'048;  // more chunks than the queue holds
  int bad_records = 0;
  for (int i = 0; i < kRecords; i++) {
    ProducerRecord record;
    record.partition = 0;
    record.value = i % 100 == 7 ? "{oops" : "{\"id\": " + std::to_string(i) + "}";
    bad_records += i % 100 == 7 ? 1 : 0;
    ASSERT_OK(producer_->Produce("payments", record));
  }
  ASSERT_OK(producer_->Flush(30'000));
  ASSERT_OK_AND_ASSIGN(RecordOptions records, ParseRecordOptions({{"valueFormat", "json"},
                                                                  {"schema", "id BIGINT"},
                                                                  {"deadLetterTable", "payments_dlq"}}));
  ASSERT_OK(
      reader_->ListPartitions(testing::ReaderOptions(cluster_->bootstrap_servers()).subscription).status());
  const std::vector<PartitionRange> ranges = {PartitionRange{{"payments", 0}, 0, kRecords}};
  auto bad = std::make_shared<BadRecords>();
  {
    BackgroundRead read(*reader_, ranges, nullptr, 2'048, records, nullptr, nullptr, bad);
    std::this_thread::sleep_for(std::chrono::seconds(1));  // the queue fills up: parsed chunks
    RowParser parser(records, bad.get());  // the statement's, for the chunks handed over as read
    std::vector<RecordCell> cells(1);
    CellRow row(&cells);
    bool some_parsed = false, some_not = false;
    for (;;) {
      ASSERT_OK_AND_ASSIGN(std::optional<ReadChunk> chunk, read.Next());
      if (!chunk) break;
      (chunk->parsed ? some_parsed : some_not) = true;
      for (size_t r = 0; !chunk->parsed && r < chunk->size(); r++) {
        ASSERT_OK(parser.Parse(ViewOf(chunk->records[r]), row).status());
      }
      read.Recycle(*std::move(chunk));
    }
    EXPECT_TRUE(some_parsed);
    EXPECT_TRUE(some_not);
  }
  std::optional<BadRecords::Found> found = bad->TakeIfComplete();
  ASSERT_TRUE(found);
  EXPECT_EQ(found->records, kRecords);
  ASSERT_EQ(found->letters.size(), static_cast<size_t>(bad_records));
  for (size_t i = 0; i < found->letters.size(); i++) {
    const DeadLetter& letter = found->letters[i];
    EXPECT_EQ(letter.offset, static_cast<int64_t>(i * 100 + 7));
    EXPECT_EQ(letter.value, "{oops");
    EXPECT_EQ(letter.error, "payments/0 offset " + std::to_string(i * 100 + 7) + ": not valid JSON");
  }

  // A statement that takes one chunk and stops: the finding is not whole.
  auto partial = std::make_shared<BadRecords>();
  {
    BackgroundRead read(*reader_, ranges, nullptr, 2'048, records, nullptr, nullptr, partial);
    ASSERT_OK_AND_ASSIGN(std::optional<ReadChunk> chunk, read.Next());
    ASSERT_TRUE(chunk);
  }
  EXPECT_FALSE(partial->TakeIfComplete());
}

TEST_F(ReadKafkaTest, BadOptionsNameTheOptionWithTheirCode) {
  auto bad_start = Select("SELECT *", ", startingOffsets => 'sometime'");
  ASSERT_ERROR_CODE(bad_start, kInvalidArgument);
  EXPECT_NE(bad_start.status().message().find("startingOffsets"), std::string::npos)
      << bad_start.status().ToString();
  EXPECT_NE(bad_start.status().message().find("read_kafka"), std::string::npos)
      << bad_start.status().ToString();
  auto no_servers = conn_->Query("SELECT * FROM read_kafka(subscribe => 'payments')");
  ASSERT_ERROR_CODE(no_servers, kInvalidArgument);
  EXPECT_NE(no_servers.status().message().find("bootstrapServers"), std::string::npos)
      << no_servers.status().ToString();
  auto bad_bound = Select("SELECT *", ", maxOffsetsPerTrigger => 0");
  ASSERT_ERROR_CODE(bad_bound, kInvalidArgument);
  EXPECT_NE(bad_bound.status().message().find("maxOffsetsPerTrigger"), std::string::npos)
      << bad_bound.status().ToString();
}

TEST_F(ReadKafkaTest, LibrdkafkaPropertiesComeAsAMap) {
  Produce("payments", 0, 0, 3);
  ASSERT_OK_AND_ASSIGN(auto rows, Select("SELECT count(*)",
                                         ", startingOffsets => 'earliest', kafkaOptions => MAP "
                                         "{'client.id': 'basin-test', 'fetch.max.bytes': '1048576'}"));
  EXPECT_EQ(rows.at(0, 0), "3");
  auto unknown = Select("SELECT *", ", kafkaOptions => MAP {'no.such.property': 'x'}");
  ASSERT_ERROR_CODE(unknown, kInvalidArgument);
  EXPECT_NE(unknown.status().message().find("kafka.no.such.property"), std::string::npos)
      << unknown.status().ToString();
  auto owned = Select("SELECT *", ", kafkaOptions => MAP {'enable.auto.commit': 'true'}");
  ASSERT_ERROR_CODE(owned, kInvalidArgument);
  EXPECT_NE(owned.status().message().find("Basin sets this itself"), std::string::npos)
      << owned.status().ToString();
}

}  // namespace
}  // namespace basin::stream::kafka
