#include "server/pg/scram.h"

#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/sha.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "security/crypto.h"
#include "testing/test_util.h"

namespace basin::server::pg {

using security::Base64Decode;
using security::Base64Encode;
using security::FormatScramVerifier;
using security::MakeScramVerifier;
using security::MakeScramVerifierWithSalt;
using security::ParseScramVerifier;

namespace {

constexpr int kTestIterations = 4096;

// Base64 through OpenSSL, so the client side does not share the server's codec.
std::string ClientBase64(const std::string& bytes) {
  std::string out(4 * ((bytes.size() + 2) / 3) + 1, '\0');
  int n =
      EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                      reinterpret_cast<const unsigned char*>(bytes.data()), static_cast<int>(bytes.size()));
  out.resize(static_cast<size_t>(n));
  return out;
}

std::string ClientUnbase64(const std::string& text) {
  std::string out(text.size() / 4 * 3 + 3, '\0');
  int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                          reinterpret_cast<const unsigned char*>(text.data()), static_cast<int>(text.size()));
  EXPECT_GE(n, 0) << text;
  out.resize(static_cast<size_t>(std::max(n, 0)));
  // EVP_DecodeBlock counts the bytes padding stands for; drop them.
  for (size_t i = text.size(); i > 0 && text[i - 1] == '='; --i) out.pop_back();
  return out;
}

std::string ClientHmac(const std::string& key, const std::string& data) {
  unsigned char out[SHA256_DIGEST_LENGTH];
  unsigned int len = 0;
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
       reinterpret_cast<const unsigned char*>(data.data()), data.size(), out, &len);
  return std::string(reinterpret_cast<char*>(out), len);
}

std::string ClientSha256(const std::string& data) {
  unsigned char out[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(data.data()), data.size(), out);
  return std::string(reinterpret_cast<char*>(out), sizeof(out));
}

// The client half, computed from the password as libpq does.
struct ScramClient {
  explicit ScramClient(std::string password_in) : password(std::move(password_in)) {}

  std::string password;
  std::string client_nonce = "fyko+d2lbbFgONRv9qkxdawL";
  std::string gs2_header = "n,,";
  std::string user;             // libpq sends it empty
  std::string first_extension;  // e.g. "z=1", sent after the client nonce
  std::string extension;        // e.g. "x=1", sent before p=

  std::string ClientFirstBare() const {
    return "n=" + user + ",r=" + client_nonce + (first_extension.empty() ? "" : "," + first_extension);
  }
  std::string ClientFirst() const { return gs2_header + ClientFirstBare(); }

  // Returns the client-final-message for `server_first` and sets the "v=..." the server must send.
  std::string ClientFinal(const std::string& server_first, std::string* expected_server_final) const {
    std::string nonce, salt;
    int iterations = 0;
    size_t start = 0;
    while (start <= server_first.size()) {
      size_t end = server_first.find(',', start);
      if (end == std::string::npos) end = server_first.size();
      std::string field = server_first.substr(start, end - start);
      if (field.rfind("r=", 0) == 0) nonce = field.substr(2);
      if (field.rfind("s=", 0) == 0) salt = ClientUnbase64(field.substr(2));
      if (field.rfind("i=", 0) == 0) iterations = std::stoi(field.substr(2));
      start = end + 1;
    }
    EXPECT_EQ(nonce.rfind(client_nonce, 0), 0u) << "server nonce must extend the client's";
    std::string salted(SHA256_DIGEST_LENGTH, '\0');
    PKCS5_PBKDF2_HMAC(password.data(), static_cast<int>(password.size()),
                      reinterpret_cast<const unsigned char*>(salt.data()), static_cast<int>(salt.size()),
                      iterations, EVP_sha256(), SHA256_DIGEST_LENGTH,
                      reinterpret_cast<unsigned char*>(salted.data()));
    std::string client_key = ClientHmac(salted, "Client Key");
    std::string stored_key = ClientSha256(client_key);
    std::string without_proof = "c=" + ClientBase64(gs2_header) + ",r=" + nonce;
    if (!extension.empty()) without_proof += "," + extension;
    std::string auth_message = ClientFirstBare() + "," + server_first + "," + without_proof;
    std::string signature = ClientHmac(stored_key, auth_message);
    std::string proof = client_key;
    for (size_t i = 0; i < proof.size(); ++i) proof[i] ^= signature[i];
    *expected_server_final = "v=" + ClientBase64(ClientHmac(ClientHmac(salted, "Server Key"), auth_message));
    return without_proof + ",p=" + ClientBase64(proof);
  }
};

