#include "stream/kafka/producer.h"

#include <chrono>

namespace basin::stream::kafka {

namespace {

struct HeadersDeleter {
  void operator()(rd_kafka_headers_t* headers) const { rd_kafka_headers_destroy(headers); }
};
using HeadersPtr = std::unique_ptr<rd_kafka_headers_t, HeadersDeleter>;

// How long one wait for deliveries lasts while the queue is full.
constexpr int kQueueFullPollMs = 50;

}  // namespace

Result<std::unique_ptr<KafkaProducer>> KafkaProducer::Open(const std::string& bootstrap_servers,
                                                           const ClientProperties& properties) {
  ClientProperties all = {{"partitioner", "murmur2_random"}, {"log.connection.close", "false"}};
  all.insert(all.end(), properties.begin(), properties.end());
  all.emplace_back("bootstrap.servers", bootstrap_servers);
  ASSIGN_OR_RETURN(ConfPtr conf, NewConf(all));
  std::unique_ptr<KafkaProducer> producer(new KafkaProducer());
  rd_kafka_conf_set_dr_msg_cb(conf.get(), &KafkaProducer::OnDelivery);
  rd_kafka_conf_set_opaque(conf.get(), producer.get());
  ASSIGN_OR_RETURN(producer->producer_, NewClient(RD_KAFKA_PRODUCER, std::move(conf)));
  return producer;
}

KafkaProducer::~KafkaProducer() {
  if (!producer_) return;  // Open failed before the client existed
  // Without the purge, destroying the client would wait for queued records to time out.
  rd_kafka_purge(producer_.get(), RD_KAFKA_PURGE_F_QUEUE | RD_KAFKA_PURGE_F_INFLIGHT);
}

void KafkaProducer::OnDelivery(rd_kafka_t* /*rk*/, const rd_kafka_message_t* message, void* opaque) {
  if (message->err == RD_KAFKA_RESP_ERR_NO_ERROR) return;
  auto* self = static_cast<KafkaProducer*>(opaque);
  std::lock_guard<std::mutex> lock(self->mu_);
  if (self->delivery_error_) return;
  self->delivery_error_ =
      KafkaStatus(message->err, std::string("delivering a record to ") + rd_kafka_topic_name(message->rkt) +
                                    "/" + std::to_string(message->partition));
}

Status KafkaProducer::TakeDeliveryError() {
  std::lock_guard<std::mutex> lock(mu_);
  if (!delivery_error_) return Status::OK();
  Status error = std::move(*delivery_error_);
  delivery_error_.reset();
  return error;
}

Status KafkaProducer::Produce(const std::string& topic, const ProducerRecord& record,
                              int64_t queue_timeout_ms) {
  rd_kafka_t* rk = producer_.get();
  rd_kafka_poll(rk, 0);  // serves delivery reports
  RETURN_IF_ERROR(TakeDeliveryError());

  // librdkafka's argument macros cast their arguments unparenthesized: plain names only.
  const char* key = record.key ? record.key->data() : nullptr;
  const size_t key_size = record.key ? record.key->size() : 0;
  char* value =
      record.value ? const_cast<char*>(record.value->data()) : nullptr;  // copied (F_COPY), not written
  const size_t value_size = record.value ? record.value->size() : 0;
  const int32_t partition = record.partition.value_or(RD_KAFKA_PARTITION_UA);
  const int64_t timestamp_ms = record.timestamp_ms.value_or(0);  // 0: now
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(queue_timeout_ms);
  // Each pass either queues the record, fails, or waits kQueueFullPollMs for room: bounded by
  // the deadline.
  while (true) {
    // producev takes the headers over only when it succeeds, so they are made afresh each pass.
    HeadersPtr headers(rd_kafka_headers_new(record.headers.size()));
    for (const ProducerHeader& header : record.headers) {
      rd_kafka_header_add(headers.get(), header.name.data(), static_cast<ssize_t>(header.name.size()),
                          header.value ? header.value->data() : nullptr,
                          header.value ? static_cast<ssize_t>(header.value->size()) : 0);
    }
    rd_kafka_headers_t* record_headers = headers.get();
    const rd_kafka_resp_err_t err =
        rd_kafka_producev(rk, RD_KAFKA_V_TOPIC(topic.c_str()), RD_KAFKA_V_PARTITION(partition),
                          RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_KEY(key, key_size),
                          RD_KAFKA_V_VALUE(value, value_size), RD_KAFKA_V_TIMESTAMP(timestamp_ms),
                          RD_KAFKA_V_HEADERS(record_headers), RD_KAFKA_V_END);
    if (err == RD_KAFKA_RESP_ERR_NO_ERROR) {
      (void)headers.release();  // the record owns them now
      return Status::OK();
    }
    if (err != RD_KAFKA_RESP_ERR__QUEUE_FULL) return KafkaStatus(err, "producing a record to " + topic);
    if (std::chrono::steady_clock::now() >= deadline) {
      return KafkaStatus(err, "producing a record to " + topic + " (the client's queue stayed full for " +
                                  std::to_string(queue_timeout_ms) + " ms)");
    }
    rd_kafka_poll(rk, kQueueFullPollMs);
  }
}

Status KafkaProducer::Flush(int64_t timeout_ms) {
  const rd_kafka_resp_err_t err = rd_kafka_flush(producer_.get(), static_cast<int>(timeout_ms));
  RETURN_IF_ERROR(TakeDeliveryError());
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return KafkaStatus(err, std::to_string(rd_kafka_outq_len(producer_.get())) +
                                " Kafka record(s) still undelivered after " + std::to_string(timeout_ms) +
                                " ms");
  }
  return Status::OK();
}

Status KafkaProducer::LearnTopic(const std::string& topic, int64_t timeout_ms) {
  struct TopicDeleter {
    void operator()(rd_kafka_topic_t* rkt) const { rd_kafka_topic_destroy(rkt); }
  };
  std::unique_ptr<rd_kafka_topic_t, TopicDeleter> handle(
      rd_kafka_topic_new(producer_.get(), topic.c_str(), nullptr));
  if (!handle) return KafkaStatus(rd_kafka_last_error(), "naming the Kafka topic " + topic);
  const rd_kafka_metadata_t* raw = nullptr;
  const rd_kafka_resp_err_t err =
      rd_kafka_metadata(producer_.get(), /*all_topics=*/0, handle.get(), &raw, static_cast<int>(timeout_ms));
  MetadataPtr metadata(raw);
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR)
    return KafkaStatus(err, "learning the partitions of Kafka topic " + topic);
  return Status::OK();
}

}  // namespace basin::stream::kafka
