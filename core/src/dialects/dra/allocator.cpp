// The structured allocator's search (allocator_incubating.go's allocateOne,
// allocateDevice, CmpRequestOverCapacity, checkAvailableCounters and the
// constraints), written again over gpuslice's types. Comments name the
// upstream rule each step follows.
#include "gpuslice/core/dialects/dra/allocator.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <functional>

namespace gpuslice::core::dra {
namespace {

// lookupAttribute: the fully qualified name as written, or its id when its domain is the driver.
const AttributeValue* lookup_attribute(const Device& device, const std::string& driver,
                                       const std::string& qualified) {
  for (const auto& a : device.attributes)
    if (a.name.written == qualified) return &a.value;
  const size_t slash = qualified.find('/');
  if (slash == std::string::npos || qualified.compare(0, slash, driver) != 0) return nullptr;
  const std::string_view id = std::string_view(qualified).substr(slash + 1);
  for (const auto& a : device.attributes)
    if (a.name.written == id) return &a.value;
  return nullptr;
}

int64_t ceil_units(int64_t milli) { return milli >= 0 ? (milli + 999) / 1000 : milli / 1000; }

bool violates_policy(int64_t value, const std::optional<RequestPolicy>& policy) {
  if (!policy) return false;
  if (policy->default_milli && value == *policy->default_milli) return false;
  if (policy->valid_range) {
    const auto& r = *policy->valid_range;
    if (r.max_milli && value > *r.max_milli) return true;
    if (r.step_milli) {
      const int64_t step = ceil_units(*r.step_milli);
      if (step != 0 && (ceil_units(value) - ceil_units(r.min_milli)) % step != 0) return true;
    }
    return false;
  }
  if (!policy->valid_values_milli.empty())
    return std::find(policy->valid_values_milli.begin(), policy->valid_values_milli.end(), value) ==
           policy->valid_values_milli.end();
  return false;
}

const std::optional<int64_t> requested(const CapacityRequests* requests, const std::string& name) {
  if (!requests) return std::nullopt;
  for (const auto& [n, milli] : *requests)
    if (n == name) return milli;
  return std::nullopt;
}

int64_t sum_of(const CapacityRequests* sums, const std::string& name) {
  const auto v = requested(sums, name);
  return v ? *v : 0;
}

struct RequestData {
  const ExactRequest* request = nullptr;
  std::string name;         // the request's, or the subrequest's own
  std::string parent_name;  // the request's name for a subrequest; "" otherwise
  const DeviceClass* device_class = nullptr;
  size_t num_devices = 0;
  std::vector<const PoolDevice*> all_devices;  // AllocationMode All
  std::vector<std::pair<const Pool*, const PoolDevice*>> all_with_pool;
};

struct ConstraintState {
  const DeviceConstraint* spec = nullptr;
  bool distinct = false;
  std::optional<AttributeValue> first;                             // matchAttribute
  std::vector<std::pair<std::string, AttributeValue>> by_request;  // distinctAttribute: one per request name
  int num_devices = 0;

  bool applies(const std::string& request, const std::string& sub) const {
    if (spec->requests.empty()) return true;
    for (const auto& r : spec->requests)
      if (r == request || (!sub.empty() && r == request + "/" + sub)) return true;
    return false;
  }
};

struct AllocationOverflow {};  // errAllocationResultMaxSizeExceeded

class Search {
 public:
  Search(const StructuredAllocator& owner, CelCache& cache, const std::vector<Pool>& pools,
         const std::vector<const ClaimSpec*>& claims, const AllocatedState& state, const NodeInfo& node)
      : owner_(owner), cache_(cache), pools_(pools), claims_(claims), state_(state), node_(node) {}

  std::optional<std::vector<Allocation>> run() {
    results_.resize(claims_.size());
    data_.resize(claims_.size());
    constraints_.resize(claims_.size());
    for (size_t c = 0; c < claims_.size(); ++c) {
      const ClaimSpec& claim = *claims_[c];
      for (const auto& request : claim.requests) {
        auto& subs = data_[c].emplace_back();
        if (request.exactly) {
          subs.push_back(validate(*request.exactly, request.name, "", c));
        } else {
          if (request.first_available.empty())
            throw AllocationError(
                fmt::format("request {}: neither exactly nor firstAvailable", request.name));
          for (const auto& sub : request.first_available)
            subs.push_back(validate(sub.spec, sub.name, request.name, c));
        }
      }
      for (const auto& constraint : claim.constraints) {
        if (constraint.match_attribute.empty() && constraint.distinct_attribute.empty()) continue;
        ConstraintState s;
        s.spec = &constraint;
        s.distinct = constraint.match_attribute.empty();
        constraints_[c].push_back(std::move(s));
      }
    }
    bool done = false;
    try {
      done = allocate_one(Indices{}, false, Location{});
    } catch (const AllocationOverflow&) {
      done = false;
    }
    if (!done) return std::nullopt;
    for (auto& a : results_) a.node_name = node_.name;
    return results_;
  }

