// `basin stream run` as a user runs it: available-now reads what the topic holds in bounded
// batches and exits 0, a second run finds nothing new, a continuous run picks up new
// records and stops on SIGTERM with status 0, and nothing is ever written twice.
#include <pty.h>
#include <signal.h>
#include <sys/select.h>

#include <chrono>
#include <thread>

#include "basin/kafka_dev.h"
#include "cli/basin_process.h"
#include "stream/kafka/producer.h"
#include "testing/child_process.h"

namespace basin {
namespace {

class StreamCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!std::filesystem::exists(BasinBinary())) GTEST_SKIP() << "no basin binary at " << BasinBinary();
    ASSERT_OK_AND_ASSIGN(cluster_, KafkaDevCluster::Start({{"payments", 2}}));
    ASSERT_OK_AND_ASSIGN(producer_, stream::kafka::KafkaProducer::Open(cluster_->bootstrap_servers()));
    RunOutput created = Sql("CREATE TABLE bronze (payment VARCHAR, p INTEGER, o BIGINT)");
    ASSERT_EQ(created.exit_code, 0) << created.err;
  }

  RunOutput Sql(const std::string& sql) {
    return RunBasin({"sql", "-w", warehouse_.str(), "--format", "csv", "-c", sql});
  }

  void Produce(int first, int count) {
    for (int i = first; i < first + count; i++) {
      const std::string value = R"({"id": )" + std::to_string(i) + "}";
      stream::kafka::ProducerRecord record;
      record.partition = i % 2;
      record.value = value;
      ASSERT_OK(producer_->Produce("payments", record));
    }
    ASSERT_OK(producer_->Flush(10'000));
  }

  std::vector<std::string> StreamArgs(const std::string& trigger) const {
    return {"stream",
            "run",
            "-w",
            warehouse_.str(),
            "--checkpoint",
            (checkpoint_.path() / "c").string(),
            "--trigger",
            trigger,
            "--interval",
            "100ms",
            "-c",
            "INSERT INTO bronze SELECT decode(value), partition, \"offset\" FROM STREAM read_kafka("
            "bootstrapServers => '" +
                cluster_->bootstrap_servers() +
                "', subscribe => 'payments', startingOffsets => 'earliest', maxOffsetsPerTrigger => 100)"};
  }

  // "rows,distinct payments" in bronze.
  std::string Counts() { return Sql("SELECT count(*) || ',' || count(DISTINCT payment) FROM bronze").out; }

  testing::TempDir warehouse_;
  testing::TempDir checkpoint_;
  std::unique_ptr<KafkaDevCluster> cluster_;
  std::unique_ptr<stream::kafka::KafkaProducer> producer_;
};

TEST_F(StreamCliTest, AvailableNowThenContinuousUntilSigterm) {
  Produce(0, 250);
  RunOutput first = RunBasin(StreamArgs("available-now"));
  ASSERT_EQ(first.exit_code, 0) << first.err;
  EXPECT_NE(first.err.find("batch 0: 100 offsets in, 100 rows out"), std::string::npos) << first.err;
  EXPECT_NE(first.err.find("batch 2: 50 offsets in, 50 rows out"), std::string::npos) << first.err;
  EXPECT_EQ(first.err.find("batch 3"), std::string::npos) << first.err;
  EXPECT_NE(Counts().find("250,250"), std::string::npos);

  RunOutput status =
      RunBasin({"stream", "status", "--checkpoint", (checkpoint_.path() / "c").string(), "--json"});
  ASSERT_EQ(status.exit_code, 0) << status.err;
  EXPECT_NE(status.out.find(R"("sink":"default.bronze")"), std::string::npos) << status.out;
  EXPECT_NE(status.out.find(
                R"("lastPlanned":2,"lastCommitted":2,"lastBatch":{"batchId":2,"rowsIn":50,"rowsOut":50)"),
            std::string::npos)
      << status.out;
  RunOutput text = RunBasin({"stream", "status", "--checkpoint", (checkpoint_.path() / "c").string()});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("last committed batch 2\n"), std::string::npos) << text.out;
  // bronze: version 0 created it, batches 0..2 committed versions 1..3.
  EXPECT_NE(text.out.find("50 rows out, "), std::string::npos) << text.out;
  EXPECT_NE(text.out.find(" ms, table version 3\n"), std::string::npos) << text.out;
  RunOutput none = RunBasin({"stream", "status", "--checkpoint", (checkpoint_.path() / "nothing").string()});
  EXPECT_EQ(none.exit_code, 1);
  EXPECT_NE(none.err.find("NotFound"), std::string::npos) << none.err;

  RunOutput again = RunBasin(StreamArgs("once"));
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(again.err.find("batch "), std::string::npos) << again.err;  // nothing new

  // Continuous: new records land within a few intervals; SIGTERM stops it cleanly.
  std::vector<std::string> args = StreamArgs("continuous");
  args.insert(args.begin(), BasinBinary());
  testing::TempDir io;
  const std::string err_path = (io.path() / "stderr").string();
  const pid_t pid = testing::ForkChild([&] {
    std::vector<char*> argv;
    for (std::string& arg : args) argv.push_back(arg.data());
    argv.push_back(nullptr);
    const int err = open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (err < 0 || dup2(err, STDERR_FILENO) < 0) return 126;
    execv(argv[0], argv.data());
    return 127;
  });
  ASSERT_GT(pid, 0);
  Produce(250, 60);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (Counts().find("310,310") == std::string::npos && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_NE(Counts().find("310,310"), std::string::npos) << ReadWholeFile(err_path);
  ASSERT_EQ(kill(pid, SIGTERM), 0);
  EXPECT_EQ(testing::WaitChildFor(pid, 20'000), 0) << ReadWholeFile(err_path);
  EXPECT_NE(ReadWholeFile(err_path).find("terminated, stopping after the batch in flight"),
            std::string::npos);
  EXPECT_NE(Counts().find("310,310"), std::string::npos);
}

TEST_F(StreamCliTest, LateRowsAreShownAndInTheStatus) {
  ASSERT_EQ(
      Sql("CREATE TABLE events (id BIGINT, ts TIMESTAMP); CREATE TABLE landed (id BIGINT, ts TIMESTAMP); "
          "INSERT INTO events VALUES (1, TIMESTAMP '2026-01-01 00:10:00')")
          .exit_code,
      0);
  const std::string checkpoint = (checkpoint_.path() / "late").string();
  const std::vector<std::string> args = {
      "stream",
      "run",
      "-w",
      warehouse_.str(),
      "--checkpoint",
      checkpoint,
      "--trigger",
      "once",
      "-c",
      "INSERT INTO landed SELECT * FROM STREAM(events) WATERMARK ts DELAY OF INTERVAL 1 MINUTE"};
  ASSERT_EQ(RunBasin(args).exit_code, 0);
  ASSERT_EQ(Sql("INSERT INTO events VALUES (2, TIMESTAMP '2026-01-01 00:00:00'), "
                "(3, TIMESTAMP '2026-01-01 00:11:00')")
                .exit_code,
            0);
  RunOutput second = RunBasin(args);
  ASSERT_EQ(second.exit_code, 0) << second.err;
  EXPECT_NE(second.err.find("batch 1: 1 rows out, 0 dead letters, 1 late, "), std::string::npos)
      << second.err;
  RunOutput status = RunBasin({"stream", "status", "--checkpoint", checkpoint, "--json"});
  EXPECT_NE(status.out.find(R"("deadLetters":0,"lateRows":1,)"), std::string::npos) << status.out;
  EXPECT_NE(Sql("SELECT string_agg(id::VARCHAR, ',' ORDER BY id) FROM landed").out.find("1,3"),
            std::string::npos);
}

// On a terminal, one line is redrawn as batches commit: rates, lag and the last batch.
TEST_F(StreamCliTest, ATerminalShowsOneLiveLine) {
  Produce(0, 250);
  std::vector<std::string> args = StreamArgs("available-now");
  args.insert(args.begin(), BasinBinary());
  int master = -1;
  const pid_t pid = forkpty(&master, nullptr, nullptr, nullptr);
  if (pid == 0) {
    std::vector<char*> argv;
    for (std::string& arg : args) argv.push_back(arg.data());
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    _exit(127);
  }
  ASSERT_GT(pid, 0);
  std::string transcript;
  char buffer[4096];
  for (;;) {  // until the stream ends and the pty closes
    fd_set ready;
    FD_ZERO(&ready);
    FD_SET(master, &ready);
    timeval timeout{30, 0};
    if (select(master + 1, &ready, nullptr, nullptr, &timeout) <= 0) break;
    const ssize_t n = read(master, buffer, sizeof(buffer));
    if (n <= 0) break;
    transcript.append(buffer, static_cast<size_t>(n));
  }
  close(master);
  EXPECT_EQ(testing::WaitChildFor(pid, 20'000), 0) << transcript;
  // Three batches of at most 100 offsets: the lag each saw when planned, then the total.
  EXPECT_NE(transcript.find("\r\033[Kbatch 0 | "), std::string::npos) << transcript;
  EXPECT_NE(transcript.find("lag 150 | "), std::string::npos) << transcript;
  EXPECT_NE(transcript.find("batch 2 | "), std::string::npos) << transcript;
  EXPECT_NE(transcript.find("lag 0 | "), std::string::npos) << transcript;
  EXPECT_NE(transcript.find("| 250 rows out | 0 dead letters | table version 3"), std::string::npos)
      << transcript;
  EXPECT_NE(transcript.find(" rows out/s"), std::string::npos) << transcript;
  EXPECT_EQ(transcript.find("batch 0: "), std::string::npos) << transcript;  // no per-batch lines
  EXPECT_NE(Counts().find("250,250"), std::string::npos);
}

TEST_F(StreamCliTest, BadStreamsAreErrors) {
  RunOutput no_statement = RunBasin(
      {"stream", "run", "-w", warehouse_.str(), "--checkpoint", (checkpoint_.path() / "c").string()});
  EXPECT_EQ(no_statement.exit_code, 1);
  EXPECT_NE(no_statement.err.find("InvalidArgument"), std::string::npos) << no_statement.err;
  RunOutput bad_interval =
      RunBasin({"stream", "run", "-w", warehouse_.str(), "--checkpoint", (checkpoint_.path() / "c").string(),
                "--interval", "soon", "-c", "SELECT 1"});
  EXPECT_EQ(bad_interval.exit_code, 1);
  EXPECT_NE(bad_interval.err.find("--interval"), std::string::npos) << bad_interval.err;
  RunOutput not_a_stream = RunBasin({"stream", "run", "-w", warehouse_.str(), "--checkpoint",
                                     (checkpoint_.path() / "c").string(), "-c", "SELECT 1"});
  EXPECT_EQ(not_a_stream.exit_code, 1);
  EXPECT_NE(not_a_stream.err.find("a stream is an INSERT"), std::string::npos) << not_a_stream.err;
}

// --user: the batches run under that user's grants, as `basin sql --user` statements do.
TEST(StreamCliUserTest, RunsUnderTheUsersGrants) {
  if (!std::filesystem::exists(BasinBinary())) GTEST_SKIP() << "no basin binary at " << BasinBinary();
  testing::TempDir warehouse;
  testing::TempDir checkpoint;
  const auto sql = [&](const std::string& text) {
    return RunBasin({"sql", "-w", warehouse.str(), "--format", "csv", "-c", text});
  };
  ASSERT_EQ(
      sql("CREATE TABLE src (id BIGINT); CREATE TABLE sink (id BIGINT); INSERT INTO src VALUES (1), (2); "
          "CREATE USER bob PASSWORD 'b'; GRANT SELECT ON TABLE src TO bob")
          .exit_code,
      0);
  const auto run = [&](const std::string& user) {
    return RunBasin({"stream", "run", "-w", warehouse.str(), "--checkpoint", checkpoint.str(), "--trigger",
                     "available-now", "--user", user, "-c", "INSERT INTO sink SELECT id FROM STREAM(src)"});
  };
  RunOutput denied = run("bob");
  EXPECT_EQ(denied.exit_code, 1);
  EXPECT_NE(denied.err.find("Error: PermissionDenied: "), std::string::npos) << denied.err;
  EXPECT_NE(denied.err.find("MODIFY on TABLE default.sink for user bob"), std::string::npos) << denied.err;
  EXPECT_EQ(sql("SELECT count(*) AS n FROM sink").out, "n\n0\n");

  RunOutput ghost = run("ghost");
  EXPECT_EQ(ghost.exit_code, 1);
  EXPECT_NE(ghost.err.find("Error: Unauthenticated: "), std::string::npos) << ghost.err;

  ASSERT_EQ(sql("GRANT MODIFY ON TABLE sink TO bob").exit_code, 0);
  RunOutput allowed = run("bob");
  EXPECT_EQ(allowed.exit_code, 0) << allowed.err;
  EXPECT_EQ(sql("SELECT count(*) AS n FROM sink").out, "n\n2\n");
}

}  // namespace
}  // namespace basin
