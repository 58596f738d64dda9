// What this process holds, by handle, so a free returns exactly what its
// allocation reserved (the driver's free calls do not say how much).
#pragma once

#include <cstdint>
#include <mutex>
#include <optional>
#include <unordered_map>

namespace gpuslice::shim {

struct Held {
  int region_device;
  uint64_t bytes;
  void* pool = nullptr;  // stream-ordered allocations: the pool that takes them back
};

template <class Handle>
class AllocationMap {
 public:
  void add(Handle h, Held held) {
    std::lock_guard lock(mutex_);
    held_[key(h)] = held;
  }
  std::optional<Held> take(Handle h) {
    std::lock_guard lock(mutex_);
    auto it = held_.find(key(h));
    if (it == held_.end()) return std::nullopt;
    Held out = it->second;
    held_.erase(it);
    return out;
  }

 private:
  static uint64_t key(Handle h) {
    if constexpr (std::is_pointer_v<Handle>)
      return reinterpret_cast<uintptr_t>(h);
    else
      return static_cast<uint64_t>(h);
  }
  std::mutex mutex_;
  std::unordered_map<uint64_t, Held> held_;
};

}  // namespace gpuslice::shim