 private:
  struct Indices {
    size_t claim = 0, request = 0, sub = 0, device = 0;
  };
  struct Location {
    size_t pool = 0, slice = 0, device = 0;
  };

  RequestData validate(const ExactRequest& request, const std::string& name, const std::string& parent,
                       size_t c) {
    RequestData d;
    d.request = &request;
    d.name = name;
    d.parent_name = parent;
    const std::string full = parent.empty() ? name : parent + "/" + name;
    if (request.device_class.empty())
      throw AllocationError(fmt::format("request {}: missing device class name", full));
    d.device_class = owner_.device_class(request.device_class);
    if (!d.device_class)
      throw AllocationError(
          fmt::format("request {}: could not retrieve device class {}", full, request.device_class));
    if (request.mode == AllocationMode::ExactCount) {
      d.num_devices = size_t(request.count);
      return d;
    }
    for (const auto& pool : pools_) {
      if (pool.incomplete)
        throw AllocationError(fmt::format(
            "request {}: asks for all devices, but resource pool {}/{} is currently being updated", full,
            pool.driver, pool.name));
      if (pool.invalid)
        throw AllocationError(
            fmt::format("request {}: asks for all devices, but resource pool {}/{} is currently invalid",
                        full, pool.driver, pool.name));
      for (const auto& slice : pool.slices)
        for (const auto& device : slice) {
          if (!selectable(d, device, c)) continue;
          if (!capacity_fits(request, device)) continue;
          d.all_with_pool.emplace_back(&pool, &device);
        }
    }
    d.num_devices = d.all_with_pool.size();
    return d;
  }

  // Class selectors, then the request's (isSelectable / selectorsMatch).
  bool selectable(const RequestData& d, const PoolDevice& device, size_t claim) {
    const DeviceView view{device.slice->driver, device.device};
    auto run = [&](const std::vector<std::string>& selectors, const std::string& owner) {
      for (size_t i = 0; i < selectors.size(); ++i) {
        const CelProgram* program = nullptr;
        try {
          program = &cache_.get(selectors[i]);
        } catch (const CelError& e) {
          throw AllocationError(fmt::format("{}: selector #{}: CEL compile error: {}", owner, i, e.what()));
        }
        const CelOutcome outcome = program->evaluate(view);
        if (outcome.kind == CelOutcome::Kind::Error)
          throw AllocationError(fmt::format("{}: selector #{} on device {}: CEL runtime error: {} (`{}`)",
                                            owner, i, device.key, outcome.error, selectors[i]));
        if (!outcome.matches()) return false;
      }
      return true;
    };
    (void)claim;
    return run(d.device_class->selectors, "class " + d.device_class->name) &&
           run(d.request->selectors,
               "request " + (d.parent_name.empty() ? d.name : d.parent_name + "/" + d.name));
  }

  // CmpRequestOverCapacity: every capacity of the device, with what is
  // allocated and being allocated, stays within its value and policy.
  bool capacity_fits(const ExactRequest& request, const PoolDevice& device) const {
    const Device& dev = *device.device;
    for (const auto& [name, milli] : request.capacity)
      if (!dev.capacity_named(name)) return false;  // requests a capacity the device lacks: skipped
    const auto allocated = state_.capacity.find(device.key);
    const CapacityRequests* held = allocated == state_.capacity.end() ? nullptr : &allocated->second;
    const auto allocating = allocating_capacity_.find(device.key);
    const CapacityRequests* being = allocating == allocating_capacity_.end() ? nullptr : &allocating->second;
    for (const auto& cap : dev.capacity) {
      const int64_t consumed = consumed_capacity(requested(&request.capacity, cap.name.written), cap);
      if (violates_policy(consumed, cap.request_policy)) return false;
      const int64_t total = sum_of(held, cap.name.written) + consumed + sum_of(being, cap.name.written);
      if (total > cap.value_milli) return false;
    }
    return true;
  }

