#include "storage/shared_bytes.h"

#include <cassert>

#include "storage/object_key.h"

namespace basin {

namespace {

class SharedBytesReader final : public ReadableObject {
 public:
  SharedBytesReader(ObjectInfo info, std::string store, std::shared_ptr<const std::string> data)
      : info_(std::move(info)), store_(std::move(store)), data_(std::move(data)) {}

  uint64_t size_bytes() const override { return data_->size(); }
  std::optional<int64_t> modification_time_ms() const override { return info_.modification_time_ms; }
  std::string version_tag() const override { return info_.version_tag; }

  Status ReadAt(uint64_t offset, uint64_t length, char* out) override {
    if (!RangeFits(offset, length, data_->size())) {
      return ShortObjectError(info_.key, store_, offset, length, data_->size());
    }
    data_->copy(out, static_cast<size_t>(length), static_cast<size_t>(offset));
    return Status::OK();
  }

 private:
  const ObjectInfo info_;
  const std::string store_;
  const std::shared_ptr<const std::string> data_;
};

}  // namespace

std::unique_ptr<ReadableObject> NewSharedBytesReader(ObjectInfo info, std::string store_description,
                                                     std::shared_ptr<const std::string> data) {
  assert(data != nullptr);
  return std::make_unique<SharedBytesReader>(std::move(info), std::move(store_description), std::move(data));
}

}  // namespace basin
