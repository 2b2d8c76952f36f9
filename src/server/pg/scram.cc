#include "server/pg/scram.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <openssl/sha.h>

#include <array>
#include <charconv>
#include <climits>
#include <cstdint>
#include <utility>
#include <vector>

namespace basin::server::pg {
namespace {

constexpr size_t kKeySize = SHA256_DIGEST_LENGTH;  // 32
constexpr int kSaltSize = 16;
constexpr int kServerNonceBytes = 18;
constexpr std::string_view kVerifierPrefix = "SCRAM-SHA-256$";
constexpr std::string_view kBase64Alphabet =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

const unsigned char* Bytes(std::string_view s) { return reinterpret_cast<const unsigned char*>(s.data()); }

Result<std::string> HmacSha256(std::string_view key, std::string_view data) {
  if (key.size() > static_cast<size_t>(INT_MAX)) return Status::InvalidArgument("HMAC key too long");
  std::string out(kKeySize, '\0');
  unsigned int out_len = 0;
  if (HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()), Bytes(data), data.size(),
           reinterpret_cast<unsigned char*>(out.data()), &out_len) == nullptr ||
      out_len != kKeySize) {
    return Status::Internal("OpenSSL HMAC-SHA-256 failed");
  }
  return out;
}

std::string Sha256(std::string_view data) {
  std::string out(kKeySize, '\0');
  SHA256(Bytes(data), data.size(), reinterpret_cast<unsigned char*>(out.data()));
  return out;
}

// Everything between commas; SCRAM attribute values cannot contain ',' so no escaping applies.
std::vector<std::string_view> SplitOnCommas(std::string_view s) {
  std::vector<std::string_view> fields;
  size_t start = 0;
  while (true) {
    size_t comma = s.find(',', start);
    if (comma == std::string_view::npos) {
      fields.push_back(s.substr(start));
      return fields;
    }
    fields.push_back(s.substr(start, comma - start));
    start = comma + 1;
  }
}

bool IsAttribute(std::string_view field, char name) {
  return field.size() >= 2 && field[0] == name && field[1] == '=';
}

// RFC 5802 "attr-val": an ALPHA, '=', then the value. Unknown ones are optional extensions.
bool IsAnyAttribute(std::string_view field) {
  if (field.size() < 2 || field[1] != '=') return false;
  char c = field[0];
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

// RFC 5802 "printable": %x21-2B / %x2D-7E, i.e. visible ASCII except ','.
bool IsValidNonce(std::string_view nonce) {
  if (nonce.empty()) return false;
  for (char c : nonce) {
    if (c < 0x21 || c > 0x7e || c == ',') return false;
  }
  return true;
}

Result<int> ParseIterations(std::string_view text) {
  int value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || value < 1) {
    return Status::InvalidArgument("SCRAM verifier: iteration count is not a positive integer");
  }
  return value;
}

// Splits "a<sep>b" into exactly two parts.
bool SplitPair(std::string_view s, char sep, std::string_view* first, std::string_view* second) {
  size_t at = s.find(sep);
  if (at == std::string_view::npos || s.find(sep, at + 1) != std::string_view::npos) return false;
  *first = s.substr(0, at);
  *second = s.substr(at + 1);
  return true;
}

Result<std::string> DecodeKey(std::string_view base64, const char* what) {
  auto decoded = Base64Decode(base64);
  if (!decoded.ok()) return decoded.status().WithContext(std::string("SCRAM verifier: ") + what);
  if (decoded->size() != kKeySize) {
    return Status::InvalidArgument(std::string("SCRAM verifier: ") + what + " is not 32 bytes");
  }
  return std::move(decoded).value();
}

Status MalformedClientFirst(std::string_view what) {
  return Status::InvalidArgument("malformed SCRAM client-first-message: " + std::string(what));
}

Status MalformedClientFinal(std::string_view what) {
  return Status::InvalidArgument("malformed SCRAM client-final-message: " + std::string(what));
}

}  // namespace

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

Result<ScramVerifier> MakeScramVerifierWithSalt(std::string_view password, std::string_view salt,
                                                int iterations) {
  if (iterations < 1) return Status::InvalidArgument("SCRAM iteration count must be at least 1");
  if (salt.empty()) return Status::InvalidArgument("SCRAM salt must not be empty");
  if (password.size() > static_cast<size_t>(INT_MAX) || salt.size() > static_cast<size_t>(INT_MAX)) {
    return Status::InvalidArgument("SCRAM password or salt too long");
  }
  std::string salted_password(kKeySize, '\0');
  if (PKCS5_PBKDF2_HMAC(password.data(), static_cast<int>(password.size()), Bytes(salt),
                        static_cast<int>(salt.size()), iterations, EVP_sha256(), static_cast<int>(kKeySize),
                        reinterpret_cast<unsigned char*>(salted_password.data())) != 1) {
    return Status::Internal("OpenSSL PBKDF2-HMAC-SHA-256 failed");
  }
  ASSIGN_OR_RETURN(std::string client_key, HmacSha256(salted_password, "Client Key"));
  ASSIGN_OR_RETURN(std::string server_key, HmacSha256(salted_password, "Server Key"));
  OPENSSL_cleanse(salted_password.data(), salted_password.size());
  ScramVerifier verifier;
  verifier.iterations = iterations;
  verifier.salt = std::string(salt);
  verifier.stored_key = Sha256(client_key);
  verifier.server_key = std::move(server_key);
  OPENSSL_cleanse(client_key.data(), client_key.size());
  return verifier;
}

