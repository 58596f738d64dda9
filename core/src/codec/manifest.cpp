#include "gpuslice/core/codec/manifest.hpp"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <limits>

#include "gpuslice/core/codec/allocation_annotation.hpp"
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
                                 const RequestDefaults& def, HostResources& host) {
  ContainerRequest r;
  if (!c.IsMap()) doc.fail(c, where, "a container must be a mapping");
  if (get(c, "name")) r.name = doc.scalar(get(c, "name"), where + "name");
  YAML::Node res = doc.map_at(c, "resources", where + "resources");
  Resources rs{doc, res ? doc.map_at(res, "limits", where + "resources.limits") : YAML::Node(),
               res ? doc.map_at(res, "requests", where + "resources.requests") : YAML::Node(),
               where + "resources."};
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

// A map of strings (labels, matchLabels); a null value is the empty string.
std::map<std::string, std::string> string_map(const Doc& doc, const YAML::Node& parent, const char* key,
                                              const std::string& field) {
  std::map<std::string, std::string> out;
  const YAML::Node map = doc.map_at(parent, key, field);
  if (!map || !map.IsMap()) return out;
  for (auto it = map.begin(); it != map.end(); ++it) {
    const std::string k = doc.scalar(it->first, field);
    const YAML::Node value = it->second;
    out[k] = value.IsNull() ? std::string() : doc.scalar(value, field + "." + k);
  }
  return out;
}

// Labels, the controlling owner and deletion: what makes a pod movable.
void read_pod_meta(const Doc& doc, const YAML::Node& meta, PodMeta& out) {
  out.labels = string_map(doc, meta, "labels", "metadata.labels");
  if (YAML::Node owners = get(meta, "ownerReferences"); owners && !owners.IsNull()) {
    if (!owners.IsSequence()) doc.fail(owners, "metadata.ownerReferences", "must be a list");
    for (size_t i = 0; i < owners.size(); ++i) {
      const YAML::Node o = owners[i];
      const std::string field = fmt::format("metadata.ownerReferences[{}]", i);
      if (!o.IsMap()) doc.fail(o, field, "must be a mapping");
      const YAML::Node controller = get(o, "controller");
      if (!controller || controller.IsNull() ||
          !parse_bool_annotation(doc, controller, field + ".controller",
                                 doc.scalar(controller, field + ".controller")))
        continue;
      if (out.controller)
        doc.fail(o, field, "a pod has at most one controller (ownerReference with controller: true)");
      OwnerReference ref;
      for (auto [key, target] : {std::pair{"kind", &ref.kind}, {"name", &ref.name}, {"uid", &ref.uid}}) {
        const YAML::Node v = get(o, key);
        if (!v || v.IsNull()) {
          if (std::string_view(key) != "uid") doc.fail(o, field + "." + key, "an owner reference needs one");
          continue;
        }
        *target = doc.scalar(v, field + "." + key);
      }
      out.controller = std::move(ref);
    }
  }
  if (YAML::Node deleted = get(meta, "deletionTimestamp"); deleted && !deleted.IsNull()) out.deleting = true;
}

// status.conditions[type=Ready]: the disruption controller's "healthy".
void read_ready_condition(const Doc& doc, const YAML::Node& status, PodMeta& out) {
  YAML::Node conditions = get(status, "conditions");
  if (!conditions || conditions.IsNull()) return;
  if (!conditions.IsSequence()) doc.fail(conditions, "status.conditions", "must be a list");
  for (size_t i = 0; i < conditions.size(); ++i) {
    const YAML::Node c = conditions[i];
    if (!c.IsMap()) doc.fail(c, fmt::format("status.conditions[{}]", i), "must be a mapping");
    const YAML::Node type = get(c, "type");
    if (!type || !type.IsScalar() || type.Scalar() != "Ready") continue;
    const YAML::Node s = get(c, "status");
    out.ready = s && s.IsScalar() && s.Scalar() == "True";
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
  read_pod_meta(doc, meta, pd.meta);
  YAML::Node ann = doc.map_at(meta, "annotations", "metadata.annotations");
  if (ann) {
    for (auto it = ann.begin(); it != ann.end(); ++it) {
      const std::string key = it->first.Scalar();
      const std::string field = "metadata.annotations." + key;
      const YAML::Node vn = it->second;  // a copy: it->second is a temporary
      const std::string v = doc.scalar(vn, field);
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
      out.push_back(parse_container(doc, list[i], fmt::format("spec.{}[{}].", key, i), def, h));
      if (init) {
        init_peak.cpu_milli = std::max(init_peak.cpu_milli, h.cpu_milli);
        init_peak.memory_mib = std::max(init_peak.memory_mib, h.memory_mib);
      } else {
        app_sum.cpu_milli += h.cpu_milli;
        app_sum.memory_mib += h.memory_mib;
      }
    }
  };
  if (YAML::Node status = doc.map_at(obj, "status", "status")) {
    if (YAML::Node phase = get(status, "phase")) pd.phase = doc.scalar(phase, "status.phase");
    read_ready_condition(doc, status, pd.meta);
  }
  read_list("initContainers", p.init_containers, true);
  read_list("containers", p.containers, false);
  if (p.containers.empty()) doc.fail(spec, "spec.containers", "a Pod needs at least one container");
  // Kubernetes' effective request: the larger of the init peak and the app sum.
  p.host.cpu_milli = std::max(init_peak.cpu_milli, app_sum.cpu_milli);
  p.host.memory_mib = std::max(init_peak.memory_mib, app_sum.memory_mib);
  return pd;
}

BudgetDocument::IntOrPercent int_or_percent(const Doc& doc, const YAML::Node& n, const std::string& field) {
  const std::string text = doc.scalar(n, field);
  const bool percent = !text.empty() && text.back() == '%';
  const std::string digits = percent ? text.substr(0, text.size() - 1) : text;
  int64_t v = -1;
  if (!digits.empty() && digits.size() <= 9 &&
      std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; }))
    v = std::stoll(digits);
  if (v < 0)
    doc.fail(n, field, fmt::format("'{}' is neither a whole number nor a percentage like 50%", text));
  if (percent && v > 100) doc.fail(n, field, fmt::format("'{}' is more than 100%", text));
  return {static_cast<int32_t>(v), percent};
}

