#include "storage/shared_bytes.h"

#include <cassert>

namespace basin {

namespace {

class SharedBytesReader final : public ReadableObject {
 public:
  SharedBytesReader(std::string key, std::string store, std::shared_ptr<const std::string> data,
                    int64_t modification_time_ms)
      : key_(std::move(key)),
        store_(std::move(store)),
        data_(std::move(data)),
        modification_time_ms_(modification_time_ms) {}

  uint64_t size_bytes() const override { return data_->size(); }
  std::optional<int64_t> modification_time_ms() const override { return modification_time_ms_; }

  Status ReadAt(uint64_t offset, uint64_t length, char* out) override {
    if (offset > data_->size() || length > data_->size() - offset) {
      return Status::Corruption("object '" + key_ + "' in " + store_ + " has " +
                                std::to_string(data_->size()) + " bytes; cannot read " +
                                std::to_string(length) + " bytes at offset " + std::to_string(offset));
    }
    data_->copy(out, static_cast<size_t>(length), static_cast<size_t>(offset));
    return Status::OK();
  }

 private:
  const std::string key_;
  const std::string store_;
  const std::shared_ptr<const std::string> data_;
  const int64_t modification_time_ms_;
};

}  // namespace

std::unique_ptr<ReadableObject> NewSharedBytesReader(std::string key, std::string store_description,
                                                     std::shared_ptr<const std::string> data,
                                                     int64_t modification_time_ms) {
  assert(data != nullptr);
  return std::make_unique<SharedBytesReader>(std::move(key), std::move(store_description), std::move(data),
                                             modification_time_ms);
}

}  // namespace basin
