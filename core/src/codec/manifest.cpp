#include "gpuslice/core/codec/manifest.hpp"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <limits>

#include "gpuslice/core/codec/allocation_annotation.hpp"
#include "gpuslice/core/codec/kai.hpp"
#include "gpuslice/core/codec/koordinator.hpp"
#include "gpuslice/core/codec/quantity.hpp"
#include "gpuslice/core/codec/registration.hpp"
#include "gpuslice/core/codec/yaml_documents.hpp"
#include "gpuslice/core/errors.hpp"
#include "gpuslice/core/gpu_policy.hpp"

namespace gpuslice::core::codec {

namespace {

// Const lookup: yaml-cpp's non-const operator[] inserts the key it looks for.
// A missing key yields an invalid (falsy) node, never a null one.
YAML::Node get(const YAML::Node& map, const std::string& key) {
  // A fresh empty map per miss: a const lookup allocates the key in the
  // map's memory, so a shared static one would grow without bound.
  if (!map || !map.IsMap()) {
    const YAML::Node empty(YAML::NodeType::Map);
    return empty[key];
  }
  return map[key];
}

// A missing key's node is invalid and has no mark (asking throws): line 0.
int line_of(const YAML::Node& n) { return n.IsDefined() && n.Mark().line >= 0 ? n.Mark().line + 1 : 0; }

// Everything that reads one document goes through this context, so each
// error names the file, the line and the field.
struct Doc {
  const std::string& source;
  [[noreturn]] void fail(const YAML::Node& at, const std::string& field, const std::string& what) const {
    throw InputError(source, line_of(at), field, what);
  }
  std::string scalar(const YAML::Node& n, const std::string& field) const {
    if (!n.IsScalar()) fail(n, field, "must be a string or number");
    return n.Scalar();
  }
  YAML::Node map_at(const YAML::Node& parent, const char* key, const std::string& field) const {
    YAML::Node n = get(parent, key);
    if (n && !n.IsNull() && !n.IsMap()) fail(n, field, "must be a mapping");
    return n;
  }
};

// A map of strings (labels, annotations, resource lists) as plain data for
// the dialect codecs.
StringMap string_map(const Doc& doc, const YAML::Node& map, const std::string& field) {
  StringMap out;
  if (!map || map.IsNull()) return out;
  if (!map.IsMap()) doc.fail(map, field, "must be a mapping");
  for (auto it = map.begin(); it != map.end(); ++it) {
    const std::string key = doc.scalar(it->first, field);
    out[key] = doc.scalar(it->second, field + "." + key);
  }
  return out;
}

std::vector<YAML::Node> load_documents(std::string_view text, const std::string& source) {
  const std::vector<YAML::Node> docs = load_yaml_documents(text, source);
  std::vector<YAML::Node> objects;
  for (const auto& d : docs) {
    if (!d || d.IsNull()) continue;
    if (!d.IsMap())
      throw InputError(source, line_of(d), "", "a document must be a Kubernetes object (a mapping)");
    YAML::Node kind = get(d, "kind");
    if (kind && kind.IsScalar() && (kind.Scalar() == "List" || kind.Scalar().ends_with("List"))) {
      YAML::Node items = get(d, "items");
      if (!items || items.IsNull()) continue;
      if (!items.IsSequence()) throw InputError(source, line_of(items), "items", "must be a list");
      for (const auto& item : items) {
        if (!item.IsMap()) throw InputError(source, line_of(item), "items[]", "must be a Kubernetes object");
        objects.push_back(item);
      }
    } else {
      objects.push_back(d);
    }
  }
  return objects;
}

std::string kind_of(const YAML::Node& obj) {
  YAML::Node k = get(obj, "kind");
  return k && k.IsScalar() ? k.Scalar() : std::string();
}

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

bool parse_bool_annotation(const Doc& doc, const YAML::Node& at, const std::string& field,
                           const std::string& v) {
  if (v == "1" || v == "t" || v == "T" || v == "true" || v == "TRUE" || v == "True") return true;
  if (v == "0" || v == "f" || v == "F" || v == "false" || v == "FALSE" || v == "False") return false;
  doc.fail(at, field, fmt::format("'{}' is not a boolean", v));
}

ScoringWeights parse_weights(const Doc& doc, const YAML::Node& at, const std::string& field,
                             const std::string& v) {
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

void validate_gpu_policy(const Doc& doc, const YAML::Node& at, const std::string& field,
                         const std::string& v) {
  if (std::string problem = gpu_policy_problem(v); !problem.empty()) doc.fail(at, field, problem);
}

// A container's resources: limits first, then requests (HAMi's lookup order).
struct Resources {
  const Doc& doc;
  YAML::Node limits, requests;
  std::string where;
  // Const lookups only: yaml-cpp's non-const operator[] inserts the key.
  static YAML::Node lookup(const YAML::Node& map, const std::string& name) { return get(map, name); }
  YAML::Node find(const std::string& name) const {
    if (YAML::Node v = lookup(limits, name)) return v;
    return lookup(requests, name);
  }
  bool has(const std::string& name) const { return static_cast<bool>(find(name)); }
  int64_t integer(const std::string& name) const {
    YAML::Node n = find(name);
    try {
      return parse_quantity_integer(doc.scalar(n, where + name));
    } catch (const CodecError& e) {
      doc.fail(n, where + name, e.what());
    }
  }
  int64_t milli(const YAML::Node& n, const std::string& field) const {
    try {
      return parse_quantity_milli(doc.scalar(n, field));
    } catch (const CodecError& e) {
      doc.fail(n, field, e.what());
    }
  }
};

// nvidia.com/gpumem counts MiB. HAMi reads it with Quantity.AsInt64 into an
// int32: "4000m" (a milli quantity) does not read and silently becomes "the
// whole card", "4Gi" wraps, "-4000" asks for less than nothing. Those are
// refused with the unit spelled out; whole numbers ("4000", "4k", "4e3") are
// read as HAMi reads them.
int64_t gpu_memory_mib(const Doc& doc, const YAML::Node& n, const std::string& field) {
  const std::string text = doc.scalar(n, field);
  const std::string unit = "gpumem counts MiB (write 4000 for 4000 MiB, 4096 for 4 GiB)";
  int64_t mib = 0;
  try {
    mib = parse_quantity_integer(text);
  } catch (const CodecError& e) {
    doc.fail(n, field, fmt::format("{}; {}", e.what(), unit));
  }
  const size_t suffix = text.find_first_not_of("+-0123456789.");
  const std::string tail = suffix == std::string::npos ? "" : text.substr(suffix);
  if (tail == "m" || tail == "u" || tail == "n" || tail.find('-') != std::string::npos ||
      (tail.empty() && text.find('.') != std::string::npos))
    doc.fail(n, field,
             fmt::format("'{}' is a fraction-scaled quantity HAMi cannot read as an integer (it would give "
                         "the whole card); {}",
                         text, unit));
  if (mib < 0) doc.fail(n, field, fmt::format("'{}' is negative; {}", text, unit));
  if (mib > std::numeric_limits<int32_t>::max())
    doc.fail(n, field, fmt::format("'{}' is {} MiB, beyond HAMi's int32; {}", text, mib, unit));
  return mib;
}

// A resource under the GPU resources' own prefix that HAMi does not know is
// almost always a typo (nvidia.com/gpumemory): Kubernetes would leave such a
// pod Pending on an unknown extended resource, so it is refused, not ignored.
void check_gpu_resource_names(const Doc& doc, const YAML::Node& map, const std::string& where,
                              const RequestDefaults& def) {
  if (!map || !map.IsMap()) return;
  const std::string prefix = def.resource_count;  // "nvidia.com/gpu"
  for (auto it = map.begin(); it != map.end(); ++it) {
    if (!it->first.IsScalar()) continue;
    const std::string key = it->first.Scalar();
    if (key.rfind(prefix, 0) != 0 || (key.size() > prefix.size() && key[prefix.size()] == '.'))
      continue;  // nvidia.com/gpu.shared and the like belong to other device plugins
    if (key == def.resource_count || key == def.resource_memory || key == def.resource_memory_percentage ||
        key == def.resource_cores || key == def.resource_priority)
      continue;
    doc.fail(it->first, where + key,
             fmt::format("unknown resource '{}' (HAMi reads {}, {}, {}, {}); Kubernetes would leave this pod "
                         "Pending on it",
                         key, def.resource_count, def.resource_memory, def.resource_memory_percentage,
                         def.resource_cores));
  }
}

ContainerRequest parse_container(const Doc& doc, const YAML::Node& c, const std::string& where,
                                 const RequestDefaults& def, HostResources& host, ContainerResources& facts) {
  ContainerRequest r;
  if (!c.IsMap()) doc.fail(c, where, "a container must be a mapping");
  if (get(c, "name")) r.name = doc.scalar(get(c, "name"), where + "name");
  YAML::Node res = doc.map_at(c, "resources", where + "resources");
  Resources rs{doc, res ? doc.map_at(res, "limits", where + "resources.limits") : YAML::Node(),
               res ? doc.map_at(res, "requests", where + "resources.requests") : YAML::Node(),
               where + "resources."};
  facts.name = r.name;
  facts.limits = string_map(doc, rs.limits, where + "resources.limits");
  facts.requests = string_map(doc, rs.requests, where + "resources.requests");
  check_gpu_resource_names(doc, rs.limits, where + "resources.limits.", def);
  check_gpu_resource_names(doc, rs.requests, where + "resources.requests.", def);

  // Host CPU / memory: requests, else limits (Kubernetes defaults requests to limits).
  auto host_value = [&](const char* name, bool mib) -> int64_t {
    // Never assign to an invalid yaml-cpp node (it throws): pick, then bind.
    YAML::Node n = Resources::lookup(rs.requests, name) ? Resources::lookup(rs.requests, name)
                                                        : Resources::lookup(rs.limits, name);
    if (!n) return 0;
    int64_t m = rs.milli(n, where + "resources." + name);
    if (m < 0) doc.fail(n, where + "resources." + name, "must not be negative");
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
  if (count < 0) doc.fail(rs.find(def.resource_count), where + def.resource_count, "must not be negative");
  if (count > 1024)
    doc.fail(rs.find(def.resource_count), where + def.resource_count, "is unreasonably large");
  if (rs.has(def.resource_priority)) r.priority = static_cast<int32_t>(rs.integer(def.resource_priority));
  if (count == 0) return r;
  r.count = static_cast<int32_t>(count);

  int64_t pct = kMemoryPercentUnset;
  if (has_pct) {
    pct = rs.integer(def.resource_memory_percentage);
    if (pct < 0 || pct > 100)
      doc.fail(rs.find(def.resource_memory_percentage), where + def.resource_memory_percentage,
               fmt::format("{} is not a percentage between 0 and 100", pct));
    if (pct == 0) pct = kMemoryPercentUnset;  // HAMi ignores 0 (it would mean "no limit" to the shim)
  }
  int64_t mem = 0;
  if (has_mem) mem = gpu_memory_mib(doc, rs.find(def.resource_memory), rs.where + def.resource_memory);
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
    if (cores < 0) doc.fail(rs.find(def.resource_cores), where + def.resource_cores, "must not be negative");
    r.cores = static_cast<int32_t>(std::min<int64_t>(cores, 100));  // HAMi clamps to 100
  } else if (exclusive_default) {
    r.cores = 100;
  }
  return r;
}

// A pod in Koordinator's or KAI's resource names: their codecs read the
// pod's plain facts and the request lands on the container that carries it
// (docs/dialects.md). HAMi's own reading stays for every other pod.
void apply_dialect_requests(const Doc& doc, const YAML::Node& obj, const PodFacts& facts, PodRequest& p) {
  if (auto it = facts.labels.find(kKoordIsolationProvider); it != facts.labels.end())
    p.gpu_isolation_provider = it->second;
  const bool koordinator = asks_koordinator_gpu(facts);
  const bool kai = asks_kai_share(facts);
  if (koordinator && kai)
    doc.fail(obj, "metadata.annotations", "the pod asks Koordinator's GPU resources and a KAI share at once");
  auto clear_devices = [&] {
    for (auto* list : {&p.init_containers, &p.containers})
      for (auto& c : *list) {
        c.count = 0;
        c.memory_mib = 0;
        c.memory_percent = kMemoryPercentUnset;
        c.cores = 0;
      }
  };
  if (koordinator) {
    std::optional<ContainerRequest> r;
    try {
      r = decode_koordinator_request(facts);
    } catch (const CodecError& e) {
      doc.fail(get(obj, "spec"), "spec.containers[].resources", e.what());
    }
    if (!r) return;
    // The pod-level request goes on the first container naming a GPU resource.
    size_t at = 0;
    for (size_t i = 0; i < facts.init_containers.size() + facts.containers.size(); ++i) {
      const auto& c = i < facts.init_containers.size() ? facts.init_containers[i]
                                                       : facts.containers[i - facts.init_containers.size()];
      const bool names_gpu =
          std::any_of(c.requests.begin(), c.requests.end(),
                      [](const auto& kv) {
                        return kv.first.starts_with("koordinator.sh/gpu") || kv.first == "nvidia.com/gpu";
                      }) ||
          std::any_of(c.limits.begin(), c.limits.end(), [](const auto& kv) {
            return kv.first.starts_with("koordinator.sh/gpu") || kv.first == "nvidia.com/gpu";
          });
      if (names_gpu) {
        at = i;
        break;
      }
    }
    clear_devices();
    ContainerRequest& target =
        at < p.init_containers.size() ? p.init_containers[at] : p.containers[at - p.init_containers.size()];
    r->name = target.name;
    r->priority = target.priority;
    target = *r;
  } else if (kai) {
    KaiShare share;
    try {
      share = decode_kai_share(facts);
    } catch (const CodecError& e) {
      doc.fail(get(get(obj, "metadata"), "annotations"), "metadata.annotations", e.what());
    }
    ContainerRequest* target = &p.containers.front();
    if (!share.container.empty())
      for (auto* list : {&p.init_containers, &p.containers})
        for (auto& c : *list)
          if (c.name == share.container) target = &c;
    target->count = share.count;
    target->memory_mib = share.memory_mib;
    target->memory_fraction = share.fraction;
    target->memory_percent = kMemoryPercentUnset;
    target->cores = 0;
  }
}

PodDocument parse_pod(const Doc& doc, const YAML::Node& obj, const RequestDefaults& def) {
  PodDocument pd;
  pd.line = line_of(obj);
  PodRequest& p = pd.request;
  YAML::Node meta = doc.map_at(obj, "metadata", "metadata");
  if (!meta || !get(meta, "name")) doc.fail(obj, "metadata.name", "a Pod needs a name");
  p.name = doc.scalar(get(meta, "name"), "metadata.name");
  if (get(meta, "namespace")) p.ns = doc.scalar(get(meta, "namespace"), "metadata.namespace");
  if (get(meta, "uid")) p.uid = doc.scalar(get(meta, "uid"), "metadata.uid");
  if (YAML::Node created = get(meta, "creationTimestamp"); created && !created.IsNull()) {
    pd.created = doc.scalar(created, "metadata.creationTimestamp");
    pd.created_line = line_of(created);
  }
  PodFacts facts;
  facts.labels = string_map(doc, doc.map_at(meta, "labels", "metadata.labels"), "metadata.labels");
  YAML::Node ann = doc.map_at(meta, "annotations", "metadata.annotations");
  if (ann) {
    for (auto it = ann.begin(); it != ann.end(); ++it) {
      const std::string key = it->first.Scalar();
      const std::string field = "metadata.annotations." + key;
      const YAML::Node vn = it->second;  // a copy: it->second is a temporary
      const std::string v = doc.scalar(vn, field);
      facts.annotations[key] = v;
      if (key == kKoordDeviceAllocated) {
        pd.koordinator_allocated = v;
        pd.koordinator_allocated_line = line_of(vn);
      } else if (key == kKaiGpuIndexAnnotation) {
        pd.kai_reserved_gpu = v;
      }
      if (key == "nvidia.com/use-gputype")
        p.selectors.use_types = comma_list(v);
      else if (key == "nvidia.com/nouse-gputype")
        p.selectors.nouse_types = comma_list(v);
      else if (key == "nvidia.com/use-gpuuuid")
        p.selectors.use_uuids = comma_list(v);
      else if (key == "nvidia.com/nouse-gpuuuid")
        p.selectors.nouse_uuids = comma_list(v);
      else if (key == "nvidia.com/numa-bind")
        p.selectors.numa_bind = parse_bool_annotation(doc, vn, field, v);
      else if (key == "nvidia.com/vgpu-mode")
        p.selectors.vgpu_mode = v;
      else if (key == "hami.io/node-scheduler-policy") {
        if (v != "binpack" && v != "spread")
          doc.fail(vn, field, fmt::format("unknown node policy '{}' (binpack, spread)", v));
        p.node_policy = v;
      } else if (key == "hami.io/gpu-scheduler-policy") {
        validate_gpu_policy(doc, vn, field, v);
        p.gpu_policy = v;
      } else if (key == "hami.io/device-scoring-weights")
        p.weights = parse_weights(doc, vn, field, v);
      else if (key == kAssignedNodeAnnotation)
        pd.assigned_node = v;
      else if (key == kAllocatedAnnotation) {
        pd.allocated = v;
        pd.allocated_line = line_of(vn);
      } else if (key == kExpectedDurationAnnotation) {
        pd.expected_duration = v;
        pd.expected_duration_line = line_of(vn);
      }
    }
  }
  YAML::Node spec = doc.map_at(obj, "spec", "spec");
  if (!spec) doc.fail(obj, "spec", "a Pod needs a spec");
  if (YAML::Node bound = get(spec, "nodeName")) pd.node_name = doc.scalar(bound, "spec.nodeName");
  HostResources init_peak, app_sum;
  auto read_list = [&](const char* key, std::vector<ContainerRequest>& out, bool init) {
    YAML::Node list = get(spec, key);
    if (!list || list.IsNull()) return;
    if (!list.IsSequence()) doc.fail(list, std::string("spec.") + key, "must be a list");
    for (size_t i = 0; i < list.size(); ++i) {
      HostResources h;
      auto& container_facts = (init ? facts.init_containers : facts.containers).emplace_back();
      out.push_back(
          parse_container(doc, list[i], fmt::format("spec.{}[{}].", key, i), def, h, container_facts));
      if (init) {
        init_peak.cpu_milli = std::max(init_peak.cpu_milli, h.cpu_milli);
        init_peak.memory_mib = std::max(init_peak.memory_mib, h.memory_mib);
      } else {
        app_sum.cpu_milli += h.cpu_milli;
        app_sum.memory_mib += h.memory_mib;
      }
    }
  };
  if (YAML::Node status = doc.map_at(obj, "status", "status"))
    if (YAML::Node phase = get(status, "phase")) pd.phase = doc.scalar(phase, "status.phase");
  read_list("initContainers", p.init_containers, true);
  read_list("containers", p.containers, false);
  if (p.containers.empty()) doc.fail(spec, "spec.containers", "a Pod needs at least one container");
  // Kubernetes' effective request: the larger of the init peak and the app sum.
  p.host.cpu_milli = std::max(init_peak.cpu_milli, app_sum.cpu_milli);
  p.host.memory_mib = std::max(init_peak.memory_mib, app_sum.memory_mib);
  apply_dialect_requests(doc, obj, facts, p);
  pd.labels = std::move(facts.labels);
  return pd;
}

NodeDocument parse_node(const Doc& doc, const YAML::Node& obj) {
  NodeDocument nd;
  nd.line = line_of(obj);
  Node& n = nd.node;
  YAML::Node meta = doc.map_at(obj, "metadata", "metadata");
  if (!meta || !get(meta, "name")) doc.fail(obj, "metadata.name", "a Node needs a name");
  n.name = doc.scalar(get(meta, "name"), "metadata.name");
  if (std::string problem = node_name_problem(n.name); !problem.empty())
    doc.fail(get(meta, "name"), "metadata.name", problem);
  nd.labels = string_map(doc, doc.map_at(meta, "labels", "metadata.labels"), "metadata.labels");
  YAML::Node ann = doc.map_at(meta, "annotations", "metadata.annotations");
  if (ann) {
    auto field = [](std::string_view key) { return "metadata.annotations." + std::string(key); };
    if (YAML::Node reg = get(ann, std::string(kRegisterAnnotation))) {
      nd.registered = true;
      try {
        n.devices = decode_registration(doc.scalar(reg, field(kRegisterAnnotation)));
      } catch (const CodecError& e) {
        doc.fail(reg, field(kRegisterAnnotation), e.what());
      }
      for (size_t i = 0; i < n.devices.size(); ++i)
        for (size_t j = 0; j < i; ++j)
          if (n.devices[i].uuid == n.devices[j].uuid)
            doc.fail(reg, field(kRegisterAnnotation),
                     fmt::format("card '{}' is registered twice", n.devices[i].uuid));
    }
    if (YAML::Node sc = get(ann, std::string(kPairScoreAnnotation))) {
      try {
        n.topology = decode_pair_scores(doc.scalar(sc, field(kPairScoreAnnotation)), n.devices);
      } catch (const CodecError& e) {
        doc.fail(sc, field(kPairScoreAnnotation), e.what());
      }
    }
    if (YAML::Node co = get(ann, std::string(kCordonAnnotation)))
      n.cordoned_uuids = decode_uuid_list(doc.scalar(co, field(kCordonAnnotation)));
  }
  if (YAML::Node spec = doc.map_at(obj, "spec", "spec"))
    if (YAML::Node u = get(spec, "unschedulable"); u && !u.IsNull())
      nd.unschedulable =
          parse_bool_annotation(doc, u, "spec.unschedulable", doc.scalar(u, "spec.unschedulable"));
  // Host capacity from status.allocatable (else capacity), when given.
  if (YAML::Node status = doc.map_at(obj, "status", "status")) {
    YAML::Node alloc = get(status, "allocatable") ? get(status, "allocatable") : get(status, "capacity");
    if (alloc && alloc.IsMap()) {
      auto read = [&](const char* key, bool mib) -> int64_t {
        YAML::Node v = get(alloc, key);
        if (!v) return 0;
        try {
          int64_t m = parse_quantity_milli(doc.scalar(v, std::string("status.allocatable.") + key));
          if (m < 0) doc.fail(v, std::string("status.allocatable.") + key, "must not be negative");
          return mib ? m / 1000 / (1024 * 1024) : m;
        } catch (const CodecError& e) {
          doc.fail(v, std::string("status.allocatable.") + key, e.what());
        }
      };
      n.capacity.cpu_milli = read("cpu", false);
      n.capacity.memory_mib = read("memory", true);
      if (get(alloc, "nvidia.com/gpu")) nd.allocatable_gpus = read("nvidia.com/gpu", false) / 1000;
    }
  }
  return nd;
}

// A Koordinator Device CR (scheduling.koordinator.sh/v1alpha1 Device) as
// plain data.
KoordinatorDeviceCr parse_device_cr(const Doc& doc, const YAML::Node& obj) {
  KoordinatorDeviceCr cr;
  YAML::Node meta = doc.map_at(obj, "metadata", "metadata");
  if (!meta || !get(meta, "name")) doc.fail(obj, "metadata.name", "a Device needs the name of its node");
  cr.name = doc.scalar(get(meta, "name"), "metadata.name");
  cr.labels = string_map(doc, doc.map_at(meta, "labels", "metadata.labels"), "metadata.labels");
  cr.annotations =
      string_map(doc, doc.map_at(meta, "annotations", "metadata.annotations"), "metadata.annotations");
  YAML::Node spec = doc.map_at(obj, "spec", "spec");
  YAML::Node devices = get(spec, "devices");
  if (!devices || devices.IsNull()) return cr;
  if (!devices.IsSequence()) doc.fail(devices, "spec.devices", "must be a list");
  for (size_t i = 0; i < devices.size(); ++i) {
    const YAML::Node d = devices[i];
    const std::string where = fmt::format("spec.devices[{}].", i);
    if (!d.IsMap()) doc.fail(d, where, "must be a mapping");
    KoordinatorDeviceInfo info;
    if (YAML::Node t = get(d, "type")) info.type = doc.scalar(t, where + "type");
    if (YAML::Node id = get(d, "id")) info.uuid = doc.scalar(id, where + "id");
    auto integer = [&](const YAML::Node& n, const std::string& field) -> int {
      try {
        const int64_t v = parse_quantity_integer(doc.scalar(n, field));
        if (v < std::numeric_limits<int>::min() || v > std::numeric_limits<int>::max())
          doc.fail(n, field, "out of range");
        return static_cast<int>(v);
      } catch (const CodecError& e) {
        doc.fail(n, field, e.what());
      }
    };
    if (YAML::Node m = get(d, "minor"); m && !m.IsNull()) info.minor = integer(m, where + "minor");
    if (YAML::Node h = get(d, "health"); h && !h.IsNull())
      info.health = parse_bool_annotation(doc, h, where + "health", doc.scalar(h, where + "health"));
    info.resources = string_map(doc, doc.map_at(d, "resources", where + "resources"), where + "resources");
    if (YAML::Node topo = doc.map_at(d, "topology", where + "topology"); topo && !topo.IsNull()) {
      info.has_topology = true;
      if (YAML::Node n = get(topo, "nodeID")) info.numa = integer(n, where + "topology.nodeID");
      if (YAML::Node p = get(topo, "pcieID")) info.pcie = doc.scalar(p, where + "topology.pcieID");
    }
    cr.devices.push_back(std::move(info));
  }
  return cr;
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

std::vector<NodeDocument> parse_nodes(std::string_view text, const std::string& source,
                                      std::vector<std::string>* warnings) {
  Doc doc{source};
  std::vector<NodeDocument> out;
  std::vector<std::pair<KoordinatorDeviceCr, YAML::Node>> device_crs;
  for (const auto& obj : load_documents(text, source)) {
    const std::string kind = kind_of(obj);
    if (kind == "Node") out.push_back(parse_node(doc, obj));
    if (kind == "Device") device_crs.emplace_back(parse_device_cr(doc, obj), obj);
  }
  std::vector<std::string> ignored;
  std::vector<std::string>& warn = warnings ? *warnings : ignored;
  for (auto& [cr, obj] : device_crs) {
    auto node =
        std::find_if(out.begin(), out.end(), [&](const NodeDocument& n) { return n.node.name == cr.name; });
    if (node == out.end()) {
      warn.push_back(fmt::format("{}:{}: Device '{}' names no Node in the list: not counted", source,
                                 line_of(obj), cr.name));
      continue;
    }
    if (node->registered) continue;  // HAMi's registration is read first
    try {
      apply_koordinator_device_cr(node->node, node->labels, cr, warn);
    } catch (const CodecError& e) {
      doc.fail(obj, "spec.devices", e.what());
    }
    node->node.cards_from = Dialect::Koordinator;
  }
  for (auto& n : out) {
    if (n.registered || n.node.cards_from == Dialect::Koordinator) continue;
    // KAI reads a node's GPUs from GPU feature discovery's labels; without
    // its memory label the node keeps no cards, as before.
    if (!n.labels.contains(kGfdGpuMemory)) {
      if (n.allocatable_gpus.value_or(0) > 0 || n.labels.contains(kGfdGpuCount))
        warn.push_back(
            fmt::format("{}:{}: node '{}' has GPUs but neither HAMi's registration, a Device nor the {} "
                        "label: no card counted",
                        source, n.line, n.node.name, kGfdGpuMemory));
      continue;
    }
    try {
      if (apply_kai_gpu_labels(n.node, n.labels, n.allocatable_gpus)) n.node.cards_from = Dialect::Kai;
    } catch (const CodecError& e) {
      throw InputError(source, n.line, "metadata.labels", e.what());
    }
  }
  return out;
}

std::vector<PodDocument> parse_pods(std::string_view text, const std::string& source,
                                    const RequestDefaults& defaults) {
  Doc doc{source};
  std::vector<PodDocument> out;
  for (const auto& obj : load_documents(text, source))
    if (kind_of(obj) == "Pod") out.push_back(parse_pod(doc, obj, defaults));
  return out;
}

}  // namespace gpuslice::core::codec

namespace gpuslice::core::codec {

PodDocument parse_pod_object(const YAML::Node& object, const std::string& source,
                             const RequestDefaults& defaults) {
  if (!object.IsMap()) throw InputError(source, 0, "", "a Pod must be a Kubernetes object (a mapping)");
  return parse_pod(Doc{source}, object, defaults);
}

NodeDocument parse_node_object(const YAML::Node& object, const std::string& source) {
  if (!object.IsMap()) throw InputError(source, 0, "", "a Node must be a Kubernetes object (a mapping)");
  return parse_node(Doc{source}, object);
}

}  // namespace gpuslice::core::codec
