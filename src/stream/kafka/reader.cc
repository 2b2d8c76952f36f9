#include "stream/kafka/reader.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <deque>
#include <iterator>
#include <map>
#include <set>

namespace basin::stream::kafka {

OwnedKafkaRecord Own(const KafkaRecord& record) {
  OwnedKafkaRecord out;
  CopyInto(record, out);
  return out;
}

KafkaRecord ViewOf(const OwnedKafkaRecord& record) {
  KafkaRecord view;
  view.key = record.key;
  view.value = record.value;
  view.topic = record.topic;
  view.partition = record.partition;
  view.offset = record.offset;
  view.timestamp_ms = record.timestamp_ms;
  view.timestamp_type = record.timestamp_type;
  view.headers.reserve(record.headers.size());
  for (const auto& [name, value] : record.headers) view.headers.push_back(KafkaHeader{name, value});
  return view;
}

void CopyInto(const KafkaRecord& record, OwnedKafkaRecord& out) {
  auto copy = [](std::optional<std::string_view> bytes, std::optional<std::string>& to) {
    if (!bytes) {
      to.reset();
    } else if (to) {
      to->assign(*bytes);
    } else {
      to.emplace(*bytes);
    }
  };
  copy(record.key, out.key);
  copy(record.value, out.value);
  out.topic.assign(record.topic);
  out.partition = record.partition;
  out.offset = record.offset;
  out.timestamp_ms = record.timestamp_ms;
  out.timestamp_type = record.timestamp_type;
  out.headers.resize(record.headers.size());
  for (size_t h = 0; h < record.headers.size(); h++) {
    out.headers[h].first.assign(record.headers[h].name);
    copy(record.headers[h].value, out.headers[h].second);
  }
}

namespace {

using SteadyClock = std::chrono::steady_clock;

// librdkafka requires a group for assign(); the reader never joins or commits it.
constexpr const char* kReaderGroupId = "basin-reader";

std::string At(const TopicPartition& tp, int64_t offset) {
  return ToString(tp) + " at offset " + std::to_string(offset);
}

std::string RangeText(const PartitionRange& range) {
  return "[" + std::to_string(range.start_offset) + ", " + std::to_string(range.end_offset) + ") of " +
         ToString(range.tp);
}

struct PartitionProgress {
  PartitionRange range;
  int64_t next_offset = 0;            // the next offset the callback may see
  std::optional<int64_t> end_of_log;  // the partition's end, when the client reported reaching it
  bool done = false;
};

Status CheckRanges(const std::vector<PartitionRange>& ranges) {
  std::set<TopicPartition> seen;
  for (const PartitionRange& range : ranges) {
    if (range.start_offset < 0 || range.end_offset < range.start_offset) {
      return Status::InvalidArgument("bad offset range " + RangeText(range));
    }
    if (!seen.insert(range.tp).second) {
      return Status::InvalidArgument("partition " + ToString(range.tp) + " is given two ranges");
    }
  }
  return Status::OK();
}

// The client's copy of `message`'s fields, as views into it.
void FillRecord(const rd_kafka_message_t& message, KafkaReader::Headers wanted, KafkaRecord& record) {
  auto bytes = [](const void* data, size_t size) -> std::optional<std::string_view> {
    if (data == nullptr) return std::nullopt;
    return std::string_view(static_cast<const char*>(data), size);
  };
  record.key = bytes(message.key, message.key_len);
  record.value = bytes(message.payload, message.len);
  record.topic = rd_kafka_topic_name(message.rkt);
  record.partition = message.partition;
  record.offset = message.offset;
  rd_kafka_timestamp_type_t type = RD_KAFKA_TIMESTAMP_NOT_AVAILABLE;
  record.timestamp_ms = rd_kafka_message_timestamp(&message, &type);
  record.timestamp_type = type == RD_KAFKA_TIMESTAMP_CREATE_TIME       ? TimestampType::kCreateTime
                          : type == RD_KAFKA_TIMESTAMP_LOG_APPEND_TIME ? TimestampType::kLogAppendTime
                                                                       : TimestampType::kNone;
  if (record.timestamp_type == TimestampType::kNone) record.timestamp_ms = -1;
  record.headers.clear();
  if (wanted == KafkaReader::Headers::kSkipped) return;
  rd_kafka_headers_t* headers = nullptr;
  if (rd_kafka_message_headers(&message, &headers) != RD_KAFKA_RESP_ERR_NO_ERROR) return;
  const size_t count = rd_kafka_header_cnt(headers);
  for (size_t i = 0; i < count; i++) {
    const char* name = nullptr;
    const void* value = nullptr;
    size_t size = 0;
    if (rd_kafka_header_get_all(headers, i, &name, &value, &size) != RD_KAFKA_RESP_ERR_NO_ERROR) break;
    record.headers.push_back(KafkaHeader{name, bytes(value, size)});
  }
}

// The messages one call took from the consumer's queue, handed out one at a time; those not
// handed out when it is destroyed (a Read that ended early) are destroyed with it. One call
// per queued run of messages, not one per message: rd_kafka_consumer_poll() read the clock
// three times and took the queue's lock and condition for each, a tenth of a reading
// thread's time. Destroyed before the reader's consumer closes, as librdkafka requires of
// the queue.
class PolledMessages {
 public:
  explicit PolledMessages(rd_kafka_t* rk) : queue_(rd_kafka_queue_get_consumer(rk)) {}
  PolledMessages(const PolledMessages&) = delete;
  PolledMessages& operator=(const PolledMessages&) = delete;
  ~PolledMessages() {
    while (next_ < count_) rd_kafka_message_destroy(messages_[next_++]);
    rd_kafka_queue_destroy(queue_);
  }

