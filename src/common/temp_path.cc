#include "common/temp_path.h"

#include <filesystem>

#include "common/uuid.h"

namespace basin {

namespace fs = std::filesystem;

TempPath::TempPath(std::string_view prefix, std::string_view suffix) {
  std::error_code ec;
  fs::path folder = fs::temp_directory_path(ec);
  if (ec) folder = "/tmp";
  path_ = (folder / (std::string(prefix) + NewUuid() + std::string(suffix))).string();
}

TempPath::~TempPath() {
  std::error_code ignored;
  fs::remove_all(path_, ignored);
}

}  // namespace basin
