#include "sql/statements.h"

#include <variant>

namespace basin::sql {
namespace {

struct CommandName {
  std::string operator()(const grammar::DuckDbStatement& s) const {
    if (s.type == "MERGE_INTO") return "MERGE";
    if (s.type == "VARIABLE_SET") return "SET";
    std::string name = s.type;
    for (char& c : name) c = c == '_' ? ' ' : c;
    return name;
  }
  std::string operator()(const grammar::CreateTable&) const { return "CREATE TABLE"; }
  std::string operator()(const grammar::DropTable&) const { return "DROP TABLE"; }
  std::string operator()(const grammar::AlterTable&) const { return "ALTER TABLE"; }
  std::string operator()(const grammar::ShowTables&) const { return "SELECT"; }
  std::string operator()(const grammar::DescribeTable&) const { return "SELECT"; }
  std::string operator()(const grammar::ShowTblProperties&) const { return "SELECT"; }
  std::string operator()(const grammar::DescribeHistory&) const { return "SELECT"; }
  std::string operator()(const grammar::DescribeDetail&) const { return "SELECT"; }
  std::string operator()(const grammar::Insert&) const { return "INSERT"; }
  std::string operator()(const grammar::Update&) const { return "UPDATE"; }
  std::string operator()(const grammar::Delete&) const { return "DELETE"; }
  std::string operator()(const grammar::Merge&) const { return "MERGE"; }
  std::string operator()(const grammar::Optimize&) const { return "OPTIMIZE"; }
  std::string operator()(const grammar::Vacuum&) const { return "VACUUM"; }
  std::string operator()(const grammar::Restore&) const { return "RESTORE"; }
  std::string operator()(const grammar::Setting& s) const { return s.value ? "SET" : "RESET"; }
  std::string operator()(const grammar::SetVariable& s) const { return s.set.value ? "SET" : "RESET"; }
  std::string operator()(const grammar::ShowVariable&) const { return "SHOW"; }
  std::string operator()(const grammar::CreateStreamingTable&) const { return "CREATE STREAMING TABLE"; }
  std::string operator()(const grammar::CreateMaterializedView&) const { return "CREATE MATERIALIZED VIEW"; }
  std::string operator()(const grammar::CreateFlow&) const { return "CREATE FLOW"; }
  std::string operator()(const grammar::CreateTemporaryView&) const { return "CREATE VIEW"; }
  std::string operator()(const grammar::CreateUser&) const { return "CREATE USER"; }
  std::string operator()(const grammar::CreateRole&) const { return "CREATE ROLE"; }
  std::string operator()(const grammar::DropPrincipal&) const { return "DROP"; }
  std::string operator()(const grammar::GrantOrRevoke& g) const { return g.revoke ? "REVOKE" : "GRANT"; }
  std::string operator()(const grammar::ShowGrants&) const { return "SELECT"; }
  std::string operator()(const grammar::CreateToken&) const { return "SELECT"; }
  std::string operator()(const grammar::RevokeToken&) const { return "REVOKE TOKEN"; }
  std::string operator()(const grammar::CopyStdio&) const { return "COPY"; }
  std::string operator()(const grammar::TransactionControl& t) const {
    switch (t.kind) {
      case engine::SqlTransaction::Kind::kBegin:
        return "BEGIN";
      case engine::SqlTransaction::Kind::kCommit:
        return "COMMIT";
      case engine::SqlTransaction::Kind::kRollback:
        return "ROLLBACK";
    }
    return "TRANSACTION";
  }
};

}  // namespace

std::string CommandOf(const grammar::ParsedStatement& parsed) {
  return std::visit(CommandName{}, parsed.body);
}

StatementResult CommandResultRow(const std::string& statement, const commands::CommandResult& result,
                                 const std::vector<std::string>& metric_columns) {
  StatementResult out;
  out.statement = statement;
  out.returns_rows = true;
  out.notices = result.notices;
  engine::QueryResult& r = out.result;
  r.column_names.push_back("version");
  r.column_types.push_back("BIGINT");
  std::vector<std::optional<std::string>> row;
  row.push_back(result.commit.version >= 0 ? std::optional<std::string>(std::to_string(result.commit.version))
                                           : std::nullopt);
  for (const std::string& column : metric_columns) {
    r.column_names.push_back(column);
    r.column_types.push_back("BIGINT");
    auto it = result.metrics.find(column);
    int64_t value = 0;
    if (it != result.metrics.end()) {
      if (it->is_number_integer()) {
        value = it->get<int64_t>();
      } else if (it->is_string()) {
        value = std::strtoll(it->get<std::string>().c_str(), nullptr, 10);
      }
    }
    row.push_back(std::to_string(value));
  }
  r.rows.push_back(std::move(row));
  return out;
}

StatementResult NoRows(const std::string& statement, std::vector<std::string> notices) {
  StatementResult out;
  out.statement = statement;
  out.notices = std::move(notices);
  return out;
}

StatementResult Rows(const std::string& statement, std::vector<std::string> names,
                     std::vector<std::string> types) {
  StatementResult out;
  out.statement = statement;
  out.returns_rows = true;
  out.result.column_names = std::move(names);
  out.result.column_types = std::move(types);
  return out;
}

Status NotYetRun(std::string_view what, std::string_view issue) {
  return Status::NotImplemented(std::string(what) + " is parsed but not run yet: it arrives with the " +
                                std::string(issue) + " issue");
}

Status RefuseStreams(const std::vector<grammar::StreamSource>& streams, std::string_view what) {
  if (streams.empty()) return Status::OK();
  const std::string reading = std::string(what) + " reading STREAM " + streams[0].source;
  return Status::InvalidArgument(reading +
                                 " runs as a stream, batch after batch: basin stream run --checkpoint DIR -c "
                                 "'...' (docs/streams.md)");
}

}  // namespace basin::sql
