#include "sql/lineage.h"

#include <map>

#include "common/strings.h"
#include "sql/session.h"

namespace basin::sql {
namespace {

constexpr char kCreateTable[] =
    "CREATE TABLE IF NOT EXISTS basin_system.lineage (source_table VARCHAR NOT NULL, target_table VARCHAR "
    "NOT "
    "NULL, operation VARCHAR NOT NULL, first_seen TIMESTAMPTZ NOT NULL, first_user VARCHAR)";

// The live recorders by warehouse: a recorder lives while a session holds it.
std::mutex registry_mutex;
std::map<std::string, std::weak_ptr<LineageRecorder>> registry;  // guarded by registry_mutex

}  // namespace

std::optional<WrittenTable> WrittenTableOf(const grammar::ParsedStatement& statement) {
  if (const auto* insert = std::get_if<grammar::Insert>(&statement.body))
    return WrittenTable{insert->insert.target.Parts(), "INSERT"};
  if (const auto* merge = std::get_if<grammar::Merge>(&statement.body))
    return WrittenTable{merge->merge.target.name.Parts(), "MERGE"};
  if (const auto* update = std::get_if<grammar::Update>(&statement.body))
    return WrittenTable{update->update.target.name.Parts(), "UPDATE"};
  if (const auto* remove = std::get_if<grammar::Delete>(&statement.body))
    return WrittenTable{remove->del.target.name.Parts(), "DELETE"};
  if (const auto* create = std::get_if<grammar::CreateTable>(&statement.body); create && create->query)
    return WrittenTable{create->name, "CREATE TABLE"};
  return std::nullopt;
}

std::shared_ptr<LineageRecorder> LineageRecorder::For(const std::string& warehouse_dir) {
  std::lock_guard lock(registry_mutex);
  std::weak_ptr<LineageRecorder>& slot = registry[warehouse_dir];
  std::shared_ptr<LineageRecorder> recorder = slot.lock();
  if (!recorder) {
    recorder = std::make_shared<LineageRecorder>(warehouse_dir);
    slot = recorder;
  }
  return recorder;
}

LineageRecorder::LineageRecorder(std::string warehouse_dir) : warehouse_dir_(std::move(warehouse_dir)) {}

LineageRecorder::~LineageRecorder() {
  std::lock_guard lock(registry_mutex);
  auto it = registry.find(warehouse_dir_);
  if (it != registry.end() && it->second.expired()) registry.erase(it);
}

Status LineageRecorder::Open() {
  if (session_) return Status::OK();
  ASSIGN_OR_RETURN(std::unique_ptr<Session> session, Session::Open({.warehouse_dir = warehouse_dir_}));
  RETURN_IF_ERROR(session->Execute(kCreateTable).status());
  ASSIGN_OR_RETURN(
      std::vector<StatementResult> known,
      session->Execute(std::string("SELECT source_table, target_table, operation FROM ") + kLineageTable));
  for (const std::vector<std::optional<std::string>>& row : known.back().result.rows) {
    known_.insert(LineageEdge{row.at(0).value_or(""), row.at(1).value_or(""), row.at(2).value_or("")});
  }
  session_ = std::move(session);
  return Status::OK();
}

Status LineageRecorder::Record(const std::vector<LineageEdge>& edges, const std::string& user,
                               int64_t at_ms) {
  std::lock_guard lock(mutex_);
  auto unseen = [&] {
    std::vector<const LineageEdge*> found;
    for (const LineageEdge& edge : edges) {
      if (!known_.contains(edge)) found.push_back(&edge);
    }
    return found;
  };
  if (unseen().empty()) return Status::OK();
  Status opened = Open();
  if (!opened.ok()) return opened.WithContext("recording lineage in " + std::string(kLineageTable));
  const std::vector<const LineageEdge*> fresh = unseen();  // the table may have held them
  if (fresh.empty()) return Status::OK();
  std::string values;
  for (const LineageEdge* edge : fresh) {
    if (!values.empty()) values += ", ";
    values += "(" + QuoteLiteral(edge->source) + ", " + QuoteLiteral(edge->target) + ", " +
              QuoteLiteral(edge->operation) + ", to_timestamp(" + std::to_string(at_ms) + " / 1000.0), " +
              (user.empty() ? std::string("NULL") : QuoteLiteral(user)) + ")";
  }
  const std::string merge = std::string("MERGE INTO ") + kLineageTable + " t USING (VALUES " + values +
                            ") AS e(source_table, target_table, operation, first_seen, first_user) "
                            "ON t.source_table = e.source_table AND t.target_table = e.target_table AND "
                            "t.operation = e.operation WHEN NOT MATCHED THEN INSERT *";
  Status merged = session_->Execute(merge).status();
  if (!merged.ok()) return merged.WithContext("recording lineage in " + std::string(kLineageTable));
  for (const LineageEdge* edge : fresh) known_.insert(*edge);
  return Status::OK();
}

}  // namespace basin::sql
