#include "security/tokens.h"

#include <nlohmann/json.hpp>

#include "common/strings.h"
#include "security/crypto.h"

namespace basin::security {
namespace {

using json = nlohmann::json;

constexpr std::string_view kTokenPrefix = "basin_";
constexpr std::string_view kTokensFolder = "_basin_security/tokens/";
constexpr size_t kIdBytes = 8;       // 16 hex digits
constexpr size_t kSecretBytes = 32;  // 64 hex digits

std::string TokenKey(std::string_view id) { return std::string(kTokensFolder) + std::string(id) + ".json"; }

bool IsLowerHex(std::string_view text, size_t length) {
  if (text.size() != length) return false;
  for (char c : text) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

Status NotAuthenticated() { return Status::Unauthenticated("invalid, expired or revoked token"); }

// A token object, as docs/server.md gives it, with the hex SHA-256 of its secret.
struct StoredToken {
  Token token;
  std::string sha256_hex;
};

Result<StoredToken> ParseToken(const std::string& key, const std::string& text) {
  json object = json::parse(text, nullptr, /*allow_exceptions=*/false);
  const auto is = [&](const char* field, auto check) {
    return object.contains(field) && check(object[field]);
  };
  const auto string = [](const json& value) { return value.is_string(); };
  const auto integer = [](const json& value) { return value.is_number_integer(); };
  if (!object.is_object() || !is("id", string) || !is("user", string) || !is("sha256", string) ||
      !is("createdTime", integer) || !object.contains("expiresTime") ||
      !(object["expiresTime"].is_null() || object["expiresTime"].is_number_integer())) {
    return Status::Corruption(key +
                              ": expected an object with \"id\", \"user\", \"sha256\", \"createdTime\" "
                              "and \"expiresTime\"");
  }
  StoredToken stored;
  stored.token.id = object["id"].get<std::string>();
  stored.token.user = object["user"].get<std::string>();
  stored.token.created_time_ms = object["createdTime"].get<int64_t>();
  if (!object["expiresTime"].is_null()) stored.token.expires_time_ms = object["expiresTime"].get<int64_t>();
  stored.sha256_hex = object["sha256"].get<std::string>();
  return stored;
}

}  // namespace

Result<NewToken> TokenStore::Create(const std::string& user, std::optional<int64_t> lifetime_ms) {
  if (lifetime_ms && *lifetime_ms <= 0) {
    return Status::InvalidArgument("a token's lifetime must be positive, got " +
                                   std::to_string(*lifetime_ms) + " ms");
  }
  ASSIGN_OR_RETURN(std::string id_bytes, RandomBytes(kIdBytes));
  ASSIGN_OR_RETURN(std::string secret_bytes, RandomBytes(kSecretBytes));
  NewToken created;
  created.token.id = HexEncode(id_bytes);
  created.token.user = user;
  created.token.created_time_ms = clock_->NowMs();
  if (lifetime_ms) created.token.expires_time_ms = created.token.created_time_ms + *lifetime_ms;
  const std::string secret = HexEncode(secret_bytes);
  json object = {
      {"id", created.token.id},
      {"user", user},
      {"sha256", HexEncode(Sha256(secret))},
      {"createdTime", created.token.created_time_ms},
      {"expiresTime", created.token.expires_time_ms ? json(*created.token.expires_time_ms) : json()}};
  // 64 random bits: a collision is not expected, and put-if-absent refuses rather than replaces.
  RETURN_IF_ERROR(store_->PutIfAbsent(TokenKey(created.token.id), object.dump()));
  created.text = std::string(kTokenPrefix) + created.token.id + "_" + secret;
  return created;
}

Result<Token> TokenStore::Authenticate(std::string_view text) const {
  if (!text.starts_with(kTokenPrefix)) return NotAuthenticated();
  text.remove_prefix(kTokenPrefix.size());
  const size_t separator = text.find('_');
  if (separator == std::string_view::npos) return NotAuthenticated();
  const std::string_view id = text.substr(0, separator);
  const std::string_view secret = text.substr(separator + 1);
  if (!IsLowerHex(id, 2 * kIdBytes) || !IsLowerHex(secret, 2 * kSecretBytes)) return NotAuthenticated();
  const std::string key = TokenKey(id);
  Result<std::string> object = store_->Get(key);
  if (!object.ok()) return NotAuthenticated();
  Result<StoredToken> stored = ParseToken(key, *object);
  if (!stored.ok() || stored->token.id != id) return NotAuthenticated();
  const bool matches = ConstantTimeEquals(HexEncode(Sha256(secret)), stored->sha256_hex);
  const bool expired = stored->token.expires_time_ms && clock_->NowMs() >= *stored->token.expires_time_ms;
  if (!matches || expired) return NotAuthenticated();
  return stored->token;
}

Status TokenStore::Revoke(const std::string& id) {
  if (!IsLowerHex(id, 2 * kIdBytes)) return Status::NotFound("no token " + id);
  const std::string key = TokenKey(id);
  Result<ObjectInfo> head = store_->Head(key);
  if (!head.ok()) return head.status().IsNotFound() ? Status::NotFound("no token " + id) : head.status();
  return store_->Delete(key);
}

Result<std::vector<Token>> TokenStore::List(const std::optional<std::string>& user) const {
  ASSIGN_OR_RETURN(std::vector<ObjectInfo> objects, store_->List(std::string(kTokensFolder)));
  std::vector<Token> tokens;
  for (const ObjectInfo& info : objects) {
    if (!info.key.ends_with(".json")) continue;  // a local store's temporary files
    ASSIGN_OR_RETURN(std::string text, store_->Get(info.key));
    ASSIGN_OR_RETURN(StoredToken stored, ParseToken(info.key, text));
    if (!user || stored.token.user == *user) tokens.push_back(std::move(stored.token));
  }
  return tokens;  // sorted by key, which is by id
}

}  // namespace basin::security
