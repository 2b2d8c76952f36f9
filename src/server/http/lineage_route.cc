#include "server/http/lineage_route.h"

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <vector>

#include "basin/session.h"
#include "catalog/warehouse.h"
#include "common/strings.h"
#include "server/http/url_names.h"

namespace basin::server::http {
namespace {

using json = nlohmann::json;

// The edges into the tables up to $2 hops upstream of $1, and out of the tables up to $2
// hops downstream: every edge the walk below may cross, read in one statement.
constexpr char kNearbyEdges[] = R"sql(WITH RECURSIVE
  upstream(name, hops) AS (
    SELECT $1, 0
    UNION
    SELECT l.source_table, u.hops + 1 FROM basin_system.lineage l JOIN upstream u ON l.target_table = u.name
    WHERE u.hops < $2),
  downstream(name, hops) AS (
    SELECT $1, 0
    UNION
    SELECT l.target_table, d.hops + 1 FROM basin_system.lineage l JOIN downstream d ON l.source_table = d.name
    WHERE d.hops < $2)
SELECT source_table, target_table, operation, first_seen FROM basin_system.lineage
WHERE target_table IN (SELECT name FROM upstream WHERE hops < $2)
   OR source_table IN (SELECT name FROM downstream WHERE hops < $2)
ORDER BY source_table, target_table, operation)sql";

struct Edge {
  std::string source;
  std::string target;
  std::string operation;
  std::optional<std::string> first_seen;
};

// The tables `session`'s user may SELECT, as "schema.table": the listing leaves out the
// others (docs/governance.md).
Result<std::set<std::string>> ReadableTables(Session& session) {
  ASSIGN_OR_RETURN(std::vector<StatementResult> results,
                   session.Execute("SELECT table_schema || '.' || table_name FROM information_schema.tables "
                                   "WHERE table_catalog = current_database()"));
  std::set<std::string> tables;
  for (const Row& row : results.back().result.rows) {
    if (row.at(0)) tables.insert(*row.at(0));
  }
  return tables;
}

// The edges of basin_system.lineage near `table`, read with the process's rights; none when
// nothing was ever recorded (the lineage table does not exist).
Result<std::vector<Edge>> NearbyEdges(const HttpContext& context, const std::string& table) {
  ASSIGN_OR_RETURN(std::unique_ptr<Session> session, context.OpenSession(""));
  ASSIGN_OR_RETURN(std::string sql,
                   BindParameters(kNearbyEdges, {QuoteLiteral(table), std::to_string(kLineageMaxHops)}));
  Result<std::vector<StatementResult>> results = session->Execute(sql);
  if (results.status().IsNotFound()) return std::vector<Edge>{};
  if (!results.ok()) return results.status().WithContext("reading basin_system.lineage");
  std::vector<Edge> edges;
  for (const Row& row : results->back().result.rows) {
    edges.push_back({row.at(0).value_or(""), row.at(1).value_or(""), row.at(2).value_or(""), row.at(3)});
  }
  return edges;
}

// Follows `edges` from `table`, against them (`upstream`) or along them, up to
// kLineageMaxHops, through `readable` tables only: adds the edges it crosses to `crossed`,
// and the tables it reaches first to `distances` (negative upstream).
void Walk(const std::vector<Edge>& edges, const std::string& table, bool upstream,
          const std::set<std::string>& readable, std::map<std::string, int>& distances,
          std::set<const Edge*>& crossed) {
  std::set<std::string> frontier = {table};
  std::set<std::string> reached = {table};
  for (int hop = 1; hop <= kLineageMaxHops && !frontier.empty(); ++hop) {
    std::set<std::string> next;
    for (const Edge& edge : edges) {
      const std::string& near = upstream ? edge.target : edge.source;
      const std::string& far = upstream ? edge.source : edge.target;
      if (!frontier.contains(near) || !readable.contains(far)) continue;
      crossed.insert(&edge);
      if (reached.insert(far).second) next.insert(far);
      distances.try_emplace(far, upstream ? -hop : hop);
    }
    frontier = std::move(next);
  }
}

}  // namespace

Result<json> TableLineage(const HttpContext& context, const std::string& user, const std::string& text) {
  ASSIGN_OR_RETURN(TableName name, ParseTableName(text));
  ASSIGN_OR_RETURN(std::unique_ptr<Session> session, context.OpenSession(user));
  // The user's check first: NotFound or PermissionDenied as for the table's other routes.
  RETURN_IF_ERROR(session->Execute("SELECT * FROM " + name.Sql() + " LIMIT 0").status());
  ASSIGN_OR_RETURN(std::set<std::string> readable, ReadableTables(*session));
  // Lineage names tables as the catalog keeps them: lower-case, with their schema.
  const std::string table =
      AsciiLower(name.schema.value_or(catalog::kDefaultSchema)) + "." + AsciiLower(name.table);
  ASSIGN_OR_RETURN(std::vector<Edge> edges, NearbyEdges(context, table));

  std::map<std::string, int> distances = {{table, 0}};
  std::set<const Edge*> crossed;
  Walk(edges, table, /*upstream=*/true, readable, distances, crossed);
  Walk(edges, table, /*upstream=*/false, readable, distances, crossed);

  json nodes = json::array();
  for (const auto& [node, distance] : distances) nodes.push_back({{"table", node}, {"distance", distance}});
  json listed = json::array();
  for (const Edge& edge : edges) {
    if (!crossed.contains(&edge)) continue;
    listed.push_back({{"source", edge.source},
                      {"target", edge.target},
                      {"operation", edge.operation},
                      {"first_seen", edge.first_seen ? json(*edge.first_seen) : json()}});
  }
  return json{{"table", table},
              {"max_hops", kLineageMaxHops},
              {"nodes", std::move(nodes)},
              {"edges", std::move(listed)}};
}

}  // namespace basin::server::http
