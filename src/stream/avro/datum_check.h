// A check that bytes are a well-formed Avro binary encoding of a writer schema, made before
// avro-c decodes them: avro-c trusts the lengths, counts and indexes it reads (a negative
// length asks for an allocation of ~2^64 bytes, an enum index beyond its symbols reads past
// their list), and Kafka values are external input. Every length must fit in the bytes
// left, every union branch and enum symbol must exist, array and map blocks may not claim
// more items than bytes are left, and nesting is at most 64 deep.
//
// Thread safety: immutable after Of.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string_view>
#include <vector>

#include "basin/status.h"

namespace basin::stream {

class AvroDatumCheck {
 public:
  // The check of `schema` (an Avro schema's JSON). InvalidArgument for one it cannot follow
  // (an unknown type name, a fixed without a size).
  static Result<AvroDatumCheck> Of(const nlohmann::json& schema);

  // OK when `datum` starts with a well-formed value of the schema (bytes after it are left
  // to the decoder); InvalidArgument naming what is wrong otherwise.
  Status Check(std::string_view datum) const;

 private:
  struct Node {
    enum class Kind {
      kNull,
      kBoolean,
      kInt,
      kLong,
      kFloat,
      kDouble,
      kBytes,
      kFixed,
      kEnum,
      kUnion,
      kRecord,
      kArray,
      kMap
    };
    Kind kind = Kind::kNull;
    int64_t count = 0;          // kFixed: its size; kEnum: its symbols
    std::vector<int> children;  // kRecord: fields; kUnion: branches; kArray, kMap: the items
  };
  struct Reader;

  Status Skip(int node, Reader& reader, int depth) const;

  std::vector<Node> nodes_;  // nodes_[0] is the schema's
};

}  // namespace basin::stream
