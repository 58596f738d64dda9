#include "allocate.hpp"

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>

namespace gpuslice::core::koordinator {

namespace {

// Minors as a bit set, as hashMinors builds them (1 << minor in a Go int:
// a minor of 64 or more adds nothing).
uint64_t minor_bit(int minor) { return minor >= 0 && minor < 64 ? uint64_t{1} << minor : 0; }

struct Context {
  const std::vector<KoordinatorCard>& cards;
  uint64_t used = 0;   // deviceUsedMinorsHash: minors some pod holds part of
  uint64_t total = 0;  // minors with resources (removeZeroDevice)
  const KoordinatorCard* by_minor(int minor) const {
    for (const auto& c : cards)
      if (c.minor == minor) return &c;
    return nullptr;
  }
};

// ---- The partition table (allocateByPartition) ----------------------------

struct Partition {
  std::vector<int> minors;
  int score = 1;
  std::optional<int64_t> ring_bus_bandwidth;
  uint64_t hash = 0;
};
// GPU count -> partitions grouped by allocation score, lowest score first
// (GetGPUPartitionIndexer sorts them ascending), table order within a group.
using PartitionIndex = std::map<int, std::vector<std::vector<Partition>>>;

PartitionIndex index_of(const std::vector<GpuPartition>& table) {
  std::map<int, std::map<int, std::vector<Partition>>> by_count;
  for (const auto& p : table) {
    Partition q{p.minors, p.allocation_score, p.ring_bus_bandwidth, 0};
    for (int m : p.minors) q.hash |= minor_bit(m);
    by_count[static_cast<int>(p.minors.size())][p.allocation_score].push_back(std::move(q));
  }
  PartitionIndex index;
  for (auto& [count, groups] : by_count)
    for (auto& [score, partitions] : groups) index[count].push_back(std::move(partitions));
  return index;
}

// GPUPartitionIndexOfNVIDIAHopper: pairs, quads and the eight of an
// eight-GPU NVLink board.
const std::vector<GpuPartition>& hopper_table() {
  static const std::vector<GpuPartition> table = [] {
    std::vector<GpuPartition> t;
    for (int n : {1, 2, 4, 8})
      for (int first = 0; first < 8; first += n) {
        GpuPartition p;
        for (int m = first; m < first + n; ++m) p.minors.push_back(m);
        t.push_back(p);
      }
    return t;
  }();
  return table;
}

// The node's table: the Device CR's, else the built-in one for NVIDIA
// H100/H800/H20 nodes (GetDesignatedGPUPartitionIndexer), else none.
std::optional<PartitionIndex> partition_index(const Node& node) {
  if (!node.gpu_partitions.empty()) return index_of(node.gpu_partitions);
  const bool nvidia = std::all_of(node.devices.begin(), node.devices.end(),
                                  [](const Device& d) { return d.vendor == "NVIDIA"; });
  if (nvidia && (node.model == "H100" || node.model == "H800" || node.model == "H20"))
    return index_of(hopper_table());
  return std::nullopt;
}

// selectPartitionByBinPack: the partition leaving the most larger
// partitions whole (8-GPU ones weigh 10000, 4-GPU 100, 2-GPU 1). Go's
// sort.Slice is an insertion sort for up to 12 entries, so ties keep table
// order; that is the rule here for any size.
const Partition& select_by_binpack(uint64_t used, const std::vector<const Partition*>& feasible,
                                   const PartitionIndex& index, int desired) {
  if (feasible.size() == 1) return *feasible.front();
  const std::pair<int, int> weights[] = {{8, 10000}, {4, 100}, {2, 1}};
  const Partition* best = nullptr;
  int best_score = 0;
  for (const Partition* p : feasible) {
    int score = 0;
    const uint64_t allocated = used | p->hash;
    for (auto [n, weight] : weights) {
      if (n < desired) continue;
      auto it = index.find(n);
      if (it == index.end() || it->second.empty()) continue;
      for (const Partition& q : it->second.front())
        if ((q.hash & allocated) == 0) score += weight * q.score;
    }
    if (!best || score > best_score) {
      best = p;
      best_score = score;
    }
  }
  return *best;
}

struct Stage {
  std::vector<int> minors;
  std::optional<Reason> reason;  // an error the stage returns (not swallowed)
};

Stage by_partition(const Node& node, const KoordinatorRequirement& r, const Context& ctx) {
  if (r.shared) return {};
  const bool honor = node.gpu_partition_honor;
  // Errors are returned only when the node honours its partitions.
  auto fail = [&](Reason why) { return honor ? Stage{{}, why} : Stage{}; };
  const auto index = partition_index(node);
  if (!index) return fail(Reason::KoordMissingPartitionTable);
  auto it = index->find(r.count);
  if (it == index->end() || it->second.empty()) return fail(Reason::KoordUnsupportedGpuCount);
  std::vector<const Partition*> feasible;
  for (const auto& group : it->second) {
    for (const Partition& p : group) {
      if (p.hash & ctx.used) continue;
      if ((ctx.total & p.hash) != p.hash) continue;
      feasible.push_back(&p);  // no pod asks a ring-bus bandwidth (the pod spec is not modelled)
    }
    if (!feasible.empty()) break;
  }
  if (feasible.empty()) return fail(Reason::KoordInsufficientPartitionedGpus);
  return {select_by_binpack(ctx.used, feasible, *index, r.count).minors, std::nullopt};
}

// ---- The topology tree (allocateByDeviceTopology) -------------------------

struct Scope {
  int level = 1;            // Node 1, NUMANode 2, PCIe 3
  std::vector<int> minors;  // ascending
  uint64_t hash = 0;
  std::vector<Scope> children;
};

// GetGPUTopologyScope: node -> NUMA nodes (by id) -> PCIe switches (by id);
// none unless every GPU has a topology.
std::optional<Scope> topology_tree(const Node& node) {
  if (node.devices.empty()) return std::nullopt;
  std::map<int, std::map<std::string, std::vector<int>>> tree;
  Scope root;
  for (const Device& d : node.devices) {
    if (d.pcie.empty()) return std::nullopt;
    tree[d.numa][d.pcie].push_back(d.index);
    root.minors.push_back(d.index);
  }
  auto finish = [](Scope& s) {
    std::sort(s.minors.begin(), s.minors.end());
    for (int m : s.minors) s.hash |= minor_bit(m);
  };
  finish(root);
  for (auto& [numa, switches] : tree) {
    Scope n;
    n.level = 2;
    for (auto& [pcie, minors] : switches) {
      Scope p;
      p.level = 3;
      p.minors = minors;
      finish(p);
      n.minors.insert(n.minors.end(), minors.begin(), minors.end());
      n.children.push_back(std::move(p));
    }
    finish(n);
    root.children.push_back(std::move(n));
  }
  return root;
}

struct ScopeResult {
  std::vector<int> minors;
  int not_empty = 0;  // cumulativeNotEmpties
  int depth = 0;
  int64_t score = -1;
};

struct DeviceContext {
  bool known = false, satisfied = false;
  int64_t score = 0;
};

struct TreeWalk {
  const KoordinatorRequirement& r;
  const KoordinatorConfig& config;
  const Context& ctx;
  std::map<int, DeviceContext> devices;  // contextOfDevices, shared by the whole walk