  // The next message, polling the queue when the last call's are handed out: what it holds,
  // or when it holds nothing the first to arrive within `timeout_ms`. Null when none did.
  MessagePtr Next(int timeout_ms) {
    if (next_ == count_) {
      // A batch call with a timeout waits until the batch is full: it is made for one message.
      ssize_t taken = rd_kafka_consume_batch_queue(queue_, 0, messages_.data(), messages_.size());
      if (taken <= 0) taken = rd_kafka_consume_batch_queue(queue_, timeout_ms, messages_.data(), 1);
      next_ = 0;
      count_ = taken > 0 ? static_cast<size_t>(taken) : 0;
      if (count_ == 0) return nullptr;
    }
    return MessagePtr(messages_[next_++]);
  }

 private:
  rd_kafka_queue_t* queue_;
  std::array<rd_kafka_message_t*, 256> messages_{};
  size_t next_ = 0, count_ = 0;
};

}  // namespace

KafkaReader::KafkaReader(HandlePtr consumer, KafkaReaderOptions options)
    : consumer_(std::move(consumer)), options_(options) {}

KafkaReader::~KafkaReader() {
  // A consumer that was assigned partitions leaves cleanly before it is destroyed, and the
  // messages it gave go before it.
  assigned_.reset();
  rd_kafka_consumer_close(consumer_.get());
}

Result<std::unique_ptr<KafkaReader>> KafkaReader::OpenToRead(const KafkaOptions& options) {
  ASSIGN_OR_RETURN(std::unique_ptr<KafkaReader> reader, Open(options));
  RETURN_IF_ERROR(reader->ListPartitions(options.subscription).status());
  return reader;
}

Result<std::unique_ptr<KafkaReader>> KafkaReader::Open(const KafkaOptions& options,
                                                       KafkaReaderOptions reader_options) {
  ClientProperties properties = {
      {"group.id", kReaderGroupId},
      {"enable.auto.commit", "false"},
      {"enable.auto.offset.store", "false"},
      {"auto.offset.reset", "error"},
      {"enable.partition.eof", "true"},
      {"isolation.level", "read_committed"},
      {"log.connection.close", "false"},
      // A fetch waiting at a partition's end holds up the next Read's first fetch for this
      // long (librdkafka sends one fetch per broker at a time): 500 ms by default, too much
      // for a micro-batch's fixed cost, and a stream's reader is kept from batch to batch.
      // Reads end at watermarks, so short waits cost few extra requests.
      {"fetch.wait.max.ms", "1"},
      // With Nagle's algorithm a small request sent while another is unacknowledged waits for
      // the broker's delayed ACK: about half the reads of a 160,000-record topic from the
      // dev cluster took 40 ms longer. Kafka's Java clients set TCP_NODELAY too.
      {"socket.nagle.disable", "true"},
      // librdkafka 2.0 counts this against the records queued for all the client's
      // partitions together, and once they pass it stops fetching for a second, however fast
      // they are then taken: a stream 100,000 records behind its fetches (its next batch,
      // prefetched) waited that second. The prefetch stays bounded by
      // queued.max.messages.kbytes (64 MB).
      {"queued.min.messages", "10000000"},
  };
  // The user's kafka.* options may override the defaults above (not the ones Basin owns:
  // ParseKafkaOptions refuses those).
  properties.insert(properties.end(), options.client_properties.begin(), options.client_properties.end());
  properties.emplace_back("bootstrap.servers", options.bootstrap_servers);
  ASSIGN_OR_RETURN(ConfPtr conf, NewConf(properties));
  ASSIGN_OR_RETURN(HandlePtr consumer, NewClient(RD_KAFKA_CONSUMER, std::move(conf)));
  // Client-level events (errors, end-of-partition) reach rd_kafka_consumer_poll() with the records.
  if (rd_kafka_resp_err_t err = rd_kafka_poll_set_consumer(consumer.get());
      err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return KafkaStatus(err, "setting up a Kafka reader");
  }
  return std::unique_ptr<KafkaReader>(new KafkaReader(std::move(consumer), reader_options));
}

Result<std::vector<TopicPartition>> KafkaReader::ListPartitions(const TopicSubscription& subscription) {
  const rd_kafka_metadata_t* raw = nullptr;
  rd_kafka_resp_err_t err = rd_kafka_metadata(consumer_.get(), /*all_topics=*/1, /*only_rkt=*/nullptr, &raw,
                                              static_cast<int>(options_.request_timeout_ms));
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) return KafkaStatus(err, "listing the topics of the Kafka cluster");
  MetadataPtr metadata(raw);
  std::vector<TopicPartition> partitions;
  for (int t = 0; t < metadata->topic_cnt; t++) {
    const rd_kafka_metadata_topic_t& topic = metadata->topics[t];
    const std::string name = topic.topic;
    // A topic being created reports an error and no partitions until it has leaders.
    if (topic.err != RD_KAFKA_RESP_ERR_NO_ERROR && topic.partition_cnt == 0) continue;
    if (!subscription.pattern().empty() && name.starts_with("__")) continue;
    ASSIGN_OR_RETURN(const bool subscribed, subscription.Takes(name));
    if (!subscribed) continue;
    for (int p = 0; p < topic.partition_cnt; p++)
      partitions.push_back(TopicPartition{name, topic.partitions[p].id});
  }
  std::sort(partitions.begin(), partitions.end());
  return partitions;
}

