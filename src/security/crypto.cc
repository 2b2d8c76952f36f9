#include "security/crypto.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <openssl/sha.h>

#include <climits>
#include <cstdint>

namespace basin::security {
namespace {

constexpr std::string_view kBase64Alphabet =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

const unsigned char* Bytes(std::string_view s) { return reinterpret_cast<const unsigned char*>(s.data()); }

}  // namespace

std::string Sha256(std::string_view data) {
  std::string out(kSha256Size, '\0');
  SHA256(Bytes(data), data.size(), reinterpret_cast<unsigned char*>(out.data()));
  return out;
}

Result<std::string> HmacSha256(std::string_view key, std::string_view data) {
  if (key.size() > static_cast<size_t>(INT_MAX)) return Status::InvalidArgument("HMAC key too long");
  std::string out(kSha256Size, '\0');
  unsigned int out_len = 0;
  if (HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()), Bytes(data), data.size(),
           reinterpret_cast<unsigned char*>(out.data()), &out_len) == nullptr ||
      out_len != kSha256Size) {
    return Status::Internal("OpenSSL HMAC-SHA-256 failed");
  }
  return out;
}

Result<std::string> RandomBytes(size_t count) {
  std::string out(count, '\0');
  if (count > static_cast<size_t>(INT_MAX) ||
      RAND_bytes(reinterpret_cast<unsigned char*>(out.data()), static_cast<int>(count)) != 1) {
    return Status::Internal("OpenSSL could not produce random bytes");
  }
  return out;
}

bool ConstantTimeEquals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

std::string Base64Encode(std::string_view bytes) {
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  size_t i = 0;
  for (; i + 3 <= bytes.size(); i += 3) {
    uint32_t n = (uint32_t{static_cast<unsigned char>(bytes[i])} << 16) |
                 (uint32_t{static_cast<unsigned char>(bytes[i + 1])} << 8) |
                 uint32_t{static_cast<unsigned char>(bytes[i + 2])};
    out += kBase64Alphabet[(n >> 18) & 63];
    out += kBase64Alphabet[(n >> 12) & 63];
    out += kBase64Alphabet[(n >> 6) & 63];
    out += kBase64Alphabet[n & 63];
  }
  size_t rest = bytes.size() - i;
  if (rest > 0) {
    uint32_t n = uint32_t{static_cast<unsigned char>(bytes[i])} << 16;
    if (rest == 2) n |= uint32_t{static_cast<unsigned char>(bytes[i + 1])} << 8;
    out += kBase64Alphabet[(n >> 18) & 63];
    out += kBase64Alphabet[(n >> 12) & 63];
    out += rest == 2 ? kBase64Alphabet[(n >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

Result<std::string> Base64Decode(std::string_view text) {
  if (text.size() % 4 != 0) return Status::InvalidArgument("base64 length is not a multiple of 4");
  std::string out;
  out.reserve(text.size() / 4 * 3);
  for (size_t i = 0; i < text.size(); i += 4) {
    bool last_quad = i + 4 == text.size();
    uint32_t n = 0;
    int padding = 0;
    for (size_t j = 0; j < 4; ++j) {
      char c = text[i + j];
      uint32_t sextet = 0;
      if (c == '=') {
        // Padding only in the last two places of the last quad, and never followed by data.
        if (!last_quad || j < 2) return Status::InvalidArgument("misplaced base64 padding");
        ++padding;
      } else {
        if (padding > 0) return Status::InvalidArgument("misplaced base64 padding");
        size_t index = kBase64Alphabet.find(c);
        if (c == '\0' || index == std::string_view::npos) {
          return Status::InvalidArgument("invalid base64 character");
        }
        sextet = static_cast<uint32_t>(index);
      }
      n = (n << 6) | sextet;
    }
    out += static_cast<char>((n >> 16) & 0xff);
    if (padding < 2) out += static_cast<char>((n >> 8) & 0xff);
    if (padding < 1) out += static_cast<char>(n & 0xff);
  }
  return out;
}

}  // namespace basin::security
