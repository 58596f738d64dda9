#include "gpuslice/core/dialects/kai/codec.hpp"

#include <fmt/format.h>
#include <openssl/evp.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <limits>

#include "gpuslice/core/codec/quantity.hpp"
#include "gpuslice/core/errors.hpp"

namespace gpuslice::core::codec {

namespace {

const std::string* find(const TextMap& m, std::string_view key) {
  auto it = m.find(key);
  return it == m.end() ? nullptr : &it->second;
}

template <typename T>
std::optional<T> parse_number(std::string_view text) {
  T v{};
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || ptr != text.data() + text.size() || text.empty()) return std::nullopt;
  return v;
}

// strconv.ParseFloat: decimal, scientific and hex notation, inf and NaN;
// no surrounding blanks.
std::optional<double> parse_go_float(const std::string& text) {
  if (text.empty() || std::isspace(static_cast<unsigned char>(text.front()))) return std::nullopt;
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size() || (errno == ERANGE && std::isinf(v))) return std::nullopt;
  return v;
}

std::array<unsigned char, 32> sha256(std::string_view text) {
  std::array<unsigned char, 32> digest{};
  unsigned int size = 0;
  if (EVP_Digest(text.data(), text.size(), digest.data(), &size, EVP_sha256(), nullptr) != 1 ||
      size != digest.size())
    throw std::runtime_error("sha256 failed");
  return digest;
}

std::string hex(const unsigned char* bytes, size_t n) {
  std::string out;
  for (size_t i = 0; i < n; ++i) out += fmt::format("{:02x}", bytes[i]);
  return out;
}

// A UUID (version 5 layout) from a name: KAI draws random ones; gpuslice's
// must not change between runs.
std::string uuid_of(std::string_view name) {
  auto d = sha256(name);
  d[6] = static_cast<unsigned char>((d[6] & 0x0f) | 0x50);
  d[8] = static_cast<unsigned char>((d[8] & 0x3f) | 0x80);
  const std::string h = hex(d.data(), 16);
  return fmt::format("{}-{}-{}-{}-{}", h.substr(0, 8), h.substr(8, 4), h.substr(12, 4), h.substr(16, 4),
                     h.substr(20));
}

bool has_whole_gpu_limit(const PodFacts& pod) {
  for (const auto* list : {&pod.containers, &pod.init_containers})
    for (const auto& c : *list)
      if (c.limits.contains("nvidia.com/gpu")) return true;
  return false;
}

}  // namespace

KaiShare decode_kai_share(const PodFacts& pod) {
  // gpu_request_validator.go ValidateGpuRequests, in its order.
  const std::string* fraction = find(pod.annotations, kKaiGpuFraction);
  const std::string* memory = find(pod.annotations, kKaiGpuMemory);
  const std::string* count = find(pod.annotations, kKaiNumDevices);
  const bool whole = has_whole_gpu_limit(pod);
  if (fraction && whole)
    throw CodecError("cannot have both GPU fraction request and whole GPU resource request/limit");
  if (memory && (fraction || whole)) throw CodecError("cannot request both GPU and GPU memory");
  if (count && !(fraction || memory))
    throw CodecError(
        "cannot request multiple fractional devices without specifying fraction portion or gpu-memory");
  KaiShare share;
  if (memory) {
    const auto v = parse_number<uint64_t>(*memory);
    if (!v || *v == 0 || *v > static_cast<uint64_t>(std::numeric_limits<int32_t>::max()))
      throw CodecError("gpu-memory annotation value must be a positive integer greater than 0");
    share.memory_mib = static_cast<int64_t>(*v);
  }
  if (fraction) {
    const auto v = parse_go_float(*fraction);
    // As Go compares: NaN passes here and fails as a quantity below.
    if (!v || *v <= 0 || *v >= 1)
      throw CodecError("gpu-fraction annotation value must be a positive number smaller than 1.0");
    try {
      parse_quantity_milli(*fraction);
    } catch (const CodecError&) {
      throw CodecError(
          fmt::format("gpu-fraction annotation value must be a float written with a decimal point or a "
                      "scientific notation "
                      ".given value: {}",
                      *fraction));
    }
    share.fraction = *v;
  }
  if (count) {
    const auto v = parse_number<uint64_t>(*count);
    if (!v || *v == 0)
      throw CodecError("fraction count annotation value must be a positive integer greater than 0");
    if (*v > 1024) throw CodecError(fmt::format("{} {} is unreasonably many", kKaiNumDevices, *v));
    share.count = static_cast<int32_t>(*v);
  }
  if (const std::string* name = find(pod.annotations, kKaiContainerName)) {
    const auto named = [&](const ContainerResources& c) { return c.name == *name; };
    if (std::none_of(pod.containers.begin(), pod.containers.end(), named) &&
        std::none_of(pod.init_containers.begin(), pod.init_containers.end(), named))
      throw CodecError(fmt::format("{}: no container is named '{}'", kKaiContainerName, *name));
    share.container = *name;
  }
  return share;
}

