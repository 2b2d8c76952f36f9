#include "security/users.h"

#include <nlohmann/json.hpp>

#include "security/crypto.h"
#include "security/scram_verifier.h"

namespace basin::security {
namespace {

using json = nlohmann::json;

constexpr size_t kMaxNameLength = 63;

std::string UserKey(const std::string& name) { return "_basin_security/users/" + name + ".json"; }

Result<std::string> RandomPassword() {
  static constexpr std::string_view kAlphabet = "ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789";
  ASSIGN_OR_RETURN(std::string bytes, RandomBytes(24));
  std::string password;
  for (unsigned char b : bytes) password.push_back(kAlphabet[b % kAlphabet.size()]);
  return password;
}

}  // namespace

Status CheckPrincipalName(const std::string& name) {
  if (name.empty() || name.size() > kMaxNameLength) {
    return Status::InvalidArgument("a user or role name has 1 to 63 characters, got '" + name + "'");
  }
  for (char c : name) {
    const bool allowed =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
    if (!allowed) {
      return Status::InvalidArgument("a user or role name holds letters, digits and _ only, got '" + name +
                                     "'");
    }
  }
  return Status::OK();
}

Result<std::optional<User>> UserStore::Find(const std::string& name) const {
  if (!CheckPrincipalName(name).ok()) return std::optional<User>();
  const std::string key = UserKey(name);
  Result<std::string> text = store_->Get(key);
  if (!text.ok() && text.status().IsNotFound()) return std::optional<User>();
  if (!text.ok()) return text.status();
  json object = json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (!object.is_object() || !object.contains("name") || !object["name"].is_string() ||
      !object.contains("scramVerifier") || !object["scramVerifier"].is_string()) {
    return Status::Corruption(key + ": expected an object with \"name\" and \"scramVerifier\"");
  }
  User user;
  user.name = object["name"].get<std::string>();
  user.scram_verifier = object["scramVerifier"].get<std::string>();
  user.admin = object.value("admin", false);
  user.created_time_ms = object.value("createdTime", int64_t{0});
  return std::optional<User>(std::move(user));
}

Status UserStore::Create(const std::string& name, const std::string& password, bool admin) {
  RETURN_IF_ERROR(CheckPrincipalName(name));
  if (password.empty()) return Status::InvalidArgument("user " + name + " needs a password");
  ASSIGN_OR_RETURN(ScramVerifier verifier, MakeScramVerifier(password));
  json object = {{"name", name},
                 {"scramVerifier", FormatScramVerifier(verifier)},
                 {"admin", admin},
                 {"createdTime", clock_->NowMs()}};
  Status put = store_->PutIfAbsent(UserKey(name), object.dump());
  if (put.IsAlreadyExists()) return Status::AlreadyExists("user " + name + " exists");
  return put;
}

Status UserStore::Delete(const std::string& name) {
  ASSIGN_OR_RETURN(std::optional<User> user, Find(name));
  if (!user) return Status::NotFound("user " + name + " does not exist");
  return store_->Delete(UserKey(name));
}

Result<std::optional<std::string>> UserStore::EnsureAdmin(const std::string& password) {
  ASSIGN_OR_RETURN(std::optional<User> existing, Find("admin"));
  if (existing) return std::optional<std::string>();
  std::optional<std::string> generated;
  if (password.empty()) {
    ASSIGN_OR_RETURN(generated, RandomPassword());
  }
  Status created = Create("admin", password.empty() ? *generated : password, /*admin=*/true);
  // Another server created it meanwhile: theirs stands.
  if (created.IsAlreadyExists()) return std::optional<std::string>();
  RETURN_IF_ERROR(created);
  return generated;
}

}  // namespace basin::security
