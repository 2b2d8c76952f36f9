#include "delta/deletion_vector.h"

#include <roaring/roaring.h>
#include <zlib.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cassert>
#include <cstdio>
#include <memory>

#include "delta/paths.h"

namespace basin::delta {

namespace {

constexpr uint32_t kBitmapArrayMagic = 1681511377;
// RoaringBitmapArray's "native" serialization, which the protocol does not allow in tables.
constexpr uint32_t kNativeBitmapArrayMagic = 1681511376;
constexpr uint8_t kDvFileFormatVersion = 1;
constexpr size_t kUuidZ85Length = 20;

// Portable 32-bit Roaring format (RoaringFormatSpec).
constexpr uint32_t kSerialCookieNoRunContainers = 12346;
constexpr uint16_t kSerialCookie = 12347;
constexpr uint32_t kNoOffsetThreshold = 4;
constexpr uint32_t kMaxContainers = 65536;
constexpr uint32_t kMaxArrayContainerCardinality = 4096;
constexpr size_t kBitsetContainerBytes = 8192;
// The smallest bucket: a 4-byte key and an empty bitmap (cookie and container count).
constexpr size_t kMinBucketBytes = 4 + 8;

constexpr std::string_view kZ85Alphabet =
    "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#";

constexpr std::array<int8_t, 256> MakeZ85DecodeTable() {
  std::array<int8_t, 256> table{};
  for (auto& v : table) v = -1;
  for (size_t i = 0; i < kZ85Alphabet.size(); i++)
    table[static_cast<unsigned char>(kZ85Alphabet[i])] = static_cast<int8_t>(i);
  return table;
}
constexpr std::array<int8_t, 256> kZ85DecodeTable = MakeZ85DecodeTable();

struct RoaringFree {
  void operator()(roaring_bitmap_t* bitmap) const { roaring_bitmap_free(bitmap); }
};
using RoaringBitmap = std::unique_ptr<roaring_bitmap_t, RoaringFree>;

uint32_t LoadLE32(const char* p) {
  const auto* u = reinterpret_cast<const unsigned char*>(p);
  return uint32_t{u[0]} | uint32_t{u[1]} << 8 | uint32_t{u[2]} << 16 | uint32_t{u[3]} << 24;
}

uint32_t LoadBE32(const char* p) {
  const auto* u = reinterpret_cast<const unsigned char*>(p);
  return uint32_t{u[0]} << 24 | uint32_t{u[1]} << 16 | uint32_t{u[2]} << 8 | uint32_t{u[3]};
}

void AppendLE32(std::string& out, uint32_t v) {
  for (int i = 0; i < 4; i++) out += static_cast<char>((v >> (8 * i)) & 0xff);
}

void AppendBE32(std::string& out, uint32_t v) {
  for (int i = 3; i >= 0; i--) out += static_cast<char>((v >> (8 * i)) & 0xff);
}

std::string Hex32(uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof(buf), "0x%08x", v);
  return buf;
}

uint32_t Crc32(std::string_view bytes) {
  uLong crc = crc32(0L, Z_NULL, 0);
  // zlib takes uInt lengths; a DV is far below 4 GiB, but stay correct regardless.
  while (!bytes.empty()) {
    auto chunk = static_cast<uInt>(std::min<size_t>(bytes.size(), 1u << 30));
    crc = crc32(crc, reinterpret_cast<const Bytef*>(bytes.data()), chunk);
    bytes.remove_prefix(chunk);
  }
  return static_cast<uint32_t>(crc);
}

// Reads little-endian fields from a byte range without ever reading past its end.
class ByteReader {
 public:
  explicit ByteReader(std::string_view bytes) : bytes_(bytes) {}

  size_t position() const { return pos_; }
  size_t remaining() const { return bytes_.size() - pos_; }
  std::string_view rest() const { return bytes_.substr(pos_); }

  bool ReadU16(uint16_t* v) {
    if (remaining() < 2) return false;
    const auto* u = reinterpret_cast<const unsigned char*>(bytes_.data() + pos_);
    *v = static_cast<uint16_t>(u[0] | u[1] << 8);
    pos_ += 2;
    return true;
  }
  bool ReadU32(uint32_t* v) {
    if (remaining() < 4) return false;
    *v = LoadLE32(bytes_.data() + pos_);
    pos_ += 4;
    return true;
  }
  bool ReadU64(uint64_t* v) {
    uint32_t lo, hi;
    if (remaining() < 8) return false;
    ReadU32(&lo);
    ReadU32(&hi);
    *v = uint64_t{hi} << 32 | lo;
    return true;
  }
  bool Take(size_t n, std::string_view* out) {
    if (remaining() < n) return false;
    *out = bytes_.substr(pos_, n);
    pos_ += n;
    return true;
  }

