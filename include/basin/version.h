// Basin's version, and the version of the DuckDB library it runs queries on.
//
// Thread safety: a constant and a function without state; any thread may use them.
#pragma once

#include <string>

namespace basin {

// Keep it equal to project(VERSION) in the top-level CMakeLists.txt.
inline constexpr const char* kVersion = "0.1.0";

// The version of the DuckDB library Basin is linked with, as DuckDB reports it ("v1.4.4").
std::string DuckDbVersion();

}  // namespace basin
