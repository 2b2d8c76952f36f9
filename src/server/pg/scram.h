// SCRAM-SHA-256 (RFC 5802, RFC 7677) for the server side of the PostgreSQL wire protocol:
// password verifiers in PostgreSQL's stored text form, and the server half of one SASL exchange.
//
// Only SCRAM-SHA-256 is offered, never SCRAM-SHA-256-PLUS, so a client asking for channel
// binding is refused.
//
// Passwords are used as their bytes (UTF-8 for non-ASCII), without SASLprep normalization.
// For ASCII passwords that is exactly what PostgreSQL and libpq compute (SASLprep leaves
// printable ASCII unchanged, and PostgreSQL falls back to the raw bytes for a password SASLprep
// refuses, such as one with control characters). A non-ASCII password that NFKC normalization
// would change can therefore fail against a client that normalizes it, as libpq does.
//
// Thread safety: ScramVerifier is a value, safe to copy between threads. A ScramExchange is one
// connection's state machine: not thread-safe, used by one thread at a time.
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include "basin/status.h"
#include "security/scram_verifier.h"

namespace basin::server::pg {

using security::ScramVerifier;

// Produces the server's part of the nonce: printable ASCII other than ',', at least one character.
using ScramNonceSource = std::function<Result<std::string>()>;

// 18 random bytes from OpenSSL, base64-encoded (as PostgreSQL does). Internal if OpenSSL fails.
Result<std::string> RandomScramNonce();

// The server half of one SCRAM-SHA-256 exchange, for one authentication attempt:
// ServerFirst once, then ServerFinal once. Any failure ends the exchange; later calls fail too,
// so a client cannot retry proofs against the same nonce.
class ScramExchange {
 public:
  explicit ScramExchange(ScramVerifier verifier, ScramNonceSource server_nonce = RandomScramNonce);

  // Reads the client-first-message ("n,,n=<user>,r=<client nonce>") and returns the
  // server-first-message ("r=<client nonce><server nonce>,s=<base64 salt>,i=<iterations>").
  // The user name is not checked (PostgreSQL takes it from the startup packet; libpq sends it
  // empty). Fails with InvalidArgument on a malformed message, a channel binding request
  // ("p=..."), an authorization identity or a mandatory extension; with Internal when called
  // out of order or the nonce source fails.
  Result<std::string> ServerFirst(std::string_view client_first_message);

  // Reads the client-final-message ("c=<base64 gs2 header>,r=<nonce>,p=<base64 proof>") and
  // returns the server-final-message ("v=<base64 ServerSignature>") when the proof is right.
  // Fails with InvalidArgument on a malformed message, a channel binding value or nonce that
  // does not match the first message, or a wrong proof (the message then says only that
  // password authentication failed); with Internal when called out of order.
  Result<std::string> ServerFinal(std::string_view client_final_message);

 private:
  enum class State { kAwaitingClientFirst, kAwaitingClientFinal, kDone };

  Result<std::string> DoServerFirst(std::string_view client_first_message);
  Result<std::string> DoServerFinal(std::string_view client_final_message);

  ScramVerifier verifier_;
  ScramNonceSource server_nonce_;
  State state_ = State::kAwaitingClientFirst;
  std::string gs2_header_;         // "n,," or "y,,", which c= must repeat
  std::string client_first_bare_;  // client-first-message without the gs2 header
  std::string server_first_;       // as sent
  std::string combined_nonce_;     // client nonce + server nonce
};

}  // namespace basin::server::pg
