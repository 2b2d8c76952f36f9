#include "stream/avro/datum_check.h"

#include <functional>
#include <limits>
#include <map>
#include <string>

namespace basin::stream {
namespace {

using json = nlohmann::json;

constexpr int kMaxDepth = 64;

}  // namespace

struct AvroDatumCheck::Reader {
  const unsigned char* at;
  const unsigned char* end;

  size_t left() const { return static_cast<size_t>(end - at); }

  // A zig-zag varint (int and long alike).
  Result<int64_t> Long() {
    uint64_t value = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (at == end) return Status::InvalidArgument("the Avro record ends inside a number");
      const unsigned char byte = *at++;
      value |= static_cast<uint64_t>(byte & 0x7F) << shift;
      if ((byte & 0x80) == 0) return static_cast<int64_t>((value >> 1) ^ (~(value & 1) + 1));
    }
    return Status::InvalidArgument("an Avro number longer than ten bytes");
  }

  Status Skip(size_t bytes, const char* what) {
    if (bytes > left()) {
      return Status::InvalidArgument("an Avro " + std::string(what) + " of " + std::to_string(bytes) +
                                     " bytes where " + std::to_string(left()) + " are left");
    }
    at += bytes;
    return Status::OK();
  }
};

Result<AvroDatumCheck> AvroDatumCheck::Of(const json& schema) {
  AvroDatumCheck check;
  std::map<std::string, int> named;
  using Kind = Node::Kind;
  static const std::map<std::string, Kind> kPrimitives = {
      {"null", Kind::kNull},   {"boolean", Kind::kBoolean}, {"int", Kind::kInt},
      {"long", Kind::kLong},   {"float", Kind::kFloat},     {"double", Kind::kDouble},
      {"bytes", Kind::kBytes}, {"string", Kind::kBytes}};
  // Adds the node of `type` (in namespace `space`) and returns its index.
  std::function<Result<int>(const json&, const std::string&)> add =
      [&](const json& type, const std::string& space) -> Result<int> {
    if (type.is_string()) {
      const std::string name = type.get<std::string>();
      if (auto primitive = kPrimitives.find(name); primitive != kPrimitives.end()) {
        check.nodes_.push_back({primitive->second, 0, {}});
        return static_cast<int>(check.nodes_.size()) - 1;
      }
      for (const std::string& full : {name, space.empty() ? name : space + "." + name}) {
        if (auto it = named.find(full); it != named.end()) return it->second;
      }
      return Status::InvalidArgument("the Avro schema names a type it does not define: " + name);
    }
    const int index = static_cast<int>(check.nodes_.size());
    check.nodes_.emplace_back();
    if (type.is_array()) {
      check.nodes_[index].kind = Kind::kUnion;
      for (const json& branch : type) {
        ASSIGN_OR_RETURN(int child, add(branch, space));
        check.nodes_[index].children.push_back(child);
      }
      return index;
    }
    if (!type.is_object() || !type.contains("type"))
      return Status::InvalidArgument("an Avro type without \"type\"");
    const json& kind = type["type"];
    if (!kind.is_string()) {
      check.nodes_.pop_back();
      return add(kind, space);
    }
    const std::string name = kind.get<std::string>();
    std::string inner = space;
    if (type.contains("name") && type["name"].is_string()) {
      std::string own = type["name"].get<std::string>();
      if (type.contains("namespace") && type["namespace"].is_string() && own.find('.') == std::string::npos) {
        inner = type["namespace"].get<std::string>();
      } else if (own.find('.') != std::string::npos) {
        inner = own.substr(0, own.rfind('.'));
      }
      named[own] = index;
      named[inner.empty() || own.find('.') != std::string::npos ? own : inner + "." + own] = index;
    }
    if (auto primitive = kPrimitives.find(name); primitive != kPrimitives.end()) {
      check.nodes_[index].kind = primitive->second;
    } else if (name == "fixed") {
      if (!type.contains("size") || !type["size"].is_number_integer() || type["size"].get<int64_t>() < 0) {
        return Status::InvalidArgument("an Avro fixed without a size");
      }
      check.nodes_[index] = {Kind::kFixed, type["size"].get<int64_t>(), {}};
    } else if (name == "enum") {
      if (!type.contains("symbols") || !type["symbols"].is_array()) {
        return Status::InvalidArgument("an Avro enum without symbols");
      }
      check.nodes_[index] = {Kind::kEnum, static_cast<int64_t>(type["symbols"].size()), {}};
    } else if (name == "record" || name == "error") {
      check.nodes_[index].kind = Kind::kRecord;
      if (!type.contains("fields") || !type["fields"].is_array()) {
        return Status::InvalidArgument("an Avro record without fields");
      }
      for (const json& field : type["fields"]) {
        if (!field.is_object() || !field.contains("type"))
          return Status::InvalidArgument("an Avro field without a type");
        ASSIGN_OR_RETURN(int child, add(field["type"], inner));
        check.nodes_[index].children.push_back(child);
      }
    } else if (name == "array" || name == "map") {
      const char* part = name == "array" ? "items" : "values";
      if (!type.contains(part)) return Status::InvalidArgument("an Avro " + name + " without " + part);
      ASSIGN_OR_RETURN(int child, add(type[part], space));
      check.nodes_[index] = {name == "array" ? Kind::kArray : Kind::kMap, 0, {child}};
    } else {
      return Status::InvalidArgument("the Avro schema names a type it does not define: " + name);
    }
    return index;
  };
  RETURN_IF_ERROR(add(schema, "").status());
  return check;
}

