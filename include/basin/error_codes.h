// The user-facing error codes: one table, each code mapped to a SQLSTATE (for the
// PostgreSQL wire protocol) and an HTTP status. Tests check codes, never wording.
#pragma once

#include <string_view>

namespace basin {

enum class ErrorCode {
  kOk = 0,
  kInvalidArgument,  // bad statement, option or value supplied by the caller
  kNotFound,         // table, version, file or key does not exist
  kAlreadyExists,    // put-if-absent lost; table exists
  kConflict,         // a concurrent commit conflicts with this transaction
  kIOError,          // storage failed; see Status::retryable()
  kCorruption,       // stored data is malformed (log, checkpoint, deletion vector)
  kNotImplemented,   // Basin does not do this yet
  kUnsupported,      // the table needs a protocol version or feature Basin refuses
  kCancelled,        // stopped by the user or a shutdown
  kPermissionDenied,  // the user lacks a privilege (grants) or the path is out of bounds
  kUnauthenticated,   // no, a wrong, an expired or a revoked password or token
  kTransactionAborted,  // in a transaction block a failed statement aborted (until ROLLBACK)
  kInternal,         // a bug in Basin
};

struct ErrorCodeInfo {
  ErrorCode code;
  std::string_view name;      // "Corruption"
  std::string_view sqlstate;  // "XX001"
  int http_status;            // 500
};

// REQUIRES: code is a valid enumerator.
const ErrorCodeInfo& GetErrorCodeInfo(ErrorCode code);

}  // namespace basin
