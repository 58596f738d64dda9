#include "gpuslice/core/dialects/koordinator/codec.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <limits>
#include <nlohmann/json.hpp>

#include "gpuslice/core/codec/quantity.hpp"
#include "gpuslice/core/errors.hpp"

namespace gpuslice::core::codec {

namespace {

constexpr std::string_view kNvidiaGpu = "nvidia.com/gpu";
constexpr std::string_view kKoordGpu = "koordinator.sh/gpu";
constexpr std::string_view kGpuShared = "koordinator.sh/gpu.shared";
constexpr std::string_view kGpuCore = "koordinator.sh/gpu-core";
constexpr std::string_view kGpuMemory = "koordinator.sh/gpu-memory";
constexpr std::string_view kGpuMemoryRatio = "koordinator.sh/gpu-memory-ratio";

// DeviceResourceFlags for the GPU device type (device_resources.go / utils.go).
enum Flag : unsigned {
  NvidiaGPU = 1 << 0,
  AMDGPU = 1 << 1,
  HygonDCU = 1 << 2,
  KoordGPU = 1 << 3,
  GPUShared = 1 << 4,
  GPUCore = 1 << 5,
  GPUMemory = 1 << 6,
  GPUMemoryRatio = 1 << 7,
  HuaweiNPUCore = 1 << 8,
  HuaweiNPUCPU = 1 << 9,
  HuaweiNPUDVPP = 1 << 10,
};

struct GpuResource {
  std::string_view name;
  unsigned flag;
};
// DeviceResourceNames[gpu]
constexpr std::array<GpuResource, 11> kGpuResources = {{{kNvidiaGpu, NvidiaGPU},
                                                        {"amd.com/gpu", AMDGPU},
                                                        {"dcu.com/gpu", HygonDCU},
                                                        {kKoordGpu, KoordGPU},
                                                        {kGpuShared, GPUShared},
                                                        {kGpuCore, GPUCore},
                                                        {kGpuMemory, GPUMemory},
                                                        {kGpuMemoryRatio, GPUMemoryRatio},
                                                        {"huawei.com/npu-core", HuaweiNPUCore},
                                                        {"huawei.com/npu-cpu", HuaweiNPUCPU},
                                                        {"huawei.com/npu-dvpp", HuaweiNPUDVPP}}};

// ValidatePercentageResource: over 100 only in whole hundreds.
bool valid_percentage(int64_t v) { return !(v > 100 && v % 100 != 0); }

// ValidDeviceResourceCombinations (GPU entries), with their validators.
enum class Check { True, Percentage, Shared, HuaweiShared };
std::optional<Check> combination_check(unsigned c) {
  switch (c) {
    case NvidiaGPU:
    case AMDGPU:
    case HygonDCU:
    case KoordGPU:
      return Check::True;
    case GPUMemory:
    case GPUMemoryRatio:
    case GPUCore | GPUMemory:
    case GPUCore | GPUMemoryRatio:
    case HuaweiNPUCore | GPUMemoryRatio:
      return Check::Percentage;
    case GPUShared | GPUMemory:
    case GPUShared | GPUMemoryRatio:
    case GPUShared | GPUCore | GPUMemory:
    case GPUShared | GPUCore | GPUMemoryRatio:
      return Check::Shared;
    case GPUShared | HuaweiNPUCore | HuaweiNPUCPU | GPUMemory:
    case GPUShared | HuaweiNPUCore | HuaweiNPUCPU | HuaweiNPUDVPP | GPUMemory:
      return Check::HuaweiShared;
    default:
      return std::nullopt;
  }
}

using Values = std::map<std::string, int64_t, std::less<>>;

std::optional<int64_t> value_of(const Values& v, std::string_view name) {
  auto it = v.find(name);
  if (it == v.end()) return std::nullopt;
  return it->second;
}

bool combination_valid(Check check, const Values& v) {
  const auto shared = value_of(v, kGpuShared);
  const auto core = value_of(v, kGpuCore);
  const auto ratio = value_of(v, kGpuMemoryRatio);
  switch (check) {
    case Check::True:
      return true;
    case Check::Percentage:
      return (!core || valid_percentage(*core)) && (!ratio || valid_percentage(*ratio));
    case Check::Shared: {
      // ValidateMultiple and ValidateLessThan100Times against gpu.shared.
      auto fits = [&](const std::optional<int64_t>& x) {
        return !x || (*x % *shared == 0 && *x / *shared <= 100);
      };
      return shared && fits(core) && fits(ratio);
    }
    case Check::HuaweiShared:
      return false;  // not reached: Huawei NPUs are refused before
  }
  return false;
}

// Kubernetes' effective pod request (resourceapi.PodRequests): app
// containers summed, each init container a floor.
int64_t pod_value(const PodFacts& pod, std::string_view resource) {
  auto read = [&](const ContainerResources& c, const char* list) -> int64_t {
    const std::string* text = c.request(resource);
    if (!text) return 0;
    try {
      return parse_quantity_value(*text);
    } catch (const CodecError& e) {
      throw CodecError(fmt::format("{}[{}] resources {}: {}", list, c.name, resource, e.what()));
    }
  };
  int64_t sum = 0;
  for (const auto& c : pod.containers) sum += read(c, "containers");
  for (const auto& c : pod.init_containers) sum = std::max(sum, read(c, "initContainers"));
  return sum;
}

}  // namespace

std::optional<ContainerRequest> decode_koordinator_request(const PodFacts& pod) {
  for (std::string_view a :
       {"scheduling.koordinator.sh/device-allocate-hint", "scheduling.koordinator.sh/device-joint-allocate",
        "scheduling.koordinator.sh/gpu-partition-spec"})
    if (pod.annotations.contains(a))
      throw CodecError(fmt::format("annotation {} is not modelled by gpuslice (docs/dialects.md)", a));
  Values values;
  unsigned combination = 0;
  for (const auto& r : kGpuResources) {
    const int64_t v = pod_value(pod, r.name);
    if (v == 0) continue;  // quotav1.RemoveZeros
    if (v < 0) throw CodecError(fmt::format("resource {} must not be negative", r.name));
    values[std::string(r.name)] = v;
    combination |= r.flag;
  }
  if (values.empty()) return std::nullopt;
  if (combination & (AMDGPU | HygonDCU | HuaweiNPUCore | HuaweiNPUCPU | HuaweiNPUDVPP))
    throw CodecError("AMD, Hygon and Huawei devices are not modelled by gpuslice (NVIDIA GPUs only)");
  if (auto gpu = value_of(values, kKoordGpu); gpu && !valid_percentage(*gpu))
    throw CodecError(fmt::format("invalid resource unit {}: {}", kKoordGpu, *gpu));
  const auto check = combination_check(combination);
  if (!check || !combination_valid(*check, values)) {
    std::vector<std::string> names;
    for (const auto& [name, v] : values)
      names.push_back(name);  // sorted (Koordinator prints them in map order)
    throw CodecError(fmt::format("invalid resource device requests: [{}]", fmt::join(names, " ")));
  }
  // ResourceCombinationsMapper, then calcDesiredRequestsAndCountForGPU.
  std::optional<int64_t> core = value_of(values, kGpuCore), ratio = value_of(values, kGpuMemoryRatio),
                         memory = value_of(values, kGpuMemory);
  if (combination == NvidiaGPU) core = ratio = 100 * values.at(std::string(kNvidiaGpu));
  if (combination == KoordGPU) core = ratio = values.at(std::string(kKoordGpu));
  int64_t desired = 1;
  if (auto shared = value_of(values, kGpuShared); shared && *shared > 0)
    desired = *shared;
  else if (ratio && *ratio > 100 && *ratio % 100 == 0)
    desired = *ratio / 100;
  if (desired > 1024) throw CodecError(fmt::format("{} GPUs is unreasonably many", desired));
  ContainerRequest c;
  c.count = static_cast<int32_t>(desired);
  if (core) {
    if (*core / desired > std::numeric_limits<int32_t>::max())
      throw CodecError(fmt::format("{} {} is unreasonably large", kGpuCore, *core));
    c.cores = static_cast<int32_t>(*core / desired);
  }
  if (ratio)
    c.memory_percent = static_cast<int32_t>(*ratio / desired);
  else if (memory)
    c.memory_bytes = *memory / desired;
  return c;
}

void apply_koordinator_device_cr(Node& node, const TextMap& node_labels, const KoordinatorDeviceCr& cr,
                                 std::vector<std::string>& warnings) {
  auto label = [](const TextMap& m, std::string_view key) -> std::string {
    auto it = m.find(key);
    return it == m.end() ? std::string() : it->second;
  };
  node.model = label(node_labels, kKoordGpuModel);
  node.gpu_isolation_provider = label(node_labels, kKoordIsolationProvider);
  const std::string vendor_label = label(node_labels, kKoordGpuVendor);
  const std::string vendor = vendor_label.empty() || vendor_label == "nvidia" ? "NVIDIA" : vendor_label;
  node.devices.clear();
  for (size_t i = 0; i < cr.devices.size(); ++i) {
    const KoordinatorDeviceInfo& info = cr.devices[i];
    if (info.type != "gpu") continue;  // RDMA and FPGA play no part in GPU sharing
    const std::string field = fmt::format("spec.devices[{}]", i);
    if (!info.minor) throw CodecError(field + ".minor: a GPU needs its minor");
    if (*info.minor < 0) throw CodecError(field + ".minor: must not be negative");
    for (const Device& d : node.devices)
      if (d.index == *info.minor)
        throw CodecError(fmt::format("{}.minor: minor {} is listed twice", field, *info.minor));
    Device d;
    d.uuid = info.uuid;
    d.index = *info.minor;
    d.type = node.model.empty() ? "NVIDIA" : "NVIDIA-" + node.model;
    d.vendor = vendor;
    d.slots = 10;
    d.healthy = info.health;
    d.numa = info.numa;
    d.pcie = info.has_topology ? info.pcie : "";
    auto quantity = [&](std::string_view name) -> std::optional<int64_t> {
      auto it = info.resources.find(name);
      if (it == info.resources.end()) return std::nullopt;
      try {
        return parse_quantity_value(it->second);
      } catch (const CodecError& e) {
        throw CodecError(fmt::format("{}.resources.{}: {}", field, name, e.what()));
      }
    };
    d.cores = static_cast<int32_t>(std::clamp<int64_t>(quantity(kGpuCore).value_or(0), 0, 100000));
    const int64_t bytes = quantity(kGpuMemory).value_or(0);
    if (bytes < 0) throw CodecError(fmt::format("{}.resources.{}: must not be negative", field, kGpuMemory));
    d.memory_mib = bytes / DeviceUsage::kMiB;
    if (bytes % DeviceUsage::kMiB != 0)
      warnings.push_back(
          fmt::format("node {} GPU minor {}: {} is {} bytes, counted as {} MiB (whole MiB only)", node.name,
                      d.index, kGpuMemory, bytes, d.memory_mib));
    if (auto ratio = quantity(kGpuMemoryRatio); info.health && ratio != 100)
      throw CodecError(
          fmt::format("{}.resources.{}: gpuslice models a ratio total of 100 (koordlet's), not {}", field,
                      kGpuMemoryRatio, ratio ? std::to_string(*ratio) : std::string("none")));
    node.devices.push_back(std::move(d));
  }
  // The partition table of the Device CR, else the built-in one by model;
  // honour comes from the Device CR's label with its own table, else from
  // the Node's (allocator_gpu.go Allocate).
  node.gpu_partitions.clear();
  if (auto it = cr.annotations.find(kKoordPartitions); it != cr.annotations.end() && !it->second.empty()) {
    const std::string field = fmt::format("metadata.annotations.{}", kKoordPartitions);
    nlohmann::json table;
    try {
      table = nlohmann::json::parse(it->second);
    } catch (const nlohmann::json::exception& e) {
      throw CodecError(fmt::format("{}: not JSON ({})", field, e.what()));
    }
    if (!table.is_object()) throw CodecError(field + ": expected an object of GPU counts");
    for (const auto& [count, partitions] : table.items()) {
      if (!partitions.is_array()) throw CodecError(fmt::format("{}[{}]: expected a list", field, count));
      for (const auto& p : partitions) {
        GpuPartition g;
        g.allocation_score = 0;  // omitted in JSON: Go's zero value
        try {
          g.minors = p.at("minors").get<std::vector<int>>();
          if (p.contains("allocationScore")) g.allocation_score = p.at("allocationScore").get<int>();
          if (p.contains("ringBusBandwidth"))
            g.ring_bus_bandwidth = parse_quantity_value(p.at("ringBusBandwidth").get<std::string>());
        } catch (const std::exception& e) {
          throw CodecError(fmt::format("{}[{}]: {}", field, count, e.what()));
        }
        if (std::to_string(g.minors.size()) != count)
          throw CodecError(fmt::format("{}[{}]: a partition of {} minors listed under {} GPUs", field, count,
                                       g.minors.size(), count));
        node.gpu_partitions.push_back(std::move(g));
      }
    }
    node.gpu_partition_honor = label(cr.labels, kKoordPartitionPolicy) == "Honor";
  } else {
    node.gpu_partition_honor = label(node_labels, kKoordPartitionPolicy) == "Honor";
  }
}

std::vector<KoordinatorGrantText> decode_device_allocated(std::string_view json) {
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(json);
  } catch (const nlohmann::json::exception& e) {
    throw CodecError(fmt::format("not JSON ({})", e.what()));
  }
  if (!doc.is_object()) throw CodecError("expected an object of device types");
  std::vector<KoordinatorGrantText> out;
  if (!doc.contains("gpu")) return out;
  const auto& list = doc.at("gpu");
  if (!list.is_array()) throw CodecError("gpu: expected a list");
  for (size_t i = 0; i < list.size(); ++i) {
    const auto& e = list[i];
    KoordinatorGrantText g;
    try {
      g.minor = e.at("minor").get<int>();
      if (e.contains("id")) g.id = e.at("id").get<std::string>();
      if (e.contains("resources")) {
        for (const auto& [name, q] : e.at("resources").items()) {
          const std::string text = q.is_string() ? q.get<std::string>() : q.dump();
          const int64_t v = parse_quantity_value(text);
          if (name == kGpuCore)
            g.core = v;
          else if (name == kGpuMemory)
            g.bytes = v;
          else if (name == kGpuMemoryRatio)
            g.ratio = v;
        }
      }
    } catch (const std::exception& ex) {
      throw CodecError(fmt::format("gpu[{}]: {}", i, ex.what()));
    }
    out.push_back(std::move(g));
  }
  return out;
}