Result<ScramVerifier> MakeScramVerifier(std::string_view password, int iterations) {
  std::string salt(kSaltSize, '\0');
  if (RAND_bytes(reinterpret_cast<unsigned char*>(salt.data()), kSaltSize) != 1) {
    return Status::Internal("OpenSSL could not produce random bytes for a SCRAM salt");
  }
  return MakeScramVerifierWithSalt(password, salt, iterations);
}

std::string FormatScramVerifier(const ScramVerifier& verifier) {
  return std::string(kVerifierPrefix) + std::to_string(verifier.iterations) + ":" +
         Base64Encode(verifier.salt) + "$" + Base64Encode(verifier.stored_key) + ":" +
         Base64Encode(verifier.server_key);
}

Result<ScramVerifier> ParseScramVerifier(std::string_view text) {
  if (text.substr(0, kVerifierPrefix.size()) != kVerifierPrefix) {
    return Status::InvalidArgument("SCRAM verifier does not start with \"SCRAM-SHA-256$\"");
  }
  text.remove_prefix(kVerifierPrefix.size());
  std::string_view salt_part, keys_part, iterations_text, salt_text, stored_text, server_text;
  if (!SplitPair(text, '$', &salt_part, &keys_part)) {
    return Status::InvalidArgument(
        "SCRAM verifier: expected \"<iterations>:<salt>$<StoredKey>:<ServerKey>\"");
  }
  if (!SplitPair(salt_part, ':', &iterations_text, &salt_text)) {
    return Status::InvalidArgument("SCRAM verifier: expected \"<iterations>:<salt>\" after the prefix");
  }
  if (!SplitPair(keys_part, ':', &stored_text, &server_text)) {
    return Status::InvalidArgument("SCRAM verifier: expected \"<StoredKey>:<ServerKey>\" after the salt");
  }
  ScramVerifier verifier;
  ASSIGN_OR_RETURN(verifier.iterations, ParseIterations(iterations_text));
  auto salt = Base64Decode(salt_text);
  if (!salt.ok()) return salt.status().WithContext("SCRAM verifier: salt");
  if (salt->empty()) return Status::InvalidArgument("SCRAM verifier: salt is empty");
  verifier.salt = std::move(salt).value();
  ASSIGN_OR_RETURN(verifier.stored_key, DecodeKey(stored_text, "StoredKey"));
  ASSIGN_OR_RETURN(verifier.server_key, DecodeKey(server_text, "ServerKey"));
  return verifier;
}

Result<std::string> RandomScramNonce() {
  std::array<unsigned char, kServerNonceBytes> raw{};
  if (RAND_bytes(raw.data(), kServerNonceBytes) != 1) {
    return Status::Internal("OpenSSL could not produce random bytes for a SCRAM nonce");
  }
  return Base64Encode(std::string_view(reinterpret_cast<const char*>(raw.data()), raw.size()));
}

ScramExchange::ScramExchange(ScramVerifier verifier, ScramNonceSource server_nonce)
    : verifier_(std::move(verifier)), server_nonce_(std::move(server_nonce)) {}

Result<std::string> ScramExchange::ServerFirst(std::string_view client_first_message) {
  if (state_ != State::kAwaitingClientFirst) {
    state_ = State::kDone;
    return Status::Internal("SCRAM server-first-message requested out of order");
  }
  state_ = State::kDone;  // until the message is accepted
  ASSIGN_OR_RETURN(std::string server_first, DoServerFirst(client_first_message));
  state_ = State::kAwaitingClientFinal;
  return server_first;
}

Result<std::string> ScramExchange::ServerFinal(std::string_view client_final_message) {
  if (state_ != State::kAwaitingClientFinal) {
    state_ = State::kDone;
    return Status::Internal("SCRAM server-final-message requested out of order");
  }
  state_ = State::kDone;  // one proof per exchange, right or wrong
  return DoServerFinal(client_final_message);
}

