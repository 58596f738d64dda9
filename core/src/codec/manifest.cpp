#include "gpuslice/core/codec/manifest.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <limits>

#include "gpuslice/core/codec/kube_reader.hpp"
#include "gpuslice/core/codec/quantity.hpp"
#include "gpuslice/core/dialects/dialect.hpp"
#include "gpuslice/core/dialects/hami/allocation_annotation.hpp"
#include "gpuslice/core/dialects/hami/mig_allocations.hpp"
#include "gpuslice/core/dialects/hami/registration.hpp"
#include "gpuslice/core/dialects/kai/codec.hpp"
#include "gpuslice/core/dialects/koordinator/codec.hpp"
#include "gpuslice/core/errors.hpp"
#include "gpuslice/core/gpu_policy.hpp"

namespace gpuslice::core::codec {

namespace {

// Everything that reads one object goes through this context, so each error
// names the file, the line and the field. Field names are built only when
// something is wrong.
struct Doc {
  const ReadContext& ctx;
  [[noreturn]] void fail(Position at, const std::string& field, const std::string& what) const {
    ctx.fail(at, field, what);
  }
  const std::string& scalar(const Scalar& s, std::string_view prefix, std::string_view key = {}) const {
    if (!s.is_text()) fail(s.at, std::string(prefix) + std::string(key), "must be a string or number");
    return s.text;
  }
};

std::vector<std::string> comma_list(const std::string& s) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos <= s.size()) {
    size_t c = s.find(',', pos);
    std::string part = s.substr(pos, c == std::string::npos ? std::string::npos : c - pos);
    part.erase(0, part.find_first_not_of(" \t"));
    part.erase(part.find_last_not_of(" \t") + 1);
    if (!part.empty()) out.push_back(part);
    if (c == std::string::npos) break;
    pos = c + 1;
  }
  return out;
}

bool parse_bool_annotation(const Doc& doc, Position at, const std::string& field, const std::string& v) {
  if (v == "1" || v == "t" || v == "T" || v == "true" || v == "TRUE" || v == "True") return true;
  if (v == "0" || v == "f" || v == "F" || v == "false" || v == "FALSE" || v == "False") return false;
  doc.fail(at, field, fmt::format("'{}' is not a boolean", v));
}

ScoringWeights parse_weights(const Doc& doc, Position at, const std::string& field, const std::string& v) {
  ScoringWeights w{0, 0, 0};
  auto parts = comma_list(v);
  if (std::count(v.begin(), v.end(), ',') != 2 || parts.size() != 3)
    doc.fail(at, field,
             fmt::format("'{}': expected slot, core and memory weights like slot=1,core=1,memory=3", v));
  bool seen[3] = {false, false, false};
  for (const auto& p : parts) {
    auto eq = p.find('=');
    if (eq == std::string::npos) doc.fail(at, field, fmt::format("'{}': expected key=value entries", v));
    std::string key = p.substr(0, eq), val = p.substr(eq + 1);
    key.erase(key.find_last_not_of(" \t") + 1);
    val.erase(0, val.find_first_not_of(" \t"));
    int64_t n = 0;
    try {
      size_t used = 0;
      n = std::stoll(val, &used);
      if (used != val.size()) throw std::invalid_argument(val);
    } catch (const std::exception&) {
      doc.fail(at, field, fmt::format("'{}': '{}' weight must be an integer", v, key));
    }
    if (n < 0) doc.fail(at, field, fmt::format("'{}': '{}' weight must not be negative", v, key));
    int idx = key == "slot" ? 0 : key == "core" ? 1 : key == "memory" ? 2 : -1;
    if (idx < 0) doc.fail(at, field, fmt::format("'{}': unknown weight '{}'", v, key));
    if (seen[idx]) doc.fail(at, field, fmt::format("'{}': duplicate '{}' weight", v, key));
    seen[idx] = true;
    (idx == 0 ? w.slot : idx == 1 ? w.core : w.memory) = n;
  }
  if (w.slot == 0 && w.core == 0 && w.memory == 0)
    doc.fail(at, field, fmt::format("'{}': one weight must be positive", v));
  return w;
}

void validate_gpu_policy(const Doc& doc, Position at, const std::string& field, const std::string& v) {
  if (std::string problem = gpu_policy_problem(v); !problem.empty()) doc.fail(at, field, problem);
}

