// Random (version 4) UUIDs for file names, table ids and column mapping names.
//
// Thread safety: safe from any thread (each thread draws from its own generator, seeded
// from std::random_device, and reseeded in a forked child).
#pragma once

#include <string>

namespace basin {

// The canonical 36-character form: "1b4e28ba-2fa1-41d2-883f-0016d3cca427".
std::string NewUuid();
// The same 16 bytes, big-endian as the canonical form writes them.
std::string NewUuidBytes();
// Canonical form of 16 bytes. REQUIRES: bytes.size() == 16.
std::string FormatUuid(const std::string& bytes);

}  // namespace basin
