// Headless Chromium driven over the W3C WebDriver protocol, for tests of the web console
// (docs/console.md): starts Debian's chromedriver (package chromium-driver) on a free
// loopback port with one browser session, and speaks its HTTP protocol through
// cpp-httplib's client. Tests skip locally and fail in CI without it: use
// SKIP_OR_FAIL_WITHOUT_BROWSER.
//
// Thread safety: one thread per Browser.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "basin/status.h"
#include "testing/interop.h"
#include "testing/test_util.h"

namespace basin::testing {

class Browser {
 public:
  // Why no browser can run here (chromium or chromedriver not on PATH), or nullopt.
  static std::optional<std::string> UnavailableReason();
  // Starts chromedriver and a headless Chromium with a profile of its own. Internal, quoting
  // chromedriver's answer, when either does not start within 20 seconds.
  static Result<std::unique_ptr<Browser>> Start();
  ~Browser();  // ends the session and stops chromedriver
  Browser(const Browser&) = delete;
  Browser& operator=(const Browser&) = delete;

  Status Navigate(const std::string& url);
  // Runs `script`, the body of a function called with `args`, in the page; what it returns.
  Result<nlohmann::json> Execute(const std::string& script,
                                 const nlohmann::json& args = nlohmann::json::array());
  // Runs `script` until it returns a truthy value (not null, false, 0 or ""), and returns
  // that value; Internal, with the last value seen, after `timeout_ms`.
  Result<nlohmann::json> WaitFor(const std::string& script,
                                 const nlohmann::json& args = nlohmann::json::array(),
                                 int64_t timeout_ms = 15000);
  // Clicks the element `css_selector` names (the first one); NotFound when there is none.
  Status Click(const std::string& css_selector);
  // Empties the input or textarea `css_selector` names and types `text` into it.
  Status Type(const std::string& css_selector, const std::string& text);
  // The browser console's entries since the last call: [{"level", "message", "source"}],
  // sources "javascript" (uncaught errors), "console-api", "security" (CSP), "network"...
  Result<nlohmann::json> TakeConsoleLog();

 private:
  Browser(pid_t driver_pid, int port) : driver_pid_(driver_pid), port_(port) {}
  // One WebDriver command on `path` ("/status", "/session"): its "value", or the error it answers.
  Result<nlohmann::json> Command(const std::string& method, const std::string& path,
                                 const nlohmann::json& body);
  // `path` of this browser's session ("/url" gives "/session/<id>/url").
  std::string InSession(const std::string& path) const { return "/session/" + session_ + path; }
  Result<std::string> FindElement(const std::string& css_selector);

  pid_t driver_pid_;
  int port_;
  std::string session_;  // empty until the session exists
  TempDir profile_;      // Chromium's user data folder, and chromedriver's log
};

}  // namespace basin::testing

// In a test body: skips the test (locally) or fails it (CI=true) when no browser can run,
// printing why.
#define SKIP_OR_FAIL_WITHOUT_BROWSER()                                                          \
  do {                                                                                          \
    if (auto _why = ::basin::testing::Browser::UnavailableReason()) {                           \
      if (::basin::testing::InCi()) FAIL() << "headless Chromium unavailable in CI: " << *_why; \
      GTEST_SKIP() << "headless Chromium unavailable (" << *_why << "); skipping";              \
    }                                                                                           \
  } while (0)