// A map of strings (labels, annotations, a resource list, matchLabels) as
// plain data; a null value is the empty string.
TextMap string_map(const Doc& doc, const StringMap& map, const std::string& field) {
  TextMap out;
  for (const Entry& e : map.entries)
    out[e.key] = e.value.kind == Scalar::Kind::Null ? std::string() : doc.scalar(e.value, field + ".", e.key);
  return out;
}

// A container's resources: limits first, then requests (HAMi's lookup order).
struct Resources {
  const Doc& doc;
  const StringMap& limits;
  const StringMap& requests;
  std::string where;  // "spec.containers[0].resources."
  const Scalar* find(std::string_view name) const {
    if (const Entry* e = limits.find(name)) return &e->value;
    if (const Entry* e = requests.find(name)) return &e->value;
    return nullptr;
  }
  bool has(std::string_view name) const { return find(name) != nullptr; }
  int64_t integer(const std::string& name) const {
    const Scalar& n = *find(name);
    try {
      return parse_quantity_integer(doc.scalar(n, where, name));
    } catch (const CodecError& e) {
      doc.fail(n.at, where + name, e.what());
    }
  }
  int64_t milli(const Scalar& n, const std::string& field) const {
    try {
      return parse_quantity_milli(doc.scalar(n, field));
    } catch (const CodecError& e) {
      doc.fail(n.at, field, e.what());
    }
  }
};

// nvidia.com/gpumem counts MiB. HAMi reads it with Quantity.AsInt64 into an
// int32: "4000m" (a milli quantity) does not read and silently becomes "the
// whole card", "4Gi" wraps, "-4000" asks for less than nothing. Those are
// refused with the unit spelled out; whole numbers ("4000", "4k", "4e3") are
// read as HAMi reads them.
int64_t gpu_memory_mib(const Doc& doc, const Scalar& n, const std::string& field) {
  const std::string text = doc.scalar(n, field);
  const std::string unit = "gpumem counts MiB (write 4000 for 4000 MiB, 4096 for 4 GiB)";
  int64_t mib = 0;
  try {
    mib = parse_quantity_integer(text);
  } catch (const CodecError& e) {
    doc.fail(n.at, field, fmt::format("{}; {}", e.what(), unit));
  }
  const size_t suffix = text.find_first_not_of("+-0123456789.");
  const std::string tail = suffix == std::string::npos ? "" : text.substr(suffix);
  if (tail == "m" || tail == "u" || tail == "n" || tail.find('-') != std::string::npos ||
      (tail.empty() && text.find('.') != std::string::npos))
    doc.fail(n.at, field,
             fmt::format("'{}' is a fraction-scaled quantity HAMi cannot read as an integer (it would give "
                         "the whole card); {}",
                         text, unit));
  if (mib < 0) doc.fail(n.at, field, fmt::format("'{}' is negative; {}", text, unit));
  if (mib > std::numeric_limits<int32_t>::max())
    doc.fail(n.at, field, fmt::format("'{}' is {} MiB, beyond HAMi's int32; {}", text, mib, unit));
  return mib;
}

// A resource under the GPU resources' own prefix that HAMi does not know is
// almost always a typo (nvidia.com/gpumemory): Kubernetes would leave such a
// pod Pending on an unknown extended resource, so it is refused, not ignored.
void check_gpu_resource_names(const Doc& doc, const StringMap& map, const std::string& where,
                              const RequestDefaults& def) {
  const std::string& prefix = def.resource_count;  // "nvidia.com/gpu"
  for (const Entry& e : map.entries) {
    const std::string& key = e.key;
    if (key.rfind(prefix, 0) != 0 || (key.size() > prefix.size() && key[prefix.size()] == '.'))
      continue;  // nvidia.com/gpu.shared and the like belong to other device plugins
    if (key == def.resource_count || key == def.resource_memory || key == def.resource_memory_percentage ||
        key == def.resource_cores || key == def.resource_priority)
      continue;
    doc.fail(e.key_at, where + key,
             fmt::format("unknown resource '{}' (HAMi reads {}, {}, {}, {}); Kubernetes would leave this pod "
                         "Pending on it",
                         key, def.resource_count, def.resource_memory, def.resource_memory_percentage,
                         def.resource_cores));
  }
}