  bool in_use(const std::string& key) const {
    if (state_.devices.count(key)) return true;
    const auto it = allocating_devices_.find(key);
    return it != allocating_devices_.end() && !it->second.empty();
  }
  bool allocating_for_claim(const std::string& key, size_t claim) const {
    const auto it = allocating_devices_.find(key);
    return it != allocating_devices_.end() &&
           std::find(it->second.begin(), it->second.end(), claim) != it->second.end();
  }
  bool capacity_in_use(const std::string& key) const {
    return state_.capacity.count(key) || allocating_capacity_.count(key);
  }

  // checkAvailableCounters: the pool's counters, less what allocated devices
  // consume, must cover what the devices being allocated consume.
  bool counters_available(const Pool& pool, const PoolDevice& device) {
    auto& available = available_counters_[pool.name];
    if (!available.computed) {
      available.computed = true;
      for (const auto& set : pool.counter_sets)
        for (const auto& c : set.counters) available.values[set.name][c.name] = c.value_milli;
      auto subtract = [&](const PoolDevice& d) {
        if (!state_.holds(d.key)) return;
        for (const auto& use : d.device->consumes_counters) {
          auto set = available.values.find(use.counter_set);
          if (set == available.values.end()) continue;
          for (const auto& c : use.counters) {
            auto it = set->second.find(c.name);
            if (it != set->second.end()) it->second -= c.value_milli;
          }
        }
      };
      for (const auto& slice : pool.slices)
        for (const auto& d : slice) subtract(d);
      for (const auto& d : pool.other_devices) subtract(d);
    }
    auto& consumed = consumed_counters_[pool.name];
    for (const auto& use : device.device->consumes_counters)
      for (const auto& c : use.counters) consumed[use.counter_set][c.name] += c.value_milli;
    for (const auto& [set_name, counters] : available.values) {
      const auto used = consumed.find(set_name);
      for (const auto& [name, value] : counters) {
        int64_t taken = 0;
        if (used != consumed.end()) {
          const auto it = used->second.find(name);
          if (it != used->second.end()) taken = it->second;
        }
        if (value < taken) {
          release_counters(pool, device);
          return false;
        }
      }
    }
    return true;
  }
  void release_counters(const Pool& pool, const PoolDevice& device) {
    auto& consumed = consumed_counters_[pool.name];
    for (const auto& use : device.device->consumes_counters)
      for (const auto& c : use.counters) consumed[use.counter_set][c.name] -= c.value_milli;
  }

  // allocateDevice: availability, counters, constraints; on success the
  // device is recorded and `undo` restores the state.
  bool allocate_device(const Indices& r, const Pool& pool, const PoolDevice& device, bool must,
                       std::function<void()>& undo) {
    const RequestData& d = data_[r.claim][r.request][r.sub];
    const ExactRequest& request = *d.request;
    const bool multiple = device.device->allow_multiple_allocations;
    if (!multiple && request.admin_access && allocating_for_claim(device.key, r.claim)) return false;
    if (!request.admin_access && in_use(device.key)) return false;
    const bool skip_counters = multiple && capacity_in_use(device.key);
    if (!skip_counters && !device.device->consumes_counters.empty() && !counters_available(pool, device))
      return false;
    const std::string base = d.parent_name.empty() ? d.name : d.parent_name;
    const std::string sub = d.parent_name.empty() ? "" : d.name;
    auto& constraints = constraints_[r.claim];
    for (size_t i = 0; i < constraints.size(); ++i) {
      if (!constraint_add(constraints[i], base, sub, device)) {
        if (must)
          throw AllocationError(fmt::format(
              "request {}: cannot add device {} because a claim constraint would not be satisfied", d.name,
              device.key));
        for (size_t e = 0; e < i; ++e) constraint_remove(constraints[e], base, sub);
        return false;
      }
    }
    if (!multiple) allocating_devices_[device.key].push_back(r.claim);
    DeviceResult result;
    result.request = d.parent_name.empty() ? d.name : d.parent_name + "/" + d.name;
    result.driver = pool.driver;
    result.pool = pool.name;
    result.device = device.device->name;
    result.admin_access = request.admin_access;
    if (!capacity_fits(request, device)) {
      // Cannot happen after the caller's check; upstream returns "not allocated" without undoing.
      return false;
    }
    if (multiple) {
      result.shared = true;
      for (const auto& cap : device.device->capacity)
        result.consumed_capacity.emplace_back(
            cap.name.written, consumed_capacity(requested(&request.capacity, cap.name.written), cap));
      auto& sums = allocating_capacity_[device.key];
      for (const auto& [name, milli] : result.consumed_capacity) add_to(sums, name, milli);
    }
    auto& claim_results = results_[r.claim].results;
    const size_t previous = claim_results.size();
    claim_results.push_back(std::move(result));
    undo = [this, r, &pool, &device, base, sub, multiple, previous]() {
      for (auto& c : constraints_[r.claim]) constraint_remove(c, base, sub);
      auto& claims = allocating_devices_[device.key];
      claims.erase(std::remove(claims.begin(), claims.end(), r.claim), claims.end());
      auto& devices = results_[r.claim].results;
      if (multiple) {
        auto& sums = allocating_capacity_[device.key];
        for (const auto& [name, milli] : devices[previous].consumed_capacity) add_to(sums, name, -milli);
        bool empty = true;
        for (const auto& e : sums) empty = empty && e.second == 0;
        if (empty) allocating_capacity_.erase(device.key);
        // Upstream leaves counters consumed by a shared device in place.
      } else if (!device.device->consumes_counters.empty()) {
        release_counters(pool, device);
      }
      devices.resize(previous);
    };
    return true;
  }

