// Users, roles, grants and tokens (sql/statements.h, docs/governance.md): the statements
// that change who may do what, run through the session's Governor (sql/governor.h).
#include <algorithm>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "delta/history.h"
#include "sql/statements.h"

namespace basin::sql {

namespace {

using security::Privilege;

std::optional<std::string> Text(std::string value) { return std::optional<std::string>(std::move(value)); }

// The securable a statement names, in the warehouse's lower-case names. CATALOG's name, when
// given, is not checked: the warehouse is the one catalog.
Result<security::Securable> SecurableOf(const grammar::Securable& on) {
  switch (on.kind) {
    case grammar::Securable::Kind::kCatalog:
      return security::Securable::Catalog();
    case grammar::Securable::Kind::kSchema: {
      if (on.name.size() != 1) {
        return Status::InvalidArgument("a schema is named by one name, got " + grammar::JoinName(on.name));
      }
      // A schema's name follows the rules of a table name's first part.
      ASSIGN_OR_RETURN(catalog::TableName name, catalog::MakeTableName({on.name[0], "t"}));
      return security::Securable::Schema(name.schema);
    }
    case grammar::Securable::Kind::kTable: {
      ASSIGN_OR_RETURN(catalog::TableName name, catalog::MakeTableName(on.name));
      return TableSecurable(name);
    }
  }
  return Status::Internal("unknown kind of securable");
}

// NotFound unless `name` is a user or a role.
Status RequirePrincipal(Governor& governor, const std::string& name) {
  ASSIGN_OR_RETURN(std::optional<security::User> user, governor.users().Find(name));
  if (user) return Status::OK();
  ASSIGN_OR_RETURN(bool role, governor.grants().RoleExists(name));
  if (role) return Status::OK();
  return Status::NotFound("no user or role is named " + name);
}

Status RequireRole(Governor& governor, const std::string& role) {
  ASSIGN_OR_RETURN(bool exists, governor.grants().RoleExists(role));
  if (!exists) return Status::NotFound("role " + role + " does not exist");
  return Status::OK();
}

StatementOutcome GrantRole(SessionContext& session, const std::string& statement,
                           const grammar::GrantOrRevoke& grant) {
  Governor& governor = session.governor();
  const std::string what = grant.revoke ? "REVOKE " + *grant.role : "GRANT " + *grant.role;
  RETURN_IF_ERROR(governor.RequireAdmin(what));
  RETURN_IF_ERROR(RequireRole(governor, *grant.role));
  if (grant.revoke) {
    Status revoked = governor.grants().RevokeRole(*grant.role, grant.principal);
    if (!revoked.ok() && !revoked.IsNotFound()) return revoked;
    return std::optional<StatementResult>(NoRows(statement));
  }
  ASSIGN_OR_RETURN(std::optional<security::User> member, governor.users().Find(grant.principal));
  if (!member) {
    return Status::NotFound(what + ": roles are granted to users, and there is no user " + grant.principal);
  }
  RETURN_IF_ERROR(governor.grants().GrantRole(*grant.role, grant.principal));
  return std::optional<StatementResult>(NoRows(statement));
}

// The lifetime `EXPIRES IN interval` gives, in milliseconds, as DuckDB evaluates it.
Result<int64_t> LifetimeMs(engine::Connection& conn, const std::string& interval) {
  ASSIGN_OR_RETURN(engine::QueryResult result, conn.Query("SELECT CAST(round(epoch(CAST((" + interval +
                                                          ") AS INTERVAL)) * 1000) AS BIGINT)"));
  if (result.row_count() != 1 || !result.rows[0][0]) {
    return Status::InvalidArgument("EXPIRES IN " + interval + ": give an interval, such as INTERVAL 30 DAYS");
  }
  return std::stoll(*result.rows[0][0]);
}

}  // namespace

StatementOutcome RunCreateUser(SessionContext& session, const std::string& statement,
                               const grammar::CreateUser& create) {
  Governor& governor = session.governor();
  RETURN_IF_ERROR(governor.RequireAdmin("CREATE USER"));
  ASSIGN_OR_RETURN(bool role, governor.grants().RoleExists(create.name));
  if (role) return Status::AlreadyExists("a role is named " + create.name + "; users and roles share names");
  RETURN_IF_ERROR(governor.users().Create(create.name, create.password, /*admin=*/false));
  return std::optional<StatementResult>(NoRows(statement));
}

StatementOutcome RunCreateRole(SessionContext& session, const std::string& statement,
                               const grammar::CreateRole& create) {
  Governor& governor = session.governor();
  RETURN_IF_ERROR(governor.RequireAdmin("CREATE ROLE"));
  RETURN_IF_ERROR(security::CheckPrincipalName(create.name));
  ASSIGN_OR_RETURN(std::optional<security::User> user, governor.users().Find(create.name));
  if (user) return Status::AlreadyExists("a user is named " + create.name + "; users and roles share names");
  RETURN_IF_ERROR(governor.grants().CreateRole(create.name));
  return std::optional<StatementResult>(NoRows(statement));
}

StatementOutcome RunDropPrincipal(SessionContext& session, const std::string& statement,
                                  const grammar::DropPrincipal& drop) {
  Governor& governor = session.governor();
  const std::string what = drop.is_role ? "DROP ROLE" : "DROP USER";
  RETURN_IF_ERROR(governor.RequireAdmin(what));
  Status dropped;
  if (drop.is_role) {
    dropped = governor.grants().DropRole(drop.name);
  } else {
    if (drop.name == "admin") return Status::InvalidArgument("DROP USER admin: the administrator stays");
    if (drop.name == governor.user())
      return Status::InvalidArgument("DROP USER " + drop.name + ": it runs this session");
    // The user first, so that its sessions stop at their next statement; then what it held.
    dropped = governor.users().Delete(drop.name);
    if (dropped.ok()) dropped = governor.grants().ForgetPrincipal(drop.name);
    if (dropped.ok()) {
      ASSIGN_OR_RETURN(std::vector<security::Token> tokens, governor.tokens().List(drop.name));
      for (const security::Token& token : tokens) RETURN_IF_ERROR(governor.tokens().Revoke(token.id));
    }
  }
  if (dropped.IsNotFound() && drop.if_exists) return std::optional<StatementResult>(NoRows(statement));
  RETURN_IF_ERROR(dropped);
  return std::optional<StatementResult>(NoRows(statement));
}

StatementOutcome RunGrantOrRevoke(SessionContext& session, const std::string& statement,
                                  const grammar::GrantOrRevoke& grant) {
  if (grant.role) return GrantRole(session, statement, grant);
  Governor& governor = session.governor();
  ASSIGN_OR_RETURN(security::Securable on, SecurableOf(grant.on));
  // Who manages an object hands out its privileges.
  RETURN_IF_ERROR(governor.Require(Privilege::kManage, on));
  if (!grant.revoke) {
    RETURN_IF_ERROR(RequirePrincipal(governor, grant.principal));
    if (on.kind == security::Securable::Kind::kTable) {
      RETURN_IF_ERROR(session.warehouse().Get(catalog::TableName{on.schema, on.table}).status());
    }
  }
  for (Privilege privilege : grant.privileges) {
    security::Grant one{grant.principal, on, privilege};
    if (grant.revoke) {
      Status revoked = governor.grants().RevokePrivilege(one);
      if (!revoked.ok() && !revoked.IsNotFound()) return revoked;
    } else {
      RETURN_IF_ERROR(governor.grants().GrantPrivilege(one));
    }
  }
  return std::optional<StatementResult>(NoRows(statement));
}

StatementOutcome RunShowGrants(SessionContext& session, const std::string& statement,
                               const grammar::ShowGrants& show) {
  Governor& governor = session.governor();
  const security::Access& access = governor.access();
  std::optional<std::vector<security::Securable>> scopes;  // ON: the securable and those above it
  if (show.on) {
    ASSIGN_OR_RETURN(security::Securable on, SecurableOf(*show.on));
    scopes = security::ScopesOf(on);
  }
  std::vector<security::Grant> grants;
  if (show.principal) {
    ASSIGN_OR_RETURN(grants, governor.grants().GrantsOf(*show.principal));
  } else {
    ASSIGN_OR_RETURN(grants, governor.grants().AllGrants());
  }
  // A user sees its own grants, its roles', and those on what it manages.
  const auto visible = [&](const security::Grant& grant) {
    const std::vector<std::string>& roles = access.roles();
    return access.admin() || grant.principal == access.user() ||
           std::find(roles.begin(), roles.end(), grant.principal) != roles.end() ||
           access.Holds(Privilege::kManage, grant.on);
  };
  std::erase_if(grants, [&](const security::Grant& grant) {
    const bool applies = !scopes || std::find(scopes->begin(), scopes->end(), grant.on) != scopes->end();
    return !applies || !visible(grant);
  });
  std::sort(grants.begin(), grants.end(), [](const security::Grant& a, const security::Grant& b) {
    return std::tie(a.principal, a.on, a.privilege) < std::tie(b.principal, b.on, b.privilege);
  });
  StatementResult out =
      Rows(statement, {"principal", "securable", "privilege"}, {"VARCHAR", "VARCHAR", "VARCHAR"});
  for (const security::Grant& grant : grants) {
    out.result.rows.push_back({Text(grant.principal), Text(grant.on.ToString()),
                               Text(std::string(security::PrivilegeName(grant.privilege)))});
  }
  return std::optional<StatementResult>(std::move(out));
}

StatementOutcome RunCreateToken(SessionContext& session, const std::string& statement,
                                const grammar::CreateToken& create) {
  Governor& governor = session.governor();
  const std::string user = create.user.value_or(governor.user());
  if (user.empty()) {
    return Status::InvalidArgument(
        "CREATE TOKEN: this session runs as no user; say whose: CREATE TOKEN FOR user");
  }
  if (user != governor.user()) RETURN_IF_ERROR(governor.RequireAdmin("CREATE TOKEN FOR another user"));
  ASSIGN_OR_RETURN(std::optional<security::User> found, governor.users().Find(user));
  if (!found) return Status::NotFound("CREATE TOKEN FOR " + user + ": there is no such user");
  std::optional<int64_t> lifetime_ms;
  if (create.expires_in) {
    ASSIGN_OR_RETURN(lifetime_ms, LifetimeMs(session.conn(), *create.expires_in));
  }
  ASSIGN_OR_RETURN(security::NewToken token, governor.tokens().Create(user, lifetime_ms));
  StatementResult out =
      Rows(statement, {"token", "id", "user", "expires"}, {"VARCHAR", "VARCHAR", "VARCHAR", "VARCHAR"});
  std::optional<std::string> expires;
  if (token.token.expires_time_ms) expires = delta::FormatTimestampMs(*token.token.expires_time_ms);
  out.result.rows.push_back({Text(token.text), Text(token.token.id), Text(user), expires});
  return std::optional<StatementResult>(std::move(out));
}

StatementOutcome RunRevokeToken(SessionContext& session, const std::string& statement,
                                const grammar::RevokeToken& revoke) {
  Governor& governor = session.governor();
  if (!governor.access().admin()) {
    // A user ends its own tokens; others' are as absent as unknown ones.
    ASSIGN_OR_RETURN(std::vector<security::Token> own, governor.tokens().List(governor.user()));
    const bool owned = std::any_of(own.begin(), own.end(),
                                   [&](const security::Token& token) { return token.id == revoke.id; });
    if (!owned) return Status::NotFound("no token " + revoke.id);
  }
  RETURN_IF_ERROR(governor.tokens().Revoke(revoke.id));
  return std::optional<StatementResult>(NoRows(statement));
}

}  // namespace basin::sql