ContainerRequest parse_container(const Doc& doc, const ContainerObject& c, const std::string& where,
                                 std::string& cores_clamped, const RequestDefaults& def,
                                 HostResources& host) {
  ContainerRequest r;
  if (c.name.present()) r.name = doc.scalar(c.name, where, "name");
  Resources rs{doc, c.limits, c.requests, where + "resources."};
  if (!c.limits.entries.empty()) check_gpu_resource_names(doc, c.limits, where + "resources.limits.", def);
  if (!c.requests.entries.empty())
    check_gpu_resource_names(doc, c.requests, where + "resources.requests.", def);

  // Host CPU / memory: requests, else limits (Kubernetes defaults requests to limits).
  auto host_value = [&](const char* name, bool mib) -> int64_t {
    const Entry* e = rs.requests.find(name);
    if (!e) e = rs.limits.find(name);
    if (!e) return 0;
    const Scalar& n = e->value;
    int64_t m = rs.milli(n, where + "resources." + name);
    if (m < 0) doc.fail(n.at, where + "resources." + name, "must not be negative");
    return mib ? (m / 1000 + (1024 * 1024 - 1)) / (1024 * 1024) : m;
  };
  host.cpu_milli = host_value("cpu", false);
  host.memory_mib = host_value("memory", true);

  const bool has_count = rs.has(def.resource_count);
  const bool has_mem = rs.has(def.resource_memory);
  const bool has_pct = rs.has(def.resource_memory_percentage);
  const bool has_cores = rs.has(def.resource_cores);
  int64_t count = 0;
  if (has_count)
    count = rs.integer(def.resource_count);
  else if ((has_mem || has_pct || has_cores) && def.default_gpu_num > 0)
    count = def.default_gpu_num;  // webhook
  if (count < 0)
    doc.fail(rs.find(def.resource_count)->at, where + def.resource_count, "must not be negative");
  if (count > 1024)
    doc.fail(rs.find(def.resource_count)->at, where + def.resource_count, "is unreasonably large");
  if (rs.has(def.resource_priority)) r.priority = static_cast<int32_t>(rs.integer(def.resource_priority));
  if (count == 0) return r;
  r.count = static_cast<int32_t>(count);

  int64_t pct = kMemoryPercentUnset;
  if (has_pct) {
    pct = rs.integer(def.resource_memory_percentage);
    if (pct < 0 || pct > 100)
      doc.fail(rs.find(def.resource_memory_percentage)->at, where + def.resource_memory_percentage,
               fmt::format("{} is not a percentage between 0 and 100", pct));
    if (pct == 0) pct = kMemoryPercentUnset;  // HAMi ignores 0 (it would mean "no limit" to the shim)
  }
  int64_t mem = 0;
  if (has_mem) mem = gpu_memory_mib(doc, *rs.find(def.resource_memory), rs.where + def.resource_memory);
  // Webhook: a whole card and no cores given means the card exclusively.
  bool exclusive_default = false;
  if (!has_cores) exclusive_default = has_pct ? pct == 100 : !has_mem;
  if (pct == kMemoryPercentUnset && mem == 0) {
    if (def.default_memory_mib != 0)
      mem = def.default_memory_mib;
    else
      pct = 100;
  }
  r.memory_mib = mem;
  r.memory_percent = static_cast<int32_t>(pct);
  r.cores = def.default_cores;
  if (has_cores) {
    int64_t cores = rs.integer(def.resource_cores);
    if (cores < 0)
      doc.fail(rs.find(def.resource_cores)->at, where + def.resource_cores, "must not be negative");
    // HAMi's Fit clamps Coresreq to 100 ("core limit can't exceed 100"):
    // the card's whole cores, so the card exclusively. Said once per pod.
    if (cores > 100 && cores_clamped.empty())
      cores_clamped = fmt::format("{}{} {}", rs.where, def.resource_cores, cores);
    r.cores = static_cast<int32_t>(std::min<int64_t>(cores, 100));
  } else if (exclusive_default) {
    r.cores = 100;
  }
  return r;
}

// Labels, the controlling owner and deletion: what makes a pod movable.
void read_pod_meta(const Doc& doc, const ObjectMeta& meta, PodMeta& out) {
  out.labels = string_map(doc, meta.labels, "metadata.labels");
  for (size_t i = 0; i < meta.owner_references.size(); ++i) {
    const OwnerReference& o = meta.owner_references[i];
    if (!o.controller) continue;
    const std::string field = fmt::format("metadata.ownerReferences[{}]", i);
    if (out.controller)
      doc.fail(o.at, field, "a pod has at most one controller (ownerReference with controller: true)");
    if (o.kind.empty()) doc.fail(o.at, field + ".kind", "an owner reference needs one");
    if (o.name.empty()) doc.fail(o.at, field + ".name", "an owner reference needs one");
    out.controller = ControllerOwner{o.kind, o.name, o.uid};
  }
  out.deleting = meta.deletion_timestamp.given();
}

