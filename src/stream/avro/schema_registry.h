// A Confluent-compatible schema registry, as Avro values in Kafka name it: the writer schema
// of a record is looked up by the id its bytes carry (GET <url>/schemas/ids/<id>, answered
// with {"schema": "<the schema's JSON>"}), once per id per process.
//
// Thread safety: thread-safe; one registry per URL per process (At).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "basin/status.h"

namespace basin::stream {

class SchemaRegistry {
 public:
  // The registry at `url` ("http://host:port" with an optional path below which the API
  // is). InvalidArgument for a URL that is not one.
  static Result<std::shared_ptr<SchemaRegistry>> At(const std::string& url);

  // The writer schema (Avro JSON) of `id`. InvalidArgument when the registry has no such id
  // (a record naming it is a bad record); IOError, retryable, when the registry cannot be
  // reached or answers otherwise (the batch fails and runs again).
  Result<std::string> WriterSchema(int32_t id);

  const std::string& url() const { return url_; }

 private:
  SchemaRegistry(std::string url, std::string host, std::string base_path)
      : url_(std::move(url)), host_(std::move(host)), base_path_(std::move(base_path)) {}

  const std::string url_;
  const std::string host_;       // scheme://host:port, as cpp-httplib takes it
  const std::string base_path_;  // "" or "/prefix"
  std::mutex mu_;
  std::map<int32_t, std::string> schemas_;
};

}  // namespace basin::stream
