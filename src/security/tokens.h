// Bearer tokens for the HTTP API: random secrets given to a user once, kept in the warehouse
// only as their SHA-256 hashes (`_basin_security/tokens/<id>.json`, docs/server.md has the
// format), valid until they expire or are revoked.
//
// A token's text is "basin_<id>_<secret>": the id names the object that holds the hash, so
// a lookup reads one object and compares hashes in constant time.
//
// Thread safety: all methods may be called from many threads (the store's objects are the
// state; nothing is cached, so a revocation takes effect at the next request).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "basin/clock.h"
#include "basin/object_store.h"
#include "basin/status.h"

namespace basin::security {

struct Token {
  std::string id;  // 16 lower-case hex digits
  std::string user;
  int64_t created_time_ms = 0;
  std::optional<int64_t> expires_time_ms;  // none: until revoked
};

struct NewToken {
  Token token;
  std::string text;  // "basin_<id>_<secret>": shown once, never stored
};

class TokenStore {
 public:
  // `warehouse`: the warehouse's root store.
  TokenStore(std::shared_ptr<ObjectStore> warehouse, std::shared_ptr<const Clock> clock)
      : store_(std::move(warehouse)), clock_(std::move(clock)) {}

  // A new token for `user` (which the caller has checked exists), valid for `lifetime_ms`
  // (none: until revoked). InvalidArgument for a lifetime that is not positive.
  Result<NewToken> Create(const std::string& user, std::optional<int64_t> lifetime_ms);

  // The token `text` stands for, when it is well formed, known, unexpired and unrevoked;
  // Unauthenticated otherwise, with the same message whatever the reason.
  Result<Token> Authenticate(std::string_view text) const;

  // Ends the token `id` at once. NotFound when there is no such token.
  Status Revoke(const std::string& id);

  // The tokens of `user` (all users' when nullopt), expired ones included, by id.
  Result<std::vector<Token>> List(const std::optional<std::string>& user) const;

 private:
  std::shared_ptr<ObjectStore> store_;
  std::shared_ptr<const Clock> clock_;
};

}  // namespace basin::security
