#include "server/pg/wire.h"

#include <arpa/inet.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "server/pg/tls.h"

namespace basin::server::pg {
namespace {

int32_t DecodeInt32(const char* bytes) {
  uint32_t network = 0;
  std::memcpy(&network, bytes, 4);
  return static_cast<int32_t>(ntohl(network));
}

Result<std::string> ReadBody(Socket& socket, int32_t length, std::string_view what) {
  // The length counts itself.
  if (length < 4 || static_cast<uint32_t>(length) - 4 > kMaxMessageBytes) {
    return Status::InvalidArgument("invalid " + std::string(what) + " length " + std::to_string(length) +
                                   " (at most " + std::to_string(kMaxMessageBytes) + " bytes)");
  }
  std::string body(static_cast<size_t>(length) - 4, '\0');
  RETURN_IF_ERROR(socket.ReadExact(body.data(), body.size()));
  return body;
}

// One recv() of at most `capacity` bytes, at least one.
Status ReadSome(int fd, char* out, size_t capacity, size_t* received) {
  for (;;) {
    const ssize_t n = ::recv(fd, out, capacity, 0);
    if (n == 0) return Status::IOError("the client closed the connection");
    if (n > 0) {
      *received = static_cast<size_t>(n);
      return Status::OK();
    }
    if (errno != EINTR)
      return Status::IOError(std::string("reading from the client: ") + std::strerror(errno));
  }
}

}  // namespace

Socket::~Socket() {
  if (ssl_ != nullptr) {
    if (SSL_shutdown(ssl_) >= 0) (void)SendTls();  // close_notify, when the client still listens
    SSL_free(ssl_);
  }
  if (fd_ >= 0) ::close(fd_);
}

Status Socket::StartTls(const TlsContext& tls) {
  ssl_ = SSL_new(tls.raw());
  if (ssl_ == nullptr) return Status::Internal(TakeTlsErrors("cannot start TLS"));
  SSL_set_bio(ssl_, BIO_new(BIO_s_mem()), BIO_new(BIO_s_mem()));
  SSL_set_accept_state(ssl_);
  for (;;) {
    const int done = SSL_do_handshake(ssl_);
    RETURN_IF_ERROR(SendTls());
    if (done == 1) return Status::OK();
    if (SSL_get_error(ssl_, done) != SSL_ERROR_WANT_READ) {
      return Status::IOError("TLS handshake failed: " + TakeTlsErrors("the client gave up"));
    }
    RETURN_IF_ERROR(ReceiveTls());
  }
}

Status Socket::ReceiveTls() {
  char buffer[16 << 10];
  size_t received = 0;
  RETURN_IF_ERROR(ReadSome(fd_, buffer, sizeof(buffer), &received));
  if (BIO_write(SSL_get_rbio(ssl_), buffer, static_cast<int>(received)) != static_cast<int>(received)) {
    return Status::Internal("cannot buffer TLS input");
  }
  return Status::OK();
}

Status Socket::SendTls() {
  BIO* output = SSL_get_wbio(ssl_);
  char buffer[16 << 10];
  while (BIO_ctrl_pending(output) > 0) {
    const int n = BIO_read(output, buffer, sizeof(buffer));
    if (n <= 0) break;
    RETURN_IF_ERROR(RawWrite(std::string_view(buffer, static_cast<size_t>(n))));
  }
  return Status::OK();
}

Status Socket::ReadExact(char* out, size_t length) {
  if (ssl_ != nullptr) {
    while (length > 0) {
      const int n = SSL_read(ssl_, out, static_cast<int>(std::min<size_t>(length, 1 << 30)));
      if (n > 0) {
        out += n;
        length -= static_cast<size_t>(n);
        continue;
      }
      const int error = SSL_get_error(ssl_, n);
      if (error == SSL_ERROR_ZERO_RETURN) return Status::IOError("the client closed the connection");
      if (error != SSL_ERROR_WANT_READ) {
        return Status::IOError("reading from the client over TLS: " + TakeTlsErrors("connection broken"));
      }
      RETURN_IF_ERROR(SendTls());  // what OpenSSL has to say first (a key update)
      RETURN_IF_ERROR(ReceiveTls());
    }
    return Status::OK();
  }
  while (length > 0) {
    size_t n = 0;
    RETURN_IF_ERROR(ReadSome(fd_, out, length, &n));
    out += n;
    length -= n;
  }
  return Status::OK();
}

Status Socket::WriteAll(std::string_view bytes) {
  if (ssl_ == nullptr) return RawWrite(bytes);
  while (!bytes.empty()) {
    const int n = SSL_write(ssl_, bytes.data(), static_cast<int>(std::min<size_t>(bytes.size(), 1 << 30)));
    if (n <= 0)
      return Status::IOError("writing to the client over TLS: " + TakeTlsErrors("connection broken"));
    bytes.remove_prefix(static_cast<size_t>(n));
    RETURN_IF_ERROR(SendTls());
  }
  return Status::OK();
}

Status Socket::RawWrite(std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) continue;
      return Status::IOError(std::string("writing to the client: ") + std::strerror(errno));
    }
    bytes.remove_prefix(static_cast<size_t>(n));
  }
  return Status::OK();
}

