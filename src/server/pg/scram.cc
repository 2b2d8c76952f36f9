#include "server/pg/scram.h"

#include <openssl/crypto.h>

#include <utility>
#include <vector>

#include "security/crypto.h"

namespace basin::server::pg {
namespace {

using security::Base64Decode;
using security::Base64Encode;
using security::HmacSha256;
using security::Sha256;

constexpr int kServerNonceBytes = 18;

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

Status MalformedClientFirst(std::string_view what) {
  return Status::InvalidArgument("malformed SCRAM client-first-message: " + std::string(what));
}

Status MalformedClientFinal(std::string_view what) {
  return Status::InvalidArgument("malformed SCRAM client-final-message: " + std::string(what));
}

}  // namespace

Result<std::string> RandomScramNonce() {
  ASSIGN_OR_RETURN(std::string raw, security::RandomBytes(kServerNonceBytes));
  return Base64Encode(raw);
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
  if (proof->size() != security::kSha256Size) return MalformedClientFinal("proof (p=) is not 32 bytes");

  std::string_view without_proof = message.substr(0, message.size() - proof_field.size() - 1);
  std::string auth_message;
  auth_message.reserve(client_first_bare_.size() + server_first_.size() + without_proof.size() + 2);
  auth_message.append(client_first_bare_).append(",").append(server_first_).append(",").append(without_proof);

  ASSIGN_OR_RETURN(std::string client_key, HmacSha256(verifier_.stored_key, auth_message));
  for (size_t i = 0; i < security::kSha256Size; ++i) client_key[i] ^= (*proof)[i];  // ClientSignature ^ proof
  std::string computed_stored_key = Sha256(client_key);
  OPENSSL_cleanse(client_key.data(), client_key.size());
  // A verifier parsed by ParseScramVerifier always has 32-byte keys; one built by hand may not.
  if (!security::ConstantTimeEquals(computed_stored_key, verifier_.stored_key)) {
    return Status::InvalidArgument("password authentication failed");
  }
  ASSIGN_OR_RETURN(std::string server_signature, HmacSha256(verifier_.server_key, auth_message));
  return "v=" + Base64Encode(server_signature);
}

}  // namespace basin::server::pg