// status.conditions[type=Ready]: the disruption controller's "healthy".
void read_ready_condition(const PodObject& pod, PodMeta& out) {
  for (const auto& c : pod.conditions)
    if (c.type.is_text() && c.type.text == "Ready") out.ready = c.status.is_text() && c.status.text == "True";
}

// metadata.name, which every object read here must have (`missing` says so).
const std::string& object_name(const Doc& doc, const ObjectHeader& header, const char* missing) {
  if (header.meta.kind != Scalar::Kind::Mapping || !header.meta.name.present())
    doc.fail(header.at, "metadata.name", missing);
  return doc.scalar(header.meta.name, "metadata.name");
}

PodFacts pod_facts(const Doc& doc, const PodObject& obj) {
  PodFacts facts;
  facts.labels = string_map(doc, obj.header.meta.labels, "metadata.labels");
  facts.annotations = string_map(doc, obj.header.meta.annotations, "metadata.annotations");
  auto read_list = [&](const std::vector<ContainerObject>& list, const char* key,
                       std::vector<ContainerResources>& out) {
    for (size_t i = 0; i < list.size(); ++i) {
      const std::string where = fmt::format("spec.{}[{}].", key, i);
      ContainerResources& c = out.emplace_back();
      if (list[i].name.present()) c.name = doc.scalar(list[i].name, where, "name");
      c.limits = string_map(doc, list[i].limits, where + "resources.limits");
      c.requests = string_map(doc, list[i].requests, where + "resources.requests");
    }
  };
  read_list(obj.init_containers, "initContainers", facts.init_containers);
  read_list(obj.containers, "containers", facts.containers);
  return facts;
}

// A pod in another dialect's terms (Koordinator's resources, a KAI share):
// that dialect's unit reads its facts and says the request (docs/dialects.md).
// HAMi's reading stays for every other pod; only a pod that names a
// dialect's request pays for building its facts.
void apply_dialect_requests(const Doc& doc, const PodObject& obj, PodRequest& p) {
  const ObjectMeta& meta = obj.header.meta;
  if (const Entry* provider = meta.labels.find(kKoordIsolationProvider))
    p.gpu_isolation_provider = doc.scalar(provider->value, "metadata.labels.", provider->key);
  const dialects::DialectUnit* asked = nullptr;
  for (const dialects::DialectUnit* unit : dialects::all()) {
    if (!unit->names_request(obj)) continue;
    if (asked)
      doc.fail(meta.annotations.at, "metadata.annotations",
               fmt::format("the pod asks {}'s GPU requests and {}'s at once", asked->name(), unit->name()));
    asked = unit;
  }
  if (!asked) return;
  try {
    asked->read_request(pod_facts(doc, obj), p);
  } catch (const CodecError& e) {
    if (asked->request_at() == dialects::RequestAt::Annotations)
      doc.fail(meta.annotations.at, "metadata.annotations", e.what());
    doc.fail(obj.spec_at, "spec.containers[].resources", e.what());
  }
}

// spec.priority is an int32 (the admission plugin fills it from the
// PriorityClass); preemptionPolicy is PreemptLowerPriority or Never.
void read_preemption_fields(const Doc& doc, const PodObject& obj, PodDocument& pd) {
  if (obj.priority.given()) {
    const std::string& text = doc.scalar(obj.priority, "spec.priority");
    int64_t value = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc() || end != text.data() + text.size() ||
        value < std::numeric_limits<int32_t>::min() || value > std::numeric_limits<int32_t>::max())
      doc.fail(obj.priority.at, "spec.priority", fmt::format("'{}' is not a 32-bit integer", text));
    pd.priority = static_cast<int32_t>(value);
    pd.priority_given = true;
  }
  if (obj.priority_class_name.given())
    pd.priority_class = doc.scalar(obj.priority_class_name, "spec.priorityClassName");
  if (obj.preemption_policy.given()) {
    const std::string& text = doc.scalar(obj.preemption_policy, "spec.preemptionPolicy");
    if (text != "Never" && text != "PreemptLowerPriority")
      doc.fail(obj.preemption_policy.at, "spec.preemptionPolicy",
               fmt::format("unknown policy '{}' (PreemptLowerPriority, Never)", text));
    pd.preempt_never = text == "Never";
    pd.preemption_policy_given = true;
  }
  if (obj.start_time.given()) pd.started = doc.scalar(obj.start_time, "status.startTime");
  if (obj.nominated_node_name.given())
    pd.nominated_node = doc.scalar(obj.nominated_node_name, "status.nominatedNodeName");
}

