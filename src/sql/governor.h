// Governor: who runs a session's statements and what they may do (docs/governance.md).
//
// A session opened with a user is governed. Before each statement the governor reads the
// user's Access once (its user object, its roles and its grants: a few small objects under
// `_basin_security/`), and the statement handlers, the lakehouse catalog and delta_scan ask
// it before they read or change a table; DuckDB's binder, not the statement's text, decides
// which tables a statement reads. A session without a user runs as the warehouse's owner
// and may do anything.
//
// A governed user who is not an administrator also has its session's DuckDB locked down at
// its first statement: only basin:// paths, no external access, so raw file
// readers (read_text, read_parquet on a path, COPY ... TO 'file') are refused. The lock is
// never lifted for the session.
//
// Thread safety: BeginStatement and TableCreated/TableDropped on the session's thread,
// between statements or in a handler; the Require* methods only read the statement's
// access and the warehouse, so DuckDB's threads may call them while a statement binds.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "basin/status.h"
#include "catalog/warehouse.h"
#include "engine/duckdb.h"
#include "security/grants.h"
#include "security/tokens.h"
#include "security/users.h"

namespace basin::sql {

// TABLE <schema>.<table>.
security::Securable TableSecurable(const catalog::TableName& table);

class Governor {
 public:
  // `user` empty: the warehouse's owner, unrestricted. `conn` is the session's connection
  // and outlives the governor.
  Governor(std::shared_ptr<const catalog::Warehouse> warehouse, engine::Connection& conn, std::string user);

  bool governed() const { return !user_.empty(); }
  const std::string& user() const { return user_; }

  // Reads the user's access for the statement about to run, or for the session as it opens
  // (and locks the session's DuckDB down for a user who is not an administrator). Unauthenticated (SQLSTATE
  // 28000) when the user no longer exists. Reads nothing for an ungoverned session.
  Status BeginStatement();
  // The running statement's access: an administrator's for an ungoverned session.
  const security::Access& access() const { return access_; }

  // PermissionDenied naming the privilege, the object and the user when the running
  // statement's user lacks `privilege` on `on`.
  Status Require(security::Privilege privilege, const security::Securable& on) const;
  Status RequireOnTable(security::Privilege privilege, const catalog::TableName& table) const;
  // PermissionDenied naming `what` unless the user is an administrator.
  Status RequireAdmin(std::string_view what) const;
  // Whether the Delta table at `location` may be read by a path (`what`: "delta_scan('p')"):
  // the warehouse table there by its grants (SELECT); any other folder by an administrator
  // only.
  Status RequireReadAt(const std::string& location, std::string_view what) const;
  // The warehouse table whose folder is `location`, if any; relative local paths are taken
  // from the working folder.
  Result<std::optional<catalog::TableEntry>> TableAt(const std::string& location) const;
  // RequireReadAt for a location TableAt already looked up (`table`: what it found).
  Status RequireReadOf(const std::optional<catalog::TableEntry>& table, std::string_view what) const;

  // After a governed user who is not an administrator created `table`: ALL PRIVILEGES on
  // it to that user.
  Status TableCreated(const catalog::TableName& table);
  // After `table` was dropped: its grants go with it.
  Status TableDropped(const catalog::TableName& table);

  security::UserStore& users() { return users_; }
  security::GrantStore& grants() { return grants_; }
  security::TokenStore& tokens() { return tokens_; }

 private:
  std::shared_ptr<const catalog::Warehouse> warehouse_;
  engine::Connection& conn_;
  std::string user_;
  security::UserStore users_;
  security::GrantStore grants_;
  security::TokenStore tokens_;
  security::Access access_;
  bool locked_down_ = false;  // the connection refuses files outside basin://
};

}  // namespace basin::sql