Result<std::string> ScramExchange::DoServerFirst(std::string_view message) {
  // gs2-header: cbind-flag "," [authzid] ","
  if (message.empty()) return MalformedClientFirst("empty message");
  if (IsAttribute(message, 'p')) {
    return Status::InvalidArgument(
        "SCRAM channel binding was requested, but only SCRAM-SHA-256 without channel binding is offered");
  }
  // 'y' means the client could bind but thinks the server cannot; true here, since -PLUS is not offered.
  if ((message[0] != 'n' && message[0] != 'y') || message.size() < 2 || message[1] != ',') {
    return MalformedClientFirst("expected a gs2 header starting with \"n,\" or \"y,\"");
  }
  if (message.size() < 3) return MalformedClientFirst("truncated gs2 header");
  if (IsAttribute(message.substr(2), 'a')) {
    return Status::InvalidArgument("SCRAM authorization identity (a=) is not supported");
  }
  if (message[2] != ',') return MalformedClientFirst("expected \",\" ending the gs2 header");
  std::string_view gs2_header = message.substr(0, 3);
  std::string_view bare = message.substr(3);

  std::vector<std::string_view> fields = SplitOnCommas(bare);
  if (IsAttribute(fields[0], 'm')) {
    return Status::InvalidArgument("SCRAM client requires an unsupported extension (m=)");
  }
  if (!IsAttribute(fields[0], 'n')) return MalformedClientFirst("expected user name (n=)");
  if (fields.size() < 2 || !IsAttribute(fields[1], 'r')) {
    return MalformedClientFirst("expected client nonce (r=) after the user name");
  }
  std::string_view client_nonce = fields[1].substr(2);
  if (!IsValidNonce(client_nonce)) {
    return MalformedClientFirst("client nonce is empty or not printable ASCII");
  }
  for (size_t i = 2; i < fields.size(); ++i) {
    if (!IsAnyAttribute(fields[i])) return MalformedClientFirst("malformed extension attribute");
  }

  if (!server_nonce_) return Status::Internal("SCRAM exchange has no server nonce source");
  ASSIGN_OR_RETURN(std::string server_nonce, server_nonce_());
  if (!IsValidNonce(server_nonce)) return Status::Internal("SCRAM server nonce is empty or not printable");

  gs2_header_ = std::string(gs2_header);
  client_first_bare_ = std::string(bare);
  combined_nonce_ = std::string(client_nonce) + server_nonce;
  server_first_ = "r=" + combined_nonce_ + ",s=" + Base64Encode(verifier_.salt) +
                  ",i=" + std::to_string(verifier_.iterations);
  return server_first_;
}

Result<std::string> ScramExchange::DoServerFinal(std::string_view message) {
  // c=<gs2 header> "," r=<nonce> *("," extension) "," p=<proof>
  std::vector<std::string_view> fields = SplitOnCommas(message);
  if (!IsAttribute(fields[0], 'c')) return MalformedClientFinal("expected channel binding (c=)");
  if (fields.size() < 2 || !IsAttribute(fields[1], 'r')) {
    return MalformedClientFinal("expected nonce (r=) after channel binding");
  }
  std::string_view proof_field = fields.back();
  if (fields.size() < 3 || !IsAttribute(proof_field, 'p'))
    return MalformedClientFinal("expected proof (p=) last");
  for (size_t i = 2; i + 1 < fields.size(); ++i) {
    if (!IsAnyAttribute(fields[i]) || IsAttribute(fields[i], 'p')) {
      return MalformedClientFinal("malformed extension attribute");
    }
  }

  auto binding = Base64Decode(fields[0].substr(2));
  if (!binding.ok()) return binding.status().WithContext("malformed SCRAM client-final-message: c=");
  if (*binding != gs2_header_) {
    return Status::InvalidArgument("SCRAM channel binding (c=) does not match the client-first-message");
  }
  if (fields[1].substr(2) != combined_nonce_) {
    return Status::InvalidArgument("SCRAM nonce (r=) does not match the one the server sent");
  }
  auto proof = Base64Decode(proof_field.substr(2));
  if (!proof.ok()) return proof.status().WithContext("malformed SCRAM client-final-message: p=");
  if (proof->size() != kKeySize) return MalformedClientFinal("proof (p=) is not 32 bytes");

  std::string_view without_proof = message.substr(0, message.size() - proof_field.size() - 1);
  std::string auth_message;
  auth_message.reserve(client_first_bare_.size() + server_first_.size() + without_proof.size() + 2);
  auth_message.append(client_first_bare_).append(",").append(server_first_).append(",").append(without_proof);

  ASSIGN_OR_RETURN(std::string client_key, HmacSha256(verifier_.stored_key, auth_message));
  for (size_t i = 0; i < kKeySize; ++i) client_key[i] ^= (*proof)[i];  // ClientSignature ^ proof
  std::string computed_stored_key = Sha256(client_key);
  OPENSSL_cleanse(client_key.data(), client_key.size());
  // A verifier parsed by ParseScramVerifier always has 32-byte keys; one built by hand may not.
  if (verifier_.stored_key.size() != kKeySize ||
      CRYPTO_memcmp(computed_stored_key.data(), verifier_.stored_key.data(), kKeySize) != 0) {
    return Status::InvalidArgument("password authentication failed");
  }
  ASSIGN_OR_RETURN(std::string server_signature, HmacSha256(verifier_.server_key, auth_message));
  return "v=" + Base64Encode(server_signature);
}

}  // namespace basin::server::pg
