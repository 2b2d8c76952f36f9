#include "sql/governor.h"

#include <optional>
#include <utility>

#include "basin/object_store.h"

namespace basin::sql {

security::Securable TableSecurable(const catalog::TableName& table) {
  return security::Securable::Table(table.schema, table.table);
}

Governor::Governor(std::shared_ptr<const catalog::Warehouse> warehouse, engine::Connection& conn,
                   std::string user)
    : warehouse_(std::move(warehouse)),
      conn_(conn),
      user_(std::move(user)),
      users_(warehouse_->store(), warehouse_->clock()),
      grants_(warehouse_->store(), warehouse_->clock()),
      tokens_(warehouse_->store(), warehouse_->clock()),
      // Nothing for a user until BeginStatement reads its grants.
      access_(governed() ? security::Access() : security::Access::Administrator(user_)) {}

Status Governor::BeginStatement() {
  if (!governed()) return Status::OK();
  ASSIGN_OR_RETURN(std::optional<security::User> user, users_.Find(user_));
  // The same answer as a failed login: the session's user was dropped since it connected.
  if (!user) return Status::Unauthenticated("user " + user_ + " does not exist");
  ASSIGN_OR_RETURN(access_, security::Access::Load(grants_, user_, user->admin));
  if (!access_.admin() && !locked_down_) {
    // Warehouse tables are read and written through basin:// URLs (engine/store_registry.h),
    // whatever their store; nothing else, not even memory:// (a memory warehouse whole).
    // Disabling external access last also freezes allowed_directories.
    RETURN_IF_ERROR(
        conn_.Execute("SET allowed_directories = ['basin://']; SET enable_external_access = false"));
    locked_down_ = true;
  }
  return Status::OK();
}

Status Governor::Require(security::Privilege privilege, const security::Securable& on) const {
  return access_.Require(privilege, on);
}

Status Governor::RequireOnTable(security::Privilege privilege, const catalog::TableName& table) const {
  return access_.Require(privilege, TableSecurable(table));
}

Status Governor::RequireAdmin(std::string_view what) const { return access_.RequireAdmin(what); }

Status Governor::RequireReadAt(const std::string& location, std::string_view what) const {
  if (access_.admin()) return Status::OK();
  ASSIGN_OR_RETURN(std::optional<catalog::TableEntry> table, TableAt(location));
  return RequireReadOf(table, what);
}

Result<std::optional<catalog::TableEntry>> Governor::TableAt(const std::string& location) const {
  std::string absolute = location;
  if (location.find("://") == std::string::npos && !location.starts_with('/')) {
    ASSIGN_OR_RETURN(absolute, AbsoluteLocalPath(location));
  }
  return warehouse_->FindByLocation(absolute);
}

Status Governor::RequireReadOf(const std::optional<catalog::TableEntry>& table, std::string_view what) const {
  if (access_.admin()) return Status::OK();
  if (!table) {
    return Status::PermissionDenied("permission denied: " + std::string(what) +
                                    " reads no table of the warehouse; other folders are an administrator's, "
                                    "user " +
                                    user_ + " is not one");
  }
  return RequireOnTable(security::Privilege::kSelect, table->name);
}

Status Governor::TableCreated(const catalog::TableName& table) {
  if (!governed() || access_.admin()) return Status::OK();
  security::Grant grant{user_, TableSecurable(table), security::Privilege::kAll};
  Status granted = grants_.GrantPrivilege(grant);
  if (!granted.ok()) return granted.WithContext("granting ALL PRIVILEGES on the new table to user " + user_);
  return Status::OK();
}

Status Governor::TableDropped(const catalog::TableName& table) {
  return grants_.ForgetSecurable(TableSecurable(table));
}

}  // namespace basin::sql