Status AvroDatumCheck::Skip(int index, Reader& reader, int depth) const {
  if (depth > kMaxDepth) return Status::InvalidArgument("an Avro value nested more than 64 deep");
  const Node& node = nodes_[index];
  using Kind = Node::Kind;
  switch (node.kind) {
    case Kind::kNull:
      return Status::OK();
    case Kind::kBoolean:
      return reader.Skip(1, "boolean");
    case Kind::kInt:
    case Kind::kLong:
      return reader.Long().status();
    case Kind::kFloat:
      return reader.Skip(4, "float");
    case Kind::kDouble:
      return reader.Skip(8, "double");
    case Kind::kBytes: {
      ASSIGN_OR_RETURN(int64_t length, reader.Long());
      if (length < 0)
        return Status::InvalidArgument("an Avro string or bytes of negative length " +
                                       std::to_string(length));
      return reader.Skip(static_cast<size_t>(length), "string or bytes");
    }
    case Kind::kFixed:
      return reader.Skip(static_cast<size_t>(node.count), "fixed");
    case Kind::kEnum: {
      ASSIGN_OR_RETURN(int64_t symbol, reader.Long());
      if (symbol < 0 || symbol >= node.count) {
        return Status::InvalidArgument("an Avro enum symbol " + std::to_string(symbol) + " of " +
                                       std::to_string(node.count));
      }
      return Status::OK();
    }
    case Kind::kUnion: {
      ASSIGN_OR_RETURN(int64_t branch, reader.Long());
      if (branch < 0 || branch >= static_cast<int64_t>(node.children.size())) {
        return Status::InvalidArgument("an Avro union branch " + std::to_string(branch) + " of " +
                                       std::to_string(node.children.size()));
      }
      return Skip(node.children[branch], reader, depth + 1);
    }
    case Kind::kRecord:
      for (int child : node.children) RETURN_IF_ERROR(Skip(child, reader, depth + 1));
      return Status::OK();
    case Kind::kArray:
    case Kind::kMap:
      for (;;) {
        ASSIGN_OR_RETURN(int64_t count, reader.Long());
        if (count == 0) return Status::OK();
        if (count < 0) {
          if (count == std::numeric_limits<int64_t>::min())
            return Status::InvalidArgument("an Avro block count out of range");
          count = -count;
          ASSIGN_OR_RETURN(int64_t bytes, reader.Long());
          if (bytes < 0) return Status::InvalidArgument("an Avro block of negative size");
        }
        if (static_cast<uint64_t>(count) > reader.left()) {
          return Status::InvalidArgument("an Avro block of " + std::to_string(count) + " items where " +
                                         std::to_string(reader.left()) + " bytes are left");
        }
        for (int64_t i = 0; i < count; i++) {
          if (node.kind == Kind::kMap) {
            ASSIGN_OR_RETURN(int64_t length, reader.Long());
            if (length < 0) return Status::InvalidArgument("an Avro map key of negative length");
            RETURN_IF_ERROR(reader.Skip(static_cast<size_t>(length), "map key"));
          }
          RETURN_IF_ERROR(Skip(node.children[0], reader, depth + 1));
        }
      }
  }
  return Status::OK();
}

Status AvroDatumCheck::Check(std::string_view datum) const {
  Reader reader{reinterpret_cast<const unsigned char*>(datum.data()),
                reinterpret_cast<const unsigned char*>(datum.data()) + datum.size()};
  return Skip(0, reader, 0);
}

}  // namespace basin::stream
