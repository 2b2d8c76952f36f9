// basin::Server (include/basin/server.h): the listening socket, one thread per connection.
#include "basin/server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <list>
#include <mutex>
#include <random>
#include <thread>

#include "basin/object_store.h"
#include "security/tokens.h"
#include "security/users.h"
#include "server/audit_log.h"
#include "server/flows.h"
#include "server/http/http_server.h"
#include "server/pg/pg_connection.h"
#include "server/server_metrics.h"

namespace basin {
namespace {

// Table versions whose snapshots the server's connections share (a session alone keeps 32):
// as many hot tables as the connections together read, each snapshot held once.
constexpr size_t kServerTableVersions = 256;

// A listening TCP socket on `address`:`port`.
Result<int> Listen(const std::string& address, int port) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  const std::string where = address + ":" + std::to_string(port);
  const int resolved = getaddrinfo(address.c_str(), std::to_string(port).c_str(), &hints, &found);
  if (resolved != 0)
    return Status::InvalidArgument("cannot resolve " + where + ": " + gai_strerror(resolved));
  std::string failure = "no address";
  for (addrinfo* a = found; a != nullptr; a = a->ai_next) {
    const int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) continue;
    const int on = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on));
    if (::bind(fd, a->ai_addr, a->ai_addrlen) == 0 && ::listen(fd, 128) == 0) {
      freeaddrinfo(found);
      return fd;
    }
    failure = std::strerror(errno);
    ::close(fd);
  }
  freeaddrinfo(found);
  return Status::IOError("cannot listen on " + where + ": " + failure);
}

int BoundPort(int fd) {
  sockaddr_storage address{};
  socklen_t length = sizeof(address);
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) return -1;
  if (address.ss_family == AF_INET6) return ntohs(reinterpret_cast<sockaddr_in6*>(&address)->sin6_port);
  return ntohs(reinterpret_cast<sockaddr_in*>(&address)->sin_port);
}

}  // namespace

struct Server::Impl {
  ServerOptions options;
  std::unique_ptr<security::UserStore> users;
  std::unique_ptr<security::GrantStore> grants;  // for GET /metrics
  std::unique_ptr<security::TokenStore> tokens;
  std::unique_ptr<server::ServerMetrics> metrics;  // outlives the endpoints
  std::unique_ptr<server::AuditLog> audit;         // null when auditing is off; outlives the endpoints
  std::unique_ptr<server::FlowSet> flows;          // before http, which uses it
  std::unique_ptr<server::http::HttpServer> http;  // null when the HTTP API is off
  server::pg::ServerContext context;
  int listen_fd = -1;
  int wake_pipe[2] = {-1, -1};  // written by Shutdown(): the accept loop's poll returns
  int port = 0;
  std::thread acceptor;
  std::atomic<bool> stopping{false};

  std::mutex mutex;
  std::condition_variable changed;
  struct Client {
    std::unique_ptr<server::pg::PgConnection> connection;
    std::thread thread;
    bool finished = false;
  };
  std::list<Client> clients;  // GUARDED_BY(mutex)
  std::mt19937 random{std::random_device{}()};

  void Log(const std::string& line) const {
    if (options.log) options.log(line);
  }

  void Cancel(int32_t process_id, int32_t secret_key) {
    std::lock_guard<std::mutex> lock(mutex);
    for (Client& client : clients) {
      if (client.connection->process_id() == process_id && client.connection->secret_key() == secret_key) {
        client.connection->Cancel();
      }
    }
  }

  // Joins the threads of connections that ended.
  void Reap() {
    std::list<Client> ended;
    {
      std::lock_guard<std::mutex> lock(mutex);
      for (auto it = clients.begin(); it != clients.end();) {
        auto next = std::next(it);
        if (it->finished) ended.splice(ended.end(), clients, it);
        it = next;
      }
    }
    for (Client& client : ended) client.thread.join();
  }

  void Accept() {
    for (;;) {
      pollfd fds[2] = {{listen_fd, POLLIN, 0}, {wake_pipe[0], POLLIN, 0}};
      const int ready = ::poll(fds, 2, 1000);
      if (stopping.load()) return;
      Reap();
      if (ready <= 0 || (fds[0].revents & POLLIN) == 0) continue;
      const int fd = ::accept4(listen_fd, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd < 0) continue;
      const int on = 1;
      ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof(on));
      auto socket = std::make_unique<server::pg::Socket>(fd);
      std::unique_lock<std::mutex> lock(mutex);
      if (static_cast<int>(clients.size()) >= options.max_connections) {
        lock.unlock();
        Log("refused a connection: " + std::to_string(options.max_connections) + " clients are connected");
        // Off the accept loop: the refused client may be slow to send its startup packet.
        std::thread([socket = std::move(socket), tls = context.tls,
                     limit = options.max_connections]() mutable {
          server::pg::RefuseConnection(*socket, tls, "53300",
                                       "sorry, too many clients already (" + std::to_string(limit) + ")");
        }).detach();
        continue;
      }
      const auto process_id = static_cast<int32_t>(random() & 0x7fffffff);
      const auto secret_key = static_cast<int32_t>(random());
      Client& client = clients.emplace_back();
      client.connection =
          std::make_unique<server::pg::PgConnection>(std::move(socket), context, process_id, secret_key);
      metrics->connections(server::Protocol::kPg).Add(1);
      client.thread = std::thread([this, &client] {
        Status served = client.connection->Serve();
        metrics->connections(server::Protocol::kPg).Add(-1);
        if (!served.ok() && !stopping.load()) Log("connection ended: " + served.message());
        std::lock_guard<std::mutex> done(mutex);
        client.finished = true;
        changed.notify_all();
      });
    }
  }

  void Stop() {
    if (stopping.exchange(true)) return;
    if (wake_pipe[1] >= 0) (void)!::write(wake_pipe[1], "x", 1);
    if (http) http->Stop();
    if (flows) flows->Close();
    std::lock_guard<std::mutex> lock(mutex);
    for (Client& client : clients) client.connection->Close();
  }

  void Join() {
    if (acceptor.joinable()) acceptor.join();
    std::unique_lock<std::mutex> lock(mutex);
    changed.wait(lock, [&] {
      for (const Client& client : clients) {
        if (!client.finished) return false;
      }
      return true;
    });
    lock.unlock();
    Reap();
    if (flows) flows->Join();
    if (audit) audit->Stop();  // every statement has ended: the last events are written
  }

  ~Impl() {
    for (int fd : {listen_fd, wake_pipe[0], wake_pipe[1]}) {
      if (fd >= 0) ::close(fd);
    }
  }
};

