// What the Avro tests share: a small schema registry on loopback (the part of Confluent's API
// Basin reads, GET /schemas/ids/<id>), and an Avro binary encoder written from the spec, so
// that the records the tests produce are not encoded by the library that decodes them.
#pragma once

#include <httplib.h>

#include <cstdint>
#include <cstring>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

namespace basin::stream::testing {

class TestSchemaRegistry {
 public:
  TestSchemaRegistry() {
    server_.Get(R"(/schemas/ids/(\d+))", [this](const httplib::Request& request,
                                                httplib::Response& response) {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = schemas_.find(std::stoi(request.matches[1]));
      if (it == schemas_.end()) {
        response.status = 404;
        response.set_content(R"({"error_code": 40403, "message": "Schema not found"})", "application/json");
        return;
      }
      response.set_content(nlohmann::json{{"schema", it->second}}.dump(),
                           "application/vnd.schemaregistry.v1+json");
      gets_++;
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    while (!server_.is_running()) std::this_thread::yield();
  }
  ~TestSchemaRegistry() {
    server_.stop();
    thread_.join();
  }

  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }

  // Registers `schema` (Avro JSON) under a new id, which it returns.
  int32_t Register(const std::string& schema) {
    std::lock_guard<std::mutex> lock(mu_);
    const int32_t id = static_cast<int32_t>(schemas_.size()) + 1;
    schemas_[id] = schema;
    return id;
  }

  // How many schemas the registry has served.
  int gets() {
    std::lock_guard<std::mutex> lock(mu_);
    return gets_;
  }

 private:
  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
  std::mutex mu_;
  std::map<int32_t, std::string> schemas_;
  int gets_ = 0;
};

// Avro's binary encoding (the specification's "Binary Encoding"), a value at a time.
class AvroEncoder {
 public:
  AvroEncoder& Long(int64_t v) {
    uint64_t zigzag = (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63);
    while (zigzag >= 0x80) {
      bytes_ += static_cast<char>((zigzag & 0x7F) | 0x80);
      zigzag >>= 7;
    }
    bytes_ += static_cast<char>(zigzag);
    return *this;
  }
  AvroEncoder& Int(int32_t v) { return Long(v); }
  AvroEncoder& Boolean(bool v) {
    bytes_ += static_cast<char>(v ? 1 : 0);
    return *this;
  }
  AvroEncoder& Double(double v) {
    char raw[8];
    std::memcpy(raw, &v, 8);  // little-endian, as on the machines the tests run on
    bytes_.append(raw, 8);
    return *this;
  }
  AvroEncoder& Bytes(const std::string& v) {
    Long(static_cast<int64_t>(v.size()));
    bytes_ += v;
    return *this;
  }
  AvroEncoder& String(const std::string& v) { return Bytes(v); }
  // A decimal's unscaled value as big-endian two's complement bytes (2 bytes: |v| < 32768).
  AvroEncoder& Decimal16(int16_t unscaled) {
    const auto u = static_cast<uint16_t>(unscaled);
    return Bytes(std::string{static_cast<char>(u >> 8), static_cast<char>(u & 0xFF)});
  }

  // The record in Confluent's wire format with writer schema `id`.
  std::string Framed(int32_t id) const {
    std::string out(1, '\0');
    for (int shift = 24; shift >= 0; shift -= 8)
      out += static_cast<char>((static_cast<uint32_t>(id) >> shift) & 0xFF);
    return out + bytes_;
  }

 private:
  std::string bytes_;
};

}  // namespace basin::stream::testing