  static void add_to(CapacityRequests& sums, const std::string& name, int64_t milli) {
    for (auto& e : sums)
      if (e.first == name) {
        e.second += milli;
        return;
      }
    sums.emplace_back(name, milli);
  }

  bool constraint_add(ConstraintState& c, const std::string& request, const std::string& sub,
                      const PoolDevice& device) {
    if (!c.applies(request, sub)) return true;
    const std::string& name = c.distinct ? c.spec->distinct_attribute : c.spec->match_attribute;
    const AttributeValue* value = lookup_attribute(*device.device, device.slice->driver, name);
    if (!value) return false;
    if (c.num_devices == 0) {
      if (c.distinct)
        set_by_request(c, request, *value);
      else
        c.first = *value;
      c.num_devices = 1;
      return true;
    }
    if (c.distinct) {
      for (const auto& [r, v] : c.by_request)
        if (v.kind == value->kind && v == *value) return false;
      set_by_request(c, request, *value);
    } else if (!(c.first->kind == value->kind && *c.first == *value)) {
      return false;
    }
    ++c.num_devices;
    return true;
  }
  // distinctAttribute keeps one value per request name (upstream's map keyed by request).
  static void set_by_request(ConstraintState& c, const std::string& request, const AttributeValue& value) {
    for (auto& [r, v] : c.by_request)
      if (r == request) {
        v = value;
        return;
      }
    c.by_request.emplace_back(request, value);
  }
  static void constraint_remove(ConstraintState& c, const std::string& request, const std::string& sub) {
    if (!c.applies(request, sub)) return;
    if (c.distinct)
      c.by_request.erase(std::remove_if(c.by_request.begin(), c.by_request.end(),
                                        [&](const auto& e) { return e.first == request; }),
                         c.by_request.end());
    --c.num_devices;
  }

  bool allocate_one(Indices r, bool allocate_sub_request, Location start) {
    if (r.claim >= claims_.size()) return true;  // the first full solution is taken
    const ClaimSpec& claim = *claims_[r.claim];
    if (r.request >= claim.requests.size()) {
      try {
        return allocate_one(Indices{r.claim + 1, 0, 0, 0}, false, Location{});
      } catch (const AllocationOverflow&) {
        return false;
      }
    }
    auto& subs = data_[r.claim][r.request];
    if (!allocate_sub_request && !subs.front().parent_name.empty()) {
      bool all_overflowed = true;
      for (size_t s = 0; s < subs.size(); ++s) {
        r.sub = s;
        try {
          const bool ok = allocate_one(r, true, Location{});
          all_overflowed = false;
          if (ok) return true;
        } catch (const AllocationOverflow&) {
          continue;
        }
      }
      if (all_overflowed) throw AllocationOverflow{};
      return false;
    }
    const RequestData& d = subs[r.sub];
    const bool all = d.request->mode == AllocationMode::All;
    if (all && d.all_with_pool.empty()) return false;
    if (r.device >= d.num_devices)
      return allocate_one(Indices{r.claim, r.request + 1, 0, 0}, false, Location{});
    if (results_[r.claim].results.size() + d.num_devices - r.device > kAllocationResultsMaxSize)
      throw AllocationOverflow{};
    if (all) {
      const auto& [pool, device] = d.all_with_pool[r.device];
      std::function<void()> undo;
      if (!allocate_device(r, *pool, *device, true, undo)) return false;
      bool done = false;
      try {
        done =
            allocate_one(Indices{r.claim, r.request, r.sub, r.device + 1}, allocate_sub_request, Location{});
      } catch (...) {
        undo();
        throw;
      }
      if (!done) undo();
      return done;
    }
    for (size_t p = start.pool; p < pools_.size(); ++p) {
      const Pool& pool = pools_[p];
      if (pool.incomplete || pool.invalid) continue;
      const size_t slice_start = p == start.pool ? start.slice : 0;
      for (size_t s = slice_start; s < pool.slices.size(); ++s) {
        const auto& slice = pool.slices[s];
        const size_t device_start = (p == start.pool && s == start.slice) ? start.device : 0;
        for (size_t i = device_start; i < slice.size(); ++i) {
          const PoolDevice& device = slice[i];
          if (d.request->admin_access && allocating_for_claim(device.key, r.claim)) continue;
          if (!d.request->admin_access && in_use(device.key)) continue;
          if (!selectable_cached(r, d, device)) continue;
          if (!capacity_fits(*d.request, device)) continue;
          std::function<void()> undo;
          if (!allocate_device(r, pool, device, false, undo)) continue;
          bool done = false;
          try {
            done = allocate_one(Indices{r.claim, r.request, r.sub, r.device + 1}, allocate_sub_request,
                                Location{p, s, i + 1});
          } catch (...) {
            undo();
            throw;
          }
          if (done) return true;
          undo();
        }
      }
    }
    return false;
  }

