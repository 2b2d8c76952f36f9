#include "basin/version.h"

#include <duckdb.h>

namespace basin {

std::string DuckDbVersion() { return duckdb_library_version(); }

}  // namespace basin
