#include "server/http/url_names.h"

#include "common/strings.h"

namespace basin::server::http {
namespace {

constexpr size_t kMaxIdentifierLength = 128;

bool IsIdentifierCharacter(char c, bool first) {
  const bool letter = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
  return letter || (!first && c >= '0' && c <= '9');
}

}  // namespace

std::string TableName::Sql() const {
  return schema ? QuoteIdentifier(*schema) + "." + QuoteIdentifier(table) : QuoteIdentifier(table);
}

Status CheckIdentifier(std::string_view text, std::string_view what) {
  bool valid = !text.empty() && text.size() <= kMaxIdentifierLength;
  for (size_t i = 0; valid && i < text.size(); ++i) valid = IsIdentifierCharacter(text[i], i == 0);
  if (valid) return Status::OK();
  return Status::InvalidArgument(
      std::string(what) + " must be 1 to 128 letters, digits and _ (not starting with a digit), got '" +
      std::string(text.substr(0, kMaxIdentifierLength)) + "'");
}

Result<TableName> ParseTableName(std::string_view text) {
  TableName name;
  const size_t dot = text.find('.');
  if (dot != std::string_view::npos) {
    RETURN_IF_ERROR(CheckIdentifier(text.substr(0, dot), "a schema name"));
    name.schema = std::string(text.substr(0, dot));
    text.remove_prefix(dot + 1);
  }
  RETURN_IF_ERROR(CheckIdentifier(text, "a table name"));
  name.table = std::string(text);
  return name;
}

}  // namespace basin::server::http
