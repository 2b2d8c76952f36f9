// Feeds arbitrary bytes to the deletion-vector decoders: the bitmap alone, a whole DV file
// (version byte, size, bitmap, CRC) read through a memory store, the same bitmap wrapped in
// a valid file so that fuzzing gets past the CRC, and the inline Z85 form. Any outcome but
// a crash, a leak or a sanitizer report is fine.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "basin/object_store.h"
#include "delta/deletion_vector.h"

namespace {

using basin::delta::DeletionVectorDescriptor;

// Big enough for interesting bitmaps, small enough to stay inside libFuzzer's memory limit.
constexpr uint64_t kMaxFuzzCardinality = uint64_t{1} << 20;

void LoadFromFile(const std::string& file, int32_t offset, int32_t size_in_bytes, int64_t cardinality) {
  auto store = basin::NewMemoryObjectStore();
  DeletionVectorDescriptor dv;
  dv.storage_type = 'u';
  dv.path_or_inline_dv = basin::delta::EncodeDeletionVectorPath("ab", std::string(16, '\x11'));
  dv.offset = offset;
  dv.size_in_bytes = size_in_bytes;
  dv.cardinality = cardinality;
  auto key = basin::delta::DeletionVectorKey(dv);
  if (!key.ok() || !store->Put(*key, file).ok()) __builtin_trap();
  (void)basin::delta::LoadDeletionVector(*store, dv, "fuzz");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  (void)basin::delta::DecodeRoaringBitmapArray(bytes, kMaxFuzzCardinality);
  if (size < 3) return 0;

  // The first two bytes choose the descriptor's cardinality (bounding what a decode may
  // allocate, as the log's cardinality does); the rest is the payload.
  int64_t cardinality = data[0] | data[1] << 8;
  std::string payload(bytes.substr(2));
  auto payload_size = static_cast<int32_t>(payload.size());

  // The payload as a whole DV file, with the size the file claims for itself.
  int32_t claimed_size = 0;
  if (payload.size() >= 5) {
    claimed_size = static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint8_t>(payload[1])) << 24 |
                                        static_cast<uint32_t>(static_cast<uint8_t>(payload[2])) << 16 |
                                        static_cast<uint32_t>(static_cast<uint8_t>(payload[3])) << 8 |
                                        static_cast<uint32_t>(static_cast<uint8_t>(payload[4])));
  }
  LoadFromFile(payload, 1, claimed_size, cardinality);

  // The payload as the bitmap of a well-formed file (right size and CRC).
  std::string file = basin::delta::EncodeDeletionVectorFile(payload);
  LoadFromFile(file, 1, payload_size, cardinality);

  // The payload as an inline DV.
  DeletionVectorDescriptor inline_dv;
  inline_dv.storage_type = 'i';
  inline_dv.path_or_inline_dv = basin::delta::EncodeInlineDeletionVector(payload);
  inline_dv.size_in_bytes = payload_size;
  inline_dv.cardinality = cardinality;
  auto store = basin::NewMemoryObjectStore();
  (void)basin::delta::LoadDeletionVector(*store, inline_dv, "fuzz");
  // And as inline Z85 text of its own.
  inline_dv.path_or_inline_dv = payload;
  (void)basin::delta::LoadDeletionVector(*store, inline_dv, "fuzz");
  return 0;
}
