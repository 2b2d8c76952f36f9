// SCRAM-SHA-256 password verifiers (RFC 5802, RFC 7677) in PostgreSQL's stored text form:
// what Basin keeps for a user's password, never the password itself.
//
// Passwords are used as their bytes (UTF-8 for non-ASCII), without SASLprep normalization,
// as server/pg/scram.h explains.
//
// Thread safety: ScramVerifier is a value; the functions are thread-safe.
#pragma once

#include <string>
#include <string_view>

#include "basin/status.h"

namespace basin::security {

// What the server stores for a password: enough to check a client's proof, never the password.
struct ScramVerifier {
  int iterations = 0;
  std::string salt;        // raw bytes
  std::string stored_key;  // raw 32 bytes: SHA-256(ClientKey)
  std::string server_key;  // raw 32 bytes: HMAC(SaltedPassword, "Server Key")
};

// A verifier with a fresh random 16-byte salt. Fails with InvalidArgument when iterations < 1,
// Internal when OpenSSL cannot produce random bytes or a hash.
Result<ScramVerifier> MakeScramVerifier(std::string_view password, int iterations = 4096);

// As MakeScramVerifier with a given salt, for known-answer tests and importing verifiers.
// Fails with InvalidArgument when the salt is empty or iterations < 1.
Result<ScramVerifier> MakeScramVerifierWithSalt(std::string_view password, std::string_view salt,
                                                int iterations);

// PostgreSQL's text form (what pg_authid.rolpassword holds):
// "SCRAM-SHA-256$<iterations>:<base64 salt>$<base64 StoredKey>:<base64 ServerKey>".
std::string FormatScramVerifier(const ScramVerifier& verifier);

// The inverse of FormatScramVerifier. Fails with InvalidArgument naming the malformed part.
Result<ScramVerifier> ParseScramVerifier(std::string_view text);

}  // namespace basin::security
