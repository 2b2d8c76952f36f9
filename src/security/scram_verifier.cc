#include "security/scram_verifier.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>

#include <charconv>
#include <climits>
#include <utility>

#include "security/crypto.h"

namespace basin::security {
namespace {

constexpr int kSaltSize = 16;
constexpr std::string_view kVerifierPrefix = "SCRAM-SHA-256$";

const unsigned char* Bytes(std::string_view s) { return reinterpret_cast<const unsigned char*>(s.data()); }

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
  if (decoded->size() != kSha256Size) {
    return Status::InvalidArgument(std::string("SCRAM verifier: ") + what + " is not 32 bytes");
  }
  return std::move(decoded).value();
}

}  // namespace

Result<ScramVerifier> MakeScramVerifierWithSalt(std::string_view password, std::string_view salt,
                                                int iterations) {
  if (iterations < 1) return Status::InvalidArgument("SCRAM iteration count must be at least 1");
  if (salt.empty()) return Status::InvalidArgument("SCRAM salt must not be empty");
  if (password.size() > static_cast<size_t>(INT_MAX) || salt.size() > static_cast<size_t>(INT_MAX)) {
    return Status::InvalidArgument("SCRAM password or salt too long");
  }
  std::string salted_password(kSha256Size, '\0');
  if (PKCS5_PBKDF2_HMAC(password.data(), static_cast<int>(password.size()), Bytes(salt),
                        static_cast<int>(salt.size()), iterations, EVP_sha256(),
                        static_cast<int>(kSha256Size),
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
  ASSIGN_OR_RETURN(std::string salt, RandomBytes(kSaltSize));
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

}  // namespace basin::security