Result<Watermarks> KafkaReader::QueryWatermarks(const TopicPartition& tp) {
  Watermarks marks;
  rd_kafka_resp_err_t err =
      rd_kafka_query_watermark_offsets(consumer_.get(), tp.topic.c_str(), tp.partition, &marks.low,
                                       &marks.high, static_cast<int>(options_.request_timeout_ms));
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR)
    return KafkaStatus(err, "querying the watermarks of " + ToString(tp));
  return marks;
}

Result<PartitionWatermarks> KafkaReader::QueryWatermarks(const std::vector<TopicPartition>& partitions) {
  ASSIGN_OR_RETURN(PartitionOffsets lows, QueryOffsets(partitions, RD_KAFKA_OFFSET_BEGINNING, "start"));
  ASSIGN_OR_RETURN(PartitionOffsets highs, QueryOffsets(partitions, RD_KAFKA_OFFSET_END, "end"));
  PartitionWatermarks result;
  for (const auto& [tp, low] : lows) {
    auto high = highs.find(tp);
    if (high == highs.end()) return Status::Internal("Kafka answered with no end for " + ToString(tp));
    result[tp] = Watermarks{low, high->second};
  }
  return result;
}

Result<PartitionOffsets> KafkaReader::QueryHighWatermarks(const std::vector<TopicPartition>& partitions) {
  return QueryOffsets(partitions, RD_KAFKA_OFFSET_END, "end");
}