bool apply_kai_gpu_labels(Node& node, const TextMap& labels, std::optional<int64_t> allocatable_gpus) {
  int64_t gpus = allocatable_gpus.value_or(0);
  if (!allocatable_gpus) {
    if (const std::string* c = find(labels, kGfdGpuCount)) {
      const auto v = parse_number<int64_t>(*c);
      if (!v || *v < 0) throw CodecError(fmt::format("label {}: '{}' is not a GPU count", kGfdGpuCount, *c));
      gpus = *v;
    }
  }
  if (gpus <= 0) return false;
  if (gpus > 1024) throw CodecError(fmt::format("{} GPUs on one node is unreasonably many", gpus));
  const std::string* m = find(labels, kGfdGpuMemory);
  if (!m)
    throw CodecError(
        fmt::format("label {} missing: KAI reads every GPU's memory from it (it would assume 100 MiB, "
                    "which gpuslice does not model)",
                    kGfdGpuMemory));
  auto mib = parse_number<int64_t>(*m);
  if (!mib || *mib < 100)
    throw CodecError(
        fmt::format("label {}: '{}' is not a GPU memory of at least 100 MiB", kGfdGpuMemory, *m));
  if (*mib >= int64_t{1024} * 1024) *mib /= int64_t{1024} * 1024;  // gpu-feature-discovery#26: bytes
  const std::string* product = find(labels, kGfdGpuProduct);
  node.devices.clear();
  for (int64_t i = 0; i < gpus; ++i)
    node.devices.push_back(healthy_card(fmt::format("{}-gpu{}", node.name, i), static_cast<int>(i),
                                        product ? *product : "NVIDIA", 10, *mib));
  return true;
}

std::vector<std::string> kai_groups_of(const TextMap& labels) {
  std::vector<std::string> groups;
  const std::string prefix = std::string(kKaiGroupLabel) + "/";
  if (const std::string* g = find(labels, kKaiGroupLabel)) groups.push_back(*g);
  for (const auto& [key, value] : labels)
    if (key.starts_with(prefix) && std::find(groups.begin(), groups.end(), value) == groups.end())
      groups.push_back(value);
  return groups;
}

std::optional<int> kai_reserved_card(const Node& node, std::string_view annotation) {
  for (size_t i = 0; i < node.devices.size(); ++i)
    if (node.devices[i].uuid == annotation) return static_cast<int>(i);
  if (auto index = parse_number<int>(annotation))
    for (size_t i = 0; i < node.devices.size(); ++i)
      if (node.devices[i].index == *index) return static_cast<int>(i);
  return std::nullopt;
}

std::string kai_reservation_pod_name(std::string_view node, std::string_view group) {
  const auto d = sha256(fmt::format("{}/{}", node, group));
  return "gpu-reservation-" + hex(d.data(), 8);
}

KaiBinding kai_binding(const Node& node, const PodRequest& pod, const PodAllocation& allocation,
                       const std::map<int, std::string>& groups_by_card) {
  KaiBinding b;
  const ContainerRequest* c = pod.first_device_container();
  if (!c) return b;
  const bool shared = c->memory_fraction > 0 || c->memory_mib > 0;
  b.received_type = shared ? "Fraction" : "Regular";
  if (!shared) return b;
  for (const auto& container : allocation.containers)
    for (const DeviceGrant& g : container) {
      std::string group;
      if (auto it = groups_by_card.find(g.device); it != groups_by_card.end()) {
        group = it->second;
      } else {
        const Device& d = node.devices[static_cast<size_t>(g.device)];
        group = uuid_of(fmt::format("{}/{}/{}/{}", node.name, pod.ns, pod.name, d.uuid));
        b.reservation_pods.push_back(fmt::format(
            "apiVersion: v1\nkind: Pod\nmetadata:\n  name: {}\n  namespace: {}\n  labels:\n    app: {}\n    "
            "{}: {}\n"
            "  annotations:\n    karpenter.sh/do-not-disrupt: \"true\"\n    {}: {}\nspec:\n  nodeName: {}\n"
            "  containers:\n  - name: resource-reservation\n    resources:\n      limits: {{nvidia.com/gpu: "
            "1}}\n"
            "      requests: {{nvidia.com/gpu: 1}}\n",
            kai_reservation_pod_name(node.name, group), kKaiReservationNamespace, kKaiReservationNamespace,
            kKaiGroupLabel, group, kKaiGpuIndexAnnotation, d.uuid, node.name));
      }
      b.groups.push_back(group);
      if (c->count > 1)
        b.labels.emplace_back(fmt::format("{}/{}", kKaiGroupLabel, group), group);
      else
        b.labels.emplace_back(std::string(kKaiGroupLabel), group);
    }
  return b;
}

}  // namespace gpuslice::core::codec
