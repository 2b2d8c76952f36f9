#include "common/uuid.h"

#include <unistd.h>

#include <cassert>
#include <random>

namespace basin {

std::string NewUuidBytes() {
  // A forked child inherits its parent's generator: without reseeding, processes forked
  // from one parent would draw the same UUIDs (and commitInfo.txnIds, which tell commits apart).
  thread_local pid_t seeded_in = -1;
  thread_local std::mt19937_64 rng;
  if (seeded_in != getpid()) {
    rng.seed((uint64_t{std::random_device{}()} << 32) ^ std::random_device{}());
    seeded_in = getpid();
  }
  std::string bytes(16, '\0');
  for (int half = 0; half < 2; half++) {
    uint64_t v = rng();
    for (int i = 0; i < 8; i++) bytes[half * 8 + i] = static_cast<char>((v >> (8 * i)) & 0xff);
  }
  bytes[6] = static_cast<char>((bytes[6] & 0x0f) | 0x40);  // version 4
  bytes[8] = static_cast<char>((bytes[8] & 0x3f) | 0x80);  // RFC 4122 variant
  return bytes;
}

std::string FormatUuid(const std::string& bytes) {
  assert(bytes.size() == 16);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(36);
  for (size_t i = 0; i < 16; i++) {
    if (i == 4 || i == 6 || i == 8 || i == 10) out += '-';
    auto b = static_cast<unsigned char>(bytes[i]);
    out += kHex[b >> 4];
    out += kHex[b & 0xf];
  }
  return out;
}

std::string NewUuid() { return FormatUuid(NewUuidBytes()); }

}  // namespace basin
