// DRA's structured allocator as Kubernetes runs it
// (k8s.io/dynamic-resource-allocation/structured, the "incubating" variant
// that has consumable capacity and partitionable devices): the node's pools
// sorted by driver and name, their slices by name, devices in slice order;
// claims and requests in order; a depth-first search that backtracks and
// takes the first full solution (devices are not scored). Consumed capacity
// is the request rounded by the device's requestPolicy (a missing request
// takes its default); matchAttribute / distinctAttribute constraints;
// firstAvailable subrequests tried in order; shared counters bound the
// partitions a pool can hand out (KEP-4815).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "gpuslice/core/dialects/dra/cel.hpp"
#include "gpuslice/core/dialects/dra/objects.hpp"

namespace gpuslice::core::dra {

// What the allocator knows of a node: its name and labels (node selectors).
struct NodeInfo {
  std::string name;
  std::vector<std::pair<std::string, std::string>> labels;
};
bool node_matches(const NodeSelector& selector, const NodeInfo& node);

// A device as a pool offers it: with its slice and its key "driver/pool/device".
struct PoolDevice {
  const ResourceSlice* slice = nullptr;
  const Device* device = nullptr;
  std::string key;
};

// One pool as GatherPools builds it for a node.
struct Pool {
  std::string driver, name;
  bool incomplete = false;  // fewer slices than resourceSliceCount at the newest generation
  bool invalid = false;     // duplicate device names
  std::vector<std::vector<PoolDevice>> slices;  // slices targeting the node, by name; their devices in order
  std::vector<CounterSet> counter_sets;         // from the pool's sharedCounters slices
  std::vector<PoolDevice> other_devices;        // devices of the pool's slices for other nodes (counters)
};

// The pools `node` sees among `slices`, sorted by driver then pool name.
std::vector<Pool> gather_pools(const std::vector<ResourceSlice>& slices, const NodeInfo& node);
// The same over candidate slices (a fleet's slices indexed by node name,
// plus those for all nodes or by selector), as the scheduler's informer
// index hands them over: reading a fleet stays linear.
std::vector<Pool> gather_pools(const std::vector<const ResourceSlice*>& slices, const NodeInfo& node);

// What claims already allocated hold (the scheduler's allocated state).
struct AllocatedState {
  std::unordered_set<std::string> devices;                     // devices allocated whole
  std::unordered_map<std::string, CapacityRequests> capacity;  // shared devices: consumed, summed
  void add(const Allocation& allocation);
  void remove(const Allocation& allocation);
  bool holds(const std::string& key) const { return devices.count(key) || capacity.count(key); }
};

// What makes Kubernetes' allocator stop with an error rather than "no fit":
// a CEL compile or runtime error, a class that does not exist, a constraint
// an "All" request cannot meet. Names the claim, request and expression.
class AllocationError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Compiled selectors, each expression once.
class CelCache {
 public:
  // Throws CelError for an expression outside the subset.
  const CelProgram& get(const std::string& expression);

 private:
  std::unordered_map<std::string, CelProgram> programs_;
};

// The most devices one allocation may hold (resourceapi.AllocationResultsMaxSize).
inline constexpr size_t kAllocationResultsMaxSize = 32;

class StructuredAllocator {
 public:
  StructuredAllocator(const std::vector<DeviceClass>& classes, CelCache& cache);

  // The first full allocation of `claims` (in order) from `pools` on `node`,
  // or nullopt when there is none. Throws AllocationError.
  std::optional<std::vector<Allocation>> allocate(const std::vector<Pool>& pools,
                                                  const std::vector<const ClaimSpec*>& claims,
                                                  const AllocatedState& state, const NodeInfo& node) const;

  const DeviceClass* device_class(const std::string& name) const;

 private:
  std::map<std::string, const DeviceClass*> classes_;
  CelCache& cache_;
};

// The capacity a request consumes of one device capacity (KEP-5075):
// absent: the policy's default, else the whole capacity; with a validRange,
// rounded up to min + n*step; with validValues, the first value not below it.
int64_t consumed_capacity(const std::optional<int64_t>& requested_milli, const Capacity& capacity);

}  // namespace gpuslice::core::dra