PodDocument parse_pod(const Doc& doc, const PodObject& obj, const RequestDefaults& def,
                      std::vector<std::string>* warnings) {
  PodDocument pd;
  pd.line = doc.ctx.line_of(obj.header.at);
  PodRequest& p = pd.request;
  const ObjectMeta& meta = obj.header.meta;
  p.name = object_name(doc, obj.header, "a Pod needs a name");
  if (meta.namespace_name.present()) p.ns = doc.scalar(meta.namespace_name, "metadata.namespace");
  if (meta.uid.present()) p.uid = doc.scalar(meta.uid, "metadata.uid");
  if (meta.creation_timestamp.given()) {
    pd.created = doc.scalar(meta.creation_timestamp, "metadata.creationTimestamp");
    pd.created_line = doc.ctx.line_of(meta.creation_timestamp.at);
  }
  read_pod_meta(doc, meta, pd.meta);
  read_preemption_fields(doc, obj, pd);
  if (obj.resource_claims.leaf.given()) pd.claims = dra::pod_claims(obj, doc.ctx);
  constexpr std::string_view kPrefix = "metadata.annotations.";
  for (const Entry& e : meta.annotations.entries) {
    const std::string& key = e.key;
    const Scalar& vn = e.value;
    const std::string& v = doc.scalar(vn, kPrefix, key);
    auto field = [&] { return std::string(kPrefix) + key; };
    if (key == "nvidia.com/use-gputype")
      p.selectors.use_types = comma_list(v);
    else if (key == "nvidia.com/nouse-gputype")
      p.selectors.nouse_types = comma_list(v);
    else if (key == "nvidia.com/use-gpuuuid")
      p.selectors.use_uuids = comma_list(v);
    else if (key == "nvidia.com/nouse-gpuuuid")
      p.selectors.nouse_uuids = comma_list(v);
    else if (key == "nvidia.com/numa-bind")
      p.selectors.numa_bind = parse_bool_annotation(doc, vn.at, field(), v);
    else if (key == "nvidia.com/vgpu-mode")
      p.selectors.vgpu_mode = v;
    else if (key == "hami.io/node-scheduler-policy") {
      if (v != "binpack" && v != "spread")
        doc.fail(vn.at, field(), fmt::format("unknown node policy '{}' (binpack, spread)", v));
      p.node_policy = v;
    } else if (key == "hami.io/gpu-scheduler-policy") {
      validate_gpu_policy(doc, vn.at, field(), v);
      p.gpu_policy = v;
    } else if (key == "hami.io/device-scoring-weights")
      p.weights = parse_weights(doc, vn.at, field(), v);
    else if (key == kAssignedNodeAnnotation)
      pd.assigned_node = v;
    else if (key == kAllocatedAnnotation) {
      pd.allocated = v;
      pd.allocated_line = doc.ctx.line_of(vn.at);
    } else if (key == kMigAllocationsAnnotation) {
      pd.mig_allocations = v;
      pd.mig_allocations_line = doc.ctx.line_of(vn.at);
    } else if (key == kExpectedDurationAnnotation) {
      pd.expected_duration = v;
      pd.expected_duration_line = doc.ctx.line_of(vn.at);
    } else if (key == kKoordDeviceAllocated) {
      pd.koordinator_allocated = v;
      pd.koordinator_allocated_line = doc.ctx.line_of(vn.at);
    } else if (key == kKaiGpuIndexAnnotation) {
      pd.kai_reserved_gpu = v;
    }
  }
  if (obj.spec_kind == Scalar::Kind::Absent) doc.fail(obj.header.at, "spec", "a Pod needs a spec");
  if (obj.node_name.present()) pd.node_name = doc.scalar(obj.node_name, "spec.nodeName");
  if (obj.phase.present()) pd.phase = doc.scalar(obj.phase, "status.phase");
  HostResources init_peak, app_sum;
  std::string cores_clamped;  // the first container whose gpucores HAMi clamps
  auto read_list = [&](const std::vector<ContainerObject>& list, const char* key,
                       std::vector<ContainerRequest>& out, bool init) {
    out.reserve(list.size());
    for (size_t i = 0; i < list.size(); ++i) {
      HostResources h;
      out.push_back(
          parse_container(doc, list[i], fmt::format("spec.{}[{}].", key, i), cores_clamped, def, h));
      if (init) {
        init_peak.cpu_milli = std::max(init_peak.cpu_milli, h.cpu_milli);
        init_peak.memory_mib = std::max(init_peak.memory_mib, h.memory_mib);
      } else {
        app_sum.cpu_milli += h.cpu_milli;
        app_sum.memory_mib += h.memory_mib;
      }
    }
  };
  read_ready_condition(obj, pd.meta);
  read_list(obj.init_containers, "initContainers", p.init_containers, true);
  read_list(obj.containers, "containers", p.containers, false);
  if (p.containers.empty()) doc.fail(obj.spec_at, "spec.containers", "a Pod needs at least one container");
  // Kubernetes' effective request: the larger of the init peak and the app sum.
  p.host.cpu_milli = std::max(init_peak.cpu_milli, app_sum.cpu_milli);
  p.host.memory_mib = std::max(init_peak.memory_mib, app_sum.memory_mib);
  apply_dialect_requests(doc, obj, p);
  if (warnings && !cores_clamped.empty())
    warnings->push_back(fmt::format(
        "{}{}: pod {}/{}: {} is above 100; HAMi treats it as 100 (the whole "
        "card's cores: the card exclusively)",
        doc.ctx.source(), pd.line > 0 ? fmt::format(":{}", pd.line) : "", p.ns, p.name, cores_clamped));
  return pd;
}