 private:
  std::string_view bytes_;
  size_t pos_ = 0;
};

Status BitmapCorruption(const std::string& what, size_t at) {
  return Status::Corruption("malformed deletion vector bitmap: " + what + " at byte " + std::to_string(at));
}

// One bucket of a RoaringBitmapArray: the high 32 bits and the bytes of its 32-bit bitmap.
struct Bucket {
  uint32_t key = 0;
  std::string_view bitmap;
  uint64_t cardinality = 0;
};

struct ParsedBitmapArray {
  std::vector<Bucket> buckets;
  uint64_t cardinality = 0;
};

// Checks one portable 32-bit Roaring bitmap at the start of `bytes` completely: structure,
// bounds, sorted keys and values, non-overlapping runs, and every container's stored
// cardinality against its contents. libroaring 0.2.66's deserialize_safe checks only that
// it stays within the buffer: it trusts the stored cardinality of bitset containers (a
// wrong one overflows later copies) and accepts unsorted arrays and overlapping runs.
// `base` is where `bytes` starts in the whole bitmap, for messages.
Status ValidatePortableBitmap32(std::string_view bytes, size_t base, Bucket* bucket) {
  ByteReader r(bytes);
  auto at = [&] { return base + r.position(); };
  uint32_t cookie;
  if (!r.ReadU32(&cookie)) return BitmapCorruption("truncated 32-bit bitmap header", at());
  uint32_t containers;
  bool has_runs;
  std::string_view run_flags;
  if (cookie == kSerialCookieNoRunContainers) {
    has_runs = false;
    if (!r.ReadU32(&containers)) return BitmapCorruption("truncated container count", at());
    if (containers > kMaxContainers) {
      return BitmapCorruption("container count " + std::to_string(containers) + " above 65536", at());
    }
  } else if ((cookie & 0xffff) == kSerialCookie) {
    has_runs = true;
    containers = (cookie >> 16) + 1;
    if (!r.Take((containers + 7) / 8, &run_flags))
      return BitmapCorruption("truncated run-container flags", at());
  } else {
    return BitmapCorruption("unknown 32-bit bitmap cookie " + Hex32(cookie), at());
  }
  // Each container takes at least 4 header bytes and 2 data bytes; checking this first
  // bounds the allocation below by the input size.
  if (r.remaining() / 6 < containers) {
    return BitmapCorruption(std::to_string(containers) + " containers cannot fit in the remaining " +
                                std::to_string(r.remaining()) + " bytes",
                            at());
  }
  std::vector<std::pair<uint16_t, uint32_t>> headers(containers);  // key, cardinality
  for (uint32_t i = 0; i < containers; i++) {
    uint16_t key, card_minus_one;
    if (!r.ReadU16(&key) || !r.ReadU16(&card_minus_one))
      return BitmapCorruption("truncated container header", at());
    if (i > 0 && key <= headers[i - 1].first) return BitmapCorruption("container keys not ascending", at());
    headers[i] = {key, uint32_t{card_minus_one} + 1};
  }
  if (!has_runs || containers >= kNoOffsetThreshold) {
    std::string_view offsets;
    if (!r.Take(size_t{containers} * 4, &offsets))
      return BitmapCorruption("truncated container offsets", at());
  }
  uint64_t total = 0;
  for (uint32_t i = 0; i < containers; i++) {
    uint32_t expected = headers[i].second;
    uint64_t actual = 0;
    bool is_run = has_runs && ((static_cast<unsigned char>(run_flags[i / 8]) >> (i % 8)) & 1);
    if (is_run) {
      uint16_t runs;
      if (!r.ReadU16(&runs)) return BitmapCorruption("truncated run container", at());
      int64_t previous_end = -1;
      for (uint16_t j = 0; j < runs; j++) {
        uint16_t start, length_minus_one;
        if (!r.ReadU16(&start) || !r.ReadU16(&length_minus_one))
          return BitmapCorruption("truncated run", at());
        int64_t end = int64_t{start} + length_minus_one;
        if (end > 0xffff) return BitmapCorruption("run past the end of its container", at());
        if (start <= previous_end) return BitmapCorruption("runs overlap or are not ascending", at());
        previous_end = end;
        actual += uint64_t{length_minus_one} + 1;
      }
    } else if (expected > kMaxArrayContainerCardinality) {
      std::string_view words;
      if (!r.Take(kBitsetContainerBytes, &words)) return BitmapCorruption("truncated bitset container", at());
      for (size_t w = 0; w < kBitsetContainerBytes; w += 4)
        actual += std::popcount(LoadLE32(words.data() + w));
    } else {
      int32_t previous = -1;
      for (uint32_t j = 0; j < expected; j++) {
        uint16_t value;
        if (!r.ReadU16(&value)) return BitmapCorruption("truncated array container", at());
        if (value <= previous) return BitmapCorruption("array container values not ascending", at());
        previous = value;
      }
      actual = expected;
    }
    if (actual != expected) {
      return BitmapCorruption("container holds " + std::to_string(actual) + " values but its header says " +
                                  std::to_string(expected),
                              at());
    }
    total += actual;
  }
  bucket->bitmap = bytes.substr(0, r.position());
  bucket->cardinality = total;
  return Status::OK();
}

Result<ParsedBitmapArray> ParseBitmapArray(std::string_view bytes) {
  ByteReader r(bytes);
  uint32_t magic;
  if (!r.ReadU32(&magic)) {
    return BitmapCorruption("only " + std::to_string(bytes.size()) + " bytes, too short for the magic number",
                            0);
  }
  if (magic != kBitmapArrayMagic) {
    std::string what =
        "magic number " + std::to_string(magic) + ", expected " + std::to_string(kBitmapArrayMagic);
    if (magic == kNativeBitmapArrayMagic || magic == __builtin_bswap32(kNativeBitmapArrayMagic)) {
      // PROTOCOL.md's inline example is in this format, big-endian; Delta readers refuse it.
      what += " (the native RoaringBitmapArray format, which tables may not use)";
    }
    return BitmapCorruption(what, 0);
  }
  uint64_t count;
  if (!r.ReadU64(&count)) return BitmapCorruption("truncated bucket count", r.position());
  if (count > r.remaining() / kMinBucketBytes) {
    return BitmapCorruption(std::to_string(count) + " buckets cannot fit in the remaining " +
                                std::to_string(r.remaining()) + " bytes",
                            4);
  }
  ParsedBitmapArray out;
  out.buckets.reserve(count);
  for (uint64_t i = 0; i < count; i++) {
    Bucket bucket;
    if (!r.ReadU32(&bucket.key)) return BitmapCorruption("truncated bucket key", r.position());
    if (bucket.key > 0x7fffffff) {
      return BitmapCorruption("bucket key " + std::to_string(bucket.key) + " has its sign bit set",
                              r.position() - 4);
    }
    if (!out.buckets.empty() && bucket.key <= out.buckets.back().key) {
      return BitmapCorruption("bucket keys not ascending", r.position() - 4);
    }
    size_t start = r.position();
    RETURN_IF_ERROR(ValidatePortableBitmap32(r.rest(), start, &bucket));
    // libroaring must agree on where the bitmap ends, or it would decode something else.
    size_t roaring_size = roaring_bitmap_portable_deserialize_size(r.rest().data(), r.remaining());
    if (roaring_size != bucket.bitmap.size()) {
      return BitmapCorruption("32-bit bitmap of " + std::to_string(bucket.bitmap.size()) +
                                  " bytes that libroaring sizes as " + std::to_string(roaring_size),
                              start);
    }
    std::string_view skipped;
    r.Take(bucket.bitmap.size(), &skipped);
    out.cardinality += bucket.cardinality;
    out.buckets.push_back(bucket);
  }
  if (r.remaining() != 0) {
    return BitmapCorruption(std::to_string(r.remaining()) + " bytes after the last bucket", r.position());
  }
  return out;
}

Result<std::vector<uint64_t>> Materialize(const ParsedBitmapArray& parsed) {
  std::vector<uint64_t> positions;
  positions.reserve(parsed.cardinality);
  std::vector<uint32_t> low;
  for (const Bucket& bucket : parsed.buckets) {
    RoaringBitmap bitmap(
        roaring_bitmap_portable_deserialize_safe(bucket.bitmap.data(), bucket.bitmap.size()));
    if (bitmap == nullptr) {
      return Status::Corruption("malformed deletion vector bitmap: libroaring rejected bucket " +
                                std::to_string(bucket.key));
    }
    uint64_t cardinality = roaring_bitmap_get_cardinality(bitmap.get());
    if (cardinality != bucket.cardinality) {
      return Status::Corruption("malformed deletion vector bitmap: bucket " + std::to_string(bucket.key) +
                                " holds " + std::to_string(cardinality) + " values, expected " +
                                std::to_string(bucket.cardinality));
    }
    low.resize(cardinality);
    roaring_bitmap_to_uint32_array(bitmap.get(), low.data());
    for (uint32_t v : low) positions.push_back(uint64_t{bucket.key} << 32 | v);
  }
  return positions;
}

// Where a DV's bytes come from, for messages: "deletion vector file 'x.bin' at offset 1".
std::string DescribeFile(const std::string& path, int64_t offset) {
  return "deletion vector file '" + path + "' at offset " + std::to_string(offset);
}

Status WithDvContext(const Status& st, const std::string& where, const std::string& context) {
  return st.WithContext(context.empty() ? where : context + ": " + where);
}

// Checks the decoded bitmap's cardinality against the descriptor before materializing it.
Result<std::vector<uint64_t>> DecodeChecked(std::string_view bitmap, const DeletionVectorDescriptor& dv) {
  ASSIGN_OR_RETURN(ParsedBitmapArray parsed, ParseBitmapArray(bitmap));
  if (parsed.cardinality != static_cast<uint64_t>(dv.cardinality)) {
    return Status::Corruption("cardinality mismatch: the log says " + std::to_string(dv.cardinality) +
                              " deleted rows, the bitmap holds " + std::to_string(parsed.cardinality));
  }
  return Materialize(parsed);
}

Result<std::vector<uint64_t>> LoadInline(const DeletionVectorDescriptor& dv) {
  auto decoded = Z85Decode(dv.path_or_inline_dv);
  if (!decoded.ok()) return Status::Corruption(decoded.status().message());
  // Delta Spark zero-pads the bitmap to whole 4-byte groups before encoding; the z85
  // crate (delta-kernel-rs) encodes a short tail instead. Either way at most 3 extra bytes.
  auto size = static_cast<size_t>(dv.size_in_bytes);
  if (decoded->size() < size || decoded->size() - size > 3) {
    return Status::Corruption("the log says sizeInBytes " + std::to_string(size) +
                              ", the inline data holds " + std::to_string(decoded->size()) + " bytes");
  }
  return DecodeChecked(std::string_view(*decoded).substr(0, size), dv);
}

// Reads the DV at `offset` of the file `key` in `store`: the version byte and the DV, from
// one open file.
Result<std::vector<uint64_t>> LoadFromFile(ObjectStore& store, const std::string& key, uint64_t offset,
                                           const DeletionVectorDescriptor& dv) {
  ASSIGN_OR_RETURN(std::unique_ptr<ReadableObject> file, store.OpenRead(key));
  char version = 0;
  RETURN_IF_ERROR(file->ReadAt(0, 1, &version));
  if (static_cast<uint8_t>(version) != kDvFileFormatVersion) {
    return Status::Corruption("unknown format version " + std::to_string(static_cast<uint8_t>(version)) +
                              " (expected 1)");
  }
  auto size = static_cast<uint64_t>(dv.size_in_bytes);
  // Checked against the file before allocating: sizeInBytes comes from the log.
  if (offset > file->size_bytes() || 4 + size + 4 > file->size_bytes() - offset) {
    return Status::Corruption("the DV at offset " + std::to_string(offset) + " with sizeInBytes " +
                              std::to_string(size) + " ends past the file's " +
                              std::to_string(file->size_bytes()) + " bytes");
  }
  std::string segment(static_cast<size_t>(4 + size + 4), '\0');
  RETURN_IF_ERROR(file->ReadAt(offset, segment.size(), segment.data()));
  uint32_t stored_size = LoadBE32(segment.data());
  if (stored_size != size) {
    return Status::Corruption("size mismatch: the log says sizeInBytes " + std::to_string(size) +
                              ", the file says " + std::to_string(stored_size));
  }
  std::string_view bitmap = std::string_view(segment).substr(4, size);
  uint32_t stored_crc = LoadBE32(segment.data() + 4 + size);
  uint32_t crc = Crc32(bitmap);
  if (stored_crc != crc) {
    return Status::Corruption("CRC-32 mismatch: stored " + Hex32(stored_crc) + ", computed " + Hex32(crc));
  }
  return DecodeChecked(bitmap, dv);
}

}  // namespace