ScramNonceSource FixedNonce(std::string nonce) {
  return [nonce]() -> Result<std::string> { return nonce; };
}

class ScramExchangeTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto verifier = MakeScramVerifier("correct horse", kTestIterations);
    ASSERT_TRUE(verifier.ok()) << verifier.status().ToString();
    verifier_ = new ScramVerifier(*verifier);
  }
  static void TearDownTestSuite() {
    delete verifier_;
    verifier_ = nullptr;
  }

  // An exchange that has answered `client`'s first message; returns the client-final-message.
  std::string Start(ScramExchange& exchange, const ScramClient& client, std::string* expected_final) {
    auto server_first = exchange.ServerFirst(client.ClientFirst());
    EXPECT_TRUE(server_first.ok()) << server_first.status().ToString();
    if (!server_first.ok()) return "";
    return client.ClientFinal(*server_first, expected_final);
  }

  static ScramVerifier* verifier_;
};

ScramVerifier* ScramExchangeTest::verifier_ = nullptr;

TEST(ScramKnownAnswerTest, Rfc7677Example) {
  ASSERT_OK_AND_ASSIGN(std::string salt, Base64Decode("W22ZaJ0SNY7soEsUEjb6gQ=="));
  ASSERT_OK_AND_ASSIGN(ScramVerifier verifier, MakeScramVerifierWithSalt("pencil", salt, 4096));
  ScramExchange exchange(verifier, FixedNonce("%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0"));

  ASSERT_OK_AND_ASSIGN(std::string server_first, exchange.ServerFirst("n,,n=user,r=rOprNGfwEbeRWgbNEkqO"));
  EXPECT_EQ(server_first,
            "r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096");

  const std::string client_final =
      "c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,"
      "p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=";
  ASSERT_OK_AND_ASSIGN(std::string server_final, exchange.ServerFinal(client_final));
  EXPECT_EQ(server_final, "v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=");

  // The test's client must agree with the RFC too, or the other tests prove nothing.
  ScramClient client("pencil");
  client.client_nonce = "rOprNGfwEbeRWgbNEkqO";
  client.user = "user";
  std::string expected_final;
  EXPECT_EQ(client.ClientFinal(server_first, &expected_final), client_final);
  EXPECT_EQ(expected_final, server_final);
}

TEST_F(ScramExchangeTest, RightPasswordSucceedsAndServerSignatureMatches) {
  ScramExchange exchange(*verifier_);  // random server nonce
  ScramClient client("correct horse");
  std::string expected_final;
  std::string client_final = Start(exchange, client, &expected_final);
  ASSERT_OK_AND_ASSIGN(std::string server_final, exchange.ServerFinal(client_final));
  EXPECT_EQ(server_final, expected_final);
}

TEST_F(ScramExchangeTest, VerifierSurvivesFormatAndParse) {
  ASSERT_OK_AND_ASSIGN(ScramVerifier parsed, ParseScramVerifier(FormatScramVerifier(*verifier_)));
  ScramExchange exchange(parsed, FixedNonce("server-nonce"));
  ScramClient client("correct horse");
  std::string expected_final;
  std::string client_final = Start(exchange, client, &expected_final);
  ASSERT_OK_AND_ASSIGN(std::string server_final, exchange.ServerFinal(client_final));
  EXPECT_EQ(server_final, expected_final);
}

