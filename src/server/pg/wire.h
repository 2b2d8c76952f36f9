// The PostgreSQL frontend/backend protocol, version 3, as bytes: reading a client's
// messages off a socket and building the server's (docs/server.md lists what Basin
// answers). Lengths from the network are checked against a bound before anything is
// allocated, so a client cannot make the server reserve more than kMaxMessageBytes.
//
// Thread safety: a MessageReader and a Socket belong to one connection's thread; Socket's
// Shutdown() may be called from any thread to end a blocked read.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "basin/status.h"

struct ssl_st;  // OpenSSL's SSL

namespace basin::server::pg {

// The largest message a client may send (a statement, a Bind's parameters).
inline constexpr uint32_t kMaxMessageBytes = 64u << 20;

// Codes a startup packet may carry in place of a protocol version.
inline constexpr int32_t kProtocolVersion3 = 196608;  // 3.0
inline constexpr int32_t kSslRequestCode = 80877103;
inline constexpr int32_t kGssEncRequestCode = 80877104;
inline constexpr int32_t kCancelRequestCode = 80877102;

class TlsContext;

// A connected socket: blocking reads and writes of whole buffers, in TLS after StartTls().
class Socket {
 public:
  explicit Socket(int fd) : fd_(fd) {}
  ~Socket();
  Socket(const Socket&) = delete;
  Socket& operator=(const Socket&) = delete;

  // IOError when the peer closed the connection or the read failed (Cancelled after
  // Shutdown()).
  Status ReadExact(char* out, size_t length);
  Status WriteAll(std::string_view bytes);
  // The TLS handshake, as the server, once the client was told 'S': what follows is
  // encrypted. IOError naming OpenSSL's reason when the handshake fails.
  Status StartTls(const TlsContext& tls);
  bool tls() const { return ssl_ != nullptr; }
  // Ends reads in progress and to come (they fail as if the client had left); writes still
  // reach the client. The descriptor stays open until destruction. Any thread.
  void ShutdownReads();
  int fd() const { return fd_; }

 private:
  // OpenSSL reads and writes memory buffers, which these move to and from the descriptor,
  // so that every write is a send() without SIGPIPE.
  Status ReceiveTls();  // some bytes from the client into OpenSSL's input
  Status SendTls();     // OpenSSL's output to the client
  Status RawWrite(std::string_view bytes);
  int fd_;
  ssl_st* ssl_ = nullptr;
};

// The IP address of the socket's peer ("127.0.0.1", "::1"); "" when the system cannot tell.
std::string PeerAddress(const Socket& socket);

// One message from the client: its type byte ('\0' for the untyped startup packet) and body.
struct Message {
  char type = 0;
  std::string body;
};

// Reads a message's fields in order. Each getter fails with InvalidArgument naming the
// message when the body ends too soon, so truncated or hostile input is refused, never read
// past.
class MessageReader {
 public:
  MessageReader(std::string_view body, std::string_view what) : body_(body), what_(what) {}

  Result<int16_t> Int16();
  Result<int32_t> Int32();
  // A NUL-terminated string.
  Result<std::string> String();
  Result<std::string> Bytes(size_t length);
  size_t remaining() const { return body_.size() - position_; }

 private:
  Status Truncated() const;
  std::string_view body_;
  std::string_view what_;
  size_t position_ = 0;
};

// Reads the startup packet (Int32 length, then the body).
Result<Message> ReadStartupPacket(Socket& socket);
// Reads a typed message (type byte, Int32 length, body).
Result<Message> ReadMessage(Socket& socket);

// Builds one server message: type byte and length are added by Finish().
class MessageBuilder {
 public:
  explicit MessageBuilder(char type) : type_(type) {}
  MessageBuilder& Int8(char value);
  MessageBuilder& Int16(int16_t value);
  MessageBuilder& Int32(int32_t value);
  MessageBuilder& String(std::string_view value);  // with its NUL
  MessageBuilder& Bytes(std::string_view value);
  // Appends the framed message to `out`.
  void AppendTo(std::string& out) const;

 private:
  char type_;
  std::string body_;
};

}  // namespace basin::server::pg
