#include "testing/webdriver.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <httplib.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <fstream>
#include <thread>
#include <vector>

#include "testing/interop.h"

extern char** environ;  // NOLINT(readability-redundant-declaration): POSIX declares it nowhere

namespace basin::testing {
namespace {

using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

constexpr auto kStartTimeout = std::chrono::seconds(20);
// The W3C name of the key under which an element reference is given.
constexpr char kElementKey[] = "element-6066-11e4-a52e-4f735466cecf";

// A loopback port nobody listens on now (chromedriver takes it a moment later).
Result<int> FreePort() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return Status::Internal("socket() failed");
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof(address);
  const bool bound = ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0 &&
                     ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) == 0;
  ::close(fd);
  if (!bound) return Status::Internal("cannot find a free loopback port");
  return static_cast<int>(ntohs(address.sin_port));
}

// Starts `argv` with its output written to `log_path`; its pid.
Result<pid_t> Spawn(std::vector<std::string> argv, const std::string& log_path) {
  std::vector<char*> pointers;
  for (std::string& arg : argv) pointers.push_back(arg.data());
  pointers.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  if (posix_spawn_file_actions_init(&actions) != 0)
    return Status::Internal("posix_spawn_file_actions_init failed");
  int rc = posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log_path.c_str(),
                                            O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (rc == 0) rc = posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  pid_t pid = -1;
  if (rc == 0) rc = posix_spawn(&pid, pointers[0], &actions, nullptr, pointers.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) return Status::Internal("cannot start " + argv[0] + ": " + std::strerror(rc));
  return pid;
}

// The end of chromedriver's log, for errors: the log goes with the browser's folder.
std::string LogTail(const std::string& log_path) {
  std::ifstream in(log_path);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return text.size() > 2000 ? text.substr(text.size() - 2000) : text;
}

bool Truthy(const json& value) {
  if (value.is_null()) return false;
  if (value.is_boolean()) return value.get<bool>();
  if (value.is_number()) return value.get<double>() != 0;
  if (value.is_string()) return !value.get<std::string>().empty();
  return true;
}

}  // namespace

std::optional<std::string> Browser::UnavailableReason() {
  if (!FindOnPath("chromium"))
    return "chromium is not on PATH; run scripts/setup.sh (Debian package chromium)";
  if (!FindOnPath("chromedriver")) {
    return "chromedriver is not on PATH; run scripts/setup.sh (Debian package chromium-driver)";
  }
  return std::nullopt;
}

Result<std::unique_ptr<Browser>> Browser::Start() {
  if (auto why = UnavailableReason()) return Status::NotFound(*why);
  ASSIGN_OR_RETURN(int port, FreePort());
  std::unique_ptr<Browser> browser(new Browser(-1, port));
  const std::string log_path = (browser->profile_.path() / "chromedriver.log").string();
  ASSIGN_OR_RETURN(browser->driver_pid_,
                   Spawn({FindOnPath("chromedriver")->string(), "--port=" + std::to_string(port)}, log_path));
  httplib::Client client("127.0.0.1", port);
  const auto deadline = Clock::now() + kStartTimeout;
  for (;;) {
    httplib::Result status = client.Get("/status");
    if (status && json::parse(status->body, nullptr, false).value(json::json_pointer("/value/ready"), false))
      break;
    if (Clock::now() > deadline) return Status::Internal("chromedriver did not start:\n" + LogTail(log_path));
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  // As root (in containers) Chromium runs only without its sandbox.
  const json options = {
      {"binary", FindOnPath("chromium")->string()},
      {"args",
       {"--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
        "--window-size=1280,900", "--user-data-dir=" + (browser->profile_.path() / "profile").string()}}};
  const json capabilities = {{"capabilities",
                              {{"alwaysMatch",
                                {{"browserName", "chrome"},
                                 {"goog:chromeOptions", options},
                                 {"goog:loggingPrefs", {{"browser", "ALL"}}}}}}}};
  Result<json> session = browser->Command("POST", "/session", capabilities);
  if (!session.ok()) return Status::Internal(session.status().message() + "\n" + LogTail(log_path));
  browser->session_ = session->value("sessionId", "");
  if (browser->session_.empty())
    return Status::Internal("chromedriver gave no session id: " + session->dump());
  return browser;
}

Browser::~Browser() {
  if (!session_.empty()) (void)Command("DELETE", InSession(""), nullptr);
  if (driver_pid_ > 0) {
    ::kill(driver_pid_, SIGTERM);
    ::waitpid(driver_pid_, nullptr, 0);
  }
}

Result<json> Browser::Command(const std::string& method, const std::string& path, const json& body) {
  httplib::Client client("127.0.0.1", port_);
  client.set_read_timeout(60, 0);
  httplib::Result answer = method == "GET"      ? client.Get(path)
                           : method == "DELETE" ? client.Delete(path)
                                                : client.Post(path, body.dump(), "application/json");
  if (!answer) {
    return Status::Internal("WebDriver " + method + " " + path + ": " + httplib::to_string(answer.error()));
  }
  json parsed = json::parse(answer->body, nullptr, false);
  if (!parsed.is_object()) return Status::Internal("WebDriver " + path + " answered " + answer->body);
  json value = parsed["value"];
  if (answer->status != 200) {
    const std::string error = value.is_object() ? value.value("error", "") : "";
    const std::string message =
        (error + ": " + (value.is_object() ? value.value("message", "") : answer->body)).substr(0, 2000);
    if (error == "no such element") return Status::NotFound("WebDriver " + path + " " + message);
    return Status::Internal("WebDriver " + method + " " + path + " " + message);
  }
  return value;
}

Status Browser::Navigate(const std::string& url) {
  return Command("POST", InSession("/url"), {{"url", url}}).status();
}

Result<json> Browser::Execute(const std::string& script, const json& args) {
  return Command("POST", InSession("/execute/sync"), {{"script", script}, {"args", args}});
}

Result<json> Browser::WaitFor(const std::string& script, const json& args, int64_t timeout_ms) {
  const auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  json last;
  for (;;) {
    ASSIGN_OR_RETURN(last, Execute(script, args));
    if (Truthy(last)) return last;
    if (Clock::now() > deadline) {
      return Status::Internal("after " + std::to_string(timeout_ms) + " ms, `" + script + "` still returns " +
                              last.dump());
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

Result<std::string> Browser::FindElement(const std::string& css_selector) {
  ASSIGN_OR_RETURN(json element, Command("POST", InSession("/element"),
                                         {{"using", "css selector"}, {"value", css_selector}}));
  if (!element.contains(kElementKey)) return Status::Internal("WebDriver gave no element: " + element.dump());
  return element[kElementKey].get<std::string>();
}

Status Browser::Click(const std::string& css_selector) {
  ASSIGN_OR_RETURN(std::string element, FindElement(css_selector));
  return Command("POST", InSession("/element/" + element + "/click"), json::object()).status();
}

Status Browser::Type(const std::string& css_selector, const std::string& text) {
  ASSIGN_OR_RETURN(std::string element, FindElement(css_selector));
  RETURN_IF_ERROR(Command("POST", InSession("/element/" + element + "/clear"), json::object()).status());
  return Command("POST", InSession("/element/" + element + "/value"), {{"text", text}}).status();
}

Result<json> Browser::TakeConsoleLog() {
  return Command("POST", InSession("/se/log"), {{"type", "browser"}});
}

}  // namespace basin::testing
