// A real Kafka client, kcat, produces into the dev cluster, and the reader reads back exactly
// what it produced: keys, values and headers. kcat is a Debian package scripts/setup.sh
// installs; without it the test fails in CI (CI=true) and is skipped, saying why, elsewhere.
#include <fcntl.h>
#include <spawn.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "kafka_test_util.h"
#include "testing/child_process.h"

namespace basin::stream::kafka {
namespace {

using testing::KafkaClusterTest;

// kcat's path on $PATH, or "" when it is not installed.
std::string FindKcat() {
  const char* path = std::getenv("PATH");
  std::istringstream dirs(path != nullptr ? path : "");
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    const std::filesystem::path candidate = std::filesystem::path(dir.empty() ? "." : dir) / "kcat";
    if (access(candidate.c_str(), X_OK) == 0) return candidate.string();
  }
  return "";
}

// Runs `argv` with stdin read from `input_path` and stdout and stderr written to
// `output_path`; its exit code, or a negative number as basin::testing::WaitChildFor says.
int RunWithInput(std::vector<std::string> argv, const std::string& input_path,
                 const std::string& output_path) {
  std::vector<char*> args;
  for (std::string& arg : argv) args.push_back(arg.data());
  args.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  if (posix_spawn_file_actions_init(&actions) != 0) return -1;
  int rc = posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, input_path.c_str(), O_RDONLY, 0);
  if (rc == 0) {
    rc = posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, output_path.c_str(),
                                          O_WRONLY | O_CREAT | O_TRUNC, 0644);
  }
  if (rc == 0) rc = posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  pid_t pid = -1;
  if (rc == 0) rc = posix_spawn(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) return -1;
  return basin::testing::WaitChildFor(pid, /*timeout_ms=*/30'000);
}

std::string ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST_F(KafkaClusterTest, ReadsExactlyWhatKcatProduced) {
  const std::string kcat = FindKcat();
  if (kcat.empty()) {
    const char* ci = std::getenv("CI");
    if (ci != nullptr && std::string(ci) == "true") {
      FAIL() << "kcat is not on PATH; scripts/setup.sh installs it (Debian package kcat)";
    }
    GTEST_SKIP() << "kcat is not on PATH: the real-client check needs it (scripts/setup.sh installs it)";
  }
  ASSERT_OK(cluster_->CreateTopic({"from-kcat", 2}));
  basin::testing::TempDir dir;
  const std::filesystem::path input = dir.path() / "input";
  const std::filesystem::path output = dir.path() / "output";
  // Three records, "key:value" a line; kcat adds the same two headers to each.
  std::ofstream(input) << "acct-1:{\"id\":1,\"amount\":\"12.34\"}\n"
                       << "acct-2:{\"id\":2,\"amount\":\"0.99\"}\n"
                       << "acct-1:second record, same key\n";
  const int exit_code = RunWithInput({kcat, "-P", "-b", cluster_->bootstrap_servers(), "-t", "from-kcat",
                                      "-p", "1", "-K", ":", "-H", "source=kcat", "-H", "trace=t-42"},
                                     input.string(), output.string());
  ASSERT_EQ(exit_code, 0) << ReadFile(output);

  const TopicPartition tp{"from-kcat", 1};
  ASSERT_OK_AND_ASSIGN(Watermarks marks, reader_->QueryWatermarks(tp));
  ASSERT_EQ(marks, (Watermarks{0, 3}));
  ASSERT_OK_AND_ASSIGN(Watermarks other, reader_->QueryWatermarks(TopicPartition{"from-kcat", 0}));
  EXPECT_EQ(other, (Watermarks{0, 0})) << "kcat was told partition 1";

  ASSERT_OK_AND_ASSIGN(auto records, ReadAll({{tp, 0, 3}}));
  ASSERT_EQ(records.size(), 3u);
  using Headers = std::vector<std::pair<std::string, std::optional<std::string>>>;
  const Headers headers = {{"source", "kcat"}, {"trace", "t-42"}};
  const std::vector<std::pair<std::string, std::string>> expected = {
      {"acct-1", R"({"id":1,"amount":"12.34"})"},
      {"acct-2", R"({"id":2,"amount":"0.99"})"},
      {"acct-1", "second record, same key"},
  };
  for (size_t i = 0; i < expected.size(); i++) {
    SCOPED_TRACE(i);
    EXPECT_EQ(records[i].offset, static_cast<int64_t>(i));
    EXPECT_EQ(records[i].key, expected[i].first);
    EXPECT_EQ(records[i].value, expected[i].second);
    EXPECT_EQ(records[i].headers, headers);
    EXPECT_EQ(records[i].timestamp_type, TimestampType::kCreateTime);
  }
}

}  // namespace
}  // namespace basin::stream::kafka
