// Users, roles, grants and tokens (rules.h); sql/governance_statements.cc runs them.
#include "sql/grammar/rules.h"
#include "sql/grammar/slots.h"

namespace basin::sql::grammar {

namespace {

// CATALOG [name] | SCHEMA name | TABLE name
Result<Securable> ParseSecurable(TokenStream& tokens) {
  Securable out;
  if (tokens.AcceptWords({"CATALOG"})) {
    out.kind = Securable::Kind::kCatalog;
    if (tokens.IsNameAt(tokens.position()) && !tokens.PeekWords({"TO"}) && !tokens.PeekWords({"FROM"})) {
      ASSIGN_OR_RETURN(out.name, tokens.QualifiedName("a catalog name"));
    }
  } else if (tokens.AcceptWords({"SCHEMA"})) {
    out.kind = Securable::Kind::kSchema;
    ASSIGN_OR_RETURN(out.name, tokens.QualifiedName("a schema name"));
  } else if (tokens.AcceptWords({"TABLE"})) {
    out.kind = Securable::Kind::kTable;
    ASSIGN_OR_RETURN(out.name, tokens.QualifiedName("a table name"));
  } else {
    return tokens.Error("CATALOG, SCHEMA or TABLE");
  }
  return out;
}

Result<Privilege> ParsePrivilege(TokenStream& tokens) {
  if (tokens.AcceptWords({"ALL"})) {
    tokens.AcceptWords({"PRIVILEGES"});
    return Privilege::kAll;
  }
  if (tokens.AcceptWords({"SELECT"})) return Privilege::kSelect;
  if (tokens.AcceptWords({"MODIFY"})) return Privilege::kModify;
  if (tokens.AcceptWords({"CREATE"})) return Privilege::kCreate;
  if (tokens.AcceptWords({"MANAGE"})) return Privilege::kManage;
  return tokens.Error("SELECT, MODIFY, CREATE, MANAGE or ALL PRIVILEGES");
}

// GRANT / REVOKE after its first word: privileges ON securable, or a role; then TO / FROM.
Result<GrantOrRevoke> ParseGrant(TokenStream& tokens, bool revoke) {
  GrantOrRevoke out;
  out.revoke = revoke;
  const size_t start = tokens.position();
  Status privileges = [&]() -> Status {
    do {
      ASSIGN_OR_RETURN(Privilege privilege, ParsePrivilege(tokens));
      out.privileges.push_back(privilege);
    } while (tokens.AcceptSymbol(","));
    RETURN_IF_ERROR(tokens.ExpectWords({"ON"}));
    ASSIGN_OR_RETURN(out.on, ParseSecurable(tokens));
    return Status::OK();
  }();
  if (!privileges.ok()) {
    // GRANT role TO principal
    tokens.Reset(start);
    out.privileges.clear();
    ASSIGN_OR_RETURN(out.role, tokens.Name("privileges ON ..., or a role"));
  }
  RETURN_IF_ERROR(tokens.ExpectWords({revoke ? "FROM" : "TO"}));
  ASSIGN_OR_RETURN(out.principal, tokens.Name("a user or role"));
  RETURN_IF_ERROR(tokens.ExpectEnd());
  return out;
}

Result<StatementBody> ParseCreateToken(TokenStream& tokens) {
  CreateToken create;
  if (tokens.AcceptWords({"FOR"})) {
    ASSIGN_OR_RETURN(create.user, tokens.Name("a user"));
  }
  if (tokens.AcceptWords({"EXPIRES", "IN"})) {
    ASSIGN_OR_RETURN(Slot interval, ReadSlot(tokens, engine::SqlSlot::kExpression, "an interval",
                                             AtGroupEnd(), [&] { return tokens.ExpectEnd(); }));
    create.expires_in = std::move(interval.sql);
  }
  RETURN_IF_ERROR(tokens.ExpectEnd());
  return StatementBody(std::move(create));
}

}  // namespace

BodyOrDuckDb ParseGovernance(TokenStream& tokens) {
  using Out = std::optional<StatementBody>;
  if (tokens.AcceptWords({"CREATE", "USER"})) {
    CreateUser create;
    ASSIGN_OR_RETURN(create.name, tokens.Name("a user name"));
    RETURN_IF_ERROR(tokens.ExpectWords({"PASSWORD"}));
    ASSIGN_OR_RETURN(create.password, tokens.StringLiteral("a password string"));
    RETURN_IF_ERROR(tokens.ExpectEnd());
    return Out(std::move(create));
  }
  if (tokens.AcceptWords({"CREATE", "ROLE"})) {
    CreateRole create;
    ASSIGN_OR_RETURN(create.name, tokens.Name("a role name"));
    RETURN_IF_ERROR(tokens.ExpectEnd());
    return Out(std::move(create));
  }
  if (tokens.AcceptWords({"CREATE", "TOKEN"})) {
    ASSIGN_OR_RETURN(StatementBody body, ParseCreateToken(tokens));
    return Out(std::move(body));
  }
  if (tokens.PeekWords({"DROP", "USER"}) || tokens.PeekWords({"DROP", "ROLE"})) {
    DropPrincipal drop;
    drop.is_role = tokens.PeekWords({"DROP", "ROLE"});
    tokens.Reset(tokens.position() + 2);
    drop.if_exists = tokens.AcceptWords({"IF", "EXISTS"});
    ASSIGN_OR_RETURN(drop.name, tokens.Name(drop.is_role ? "a role name" : "a user name"));
    RETURN_IF_ERROR(tokens.ExpectEnd());
    return Out(std::move(drop));
  }
  if (tokens.AcceptWords({"REVOKE", "TOKEN"})) {
    RevokeToken revoke;
    ASSIGN_OR_RETURN(revoke.id, tokens.StringLiteral("a token id string"));
    RETURN_IF_ERROR(tokens.ExpectEnd());
    return Out(std::move(revoke));
  }
  if (tokens.AcceptWords({"GRANT"}) || tokens.AcceptWords({"REVOKE"})) {
    const bool revoke = tokens.IsWordAt(tokens.position() - 1, "REVOKE");
    ASSIGN_OR_RETURN(GrantOrRevoke grant, ParseGrant(tokens, revoke));
    return Out(std::move(grant));
  }
  if (tokens.AcceptWords({"SHOW", "GRANTS"})) {
    ShowGrants show;
    if (tokens.AcceptWords({"ON"})) {
      ASSIGN_OR_RETURN(show.on, ParseSecurable(tokens));
    }
    if (tokens.AcceptWords({"TO"})) {
      ASSIGN_OR_RETURN(show.principal, tokens.Name("a user or role"));
    }
    RETURN_IF_ERROR(tokens.ExpectEnd());
    return Out(std::move(show));
  }
  return Out();
}

}  // namespace basin::sql::grammar