PodAllocation resolve_device_allocated(const std::vector<KoordinatorGrantText>& grants, const Node& node,
                                       size_t containers, size_t init_count, size_t device_container,
                                       std::vector<std::string>& warnings) {
  PodAllocation a;
  a.containers.assign(std::max<size_t>(containers, device_container + 1), {});
  a.init_count = init_count;
  for (const auto& g : grants) {
    const auto it = std::find_if(node.devices.begin(), node.devices.end(),
                                 [&](const Device& d) { return d.index == g.minor; });
    if (it == node.devices.end()) {
      warnings.push_back(fmt::format("GPU minor {} is not on node '{}': not counted", g.minor, node.name));
      continue;
    }
    // What the pod holds, as the annotation says (no ratio filled in:
    // DeviceShare's pod cache adds the resources as written).
    DeviceGrant d;
    d.device = static_cast<int>(it - node.devices.begin());
    d.cores =
        static_cast<int32_t>(std::clamp<int64_t>(g.core.value_or(0), 0, std::numeric_limits<int32_t>::max()));
    const int64_t bytes = std::max<int64_t>(0, g.bytes.value_or(0));
    d.memory_mib = bytes / DeviceUsage::kMiB;
    d.memory_sub_mib = static_cast<int32_t>(bytes % DeviceUsage::kMiB);
    d.memory_ratio = static_cast<int32_t>(std::clamp<int64_t>(g.ratio.value_or(0), 0, 100000));
    a.containers[device_container].push_back(d);
  }
  return a;
}

