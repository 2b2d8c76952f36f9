// Status and Result<T>: Basin's one error vocabulary.
//
// Every fallible function returns Status or Result<T>. A Status carries a code from the
// table in error_codes.h, a message that names what failed and where (file, version,
// column), and a retryable flag for transient storage errors. Exceptions never cross a
// Basin API; the DuckDB and JSON boundaries convert them here.
//
// Thread safety: values; safe to copy and move between threads.
#pragma once

#include <cassert>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <variant>

#include "basin/error_codes.h"

namespace basin {

class [[nodiscard]] Status {
 public:
  Status() = default;  // OK

  static Status OK() { return Status(); }
  static Status InvalidArgument(std::string msg) {
    return Status(ErrorCode::kInvalidArgument, std::move(msg));
  }
  static Status NotFound(std::string msg) { return Status(ErrorCode::kNotFound, std::move(msg)); }
  static Status AlreadyExists(std::string msg) { return Status(ErrorCode::kAlreadyExists, std::move(msg)); }
  static Status Conflict(std::string msg) { return Status(ErrorCode::kConflict, std::move(msg)); }
  static Status IOError(std::string msg, bool retryable = false) {
    Status s(ErrorCode::kIOError, std::move(msg));
    s.retryable_ = retryable;
    return s;
  }
  static Status Corruption(std::string msg) { return Status(ErrorCode::kCorruption, std::move(msg)); }
  static Status NotImplemented(std::string msg) { return Status(ErrorCode::kNotImplemented, std::move(msg)); }
  static Status Unsupported(std::string msg) { return Status(ErrorCode::kUnsupported, std::move(msg)); }
  static Status Cancelled(std::string msg) { return Status(ErrorCode::kCancelled, std::move(msg)); }
  static Status TransactionAborted(std::string msg) {
    return Status(ErrorCode::kTransactionAborted, std::move(msg));
  }
  static Status PermissionDenied(std::string msg) {
    return Status(ErrorCode::kPermissionDenied, std::move(msg));
  }
  static Status Unauthenticated(std::string msg) {
    return Status(ErrorCode::kUnauthenticated, std::move(msg));
  }
  static Status Internal(std::string msg) { return Status(ErrorCode::kInternal, std::move(msg)); }

  Status(ErrorCode code, std::string msg) : code_(code), message_(std::move(msg)) {}

  bool ok() const { return code_ == ErrorCode::kOk; }
  ErrorCode code() const { return code_; }
  const std::string& message() const { return message_; }
  bool retryable() const { return retryable_; }

  bool IsNotFound() const { return code_ == ErrorCode::kNotFound; }
  bool IsAlreadyExists() const { return code_ == ErrorCode::kAlreadyExists; }
  bool IsConflict() const { return code_ == ErrorCode::kConflict; }
  bool IsCorruption() const { return code_ == ErrorCode::kCorruption; }
  bool IsPermissionDenied() const { return code_ == ErrorCode::kPermissionDenied; }

  // Returns a copy whose message is "<context>: <message>"; code and flag are kept.
  Status WithContext(const std::string& context) const {
    if (ok()) return *this;
    Status s(code_, context + ": " + message_);
    s.retryable_ = retryable_;
    return s;
  }

  // "Corruption: <message>"
  std::string ToString() const;

 private:
  ErrorCode code_ = ErrorCode::kOk;
  std::string message_;
  bool retryable_ = false;
};

// A value or a non-OK Status.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}        // NOLINT(google-explicit-constructor)
  Result(Status status) : v_(std::move(status)) {  // NOLINT(google-explicit-constructor)
    assert(!std::get<Status>(v_).ok() && "Result built from an OK status");
  }

  bool ok() const { return std::holds_alternative<T>(v_); }
  Status status() const { return ok() ? Status::OK() : std::get<Status>(v_); }

  // REQUIRES: ok()
  T& value() & {
    assert(ok());
    return std::get<T>(v_);
  }
  const T& value() const& {
    assert(ok());
    return std::get<T>(v_);
  }
  T&& value() && {
    assert(ok());
    return std::get<T>(std::move(v_));
  }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

  T ValueOr(T fallback) const { return ok() ? std::get<T>(v_) : std::move(fallback); }

 private:
  std::variant<T, Status> v_;
};

namespace internal {
inline Status ToStatus(Status s) { return s; }
template <typename T>
Status ToStatus(const Result<T>& r) {
  return r.status();
}
}  // namespace internal

}  // namespace basin

#define BASIN_CONCAT_INNER(a, b) a##b
#define BASIN_CONCAT(a, b) BASIN_CONCAT_INNER(a, b)

// Returns the status from the enclosing function when `expr` (a Status or Result) fails.
#define RETURN_IF_ERROR(expr)                                  \
  do {                                                         \
    ::basin::Status _st = ::basin::internal::ToStatus((expr)); \
    if (!_st.ok()) return _st;                                 \
  } while (0)

// As RETURN_IF_ERROR, prefixing the message with `context` (a std::string expression).
#define RETURN_IF_ERROR_CTX(expr, context)                     \
  do {                                                         \
    ::basin::Status _st = ::basin::internal::ToStatus((expr)); \
    if (!_st.ok()) return _st.WithContext(context);            \
  } while (0)

// `tmp` is a fresh name and `lhs` may be a declaration, so neither can be parenthesized.
// NOLINTBEGIN(bugprone-macro-parentheses)
#define ASSIGN_OR_RETURN_IMPL(tmp, lhs, rexpr) \
  auto tmp = (rexpr);                          \
  if (!tmp.ok()) return tmp.status();          \
  lhs = std::move(tmp).value()
// NOLINTEND(bugprone-macro-parentheses)

// `ASSIGN_OR_RETURN(auto x, Foo());` declares x from a Result or returns its error.
#define ASSIGN_OR_RETURN(lhs, rexpr) ASSIGN_OR_RETURN_IMPL(BASIN_CONCAT(_res_, __LINE__), lhs, rexpr)