  const DeviceContext& device(int minor) {
    DeviceContext& d = devices[minor];
    if (d.known) return d;
    d.known = true;
    const KoordinatorCard* c = ctx.by_minor(minor);
    d.satisfied = c && c->satisfies(r) && c->in_total();
    if (d.satisfied && r.shared) {
      // #3073: the code passes (free, total) to scoreDevice(podRequest,
      // total, free); #3074 passes them the right way round.
      d.score = config.fixed_device_scoring
                    ? koordinator_device_score(r, config.most_allocated, c->total_ratio, c->total_bytes,
                                               c->free_ratio, c->free_bytes)
                    : koordinator_device_score(r, config.most_allocated, c->free_ratio, c->free_bytes,
                                               c->total_ratio, c->total_bytes);
    }
    return d;
  }

  std::optional<ScopeResult> from(const Scope& scope, int not_empty, int depth) {
    if (static_cast<int>(scope.minors.size()) < r.count) return std::nullopt;
    ++depth;
    if (scope.hash & ctx.used) ++not_empty;
    std::optional<ScopeResult> best;
    for (const Scope& child : scope.children) {
      if (static_cast<int>(child.minors.size()) < r.count) continue;
      auto got = from(child, not_empty, depth);
      if (!got || got->minors.empty()) continue;
      if (!best) {
        best = std::move(got);
        continue;
      }
      if (best->depth < got->depth || (best->depth == got->depth && best->not_empty < got->not_empty)) {
        best = got;
      }
      if (r.shared && best->depth == got->depth && best->not_empty == got->not_empty &&
          best->score < got->score)
        best = got;
    }
    if (best && !best->minors.empty()) return best;
    std::vector<int> candidates;
    int best_shared = -1;
    int64_t best_score = -1;
    bool satisfied = false;
    for (int minor : scope.minors) {
      const DeviceContext& d = device(minor);
      if (!d.satisfied) continue;
      if (!r.shared) {
        candidates.push_back(minor);
        if (static_cast<int>(candidates.size()) == r.count) {
          satisfied = true;
          break;
        }
        continue;
      }
      satisfied = true;
      if (d.score > best_score) {
        best_shared = minor;
        best_score = d.score;
      }
    }
    if (!satisfied) return std::nullopt;
    if (r.shared) candidates.push_back(best_shared);
    return ScopeResult{candidates, not_empty, depth, best_score};
  }
};

Stage by_topology(const Node& node, const KoordinatorRequirement& r, const KoordinatorConfig& config,
                  const Context& ctx) {
  // Without a tree, or for a request shared over several GPUs, the stage
  // steps aside (its UnschedulableAndUnresolvable is swallowed when the pod
  // requires no topology scope, which no modelled pod does).
  const auto tree = topology_tree(node);
  if (!tree || (r.shared && r.count > 1)) return {};
  TreeWalk walk{r, config, ctx, {}};
  auto got = walk.from(*tree, 0, 0);
  if (!got) return {{}, Reason::KoordInsufficientTopologyGpus};
  return {got->minors, std::nullopt};
}

// ---- The fallback (defaultAllocateDevices) --------------------------------

Stage by_score(const KoordinatorRequirement& r, const KoordinatorConfig& config, const Context& ctx) {
  struct Candidate {
    int minor;
    int64_t score;
    const KoordinatorCard* card;
  };
  std::vector<Candidate> candidates;
  for (const auto& c : ctx.cards) {
    const int64_t score = koordinator_device_score(r, config.most_allocated, c.total_ratio, c.total_bytes,
                                                   c.free_ratio, c.free_bytes);
    candidates.push_back({c.minor, score, &c});
  }
  std::sort(candidates.begin(), candidates.end(), [](const Candidate& a, const Candidate& b) {
    if (a.score != b.score) return a.score > b.score;
    return a.minor < b.minor;
  });
  std::vector<int> minors;
  for (const auto& cand : candidates) {
    const KoordinatorCard& c = *cand.card;
    if (c.free_core == 0 && c.free_bytes == 0 && c.free_ratio == 0) continue;  // full or unhealthy
    if (!c.satisfies(r)) continue;
    minors.push_back(c.minor);
    if (static_cast<int>(minors.size()) == r.count) break;
  }
  if (static_cast<int>(minors.size()) < r.count) return {{}, Reason::KoordInsufficientGpuDevices};
  return {minors, std::nullopt};
}

}  // namespace

Allocated allocate(const Node& node, const std::vector<KoordinatorCard>& cards,
                   const KoordinatorRequirement& r, const KoordinatorConfig& config) {
  Context ctx{cards, 0, 0};
  for (const auto& c : cards) {
    if (c.used) ctx.used |= minor_bit(c.minor);
    if (c.in_total()) ctx.total |= minor_bit(c.minor);
  }
  Stage stage = by_partition(node, r, ctx);
  if (stage.minors.empty() && !stage.reason) stage = by_topology(node, r, config, ctx);
  if (stage.minors.empty() && !stage.reason) stage = by_score(r, config, ctx);
  Allocated out;
  if (stage.minors.empty()) {
    out.reason = stage.reason.value_or(Reason::KoordInsufficientGpuDevices);
    return out;
  }
  for (int minor : stage.minors) out.positions.push_back(ctx.by_minor(minor)->position);
  return out;
}

}  // namespace gpuslice::core::koordinator
