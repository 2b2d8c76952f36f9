// TLS on the PostgreSQL protocol's port (OpenSSL): the server's certificate and key, loaded
// once when the server starts. A connection switches to TLS after the client's SSLRequest
// (Socket::StartTls, wire.h), as PostgreSQL's sslmode=prefer, require and verify-full ask.
//
// Thread safety: a loaded TlsContext is shared by every connection's thread.
#pragma once

#include <memory>
#include <string>

#include "basin/status.h"

struct ssl_ctx_st;  // OpenSSL's SSL_CTX

namespace basin::server::pg {

class TlsContext {
 public:
  // The PEM certificate chain in `cert_file` and private key in `key_file`. IOError naming
  // the file that cannot be read; InvalidArgument naming the file that holds no certificate
  // or key, or when the key is not the certificate's.
  static Result<std::shared_ptr<const TlsContext>> Load(const std::string& cert_file,
                                                        const std::string& key_file);
  ~TlsContext();
  TlsContext(const TlsContext&) = delete;
  TlsContext& operator=(const TlsContext&) = delete;

  ssl_ctx_st* raw() const { return ctx_; }

 private:
  explicit TlsContext(ssl_ctx_st* ctx) : ctx_(ctx) {}
  ssl_ctx_st* ctx_;
};

// OpenSSL's queued errors as one line (and the queue emptied); `fallback` when there is none.
std::string TakeTlsErrors(const std::string& fallback);

}  // namespace basin::server::pg