Result<PartitionOffsets> KafkaReader::QueryOffsets(const std::vector<TopicPartition>& partitions,
                                                   int64_t logical, const std::string& which) {
  PartitionOffsets result;
  if (partitions.empty()) return result;
  PartitionListPtr list(rd_kafka_topic_partition_list_new(static_cast<int>(partitions.size())));
  for (const TopicPartition& tp : partitions) {
    rd_kafka_topic_partition_list_add(list.get(), tp.topic.c_str(), tp.partition)->offset = logical;
  }
  // ListOffsets takes a time to look up per partition, where the logical offsets ask for
  // the earliest and the latest.
  if (rd_kafka_resp_err_t err = rd_kafka_offsets_for_times(consumer_.get(), list.get(),
                                                           static_cast<int>(options_.request_timeout_ms));
      err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return KafkaStatus(
        err, "querying the " + which + "s of " + std::to_string(partitions.size()) + " Kafka partitions");
  }
  for (int i = 0; i < list->cnt; i++) {
    const rd_kafka_topic_partition_t& entry = list->elems[i];
    const TopicPartition tp{entry.topic, entry.partition};
    if (entry.err != RD_KAFKA_RESP_ERR_NO_ERROR)
      return KafkaStatus(entry.err, "querying the " + which + " of " + ToString(tp));
    result[tp] = entry.offset;
  }
  return result;
}

struct KafkaReader::Assigned {
  explicit Assigned(rd_kafka_t* rk) : polled(rk) {}

  // What a held message counts against the limit.
  static size_t Bytes(const rd_kafka_message_t& message) { return message.key_len + message.len; }

  // Keeps `message` of `tp` for the next Read when it lies at or past where that Read would
  // start the partition and the limit allows; else drops it (past the limit, the partition
  // can no longer go on without being assigned again, and what it held goes too).
  void Hold(MessagePtr message, const TopicPartition& tp, size_t limit) {
    auto at = next.find(tp);
    if (at == next.end() || message->offset < at->second) return;
    if (held_bytes + Bytes(*message) > limit) {
      next.erase(at);
      Take(tp);
      return;
    }
    held_bytes += Bytes(*message);
    held[tp].push_back(std::move(message));
  }

  // The held records of `tp`, taken out in offset order.
  std::deque<MessagePtr> Take(const TopicPartition& tp) {
    auto it = held.find(tp);
    if (it == held.end()) return {};
    std::deque<MessagePtr> taken = std::move(it->second);
    held.erase(it);
    for (const MessagePtr& m : taken) held_bytes -= Bytes(*m);
    return taken;
  }

  // Declared first: destroyed after the held records and before the assignment changes.
  PolledMessages polled;  // taken from the client's queue, not yet looked at
  // The assigned partitions a next Read may go on with, each at the offset it would start at.
  std::map<TopicPartition, int64_t> next;
  std::map<TopicPartition, std::deque<MessagePtr>> held;  // records past that offset
  size_t held_bytes = 0;
};

Status KafkaReader::Assign(const std::vector<PartitionRange>& ranges) {
  Unassign();
  PartitionListPtr list(rd_kafka_topic_partition_list_new(static_cast<int>(ranges.size())));
  for (const PartitionRange& range : ranges) {
    rd_kafka_topic_partition_list_add(list.get(), range.tp.topic.c_str(), range.tp.partition)->offset =
        range.start_offset;
  }
  if (rd_kafka_resp_err_t err = rd_kafka_assign(consumer_.get(), list.get());
      err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return KafkaStatus(err, "assigning " + std::to_string(ranges.size()) + " Kafka partitions");
  }
  assignments_++;
  assigned_ = std::make_unique<Assigned>(consumer_.get());
  for (const PartitionRange& range : ranges) assigned_->next[range.tp] = range.start_offset;
  return Status::OK();
}

bool KafkaReader::Release() {
  std::unique_lock<std::mutex> lock(reading_, std::try_to_lock);
  if (!lock.owns_lock()) return false;
  Unassign();
  return true;
}

void KafkaReader::Unassign() {
  if (!assigned_) return;
  assigned_.reset();  // its messages, before the partitions they came from are released
  rd_kafka_assign(consumer_.get(), nullptr);
}