TEST_F(ScramExchangeTest, DefaultServerNoncesDiffer) {
  ScramExchange a(*verifier_), b(*verifier_);
  ASSERT_OK_AND_ASSIGN(std::string first_a, a.ServerFirst("n,,n=,r=abc"));
  ASSERT_OK_AND_ASSIGN(std::string first_b, b.ServerFirst("n,,n=,r=abc"));
  EXPECT_NE(first_a, first_b);
  EXPECT_EQ(first_a.rfind("r=abc", 0), 0u);
}

TEST_F(ScramExchangeTest, WrongPasswordFails) {
  ScramExchange exchange(*verifier_, FixedNonce("server-nonce"));
  ScramClient client("correct horse ");
  std::string expected_final;
  std::string client_final = Start(exchange, client, &expected_final);
  EXPECT_ERROR_WITH(exchange.ServerFinal(client_final), kInvalidArgument, "password authentication failed");
}

TEST_F(ScramExchangeTest, OneProofPerExchange) {
  ScramExchange exchange(*verifier_, FixedNonce("server-nonce"));
  ScramClient wrong("wrong");
  ScramClient right("correct horse");
  std::string expected_final;
  auto server_first = exchange.ServerFirst(wrong.ClientFirst());
  ASSERT_OK(server_first);
  ASSERT_ERROR_CODE(exchange.ServerFinal(wrong.ClientFinal(*server_first, &expected_final)),
                    kInvalidArgument);
  ASSERT_ERROR_CODE(exchange.ServerFinal(right.ClientFinal(*server_first, &expected_final)), kInternal);
}

TEST_F(ScramExchangeTest, CallsOutOfOrderFail) {
  ScramExchange exchange(*verifier_, FixedNonce("server-nonce"));
  ASSERT_ERROR_CODE(exchange.ServerFinal("c=biws,r=x,p=AAAA"), kInternal);
  ASSERT_ERROR_CODE(exchange.ServerFirst("n,,n=,r=abc"), kInternal);

  ScramExchange twice(*verifier_, FixedNonce("server-nonce"));
  ASSERT_OK(twice.ServerFirst("n,,n=,r=abc"));
  ASSERT_ERROR_CODE(twice.ServerFirst("n,,n=,r=abc"), kInternal);
}

TEST_F(ScramExchangeTest, TamperedNonceFails) {
  ScramClient client("correct horse");
  std::string expected_final;
  for (const std::string& nonce :
       {std::string("fyko+d2lbbFgONRv9qkxdawLserver-noncX"),
        std::string("fyko+d2lbbFgONRv9qkxdawLserver-nonc"),
        std::string("fyko+d2lbbFgONRv9qkxdawLserver-nonceX"), std::string("fyko+d2lbbFgONRv9qkxdawL")}) {
    ScramExchange exchange(*verifier_, FixedNonce("server-nonce"));
    ASSERT_OK(exchange.ServerFirst(client.ClientFirst()));
    // A proof computed over the tampered nonce, so only the nonce check can refuse it.
    std::string tampered =
        client.ClientFinal("r=" + nonce + ",s=" + Base64Encode(verifier_->salt) + ",i=4096", &expected_final);
    EXPECT_ERROR_WITH(exchange.ServerFinal(tampered), kInvalidArgument, "nonce");
  }
}

TEST_F(ScramExchangeTest, WrongChannelBindingFails) {
  ScramClient client("correct horse");
  std::string expected_final;
  for (std::string binding : {"eSws", "cCws", "", "biws=", "bi*s", "bml4"}) {
    ScramExchange exchange(*verifier_, FixedNonce("server-nonce"));
    std::string client_final = Start(exchange, client, &expected_final);
    ASSERT_EQ(client_final.rfind("c=biws,", 0), 0u);
    std::string altered = "c=" + binding + client_final.substr(6);
    ::basin::Status st = ::basin::internal::ToStatus(exchange.ServerFinal(altered));
    EXPECT_EQ(st.code(), ErrorCode::kInvalidArgument) << binding << ": " << st.ToString();
    EXPECT_NE(st.message().find("c="), std::string::npos) << st.ToString();
  }
}

