#include "delta/json_fields.h"

#include <limits>

namespace basin::delta::json_fields {

std::string Location::ToString() const {
  return line == 0 ? source : source + " line " + std::to_string(line);
}

std::optional<Element> Field::Find() const {
  Element value;
  if (obj.at_key(name).get(value) != simdjson::SUCCESS || value.is_null()) return std::nullopt;
  return value;
}

std::string Field::Name() const {
  if (prefix.empty()) return std::string(name);
  return std::string(prefix) + "." + std::string(name);
}

Status Field::Missing() const {
  return Status::Corruption(where.ToString() + ": missing required field '" + Name() + "'");
}

Status Field::WrongType(std::string_view expected) const {
  return Status::Corruption(where.ToString() + ": field '" + Name() + "' must be " + std::string(expected));
}

Result<std::optional<std::string>> OptionalString(const Field& f) {
  auto v = f.Find();
  if (!v) return std::optional<std::string>();
  std::string_view text;
  if (v->get_string().get(text) != simdjson::SUCCESS) return f.WrongType("a string");
  return std::optional<std::string>(text);
}

Result<std::string> RequiredString(const Field& f) {
  ASSIGN_OR_RETURN(auto v, OptionalString(f));
  if (!v) return f.Missing();
  return std::move(*v);
}

Result<std::optional<int64_t>> OptionalInt64(const Field& f) {
  auto v = f.Find();
  if (!v) return std::optional<int64_t>();
  int64_t n = 0;
  if (v->get_int64().get(n) == simdjson::SUCCESS) return std::optional<int64_t>(n);
  if (v->is_uint64()) return f.WrongType("a 64-bit integer");
  return f.WrongType("an integer");
}

Result<int64_t> RequiredInt64(const Field& f) {
  ASSIGN_OR_RETURN(auto v, OptionalInt64(f));
  if (!v) return f.Missing();
  return *v;
}

Result<std::optional<int32_t>> OptionalInt32(const Field& f) {
  ASSIGN_OR_RETURN(auto v, OptionalInt64(f));
  if (!v) return std::optional<int32_t>();
  if (*v < std::numeric_limits<int32_t>::min() || *v > std::numeric_limits<int32_t>::max()) {
    return f.WrongType("a 32-bit integer");
  }
  return std::optional<int32_t>(static_cast<int32_t>(*v));
}

Result<int32_t> RequiredInt32(const Field& f) {
  ASSIGN_OR_RETURN(auto v, OptionalInt32(f));
  if (!v) return f.Missing();
  return *v;
}

Result<std::optional<bool>> OptionalBool(const Field& f) {
  auto v = f.Find();
  if (!v) return std::optional<bool>();
  bool b = false;
  if (v->get_bool().get(b) != simdjson::SUCCESS) return f.WrongType("a boolean");
  return std::optional<bool>(b);
}

Result<bool> RequiredBool(const Field& f) {
  ASSIGN_OR_RETURN(auto v, OptionalBool(f));
  if (!v) return f.Missing();
  return *v;
}

Result<std::optional<std::vector<std::string>>> OptionalStringList(const Field& f) {
  auto v = f.Find();
  if (!v) return std::optional<std::vector<std::string>>();
  simdjson::dom::array items;
  if (v->get_array().get(items) != simdjson::SUCCESS) return f.WrongType("a list of strings");
  std::vector<std::string> out;
  out.reserve(items.size());
  for (Element item : items) {
    std::string_view text;
    if (item.get_string().get(text) != simdjson::SUCCESS) return f.WrongType("a list of strings");
    out.emplace_back(text);
  }
  return std::optional<std::vector<std::string>>(std::move(out));
}

namespace {

// A map value as text: strings as they are, other scalars in their JSON form; nullopt for null.
Result<std::optional<std::string>> ScalarText(const Field& f, Element value) {
  if (value.is_null()) return std::optional<std::string>();
  std::string_view text;
  if (value.get_string().get(text) == simdjson::SUCCESS) return std::optional<std::string>(text);
  if (value.is_object() || value.is_array()) return f.WrongType("a map of strings");
  return std::optional<std::string>(Dump(value));
}

}  // namespace

Result<std::map<std::string, std::optional<std::string>>> OptionalNullableStringMap(const Field& f) {
  std::map<std::string, std::optional<std::string>> out;
  auto v = f.Find();
  if (!v) return out;
  Object object;
  if (v->get_object().get(object) == simdjson::SUCCESS) {
    for (auto [key, value] : object) {
      ASSIGN_OR_RETURN(out[std::string(key)], ScalarText(f, value));
    }
    return out;
  }
  simdjson::dom::array entries;
  if (v->get_array().get(entries) != simdjson::SUCCESS) return f.WrongType("a map");
  for (Element entry : entries) {
    Object pair;
    if (entry.get_object().get(pair) != simdjson::SUCCESS)
      return f.WrongType("a map (list of key/value entries)");
    std::string_view key;
    if (pair.at_key("key").get_string().get(key) != simdjson::SUCCESS)
      return f.WrongType("a map with string keys");
    std::optional<std::string> text;
    Element value;
    if (pair.at_key("value").get(value) == simdjson::SUCCESS) {
      ASSIGN_OR_RETURN(text, ScalarText(f, value));
    }
    out[std::string(key)] = std::move(text);
  }
  return out;
}

Result<std::map<std::string, std::string>> OptionalStringMap(const Field& f) {
  ASSIGN_OR_RETURN(auto nullable, OptionalNullableStringMap(f));
  std::map<std::string, std::string> out;
  for (auto& [key, value] : nullable) {
    if (value) out.emplace(key, std::move(*value));
  }
  return out;
}

std::string Dump(Element value) { return simdjson::minify(value); }
std::string Dump(Object value) { return simdjson::minify(value); }

}  // namespace basin::delta::json_fields
