// Kafka ingest: ~200-byte JSON payment events (the seed story's, stream/kafka/generator.h)
// from the dev cluster into a warehouse table by a stream that parses them against a
// declared schema (valueFormat 'json'; then again with a dead-letter table, which stages
// each batch for the sink's NOT NULL check to set refused rows aside; and de-duplicating ids
// within a watermark, SELECT DISTINCT ON (id) ... WATERMARK, which stages each batch and
// keeps the keys in the checkpoint), against librdkafka alone
// consuming the same topic (Basin's KafkaReader, values only as the stream takes them, no
// parsing, no writing) in the same run, before, between and after. Target: the stream's
// events/s >= 0.5 of the consumer's, sustained: the plain stream is timed three times after
// a first run (printed too) that pays the process's first batches' costs, and its median
// is compared with the median of the consumer's runs.

#include <fmt/format.h>

#include <chrono>
#include <string>
#include <vector>

#include "basin/kafka_dev.h"
#include "bench_util.h"
#include "stream/kafka/generator.h"
#include "stream/kafka/producer.h"
#include "stream/kafka/read_kafka.h"
#include "stream/kafka/reader.h"
#include "stream/runner.h"

namespace basin::bench {
namespace {

// librdkafka's mock cluster keeps about 5 MB per partition (older records are dropped):
// 12 partitions hold the full run's 33 MB.
constexpr int64_t kFullEvents = 160'000;
constexpr int kPartitions = 12;

// Seconds librdkafka alone takes to consume every record of `topic`; `bytes` gets their size.
Result<double> ConsumeAll(const std::string& bootstrap, int64_t* bytes) {
  ASSIGN_OR_RETURN(
      stream::kafka::KafkaOptions options,
      stream::kafka::ParseKafkaOptions({{"bootstrapServers", bootstrap}, {"subscribe", "payments"}}));
  const auto start = std::chrono::steady_clock::now();
  ASSIGN_OR_RETURN(auto reader, stream::kafka::KafkaReader::Open(options));
  ASSIGN_OR_RETURN(auto partitions, reader->ListPartitions(options.subscription));
  ASSIGN_OR_RETURN(auto watermarks, reader->QueryWatermarks(partitions));
  std::vector<stream::kafka::PartitionRange> ranges;
  for (const auto& [tp, marks] : watermarks) ranges.push_back({tp, marks.low, marks.high});
  *bytes = 0;
  // The values only, as the stream reads them (its records' headers are no column of its).
  RETURN_IF_ERROR(reader->Read(
      ranges,
      [&](const stream::kafka::KafkaRecord& record) {
        *bytes += static_cast<int64_t>(record.value ? record.value->size() : 0);
        return Status::OK();
      },
      nullptr, stream::kafka::KafkaReader::Headers::kSkipped));
  return SecondsSince(start);
}

Status Run() {
  const int64_t events = Scaled(kFullEvents, 20'000);
  ASSIGN_OR_RETURN(auto scratch, ScratchDir::Create("stream-ingest"));
  ASSIGN_OR_RETURN(auto session, OpenStreamSession((scratch.path() / "warehouse").string()));
  RETURN_IF_ERROR(stream::kafka::RegisterReadKafka(session->connection().raw()));
  const std::string schema =
      "id BIGINT NOT NULL, account STRING, amount DECIMAL(12,2), currency STRING, region STRING, ts "
      "TIMESTAMP, "
      "merchant STRING, channel STRING, card_last4 STRING, status STRING";
  ASSIGN_OR_RETURN(auto cluster, KafkaDevCluster::Start({{"payments", kPartitions}}));
  ASSIGN_OR_RETURN(auto producer, stream::kafka::KafkaProducer::Open(cluster->bootstrap_servers()));
  ASSIGN_OR_RETURN(auto generator, stream::kafka::PaymentEventGenerator::Make({}, SystemClock()));
  for (int64_t i = 0; i < events; i++) {
    stream::kafka::PaymentEvent event = generator.Next();
    stream::kafka::ProducerRecord record;
    record.partition = static_cast<int32_t>(i % kPartitions);
    record.key = event.key;
    record.value = event.value;
    RETURN_IF_ERROR(producer->Produce("payments", record));
  }
  RETURN_IF_ERROR(producer->Flush(60'000));

  int64_t bytes = 0;
  ASSIGN_OR_RETURN(double consume_first, ConsumeAll(cluster->bootstrap_servers(), &bytes));
  if (bytes < events * 150) return Status::Internal(fmt::format("the topic holds {} bytes only", bytes));

  // Seconds a stream takes to land every event in `table`, available-now, with `extra`
  // read_kafka options, selecting `select` and with `after` after the source.
  auto stream_seconds = [&](const std::string& table, const std::string& extra,
                            const std::string& select = "*",
                            const std::string& after = "") -> Result<double> {
    RETURN_IF_ERROR(session->Execute("CREATE TABLE " + table + " (" + schema + ")").status());
    ASSIGN_OR_RETURN(auto checkpoint, OpenStoreAt((scratch.path() / ("checkpoint-" + table)).string()));
    ASSIGN_OR_RETURN(auto runner,
                     stream::StreamRunner::Open(
                         *session, checkpoint,
                         "INSERT INTO " + table + " SELECT " + select +
                             " FROM STREAM read_kafka(bootstrapServers => '" + cluster->bootstrap_servers() +
                             "', subscribe => 'payments', startingOffsets => 'earliest', "
                             "maxOffsetsPerTrigger => 100000, valueFormat => 'json', schema => '" +
                             schema + "'" + extra + ")" + after,
                         SystemClock()));
    stream::RunOptions options;
    options.trigger = stream::Trigger::kAvailableNow;
    int64_t rows = 0, dead = 0;
    options.on_batch = [&](const std::optional<stream::BatchCommit>& commit) {
      if (!commit) return;
      rows += commit->rows_out;
      dead += commit->dead_letters;
    };
    const auto start = std::chrono::steady_clock::now();
    RETURN_IF_ERROR(runner->Run(options));
    const double seconds = SecondsSince(start);
    if (rows != events || dead != 0) {
      return Status::Internal(
          fmt::format("the stream wrote {} rows and {} dead letters of {} events", rows, dead, events));
    }
    return seconds;
  };
  ASSIGN_OR_RETURN(double first_plain, stream_seconds("bronze_first", ""));
  std::vector<double> consumes = {consume_first};
  auto consume = [&]() -> Status {
    int64_t ignored = 0;
    ASSIGN_OR_RETURN(double seconds, ConsumeAll(cluster->bootstrap_servers(), &ignored));
    consumes.push_back(seconds);
    return Status::OK();
  };
  std::vector<double> plains;
  for (int run = 0; run < 3; run++) {
    ASSIGN_OR_RETURN(double seconds, stream_seconds("bronze_" + std::to_string(run), ""));
    plains.push_back(seconds);
    RETURN_IF_ERROR(consume());
  }
  ASSIGN_OR_RETURN(double with_dlq, stream_seconds("bronze_dlq", ", deadLetterTable => 'payments_dlq'"));
  RETURN_IF_ERROR(consume());
  ASSIGN_OR_RETURN(double deduplicated, stream_seconds("bronze_once", "", "DISTINCT ON (id) *",
                                                       " WATERMARK ts DELAY OF INTERVAL 10 MINUTES"));
  RETURN_IF_ERROR(consume());

  auto rate = [&](double seconds) { return static_cast<double>(events) / seconds; };
  const double consume_rate = rate(Median(consumes));
  const double plain = Median(plains);
  PrintSummary(
      "stream_ingest_bench",
      fmt::format(
          "{} JSON events of {:.0f} bytes (scale {}): librdkafka alone {:.0f} events/s (median of {}); "
          "stream {:.0f} events/s (median of 3 after a first run of {:.0f}), stream/consumer = {:.3f} "
          "(target >= 0.5; the first run's {:.3f}); with a dead-letter table {:.0f} events/s, {:.3f}; "
          "de-duplicating within a watermark {:.0f} events/s, {:.3f} ({:.3f} of the plain stream's)",
          events, static_cast<double>(bytes) / static_cast<double>(events), Scale(), consume_rate,
          consumes.size(), rate(plain), rate(first_plain), rate(plain) / consume_rate,
          rate(first_plain) / consume_rate, rate(with_dlq), rate(with_dlq) / consume_rate, rate(deduplicated),
          rate(deduplicated) / consume_rate, plain / deduplicated));
  return Status::OK();
}

}  // namespace
}  // namespace basin::bench

int main() { return basin::bench::RunBenchmark("stream_ingest_bench", basin::bench::Run); }
