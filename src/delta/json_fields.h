// Typed access to fields of JSON objects parsed by simdjson, for the log-action parser
// (delta/actions.cc). Every accessor reports a wrong type or a missing required field as
// Corruption naming where the value came from (file and line) and the field ("add.size");
// null counts as absent.
//
// Thread safety: stateless functions over values owned by the caller's parser.
#pragma once

#include <simdjson.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "basin/status.h"

namespace basin::delta::json_fields {

using Element = simdjson::dom::element;
using Object = simdjson::dom::object;

// Where a JSON value came from, for errors: "<source> line <n>", or `source` for line 0.
// Built into text only when an error needs it.
struct Location {
  const std::string& source;
  size_t line = 0;

  std::string ToString() const;
};

// A field: `obj` is an object; `prefix` is the enclosing field's name ("add"), or empty.
struct Field {
  Object obj;
  std::string_view prefix;
  std::string_view name;
  const Location& where;

  std::optional<Element> Find() const;  // nullopt when absent or null
  std::string Name() const;             // "add.size"
  Status Missing() const;
  Status WrongType(std::string_view expected) const;
};

Result<std::string> RequiredString(const Field& f);
Result<std::optional<std::string>> OptionalString(const Field& f);
Result<int64_t> RequiredInt64(const Field& f);
Result<std::optional<int64_t>> OptionalInt64(const Field& f);
Result<int32_t> RequiredInt32(const Field& f);
Result<std::optional<int32_t>> OptionalInt32(const Field& f);
Result<bool> RequiredBool(const Field& f);
Result<std::optional<bool>> OptionalBool(const Field& f);
// Array of strings; absent -> nullopt.
Result<std::optional<std::vector<std::string>>> OptionalStringList(const Field& f);
// A string-to-string map: a JSON object, or a list of {"key": k, "value": v} entries (the
// form some engines give Parquet MAPs). Null values are dropped.
Result<std::map<std::string, std::string>> OptionalStringMap(const Field& f);
// As OptionalStringMap, but keeps null values (partition values).
Result<std::map<std::string, std::optional<std::string>>> OptionalNullableStringMap(const Field& f);

// The value's JSON text, minified.
std::string Dump(Element value);
std::string Dump(Object value);

}  // namespace basin::delta::json_fields
