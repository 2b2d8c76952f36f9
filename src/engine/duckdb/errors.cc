#include "engine/duckdb/errors.h"

#include "duckdb.hpp"
#include "engine/status_transport.h"

namespace basin::engine::duckdb_ext {

void ThrowStatus(const Status& status) {
  std::string message = EncodeStatus(status);
  switch (status.code()) {
    case ErrorCode::kInvalidArgument:
      throw duckdb::InvalidInputException(message);
    case ErrorCode::kNotFound:
      throw duckdb::CatalogException(message);
    case ErrorCode::kNotImplemented:
    case ErrorCode::kUnsupported:
      throw duckdb::NotImplementedException(message);
    case ErrorCode::kPermissionDenied:
    case ErrorCode::kUnauthenticated:
      throw duckdb::PermissionException(message);
    case ErrorCode::kInternal:
      throw duckdb::InternalException(message);
    default:
      throw duckdb::IOException(message);
  }
}

}  // namespace basin::engine::duckdb_ext
