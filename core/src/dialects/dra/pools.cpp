// GatherPools (structured/internal/incubating/pools_incubating.go): the
// slices that serve a node, grouped by (driver, pool), the newest generation
// kept; a pool is complete when it has resourceSliceCount slices.
#include <algorithm>
#include <charconv>
#include <map>
#include <set>

#include "gpuslice/core/dialects/dra/allocator.hpp"

namespace gpuslice::core::dra {
namespace {

const std::string* label(const NodeInfo& node, const std::string& key) {
  for (const auto& [k, v] : node.labels)
    if (k == key) return &v;
  return nullptr;
}

bool integer(const std::string& s, int64_t& out) {
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && end == s.data() + s.size();
}

bool requirement_matches(const NodeSelectorRequirement& r, const NodeInfo& node) {
  const std::string* value = nullptr;
  std::string name_value;
  if (r.field) {
    if (r.key != "metadata.name") return false;
    name_value = node.name;
    value = &name_value;
  } else {
    value = label(node, r.key);
  }
  const bool listed = value && std::find(r.values.begin(), r.values.end(), *value) != r.values.end();
  if (r.op == "In") return listed;
  if (r.op == "NotIn") return !listed;
  if (r.op == "Exists") return value != nullptr;
  if (r.op == "DoesNotExist") return value == nullptr;
  if ((r.op == "Gt" || r.op == "Lt") && value && r.values.size() == 1) {
    int64_t have = 0, bound = 0;
    if (!integer(*value, have) || !integer(r.values[0], bound)) return false;
    return r.op == "Gt" ? have > bound : have < bound;
  }
  return false;
}

}  // namespace

bool node_matches(const NodeSelector& selector, const NodeInfo& node) {
  for (const auto& term : selector.terms) {
    if (term.empty()) continue;  // an empty term matches nothing
    bool all = true;
    for (const auto& r : term) all = all && requirement_matches(r, node);
    if (all) return true;
  }
  return false;
}

std::vector<Pool> gather_pools(const std::vector<ResourceSlice>& slices, const NodeInfo& node) {
  std::vector<const ResourceSlice*> all;
  all.reserve(slices.size());
  for (const auto& s : slices) all.push_back(&s);
  return gather_pools(all, node);
}

std::vector<Pool> gather_pools(const std::vector<const ResourceSlice*>& slices, const NodeInfo& node) {
  auto serves = [&](const ResourceSlice& s) {
    if (!s.node_name.empty()) return s.node_name == node.name;
    if (s.all_nodes) return true;
    if (s.node_selector) return node_matches(*s.node_selector, node);
    return false;
  };
  // (driver, pool) -> the newest generation's slices serving the node.
  std::map<std::pair<std::string, std::string>, std::vector<const ResourceSlice*>> by_pool;
  for (const ResourceSlice* s : slices) {
    if (!serves(*s)) continue;
    auto& pool = by_pool[{s->driver, s->pool}];
    if (!pool.empty() && s->generation < pool.front()->generation) continue;
    if (!pool.empty() && s->generation > pool.front()->generation) pool.clear();
    pool.push_back(s);
  }
  // Counter sets and other nodes' devices of the same pools (any node), newest generation.
  std::vector<Pool> pools;
  for (auto& [id, members] : by_pool) {
    Pool pool;
    pool.driver = id.first;
    pool.name = id.second;
    const int64_t generation = members.front()->generation;
    std::vector<const ResourceSlice*> all;
    for (const ResourceSlice* s : slices)
      if (s->driver == id.first && s->pool == id.second && s->generation == generation) all.push_back(s);
    if (int64_t(all.size()) != members.front()->resource_slice_count) {
      pool.incomplete = true;
      pools.push_back(std::move(pool));
      continue;
    }
    std::sort(members.begin(), members.end(),
              [](const ResourceSlice* a, const ResourceSlice* b) { return a->name < b->name; });
    std::set<const ResourceSlice*> serving(members.begin(), members.end());
    std::set<std::string> names;
    for (const ResourceSlice* s : members) {
      if (!s->shared_counters.empty()) continue;
      auto& devices = pool.slices.emplace_back();
      for (const auto& d : s->devices) {
        if (!names.insert(d.name).second) pool.invalid = true;
        devices.push_back(PoolDevice{s, &d, s->driver + "/" + s->pool + "/" + d.name});
      }
    }
    for (const ResourceSlice* s : all) {
      for (const auto& set : s->shared_counters) pool.counter_sets.push_back(set);
      if (serving.count(s)) continue;
      for (const auto& d : s->devices)
        pool.other_devices.push_back(PoolDevice{s, &d, s->driver + "/" + s->pool + "/" + d.name});
    }
    if (pool.invalid) pool.slices.clear();
    pools.push_back(std::move(pool));
  }
  // std::map already iterates by (driver, pool name): the order sortPoolsByID gives.
  return pools;
}

void AllocatedState::add(const Allocation& allocation) {
  for (const auto& r : allocation.results) {
    const std::string key = r.driver + "/" + r.pool + "/" + r.device;
    if (!r.shared) {
      if (!r.admin_access) devices.insert(key);
      continue;
    }
    auto& sum = capacity[key];
    // A plain loop variable: clang 14 refuses a lambda capturing a structured binding.
    for (const auto& consumed : r.consumed_capacity) {
      const auto& name = consumed.first;
      auto it = std::find_if(sum.begin(), sum.end(), [&](const auto& e) { return e.first == name; });
      if (it == sum.end())
        sum.emplace_back(name, consumed.second);
      else
        it->second += consumed.second;
    }
  }
}

void AllocatedState::remove(const Allocation& allocation) {
  for (const auto& r : allocation.results) {
    const std::string key = r.driver + "/" + r.pool + "/" + r.device;
    if (!r.shared) {
      devices.erase(key);
      continue;
    }
    auto found = capacity.find(key);
    if (found == capacity.end()) continue;
    for (const auto& [name, milli] : r.consumed_capacity)
      for (auto& e : found->second)
        if (e.first == name) e.second -= milli;
    bool empty = true;
    for (const auto& e : found->second) empty = empty && e.second == 0;
    if (empty) capacity.erase(found);
  }
}

}  // namespace gpuslice::core::dra
