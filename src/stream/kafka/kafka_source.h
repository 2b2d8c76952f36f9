// The Kafka source of a stream (`STREAM read_kafka(...)`) as a BatchSource: a batch's entry
// holds, per topic and partition, the offsets [start, end) it reads:
//   {"kind": "kafka", "ranges": {"payments": {"0": [0, 500], "1": [0, 480]}}}
// The source's options come from binding its call once with nothing to read; one
// client lists partitions and watermarks for every later plan. With a dead-letter table
// (valueFormat json or csv), a batch first reads its ranges to find the records that do not parse
// and commits them there; read_kafka then skips them as the statement reads the ranges.
#pragma once

#include <memory>
#include <string>

#include "stream/source.h"

namespace basin::stream::kafka {

// `stream` is a STREAM read_kafka(...) source.
std::unique_ptr<BatchSource> NewKafkaSource(sql::Session& session, const sql::grammar::StreamSource& stream,
                                            DeadLetterWriter& dead_letters, std::string where);

}  // namespace basin::stream::kafka