Result<std::string> Z85Decode(std::string_view text) {
  if (text.size() % 5 != 0) {
    return Status::InvalidArgument("Z85 text of " + std::to_string(text.size()) +
                                   " characters is not a multiple of 5 long");
  }
  std::string out;
  out.reserve(text.size() / 5 * 4);
  for (size_t i = 0; i < text.size(); i += 5) {
    // No 32-bit group starts with '#' (84 * 85^4 > 2^32), so a final group led by k '#'s
    // is the z85 crate's padded tail: the last 4-k bytes in the other 5-k digits.
    size_t missing = 0;
    if (i + 5 == text.size()) {
      while (missing < 5 && text[i + missing] == '#') missing++;
      if (missing > 3)
        return Status::InvalidArgument("Z85 group at position " + std::to_string(i) + " is all padding");
    }
    uint64_t value = 0;
    for (size_t j = i + missing; j < i + 5; j++) {
      int8_t digit = kZ85DecodeTable[static_cast<unsigned char>(text[j])];
      if (digit < 0) return Status::InvalidArgument("invalid Z85 character at position " + std::to_string(j));
      value = value * 85 + static_cast<uint64_t>(digit);
    }
    size_t bytes = 4 - missing;
    if (value >> (8 * bytes) != 0) {
      return Status::InvalidArgument("Z85 group at position " + std::to_string(i) + " exceeds " +
                                     std::to_string(8 * bytes) + " bits");
    }
    for (size_t b = bytes; b > 0; b--) out += static_cast<char>((value >> (8 * (b - 1))) & 0xff);
  }
  return out;
}

