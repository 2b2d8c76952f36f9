#include "postgres_server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <grp.h>
#include <netinet/in.h>
#include <pwd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

#include "pg_client.h"

namespace basin::bench {
namespace fs = std::filesystem;
namespace {

// Whom the server runs as: nullopt for this process's own user.
struct Account {
  uid_t uid;
  gid_t gid;
  std::string name;
};

Result<std::optional<Account>> ServerAccount() {
  if (::geteuid() != 0) return std::optional<Account>();
  for (const char* name : {"postgres", "nobody"}) {
    if (const passwd* entry = ::getpwnam(name))
      return std::optional<Account>(Account{entry->pw_uid, entry->pw_gid, name});
  }
  return Status::NotFound(
      "running as root, and neither user postgres nor nobody exists to run PostgreSQL as");
}

// A loopback port nobody listens on now (the system's pick; another process could take it
// before the server binds it, which then fails to start and says so).
Result<int> FreeLoopbackPort() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return Status::IOError("socket() failed while looking for a free port");
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof(address);
  const bool ok = ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0 &&
                  ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) == 0;
  ::close(fd);
  if (!ok) return Status::IOError("cannot bind a loopback port to find a free one");
  return static_cast<int>(ntohs(address.sin_port));
}

// Starts `argv` as `account`, its output appended to `log`.
Result<pid_t> Spawn(const std::vector<std::string>& argv, const std::optional<Account>& account,
                    const fs::path& log) {
  std::vector<char*> args;
  for (const std::string& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);
  const int log_fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (log_fd < 0) return Status::IOError("cannot open " + log.string());
  const pid_t pid = ::fork();
  if (pid == 0) {  // only async-signal-safe calls from here
    ::dup2(log_fd, STDOUT_FILENO);
    ::dup2(log_fd, STDERR_FILENO);
    if (account &&
        (::setgroups(0, nullptr) != 0 || ::setgid(account->gid) != 0 || ::setuid(account->uid) != 0)) {
      std::_Exit(126);
    }
    ::execv(args[0], args.data());
    std::_Exit(127);
  }
  ::close(log_fd);
  if (pid < 0) return Status::IOError("fork failed starting " + argv[0]);
  return pid;
}

std::string LogTail(const fs::path& log) {
  std::ifstream in(log);
  std::stringstream text;
  text << in.rdbuf();
  const std::string all = text.str();
  return all.size() > 2000 ? all.substr(all.size() - 2000) : all;
}

}  // namespace

std::optional<fs::path> PostgresServer::FindBinaries() {
  std::vector<fs::path> candidates;
  if (const char* dir = std::getenv("BASIN_BENCH_PG_BIN"); dir != nullptr && *dir != '\0') {
    candidates.emplace_back(dir);
  } else {
    candidates.emplace_back("/usr/lib/postgresql/15/bin");
    if (const char* path = std::getenv("PATH")) {
      std::stringstream dirs(path);
      for (std::string dir; std::getline(dirs, dir, ':');) candidates.emplace_back(dir);
    }
  }
  for (const fs::path& dir : candidates) {
    if (::access((dir / "initdb").c_str(), X_OK) == 0 && ::access((dir / "postgres").c_str(), X_OK) == 0)
      return dir;
  }
  return std::nullopt;
}

Result<std::unique_ptr<PostgresServer>> PostgresServer::Start(const fs::path& bin_dir,
                                                              const fs::path& folder) {
  ASSIGN_OR_RETURN(std::optional<Account> account, ServerAccount());
  const fs::path data = folder / "data";
  const fs::path log = folder / "postgres.log";
  std::error_code ec;
  fs::create_directories(data, ec);
  if (ec) return Status::IOError("cannot create " + data.string() + ": " + ec.message());
  fs::permissions(data, fs::perms::owner_all, ec);  // PostgreSQL requires 0700
  if (account && ::chown(data.c_str(), account->uid, account->gid) != 0) {
    return Status::IOError("cannot hand " + data.string() + " to user " + account->name);
  }

  ASSIGN_OR_RETURN(pid_t initdb, Spawn({(bin_dir / "initdb").string(), "-D", data.string(), "-U", "bench",
                                        "--auth=trust", "-E", "UTF8", "--locale=C", "--no-sync"},
                                       account, log));
  int status = 0;
  ::waitpid(initdb, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    return Status::Internal("initdb into " + data.string() + " failed (exit " +
                            std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1) +
                            "): " + LogTail(log));
  }

  ASSIGN_OR_RETURN(int port, FreeLoopbackPort());
  ASSIGN_OR_RETURN(pid_t pid, Spawn({(bin_dir / "postgres").string(), "-D", data.string(), "-p",
                                     std::to_string(port), "-c", "listen_addresses=127.0.0.1", "-c",
                                     "unix_socket_directories=", "-c", "max_connections=64"},
                                    account, log));
  std::unique_ptr<PostgresServer> server(new PostgresServer(
      pid, "host=127.0.0.1 port=" + std::to_string(port) + " user=bench dbname=postgres sslmode=disable"));
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(1);
  while (!PgAcceptsConnections(server->conninfo())) {
    if (::waitpid(pid, &status, WNOHANG) == pid) {
      server->pid_ = -1;
      return Status::Internal("postgres exited while starting: " + LogTail(log));
    }
    if (std::chrono::steady_clock::now() > deadline) {
      return Status::Internal("postgres does not accept connections after a minute: " + LogTail(log));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return server;
}

PostgresServer::~PostgresServer() {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGINT);  // fast shutdown: ends the sessions, then exits
  int status = 0;
  for (int waited_ms = 0; ::waitpid(pid_, &status, WNOHANG) == 0; waited_ms += 50) {
    if (waited_ms == 30'000) ::kill(pid_, SIGKILL);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

}  // namespace basin::bench
