// Reading the fake's configuration from the environment. The real driver
// reads its environment once; the fake re-reads it whenever cuInit or
// nvmlInit sees that one of its own GPUSLICE_FAKE_* variables changed, so
// one test process can try many fleets (see EnvSnapshot).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpuslice::fake {

inline constexpr const char* kStateDirVariable = "GPUSLICE_FAKE_STATE_DIR";
inline constexpr const char* kContextMibVariable = "GPUSLICE_FAKE_CONTEXT_MIB";
inline constexpr const char* kModuleMibVariable = "GPUSLICE_FAKE_MODULE_MIB";
inline constexpr const char* kUtilWindowVariable = "GPUSLICE_FAKE_UTIL_WINDOW_MS";
inline constexpr const char* kUtilAttributionVariable = "GPUSLICE_FAKE_UTIL_ATTRIBUTION";
inline constexpr const char* kVisibleDevicesVariable = "CUDA_VISIBLE_DEVICES";
inline constexpr const char* kPidNamespaceVariable = "GPUSLICE_FAKE_PID_NAMESPACE_OFFSET";

// The pid NVML reports for this process's `pid`: with
// GPUSLICE_FAKE_PID_NAMESPACE_OFFSET=<n> the process plays one in a pid
// namespace of its own (a Kubernetes pod), whose host pid is pid + n, as
// NVML (which numbers processes as the host does) reports it.
std::int32_t nvml_pid(std::int32_t pid);

std::optional<std::string> env_value(const char* name);

// The values (or absence) of a set of variables, compared to decide whether
// a library must reload its configuration.
class EnvSnapshot {
 public:
  EnvSnapshot() = default;
  static EnvSnapshot take(std::initializer_list<const char*> names);
  bool operator==(const EnvSnapshot&) const = default;

 private:
  std::vector<std::pair<std::string, std::optional<std::string>>> values_;
};

// A whole number in [min, max] from `name`, `fallback` when unset; on
// malformed text fills `error` with one line naming the variable and value.
std::uint64_t env_number(const char* name, std::uint64_t fallback, std::uint64_t min, std::uint64_t max,
                         std::string& error);

// Prints one "gpuslice fake driver: ..." line to stderr.
void report(std::string_view line);

}  // namespace gpuslice::fake
