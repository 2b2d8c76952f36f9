#include "server/http/http_server.h"

#include <httplib.h>

#include <filesystem>
#include <thread>

#include "server/http/catalog_routes.h"
#include "server/http/console_routes.h"
#include "server/http/flow_routes.h"
#include "server/http/http_context.h"
#include "server/http/records_route.h"
#include "server/http/result_encoding.h"
#include "server/http/statement_registry.h"
#include "server/http/statement_routes.h"

namespace basin::server::http {
namespace {

// What the server itself refuses, before any route: no such route, a body over the limit,
// a request it cannot read.
Status ProtocolError(int http_status, const httplib::Request& request, const HttpLimits& limits) {
  switch (http_status) {
    case 404:
      return Status::NotFound("no route " + request.method + " " + request.path);
    case 413:
      return Status::InvalidArgument("the request body is larger than the limit of " +
                                     std::to_string(limits.max_body_bytes) + " bytes");
    default:
      return Status::InvalidArgument("the server cannot read this request (HTTP status " +
                                     std::to_string(http_status) + ")");
  }
}

// cpp-httplib's pool of workers, each running one connection from its accept to its close
// (keep-alive requests included): a connection is open from its enqueue to its task's end.
class CountingThreadPool final : public httplib::TaskQueue {
 public:
  CountingThreadPool(size_t threads, metrics::Gauge& open) : pool_(threads), open_(open) {}
  void enqueue(std::function<void()> connection) override {
    open_.Add(1);
    pool_.enqueue([this, connection = std::move(connection)] {
      connection();
      open_.Add(-1);
    });
  }
  void shutdown() override { pool_.shutdown(); }

 private:
  httplib::ThreadPool pool_;
  metrics::Gauge& open_;
};

void SetTimeout(int timeout_ms, const std::function<void(time_t, time_t)>& set) {
  set(timeout_ms / 1000, static_cast<time_t>(timeout_ms % 1000) * 1000);
}

}  // namespace

struct HttpServer::Impl {
  StatementRegistry statements;
  HttpContext context;
  httplib::Server server;
  std::thread listener;
  int port = -1;
  bool stopped = false;

  Impl(std::shared_ptr<const Clock> clock, const HttpLimits& limits) : statements(clock, limits) {}
};

HttpServer::HttpServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

HttpServer::~HttpServer() { Stop(); }

Result<std::unique_ptr<HttpServer>> HttpServer::Start(
    const ServerOptions& options, std::shared_ptr<const Clock> clock, const security::TokenStore& tokens,
    const security::UserStore& users, const security::GrantStore& grants, AuditLog* audit,
    ServerMetrics& metrics, FlowSet& flows, std::shared_ptr<TableCache> tables) {
  const HttpLimits& limits = options.http;
  if (limits.threads < 1 || limits.max_body_bytes < 1 || limits.max_statement_bytes < 1 ||
      limits.page_size < 1 || limits.max_page_size < limits.page_size || limits.read_timeout_ms < 1 ||
      limits.write_timeout_ms < 1 || limits.cursor_idle_timeout_ms < 1 ||
      limits.max_statements_per_user < 1) {
    return Status::InvalidArgument("the HTTP limits must be positive, and page_size at most max_page_size");
  }
  auto impl = std::make_unique<Impl>(clock, limits);
  HttpContext& context = impl->context;
  context.warehouse = options.warehouse;
  context.limits = limits;
  context.clock = clock;
  context.tokens = &tokens;
  context.users = &users;
  context.grants = &grants;
  context.statements = &impl->statements;
  context.audit = audit;
  context.metrics = &metrics;
  context.flows = &flows;
  context.statement_timeout_ms = options.statement_timeout_ms;
  context.tables = std::move(tables);
  std::error_code no_temp;
  const std::filesystem::path temp = std::filesystem::temp_directory_path(no_temp);
  if (no_temp) return Status::IOError("no temporary folder for Parquet results: " + no_temp.message());
  ASSIGN_OR_RETURN(context.scratch,
                   OpenLocalObjectStore((temp / "basin-http-results").string(), {.create_root = false}));

  httplib::Server& server = impl->server;
  server.new_task_queue = [threads = limits.threads, &open = metrics.connections(Protocol::kHttp)] {
    return new CountingThreadPool(static_cast<size_t>(threads), open);
  };
  server.set_payload_max_length(static_cast<size_t>(limits.max_body_bytes));
  SetTimeout(limits.read_timeout_ms, [&](time_t s, time_t us) { server.set_read_timeout(s, us); });
  SetTimeout(limits.write_timeout_ms, [&](time_t s, time_t us) { server.set_write_timeout(s, us); });
  // An idle keep-alive connection holds a worker too.
  server.set_keep_alive_timeout(std::max<time_t>(1, limits.read_timeout_ms / 1000));
  server.set_error_handler([&context](const httplib::Request& request, httplib::Response& response) {
    if (!response.body.empty()) return;  // the routes' own errors
    const int http_status = response.status;
    const Status error = ProtocolError(http_status, request, context.limits);
    SendJson(response, http_status, ErrorJson(error));
  });
  server.Get("/healthz", [](const httplib::Request&, httplib::Response& response) {
    SendJson(response, 200, {{"status", "ok"}});
  });
  server.Get("/metrics", WithUser(context, [&context](const httplib::Request&, httplib::Response& response,
                                                      const std::string& user) {
               // The per-table series are those of the tables the token's user may read.
               Result<security::Access> access = context.AccessOf(user);
               if (!access.ok()) return SendError(response, access.status());
               response.set_content(context.metrics->Render(*access), std::string(metrics::kTextContentType));
             }));
  AddStatementRoutes(server, context);
  AddRecordsRoute(server, context);
  AddCatalogRoutes(server, context);
  AddFlowRoutes(server, context);
  AddConsoleRoutes(server);

  const std::string where = options.bind_address + ":" + std::to_string(options.http_port);
  impl->port = options.http_port == 0
                   ? server.bind_to_any_port(options.bind_address)
                   : (server.bind_to_port(options.bind_address, options.http_port) ? options.http_port : -1);
  if (impl->port < 0) return Status::IOError("cannot listen on " + where + " for the HTTP API");
  Impl* raw = impl.get();
  impl->listener = std::thread([raw] { raw->server.listen_after_bind(); });
  // stop() has no effect before the server runs: Stop() must not come earlier.
  while (!server.is_running() && impl->listener.joinable())
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  return std::unique_ptr<HttpServer>(new HttpServer(std::move(impl)));
}

int HttpServer::port() const { return impl_->port; }

void HttpServer::Stop() {
  if (impl_->stopped) return;
  impl_->stopped = true;
  impl_->statements.Close();
  impl_->server.stop();
  if (impl_->listener.joinable()) impl_->listener.join();
}

}  // namespace basin::server::http
