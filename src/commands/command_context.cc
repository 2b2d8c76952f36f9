#include "commands/command_context.h"

namespace basin::commands {

nlohmann::json CommitMetrics(const nlohmann::json& metrics) {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& [key, value] : metrics.items()) {
    out[key] = value.is_string() ? value.get<std::string>() : value.dump();
  }
  return out;
}

Result<CommandResult> CommitCommand(const CommandContext& ctx, delta::Transaction& txn,
                                    nlohmann::json metrics, const std::string& table) {
  if (ctx.txn_id) txn.SetTransactionId(ctx.txn_id->app_id, ctx.txn_id->version);
  if (!metrics.empty()) txn.SetOperationMetrics(CommitMetrics(metrics));
  ctx.Report("committing", 0);
  if (ctx.before_commit) RETURN_IF_ERROR(ctx.before_commit());
  CommandResult result;
  ASSIGN_OR_RETURN(result.commit, txn.Commit());
  result.metrics = std::move(metrics);
  const std::string version = std::to_string(result.commit.version);
  if (result.commit.skipped) {
    result.notices.push_back("skipped: " + table + " already has version " +
                             std::to_string(ctx.txn_id->version) + " or later of application '" +
                             ctx.txn_id->app_id + "' (committed in version " + version + ")");
  }
  for (std::string& warning : delta::CommitWarnings(result.commit))
    result.notices.push_back(std::move(warning));
  return result;
}

}  // namespace basin::commands