TEST_F(ScramExchangeTest, YFlagIsAcceptedAndMustBeRepeated) {
  ScramClient client("correct horse");
  client.gs2_header = "y,,";
  std::string expected_final;
  ScramExchange exchange(*verifier_, FixedNonce("server-nonce"));
  std::string client_final = Start(exchange, client, &expected_final);
  ASSERT_EQ(client_final.rfind("c=eSws,", 0), 0u);
  ASSERT_OK_AND_ASSIGN(std::string server_final, exchange.ServerFinal(client_final));
  EXPECT_EQ(server_final, expected_final);

  ScramExchange mismatched(*verifier_, FixedNonce("server-nonce"));
  client_final = Start(mismatched, client, &expected_final);
  ASSERT_ERROR_CODE(mismatched.ServerFinal("c=biws" + client_final.substr(6)), kInvalidArgument);
}

TEST_F(ScramExchangeTest, ExtensionsBeforeProofAreTolerated) {
  ScramClient client("correct horse");
  client.user = "alice";
  client.first_extension = "z=first-extension";
  client.extension = "x=something";
  std::string expected_final;
  ScramExchange exchange(*verifier_, FixedNonce("server-nonce"));
  std::string client_final = Start(exchange, client, &expected_final);
  ASSERT_NE(client_final.find(",x=something,p="), std::string::npos);
  ASSERT_OK_AND_ASSIGN(std::string server_final, exchange.ServerFinal(client_final));
  EXPECT_EQ(server_final, expected_final);
}

TEST_F(ScramExchangeTest, MissingOrMisplacedProofFails) {
  ScramClient client("correct horse");
  std::string expected_final;
  std::string nonce_part = ",r=" + client.client_nonce + "server-nonce";
  for (const std::string& message :
       {"c=biws" + nonce_part, "c=biws" + nonce_part + ",x=1", "c=biws" + nonce_part + ",p=",
        "c=biws" + nonce_part + ",p=AAAA", "c=biws" + nonce_part + ",p=not base64!",
        "c=biws" + nonce_part + ",p=" + std::string(44, 'A') + ",x=1",
        "c=biws" + nonce_part + ",p=" + std::string(44, 'A') + ",p=" + std::string(44, 'A'),
        "p=" + std::string(44, 'A') + ",c=biws" + nonce_part}) {
    ScramExchange exchange(*verifier_, FixedNonce("server-nonce"));
    ASSERT_OK(exchange.ServerFirst(client.ClientFirst()));
    ::basin::Status st = ::basin::internal::ToStatus(exchange.ServerFinal(message));
    EXPECT_EQ(st.code(), ErrorCode::kInvalidArgument) << message << ": " << st.ToString();
    EXPECT_EQ(st.message().find("password authentication failed"), std::string::npos) << message;
  }
}

TEST_F(ScramExchangeTest, RefusesChannelBindingAuthzidAndMandatoryExtensions) {
  for (std::string message :
       {"p=tls-server-end-point,,n=,r=abc", "n,a=admin,n=,r=abc", "n,,m=ext,n=,r=abc", "y,a=,n=,r=abc"}) {
    ScramExchange exchange(*verifier_, FixedNonce("server-nonce"));
    ::basin::Status st = ::basin::internal::ToStatus(exchange.ServerFirst(message));
    EXPECT_EQ(st.code(), ErrorCode::kInvalidArgument) << message << ": " << st.ToString();
  }
}

