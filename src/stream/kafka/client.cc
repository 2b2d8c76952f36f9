#include "stream/kafka/client.h"

#include <array>

namespace basin::stream::kafka {

namespace {

// librdkafka writes its reasons into a caller's buffer; 512 bytes is what its examples use.
using ErrorText = std::array<char, 512>;

}  // namespace

Result<ConfPtr> NewConf(const ClientProperties& properties) {
  ConfPtr conf(rd_kafka_conf_new());
  ErrorText reason{};
  for (const auto& [name, value] : properties) {
    if (rd_kafka_conf_set(conf.get(), name.c_str(), value.c_str(), reason.data(), reason.size()) !=
        RD_KAFKA_CONF_OK) {
      return Status::InvalidArgument("Kafka client property '" + name + "' = '" + value +
                                     "': " + reason.data());
    }
  }
  return conf;
}

Result<HandlePtr> NewClient(rd_kafka_type_t type, ConfPtr conf) {
  ErrorText reason{};
  rd_kafka_t* rk = rd_kafka_new(type, conf.get(), reason.data(), reason.size());
  if (rk == nullptr) {
    return Status::InvalidArgument(std::string("cannot create a Kafka ") +
                                   (type == RD_KAFKA_PRODUCER ? "producer" : "consumer") + ": " +
                                   reason.data());
  }
  conf.release();  // rd_kafka_new owns it now
  return HandlePtr(rk);
}

bool IsRetryable(rd_kafka_resp_err_t err) {
  switch (err) {
    case RD_KAFKA_RESP_ERR__TRANSPORT:
    case RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN:
    case RD_KAFKA_RESP_ERR__TIMED_OUT:
    case RD_KAFKA_RESP_ERR__MSG_TIMED_OUT:
    case RD_KAFKA_RESP_ERR__RESOLVE:
    case RD_KAFKA_RESP_ERR__WAIT_COORD:
    case RD_KAFKA_RESP_ERR__QUEUE_FULL:
    case RD_KAFKA_RESP_ERR_REQUEST_TIMED_OUT:
    case RD_KAFKA_RESP_ERR_LEADER_NOT_AVAILABLE:
    case RD_KAFKA_RESP_ERR_NOT_LEADER_FOR_PARTITION:
    case RD_KAFKA_RESP_ERR_BROKER_NOT_AVAILABLE:
    case RD_KAFKA_RESP_ERR_NETWORK_EXCEPTION:
    case RD_KAFKA_RESP_ERR_COORDINATOR_NOT_AVAILABLE:
    case RD_KAFKA_RESP_ERR_NOT_COORDINATOR:
    case RD_KAFKA_RESP_ERR_KAFKA_STORAGE_ERROR:
    case RD_KAFKA_RESP_ERR_NOT_ENOUGH_REPLICAS:
    case RD_KAFKA_RESP_ERR_NOT_ENOUGH_REPLICAS_AFTER_APPEND:
    case RD_KAFKA_RESP_ERR_OFFSET_NOT_AVAILABLE:
    case RD_KAFKA_RESP_ERR_FENCED_LEADER_EPOCH:
    case RD_KAFKA_RESP_ERR_UNKNOWN_LEADER_EPOCH:
    case RD_KAFKA_RESP_ERR_REPLICA_NOT_AVAILABLE:
      return true;
    default:
      return false;
  }
}

Status KafkaStatus(rd_kafka_resp_err_t err, const std::string& context) {
  std::string message = context + ": " + rd_kafka_err2str(err) + " (" + rd_kafka_err2name(err) + ")";
  switch (err) {
    case RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART:
    case RD_KAFKA_RESP_ERR__UNKNOWN_TOPIC:
    case RD_KAFKA_RESP_ERR__UNKNOWN_PARTITION:
      return Status::NotFound(std::move(message));
    case RD_KAFKA_RESP_ERR__INVALID_ARG:
    case RD_KAFKA_RESP_ERR_INVALID_CONFIG:
      return Status::InvalidArgument(std::move(message));
    default:
      return Status::IOError(std::move(message), IsRetryable(err));
  }
}

}  // namespace basin::stream::kafka
