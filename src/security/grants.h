// Roles and privileges kept in the warehouse (docs/governance.md has the format and the
// rules), and what one user may do (Access).
//
// Privileges are granted on the catalog, a schema or a table, and hold for everything
// below it: SELECT on a schema reads each of its tables. A user has its own grants and
// those of the roles granted to it. Each grant and each role membership is one object under
// `_basin_security/`, created with put-if-absent and removed with a delete, so two
// administrators granting at once never lose one another's grants.
//
// Thread safety: GrantStore's methods may be called from many threads (the store's objects
// are the state; nothing is cached). An Access is a value, read once per statement.
#pragma once

#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "basin/clock.h"
#include "basin/object_store.h"
#include "basin/status.h"

namespace basin::security {

enum class Privilege { kSelect, kModify, kCreate, kManage, kAll };

// "SELECT", "MODIFY", "CREATE", "MANAGE", "ALL PRIVILEGES".
std::string_view PrivilegeName(Privilege privilege);

// The catalog, a schema, or a table; names in lower case, as the warehouse keeps them.
struct Securable {
  enum class Kind { kCatalog, kSchema, kTable };
  Kind kind = Kind::kCatalog;
  std::string schema;  // kSchema, kTable
  std::string table;   // kTable

  static Securable Catalog() { return {}; }
  static Securable Schema(std::string schema) { return {Kind::kSchema, std::move(schema), ""}; }
  static Securable Table(std::string schema, std::string table) {
    return {Kind::kTable, std::move(schema), std::move(table)};
  }
  // "CATALOG", "SCHEMA sales", "TABLE sales.orders".
  std::string ToString() const;
  auto operator<=>(const Securable&) const = default;
};

struct Grant {
  std::string principal;  // a user or a role
  Securable on;
  Privilege privilege = Privilege::kSelect;
};

// `on` and everything above it, from the catalog down: a grant on any of them holds for `on`.
std::vector<Securable> ScopesOf(const Securable& on);

class GrantStore {
 public:
  // `warehouse`: the warehouse's root store.
  GrantStore(std::shared_ptr<ObjectStore> warehouse, std::shared_ptr<const Clock> clock)
      : store_(std::move(warehouse)), clock_(std::move(clock)) {}

  // AlreadyExists when the role exists. The caller checks that no user has the name.
  Status CreateRole(const std::string& role);
  Result<bool> RoleExists(const std::string& role) const;
  // Removes the role, its grants and its memberships. NotFound when there is no such role.
  Status DropRole(const std::string& role);

  // Idempotent: granting what is granted, or revoking what is not, changes nothing.
  Status GrantRole(const std::string& role, const std::string& member);
  Status RevokeRole(const std::string& role, const std::string& member);
  Result<std::vector<std::string>> RolesOf(const std::string& member) const;

  Status GrantPrivilege(const Grant& grant);
  // Revoking ALL PRIVILEGES removes every privilege the principal holds on the securable.
  Status RevokePrivilege(const Grant& grant);
  // The grants held by `principal` (directly, not through its roles).
  Result<std::vector<Grant>> GrantsOf(const std::string& principal) const;
  // Every grant, for SHOW GRANTS ON.
  Result<std::vector<Grant>> AllGrants() const;

  // Removes everything granted to or held by `principal` (DROP USER).
  Status ForgetPrincipal(const std::string& principal);
  // Removes every grant on `on` itself (DROP TABLE), not those above it. Lists every grant.
  Status ForgetSecurable(const Securable& on);

 private:
  std::shared_ptr<ObjectStore> store_;
  std::shared_ptr<const Clock> clock_;
};

// What one user may do, read once (per statement): whether it is an administrator, and the
// privileges it holds itself or through its roles.
class Access {
 public:
  static Access Administrator(std::string user);
  static Result<Access> Load(const GrantStore& grants, std::string user, bool admin);

  const std::string& user() const { return user_; }
  bool admin() const { return admin_; }
  const std::vector<std::string>& roles() const { return roles_; }

  // Whether the user holds `privilege` (or ALL PRIVILEGES) on `on` or anything above it, or
  // is an administrator.
  bool Holds(Privilege privilege, const Securable& on) const;
  // OK when Holds(); otherwise PermissionDenied naming the privilege, the securable and the
  // user: "permission denied: SELECT on TABLE sales.orders for user bob".
  Status Require(Privilege privilege, const Securable& on) const;
  // OK for administrators; PermissionDenied naming `what` and the user otherwise.
  Status RequireAdmin(std::string_view what) const;

 private:
  std::string user_;
  bool admin_ = false;
  std::vector<std::string> roles_;
  std::set<std::pair<Securable, Privilege>> held_;
};

}  // namespace basin::security