TEST_F(ScramExchangeTest, MalformedClientFirstFails) {
  for (const std::string& message :
       {std::string(""), std::string("n"), std::string("n,"), std::string("n,,"), std::string("x,,n=,r=abc"),
        std::string("n,x,n=,r=abc"), std::string("n,,r=abc"), std::string("n,,n="), std::string("n,,n=,r="),
        std::string("n,,n=,r=a b"), std::string("n,,n=,r=abc,"), std::string("n,,n=,r=abc,=x"),
        std::string("n,,n=,r=abc,1=x"), std::string("n,,n=,x=1,r=abc"), std::string("n,,n=,r=ab\x7f"),
        std::string("n,,n=,r=ab\0c", 11), std::string("p"), std::string("pp,,n=,r=abc")}) {
    ScramExchange exchange(*verifier_, FixedNonce("server-nonce"));
    ::basin::Status st = ::basin::internal::ToStatus(exchange.ServerFirst(message));
    EXPECT_EQ(st.code(), ErrorCode::kInvalidArgument) << message << ": " << st.ToString();
  }
}

TEST_F(ScramExchangeTest, EveryTruncationFailsCleanly) {
  ScramClient client("correct horse");
  client.user = "bob";
  std::string first = client.ClientFirst();
  for (size_t n = 0; n < first.size(); ++n) {
    ScramExchange exchange(*verifier_, FixedNonce("server-nonce"));
    auto result = exchange.ServerFirst(first.substr(0, n));
    // A shorter client nonce is still a valid message; anything else must be refused.
    if (result.ok()) {
      EXPECT_GT(n, first.find(",r=") + 3) << first.substr(0, n);
    } else {
      EXPECT_EQ(result.status().code(), ErrorCode::kInvalidArgument) << first.substr(0, n);
    }
  }
  std::string expected_final;
  std::string final_message;
  {
    ScramExchange exchange(*verifier_, FixedNonce("server-nonce"));
    final_message = Start(exchange, client, &expected_final);
  }
  for (size_t n = 0; n < final_message.size(); ++n) {
    ScramExchange exchange(*verifier_, FixedNonce("server-nonce"));
    ASSERT_OK(exchange.ServerFirst(first));
    ASSERT_ERROR_CODE(exchange.ServerFinal(final_message.substr(0, n)), kInvalidArgument);
  }
}

TEST_F(ScramExchangeTest, RandomGarbageFailsCleanly) {
  std::mt19937 rng(20240615);
  const std::string alphabet = "nypcra=,+/biwsAZ09 \x01\xff";
  for (int round = 0; round < 2000; ++round) {
    std::string garbage(rng() % 40, '\0');
    for (char& c : garbage)
      c = (round % 2 == 0) ? alphabet[rng() % alphabet.size()] : static_cast<char>(rng());
    ScramExchange exchange(*verifier_, FixedNonce("server-nonce"));
    auto first = exchange.ServerFirst(garbage);
    if (!first.ok()) {
      EXPECT_EQ(first.status().code(), ErrorCode::kInvalidArgument);
      continue;
    }
    ASSERT_ERROR_CODE(exchange.ServerFinal(garbage), kInvalidArgument);
  }
  for (int round = 0; round < 2000; ++round) {
    std::string garbage = "c=biws,r=abcserver-nonce,";
    garbage.resize(garbage.size() + rng() % 60);
    for (size_t i = 7 + rng() % 20; i < garbage.size(); ++i) garbage[i] = alphabet[rng() % alphabet.size()];
    ScramExchange exchange(*verifier_, FixedNonce("server-nonce"));
    ASSERT_OK(exchange.ServerFirst("n,,n=,r=abc"));
    ASSERT_ERROR_CODE(exchange.ServerFinal(garbage), kInvalidArgument);
  }
}

