#include "delta/json_fields.h"

#include <limits>

namespace basin::delta::json_fields {

const json* Field::Find() const {
  auto it = obj.find(name);
  if (it == obj.end() || it->is_null()) return nullptr;
  return &*it;
}

std::string Field::Name() const {
  if (prefix.empty()) return std::string(name);
  return std::string(prefix) + "." + std::string(name);
}

Status Field::Missing() const {
  return Status::Corruption(where + ": missing required field '" + Name() + "'");
}

Status Field::WrongType(std::string_view expected) const {
  return Status::Corruption(where + ": field '" + Name() + "' must be " + std::string(expected));
}

Result<std::optional<std::string>> OptionalString(const Field& f) {
  const json* v = f.Find();
  if (v == nullptr) return std::optional<std::string>();
  if (!v->is_string()) return f.WrongType("a string");
  return std::optional<std::string>(v->get_ref<const std::string&>());
}

Result<std::string> RequiredString(const Field& f) {
  ASSIGN_OR_RETURN(auto v, OptionalString(f));
  if (!v) return f.Missing();
  return std::move(*v);
}

Result<std::optional<int64_t>> OptionalInt64(const Field& f) {
  const json* v = f.Find();
  if (v == nullptr) return std::optional<int64_t>();
  if (v->is_number_unsigned()) {
    auto u = v->get<uint64_t>();
    if (u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
      return f.WrongType("a 64-bit integer");
    return std::optional<int64_t>(static_cast<int64_t>(u));
  }
  if (v->is_number_integer()) return std::optional<int64_t>(v->get<int64_t>());
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
  const json* v = f.Find();
  if (v == nullptr) return std::optional<bool>();
  if (!v->is_boolean()) return f.WrongType("a boolean");
  return std::optional<bool>(v->get<bool>());
}

Result<bool> RequiredBool(const Field& f) {
  ASSIGN_OR_RETURN(auto v, OptionalBool(f));
  if (!v) return f.Missing();
  return *v;
}

Result<std::optional<std::vector<std::string>>> OptionalStringList(const Field& f) {
  const json* v = f.Find();
  if (v == nullptr) return std::optional<std::vector<std::string>>();
  if (!v->is_array()) return f.WrongType("a list of strings");
  std::vector<std::string> out;
  out.reserve(v->size());
  for (const json& item : *v) {
    if (!item.is_string()) return f.WrongType("a list of strings");
    out.push_back(item.get<std::string>());
  }
  return std::optional<std::vector<std::string>>(std::move(out));
}

namespace {

// A map value as text: strings as they are, other scalars in their JSON form; nullopt for null.
Result<std::optional<std::string>> ScalarText(const Field& f, const json& value) {
  if (value.is_null()) return std::optional<std::string>();
  if (value.is_string()) return std::optional<std::string>(value.get_ref<const std::string&>());
  if (value.is_structured()) return f.WrongType("a map of strings");
  return std::optional<std::string>(Dump(value));
}

}  // namespace

Result<std::map<std::string, std::optional<std::string>>> OptionalNullableStringMap(const Field& f) {
  std::map<std::string, std::optional<std::string>> out;
  const json* v = f.Find();
  if (v == nullptr) return out;
  if (v->is_object()) {
    for (const auto& [key, value] : v->items()) {
      ASSIGN_OR_RETURN(out[key], ScalarText(f, value));
    }
    return out;
  }
  if (!v->is_array()) return f.WrongType("a map");
  for (const json& entry : *v) {
    if (!entry.is_object()) return f.WrongType("a map (list of key/value entries)");
    auto key = entry.find("key");
    if (key == entry.end() || !key->is_string()) return f.WrongType("a map with string keys");
    auto value = entry.find("value");
    std::optional<std::string> text;
    if (value != entry.end()) {
      ASSIGN_OR_RETURN(text, ScalarText(f, *value));
    }
    out[key->get<std::string>()] = std::move(text);
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

std::string Dump(const json& value) { return value.dump(-1, ' ', false, json::error_handler_t::replace); }

}  // namespace basin::delta::json_fields