std::string Z85Encode(std::string_view bytes) {
  assert(bytes.size() % 4 == 0);
  std::string out;
  out.reserve(bytes.size() / 4 * 5);
  for (size_t i = 0; i + 4 <= bytes.size(); i += 4) {
    uint32_t value = LoadBE32(bytes.data() + i);
    char group[5];
    for (int j = 4; j >= 0; j--) {
      group[j] = kZ85Alphabet[value % 85];
      value /= 85;
    }
    out.append(group, 5);
  }
  return out;
}

Result<std::string> DeletionVectorKey(const DeletionVectorDescriptor& dv) {
  switch (dv.storage_type) {
    case 'u': {
      const std::string& path = dv.path_or_inline_dv;
      if (path.size() < kUuidZ85Length) {
        return Status::Corruption("deletion vector pathOrInlineDv '" + path + "' is shorter than a " +
                                  std::to_string(kUuidZ85Length) + "-character Z85 UUID");
      }
      std::string_view prefix = std::string_view(path).substr(0, path.size() - kUuidZ85Length);
      auto uuid = Z85Decode(std::string_view(path).substr(prefix.size()));
      if (!uuid.ok()) {
        return Status::Corruption("deletion vector pathOrInlineDv '" + path +
                                  "': " + uuid.status().message());
      }
      const auto* u = reinterpret_cast<const unsigned char*>(uuid->data());
      char text[37];
      std::snprintf(text, sizeof(text),
                    "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0], u[1], u[2],
                    u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]);
      std::string key = prefix.empty() ? "" : std::string(prefix) + "/";
      return key + "deletion_vector_" + text + ".bin";
    }
    case 'p':
      return DecodeDataPath(dv.path_or_inline_dv);
    case 'i':
      return Status::InvalidArgument("an inline deletion vector has no file");
    default:
      return Status::Corruption(std::string("unknown deletion vector storageType '") + dv.storage_type + "'");
  }
}

