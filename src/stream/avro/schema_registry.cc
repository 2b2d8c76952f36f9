#include "stream/avro/schema_registry.h"

#include <httplib.h>

#include <nlohmann/json.hpp>
#include <utility>

namespace basin::stream {

Result<std::shared_ptr<SchemaRegistry>> SchemaRegistry::At(const std::string& url) {
  static std::mutex registries_mu;
  static auto* registries = new std::map<std::string, std::shared_ptr<SchemaRegistry>>();  // for the process
  const size_t scheme = url.find("://");
  if (scheme == std::string::npos ||
      (url.compare(0, scheme, "http") != 0 && url.compare(0, scheme, "https") != 0) ||
      scheme + 3 >= url.size()) {
    return Status::InvalidArgument("schemaRegistryUrl: '" + url + "' is not an http:// or https:// URL");
  }
  std::string host = url, base_path;
  if (const size_t path = url.find('/', scheme + 3); path != std::string::npos) {
    host = url.substr(0, path);
    base_path = url.substr(path);
    while (!base_path.empty() && base_path.back() == '/') base_path.pop_back();
  }
  std::lock_guard<std::mutex> lock(registries_mu);
  std::shared_ptr<SchemaRegistry>& registry = (*registries)[url];
  if (!registry) registry.reset(new SchemaRegistry(url, std::move(host), std::move(base_path)));
  return registry;
}

Result<std::string> SchemaRegistry::WriterSchema(int32_t id) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (auto it = schemas_.find(id); it != schemas_.end()) return it->second;
  }
  const std::string path = base_path_ + "/schemas/ids/" + std::to_string(id);
  const std::string where = "schema registry " + url_ + ": GET " + path;
  httplib::Client client(host_);
  client.set_connection_timeout(5);
  client.set_read_timeout(10);
  httplib::Result response = client.Get(path);
  if (!response) {
    return Status::IOError(where + " failed: " + httplib::to_string(response.error()), /*retryable=*/true);
  }
  if (response->status == 404) {
    return Status::InvalidArgument("the schema registry " + url_ + " has no schema with id " +
                                   std::to_string(id));
  }
  if (response->status != 200) {
    return Status::IOError(where + " answered HTTP " + std::to_string(response->status), /*retryable=*/true);
  }
  nlohmann::json body = nlohmann::json::parse(response->body, nullptr, /*allow_exceptions=*/false);
  if (!body.is_object() || !body.contains("schema") || !body["schema"].is_string()) {
    return Status::IOError(where + " answered without a \"schema\" string", /*retryable=*/true);
  }
  std::string schema = body["schema"].get<std::string>();
  std::lock_guard<std::mutex> lock(mu_);
  schemas_.emplace(id, schema);
  return schema;
}

}  // namespace basin::stream
