// A DRA device as a ResourceSlice publishes it (resource.k8s.io/v1), in the
// form the CEL selectors and the structured allocator read. Quantities are
// held exactly, in milli-units (codec/quantity.hpp).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpuslice/core/dialects/dra/semver.hpp"

namespace gpuslice::core::dra {

// One of int, bool, string, version (exactly one is set in the API).
struct AttributeValue {
  enum class Kind : uint8_t { Int, Bool, String, Version };
  Kind kind = Kind::String;
  int64_t int_value = 0;
  bool bool_value = false;
  std::string string_value;
  Semver version;
  bool operator==(const AttributeValue& other) const;
};

// An attribute or capacity name as written ("memory", "gpu.nvidia.com/model")
// split as DRA splits it: no domain means the device's driver.
struct QualifiedName {
  std::string written;  // the key as in the slice
  std::string domain;   // before the '/', else the driver
  std::string id;       // after the '/'
};
QualifiedName qualify(std::string_view written, std::string_view driver);

struct Attribute {
  QualifiedName name;
  AttributeValue value;
};

// capacity.<name>.requestPolicy: what a request may ask and how it is rounded (KEP-5075).
struct CapacityRange {
  int64_t min_milli = 0;
  std::optional<int64_t> max_milli, step_milli;
};
struct RequestPolicy {
  std::optional<int64_t> default_milli;
  std::vector<int64_t> valid_values_milli;  // ascending, as the API requires
  std::optional<CapacityRange> valid_range;
};
struct Capacity {
  QualifiedName name;
  int64_t value_milli = 0;
  std::optional<RequestPolicy> request_policy;
};

struct Counter {
  std::string name;
  int64_t value_milli = 0;
};
// consumesCounters[]: what a partition takes from its pool's shared counter set (KEP-4815).
struct CounterConsumption {
  std::string counter_set;
  std::vector<Counter> counters;
};
struct CounterSet {
  std::string name;
  std::vector<Counter> counters;
};

struct Device {
  std::string name;
  std::vector<Attribute> attributes;
  std::vector<Capacity> capacity;
  bool allow_multiple_allocations = false;
  std::vector<CounterConsumption> consumes_counters;

  const Attribute* attribute(std::string_view domain, std::string_view id) const;
  const Capacity* capacity_named(std::string_view written) const;
};

// What a CEL selector sees of a device: the device and its slice's driver.
struct DeviceView {
  std::string_view driver;
  const Device* device = nullptr;
};

}  // namespace gpuslice::core::dra