Status KafkaReader::Read(const std::vector<PartitionRange>& ranges, const RecordCallback& callback,
                         const CancellationToken* cancellation, Headers headers) {
  RETURN_IF_ERROR(CheckRanges(ranges));
  std::lock_guard<std::mutex> reading(reading_);
  std::map<TopicPartition, PartitionProgress> progress;
  std::vector<PartitionRange> to_read;
  for (const PartitionRange& range : ranges) {
    if (range.size() == 0) continue;
    progress.emplace(range.tp, PartitionProgress{range, range.start_offset, std::nullopt, false});
    to_read.push_back(range);
  }
  if (progress.empty()) return Status::OK();

  // Going on where the last Read ended, or from an assignment of these ranges.
  const bool goes_on = assigned_ && std::all_of(to_read.begin(), to_read.end(), [&](const PartitionRange& r) {
                         auto at = assigned_->next.find(r.tp);
                         return at != assigned_->next.end() && at->second == r.start_offset;
                       });
  if (!goes_on) RETURN_IF_ERROR(Assign(to_read));
  Assigned* assigned = assigned_.get();  // replaced when the Read assigns afresh
  // Unless every range is read, the partitions are released (and their records dropped).
  struct ReleaseUnlessRead {
    KafkaReader* reader;
    bool read = false;
    ~ReleaseUnlessRead() {
      if (!read) reader->Unassign();
    }
  } release{this};
  // The records held for these partitions come first, then the client's queue.
  std::deque<MessagePtr> held;
  for (const PartitionRange& range : to_read) {
    std::deque<MessagePtr> taken = assigned->Take(range.tp);
    std::move(taken.begin(), taken.end(), std::back_inserter(held));
  }

  size_t unfinished = progress.size();
  auto last_progress = SteadyClock::now();
  constexpr uint64_t kClockEvery = 1024;
  uint64_t passes = kClockEvery - 1;  // the first pass reads the clock
  bool progressed = false;            // a record arrived since the clock was last read
  bool stall_check_due = false;       // no progress for stall_timeout_ms, as of that reading
  const auto stall_timeout = std::chrono::milliseconds(options_.stall_timeout_ms);
  std::optional<Status> last_transient_error;  // a broker error librdkafka is retrying
  bool kicked = false;  // the Read, going on from the last, assigned its partitions afresh
  // Records arrive in runs from one partition: the last partition seen is looked up first.
  auto last = progress.end();
  KafkaRecord record;

  // Marks a partition's range as read; the next Read may start it at the range's end. The
  // partition is not paused: librdkafka keeps a paused partition paused across assignments
  // and then resumes fetching it only after its broker thread's next idle wake-up (up to a
  // second). What it prefetches past the range is held for the next Read (Assigned::Hold).
  auto finish = [&](std::map<TopicPartition, PartitionProgress>::iterator it) {
    it->second.done = true;
    unfinished--;
    last_progress = SteadyClock::now();
    assigned->next[it->first] = it->second.range.end_offset;
  };
  // The first unfinished partition, for messages about a stalled or cancelled Read.
  auto first_unfinished = [&]() -> const PartitionProgress& {
    for (const auto& [tp, state] : progress) {
      if (!state.done) return state;
    }
    return progress.begin()->second;  // unreachable while unfinished > 0
  };

  // Every pass waits at most poll_interval_ms; the Read ends when every range is read, or
  // after stall_timeout_ms without progress, or on cancellation.
  while (unfinished > 0) {
    // The clock and the cancellation token are read once per kClockEvery passes (the clock
    // read per record cost a tenth of a stream's time, the token's lock a thirtieth of its
    // read's), and whenever a poll found nothing.
    if (++passes % kClockEvery == 0) {
      if (cancellation != nullptr && cancellation->cancelled()) {
        const PartitionProgress& state = first_unfinished();
        return Status::Cancelled("reading Kafka was cancelled with " + std::to_string(unfinished) +
                                 " partition(s) unfinished, " + At(state.range.tp, state.next_offset) +
                                 " of " + RangeText(state.range));
      }
      const auto now = SteadyClock::now();
      if (progressed) last_progress = now;
      progressed = false;
      stall_check_due = now - last_progress > stall_timeout;
    }
    if (stall_check_due) {
      const PartitionProgress& state = first_unfinished();
      const std::string where =
          At(state.range.tp, state.next_offset) + " (range " + RangeText(state.range) + ")";
      if (state.end_of_log && *state.end_of_log < state.range.end_offset) {
        return Status::InvalidArgument("range " + RangeText(state.range) +
                                       " ends beyond the partition's end, offset " +
                                       std::to_string(*state.end_of_log) + " (waited " +
                                       std::to_string(options_.stall_timeout_ms) + " ms for more records)");
      }
      std::string cause =
          last_transient_error ? ": last broker error: " + last_transient_error->message() : "";
      return Status::IOError("no Kafka record arrived for " + std::to_string(options_.stall_timeout_ms) +
                                 " ms reading " + where + cause,
                             /*retryable=*/true);
    }
    MessagePtr message;
    if (!held.empty()) {
      message = std::move(held.front());
      held.pop_front();
    } else {
      message = assigned->polled.Next(static_cast<int>(options_.poll_interval_ms));
    }
    if (!message) {
      passes = kClockEvery - 1;  // read the clock on the next pass
      if (goes_on && !kicked) {
        // The client may have stopped fetching a while ago (librdkafka 2.0 stops for a
        // second once its queue passed queued.max.messages.kbytes, and only a new
        // assignment starts it again): once per Read, the unfinished partitions are assigned
        // afresh where they stand.
        kicked = true;
        std::vector<PartitionRange> rest;
        for (const auto& [tp, state] : progress) {
          if (!state.done) rest.push_back(PartitionRange{tp, state.next_offset, state.range.end_offset});
        }
        RETURN_IF_ERROR(Assign(rest));
        assigned = assigned_.get();
      }
      continue;
    }

    auto state = progress.end();
    if (message->rkt != nullptr) {
      const char* topic = rd_kafka_topic_name(message->rkt);
      if (last != progress.end() && last->first.partition == message->partition &&
          last->first.topic == topic) {
        state = last;
      } else {
        state = progress.find(TopicPartition{topic, message->partition});
      }
    }

    if (message->err != RD_KAFKA_RESP_ERR_NO_ERROR) {
      const rd_kafka_resp_err_t err = message->err;
      if (err == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
        if (state == progress.end() || state->second.done) continue;
        state->second.end_of_log = message->offset;
        // At or past the range's end: the offsets left in the range hold no records.
        if (message->offset >= state->second.range.end_offset) finish(state);
        continue;
      }
      if (err == RD_KAFKA_RESP_ERR__AUTO_OFFSET_RESET || err == RD_KAFKA_RESP_ERR_OFFSET_OUT_OF_RANGE) {
        if (state == progress.end()) continue;  // about a partition this Read does not read
        const PartitionRange& range = state->second.range;
        ASSIGN_OR_RETURN(const Watermarks marks, QueryWatermarks(range.tp));
        const std::string text = "range " + RangeText(range) + " lies outside the partition's offsets " +
                                 std::to_string(marks.low) + ".." + std::to_string(marks.high);
        if (range.start_offset < marks.low) {
          return Status::NotFound(text +
                                  ": records were deleted (retention or compaction) before they were read");
        }
        return Status::InvalidArgument(text);
      }
      const std::string where = state == progress.end()
                                    ? std::string("reading Kafka")
                                    : "reading " + At(state->first, state->second.next_offset);
      Status status = KafkaStatus(err, where);
      if (!status.retryable()) return status;
      last_transient_error = std::move(status);
      continue;
    }

    if (state == progress.end() || state->second.done) {
      // A record of a finished partition, or of one this Read does not read: the next's.
      if (message->rkt != nullptr) {
        TopicPartition tp{rd_kafka_topic_name(message->rkt), message->partition};
        assigned->Hold(std::move(message), tp, options_.held_bytes_limit);
      }
      continue;
    }
    last = state;
    PartitionProgress& partition = state->second;
    if (message->offset < partition.next_offset) continue;  // already passed on
    if (message->offset >= partition.range.end_offset) {
      finish(state);
      assigned->Hold(std::move(message), state->first, options_.held_bytes_limit);
      continue;
    }
    FillRecord(*message, headers, record);
    RETURN_IF_ERROR(callback(record));
    partition.next_offset = message->offset + 1;
    progressed = true;
    last_transient_error.reset();
    if (partition.next_offset >= partition.range.end_offset) finish(state);
  }
  release.read = true;
  return Status::OK();
}

}  // namespace basin::stream::kafka
