#include "gpuslice/core/fit.hpp"

#include <algorithm>
#include <cctype>
#include <optional>
#include <stdexcept>

#include "gpuslice/core/quota.hpp"
#include "gpuslice/core/topology.hpp"

namespace gpuslice::core {

namespace {

bool contains_upper(std::string_view haystack, std::string_view needle) {
  if (needle.size() > haystack.size()) return false;
  for (size_t i = 0; i + needle.size() <= haystack.size(); ++i) {
    size_t j = 0;
    while (j < needle.size() && std::toupper(static_cast<unsigned char>(haystack[i + j])) ==
                                    std::toupper(static_cast<unsigned char>(needle[j])))
      ++j;
    if (j == needle.size()) return true;
  }
  return false;
}

std::string_view trimmed(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// HAMi CheckType: case-insensitive substring of the card type.
bool type_allowed(const Selectors& sel, const Device& dev) {
  auto any_match = [&](const std::vector<std::string>& list) {
    return std::any_of(list.begin(), list.end(), [&](const std::string& t) {
      auto v = trimmed(t);
      return !v.empty() && contains_upper(dev.type, v);
    });
  };
  if (!sel.use_types.empty() && !any_match(sel.use_types)) return false;
  if (!sel.nouse_types.empty() && any_match(sel.nouse_types)) return false;
  if (!sel.vgpu_mode.empty() && sel.vgpu_mode.find(dev.mode) == std::string::npos) return false;
  return true;
}

// HAMi CheckUUID: exact match.
bool uuid_allowed(const Selectors& sel, const Device& dev) {
  auto any_match = [&](const std::vector<std::string>& list) {
    return std::any_of(list.begin(), list.end(),
                       [&](const std::string& u) { return trimmed(u) == dev.uuid; });
  };
  if (!sel.use_uuids.empty() && !any_match(sel.use_uuids)) return false;
  if (!sel.nouse_uuids.empty() && any_match(sel.nouse_uuids)) return false;
  return true;
}

bool is_cordoned(const Node& node, const Device& dev) {
  return std::find(node.cordoned_uuids.begin(), node.cordoned_uuids.end(), dev.uuid) !=
         node.cordoned_uuids.end();
}

std::optional<Reason> pre_numa_check(const Node& node, const Device& dev, const Selectors& sel) {
  if (!dev.healthy) return Reason::CardNotHealth;
  if (is_cordoned(node, dev)) return Reason::CardCordoned;
  if (!type_allowed(sel, dev)) return Reason::CardTypeMismatch;
  return std::nullopt;
}

// HAMi v2.10 score.go isMIGRequest: an NVIDIA request whose vgpu-mode
// allows "mig" (or says nothing) on a node with a MIG-mode card. Such a
// request may take several instances of one card, so the count of cards
// does not bound it (PR #2724).
bool is_mig_request(const Node& node, const PodRequest& pod, const ContainerRequest& req) {
  if (req.vendor != "NVIDIA") return false;
  if (!pod.selectors.vgpu_mode.empty() && pod.selectors.vgpu_mode.find("mig") == std::string::npos)
    return false;
  return std::any_of(node.devices.begin(), node.devices.end(),
                     [](const Device& d) { return d.vendor == "NVIDIA" && d.is_mig(); });
}

// HAMi v2.10 CustomFilterRule on a MIG-mode card: this container's earlier
// picks on the card take their instances first, in pick order, then one
// more instance holding `memreq` must find a profile and a free placement.
bool mig_filter(const Device& dev, int d, const DeviceUsage& used, const std::vector<DeviceGrant>& picks,
                int64_t memreq) {
  uint32_t taken = mig_taken_mask(used.mig_slices);
  for (const auto& p : picks) {
    if (p.device != d) continue;
    auto choice = select_mig_candidate(dev.mig_profiles, taken, p.memory_mib);
    if (!choice) return false;
    taken |= mig_placement_mask(choice->placement);
  }
  return select_mig_candidate(dev.mig_profiles, taken, memreq).has_value();
}

// HAMi v2.10 AddResourceUsage on a MIG-mode card: the instance is chosen
// again against what the card holds now (Fit chose the same way, so they
// agree) and the grant carries the profile's memory and compute, not the
// request's.
void take_mig_instance(const Device& dev, const DeviceUsage& used, DeviceGrant& grant) {
  auto choice = select_mig_candidate(dev.mig_profiles, mig_taken_mask(used.mig_slices), grant.memory_mib);
  if (!choice) throw std::logic_error("MIG profile and placement allocation failed");
  const MigProfile& profile = dev.mig_profiles[static_cast<size_t>(choice->profile)];
  grant.memory_mib = profile.memory_mib;
  grant.cores = profile.cores;
  grant.mig_profile = choice->profile;
  grant.mig_placement = choice->placement;
}

// One container on one node (HAMi fitInDevices + nvidia Fit). On success
// the picks are charged to `usage`.
bool fit_container(const NodeView& node, std::vector<DeviceUsage>& usage, const PodRequest& pod,
                   const ContainerRequest& req, const GpuPolicy& policy, FitScratch& s,
                   std::vector<DeviceGrant>& out, Refusal& refusal, const QuotaHeadroom* quota,
                   const PodAllocation& so_far, size_t index) {
  const Node& n = *node.node;
  // Only the request's vendor's cards take part (HAMi getNodeResources).
  const int cards = static_cast<int>(std::count_if(n.devices.begin(), n.devices.end(),
                                                   [&](const Device& d) { return d.vendor == req.vendor; }));
  if (req.count > cards && !is_mig_request(n, pod, req)) {
    refusal.add_node_wide(Reason::NodeInsufficientDevice);
    return false;
  }
  order_devices(node, usage, req, pod.weights, policy, pod.selectors.numa_bind, s.order);

  ReasonTally tally;
  int remaining = req.count;
  int prev_numa = -1;
  const bool numa_bind = pod.selectors.numa_bind;
  s.picks.clear();
  for (int i = static_cast<int>(n.devices.size()) - 1; i >= 0; --i) {
    const int d = s.order[static_cast<size_t>(i)];
    const Device& dev = n.devices[static_cast<size_t>(d)];
    if (dev.vendor != req.vendor) continue;
    if (usage[static_cast<size_t>(d)].closed_by > 0) {
      tally.add(Reason::CardNotHealth);
      continue;
    }
    if (auto r = pre_numa_check(n, dev, pod.selectors)) {
      tally.add(*r);
      continue;
    }
    if (numa_bind && prev_numa != dev.numa) {
      // A request must be met within one NUMA node: restart the picks.
      if (remaining != req.count) tally.add(Reason::NumaNotFit, static_cast<int>(s.picks.size()));
      remaining = req.count;
      prev_numa = dev.numa;
      s.picks.clear();
    }
    if (!uuid_allowed(pod.selectors, dev)) {
      tally.add(Reason::CardUuidMismatch);
      continue;
    }
    const int64_t memreq = req.memory_on(dev.memory_mib);
    const int32_t cores = std::min<int32_t>(req.cores, 100);
    if (quota) {
      // HAMi checks the quota after slots and exclusivity, before memory:
      // the pod's total with this card, the percentage resolved on it.
      const DeviceUsage& u = usage[static_cast<size_t>(d)];
      if (dev.slots > u.slots && !(policy.mutex && u.slots > 0) &&
          !quota->admits(quota_use_with(so_far, index, s.picks, DeviceGrant{d, memreq, cores}))) {
        tally.add(Reason::ResourceQuotaNotFit);
        continue;
      }
    }
    if (auto r = capacity_check(dev, usage[static_cast<size_t>(d)], cores, memreq, policy.mutex)) {
      tally.add(*r);
      continue;
    }
    if (dev.is_mig() && !mig_filter(dev, d, usage[static_cast<size_t>(d)], s.picks, memreq)) {
      tally.add(Reason::CardMigTopologyInfeasible);
      continue;
    }
    if (remaining > 0) {
      if (!policy.topology) --remaining;
      s.picks.push_back({d, memreq, cores});
    }
    if (remaining == 0 && !policy.topology) break;
    // A MIG-mode card is tried again until it holds no further instance
    // (HAMi's i++): a multi-card request packs one card first.
    if (dev.is_mig()) ++i;
  }

  bool ok = !policy.topology && remaining == 0 && req.count > 0;
  if (policy.topology) {
    const size_t want = static_cast<size_t>(req.count);
    if (s.picks.size() == want) {
      ok = true;
    } else if (s.picks.size() > want) {
      std::vector<int> eligible;
      for (const auto& p : s.picks) eligible.push_back(p.device);
      auto chosen = choose_by_topology(n, eligible, req.count);
      // Each chosen card takes one pick of it: a MIG card may be picked
      // more than once (several instances), a card otherwise once.
      std::vector<DeviceGrant> kept;
      std::vector<bool> used(s.picks.size(), false);
      for (int c : chosen)
        for (size_t k = 0; k < s.picks.size(); ++k)
          if (!used[k] && s.picks[k].device == c) {
            used[k] = true;
            kept.push_back(s.picks[k]);
            break;
          }
      s.picks = std::move(kept);
      ok = true;
    }
  }
  if (!ok) {
    if (!s.picks.empty())
      tally.set(Reason::AllocatedCardsInsufficientRequest, static_cast<int>(s.picks.size()));
    refusal = Refusal(tally, cards);
    return false;
  }
  for (auto& p : s.picks) {
    auto& u = usage[static_cast<size_t>(p.device)];
    const Device& dev = n.devices[static_cast<size_t>(p.device)];
    if (dev.is_mig()) {
      take_mig_instance(dev, u, p);
      u.mig_slices += mig_slice_counts(p.mig_placement);
    }
    u.slots += 1;
    u.memory_mib += p.memory_mib;
    u.cores += p.cores;
  }
  out = s.picks;
  return true;
}

// kube-scheduler's NodeResourcesFit reasons for the host; empty when it has room.
Refusal host_check(const NodeView& node, const PodRequest& pod) {
  const HostShortfall short_of = host_shortfall(node, pod);
  Refusal refusal;
  if (short_of.cpu) refusal.add_node_wide(Reason::InsufficientCpu);
  if (short_of.memory) refusal.add_node_wide(Reason::InsufficientMemory);
  return refusal;
}

}  // namespace

FitResult fit_pod(const NodeView& node, const PodRequest& pod, const GpuPolicy& gpu_policy, FitScratch& s,
                  const QuotaHeadroom* quota) {
  FitResult result;
  result.refusal = host_check(node, pod);
  if (!result.refusal.empty()) return result;
  const size_t total = pod.container_count();
  result.allocation.containers.assign(total, {});
  result.allocation.init_count = pod.init_containers.size();

  // Init containers: each on a copy of the node's usage, as they run one
  // after another; the pod's charge keeps their peak (effective_charges).
  for (size_t i = 0; i < pod.init_containers.size(); ++i) {
    const auto& req = pod.init_containers[i];
    if (!req.wants_devices()) continue;
    s.usage.assign(node.usage.begin(), node.usage.end());
    if (!fit_container(node, s.usage, pod, req, gpu_policy, s, result.allocation.containers[i],
                       result.refusal, quota, result.allocation, i))
      return result;
  }
  // App containers run together: each sees what the previous ones took.
  s.usage.assign(node.usage.begin(), node.usage.end());
  for (size_t j = 0; j < pod.containers.size(); ++j) {
    const auto& req = pod.containers[j];
    if (!req.wants_devices()) continue;
    const size_t index = pod.init_containers.size() + j;
    if (!fit_container(node, s.usage, pod, req, gpu_policy, s, result.allocation.containers[index],
                       result.refusal, quota, result.allocation, index))
      return result;
  }
  result.fits = true;
  return result;
}

namespace {

// What counting a container's cards can say of fit_container's answer.
enum class CardCount : uint8_t { Enough, Short, Unsure };

// Counts the cards that pass fit_container's per-card checks (closed,
// vendor, health, cordon, type, UUID, capacity) at `usage`. Those checks
// read only the card and its usage, never the picks, and a card that passes
// is picked once: without NUMA binding or topology, fit_container fits
// exactly when req.count cards pass, in whatever order it walks them. A
// MIG-mode card that passes may give one instance or several, as the
// container's picks there allow: counting cannot say (Unsure), unless the
// other cards are enough. One that fails its checks gives none.
CardCount count_cards(const Node& n, std::span<const DeviceUsage> usage, const PodRequest& pod,
                      const ContainerRequest& req, bool mutex) {
  const int32_t cores = std::min<int32_t>(req.cores, 100);
  int found = 0;
  bool mig = false;
  for (size_t d = 0; d < n.devices.size(); ++d) {
    const Device& dev = n.devices[d];
    // Integer checks first; the string checks only on cards with room.
    if (capacity_check(dev, usage[d], cores, req.memory_on(dev.memory_mib), mutex) || usage[d].closed_by > 0)
      continue;
    if (dev.vendor != req.vendor || pre_numa_check(n, dev, pod.selectors) ||
        !uuid_allowed(pod.selectors, dev))
      continue;
    if (dev.is_mig()) {
      mig = true;
      continue;
    }
    if (++found == req.count) return CardCount::Enough;
  }
  return mig ? CardCount::Unsure : CardCount::Short;
}

}  // namespace

bool pod_fits(const NodeView& node, const PodRequest& pod, const GpuPolicy& gpu_policy, FitScratch& s) {
  const auto app_device_containers =
      std::count_if(pod.containers.begin(), pod.containers.end(),
                    [](const ContainerRequest& c) { return c.wants_devices(); });
  // Where the walk's order or the picks so far decide a card: the full fit.
  // Several app containers see each other's picks; NUMA binding restarts
  // the picks per NUMA node in the walk's order; topology chooses among
  // the picks.
  if (app_device_containers > 1 || pod.selectors.numa_bind || gpu_policy.topology)
    return fit_pod(node, pod, gpu_policy, s).fits;
  if (host_shortfall(node, pod).any()) return false;
  // Each init container fits on the node's usage alone, and so does the one
  // app container (the init containers' cards are not charged to it): one
  // short of cards refuses the pod.
  bool unsure = false;
  for (size_t i = 0; i < pod.container_count(); ++i) {
    const ContainerRequest& req = pod.container_at(i);
    if (!req.wants_devices()) continue;
    const CardCount count = count_cards(*node.node, node.usage, pod, req, gpu_policy.mutex);
    if (count == CardCount::Short) return false;
    unsure = unsure || count == CardCount::Unsure;
  }
  return !unsure || fit_pod(node, pod, gpu_policy, s).fits;
}

bool card_admits(const Node& node, size_t d, const PodRequest& pod, const ContainerRequest& request) {
  const Device& dev = node.devices[d];
  return dev.vendor == request.vendor && !pre_numa_check(node, dev, pod.selectors) &&
         uuid_allowed(pod.selectors, dev);
}

void fitting_cards(const NodeView& node, std::span<const DeviceUsage> usage, const PodRequest& pod,
                   const ContainerRequest& request, std::vector<int>& cards) {
  cards.clear();
  const Node& n = *node.node;
  // Room first: integer compares, where admits compares strings.
  for (size_t d = 0; d < n.devices.size(); ++d)
    if (card_has_room(n.devices[d], usage[d], request) && card_admits(n, d, pod, request))
      cards.push_back(static_cast<int>(d));
}

std::vector<int> fitting_cards(const NodeView& node, std::span<const DeviceUsage> usage,
                               const PodRequest& pod, const ContainerRequest& request) {
  std::vector<int> cards;
  fitting_cards(node, usage, pod, request, cards);
  return cards;
}

}  // namespace gpuslice::core
