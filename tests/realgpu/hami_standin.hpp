// A stand-in for HAMi's vGPUmonitor in the feedback tests: cmd/vGPUmonitor's
// Observe, written here from its Go source against raw offsets (not the
// shim's struct nor gpuslice's feedback code), with the plain reads and
// writes Go makes, every `period` seconds over <hook>/containers/*/ *.cache.
#pragma once

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <map>
#include <string>
#include <thread>
#include <vector>

namespace gpuslice::realgpu::testing {

class HamiMonitorStandIn {
 public:
  HamiMonitorStandIn(std::string hook_path, double period) : hook_(std::move(hook_path)), period_(period) {
    thread_ = std::thread([this] {
      while (!stop_) {
        observe();
        std::this_thread::sleep_for(std::chrono::duration<double>(period_));
      }
    });
  }
  ~HamiMonitorStandIn() {
    stop_ = true;
    thread_.join();
    for (auto& [path, p] : maps_) munmap(p, 2008952);
  }
  int passes() const { return passes_; }

 private:
  struct Info {
    unsigned char* p;
    int32_t& at(size_t offset) { return *reinterpret_cast<int32_t*>(p + offset); }
    int32_t& recent_kernel() { return at(2008904); }
    int32_t& utilization_switch() { return at(2008900); }
    int priority() { return at(2008908); }
    bool valid_uuid(int i) { return p[64 + 96 * i] != 0; }
    std::string uuid(int i) { return std::string(reinterpret_cast<char*>(p + 64 + 96 * i), 96); }
  };

  // Maps every container's first *.cache file (cudevshr.go's loadCache).
  std::vector<Info> list() {
    std::vector<Info> out;
    namespace fs = std::filesystem;
    std::error_code ec;
    std::vector<fs::path> dirs;
    for (const auto& d : fs::directory_iterator(fs::path(hook_) / "containers", ec)) dirs.push_back(d.path());
    std::sort(dirs.begin(), dirs.end());
    for (const auto& d : dirs) {
      std::vector<std::string> names;
      for (const auto& f : fs::directory_iterator(d, ec)) names.push_back(f.path().filename().string());
      std::sort(names.begin(), names.end());
      for (const auto& n : names) {
        if (n.size() < 6 || n.compare(n.size() - 6, 6, ".cache") != 0) continue;
        const std::string path = (d / n).string();
        auto it = maps_.find(path);
        if (it == maps_.end()) {
          const int fd = open(path.c_str(), O_RDWR);
          if (fd < 0) break;
          void* p = mmap(nullptr, 2008952, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
          close(fd);
          if (p == MAP_FAILED) break;
          if (*static_cast<int32_t*>(p) != 19920718) {  // "cache file magic flag not matched"
            munmap(p, 2008952);
            break;
          }
          it = maps_.emplace(path, static_cast<unsigned char*>(p)).first;
        }
        out.push_back(Info{it->second});
        break;
      }
    }
    return out;
  }

  static bool check_blocking(std::map<std::string, std::vector<int>>& on, int p, Info& c) {
    for (int i = 0; i < 16; ++i) {
      auto it = on.find(c.uuid(i));
      if (it == on.end()) continue;
      for (int q = 0; q < std::min<int>(p, static_cast<int>(it->second.size())); ++q)
        if (it->second[q] > 0) return true;
    }
    return false;
  }
  static bool check_priority(std::map<std::string, std::vector<int>>& on, int p, Info& c) {
    for (int i = 0; i < 16; ++i) {
      auto it = on.find(c.uuid(i));
      if (it == on.end()) continue;
      for (int q = 0; q < std::min<int>(p, static_cast<int>(it->second.size())); ++q)
        if (it->second[q] > 0) return true;
      if (p >= 0 && p < static_cast<int>(it->second.size()) && it->second[p] > 1) return true;
    }
    return false;
  }

  void observe() {
    std::map<std::string, std::vector<int>> on;
    auto containers = list();
    for (auto& c : containers) {
      int recent = c.recent_kernel();
      if (recent > 0) {
        --recent;
        if (recent > 0) {
          for (int i = 0; i < 16; ++i) {
            if (!c.valid_uuid(i)) continue;
            const int p = c.priority();
            if (p < 0) continue;
            auto& v = on[c.uuid(i)];
            while (p >= static_cast<int>(v.size())) v.push_back(0);
            ++v[p];
          }
        }
        c.recent_kernel() = recent;
      }
    }
    for (auto& c : containers) {
      const int p = c.priority();
      const int recent = c.recent_kernel();
      const int sw = c.utilization_switch();
      if (check_blocking(on, p, c)) {
        if (recent >= 0) c.recent_kernel() = -1;
      } else if (recent < 0) {
        c.recent_kernel() = 0;
      }
      if (check_priority(on, p, c)) {
        if (sw != 1) c.utilization_switch() = 1;
      } else if (sw != 0) {
        c.utilization_switch() = 0;
      }
    }
    ++passes_;
  }

  std::string hook_;
  double period_;
  std::atomic<bool> stop_{false};
  std::atomic<int> passes_{0};
  std::map<std::string, unsigned char*> maps_;
  std::thread thread_;
};

}  // namespace gpuslice::realgpu::testing
