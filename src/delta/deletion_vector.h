// Deletion vectors (PROTOCOL.md "Deletion Vectors"): which rows of a data file are deleted.
//
// Decodes the three storage types ('u' relative with random prefix, 'i' inline Z85,
// 'p' absolute path), checks the DV file's size and CRC-32, and deserializes the 64-bit
// "portable" RoaringBitmapArray format with libroaring.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"
#include "delta/actions.h"
#include "storage/object_store.h"

namespace basin::delta {

// Z85 (ZeroMQ RFC 32) decoding; InvalidArgument on bad length or characters.
Result<std::string> Z85Decode(std::string_view text);
std::string Z85Encode(std::string_view bytes);  // REQUIRES: bytes.size() % 4 == 0

// The object key (relative to the table root) of a 'u' or 'p' DV file.
Result<std::string> DeletionVectorKey(const DeletionVectorDescriptor& dv);

// Deserializes the serialized bitmap (magic number + portable 64-bit Roaring) into sorted
// row positions. Corruption on malformed bytes; never crashes on any input.
Result<std::vector<uint64_t>> DecodeRoaringBitmapArray(std::string_view bytes);

// Loads the deleted row positions (sorted ascending) for `dv`, reading from `store` for
// on-disk DVs. Checks size, CRC-32 and that the count equals dv.cardinality. Errors name
// the DV file (or "inline DV") and `context` (e.g. the data file and version).
Result<std::vector<uint64_t>> LoadDeletionVector(ObjectStore& store, const DeletionVectorDescriptor& dv,
                                                 const std::string& context);

}  // namespace basin::delta