BudgetDocument::IntOrPercent int_or_percent(const Doc& doc, const IntOrString& v, const std::string& field) {
  const std::string& text = v.text;
  const bool percent = !v.is_int && !text.empty() && text.back() == '%';
  const std::string digits = percent ? text.substr(0, text.size() - 1) : text;
  int64_t n = -1;
  if (!digits.empty() && digits.size() <= 9 &&
      std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; }))
    n = std::stoll(digits);
  if (n < 0)
    doc.fail(v.at, field, fmt::format("'{}' is neither a whole number nor a percentage like 50%", text));
  if (percent && n > 100) doc.fail(v.at, field, fmt::format("'{}' is more than 100%", text));
  return {static_cast<int32_t>(n), percent};
}

BudgetDocument parse_budget(const Doc& doc, const PodDisruptionBudgetObject& obj) {
  BudgetDocument b;
  b.line = doc.ctx.line_of(obj.header.at);
  b.api_version = obj.header.api_version;
  const ObjectMeta& meta = obj.header.meta;
  if (meta.kind != Scalar::Kind::Mapping || !meta.name.given())
    doc.fail(obj.header.at, "metadata.name", "a PodDisruptionBudget needs a name");
  b.name = doc.scalar(meta.name, "metadata.name");
  if (meta.namespace_name.given()) b.ns = doc.scalar(meta.namespace_name, "metadata.namespace");
  if (obj.spec_kind != Scalar::Kind::Mapping)
    doc.fail(obj.header.at, "spec", "a PodDisruptionBudget needs a spec");
  if (obj.min_available.given) b.min_available = int_or_percent(doc, obj.min_available, "spec.minAvailable");
  if (obj.max_unavailable.given)
    b.max_unavailable = int_or_percent(doc, obj.max_unavailable, "spec.maxUnavailable");
  if (b.min_available && b.max_unavailable)
    doc.fail(obj.max_unavailable.at, "spec.maxUnavailable",
             "minAvailable and maxUnavailable cannot both be set");
  if (!obj.selector.given) return b;
  b.has_selector = true;
  b.match_labels = string_map(doc, obj.selector.match_labels, "spec.selector.matchLabels");
  for (size_t i = 0; i < obj.selector.match_expressions.size(); ++i) {
    const LabelSelectorRequirement& e = obj.selector.match_expressions[i];
    const std::string field = fmt::format("spec.selector.matchExpressions[{}]", i);
    if (e.key.empty()) doc.fail(e.at, field + ".key", "an expression needs a key");
    if (e.op.empty()) doc.fail(e.at, field + ".operator", "an expression needs an operator");
    b.match_expressions.push_back({e.key, e.op, e.values, doc.ctx.line_of(e.at)});
  }
  return b;
}