BudgetDocument parse_budget(const Doc& doc, const YAML::Node& obj) {
  BudgetDocument b;
  b.line = line_of(obj);
  if (YAML::Node v = get(obj, "apiVersion"); v && v.IsScalar()) b.api_version = v.Scalar();
  YAML::Node meta = doc.map_at(obj, "metadata", "metadata");
  if (!meta || !get(meta, "name")) doc.fail(obj, "metadata.name", "a PodDisruptionBudget needs a name");
  b.name = doc.scalar(get(meta, "name"), "metadata.name");
  if (get(meta, "namespace")) b.ns = doc.scalar(get(meta, "namespace"), "metadata.namespace");
  YAML::Node spec = doc.map_at(obj, "spec", "spec");
  if (!spec) doc.fail(obj, "spec", "a PodDisruptionBudget needs a spec");
  if (YAML::Node v = get(spec, "minAvailable"); v && !v.IsNull())
    b.min_available = int_or_percent(doc, v, "spec.minAvailable");
  if (YAML::Node v = get(spec, "maxUnavailable"); v && !v.IsNull())
    b.max_unavailable = int_or_percent(doc, v, "spec.maxUnavailable");
  if (b.min_available && b.max_unavailable)
    doc.fail(get(spec, "maxUnavailable"), "spec.maxUnavailable",
             "minAvailable and maxUnavailable cannot both be set");
  YAML::Node sel = doc.map_at(spec, "selector", "spec.selector");
  if (!sel) return b;
  b.has_selector = true;
  b.match_labels = string_map(doc, sel, "matchLabels", "spec.selector.matchLabels");
  if (YAML::Node exprs = get(sel, "matchExpressions"); exprs && !exprs.IsNull()) {
    if (!exprs.IsSequence()) doc.fail(exprs, "spec.selector.matchExpressions", "must be a list");
    for (size_t i = 0; i < exprs.size(); ++i) {
      const YAML::Node e = exprs[i];
      const std::string field = fmt::format("spec.selector.matchExpressions[{}]", i);
      if (!e.IsMap()) doc.fail(e, field, "must be a mapping");
      BudgetDocument::Expression x;
      x.line = line_of(e);
      if (!get(e, "key")) doc.fail(e, field + ".key", "an expression needs a key");
      if (!get(e, "operator")) doc.fail(e, field + ".operator", "an expression needs an operator");
      x.key = doc.scalar(get(e, "key"), field + ".key");
      x.op = doc.scalar(get(e, "operator"), field + ".operator");
      if (YAML::Node values = get(e, "values"); values && !values.IsNull()) {
        if (!values.IsSequence()) doc.fail(values, field + ".values", "must be a list");
        for (size_t j = 0; j < values.size(); ++j)
          x.values.push_back(doc.scalar(values[j], fmt::format("{}.values[{}]", field, j)));
      }
      b.match_expressions.push_back(std::move(x));
    }
  }
  return b;
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
  YAML::Node ann = doc.map_at(meta, "annotations", "metadata.annotations");
  if (ann) {
    auto field = [](std::string_view key) { return "metadata.annotations." + std::string(key); };
    if (YAML::Node reg = get(ann, std::string(kRegisterAnnotation))) {
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
    }
  }
  return nd;
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

std::vector<NodeDocument> parse_nodes(std::string_view text, const std::string& source) {
  Doc doc{source};
  std::vector<NodeDocument> out;
  for (const auto& obj : load_documents(text, source))
    if (kind_of(obj) == "Node") out.push_back(parse_node(doc, obj));
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

std::vector<BudgetDocument> parse_disruption_budgets(std::string_view text, const std::string& source) {
  Doc doc{source};
  std::vector<BudgetDocument> out;
  for (const auto& obj : load_documents(text, source))
    if (kind_of(obj) == "PodDisruptionBudget") out.push_back(parse_budget(doc, obj));
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
