// HAMi-core's shared region (layout 1.2, x86-64) read byte by byte from the
// offsets HAMi-core's header and HAMi's v1 reader give, without the shim's
// own struct (gpuslice/realgpu/hami_layout.hpp): if the shim's struct drifts,
// these tests see it.
#pragma once

#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace gpuslice::realgpu::testing {

struct HamiFile {
  static constexpr size_t kStructBytes = 2008952;
  static constexpr size_t kSlotsAt = 1856, kSlotBytes = 1960;

  std::vector<unsigned char> bytes;

  explicit HamiFile(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }

  template <class T>
  T at(size_t offset) const {
    T v{};
    if (offset + sizeof v <= bytes.size()) std::memcpy(&v, bytes.data() + offset, sizeof v);
    return v;
  }

  int32_t magic() const { return at<int32_t>(0); }
  uint32_t major() const { return at<uint32_t>(4); }
  uint32_t minor() const { return at<uint32_t>(8); }
  int32_t sm_init_flag() const { return at<int32_t>(12); }
  uint64_t owner_pid() const { return at<uint64_t>(16); }
  uint64_t device_num() const { return at<uint64_t>(56); }
  std::string uuid(int d) const {
    const char* p = reinterpret_cast<const char*>(bytes.data() + 64 + 96 * d);
    return std::string(p, strnlen(p, 96));
  }
  uint64_t limit(int d) const { return at<uint64_t>(1600 + 8 * d); }
  uint64_t sm_limit(int d) const { return at<uint64_t>(1728 + 8 * d); }
  int32_t proc_num() const { return at<int32_t>(2008896); }
  int32_t utilization_switch() const { return at<int32_t>(2008900); }
  int32_t recent_kernel() const { return at<int32_t>(2008904); }
  int32_t priority() const { return at<int32_t>(2008908); }
  uint64_t last_kernel_time() const { return at<uint64_t>(2008912); }

  struct Memory {
    uint64_t context, module, data, offset, total;
  };
  struct Slot {
    int32_t pid, hostpid, status;
    uint64_t seqlock;
    Memory used[16];
    uint64_t monitorused[16];
    uint64_t sm_util[16];
  };
  Slot slot(int i) const {
    const size_t base = kSlotsAt + kSlotBytes * static_cast<size_t>(i);
    Slot s{};
    s.pid = at<int32_t>(base + 0);
    s.hostpid = at<int32_t>(base + 4);
    for (int d = 0; d < 16; ++d) {
      const size_t m = base + 8 + 64 * static_cast<size_t>(d);
      s.used[d] = {at<uint64_t>(m), at<uint64_t>(m + 8), at<uint64_t>(m + 16), at<uint64_t>(m + 24),
                   at<uint64_t>(m + 32)};
      s.monitorused[d] = at<uint64_t>(base + 1032 + 8 * static_cast<size_t>(d));
      s.sm_util[d] = at<uint64_t>(base + 1160 + 48 * static_cast<size_t>(d) + 16);
    }
    s.status = at<int32_t>(base + 1928);
    s.seqlock = at<uint64_t>(base + 1936);
    return s;
  }
  // The live slots, as HAMi's monitor counts them: below proc_num, status != 0.
  std::vector<Slot> live_slots() const {
    std::vector<Slot> out;
    for (int i = 0; i < proc_num(); ++i)
      if (slot(i).status != 0) out.push_back(slot(i));
    return out;
  }
};

}  // namespace gpuslice::realgpu::testing