Server::Server(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Server::~Server() {
  Shutdown();
  Wait();
}

Result<std::unique_ptr<Server>> Server::Start(const ServerOptions& options) {
  auto impl = std::make_unique<Impl>();
  impl->options = options;
  if (options.max_connections < 1) return Status::InvalidArgument("max_connections must be at least 1");
  if (options.tls_cert_file.empty() != options.tls_key_file.empty()) {
    return Status::InvalidArgument(
        "TLS needs both a certificate file and a key file (--tls-cert and --tls-key)");
  }
  if (options.tls_required && options.tls_cert_file.empty()) {
    return Status::InvalidArgument(
        "requiring TLS needs a certificate file and a key file (--tls-cert and --tls-key)");
  }
  if (options.statement_timeout_ms < 0)
    return Status::InvalidArgument("statement_timeout_ms must not be negative");
  if (!options.tls_cert_file.empty()) {
    ASSIGN_OR_RETURN(impl->context.tls,
                     server::pg::TlsContext::Load(options.tls_cert_file, options.tls_key_file));
  }
  impl->context.tls_required = options.tls_required;
  impl->context.statement_timeout_ms = options.statement_timeout_ms;
  impl->context.tables = NewTableCache(kServerTableVersions);
  // The warehouse must open as a session would, before anyone connects.
  SessionOptions session_options;
  session_options.warehouse = options.warehouse;
  RETURN_IF_ERROR(Session::Open(session_options).status());
  ASSIGN_OR_RETURN(std::shared_ptr<ObjectStore> store,
                   OpenStoreAt(options.warehouse.empty() ? "." : options.warehouse));
  std::shared_ptr<const Clock> clock = options.clock ? options.clock : SystemClock();
  impl->users = std::make_unique<security::UserStore>(store, clock);
  impl->tokens = std::make_unique<security::TokenStore>(store, clock);
  impl->grants = std::make_unique<security::GrantStore>(store, clock);
  ASSIGN_OR_RETURN(std::optional<std::string> generated, impl->users->EnsureAdmin(options.admin_password));
  if (generated) {
    impl->Log("created user admin with password " + *generated +
              " (shown once; set BASIN_ADMIN_PASSWORD to choose it)");
  }
  impl->metrics = std::make_unique<server::ServerMetrics>(options.warehouse, clock);
  impl->context.metrics = impl->metrics.get();
  ASSIGN_OR_RETURN(impl->flows,
                   server::FlowSet::Open(options, *impl->users, options.log, impl->context.tables));
  impl->metrics->registry().AddCollector(
      [flows = impl->flows.get()] { return server::FlowFamilies(flows->List()); });
  impl->context.warehouse = options.warehouse;
  impl->context.database = options.database;
  impl->context.users = impl->users.get();
  if (options.audit) {
    ASSIGN_OR_RETURN(
        impl->audit,
        server::AuditLog::Open(options.warehouse, clock,
                               {.flush_interval_ms = options.audit_flush_interval_ms, .log = options.log}));
    impl->context.audit = impl->audit.get();
  }
  Impl* raw = impl.get();
  impl->context.cancel = [raw](int32_t process_id, int32_t secret_key) {
    raw->Cancel(process_id, secret_key);
  };
  if (::pipe2(impl->wake_pipe, O_CLOEXEC) != 0) return Status::IOError("cannot create a pipe");
  ASSIGN_OR_RETURN(impl->listen_fd, Listen(options.bind_address, options.pg_port));
  impl->port = BoundPort(impl->listen_fd);
  impl->Log("PostgreSQL protocol on " + options.bind_address + ":" + std::to_string(impl->port) +
            " (database " + options.database + (impl->context.tls ? ", TLS" : "") +
            (options.tls_required ? " required" : "") + ")");
  if (options.http_port >= 0) {
    ASSIGN_OR_RETURN(impl->http, server::http::HttpServer::Start(
                                     options, clock, *impl->tokens, *impl->users, *impl->grants,
                                     impl->audit.get(), *impl->metrics, *impl->flows, impl->context.tables));
    impl->Log("HTTP API on " + options.bind_address + ":" + std::to_string(impl->http->port()));
  }
  RETURN_IF_ERROR(impl->flows->StartAll());
  impl->acceptor = std::thread([raw] { raw->Accept(); });
  return std::unique_ptr<Server>(new Server(std::move(impl)));
}

int Server::pg_port() const { return impl_->port; }
int Server::http_port() const { return impl_->http ? impl_->http->port() : -1; }
void Server::Shutdown() { impl_->Stop(); }
void Server::Wait() { impl_->Join(); }

}  // namespace basin
