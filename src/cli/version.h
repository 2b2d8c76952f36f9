// The version `basin --version` reports. Keep it equal to project(VERSION) in the top-level
// CMakeLists.txt.
#pragma once

namespace basin::cli {

inline constexpr const char* kBasinVersion = "0.1.0";

}  // namespace basin::cli