Result<std::vector<uint64_t>> DecodeRoaringBitmapArray(std::string_view bytes) {
  return DecodeRoaringBitmapArray(bytes, kMaxDeletionVectorCardinality);
}

Result<std::vector<uint64_t>> DecodeRoaringBitmapArray(std::string_view bytes, uint64_t max_cardinality) {
  ASSIGN_OR_RETURN(ParsedBitmapArray parsed, ParseBitmapArray(bytes));
  if (parsed.cardinality > max_cardinality) {
    return Status::Corruption("deletion vector bitmap holds " + std::to_string(parsed.cardinality) +
                              " positions, more than the limit of " + std::to_string(max_cardinality));
  }
  return Materialize(parsed);
}

Result<std::vector<uint64_t>> LoadDeletionVector(ObjectStore& store, const DeletionVectorDescriptor& dv,
                                                 const std::string& context) {
  if (dv.storage_type == 'i') {
    std::string where = "inline deletion vector";
    if (dv.size_in_bytes < 0 || dv.cardinality < 0) {
      return WithDvContext(Status::Corruption("negative sizeInBytes or cardinality"), where, context);
    }
    auto positions = LoadInline(dv);
    if (!positions.ok()) return WithDvContext(positions.status(), where, context);
    return positions;
  }

  auto key = DeletionVectorKey(dv);
  if (!key.ok()) return WithDvContext(key.status(), "deletion vector", context);
  // Without an offset the DV is the file's first, right after the version byte.
  int64_t offset = dv.offset.value_or(1);
  std::string where = DescribeFile(*key, offset);
  if (offset < 1 || dv.size_in_bytes < 0 || dv.cardinality < 0) {
    return WithDvContext(
        Status::Corruption("offset must be at least 1 and sizeInBytes and cardinality non-negative"), where,
        context);
  }

  ObjectStore* source = &store;
  std::shared_ptr<ObjectStore> local;  // for a 'p' DV given as an absolute local path
  std::string file_key = *key;
  // A relative 'p' path is read like a relative data file path: from the table's store.
  if (dv.storage_type == 'p' && IsAbsoluteDataPath(*key)) {
    if (!key->starts_with("/")) {
      return WithDvContext(
          Status::NotImplemented("only local file paths are supported for absolute-path DVs"), where,
          context);
    }
    // The path names a file of the local file system, wherever the table's store is. That
    // store creates no folder: a DV in a folder that is gone is missing.
    const size_t slash = key->rfind('/');
    auto opened = OpenStoreAt(slash == 0 ? "/" : key->substr(0, slash));
    if (!opened.ok()) return WithDvContext(opened.status(), where, context);
    local = std::move(opened).value();
    source = local.get();
    file_key = key->substr(slash + 1);
  }
  auto positions = LoadFromFile(*source, file_key, static_cast<uint64_t>(offset), dv);
  if (!positions.ok()) return WithDvContext(positions.status(), where, context);
  return positions;
}

