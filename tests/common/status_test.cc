#include "basin/status.h"

#include "testing/test_util.h"

namespace basin {
namespace {

Result<int> Half(int x) {
  if (x % 2 != 0) return Status::InvalidArgument("odd: " + std::to_string(x));
  return x / 2;
}

Result<int> Quarter(int x) {
  ASSIGN_OR_RETURN(int half, Half(x));
  ASSIGN_OR_RETURN(int quarter, Half(half));
  return quarter;
}

Status CheckEven(int x) {
  RETURN_IF_ERROR_CTX(Half(x), "checking " + std::to_string(x));
  return Status::OK();
}

TEST(StatusTest, PropagatesErrorsWithContext) {
  ASSERT_OK_AND_ASSIGN(int q, Quarter(8));
  EXPECT_EQ(q, 2);
  ASSERT_ERROR_CODE(Quarter(6), kInvalidArgument);
  Status st = CheckEven(3);
  EXPECT_EQ(st.code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(st.message(), "checking 3: odd: 3");
}

TEST(StatusTest, RetryableFlagSurvivesContext) {
  Status st = Status::IOError("disk", /*retryable=*/true).WithContext("put x");
  EXPECT_TRUE(st.retryable());
  EXPECT_FALSE(Status::Corruption("bad").retryable());
}

TEST(StatusTest, EveryCodeHasSqlstateAndHttpStatus) {
  for (int i = 0; i <= static_cast<int>(ErrorCode::kInternal); i++) {
    const ErrorCodeInfo& info = GetErrorCodeInfo(static_cast<ErrorCode>(i));
    EXPECT_EQ(static_cast<int>(info.code), i);
    EXPECT_EQ(info.sqlstate.size(), 5u) << info.name;
    EXPECT_GE(info.http_status, 200) << info.name;
  }
  EXPECT_EQ(GetErrorCodeInfo(ErrorCode::kConflict).sqlstate, "40001");
}

}  // namespace
}  // namespace basin