NodeDocument parse_node(const Doc& doc, const NodeObject& obj) {
  NodeDocument nd;
  nd.line = doc.ctx.line_of(obj.header.at);
  Node& n = nd.node;
  const ObjectMeta& meta = obj.header.meta;
  n.name = object_name(doc, obj.header, "a Node needs a name");
  if (std::string problem = node_name_problem(n.name); !problem.empty())
    doc.fail(meta.name.at, "metadata.name", problem);
  auto field = [](std::string_view key) { return "metadata.annotations." + std::string(key); };
  const Entry* reg = meta.annotations.find(kRegisterAnnotation);
  // The labels say a Koordinator or KAI node's cards: read only for a node
  // HAMi has not registered (a kubectl node carries a score of them).
  if (!reg) {
    nd.labels = string_map(doc, meta.labels, "metadata.labels");
  } else {
    nd.registered = true;
    try {
      n.devices = decode_registration(doc.scalar(reg->value, field(kRegisterAnnotation)));
    } catch (const CodecError& e) {
      doc.fail(reg->value.at, field(kRegisterAnnotation), e.what());
    }
    for (size_t i = 0; i < n.devices.size(); ++i)
      for (size_t j = 0; j < i; ++j)
        if (n.devices[i].uuid == n.devices[j].uuid)
          doc.fail(reg->value.at, field(kRegisterAnnotation),
                   fmt::format("card '{}' is registered twice", n.devices[i].uuid));
  }
  if (const Entry* sc = meta.annotations.find(kPairScoreAnnotation)) {
    try {
      n.topology = decode_pair_scores(doc.scalar(sc->value, field(kPairScoreAnnotation)), n.devices);
    } catch (const CodecError& e) {
      doc.fail(sc->value.at, field(kPairScoreAnnotation), e.what());
    }
  }
  if (const Entry* co = meta.annotations.find(kCordonAnnotation))
    n.cordoned_uuids = decode_uuid_list(doc.scalar(co->value, field(kCordonAnnotation)));
  if (obj.unschedulable.given())
    nd.unschedulable = parse_bool_annotation(doc, obj.unschedulable.at, "spec.unschedulable",
                                             doc.scalar(obj.unschedulable, "spec.unschedulable"));
  // Host capacity from status.allocatable (else capacity), when given.
  const StringMap& alloc = obj.allocatable.kind != Scalar::Kind::Absent ? obj.allocatable : obj.capacity;
  if (alloc.kind == Scalar::Kind::Mapping) {
    auto read = [&](const char* key, bool mib) -> int64_t {
      const Entry* e = alloc.find(key);
      if (!e) return 0;
      const std::string name = std::string("status.allocatable.") + key;
      try {
        int64_t m = parse_quantity_milli(doc.scalar(e->value, name));
        if (m < 0) doc.fail(e->value.at, name, "must not be negative");
        return mib ? m / 1000 / (1024 * 1024) : m;
      } catch (const CodecError& err) {
        doc.fail(e->value.at, name, err.what());
      }
    };
    n.capacity.cpu_milli = read("cpu", false);
    n.capacity.memory_mib = read("memory", true);
    if (alloc.find("nvidia.com/gpu")) nd.allocatable_gpus = read("nvidia.com/gpu", false) / 1000;
  }
  return nd;
}

