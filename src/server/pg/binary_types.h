// PostgreSQL's binary layouts (format code 1) of the types whose text DuckDB and PostgreSQL
// write alike but whose bytes differ from it: date (int32 days since 2000-01-01), time
// (int64 microseconds since midnight), timestamp and timestamptz (int64 microseconds since
// 2000-01-01 00:00 UTC), interval (int64 microseconds, int32 days, int32 months), numeric
// (base-10000 digits with weight, sign and display scale) and uuid (16 bytes). Infinite dates
// and timestamps are the largest and smallest values, as in PostgreSQL.
//
// Thread safety: functions of their arguments.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "basin/status.h"
#include "server/pg/types.h"

namespace basin::server::pg {

// An integer's bytes in network order, and back.
template <typename T>
std::string BigEndian(T value) {
  std::string out(sizeof(T), '\0');
  for (size_t i = 0; i < sizeof(T); i++)
    out[sizeof(T) - 1 - i] = static_cast<char>((value >> (8 * i)) & 0xff);
  return out;
}
template <typename T>
T FromBigEndian(std::string_view bytes) {
  T value = 0;
  for (char c : bytes) value = static_cast<T>((value << 8) | static_cast<unsigned char>(c));
  return value;
}

// Whether `oid` is one of the types above.
bool HasBinaryLayout(Oid oid);

// `text`, a value in PostgreSQL's text form (ToPgText of DuckDB's rendering), in `oid`'s
// binary layout. InvalidArgument naming the type when the text is not such a value.
Result<std::string> EncodeBinary(Oid oid, std::string_view text);

// A binary value of `oid` sent by a client, as text DuckDB casts to the type.
// InvalidArgument when the bytes are not such a value (a wrong length, a bad digit).
Result<std::string> DecodeBinary(Oid oid, std::string_view bytes);

}  // namespace basin::server::pg
