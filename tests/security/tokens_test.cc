// security::TokenStore: tokens made, authenticated, expired and revoked, over a memory store
// with a manual clock.
#include "security/tokens.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "common/strings.h"
#include "security/crypto.h"
#include "testing/test_util.h"

namespace basin::security {
namespace {

constexpr int64_t kStart = 1'700'000'000'000;

class TokenStoreTest : public ::testing::Test {
 protected:
  std::shared_ptr<ManualClock> clock_ = std::make_shared<ManualClock>(kStart);
  std::shared_ptr<ObjectStore> store_ = NewMemoryObjectStore(clock_);
  TokenStore tokens_{store_, clock_};

  void ExpectRefused(std::string_view text) {
    Result<Token> token = tokens_.Authenticate(text);
    ASSERT_FALSE(token.ok()) << text;
    EXPECT_EQ(token.status().code(), ErrorCode::kUnauthenticated) << text;
  }
};

TEST_F(TokenStoreTest, CreatedTokenAuthenticatesAsItsUser) {
  ASSERT_OK_AND_ASSIGN(NewToken created, tokens_.Create("alice", std::nullopt));
  EXPECT_EQ(created.text.substr(0, 6), "basin_");
  EXPECT_EQ(created.token.id.size(), 16u);
  ASSERT_OK_AND_ASSIGN(Token token, tokens_.Authenticate(created.text));
  EXPECT_EQ(token.id, created.token.id);
  EXPECT_EQ(token.user, "alice");
  EXPECT_EQ(token.created_time_ms, kStart);
  EXPECT_FALSE(token.expires_time_ms.has_value());
}

TEST_F(TokenStoreTest, StoresOnlyTheSecretsHash) {
  ASSERT_OK_AND_ASSIGN(NewToken created, tokens_.Create("alice", 60'000));
  ASSERT_OK_AND_ASSIGN(std::string text, store_->Get("_basin_security/tokens/" + created.token.id + ".json"));
  auto object = nlohmann::json::parse(text);
  const std::string secret = created.text.substr(created.text.rfind('_') + 1);
  EXPECT_EQ(object["sha256"], HexEncode(Sha256(secret)));
  EXPECT_EQ(object["user"], "alice");
  EXPECT_EQ(object["createdTime"], kStart);
  EXPECT_EQ(object["expiresTime"], kStart + 60'000);
  EXPECT_EQ(text.find(secret), std::string::npos);
}

TEST_F(TokenStoreTest, ExpiredTokenIsRefused) {
  ASSERT_OK_AND_ASSIGN(NewToken created, tokens_.Create("alice", 1000));
  clock_->AdvanceMs(999);
  ASSERT_OK(tokens_.Authenticate(created.text).status());
  clock_->AdvanceMs(1);
  ExpectRefused(created.text);
}

TEST_F(TokenStoreTest, RevokedTokenIsRefused) {
  ASSERT_OK_AND_ASSIGN(NewToken created, tokens_.Create("alice", std::nullopt));
  ASSERT_OK(tokens_.Revoke(created.token.id));
  ExpectRefused(created.text);
  EXPECT_EQ(tokens_.Revoke(created.token.id).code(), ErrorCode::kNotFound);
}

TEST_F(TokenStoreTest, MalformedTextsAreRefused) {
  ASSERT_OK_AND_ASSIGN(NewToken created, tokens_.Create("alice", std::nullopt));
  for (const std::string& text : {std::string(), std::string("basin_"), std::string("Bearer ") + created.text,
                                  created.text.substr(6), created.text + "0", created.text.substr(0, 30),
                                  "basin_" + created.token.id + "_" + std::string(64, 'G'),
                                  "basin_../../users/admin_" + std::string(64, 'a')}) {
    ExpectRefused(text);
  }
}

TEST_F(TokenStoreTest, WrongSecretAndUnknownIdAreRefused) {
  ASSERT_OK_AND_ASSIGN(NewToken created, tokens_.Create("alice", std::nullopt));
  std::string wrong = created.text;
  wrong.back() = wrong.back() == '0' ? '1' : '0';
  ExpectRefused(wrong);
  ExpectRefused("basin_0123456789abcdef_" + created.text.substr(created.text.rfind('_') + 1));
}

TEST_F(TokenStoreTest, AnotherTokensIdWithThisSecretIsRefused) {
  ASSERT_OK_AND_ASSIGN(NewToken alice, tokens_.Create("alice", std::nullopt));
  ASSERT_OK_AND_ASSIGN(NewToken admin, tokens_.Create("admin", std::nullopt));
  const std::string alice_secret = alice.text.substr(alice.text.rfind('_') + 1);
  ExpectRefused("basin_" + admin.token.id + "_" + alice_secret);
}

TEST_F(TokenStoreTest, CorruptObjectIsRefused) {
  ASSERT_OK_AND_ASSIGN(NewToken created, tokens_.Create("alice", std::nullopt));
  ASSERT_OK(store_->Put("_basin_security/tokens/" + created.token.id + ".json", "{\"id\": 1}"));
  ExpectRefused(created.text);
}

TEST_F(TokenStoreTest, ListsTokensByUser) {
  ASSERT_OK_AND_ASSIGN(NewToken a1, tokens_.Create("alice", std::nullopt));
  ASSERT_OK_AND_ASSIGN(NewToken b1, tokens_.Create("bob", 10));
  ASSERT_OK_AND_ASSIGN(NewToken a2, tokens_.Create("alice", 10));
  ASSERT_OK_AND_ASSIGN(std::vector<Token> all, tokens_.List(std::nullopt));
  EXPECT_EQ(all.size(), 3u);
  for (size_t i = 1; i < all.size(); ++i) EXPECT_LT(all[i - 1].id, all[i].id);
  ASSERT_OK_AND_ASSIGN(std::vector<Token> alice, tokens_.List("alice"));
  ASSERT_EQ(alice.size(), 2u);
  for (const Token& token : alice) EXPECT_EQ(token.user, "alice");
}

TEST_F(TokenStoreTest, LifetimeMustBePositive) {
  EXPECT_EQ(tokens_.Create("alice", 0).status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(tokens_.Create("alice", -5).status().code(), ErrorCode::kInvalidArgument);
}

}  // namespace
}  // namespace basin::security
