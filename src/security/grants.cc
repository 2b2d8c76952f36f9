#include "security/grants.h"

#include <nlohmann/json.hpp>
#include <optional>

#include "storage/object_key.h"

namespace basin::security {
namespace {

using json = nlohmann::json;

constexpr char kRoles[] = "_basin_security/roles/";
constexpr char kMembers[] = "_basin_security/members/";
constexpr char kGrants[] = "_basin_security/grants/";

constexpr Privilege kPrivileges[] = {Privilege::kSelect, Privilege::kModify, Privilege::kCreate,
                                     Privilege::kManage, Privilege::kAll};

// The object key's name of a privilege: one word.
std::string_view PrivilegeKey(Privilege privilege) {
  return privilege == Privilege::kAll ? std::string_view("ALL") : PrivilegeName(privilege);
}

// "catalog", "schema/<s>", "table/<s>/<t>": warehouse names hold no '/' (docs/catalog.md).
std::string SecurableKey(const Securable& on) {
  switch (on.kind) {
    case Securable::Kind::kCatalog:
      return "catalog";
    case Securable::Kind::kSchema:
      return "schema/" + on.schema;
    case Securable::Kind::kTable:
      return "table/" + on.schema + "/" + on.table;
  }
  return "catalog";
}

std::string GrantKey(const Grant& grant) {
  return kGrants + grant.principal + "/" + SecurableKey(grant.on) + "/" +
         std::string(PrivilegeKey(grant.privilege));
}

// The grant an object under kGrants stands for; nullopt for anything else (a temporary file
// of a write in progress).
std::optional<Grant> GrantOfKey(const std::string& key) {
  if (IsLocalTempFile(key)) return std::nullopt;
  std::vector<std::string_view> parts = SplitKey(std::string_view(key).substr(sizeof(kGrants) - 1));
  if (parts.size() < 3) return std::nullopt;
  Grant grant;
  grant.principal = std::string(parts[0]);
  if (parts[1] == "catalog" && parts.size() == 3) {
    grant.on = Securable::Catalog();
  } else if (parts[1] == "schema" && parts.size() == 4) {
    grant.on = Securable::Schema(std::string(parts[2]));
  } else if (parts[1] == "table" && parts.size() == 5) {
    grant.on = Securable::Table(std::string(parts[2]), std::string(parts[3]));
  } else {
    return std::nullopt;
  }
  for (Privilege privilege : kPrivileges) {
    if (parts.back() == PrivilegeKey(privilege)) {
      grant.privilege = privilege;
      return grant;
    }
  }
  return std::nullopt;
}

// Creates `key` unless it exists: granting twice is granting once.
Status PutOnce(ObjectStore& store, const std::string& key, const json& object) {
  Status put = store.PutIfAbsent(key, object.dump());
  return put.IsAlreadyExists() ? Status::OK() : put;
}

Status DeleteUnder(ObjectStore& store, const std::string& prefix) {
  ASSIGN_OR_RETURN(std::vector<ObjectInfo> objects, store.List(prefix));
  for (const ObjectInfo& object : objects) RETURN_IF_ERROR(store.Delete(object.key));
  return Status::OK();
}

}  // namespace

std::string_view PrivilegeName(Privilege privilege) {
  switch (privilege) {
    case Privilege::kSelect:
      return "SELECT";
    case Privilege::kModify:
      return "MODIFY";
    case Privilege::kCreate:
      return "CREATE";
    case Privilege::kManage:
      return "MANAGE";
    case Privilege::kAll:
      return "ALL PRIVILEGES";
  }
  return "ALL PRIVILEGES";
}

std::string Securable::ToString() const {
  switch (kind) {
    case Kind::kCatalog:
      return "CATALOG";
    case Kind::kSchema:
      return "SCHEMA " + schema;
    case Kind::kTable:
      return "TABLE " + schema + "." + table;
  }
  return "CATALOG";
}

Status GrantStore::CreateRole(const std::string& role) {
  json object = {{"name", role}, {"createdTime", clock_->NowMs()}};
  Status put = store_->PutIfAbsent(kRoles + role + ".json", object.dump());
  if (put.IsAlreadyExists()) return Status::AlreadyExists("role " + role + " exists");
  return put;
}

Result<bool> GrantStore::RoleExists(const std::string& role) const {
  Result<ObjectInfo> head = store_->Head(kRoles + role + ".json");
  if (head.ok()) return true;
  if (head.status().IsNotFound()) return false;
  return head.status();
}

Status GrantStore::DropRole(const std::string& role) {
  ASSIGN_OR_RETURN(bool exists, RoleExists(role));
  if (!exists) return Status::NotFound("role " + role + " does not exist");
  RETURN_IF_ERROR(ForgetPrincipal(role));
  ASSIGN_OR_RETURN(std::vector<ObjectInfo> memberships, store_->List(kMembers));
  for (const ObjectInfo& membership : memberships) {
    std::vector<std::string_view> parts =
        SplitKey(std::string_view(membership.key).substr(sizeof(kMembers) - 1));
    if (parts.size() == 2 && parts[1] == role) RETURN_IF_ERROR(store_->Delete(membership.key));
  }
  return store_->Delete(kRoles + role + ".json");
}

Status GrantStore::GrantRole(const std::string& role, const std::string& member) {
  json object = {{"role", role}, {"member", member}, {"grantedTime", clock_->NowMs()}};
  return PutOnce(*store_, kMembers + member + "/" + role, object);
}

Status GrantStore::RevokeRole(const std::string& role, const std::string& member) {
  return store_->Delete(kMembers + member + "/" + role);
}

Result<std::vector<std::string>> GrantStore::RolesOf(const std::string& member) const {
  const std::string prefix = kMembers + member + "/";
  ASSIGN_OR_RETURN(std::vector<ObjectInfo> objects, store_->List(prefix));
  std::vector<std::string> roles;
  for (const ObjectInfo& object : objects) {
    if (IsLocalTempFile(object.key)) continue;
    roles.push_back(object.key.substr(prefix.size()));
  }
  return roles;
}

Status GrantStore::GrantPrivilege(const Grant& grant) {
  json object = {{"principal", grant.principal},
                 {"on", grant.on.ToString()},
                 {"privilege", PrivilegeName(grant.privilege)},
                 {"grantedTime", clock_->NowMs()}};
  return PutOnce(*store_, GrantKey(grant), object);
}

Status GrantStore::RevokePrivilege(const Grant& grant) {
  if (grant.privilege != Privilege::kAll) return store_->Delete(GrantKey(grant));
  return DeleteUnder(*store_, kGrants + grant.principal + "/" + SecurableKey(grant.on) + "/");
}

Result<std::vector<Grant>> GrantStore::GrantsOf(const std::string& principal) const {
  ASSIGN_OR_RETURN(std::vector<ObjectInfo> objects, store_->List(kGrants + principal + "/"));
  std::vector<Grant> grants;
  for (const ObjectInfo& object : objects) {
    if (std::optional<Grant> grant = GrantOfKey(object.key)) grants.push_back(std::move(*grant));
  }
  return grants;
}

Result<std::vector<Grant>> GrantStore::AllGrants() const {
  ASSIGN_OR_RETURN(std::vector<ObjectInfo> objects, store_->List(kGrants));
  std::vector<Grant> grants;
  for (const ObjectInfo& object : objects) {
    if (std::optional<Grant> grant = GrantOfKey(object.key)) grants.push_back(std::move(*grant));
  }
  return grants;
}

Status GrantStore::ForgetSecurable(const Securable& on) {
  ASSIGN_OR_RETURN(std::vector<Grant> grants, AllGrants());
  for (const Grant& grant : grants) {
    if (grant.on == on) RETURN_IF_ERROR(store_->Delete(GrantKey(grant)));
  }
  return Status::OK();
}

Status GrantStore::ForgetPrincipal(const std::string& principal) {
  RETURN_IF_ERROR(DeleteUnder(*store_, kGrants + principal + "/"));
  return DeleteUnder(*store_, kMembers + principal + "/");
}

Access Access::Administrator(std::string user) {
  Access access;
  access.user_ = std::move(user);
  access.admin_ = true;
  return access;
}

Result<Access> Access::Load(const GrantStore& grants, std::string user, bool admin) {
  Access access;
  access.user_ = std::move(user);
  access.admin_ = admin;
  ASSIGN_OR_RETURN(access.roles_, grants.RolesOf(access.user_));
  if (admin) return access;
  std::vector<std::string> principals = access.roles_;
  principals.push_back(access.user_);
  for (const std::string& principal : principals) {
    ASSIGN_OR_RETURN(std::vector<Grant> held, grants.GrantsOf(principal));
    for (const Grant& grant : held) access.held_.emplace(grant.on, grant.privilege);
  }
  return access;
}

bool Access::Holds(Privilege privilege, const Securable& on) const {
  if (admin_) return true;
  for (const Securable& scope : ScopesOf(on)) {
    if (held_.count({scope, privilege}) > 0 || held_.count({scope, Privilege::kAll}) > 0) return true;
  }
  return false;
}

Status Access::Require(Privilege privilege, const Securable& on) const {
  if (Holds(privilege, on)) return Status::OK();
  return Status::PermissionDenied("permission denied: " + std::string(PrivilegeName(privilege)) + " on " +
                                  on.ToString() + " for user " + user_);
}

Status Access::RequireAdmin(std::string_view what) const {
  if (admin_) return Status::OK();
  return Status::PermissionDenied("permission denied: " + std::string(what) +
                                  " needs an administrator, user " + user_ + " is not one");
}

std::vector<Securable> ScopesOf(const Securable& on) {
  std::vector<Securable> scopes = {Securable::Catalog()};
  if (on.kind != Securable::Kind::kCatalog) scopes.push_back(Securable::Schema(on.schema));
  if (on.kind == Securable::Kind::kTable) scopes.push_back(on);
  return scopes;
}

}  // namespace basin::security