  // deviceMatchesRequest: selectors are evaluated once per device and request.
  bool selectable_cached(const Indices& r, const RequestData& d, const PoolDevice& device) {
    const auto key = std::make_tuple(r.claim, r.request, r.sub, &device);
    const auto it = matches_.find(key);
    if (it != matches_.end()) return it->second;
    const bool ok = selectable(d, device, r.claim);
    matches_.emplace(key, ok);
    return ok;
  }

  struct Available {
    bool computed = false;
    std::map<std::string, std::map<std::string, int64_t>> values;
  };

  const StructuredAllocator& owner_;
  CelCache& cache_;
  const std::vector<Pool>& pools_;
  const std::vector<const ClaimSpec*>& claims_;
  const AllocatedState& state_;
  const NodeInfo& node_;
  std::vector<std::vector<std::vector<RequestData>>> data_;  // claim, request, subrequest
  std::vector<std::vector<ConstraintState>> constraints_;
  std::vector<Allocation> results_;
  std::unordered_map<std::string, std::vector<size_t>> allocating_devices_;
  std::unordered_map<std::string, CapacityRequests> allocating_capacity_;
  std::map<std::string, Available> available_counters_;
  std::map<std::string, std::map<std::string, std::map<std::string, int64_t>>> consumed_counters_;
  std::map<std::tuple<size_t, size_t, size_t, const PoolDevice*>, bool> matches_;
};

}  // namespace

int64_t consumed_capacity(const std::optional<int64_t>& requested_milli, const Capacity& capacity) {
  const auto& policy = capacity.request_policy;
  if (!requested_milli) {
    if (policy && policy->default_milli) return *policy->default_milli;
    return capacity.value_milli;
  }
  if (!policy) return *requested_milli;
  if (policy->valid_range) {
    const auto& r = *policy->valid_range;
    if (*requested_milli < r.min_milli) return r.min_milli;
    if (!r.step_milli) return *requested_milli;
    // roundUpRange works in whole units (Quantity.Value() rounds up).
    const int64_t value = ceil_units(*requested_milli), step = ceil_units(*r.step_milli),
                  min = ceil_units(r.min_milli);
    const int64_t added = value - min;
    int64_t n = added / step;
    if (added % step != 0) ++n;
    return (min + step * n) * 1000;
  }
  for (int64_t valid : policy->valid_values_milli)
    if (*requested_milli <= valid) return valid;
  return *requested_milli;
}

const CelProgram& CelCache::get(const std::string& expression) {
  auto it = programs_.find(expression);
  if (it == programs_.end()) it = programs_.emplace(expression, CelProgram::compile(expression)).first;
  return it->second;
}

StructuredAllocator::StructuredAllocator(const std::vector<DeviceClass>& classes, CelCache& cache)
    : cache_(cache) {
  for (const auto& c : classes) classes_[c.name] = &c;
}

const DeviceClass* StructuredAllocator::device_class(const std::string& name) const {
  const auto it = classes_.find(name);
  return it == classes_.end() ? nullptr : it->second;
}

std::optional<std::vector<Allocation>> StructuredAllocator::allocate(
    const std::vector<Pool>& pools, const std::vector<const ClaimSpec*>& claims, const AllocatedState& state,
    const NodeInfo& node) const {
  return Search(*this, cache_, pools, claims, state, node).run();
}

}  // namespace gpuslice::core::dra