void Socket::ShutdownReads() { ::shutdown(fd_, SHUT_RD); }

std::string PeerAddress(const Socket& socket) {
  sockaddr_storage address{};
  socklen_t length = sizeof(address);
  if (::getpeername(socket.fd(), reinterpret_cast<sockaddr*>(&address), &length) != 0) return "";
  char text[INET6_ADDRSTRLEN] = {};
  const void* ip = address.ss_family == AF_INET6
                       ? static_cast<const void*>(&reinterpret_cast<const sockaddr_in6*>(&address)->sin6_addr)
                       : static_cast<const void*>(&reinterpret_cast<const sockaddr_in*>(&address)->sin_addr);
  return ::inet_ntop(address.ss_family, ip, text, sizeof(text)) ? text : "";
}

Status MessageReader::Truncated() const {
  return Status::InvalidArgument("the client's " + std::string(what_) + " message ends too soon");
}

Result<int16_t> MessageReader::Int16() {
  if (remaining() < 2) return Truncated();
  uint16_t network = 0;
  std::memcpy(&network, body_.data() + position_, 2);
  position_ += 2;
  return static_cast<int16_t>(ntohs(network));
}

Result<int32_t> MessageReader::Int32() {
  if (remaining() < 4) return Truncated();
  const int32_t value = DecodeInt32(body_.data() + position_);
  position_ += 4;
  return value;
}

Result<std::string> MessageReader::String() {
  const size_t end = body_.find('\0', position_);
  if (end == std::string_view::npos) return Truncated();
  std::string value(body_.substr(position_, end - position_));
  position_ = end + 1;
  return value;
}

Result<std::string> MessageReader::Bytes(size_t length) {
  if (remaining() < length) return Truncated();
  std::string value(body_.substr(position_, length));
  position_ += length;
  return value;
}

Result<Message> ReadStartupPacket(Socket& socket) {
  char length[4];
  RETURN_IF_ERROR(socket.ReadExact(length, 4));
  Message message;
  ASSIGN_OR_RETURN(message.body, ReadBody(socket, DecodeInt32(length), "startup packet"));
  return message;
}

Result<Message> ReadMessage(Socket& socket) {
  char header[5];
  RETURN_IF_ERROR(socket.ReadExact(header, 5));
  Message message;
  message.type = header[0];
  ASSIGN_OR_RETURN(message.body,
                   ReadBody(socket, DecodeInt32(header + 1), std::string("message '") + header[0] + "'"));
  return message;
}

MessageBuilder& MessageBuilder::Int8(char value) {
  body_.push_back(value);
  return *this;
}

MessageBuilder& MessageBuilder::Int16(int16_t value) {
  const uint16_t network = htons(static_cast<uint16_t>(value));
  body_.append(reinterpret_cast<const char*>(&network), 2);
  return *this;
}

MessageBuilder& MessageBuilder::Int32(int32_t value) {
  const uint32_t network = htonl(static_cast<uint32_t>(value));
  body_.append(reinterpret_cast<const char*>(&network), 4);
  return *this;
}

MessageBuilder& MessageBuilder::String(std::string_view value) {
  body_.append(value);
  body_.push_back('\0');
  return *this;
}

MessageBuilder& MessageBuilder::Bytes(std::string_view value) {
  body_.append(value);
  return *this;
}

void MessageBuilder::AppendTo(std::string& out) const {
  out.push_back(type_);
  const uint32_t network = htonl(static_cast<uint32_t>(body_.size() + 4));
  out.append(reinterpret_cast<const char*>(&network), 4);
  out.append(body_);
}

}  // namespace basin::server::pg