TEST_F(ScramExchangeTest, BadServerNonceSourceIsInternal) {
  ScramExchange comma(*verifier_, FixedNonce("a,b"));
  ASSERT_ERROR_CODE(comma.ServerFirst("n,,n=,r=abc"), kInternal);
  ScramExchange failing(*verifier_, []() -> Result<std::string> { return Status::Internal("no entropy"); });
  ASSERT_ERROR_CODE(failing.ServerFirst("n,,n=,r=abc"), kInternal);
  ScramExchange none(*verifier_, nullptr);
  ASSERT_ERROR_CODE(none.ServerFirst("n,,n=,r=abc"), kInternal);
}

TEST(ScramVerifierTest, FormatParseRoundTrip) {
  ASSERT_OK_AND_ASSIGN(ScramVerifier verifier, MakeScramVerifier("secret", 4096));
  EXPECT_EQ(verifier.iterations, 4096);
  EXPECT_EQ(verifier.salt.size(), 16u);
  EXPECT_EQ(verifier.stored_key.size(), 32u);
  EXPECT_EQ(verifier.server_key.size(), 32u);
  std::string text = FormatScramVerifier(verifier);
  EXPECT_EQ(text.rfind("SCRAM-SHA-256$4096:", 0), 0u) << text;
  ASSERT_OK_AND_ASSIGN(ScramVerifier parsed, ParseScramVerifier(text));
  EXPECT_EQ(parsed.iterations, verifier.iterations);
  EXPECT_EQ(parsed.salt, verifier.salt);
  EXPECT_EQ(parsed.stored_key, verifier.stored_key);
  EXPECT_EQ(parsed.server_key, verifier.server_key);
  EXPECT_EQ(FormatScramVerifier(parsed), text);

  ASSERT_OK_AND_ASSIGN(ScramVerifier other, MakeScramVerifier("secret", 4096));
  EXPECT_NE(other.salt, verifier.salt) << "salts must be random";
}

TEST(ScramVerifierTest, KnownVerifierText) {
  // RFC 7677's salt and password; the keys follow from the RFC's proof and signature.
  ASSERT_OK_AND_ASSIGN(std::string salt, Base64Decode("W22ZaJ0SNY7soEsUEjb6gQ=="));
  ASSERT_OK_AND_ASSIGN(ScramVerifier verifier, MakeScramVerifierWithSalt("pencil", salt, 4096));
  ASSERT_OK_AND_ASSIGN(ScramVerifier parsed, ParseScramVerifier(FormatScramVerifier(verifier)));
  ScramExchange exchange(parsed, FixedNonce("%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0"));
  ASSERT_OK(exchange.ServerFirst("n,,n=user,r=rOprNGfwEbeRWgbNEkqO"));
  ASSERT_OK_AND_ASSIGN(std::string server_final,
                       exchange.ServerFinal("c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,"
                                            "p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ="));
  EXPECT_EQ(server_final, "v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=");
}

TEST(ScramVerifierTest, MakeRefusesBadArguments) {
  ASSERT_ERROR_CODE(MakeScramVerifier("x", 0), kInvalidArgument);
  ASSERT_ERROR_CODE(MakeScramVerifier("x", -5), kInvalidArgument);
  ASSERT_ERROR_CODE(MakeScramVerifierWithSalt("x", "", 4096), kInvalidArgument);
}