std::string SerializeRoaringBitmapArray(const std::vector<uint64_t>& positions) {
  std::vector<uint64_t> sorted = positions;
  std::sort(sorted.begin(), sorted.end());
  sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
  assert(sorted.empty() || sorted.back() < (uint64_t{1} << 63));

  std::string out;
  AppendLE32(out, kBitmapArrayMagic);
  std::string buckets;
  uint64_t bucket_count = 0;
  std::vector<uint32_t> low;
  for (size_t i = 0; i < sorted.size();) {
    auto key = static_cast<uint32_t>(sorted[i] >> 32);
    low.clear();
    for (; i < sorted.size() && (sorted[i] >> 32) == key; i++)
      low.push_back(static_cast<uint32_t>(sorted[i]));
    RoaringBitmap bitmap(roaring_bitmap_of_ptr(low.size(), low.data()));
    roaring_bitmap_run_optimize(bitmap.get());
    std::string serialized(roaring_bitmap_portable_size_in_bytes(bitmap.get()), '\0');
    roaring_bitmap_portable_serialize(bitmap.get(), serialized.data());
    AppendLE32(buckets, key);
    buckets += serialized;
    bucket_count++;
  }
  AppendLE32(out, static_cast<uint32_t>(bucket_count));
  AppendLE32(out, static_cast<uint32_t>(bucket_count >> 32));
  return out + buckets;
}

std::string EncodeDeletionVectorFile(std::string_view serialized_bitmap) {
  std::string out(1, static_cast<char>(kDvFileFormatVersion));
  AppendBE32(out, static_cast<uint32_t>(serialized_bitmap.size()));
  out += serialized_bitmap;
  AppendBE32(out, Crc32(serialized_bitmap));
  return out;
}

std::string EncodeDeletionVectorPath(std::string_view random_prefix, std::string_view uuid_bytes) {
  assert(uuid_bytes.size() == 16);
  return std::string(random_prefix) + Z85Encode(uuid_bytes);
}

std::string EncodeInlineDeletionVector(std::string_view serialized_bitmap) {
  std::string padded(serialized_bitmap);
  padded.resize((padded.size() + 3) / 4 * 4, '\0');
  return Z85Encode(padded);
}

}  // namespace basin::delta
