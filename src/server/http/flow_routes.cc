#include "server/http/flow_routes.h"

#include "server/http/result_encoding.h"

namespace basin::server::http {
namespace {

using json = nlohmann::json;

constexpr char kFlowPattern[] = "/api/v1/flows/([^/]+)";

json NumberOrNull(const std::optional<int64_t>& number) { return number ? json(*number) : json(); }

// PermissionDenied unless `user` is an admin user.
Status CheckAdmin(const HttpContext& context, const std::string& user) {
  ASSIGN_OR_RETURN(std::optional<security::User> found, context.users->Find(user));
  if (found && found->admin) return Status::OK();
  return Status::PermissionDenied("stopping and starting flows is for admin users; " + user + " is not one");
}

void SendFlow(httplib::Response& response, const Result<FlowStatus>& flow) {
  if (!flow.ok()) return SendError(response, flow.status());
  SendJson(response, 200, FlowJson(*flow));
}

// POST /api/v1/flows/{name}/<action>: `act` on the flow, by an admin user; recorded in the
// audit log as the request's method and path.
httplib::Server::Handler AdminAction(const HttpContext& context,
                                     Result<FlowStatus> (FlowSet::*act)(const std::string&)) {
  return WithUser(context, [&context, act](const auto& request, auto& response, const std::string& user) {
    const int64_t started_ms = context.clock->NowMs();
    const Status allowed = CheckAdmin(context, user);
    const Result<FlowStatus> flow = allowed.ok() ? (context.flows->*act)(request.matches[1]) : allowed;
    context.Audit(request.remote_addr, user, request.method + " " + request.path, started_ms, flow.status());
    SendFlow(response, flow);
  });
}

}  // namespace

json FlowJson(const FlowStatus& flow) {
  const FlowFigures& figures = flow.figures;
  json last_batch;
  if (figures.last_batch_id || figures.batches > 0) {
    last_batch = {{"batch_id", NumberOrNull(figures.last_batch_id)},
                  {"table_version", NumberOrNull(figures.table_version)},
                  {"rows_in", figures.last_rows_in},
                  {"rows_out", figures.last_rows_out},
                  {"duration_ms", figures.last_duration_ms},
                  {"end_to_end_ms", NumberOrNull(figures.last_end_to_end_ms)}};
  }
  return {{"name", flow.name},
          {"kind", FlowKindName(flow.kind)},
          {"state", FlowStateName(flow.state)},
          {"sink", flow.sink.empty() ? json() : json(flow.sink)},
          {"event_log", flow.event_log.empty() ? json() : json(flow.event_log)},
          {"last_batch", std::move(last_batch)},
          {"lag", NumberOrNull(figures.lag)},
          {"totals",
           {{"batches", figures.batches},
            {"rows_in", figures.rows_in},
            {"rows_out", figures.rows_out},
            {"dead_letters", figures.dead_letters},
            {"failures", figures.failures},
            {"batch_duration_ms", figures.durations.sum_ms}}},
          {"error", flow.error.ok() ? json() : ErrorJson(flow.error)["error"]}};
}

void AddFlowRoutes(httplib::Server& server, const HttpContext& context) {
  server.Get("/api/v1/flows", WithUser(context, [&context](const auto&, auto& response, const auto&) {
               json flows = json::array();
               for (const FlowStatus& flow : context.flows->List()) flows.push_back(FlowJson(flow));
               SendJson(response, 200, {{"flows", std::move(flows)}});
             }));
  server.Get(kFlowPattern, WithUser(context, [&context](const auto& request, auto& response, const auto&) {
               SendFlow(response, context.flows->Get(request.matches[1]));
             }));
  server.Post(std::string(kFlowPattern) + "/stop", AdminAction(context, &FlowSet::StopFlow));
  server.Post(std::string(kFlowPattern) + "/start", AdminAction(context, &FlowSet::StartFlow));
}

}  // namespace basin::server::http
