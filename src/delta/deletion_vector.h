// Deletion vectors (PROTOCOL.md "Deletion Vectors"): which rows of a data file are deleted.
//
// Decodes the three storage types ('u' relative with random prefix, 'i' inline Z85,
// 'p' absolute path), checks the DV file's size and CRC-32, and deserializes the 64-bit
// "portable" RoaringBitmapArray format with libroaring. Also encodes them, for writers.
//
// Formats, as the protocol's appendix "Deletion Vector Format" gives them:
//   serialized bitmap = magic 1681511377 (4 bytes LE), bucket count (8 bytes LE), then per
//                       bucket its key, the high 32 bits of its positions (4 bytes LE), and
//                       a portable 32-bit Roaring bitmap of the low 32 bits.
//   DV file           = format version byte 1, then per DV: its size (4 bytes BE), the
//                       serialized bitmap, and the bitmap's CRC-32 (4 bytes BE). A
//                       descriptor's `offset` points at the size field.
//   inline DV ('i')   = Z85 of the serialized bitmap, zero-padded to a multiple of 4 bytes
//                       (or with the z85 crate's padded tail; see Z85Decode).
//
// Thread safety: stateless functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "basin/object_store.h"
#include "basin/status.h"
#include "delta/actions.h"

namespace basin::delta {

// Z85 (ZeroMQ RFC 32) decoding; InvalidArgument on bad length or characters. Also reads
// the padded tail of the z85 Rust crate, which delta-kernel-rs writes for inline DVs: a
// final group led by k '#' (never valid in RFC 32) holds only 4-k bytes.
Result<std::string> Z85Decode(std::string_view text);
std::string Z85Encode(std::string_view bytes);  // REQUIRES: bytes.size() % 4 == 0

// The object key (relative to the table root) of a 'u' DV file:
// "<random prefix>/deletion_vector_<uuid>.bin", or without the folder when there is no
// prefix. For a 'p' DV, the absolute path its URI names, decoded as DecodeDataPath() does
// ("file:/t/dv.bin" -> "/t/dv.bin"; other schemes keep theirs); LoadDeletionVector()
// resolves it against the table's store. Corruption for a malformed 'u' path,
// InvalidArgument for an inline ('i') DV, which has no file.
Result<std::string> DeletionVectorKey(const DeletionVectorDescriptor& dv);

// Deserializes the serialized bitmap (magic number + portable 64-bit Roaring) into sorted
// row positions. Corruption on malformed bytes; never crashes on any input.
Result<std::vector<uint64_t>> DecodeRoaringBitmapArray(std::string_view bytes);

// As above, but Corruption (before allocating them) when the bitmap holds more than
// `max_cardinality` positions: a few bytes of run containers can describe billions of
// rows. The one-argument form allows kMaxDeletionVectorCardinality.
inline constexpr uint64_t kMaxDeletionVectorCardinality = uint64_t{1} << 31;
Result<std::vector<uint64_t>> DecodeRoaringBitmapArray(std::string_view bytes, uint64_t max_cardinality);

// Loads the deleted row positions (sorted ascending) for `dv`, reading from `store` for
// on-disk DVs. Checks size, CRC-32 and that the count equals dv.cardinality. Errors name
// the DV file (or "inline DV") and `context` (e.g. the data file and version).
//
// REQUIRES: `store` is rooted at the table folder. 'u' DVs and relative 'p' paths are read
// through `store`; an absolute 'p' path (file: URI or "/...") names a file of the local file
// system and is read from there. Other URIs (s3:, ...) are NotImplemented.
Result<std::vector<uint64_t>> LoadDeletionVector(ObjectStore& store, const DeletionVectorDescriptor& dv,
                                                 const std::string& context);

// Encoders, for writers.

// The serialized bitmap of `positions` (any order; duplicates collapse), run-optimized.
// REQUIRES: every position < 2^63 (the protocol keeps bucket keys non-negative).
std::string SerializeRoaringBitmapArray(const std::vector<uint64_t>& positions);

// A DV file holding one DV: its descriptor has offset 1 and sizeInBytes
// serialized_bitmap.size().
std::string EncodeDeletionVectorFile(std::string_view serialized_bitmap);

// pathOrInlineDv of a 'u' DV: `random_prefix` (a folder name, possibly empty) followed by
// the Z85 of the UUID's 16 bytes (big-endian, as written canonically).
// REQUIRES: uuid_bytes.size() == 16
std::string EncodeDeletionVectorPath(std::string_view random_prefix, std::string_view uuid_bytes);

// pathOrInlineDv of an inline ('i') DV; its sizeInBytes is serialized_bitmap.size().
std::string EncodeInlineDeletionVector(std::string_view serialized_bitmap);

}  // namespace basin::delta
