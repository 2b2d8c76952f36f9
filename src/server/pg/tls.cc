#include "server/pg/tls.h"

#include <openssl/err.h>
#include <openssl/ssl.h>

#include <cerrno>
#include <cstring>
#include <fstream>

namespace basin::server::pg {
namespace {

// A clear error for a file that cannot be opened, before OpenSSL's less clear one.
Status CheckReadable(const std::string& file, const std::string& what) {
  std::ifstream in(file);
  if (!in)
    return Status::IOError("cannot read the TLS " + what + " file " + file + ": " + std::strerror(errno));
  return Status::OK();
}

}  // namespace

std::string TakeTlsErrors(const std::string& fallback) {
  std::string out;
  while (const unsigned long error = ERR_get_error()) {
    char text[256];
    ERR_error_string_n(error, text, sizeof(text));
    out += (out.empty() ? "" : "; ") + std::string(text);
  }
  return out.empty() ? fallback : out;
}

Result<std::shared_ptr<const TlsContext>> TlsContext::Load(const std::string& cert_file,
                                                           const std::string& key_file) {
  RETURN_IF_ERROR(CheckReadable(cert_file, "certificate"));
  RETURN_IF_ERROR(CheckReadable(key_file, "key"));
  SSL_CTX* ctx = SSL_CTX_new(TLS_server_method());
  if (ctx == nullptr) return Status::Internal(TakeTlsErrors("cannot create a TLS context"));
  std::shared_ptr<const TlsContext> context(new TlsContext(ctx));
  SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
  if (SSL_CTX_use_certificate_chain_file(ctx, cert_file.c_str()) != 1) {
    return Status::InvalidArgument("the TLS certificate file " + cert_file +
                                   " holds no PEM certificate: " + TakeTlsErrors("unreadable"));
  }
  // (OpenSSL also refuses a key that is not the certificate's here: "key values mismatch".)
  if (SSL_CTX_use_PrivateKey_file(ctx, key_file.c_str(), SSL_FILETYPE_PEM) != 1) {
    return Status::InvalidArgument("the TLS key file " + key_file +
                                   " holds no PEM private key of the certificate in " + cert_file + ": " +
                                   TakeTlsErrors("unreadable"));
  }
  return context;
}

TlsContext::~TlsContext() { SSL_CTX_free(ctx_); }

}  // namespace basin::server::pg
