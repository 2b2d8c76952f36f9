// The cryptographic primitives of users, tokens and SCRAM, on OpenSSL: hashes, HMAC, random
// bytes, base64.
//
// Thread safety: plain functions; OpenSSL's are thread-safe.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "basin/status.h"

namespace basin::security {

inline constexpr size_t kSha256Size = 32;

// SHA-256 of `data`, raw 32 bytes.
std::string Sha256(std::string_view data);
// HMAC-SHA-256, raw 32 bytes. InvalidArgument for a key longer than INT_MAX, Internal when
// OpenSSL fails.
Result<std::string> HmacSha256(std::string_view key, std::string_view data);
// `count` bytes from OpenSSL's random source; Internal when it fails.
Result<std::string> RandomBytes(size_t count);
// Whether a and b are equal, in a time that depends on their lengths only.
bool ConstantTimeEquals(std::string_view a, std::string_view b);

// Standard base64 (RFC 4648 section 4) with padding, as SCRAM uses it.
std::string Base64Encode(std::string_view bytes);
// Strict: refuses characters outside the alphabet, missing or misplaced padding, and whitespace,
// with InvalidArgument.
Result<std::string> Base64Decode(std::string_view text);

}  // namespace basin::security
