#include "gpuslice/realgpu/slice_env.hpp"

#include <cstdlib>

namespace gpuslice::realgpu {

namespace {

[[noreturn]] void refuse(std::string_view variable, std::string_view text, std::string_view why) {
  throw EnvError(std::string(variable) + "='" + std::string(text) + "': " + std::string(why));
}

// `expected` says what the variable takes, for the refusal message (a
// percentage takes no suffix, so its message must not offer one).
uint64_t parse_digits(std::string_view digits, std::string_view variable, std::string_view text,
                      std::string_view expected) {
  if (digits.empty()) refuse(variable, text, expected);
  uint64_t v = 0;
  for (char c : digits) {
    if (c < '0' || c > '9') refuse(variable, text, expected);
    const uint64_t d = static_cast<uint64_t>(c - '0');
    if (v > (UINT64_MAX - d) / 10) refuse(variable, text, "too large");
    v = v * 10 + d;
  }
  return v;
}

}  // namespace

bool SliceEnv::any_memory_limit() const {
  for (uint64_t l : memory_limit)
    if (l > 0) return true;
  return false;
}

uint64_t parse_bytes(std::string_view text, std::string_view variable) {
  std::string_view digits = text;
  uint64_t unit = 1;
  if (!digits.empty()) {
    switch (digits.back()) {
      case 'k':
      case 'K':
        unit = 1ULL << 10;
        break;
      case 'm':
      case 'M':
        unit = 1ULL << 20;
        break;
      case 'g':
      case 'G':
        unit = 1ULL << 30;
        break;
      default:
        break;
    }
    if (unit != 1) digits.remove_suffix(1);
  }
  const uint64_t v =
      parse_digits(digits, variable, text, "expected a whole number with an optional k, m or g suffix");
  if (v > UINT64_MAX / unit) refuse(variable, text, "too large");
  return v * unit;
}

int parse_percent(std::string_view text, std::string_view variable) {
  const uint64_t v = parse_digits(text, variable, text, "expected a whole number of percent, 0 to 100");
  if (v > 100) refuse(variable, text, "a percentage is at most 100");
  return static_cast<int>(v);
}

SliceEnv read_slice_env(const EnvLookup& lookup) {
  SliceEnv env;
  if (auto all = lookup("CUDA_DEVICE_MEMORY_LIMIT")) {
    const uint64_t v = parse_bytes(*all, "CUDA_DEVICE_MEMORY_LIMIT");
    for (auto& l : env.memory_limit) l = v;
  }
  if (auto all = lookup("CUDA_DEVICE_SM_LIMIT")) {
    const int v = parse_percent(*all, "CUDA_DEVICE_SM_LIMIT");
    for (auto& l : env.sm_limit) l = v;
  }
  for (int i = 0; i < kMaxDevices; ++i) {
    const std::string mem = "CUDA_DEVICE_MEMORY_LIMIT_" + std::to_string(i);
    if (auto v = lookup(mem)) env.memory_limit[i] = parse_bytes(*v, mem);
    const std::string sm = "CUDA_DEVICE_SM_LIMIT_" + std::to_string(i);
    if (auto v = lookup(sm)) env.sm_limit[i] = parse_percent(*v, sm);
  }
  if (auto p = lookup("GPU_CORE_UTILIZATION_POLICY")) {
    if (*p == "default" || *p == "DEFAULT" || p->empty())
      env.core_policy = CorePolicy::Default;
    else if (*p == "force" || *p == "FORCE")
      env.core_policy = CorePolicy::Force;
    else if (*p == "disable" || *p == "DISABLE")
      env.core_policy = CorePolicy::Disable;
    else
      refuse("GPU_CORE_UTILIZATION_POLICY", *p, "use default, force or disable");
  }
  if (auto c = lookup("CUDA_DEVICE_MEMORY_SHARED_CACHE")) {
    if (c->empty()) refuse("CUDA_DEVICE_MEMORY_SHARED_CACHE", *c, "expected a file path");
    env.shared_cache = *c;
  }
  if (auto t = lookup("CUDA_TASK_PRIORITY")) {
    const uint64_t v =
        parse_digits(*t, "CUDA_TASK_PRIORITY", *t, "expected a whole number, 0 (highest priority) to 100");
    if (v > 100) refuse("CUDA_TASK_PRIORITY", *t, "expected a whole number, 0 (highest priority) to 100");
    env.task_priority = static_cast<int>(v);
  }
  if (auto l = lookup("LIBCUDA_LOG_LEVEL")) {
    const uint64_t v = parse_digits(*l, "LIBCUDA_LOG_LEVEL", *l, "use 0 (errors) to 4 (debug)");
    if (v > 4) refuse("LIBCUDA_LOG_LEVEL", *l, "use 0 (errors) to 4 (debug)");
    env.log_level = static_cast<int>(v);
  }
  return env;
}

SliceEnv read_slice_env() {
  return read_slice_env([](const std::string& name) -> std::optional<std::string> {
    const char* v = std::getenv(name.c_str());
    if (!v) return std::nullopt;
    return std::string(v);
  });
}

}  // namespace gpuslice::realgpu
