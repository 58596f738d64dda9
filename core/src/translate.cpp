#include "gpuslice/core/translate.hpp"

#include <fmt/format.h>

#include <cmath>

#include "gpuslice/core/dialects/dialect.hpp"

namespace gpuslice::core {

namespace {

constexpr int64_t kMiB = int64_t{1} << 20;

// A KAI fraction as a whole percentage, when it is one.
std::optional<int32_t> percent_of(double fraction) {
  const double pct = fraction * 100;
  const double whole = std::round(pct);
  if (std::fabs(pct - whole) > 1e-9 || whole < 1 || whole > 100) return std::nullopt;
  return static_cast<int32_t>(whole);
}

}  // namespace

namespace translation {

// HAMi's steering annotations have no Koordinator or KAI counterpart.
std::optional<TranslationProblem> hami_only_annotations(const PodRequest& pod, Dialect target) {
  const auto& s = pod.selectors;
  const char* field = !s.use_types.empty()     ? "nvidia.com/use-gputype"
                      : !s.nouse_types.empty() ? "nvidia.com/nouse-gputype"
                      : !s.use_uuids.empty()   ? "nvidia.com/use-gpuuuid"
                      : !s.nouse_uuids.empty() ? "nvidia.com/nouse-gpuuuid"
                      : s.numa_bind            ? "nvidia.com/numa-bind"
                      : !s.vgpu_mode.empty()   ? "nvidia.com/vgpu-mode"
                                               : nullptr;
  if (!field) return std::nullopt;
  return TranslationProblem{field, fmt::format("a HAMi card selector; {} has none", dialect_name(target))};
}

// Koordinator and KAI give a pod's cards to one request: GPUs asked in a
// second container, or in an init container, have no place there.
std::optional<TranslationProblem> one_device_container(const PodRequest& pod, Dialect target) {
  bool seen = false;
  for (size_t i = 0; i < pod.container_count(); ++i) {
    const ContainerRequest& c = pod.container_at(i);
    if (!c.wants_devices()) continue;
    const bool init = i < pod.init_containers.size();
    if (init || seen)
      return TranslationProblem{
          fmt::format("{}[{}]", init ? "initContainers" : "containers", c.name),
          fmt::format("{} gives GPUs to one request per pod; this pod asks them in {}", dialect_name(target),
                      init ? "an init container" : "a second container")};
    seen = true;
  }
  return std::nullopt;
}

// Koordinator's bytes as MiB, for a target whose `field` counts MiB.
std::optional<TranslationProblem> bytes_as_mib(ContainerRequest& c, const char* field) {
  if (c.memory_bytes == 0) return std::nullopt;
  if (c.memory_bytes % kMiB != 0)
    return TranslationProblem{
        "koordinator.sh/gpu-memory",
        fmt::format("{} bytes per GPU is not a whole MiB; {} counts MiB", c.memory_bytes, field)};
  c.memory_mib = c.memory_bytes / kMiB;
  c.memory_percent = kMemoryPercentUnset;
  c.memory_bytes = 0;
  return std::nullopt;
}

// KAI's fraction as a percentage, for a target whose `field` counts percent.
std::optional<TranslationProblem> fraction_as_percent(ContainerRequest& c, const char* field) {
  if (c.memory_fraction == 0) return std::nullopt;
  const auto pct = percent_of(c.memory_fraction);
  if (!pct)
    return TranslationProblem{"gpu-fraction", fmt::format("{} is not a whole percent; {} counts percent",
                                                          c.memory_fraction, field)};
  c.memory_percent = *pct;
  c.memory_fraction = 0;
  return std::nullopt;
}

}  // namespace translation

std::optional<TranslationProblem> translate(PodRequest& pod, Dialect target) {
  return dialects::unit(target).translate_request(pod);
}

}  // namespace gpuslice::core
