#include "fake_fixture.hpp"

#include <poll.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace fake_test {

namespace {

void set_or_unset(const char* name, const std::optional<std::string>& value) {
  if (value)
    ::setenv(name, value->c_str(), 1);
  else
    ::unsetenv(name);
}

}  // namespace

FakeEnvironment::FakeEnvironment(const FakeOptions& options) {
  char pattern[] = "/tmp/gpuslice-fake-test-XXXXXX";
  if (::mkdtemp(pattern) == nullptr) std::abort();
  dir_ = pattern;
  ::setenv("GPUSLICE_FAKE_STATE_DIR", dir_.c_str(), 1);
  set_or_unset("GPUSLICE_FAKE_GPUS", options.gpus);
  set_or_unset("CUDA_VISIBLE_DEVICES", options.visible_devices);
  set_or_unset("GPUSLICE_FAKE_CONTEXT_MIB", options.context_mib);
  set_or_unset("GPUSLICE_FAKE_UTIL_WINDOW_MS", options.util_window_ms);
}

FakeEnvironment::~FakeEnvironment() {
  // NVML counts init/shutdown pairs; a test that stopped early must not
  // leave the next one initialised.
  while (nvmlShutdown() == NVML_SUCCESS) {
  }
  std::error_code ignored;
  std::filesystem::remove_all(dir_, ignored);
}

CUcontext init_with_context(CUdevice ordinal) {
  CUcontext context = nullptr;
  if (cuInit(0) != CUDA_SUCCESS) return nullptr;
  if (cuDevicePrimaryCtxRetain(&context, ordinal) != CUDA_SUCCESS) return nullptr;
  if (cuCtxSetCurrent(context) != CUDA_SUCCESS) return nullptr;
  return context;
}

bool nvml_ready() { return nvmlInit_v2() == NVML_SUCCESS; }

std::uint64_t cuda_used() {
  size_t free = 0;
  size_t total = 0;
  if (cuMemGetInfo_v2(&free, &total) != CUDA_SUCCESS) return ~0ULL;
  return total - free;
}

std::uint64_t nvml_used(unsigned index) {
  nvmlDevice_t device = nullptr;
  nvmlMemory_t memory{};
  if (nvmlDeviceGetHandleByIndex_v2(index, &device) != NVML_SUCCESS) return ~0ULL;
  if (nvmlDeviceGetMemoryInfo(device, &memory) != NVML_SUCCESS) return ~0ULL;
  return memory.used;
}

CUfunction spin_function() {
  static const char kImage[] = "any bytes: the fake compiles nothing";
  CUmodule module = nullptr;
  CUfunction function = nullptr;
  if (cuModuleLoadData(&module, kImage) != CUDA_SUCCESS) return nullptr;
  if (cuModuleGetFunction(&function, module, "spin") != CUDA_SUCCESS) return nullptr;
  return function;
}

CUresult launch_spin(CUfunction spin, std::uint32_t microseconds, CUstream stream) {
  void* params[] = {&microseconds};
  return cuLaunchKernel(spin, 1, 1, 1, 32, 1, 1, 0, stream, params, nullptr);
}

std::int64_t now_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

Signal::Signal() {
  if (::pipe(fds_) != 0) std::abort();
}

Signal::~Signal() {
  ::close(fds_[0]);
  ::close(fds_[1]);
}

void Signal::notify() {
  const char byte = 1;
  if (::write(fds_[1], &byte, 1) != 1) std::abort();
}

bool Signal::wait(int timeout_ms) {
  pollfd pfd{fds_[0], POLLIN, 0};
  if (::poll(&pfd, 1, timeout_ms) != 1) return false;
  char byte = 0;
  return ::read(fds_[0], &byte, 1) == 1;
}

pid_t spawn(const std::function<int()>& body) {
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  if (pid == 0) ::_exit(body());
  return pid;
}

int wait_child(pid_t pid) {
  int status = 0;
  if (::waitpid(pid, &status, 0) != pid) return -1;
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return WEXITSTATUS(status);
}

std::string capture_stderr(const std::function<void()>& body) {
  std::fflush(stderr);
  char path[] = "/tmp/gpuslice-fake-stderr-XXXXXX";
  const int fd = ::mkstemp(path);
  const int saved = ::dup(2);
  ::dup2(fd, 2);
  body();
  std::fflush(stderr);
  ::dup2(saved, 2);
  ::close(saved);
  ::close(fd);
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  ::unlink(path);
  return text.str();
}

}  // namespace fake_test
