#include "gpuslice/core/dialects/dra/fleet.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <climits>

#include "gpuslice/core/dialects/dra/allocator.hpp"
#include "gpuslice/core/dialects/dra/hami_dra.hpp"

namespace gpuslice::core::dra {
namespace {

constexpr int64_t kBytesPerMiB = int64_t(1) << 20;
// A shared device takes any number of claims: the slot count the simulator's
// HAMi checks see is set past anything a node can hold.
constexpr int32_t kSharedSlots = INT32_MAX / 2;

int64_t ceil_div(int64_t a, int64_t b) { return a <= 0 ? 0 : (a + b - 1) / b; }

const std::string* string_attribute(const Device& d, std::string_view driver, std::string_view id) {
  const Attribute* a = d.attribute(driver, id);
  return a && a->value.kind == AttributeValue::Kind::String ? &a->value.string_value : nullptr;
}

// Whether the allocator reads `dumped` as it reads the device `--policy dra`
// builds from the card (hami_dra_device): same capacities and request policies.
bool same_capacity(const Device& dumped, const std::vector<Capacity>& modelled) {
  for (const Capacity& m : modelled) {
    const Capacity* c = dumped.capacity_named(m.name.written);
    if (!c || c->value_milli != m.value_milli) return false;
    const RequestPolicy none{};
    const RequestPolicy& a = c->request_policy ? *c->request_policy : none;
    const RequestPolicy& b = m.request_policy ? *m.request_policy : none;
    const bool range_same = a.valid_range.has_value() == b.valid_range.has_value() &&
                            (!a.valid_range || (a.valid_range->min_milli == b.valid_range->min_milli &&
                                                a.valid_range->max_milli == b.valid_range->max_milli &&
                                                a.valid_range->step_milli == b.valid_range->step_milli));
    if (a.default_milli != b.default_milli || a.valid_values_milli != b.valid_values_milli || !range_same)
      return false;
  }
  return dumped.capacity.size() == modelled.size();
}

// What a capacity request names, as the claim writes it ("memory", or qualified by HAMi-DRA's domain).
std::string_view capacity_id(std::string_view written) {
  const std::string_view domain = kHamiDraDriver;
  if (written.size() > domain.size() + 1 && written.substr(0, domain.size()) == domain &&
      written[domain.size()] == '/')
    return written.substr(domain.size() + 1);
  return written;
}

// Why one request cannot be said as a HAMi container ask ("" when it can).
std::string request_problem(const DeviceRequest& r) {
  if (!r.exactly) return "firstAvailable is not modelled in a DRA fleet";
  const ExactRequest& e = *r.exactly;
  if (e.device_class != kHamiDraClass)
    return fmt::format("class '{}' is not HAMi-DRA's ({})", e.device_class, kHamiDraClass);
  if (e.mode != AllocationMode::ExactCount) return "allocationMode All is not modelled in a DRA fleet";
  if (e.admin_access) return "adminAccess is not modelled in a DRA fleet";
  ContainerRequest one_gpu;
  one_gpu.count = 1;
  const ClaimSpec webhook = *hami_dra_claim(one_gpu, 0);
  if (!e.selectors.empty() && e.selectors != webhook.requests.front().exactly->selectors)
    return "a selector beyond HAMi-DRA's class is not modelled in a DRA fleet";
  for (const auto& [name, milli] : e.capacity)
    if (capacity_id(name) != "memory" && capacity_id(name) != "cores")
      return fmt::format("capacity '{}' is not HAMi-DRA's (memory, cores)", name);
  return {};
}

// The ask's position among a pod's claims' requests (claims in order, requests in order).
std::optional<size_t> ask_of(const std::vector<ResolvedClaim>& claims, size_t claim,
                             std::string_view request) {
  size_t position = 0;
  for (size_t c = 0; c < claims.size(); ++c)
    for (const DeviceRequest& r : claims[c].spec->requests) {
      if (c == claim && r.name == request) return position;
      ++position;
    }
  return std::nullopt;
}

size_t asks_of(const std::vector<ResolvedClaim>& claims) {
  size_t n = 0;
  for (const auto& c : claims) n += c.spec->requests.size();
  return n;
}

// The pod's containers made to hold `asks` device asks after its init containers.
void ensure_containers(PodRequest& request, size_t asks, const std::vector<ResolvedClaim>& claims) {
  size_t position = 0;
  for (const auto& c : claims)
    for (const DeviceRequest& r : c.spec->requests) {
      if (position >= request.containers.size() && position < asks) {
        ContainerRequest extra;  // asks nothing until the claim's request is read onto it
        extra.name = r.name;
        request.containers.push_back(std::move(extra));
      }
      ++position;
    }
}

}  // namespace

std::string device_key(std::string_view driver, std::string_view pool, std::string_view device) {
  return fmt::format("{}/{}/{}", driver, pool, device);
}

std::optional<DeviceKey> split_device_key(std::string_view uuid) {
  // Driver names are DNS subdomains and device names DNS labels (no '/');
  // a pool name may hold '/', so the first and last '/' split the key.
  const size_t first = uuid.find('/'), last = uuid.rfind('/');
  if (first == std::string_view::npos || first == last) return std::nullopt;
  return DeviceKey{std::string(uuid.substr(0, first)), std::string(uuid.substr(first + 1, last - first - 1)),
                   std::string(uuid.substr(last + 1))};
}

SliceIndex::SliceIndex(const std::vector<ResourceSlice>& slices) {
  for (const ResourceSlice& s : slices) (s.node_name.empty() ? shared_ : by_node_[s.node_name]).push_back(&s);
}

std::vector<const ResourceSlice*> SliceIndex::for_node(const NodeInfo& node) const {
  std::vector<const ResourceSlice*> out;
  if (auto it = by_node_.find(node.name); it != by_node_.end()) out = it->second;
  out.insert(out.end(), shared_.begin(), shared_.end());
  return out;
}

std::vector<core::Device> cards_from_slices(const SliceIndex& slices, const NodeInfo& node,
                                            const std::string& source, int line,
                                            std::vector<std::string>& warnings) {
  std::vector<core::Device> cards;
  const std::vector<const ResourceSlice*> candidates = slices.for_node(node);
  if (candidates.empty()) return cards;
  std::vector<std::string> skipped;
  for (const Pool& pool : gather_pools(candidates, node)) {
    if (pool.incomplete || pool.invalid) {
      warnings.push_back(fmt::format("{}:{}: node '{}': pool '{}/{}' is {}: the allocator skips it", source,
                                     line, node.name, pool.driver, pool.name,
                                     pool.incomplete ? "incomplete" : "invalid (a device listed twice)"));
      continue;
    }
    for (const auto& slice : pool.slices)
      for (const PoolDevice& d : slice) {
        const Device& dev = *d.device;
        const Capacity* memory = dev.capacity_named("memory");
        if (pool.driver != kHamiDraDriver || !dev.allow_multiple_allocations || !memory) {
          skipped.push_back(d.key);
          continue;
        }
        core::Device card;
        card.uuid = d.key;
        card.index = static_cast<int>(cards.size());
        const std::string* product = string_attribute(dev, pool.driver, "productName");
        card.type = product ? *product : std::string(kHamiDraDriver);
        card.slots = kSharedSlots;
        card.memory_mib = memory->value_milli / 1000 / kBytesPerMiB;
        const Capacity* cores = dev.capacity_named("cores");
        card.cores = cores ? static_cast<int32_t>(cores->value_milli / 1000) : 100;
        card.healthy = true;
        if (!same_capacity(dev, hami_dra_capacity(card)))
          warnings.push_back(fmt::format(
              "{}:{}: node '{}': device '{}' publishes capacity or request policies other than "
              "HAMi-DRA's (cores 0-100 step 1, memory from 1Mi step 1Mi): allocated with HAMi-DRA's",
              source, line, node.name, d.key));
        cards.push_back(std::move(card));
      }
  }
  if (!skipped.empty())
    warnings.push_back(fmt::format(
        "{}:{}: node '{}': {} device(s) not of HAMi-DRA's shared GPUs (first '{}') are not simulated", source,
        line, node.name, skipped.size(), skipped.front()));
  return cards;
}

ClaimIndex::ClaimIndex(const DraObjects& objects) {
  for (const auto& c : objects.claims) claims_[c.namespace_name + "/" + c.name] = &c;
  for (const auto& t : objects.templates) templates_[t.namespace_name + "/" + t.name] = &t;
}

ResolvedClaims ClaimIndex::resolve(const std::string& pod_namespace,
                                   const std::vector<PodClaimRef>& refs) const {
  ResolvedClaims out;
  for (const PodClaimRef& ref : refs) {
    // A template's claim is generated with a name the pod's status records.
    const std::string claim = !ref.claim_name.empty() ? ref.claim_name : ref.generated;
    if (!claim.empty()) {
      if (auto it = claims_.find(pod_namespace + "/" + claim); it != claims_.end()) {
        const ResourceClaim& c = *it->second;
        out.claims.push_back({it->first, &c.spec, c.allocation ? &*c.allocation : nullptr, c.line});
        continue;
      }
      if (!ref.claim_name.empty()) {
        out.missing = fmt::format("ResourceClaim '{}/{}'", pod_namespace, claim);
        return out;
      }
    }
    // Not generated yet (or not in the dump): the template says what it will ask.
    if (auto it = templates_.find(pod_namespace + "/" + ref.template_name); it != templates_.end()) {
      out.claims.push_back({it->first, &it->second->spec, nullptr, it->second->line});
      continue;
    }
    out.missing = fmt::format("ResourceClaimTemplate '{}/{}'", pod_namespace, ref.template_name);
    return out;
  }
  return out;
}

std::string request_from_claims(const std::vector<ResolvedClaim>& claims, PodRequest& request) {
  for (const auto& c : claims) {
    if (!c.spec->constraints.empty()) return fmt::format("claim '{}': constraints are not modelled", c.name);
    for (const DeviceRequest& r : c.spec->requests)
      if (std::string problem = request_problem(r); !problem.empty())
        return fmt::format("claim '{}' request '{}': {}", c.name, r.name, problem);
  }
  ensure_containers(request, asks_of(claims), claims);
  size_t position = 0;
  for (const auto& c : claims)
    for (const DeviceRequest& r : c.spec->requests) {
      ContainerRequest& ask = request.containers[position++];
      ask.count = static_cast<int32_t>(r.exactly->count);
      for (const auto& [name, milli] : r.exactly->capacity) {
        // The device rounds up to its 1Mi step and 1-core step: asking the rounded value is the same.
        if (capacity_id(name) == "memory") ask.memory_mib = ceil_div(milli, 1000 * kBytesPerMiB);
        if (capacity_id(name) == "cores") ask.cores = static_cast<int32_t>(ceil_div(milli, 1000));
      }
    }
  return {};
}

std::string held_from_allocations(const std::vector<ResolvedClaim>& claims, const core::Node& node,
                                  PodRequest& request, PodAllocation& allocation) {
  ensure_containers(request, asks_of(claims), claims);
  allocation.containers.resize(request.container_count());
  allocation.init_count = request.init_containers.size();
  for (size_t c = 0; c < claims.size(); ++c) {
    if (!claims[c].allocation) continue;
    for (const DeviceResult& r : claims[c].allocation->results) {
      const std::string key = device_key(r.driver, r.pool, r.device);
      auto card = std::find_if(node.devices.begin(), node.devices.end(),
                               [&](const core::Device& d) { return d.uuid == key; });
      if (card == node.devices.end())
        return fmt::format("claim '{}' holds device '{}', which node '{}' does not have as a HAMi-DRA GPU",
                           claims[c].name, key, node.name);
      const std::string request_name = r.request.substr(0, r.request.find('/'));
      const auto ask = ask_of(claims, c, request_name);
      if (!ask)
        return fmt::format("claim '{}' allocates request '{}', which its spec does not have", claims[c].name,
                           r.request);
      DeviceGrant g;
      g.device = static_cast<int>(card - node.devices.begin());
      g.memory_mib = card->memory_mib;
      g.cores = card->cores;
      if (r.shared) {
        g.memory_mib = 0;
        g.cores = 0;
        for (const auto& [name, milli] : r.consumed_capacity) {
          if (capacity_id(name) == "memory") g.memory_mib = ceil_div(milli, 1000 * kBytesPerMiB);
          if (capacity_id(name) == "cores") g.cores = static_cast<int32_t>(ceil_div(milli, 1000));
        }
      }
      allocation.containers[request.init_containers.size() + *ask].push_back(g);
      // A claim whose spec the request model cannot say still holds what it holds.
      ContainerRequest& asked = request.containers[*ask];
      if (!asked.wants_devices()) {
        asked.memory_mib = g.memory_mib;
        asked.cores = g.cores;
      }
    }
  }
  // A request whose ask was read from its allocation asks as many cards as it holds.
  for (size_t k = 0; k < request.containers.size(); ++k)
    if (request.containers[k].count == 0 && k + request.init_containers.size() < allocation.containers.size())
      request.containers[k].count =
          static_cast<int32_t>(allocation.containers[request.init_containers.size() + k].size());
  return {};
}

std::string allocation_result_json(const core::Node& node, const PodAllocation& allocation) {
  std::string results;
  for (size_t c = 0; c < allocation.containers.size(); ++c)
    for (const DeviceGrant& g : allocation.containers[c]) {
      const std::string& uuid = node.devices[static_cast<size_t>(g.device)].uuid;
      const auto key = split_device_key(uuid);
      // A card of a HAMi fleet is named as `--policy dra` publishes it (hami_dra_device).
      const DeviceKey k =
          key ? *key : DeviceKey{kHamiDraDriver, node.name, fmt::format("hami-gpu-{}", g.device)};
      results += fmt::format(
          "{}{{\"request\":\"gpu\",\"driver\":\"{}\",\"pool\":\"{}\",\"device\":\"{}\","
          "\"consumedCapacity\":{{\"cores\":\"{}\",\"memory\":\"{}Mi\"}}}}",
          results.empty() ? "" : ",", k.driver, k.pool, k.device, g.cores, g.memory_mib);
    }
  if (results.empty()) return {};
  return fmt::format(
      "{{\"devices\":{{\"results\":[{}]}},\"nodeSelector\":{{\"nodeSelectorTerms\":[{{\"matchFields\":[{{"
      "\"key\":\"metadata.name\",\"operator\":\"In\",\"values\":[\"{}\"]}}]}}]}}}}",
      results, node.name);
}

}  // namespace gpuslice::core::dra
