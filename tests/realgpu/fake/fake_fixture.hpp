// Helpers for the fake driver tests: a private environment per test (own
// state directory, so tests never share fake GPUs), child processes, and
// shorthands for the CUDA / NVML calls most tests make.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "cuda_api.hpp"
#include "gpuslice/realgpu/nvml_abi.h"

namespace fake_test {

inline constexpr std::uint64_t kMiB = 1ULL << 20;
inline constexpr std::uint64_t kGiB = 1ULL << 30;

struct FakeOptions {
  // Unset when nullopt. The initialisers let designated initialisers name
  // only what a test sets.
  std::optional<std::string> gpus = std::nullopt;             // GPUSLICE_FAKE_GPUS (default fleet)
  std::optional<std::string> visible_devices = std::nullopt;  // CUDA_VISIBLE_DEVICES
  std::optional<std::string> context_mib = std::nullopt;      // GPUSLICE_FAKE_CONTEXT_MIB
  std::optional<std::string> util_window_ms = std::nullopt;   // GPUSLICE_FAKE_UTIL_WINDOW_MS
};

// Sets the fake's environment for one test case, with a fresh
// GPUSLICE_FAKE_STATE_DIR from mkdtemp; the next cuInit / nvmlInit reload
// (the fake re-reads its configuration when the environment changed).
// The destructor removes the directory and undoes any nvmlInit left over.
class FakeEnvironment {
 public:
  explicit FakeEnvironment(const FakeOptions& options = {});
  ~FakeEnvironment();
  FakeEnvironment(const FakeEnvironment&) = delete;
  FakeEnvironment& operator=(const FakeEnvironment&) = delete;
  const std::string& dir() const { return dir_; }

 private:
  std::string dir_;
};

// cuInit + primary context of `ordinal` made current. Returns the context.
CUcontext init_with_context(CUdevice ordinal = 0);
bool nvml_ready();

// Card-wide used bytes of the current context's device (cuMemGetInfo).
std::uint64_t cuda_used();
// Card-wide used bytes of NVML device `index`.
std::uint64_t nvml_used(unsigned index);

// `spin` from a freshly loaded module (current context).
CUfunction spin_function();
CUresult launch_spin(CUfunction spin, std::uint32_t microseconds, CUstream stream = nullptr);

std::int64_t now_ns();

// One-byte handshakes between parent and child.
class Signal {
 public:
  Signal();
  ~Signal();
  void notify();
  bool wait(int timeout_ms = 10000);  // false on timeout / closed

 private:
  int fds_[2];
};

// Runs `body` in a forked child, which exits with its return value.
pid_t spawn(const std::function<int()>& body);
// Exit status of the child, or 128 + signal number.
int wait_child(pid_t pid);

// Calls `body` with stderr redirected; returns what was written there.
std::string capture_stderr(const std::function<void()>& body);

}  // namespace fake_test