TEST(ScramVerifierTest, ParseRefusesMalformedVerifiers) {
  const std::string key = std::string(43, 'A') + "=";  // 32 zero bytes
  const std::string good = "SCRAM-SHA-256$4096:c2FsdA==$" + key + ":" + key;
  ASSERT_OK(ParseScramVerifier(good));
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"", "SCRAM-SHA-256$"},
      {"md5abcdef", "SCRAM-SHA-256$"},
      {"scram-sha-256$4096:c2FsdA==$" + key + ":" + key, "SCRAM-SHA-256$"},
      {"SCRAM-SHA-256$", "expected"},
      {"SCRAM-SHA-256$4096:c2FsdA==" + key + ":" + key, "expected"},
      {"SCRAM-SHA-256$4096:c2FsdA==$" + key + ":" + key + "$x", "expected"},
      {"SCRAM-SHA-256$4096c2FsdA==$" + key + ":" + key, "<iterations>:<salt>"},
      {"SCRAM-SHA-256$4096:c2Fs:dA==$" + key + ":" + key, "<iterations>:<salt>"},
      {"SCRAM-SHA-256$4096:c2FsdA==$" + key + key, "<StoredKey>:<ServerKey>"},
      {"SCRAM-SHA-256$4096:c2FsdA==$" + key + ":" + key + ":", "<StoredKey>:<ServerKey>"},
      {"SCRAM-SHA-256$0:c2FsdA==$" + key + ":" + key, "iteration"},
      {"SCRAM-SHA-256$-1:c2FsdA==$" + key + ":" + key, "iteration"},
      {"SCRAM-SHA-256$+1:c2FsdA==$" + key + ":" + key, "iteration"},
      {"SCRAM-SHA-256$:c2FsdA==$" + key + ":" + key, "iteration"},
      {"SCRAM-SHA-256$12x:c2FsdA==$" + key + ":" + key, "iteration"},
      {"SCRAM-SHA-256$99999999999999999999:c2FsdA==$" + key + ":" + key, "iteration"},
      {"SCRAM-SHA-256$4096:$" + key + ":" + key, "salt"},
      {"SCRAM-SHA-256$4096:c2FsdA=$" + key + ":" + key, "salt"},
      {"SCRAM-SHA-256$4096:c2F*dA==$" + key + ":" + key, "salt"},
      {"SCRAM-SHA-256$4096:c2FsdA==$" + key.substr(4) + ":" + key, "StoredKey"},
      {"SCRAM-SHA-256$4096:c2FsdA==$" + key + ":" + key + "AAAA", "ServerKey"},
      {"SCRAM-SHA-256$4096:c2FsdA==$" + key + ":", "ServerKey"},
  };
  for (const auto& [text, what] : cases) {
    SCOPED_TRACE(text);
    EXPECT_ERROR_WITH(ParseScramVerifier(text), kInvalidArgument, what);
  }
  for (size_t n = 0; n < good.size(); ++n) {
    ASSERT_ERROR_CODE(ParseScramVerifier(good.substr(0, n)), kInvalidArgument);
  }
  std::mt19937 rng(7);
  for (int round = 0; round < 2000; ++round) {
    std::string mutated = good;
    mutated[rng() % mutated.size()] = static_cast<char>(rng());
    auto parsed = ParseScramVerifier(mutated);
    if (!parsed.ok()) {
      EXPECT_EQ(parsed.status().code(), ErrorCode::kInvalidArgument);
    }
  }
}

TEST(ScramBase64Test, RoundTripsAndMatchesOpenSsl) {
  std::string bytes;
  for (int n = 0; n < 70; ++n) {
    std::string encoded = Base64Encode(bytes);
    EXPECT_EQ(encoded, ClientBase64(bytes));
    ASSERT_OK_AND_ASSIGN(std::string decoded, Base64Decode(encoded));
    EXPECT_EQ(decoded, bytes);
    bytes += static_cast<char>(n * 37 + 200);
  }
  EXPECT_EQ(Base64Encode("n,,"), "biws");
}

TEST(ScramBase64Test, DecodeRefusesMalformedText) {
  for (std::string text : {"A", "AA", "AAA", "AAAAA", "A===", "=AAA", "AA=A", "AA==AAAA", "AA*A", "AA A",
                           "AAA\n", "====", "AAA=AAA="}) {
    EXPECT_EQ(Base64Decode(text).status().code(), ErrorCode::kInvalidArgument) << text;
  }
  ASSERT_ERROR_CODE(Base64Decode(std::string("AA\0A", 4)), kInvalidArgument);
}

}  // namespace
}  // namespace basin::server::pg
