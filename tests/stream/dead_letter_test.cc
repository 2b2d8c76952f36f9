// Streams of JSON records with a declared schema: good records land in the sink, those that
// do not parse or fit in the dead-letter table with the error and their coordinates, once
// each however often a batch runs, and so do rows the sink's constraints refuse;
// maxDeadLetterFraction stops the stream instead; without a dead-letter table a bad record
// fails the batch, naming it.
#include <gtest/gtest.h>

#include "kafka_test_util.h"
#include "runner_test_util.h"
#include "stream/dead_letters.h"
#include "stream/kafka/read_kafka.h"
#include "stream/runner.h"

namespace basin::stream {
namespace {

class DeadLetterTest : public kafka::testing::KafkaStreamTest {
 protected:
  void SetUp() override { SetUpSession("CREATE TABLE bronze (id BIGINT NOT NULL, amount DECIMAL(12,2))"); }

  // read_kafka's arguments for JSON payments, with `extra` options.
  std::string Source(const std::string& extra) const {
    return "read_kafka(bootstrapServers => '" + cluster_->bootstrap_servers() +
           "', subscribe => 'payments', startingOffsets => 'earliest', valueFormat => 'json', "
           "schema => 'id BIGINT NOT NULL, amount DECIMAL(12,2)'" +
           extra + ")";
  }

  std::string Statement(const std::string& extra = ", deadLetterTable => 'payments_dlq'") const {
    return "INSERT INTO bronze SELECT * FROM STREAM " + Source(extra);
  }

  void ProduceValue(int32_t partition, const std::string& value) {
    kafka::ProducerRecord record;
    record.partition = partition;
    record.value = value;
    ASSERT_OK(producer_->Produce("payments", record));
  }

