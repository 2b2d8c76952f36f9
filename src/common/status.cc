#include "basin/status.h"

#include <array>

namespace basin {

namespace {
constexpr std::array<ErrorCodeInfo, 14> kErrorCodes = {{
    {ErrorCode::kOk, "OK", "00000", 200},
    {ErrorCode::kInvalidArgument, "InvalidArgument", "22023", 400},
    {ErrorCode::kNotFound, "NotFound", "42P01", 404},
    {ErrorCode::kAlreadyExists, "AlreadyExists", "42P07", 409},
    {ErrorCode::kConflict, "Conflict", "40001", 409},
    {ErrorCode::kIOError, "IOError", "58030", 503},
    {ErrorCode::kCorruption, "Corruption", "XX001", 500},
    {ErrorCode::kNotImplemented, "NotImplemented", "0A000", 501},
    {ErrorCode::kUnsupported, "Unsupported", "0A000", 422},
    {ErrorCode::kCancelled, "Cancelled", "57014", 499},
    {ErrorCode::kPermissionDenied, "PermissionDenied", "42501", 403},
    {ErrorCode::kUnauthenticated, "Unauthenticated", "28000", 401},
    {ErrorCode::kTransactionAborted, "TransactionAborted", "25P02", 409},
    {ErrorCode::kInternal, "Internal", "XX000", 500},
}};
}  // namespace

const ErrorCodeInfo& GetErrorCodeInfo(ErrorCode code) {
  auto index = static_cast<size_t>(code);
  assert(index < kErrorCodes.size() && kErrorCodes[index].code == code);
  return kErrorCodes[index];
}

std::string Status::ToString() const {
  if (ok()) return "OK";
  return std::string(GetErrorCodeInfo(code_).name) + ": " + message_;
}

}  // namespace basin
