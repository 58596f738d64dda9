#include "gpuslice/core/request_shape.hpp"

#include <algorithm>
#include <bit>
#include <cstring>
#include <string_view>

namespace gpuslice::core {

namespace {

bool same_container(const ContainerRequest& a, const ContainerRequest& b) {
  return a.count == b.count && a.memory_mib == b.memory_mib && a.memory_percent == b.memory_percent &&
         a.memory_bytes == b.memory_bytes && a.memory_fraction == b.memory_fraction && a.cores == b.cores &&
         a.vendor == b.vendor;
}

bool same_containers(const std::vector<ContainerRequest>& a, const std::vector<ContainerRequest>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (!same_container(a[i], b[i])) return false;
  return true;
}

// A short mix per field (rotate, xor, multiply): requests are hashed once
// per placement, and same_shape settles any collision.
struct Hasher {
  uint64_t h = 0x84222325cbf29ce4ULL;
  void add(uint64_t v) { h = (std::rotl(h, 23) ^ v) * 0x9e3779b97f4a7c15ULL; }
  // A string adds its length and first bytes: enough to part the strings
  // requests carry (vendors, policies, types); same_shape decides the rest.
  void add(std::string_view s) {
    uint64_t head = 0;
    if (!s.empty()) std::memcpy(&head, s.data(), std::min(s.size(), sizeof head));
    add(s.size());
    add(head);
  }
  void add(const std::vector<std::string>& list) {
    add(list.size());
    for (const auto& s : list) add(std::string_view(s));
  }
  void add(const std::vector<ContainerRequest>& list) {
    add(list.size());
    for (const auto& c : list) {
      add(static_cast<uint64_t>(static_cast<uint32_t>(c.count)) << 32 | static_cast<uint32_t>(c.cores));
      add(static_cast<uint64_t>(c.memory_mib));
      add(static_cast<uint64_t>(c.memory_percent));
      add(static_cast<uint64_t>(c.memory_bytes) ^ std::bit_cast<uint64_t>(c.memory_fraction));
      add(std::string_view(c.vendor));
    }
  }
};

}  // namespace

bool same_shape(const PodRequest& a, const PodRequest& b) {
  const auto& sa = a.selectors;
  const auto& sb = b.selectors;
  return a.host == b.host && a.weights == b.weights && same_containers(a.containers, b.containers) &&
         same_containers(a.init_containers, b.init_containers) && a.gpu_policy == b.gpu_policy &&
         a.node_policy == b.node_policy && sa.numa_bind == sb.numa_bind && sa.vgpu_mode == sb.vgpu_mode &&
         sa.use_types == sb.use_types && sa.nouse_types == sb.nouse_types && sa.use_uuids == sb.use_uuids &&
         sa.nouse_uuids == sb.nouse_uuids && a.allowed_models == b.allowed_models &&
         a.gpu_isolation_provider == b.gpu_isolation_provider;
}

uint64_t shape_hash(const PodRequest& pod) {
  Hasher h;
  h.add(static_cast<uint64_t>(pod.host.cpu_milli));
  h.add(static_cast<uint64_t>(pod.host.memory_mib));
  h.add(pod.containers);
  h.add(pod.init_containers);
  h.add(std::string_view(pod.gpu_policy));
  h.add(std::string_view(pod.node_policy));
  const auto& s = pod.selectors;
  h.add(s.use_types);
  h.add(s.nouse_types);
  h.add(s.use_uuids);
  h.add(s.nouse_uuids);
  h.add(static_cast<uint64_t>(s.numa_bind));
  h.add(std::string_view(s.vgpu_mode));
  h.add(static_cast<uint64_t>(pod.weights.slot));
  h.add(static_cast<uint64_t>(pod.weights.core));
  h.add(static_cast<uint64_t>(pod.weights.memory));
  h.add(pod.allowed_models);
  h.add(std::string_view(pod.gpu_isolation_provider));
  return h.h ^ (h.h >> 29);
}

uint32_t RequestShapes::id(const PodRequest& pod) {
  auto& ids = by_hash_[shape_hash(pod)];
  for (uint32_t id : ids)
    if (same_shape(representatives_[id], pod)) return id;
  const auto id = static_cast<uint32_t>(representatives_.size());
  representatives_.push_back(pod);
  ids.push_back(id);
  return id;
}

}  // namespace gpuslice::core
