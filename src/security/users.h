// The server's users: each a name and a SCRAM-SHA-256 verifier (never the password), kept in
// the warehouse as `_basin_security/users/<name>.json` (docs/server.md has the format).
//
// Thread safety: all methods may be called from many threads (the store's objects are the
// state; nothing is cached).
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "basin/clock.h"
#include "basin/object_store.h"
#include "basin/status.h"

namespace basin::security {

struct User {
  std::string name;
  std::string scram_verifier;  // PostgreSQL's form: SCRAM-SHA-256$<iterations>:<salt>$<stored>:<server>
  bool admin = false;
  int64_t created_time_ms = 0;
};

class UserStore {
 public:
  // `warehouse`: the warehouse's root store.
  UserStore(std::shared_ptr<ObjectStore> warehouse, std::shared_ptr<const Clock> clock)
      : store_(std::move(warehouse)), clock_(std::move(clock)) {}

  // nullopt when there is no such user; Corruption naming the object when it is unreadable.
  Result<std::optional<User>> Find(const std::string& name) const;
  // AlreadyExists when the user exists; InvalidArgument for a name other than letters,
  // digits and _ (at most 63 characters, as PostgreSQL's) or an empty password.
  Status Create(const std::string& name, const std::string& password, bool admin);

  // Removes the user. NotFound when there is no such user.
  Status Delete(const std::string& name);

  // The first start of a server: creates `admin` unless it exists, with `password`, or with
  // a random one when `password` is empty. Returns the password it generated (to be shown
  // once), nullopt when it generated none.
  Result<std::optional<std::string>> EnsureAdmin(const std::string& password);

 private:
  std::shared_ptr<ObjectStore> store_;
  std::shared_ptr<const Clock> clock_;
};

// Whether `name` may name a user or role.
Status CheckPrincipalName(const std::string& name);

}  // namespace basin::security