  // Good payments id = first..first+count-1 on partition 0, and after each fifth one a bad
  // record on partition 1 (returns how many bad ones).
  int ProducePayments(int first, int count) {
    int bad = 0;
    for (int id = first; id < first + count; id++) {
      ProduceValue(0, "{\"id\": " + std::to_string(id) + ", \"amount\": " + std::to_string(id) + ".25}");
      if (id % 5 == 4) {
        ProduceValue(1, bad++ % 2 == 0 ? "{\"id\": \"x" + std::to_string(id) + "\"}" : "{oops");
      }
    }
    EXPECT_OK(producer_->Flush(10'000));
    return bad;
  }

  std::pair<int64_t, int64_t> Counts(const std::string& query) {
    return basin::testing::TwoCounts(*session_, query);
  }

  // Produces CSV `values` to partition 0, then runs one batch of INSERT INTO bronze SELECT
  // `columns` over them (valueFormat 'csv', a dead-letter table, and `options`), which must
  // write two rows and set one record aside.
  void RunCsvBatch(const std::vector<std::string>& values, const std::string& columns,
                   const std::string& options) {
    for (const std::string& value : values) ProduceValue(0, value);
    ASSERT_OK(producer_->Flush(10'000));
    ASSERT_OK_AND_ASSIGN(
        auto runner,
        OpenRunner("INSERT INTO bronze SELECT " + columns + " FROM STREAM read_kafka(bootstrapServers => '" +
                   cluster_->bootstrap_servers() +
                   "', subscribe => 'payments', startingOffsets => 'earliest', valueFormat => "
                   "'csv', deadLetterTable => 'payments_dlq'" +
                   options + ")"));
    ASSERT_OK_AND_ASSIGN(std::optional<BatchCommit> commit, runner->RunBatch());
    ASSERT_TRUE(commit);
    EXPECT_EQ(commit->rows_out, 2);
    EXPECT_EQ(commit->dead_letters, 1);
  }
};

TEST_F(DeadLetterTest, BadRecordsGoToTheDeadLetterTableWithTheirErrorAndCoordinates) {
  const int bad = ProducePayments(0, 20);
  ASSERT_EQ(bad, 4);
  ASSERT_OK_AND_ASSIGN(auto runner, OpenRunner(Statement()));
  ASSERT_OK_AND_ASSIGN(std::optional<BatchCommit> commit, runner->RunBatch());
  ASSERT_TRUE(commit);
  EXPECT_EQ(commit->rows_in, 24);
  EXPECT_EQ(commit->rows_out, 20);
  EXPECT_EQ(commit->dead_letters, 4);
  ASSERT_TRUE(commit->dead_letter_version);
  EXPECT_EQ(*commit->dead_letter_version, 1);  // version 0 created the table
  EXPECT_EQ(Counts("SELECT count(*), count(DISTINCT id) FROM bronze"),
            std::make_pair(int64_t{20}, int64_t{20}));
  EXPECT_EQ(Counts("SELECT count(*), sum(amount * 4)::BIGINT FROM bronze"),
            std::make_pair(int64_t{20}, int64_t{780}));
  ASSERT_OK_AND_ASSIGN(
      auto letters, session_->Execute("SELECT topic, partition, \"offset\", decode(value), error, stream_id, "
                                      "batch_id, dead_lettered_at IS NOT NULL FROM payments_dlq ORDER BY 3"));
  const engine::QueryResult& rows = letters.back().result;
  ASSERT_EQ(rows.row_count(), 4u);
  EXPECT_EQ(*rows.at(0, 0), "payments");
  EXPECT_EQ(*rows.at(0, 1), "1");
  EXPECT_EQ(*rows.at(0, 2), "0");
  EXPECT_EQ(*rows.at(0, 3), "{\"id\": \"x4\"}");
  EXPECT_EQ(*rows.at(0, 4), "payments/1 offset 0: column id: \"x4\" is not a bigint");
  EXPECT_EQ(*rows.at(1, 4), "payments/1 offset 1: not valid JSON");
  EXPECT_EQ(*rows.at(0, 5), runner->metadata().stream_id);
  EXPECT_EQ(*rows.at(0, 6), "0");
  EXPECT_EQ(*rows.at(0, 7), "true");
  // A batch of good records only writes no dead letters.
  ProducePayments(20, 3);
  ASSERT_OK_AND_ASSIGN(std::optional<BatchCommit> clean, runner->RunBatch());
  ASSERT_TRUE(clean);
  EXPECT_EQ(clean->dead_letters, 0);
  EXPECT_FALSE(clean->dead_letter_version);
  EXPECT_EQ(Counts("SELECT count(*), count(DISTINCT \"offset\") FROM payments_dlq"),
            std::make_pair(int64_t{4}, int64_t{4}));
}

// valueFormat 'json' without a schema: the stream's first batch infers one from its records
// and records it in the offsets; later batches and restarts read with it, so a record that
// does not fit it is a dead letter rather than a new column type.
TEST_F(DeadLetterTest, WithoutASchemaTheFirstBatchInfersOneAndKeepsIt) {
  const std::string statement =
      "INSERT INTO bronze SELECT id, amount FROM STREAM read_kafka(bootstrapServers => '" +
      cluster_->bootstrap_servers() +
      "', subscribe => 'payments', startingOffsets => 'earliest', valueFormat => 'json', "
      "deadLetterTable => 'payments_dlq')";
  for (int id = 0; id < 5; id++) {
    ProduceValue(id % 2, "{\"id\": " + std::to_string(id) + ", \"amount\": " + std::to_string(id) + ".5}");
  }
  ASSERT_OK(producer_->Flush(10'000));
  ASSERT_OK_AND_ASSIGN(auto runner, OpenRunner(statement));
  ASSERT_OK_AND_ASSIGN(std::optional<BatchCommit> first, runner->RunBatch());
  ASSERT_TRUE(first);
  EXPECT_EQ(first->rows_out, 5);
  ASSERT_OK_AND_ASSIGN(std::string offsets, checkpoint_->Get("offsets/00000000000000000000.json"));
  EXPECT_NE(offsets.find(R"("schema":"\"id\" BIGINT, \"amount\" DOUBLE")"), std::string::npos) << offsets;

  ProduceValue(0, "{\"id\": \"seven\", \"amount\": 1}");
  ProduceValue(0, "{\"id\": 8, \"amount\": 2, \"extra\": \"x\"}");
  ASSERT_OK(producer_->Flush(10'000));
  runner.reset();  // a restart reads with the schema the offsets hold
  ASSERT_OK_AND_ASSIGN(runner, OpenRunner(statement));
  ASSERT_OK_AND_ASSIGN(std::optional<BatchCommit> second, runner->RunBatch());
  ASSERT_TRUE(second);
  EXPECT_EQ(second->rows_out, 1);
  EXPECT_EQ(second->dead_letters, 1);
  EXPECT_EQ(Counts("SELECT count(*), sum(amount * 2)::BIGINT FROM bronze"),
            std::make_pair(int64_t{6}, int64_t{29}));
}

// A batch's dead letters commit just before its sink does: a batch whose statement fails
// commits none, and its run again commits them once.
TEST_F(DeadLetterTest, ABatchThatFailsCommitsNoDeadLettersAndItsRunAgainCommitsThemOnce) {
  ProducePayments(0, 10);
  // The sink's statement fails (a generated column that cannot be computed); once the sink
  // is replaced by one that takes the rows, the batch runs again.
  ASSERT_OK(session_
                ->Execute("CREATE OR REPLACE TABLE bronze (id BIGINT NOT NULL, amount DECIMAL(12,2), "
                          "broken BIGINT GENERATED ALWAYS AS (CAST('x' || id AS BIGINT)))")
                .status());
  ASSERT_OK_AND_ASSIGN(auto runner, OpenRunner(Statement()));
  EXPECT_FALSE(runner->RunBatch().ok());
  ASSERT_OK_AND_ASSIGN(auto tables, session_->Execute("SHOW TABLES"));
  EXPECT_EQ(tables.back().result.row_count(), 1u);  // bronze only: no dead-letter table yet
  ASSERT_OK(session_->Execute("CREATE OR REPLACE TABLE bronze (id BIGINT NOT NULL, amount DECIMAL(12,2))")
                .status());
  runner.reset();
  ASSERT_OK_AND_ASSIGN(auto restarted, OpenRunner(Statement()));
  ASSERT_OK_AND_ASSIGN(std::optional<BatchCommit> rerun, restarted->RunBatch());
  ASSERT_TRUE(rerun);
  EXPECT_EQ(rerun->batch_id, 0);
  EXPECT_EQ(rerun->rows_out, 10);
  EXPECT_EQ(rerun->dead_letters, 2);
  EXPECT_EQ(Counts("SELECT count(*), count(DISTINCT \"offset\") FROM payments_dlq"),
            std::make_pair(int64_t{2}, int64_t{2}));
  EXPECT_EQ(Counts("SELECT count(*), count(DISTINCT id) FROM bronze"),
            std::make_pair(int64_t{10}, int64_t{10}));
}

// A crash between a batch's two commits leaves its dead letters committed and its sink
// without it: run again, the batch adds none of them twice.
TEST_F(DeadLetterTest, ABatchRunAgainAfterItsDeadLettersCommittedAddsThemOnce) {
  ProducePayments(0, 10);  // the bad records: partition 1, offsets 0 and 1
  ASSERT_OK_AND_ASSIGN(auto runner, OpenRunner(Statement()));
  // What batch 0 committed before the crash, as it commits it.
  DeadLetterWriter writer(*session_, runner->metadata().stream_id, 0);
  std::vector<DeadLetter> letters(2);
  for (int i = 0; i < 2; i++) {
    letters[i].error = "committed before the crash";
    letters[i].topic = "payments";
    letters[i].partition = 1;
    letters[i].offset = i;
  }
  ASSERT_OK(writer.Write("payments_dlq", 0, letters).status());
  ASSERT_OK_AND_ASSIGN(std::optional<BatchCommit> rerun, runner->RunBatch());
  ASSERT_TRUE(rerun);
  EXPECT_EQ(rerun->batch_id, 0);
  EXPECT_EQ(rerun->rows_out, 10);
  EXPECT_EQ(Counts("SELECT count(*), count(DISTINCT \"offset\") FROM payments_dlq"),
            std::make_pair(int64_t{2}, int64_t{2}));
  EXPECT_EQ(basin::testing::FirstColumn(*session_, "SELECT DISTINCT error FROM payments_dlq"),
            (std::vector<std::string>{"committed before the crash"}));
}

// The statement's own read finds the records that do not parse; a statement that stops
// reading early (a LIMIT) leaves records unread, and the batch reads them for their dead
// letters, so each bad record of the batch is set aside however much the statement read.
TEST_F(DeadLetterTest, AStatementThatStopsReadingEarlyStillSetsEveryBadRecordAside) {
  const int bad = ProducePayments(0, 10'000);  // far more than one chunk of records
  ASSERT_OK_AND_ASSIGN(auto runner, OpenRunner("INSERT INTO bronze SELECT * FROM STREAM " +
                                               Source(", deadLetterTable => 'payments_dlq'") + " LIMIT 3"));
  ASSERT_OK_AND_ASSIGN(std::optional<BatchCommit> commit, runner->RunBatch());
  ASSERT_TRUE(commit);
  EXPECT_EQ(commit->rows_out, 3);
  EXPECT_EQ(commit->dead_letters, bad);
  EXPECT_EQ(Counts("SELECT count(*), count(DISTINCT \"offset\") FROM payments_dlq WHERE partition = 1"),
            std::make_pair(int64_t{bad}, int64_t{bad}));
}

// Rows the sink's NOT NULL and CHECK constraints refuse go to the dead-letter table too (the
// row as JSON, the constraint), beside the records that do not parse; the rest commit.
TEST_F(DeadLetterTest, RowsTheSinkRefusesAreDeadLettered) {
  ASSERT_OK(session_->Execute("ALTER TABLE bronze ADD CONSTRAINT small CHECK (amount < 100)").status());
  ProduceValue(0, "{\"id\": 1, \"amount\": 5}");
  ProduceValue(0, "{\"amount\": 7}");
  ProduceValue(0, "{\"id\": 3, \"amount\": 500}");
  ProduceValue(0, "{oops");
  ASSERT_OK(producer_->Flush(10'000));
  ASSERT_OK_AND_ASSIGN(
      auto runner,
      OpenRunner("INSERT INTO bronze SELECT id, amount FROM STREAM read_kafka(bootstrapServers => '" +
                 cluster_->bootstrap_servers() +
                 "', subscribe => 'payments', startingOffsets => 'earliest', valueFormat => "
                 "'json', schema => 'id BIGINT, amount DECIMAL(12,2)', deadLetterTable => "
                 "'payments_dlq')"));
  ASSERT_OK_AND_ASSIGN(std::optional<BatchCommit> commit, runner->RunBatch());
  ASSERT_TRUE(commit);
  EXPECT_EQ(commit->rows_out, 1);
  EXPECT_EQ(commit->dead_letters, 3);
  EXPECT_EQ(Counts("SELECT count(*), sum(id) FROM bronze"), std::make_pair(int64_t{1}, int64_t{1}));
  EXPECT_EQ(basin::testing::FirstColumn(
                *session_,
                "SELECT coalesce(\"offset\"::VARCHAR, '-') || ' ' || decode(value) || ' ' || "
                "error FROM payments_dlq ORDER BY error"),
            (std::vector<std::string>{
                "- {\"id\":3,\"amount\":500.0} CHECK constraint small (amount < 100) violated",
                "- {\"id\":null,\"amount\":7.0} NOT NULL constraint violated for column: id",
                "3 {oops payments/0 offset 3: not valid JSON"}));
}

// The sink's constraints see the rows the statement gives: a row its WHERE leaves out is
// not refused, whatever its values.
TEST_F(DeadLetterTest, ARowTheStatementLeavesOutIsNotRefused) {
  ASSERT_OK(session_->Execute("ALTER TABLE bronze ADD CONSTRAINT small CHECK (amount < 100)").status());
  ProduceValue(0, "{\"id\": 1, \"amount\": 5}");
  ProduceValue(0, "{\"id\": 2, \"amount\": 500}");   // refused
  ProduceValue(0, "{\"id\": 3, \"amount\": 5000}");  // left out by the WHERE
  ASSERT_OK(producer_->Flush(10'000));
  ASSERT_OK_AND_ASSIGN(auto runner,
                       OpenRunner("INSERT INTO bronze SELECT * FROM STREAM " +
                                  Source(", deadLetterTable => 'payments_dlq'") + " WHERE amount < 1000"));
  ASSERT_OK_AND_ASSIGN(std::optional<BatchCommit> commit, runner->RunBatch());
  ASSERT_TRUE(commit);
  EXPECT_EQ(commit->rows_out, 1);
  EXPECT_EQ(commit->dead_letters, 1);
  EXPECT_EQ(basin::testing::FirstColumn(*session_, "SELECT decode(value) || ' ' || error FROM payments_dlq"),
            (std::vector<std::string>{
                "{\"id\":2,\"amount\":500.0} CHECK constraint small (amount < 100) violated"}));
}

TEST_F(DeadLetterTest, RowsAMergeSinkRefusesAreDeadLetteredAndChangeNothing) {
  ASSERT_OK(session_
                ->Execute("ALTER TABLE bronze ADD CONSTRAINT small CHECK (amount < 100); "
                          "INSERT INTO bronze VALUES (1, 1), (2, 2)")
                .status());
  ProduceValue(0, "{\"id\": 1, \"amount\": 5}");    // updates id 1
  ProduceValue(0, "{\"id\": 2, \"amount\": 200}");  // refused: id 2 stays as it was
  ProduceValue(0, "{\"id\": 3, \"amount\": 300}");  // refused: no id 3
  ProduceValue(0, "{\"id\": 4, \"amount\": 4}");    // inserted
  ASSERT_OK(producer_->Flush(10'000));
  const std::string statement =
      "MERGE INTO bronze t USING (SELECT id, amount FROM STREAM " +
      Source(", deadLetterTable => 'payments_dlq'") +
      ") s ON t.id = s.id WHEN MATCHED THEN UPDATE SET amount = s.amount WHEN NOT MATCHED THEN INSERT *";
  ASSERT_OK_AND_ASSIGN(auto runner, OpenRunner(statement));
  ASSERT_OK_AND_ASSIGN(std::optional<BatchCommit> commit, runner->RunBatch());
  ASSERT_TRUE(commit);
  EXPECT_EQ(commit->dead_letters, 2);
  EXPECT_EQ(basin::testing::FirstColumn(*session_, "SELECT id || ':' || amount FROM bronze ORDER BY id"),
            (std::vector<std::string>{"1:5.00", "2:2.00", "4:4.00"}));
  EXPECT_EQ(basin::testing::FirstColumn(
                *session_, "SELECT decode(value) || ' ' || error FROM payments_dlq ORDER BY value"),
            (std::vector<std::string>{
                "{\"id\":2,\"amount\":200.0} CHECK constraint small (amount < 100) violated",
                "{\"id\":3,\"amount\":300.0} CHECK constraint small (amount < 100) violated"}));
}

TEST_F(DeadLetterTest, TooManyDeadLettersStopTheStreamAndCommitNothing) {
  ProducePayments(0, 5);  // 5 good, 1 bad: a sixth
  ASSERT_OK_AND_ASSIGN(
      auto runner,
      OpenRunner(Statement(", deadLetterTable => 'payments_dlq', maxDeadLetterFraction => 0.1")));
  Result<std::optional<BatchCommit>> stopped = runner->RunBatch();
  ASSERT_FALSE(stopped.ok());
  EXPECT_NE(
      stopped.status().message().find("1 of 6 records do not parse, more than maxDeadLetterFraction 0.1"),
      std::string::npos)
      << stopped.status().ToString();
  EXPECT_NE(stopped.status().message().find("payments/1 offset 0"), std::string::npos);
  EXPECT_EQ(Counts("SELECT count(*), count(*) FROM bronze"), std::make_pair(int64_t{0}, int64_t{0}));
  ASSERT_OK_AND_ASSIGN(auto tables, session_->Execute("SHOW TABLES"));
  EXPECT_EQ(tables.back().result.row_count(), 1u);  // bronze only: no dead-letter table yet
  // With a fraction that allows it, the same batch goes through.
  checkpoint_ = NewMemoryObjectStore();
  ASSERT_OK_AND_ASSIGN(
      auto lenient,
      OpenRunner(Statement(", deadLetterTable => 'payments_dlq', maxDeadLetterFraction => 0.2")));
  ASSERT_OK_AND_ASSIGN(std::optional<BatchCommit> commit, lenient->RunBatch());
  ASSERT_TRUE(commit);
  EXPECT_EQ(commit->dead_letters, 1);
}

TEST_F(DeadLetterTest, WithoutADeadLetterTableABadRecordFailsTheBatchNamingIt) {
  ProducePayments(0, 5);
  ASSERT_OK_AND_ASSIGN(auto runner, OpenRunner(Statement("")));
  Result<std::optional<BatchCommit>> failed = runner->RunBatch();
  ASSERT_FALSE(failed.ok());
  EXPECT_NE(failed.status().message().find("payments/1 offset 0: column id: \"x4\" is not a bigint"),
            std::string::npos)
      << failed.status().ToString();
  EXPECT_NE(failed.status().message().find("deadLetterTable"), std::string::npos);
  EXPECT_EQ(Counts("SELECT count(*), count(*) FROM bronze"), std::make_pair(int64_t{0}, int64_t{0}));
}

TEST_F(DeadLetterTest, CsvValuesAreParsedAndDeadLetteredAlike) {
  RunCsvBatch({"1,2.50", "2,not a number", "3,\"4.75\"\n"}, "*",
              ", schema => 'id BIGINT NOT NULL, amount DECIMAL(12,2)'");
  EXPECT_EQ(Counts("SELECT count(*), (sum(amount) * 100)::BIGINT FROM bronze"),
            std::make_pair(int64_t{2}, int64_t{725}));
  ASSERT_OK_AND_ASSIGN(auto letter, session_->Execute("SELECT error FROM payments_dlq"));
  EXPECT_EQ(*letter.back().result.at(0, 0),
            "payments/0 offset 1: column amount: not a number is not a decimal(12,2)");
}

// valueFormat 'csv' without a schema: columns _c0, _c1, ... with the types the first
// batch's sample shows, kept for the stream; a record with another field count is a dead
// letter.
TEST_F(DeadLetterTest, CsvValuesWithoutASchemaAreReadWithAnInferredOne) {
  RunCsvBatch({"1,2.50", "7", "3,\"4\"\n"}, "_c0 AS id, _c1 AS amount", "");
  EXPECT_EQ(Counts("SELECT count(*), (sum(amount) * 100)::BIGINT FROM bronze"),
            std::make_pair(int64_t{2}, int64_t{650}));
  ASSERT_OK_AND_ASSIGN(std::string offsets, checkpoint_->Get("offsets/00000000000000000000.json"));
  EXPECT_NE(offsets.find(R"("schema":"\"_c0\" BIGINT, \"_c1\" DOUBLE")"), std::string::npos) << offsets;
}

TEST_F(DeadLetterTest, AQueryOutsideAStreamReadsTypedColumns) {
  ProducePayments(0, 5);
  ASSERT_OK_AND_ASSIGN(auto described, session_->connection().DescribeQuery("SELECT * FROM " + Source("")));
  ASSERT_EQ(described.size(), 2u);
  EXPECT_EQ(described[0].name, "id");
  EXPECT_EQ(described[1].type_name, "DECIMAL(12,2)");
  // A preview skips what a stream would dead-letter.
  ASSERT_OK_AND_ASSIGN(auto rows, session_->Execute("SELECT count(*), sum(amount) FROM " +
                                                    Source(", deadLetterTable => 'payments_dlq'")));
  EXPECT_EQ(*rows.back().result.at(0, 0), "5");
  EXPECT_EQ(*rows.back().result.at(0, 1), "11.25");
  EXPECT_FALSE(session_->Execute("SELECT count(*) FROM " + Source("")).ok());
}

}  // namespace
}  // namespace basin::stream