// A Koordinator Device as plain data for the dialect codec.
DeviceDocument parse_device(const Doc& doc, const DeviceObject& obj) {
  DeviceDocument out;
  out.line = doc.ctx.line_of(obj.header.at);
  KoordinatorDeviceCr& cr = out.cr;
  const ObjectMeta& meta = obj.header.meta;
  cr.name = object_name(doc, obj.header, "a Device needs the name of its node");
  cr.labels = string_map(doc, meta.labels, "metadata.labels");
  cr.annotations = string_map(doc, meta.annotations, "metadata.annotations");
  for (size_t i = 0; i < obj.devices.size(); ++i) {
    const DeviceInfo& d = obj.devices[i];
    const std::string where = fmt::format("spec.devices[{}].", i);
    auto integer = [&](const Scalar& n, const char* key) -> int {
      const std::string field = where + key;
      try {
        const int64_t v = parse_quantity_integer(doc.scalar(n, field));
        if (v < std::numeric_limits<int>::min() || v > std::numeric_limits<int>::max())
          doc.fail(n.at, field, "out of range");
        return static_cast<int>(v);
      } catch (const CodecError& e) {
        doc.fail(n.at, field, e.what());
      }
    };
    KoordinatorDeviceInfo info;
    if (d.type.given()) info.type = doc.scalar(d.type, where, "type");
    if (d.uuid.given()) info.uuid = doc.scalar(d.uuid, where, "id");
    if (d.minor.given()) info.minor = integer(d.minor, "minor");
    if (d.health.given())
      info.health =
          parse_bool_annotation(doc, d.health.at, where + "health", doc.scalar(d.health, where, "health"));
    info.resources = string_map(doc, d.resources, where + "resources");
    // Any topology field written counts as topology (the Device's
    // topology mapping); socket and bus are read but not modelled.
    const bool topology =
        d.socket_id.given() || d.numa_node_id.given() || d.pcie_id.given() || d.bus_id.given();
    if (topology) {
      info.has_topology = true;
      if (d.numa_node_id.given()) info.numa = integer(d.numa_node_id, "topology.nodeID");
      if (d.pcie_id.given()) info.pcie = doc.scalar(d.pcie_id, where, "topology.pcieID");
    }
    cr.devices.push_back(std::move(info));
  }
  return out;
}

}  // namespace

std::string node_name_problem(std::string_view name) {
  if (name.empty()) return "a node needs a name";
  for (char c : name)
    if (c == ',' || c == ':' || c == ';' || std::isspace(static_cast<unsigned char>(c)) || c == '\0')
      return fmt::format("node name '{}' holds '{}', which HAMi's annotations use as a separator", name,
                         c == '\0' ? std::string("\\0") : std::string(1, c));
  return {};
}

PodDocument pod_document(const PodObject& pod, const ReadContext& context, const RequestDefaults& defaults,
                         std::vector<std::string>* warnings) {
  return parse_pod(Doc{context}, pod, defaults, warnings);
}

NodeDocument node_document(const NodeObject& node, const ReadContext& context) {
  return parse_node(Doc{context}, node);
}

DeviceDocument device_document(const DeviceObject& device, const ReadContext& context) {
  return parse_device(Doc{context}, device);
}

void complete_dialect_nodes(std::vector<NodeDocument>& nodes, const std::vector<DeviceDocument>& devices,
                            const std::string& source, std::vector<std::string>& warnings) {
  dialects::NodeObjects objects;
  objects.devices = devices;
  dialects::register_nodes(nodes, objects, source, warnings);
}

std::vector<NodeDocument> parse_nodes(std::string_view text, const std::string& source,
                                      std::vector<std::string>* warnings) {
  std::vector<NodeDocument> out;
  dialects::NodeObjects objects;
  read_kube_objects(KubeText::from_string(text, source),
                    [&](KubeObject&& object, const ReadContext& context) {
                      if (const auto* node = std::get_if<NodeObject>(&object))
                        out.push_back(node_document(*node, context));
                      // DRA's slices give cards only where its claims are
                      // read too (the snapshot's complete_requests): here a
                      // DRA pod's devices would count as free.
                      else if (!std::holds_alternative<ResourceObject>(object))
                        objects.take(object, context);
                    });
  std::vector<std::string> ignored;
  dialects::register_nodes(out, objects, source, warnings ? *warnings : ignored);
  return out;
}

std::vector<PodDocument> parse_pods(std::string_view text, const std::string& source,
                                    const RequestDefaults& defaults, std::vector<std::string>* warnings) {
  std::vector<PodDocument> out;
  read_kube_objects(KubeText::from_string(text, source),
                    [&](KubeObject&& object, const ReadContext& context) {
                      if (const auto* pod = std::get_if<PodObject>(&object))
                        out.push_back(pod_document(*pod, context, defaults, warnings));
                    });
  return out;
}

BudgetDocument budget_document(const PodDisruptionBudgetObject& budget, const ReadContext& context) {
  return parse_budget(Doc{context}, budget);
}

std::vector<BudgetDocument> parse_disruption_budgets(std::string_view text, const std::string& source) {
  std::vector<BudgetDocument> out;
  read_kube_objects(KubeText::from_string(text, source),
                    [&](KubeObject&& object, const ReadContext& context) {
                      if (const auto* b = std::get_if<PodDisruptionBudgetObject>(&object))
                        out.push_back(budget_document(*b, context));
                    });
  return out;
}

}  // namespace gpuslice::core::codec