std::string encode_device_allocated(const PodAllocation& allocation, const Node& node) {
  std::vector<std::string> entries;
  for (const auto& container : allocation.containers)
    for (const DeviceGrant& g : container) {
      const Device& d = node.devices[static_cast<size_t>(g.device)];
      const int64_t card_bytes = d.memory_mib * DeviceUsage::kMiB;
      const int32_t ratio =
          g.memory_ratio == kRatioFromMemory ? memory_ratio_of(g.memory_bytes(), card_bytes) : g.memory_ratio;
      // Keys in Go's map order for JSON: sorted.
      std::vector<std::string> resources;
      if (g.cores > 0)
        resources.push_back(fmt::format("\"{}\":\"{}\"", kGpuCore, format_quantity_decimal_si(g.cores)));
      resources.push_back(
          fmt::format("\"{}\":\"{}\"", kGpuMemory, format_quantity_binary_si(g.memory_bytes())));
      resources.push_back(fmt::format("\"{}\":\"{}\"", kGpuMemoryRatio, format_quantity_decimal_si(ratio)));
      std::string entry =
          fmt::format("{{\"minor\":{},\"resources\":{{{}}}", d.index, fmt::join(resources, ","));
      if (!d.uuid.empty()) entry += fmt::format(",\"id\":{}", nlohmann::json(d.uuid).dump());
      entries.push_back(entry + "}");
    }
  return fmt::format("{{\"gpu\":[{}]}}", fmt::join(entries, ","));
}

}  // namespace gpuslice::core::codec
