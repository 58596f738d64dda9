#include "gpuslice/sim/scenario.hpp"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

#include "gpuslice/core/codec/manifest.hpp"
#include "gpuslice/core/codec/quantity.hpp"
#include "gpuslice/core/codec/text_file.hpp"
#include "gpuslice/core/codec/yaml_documents.hpp"
#include "gpuslice/core/dialects/hami/mig_registration.hpp"
#include "gpuslice/core/dialects/hami/registration.hpp"
#include "gpuslice/core/errors.hpp"
#include "gpuslice/core/gpu_policy.hpp"
#include "gpuslice/core/policy.hpp"
#include "gpuslice/sim/fleet.hpp"
#include "gpuslice/sim/node_groups.hpp"
#include "scenario_file.hpp"

namespace gpuslice::sim {

namespace {

using core::InputError;

// Bounded memory: a template fleet is built whole (about 300 bytes a unit);
// the largest benchmark fleet has 300,000 nodes and cards.
constexpr int64_t kMaxFleetUnits = 2'000'000;

std::string read_text(const std::string& path, const std::string& from, int line, const std::string& field) {
  const core::codec::NamedAt named{from, line, field};
  return core::codec::read_text_file(path, &named);
}

struct Reader {
  const std::string& source;
  // A missing key's node is invalid and has no mark (asking throws): line 0.
  int line(const YAML::Node& n) const { return n.IsDefined() && n.Mark().line >= 0 ? n.Mark().line + 1 : 0; }
  [[noreturn]] void fail(const YAML::Node& n, const std::string& field, const std::string& what) const {
    throw InputError(source, line(n), field, what);
  }
  YAML::Node get(const YAML::Node& map, const std::string& key) const {
    if (!map || !map.IsMap()) {
      const YAML::Node empty(YAML::NodeType::Map);  // not static: lookups allocate in it
      return empty[key];
    }
    return map[key];
  }
  template <typename T>
  T value(const YAML::Node& map, const std::string& key, const std::string& field, T fallback) const {
    YAML::Node n = get(map, key);
    if (!n) return fallback;
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
      return integer<T>(n, field);
    } else {
      try {
        return n.as<T>();
      } catch (const YAML::Exception&) {
        fail(n, field,
             fmt::format("'{}' is not a valid {}", n.IsScalar() ? n.Scalar() : "value",
                         std::is_same_v<T, std::string> ? "string" : "number"));
      }
    }
  }
  // Whole numbers: "not a number", "negative" and "too large" are told apart
  // (yaml-cpp would wrap -1 into an unsigned or call 1e11 "not valid").
  template <typename T>
  T integer(const YAML::Node& n, const std::string& field) const {
    const std::string text = n.IsScalar() ? n.Scalar() : "value";
    size_t used = 0;
    long double v = 0;
    try {
      v = std::stold(text, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (!n.IsScalar() || used != text.size() || text.empty() || std::isnan(v) || v != std::floor(v))
      fail(n, field, fmt::format("'{}' is not a whole number", text));
    if (v < static_cast<long double>(std::numeric_limits<T>::min()))
      fail(n, field,
           fmt::format("'{}' must not be {}", text, std::is_signed_v<T> ? "this small" : "negative"));
    if (v > static_cast<long double>(std::numeric_limits<T>::max()))
      fail(n, field, fmt::format("'{}' is too large (at most {})", text, std::numeric_limits<T>::max()));
    return static_cast<T>(v);
  }
  // A real number that must be finite (.inf and .nan are YAML numbers too).
  double finite(const YAML::Node& map, const std::string& key, const std::string& field,
                double fallback) const {
    const double v = value<double>(map, key, field, fallback);
    if (!std::isfinite(v)) fail(get(map, key), field, fmt::format("must be a finite number, not {}", v));
    return v;
  }
  template <typename T>
  T required(const YAML::Node& map, const std::string& key, const std::string& field) const {
    if (!get(map, key)) fail(map, field, "is required");
    return value<T>(map, key, field, T{});
  }
  // A mapping's key as text. YAML allows a list or a mapping as a key
  // (`? [a, b]`); a scenario never uses one, and reading it as text threw
  // yaml-cpp's own exception past every handler (found by fuzz_scenario).
  std::string key_text(const YAML::Node& key, const std::string& where) const {
    if (!key.IsScalar()) fail(key, where, "a field name must be plain text, not a list or a mapping");
    return key.Scalar();
  }
  void only_keys(const YAML::Node& map, std::initializer_list<const char*> keys,
                 const std::string& where) const {
    if (!map.IsMap()) fail(map, where, "must be a mapping");
    for (auto it = map.begin(); it != map.end(); ++it) {
      const std::string k = key_text(it->first, where);
      bool known = false;
      for (const char* key : keys) known = known || k == key;
      if (!known) fail(it->first, where.empty() ? k : where + "." + k, "unknown field");
    }
  }
};

// A pod template: HAMi resources by their short names, any dialect's by
// their full names under `resources` (koordinator.sh/gpu-core: 50) and
// KAI's shares as annotations (gpu-fraction: "0.5"), written out as a Pod
// manifest so the manifest codec (and HAMi's webhook defaults) apply.
// A pod's priority as the Priority admission plugin resolves it: the class
// named (unknown: refused, as the API server refuses it), else a number
// given outright, else the globalDefault class, else 0; preemption_policy
// given on the pod wins over its class's.
PodPriority read_priority(const Reader& r, const YAML::Node& n, const std::string& field,
                          const PriorityClasses& classes, const char* class_key = "priority_class") {
  PodPriority p;
  const YAML::Node cls = r.get(n, class_key), number = r.get(n, "priority");
  if (cls && number)
    r.fail(number, field + ".priority", fmt::format("give priority or {}, not both", class_key));
  if (cls) {
    p.class_name = r.value<std::string>(n, class_key, field + "." + class_key, "");
    auto it = classes.find(p.class_name);
    if (it == classes.end())
      r.fail(cls, field + "." + class_key,
             fmt::format("no PriorityClass '{}' in priority_classes", p.class_name));
    p.value = it->second.value;
    p.preempt_never = it->second.preempt_never;
  } else if (number) {
    p.value = r.integer<int32_t>(number, field + ".priority");
  } else {
    for (const auto& [name, c] : classes)
      if (c.global_default) {
        p.class_name = name;
        p.value = c.value;
        p.preempt_never = c.preempt_never;
      }
  }
  if (YAML::Node policy = r.get(n, "preemption_policy")) {
    const std::string text = r.value<std::string>(n, "preemption_policy", field + ".preemption_policy", "");
    if (text != "Never" && text != "PreemptLowerPriority")
      r.fail(policy, field + ".preemption_policy",
             fmt::format("'{}': use Never or PreemptLowerPriority", text));
    p.preempt_never = text == "Never";
  }
  return p;
}

// priority_classes: {name: {value, preemption_policy, global_default}}, as
// scheduling.k8s.io/v1 PriorityClass objects say them; at most one default.
PriorityClasses read_priority_classes(const Reader& r, const YAML::Node& root) {
  PriorityClasses classes;
  const YAML::Node m = r.get(root, "priority_classes");
  if (!m) return classes;
  if (!m.IsMap()) r.fail(m, "priority_classes", "must map class names to {value, preemption_policy}");
  std::string default_class;
  for (auto it = m.begin(); it != m.end(); ++it) {
    const std::string name = r.key_text(it->first, "priority_classes");
    const std::string f = "priority_classes." + name;
    r.only_keys(it->second, {"value", "preemption_policy", "global_default"}, f);
    PriorityClass c;
    if (!r.get(it->second, "value")) r.fail(it->second, f + ".value", "is required");
    c.value = r.integer<int32_t>(r.get(it->second, "value"), f + ".value");
    // The API server keeps values above 1e9 for the system's own classes.
    if (c.value > 1'000'000'000)
      r.fail(r.get(it->second, "value"), f + ".value",
             "must be at most 1000000000 (higher is for system classes)");
    const std::string policy = r.value<std::string>(it->second, "preemption_policy", f + ".preemption_policy",
                                                    "PreemptLowerPriority");
    if (policy != "Never" && policy != "PreemptLowerPriority")
      r.fail(r.get(it->second, "preemption_policy"), f + ".preemption_policy",
             fmt::format("'{}': use Never or PreemptLowerPriority", policy));
    c.preempt_never = policy == "Never";
    c.global_default = r.value<bool>(it->second, "global_default", f + ".global_default", false);
    if (c.global_default) {
      if (!default_class.empty())
        r.fail(r.get(it->second, "global_default"), f + ".global_default",
               fmt::format("'{}' is already the global default", default_class));
      default_class = name;
    }
    classes.emplace(name, c);
  }
  return classes;
}

// `quotas:` namespace -> {gpumem, gpucores}: the limits a ResourceQuota's
// limits.nvidia.com/gpumem and limits.nvidia.com/gpucores would set.
std::vector<core::NamespaceQuota> read_quotas(const Reader& r, const YAML::Node& q) {
  if (!q.IsMap()) r.fail(q, "quotas", "must map namespaces to {gpumem, gpucores}");
  std::vector<core::NamespaceQuota> out;
  for (auto it = q.begin(); it != q.end(); ++it) {
    const std::string ns = r.key_text(it->first, "quotas");
    const std::string field = "quotas." + ns;
    if (!it->second.IsMap()) r.fail(it->second, field, "must be a mapping of gpumem and gpucores");
    r.only_keys(it->second, {"gpumem", "gpucores"}, field);
    core::NamespaceQuota nq;
    nq.ns = ns;
    nq.name = "scenario";
    nq.line = r.line(it->second);
    auto limit = [&](const char* key) -> std::optional<int64_t> {
      YAML::Node v = r.get(it->second, key);
      if (!v) return std::nullopt;
      const std::string f = field + "." + key;
      if (!v.IsScalar()) r.fail(v, f, "must be a number or quantity");
      int64_t n = 0;
      try {
        n = core::codec::parse_quantity_integer(v.Scalar());
      } catch (const std::exception& e) {
        r.fail(v, f, e.what());
      }
      if (n < 0) r.fail(v, f, fmt::format("'{}' is negative", v.Scalar()));
      return n;
    };
    nq.limits.memory_mib = limit("gpumem");
    nq.limits.cores = limit("gpucores");
    if (nq.limits.empty()) r.fail(it->second, field, "sets neither gpumem nor gpucores");
    out.push_back(std::move(nq));
  }
  return out;
}

PodTemplate read_template(const Reader& r, const std::string& name, const YAML::Node& n,
                          const std::string& field, const PriorityClasses& classes,
                          std::vector<std::string>& warnings) {
  r.only_keys(n,
              {"gpu", "gpumem", "gpumem-percentage", "gpucores", "cpu", "memory", "resources", "labels",
               "annotations", "weight", "template", "namespace", "priority", "priority_class",
               "preemption_policy", "controller", "pdb_protected"},
              field);
  YAML::Emitter out;
  out << YAML::BeginMap << YAML::Key << "kind" << YAML::Value << "Pod" << YAML::Key << "metadata"
      << YAML::Value << YAML::BeginMap << YAML::Key << "name" << YAML::Value << name;
  if (YAML::Node ns = r.get(n, "namespace")) {
    if (!ns.IsScalar()) r.fail(ns, field + ".namespace", "must be a namespace name");
    out << YAML::Key << "namespace" << YAML::Value << ns.Scalar();
  }
  if (YAML::Node a = r.get(n, "annotations")) out << YAML::Key << "annotations" << YAML::Value << a;
  if (YAML::Node l = r.get(n, "labels")) out << YAML::Key << "labels" << YAML::Value << l;
  out << YAML::EndMap << YAML::Key << "spec" << YAML::Value << YAML::BeginMap << YAML::Key << "containers"
      << YAML::Value << YAML::BeginSeq << YAML::BeginMap << YAML::Key << "name" << YAML::Value << "main"
      << YAML::Key << "resources" << YAML::Value << YAML::BeginMap << YAML::Key << "limits" << YAML::Value
      << YAML::BeginMap;
  for (const char* k : {"gpu", "gpumem", "gpumem-percentage", "gpucores", "cpu", "memory"}) {
    YAML::Node v = r.get(n, k);
    if (!v) continue;
    if (!v.IsScalar()) r.fail(v, field + "." + k, "must be a number or quantity");
    const std::string key =
        std::string(k) == "cpu" || std::string(k) == "memory" ? k : "nvidia.com/" + std::string(k);
    out << YAML::Key << key << YAML::Value << v.Scalar();
  }
  if (YAML::Node res = r.get(n, "resources")) {
    if (!res.IsMap()) r.fail(res, field + ".resources", "must map resource names to quantities");
    for (auto it = res.begin(); it != res.end(); ++it) {
      const std::string resource = r.key_text(it->first, field + ".resources");
      if (!it->second.IsScalar())
        r.fail(it->second, field + ".resources." + resource, "must be a number or quantity");
      out << YAML::Key << resource << YAML::Value << it->second.Scalar();
    }
  }
  out << YAML::EndMap << YAML::EndMap << YAML::EndMap << YAML::EndSeq << YAML::EndMap << YAML::EndMap;
  PodTemplate t;
  t.name = name;
  t.weight = r.finite(n, "weight", field + ".weight", 1.0);
  t.priority = read_priority(r, n, field, classes);
  t.controlled = r.value<bool>(n, "controller", field + ".controller", true);
  t.pdb_protected = r.value<bool>(n, "pdb_protected", field + ".pdb_protected", false);
  if (t.weight < 0) r.fail(r.get(n, "weight"), field + ".weight", "must not be negative");
  try {
    std::vector<std::string> read_warnings;
    auto pods = core::codec::parse_pods(out.c_str(), r.source, {}, &read_warnings);
    t.request = pods.at(0).request;
    // The codec names the generated manifest; say it of the template instead.
    if (!read_warnings.empty()) {
      const bool short_key = bool(r.get(n, "gpucores"));
      const YAML::Node v =
          short_key ? r.get(n, "gpucores") : r.get(r.get(n, "resources"), "nvidia.com/gpucores");
      warnings.push_back(fmt::format(
          "{}:{}: template '{}': {} {} is above 100; HAMi treats it as 100 (the whole card's cores: the card "
          "exclusively)",
          r.source, r.line(v), name, field + (short_key ? ".gpucores" : ".resources.nvidia.com/gpucores"),
          v.IsScalar() ? v.Scalar() : std::string()));
    }
  } catch (const InputError& e) {
    // The manifest was ours; point at the template in the scenario file.
    std::string key = e.field();
    for (const char* prefix : {"spec.containers[0].resources.", "spec.containers[0].", "nvidia.com/"})
      if (key.rfind(prefix, 0) == 0) key = key.substr(std::string(prefix).size());
    r.fail(n, field + "." + key, e.detail());
  }
  if (!t.request.wants_devices() && t.request.host.cpu_milli == 0)
    r.fail(n, field,
           "a template must ask for a GPU (gpu, gpumem, gpumem-percentage, gpucores, a resource such as "
           "koordinator.sh/gpu-core, a KAI gpu-fraction annotation) or cpu");
  return t;
}

// `mig_instance_profiles:` of a template: NVML's GPU instance profiles of
// the card (what `nvidia-smi mig -lgip` and `-lgipp` print), checked as the
// registration's own migProfiles are (core/src/dialects/hami/registration.cpp).
std::vector<core::codec::MigInstanceFacts> read_mig_facts(const Reader& r, const YAML::Node& list,
                                                          const std::string& field, int64_t card_memory_mib) {
  if (!list.IsSequence() || list.size() == 0)
    r.fail(list, field, "must be a list of {slices, memory_mib, multiprocessors, instances, placements}");
  std::vector<core::codec::MigInstanceFacts> out;
  for (size_t i = 0; i < list.size(); ++i) {
    const std::string fi = fmt::format("{}[{}]", field, i);
    const YAML::Node e = list[i];
    r.only_keys(e, {"slices", "memory_mib", "multiprocessors", "instances", "placements"}, fi);
    core::codec::MigInstanceFacts f;
    f.slices = r.required<uint32_t>(e, "slices", fi + ".slices");
    f.memory_mib = r.required<int32_t>(e, "memory_mib", fi + ".memory_mib");
    f.multiprocessors = r.required<int32_t>(e, "multiprocessors", fi + ".multiprocessors");
    f.instances = r.required<uint32_t>(e, "instances", fi + ".instances");
    if (f.slices < 1 || f.slices > core::kMigSlices)
      r.fail(r.get(e, "slices"), fi + ".slices", fmt::format("must be between 1 and {}", core::kMigSlices));
    for (const auto& other : out)
      if (other.slices == f.slices)
        r.fail(r.get(e, "slices"), fi + ".slices",
               fmt::format("a card has one {}-slice instance profile; it is listed twice", f.slices));
    if (f.memory_mib <= 0 || f.memory_mib > card_memory_mib)
      r.fail(r.get(e, "memory_mib"), fi + ".memory_mib",
             fmt::format("must be positive and at most the card's {} MiB", card_memory_mib));
    if (f.multiprocessors <= 0)
      r.fail(r.get(e, "multiprocessors"), fi + ".multiprocessors", "must be positive");
    if (f.instances < 1) r.fail(r.get(e, "instances"), fi + ".instances", "must be at least 1");
    const YAML::Node pl = r.get(e, "placements");
    if (!pl || !pl.IsSequence() || pl.size() == 0)
      r.fail(pl ? pl : e, fi + ".placements", "must be a list of {start, size}");
    for (size_t k = 0; k < pl.size(); ++k) {
      const std::string fk = fmt::format("{}.placements[{}]", fi, k);
      r.only_keys(pl[k], {"start", "size"}, fk);
      const core::MigPlacement p{r.required<uint32_t>(pl[k], "start", fk + ".start"),
                                 r.required<uint32_t>(pl[k], "size", fk + ".size")};
      if (p.size == 0 || p.start >= core::kMigSlices || p.size > core::kMigSlices - p.start)
        r.fail(pl[k], fk,
               fmt::format("start {}, size {} is not within the card's {} memory slices", p.start, p.size,
                           core::kMigSlices));
      for (size_t o = 0; o < f.placements.size(); ++o)
        if (p.start < f.placements[o].start + f.placements[o].size &&
            f.placements[o].start < p.start + p.size)
          r.fail(pl[k], fk, fmt::format("overlaps placements[{}]", o));
      f.placements.push_back(p);
    }
    out.push_back(std::move(f));
  }
  return out;
}

// A template's cards in MIG mode: registered as HAMi v2.10's device plugin
// registers them (count = the most instances of a registered profile,
// devcore 100, migProfiles named by the device config's allowlist).
void register_mig_template(const Reader& r, const YAML::Node& t, const std::string& f,
                           const core::codec::DeviceConfig& config, NodeTemplate& node) {
  const std::string ft = f + ".template";
  for (const char* key : {"slots", "cores"})
    if (r.get(t, key))
      r.fail(r.get(t, key), ft + "." + key,
             "is not read for a MIG-mode card: HAMi registers count = the most instances of its profiles "
             "and devcore 100");
  std::vector<core::codec::MigInstanceFacts> facts;
  if (const YAML::Node m = r.get(t, "mig_instance_profiles")) {
    facts = read_mig_facts(r, m, ft + ".mig_instance_profiles", node.card_memory_mib);
  } else if (const auto* known = core::codec::known_mig_facts(node.model)) {
    facts = *known;
    for (const auto& k : facts)
      if (k.memory_mib > node.card_memory_mib)
        r.fail(r.get(t, "card_memory_mib"), ft + ".card_memory_mib",
               fmt::format("{} MiB is below NVML's {}-slice instance of {} MiB on a '{}'",
                           node.card_memory_mib, k.slices, k.memory_mib, node.model));
  } else {
    r.fail(
        r.get(t, "model"), ft + ".model",
        fmt::format("gpuslice knows the MIG instance profiles of no card named '{}' (it knows the H100 SXM5 "
                    "80GB: 'H100 80GB HBM3', 'H100-SXM5-80GB'); give {}.mig_instance_profiles as NVML "
                    "reports them (nvidia-smi mig -lgip, -lgipp)",
                    node.model, ft));
  }
  const std::string type = core::codec::registered_type(node.model);
  core::codec::MigRegistration reg = core::codec::discover_mig_profiles(type, facts, config);
  if (reg.profiles.empty())
    r.fail(r.get(t, "mode"), ft + ".mode",
           fmt::format("HAMi's device plugin would register no card of this node: no migProfileAllowlist "
                       "entry of the device config names a model in '{}', or none of its profiles is one "
                       "the card has",
                       type));
  node.slots = reg.count;
  node.cores = 100;
  node.mig_profiles = std::move(reg.profiles);
}

// A node template (`template:` of a fleet entry or a node group), checked.
NodeTemplate read_node_template(const Reader& r, const YAML::Node& g, const std::string& f,
                                const core::codec::DeviceConfig& config) {
  const YAML::Node t = r.get(g, "template");
  if (!t) r.fail(g, f + ".template", "is required");
  r.only_keys(t,
              {"name", "model", "cards", "card_memory_mib", "slots", "cores", "cpu_milli", "memory_mib",
               "mode", "mig_instance_profiles"},
              f + ".template");
  NodeTemplate node;
  node.name = r.required<std::string>(t, "name", f + ".template.name");
  if (std::string problem = core::codec::node_name_problem(node.name); !problem.empty())
    r.fail(r.get(t, "name"), f + ".template.name", problem);
  node.model = r.required<std::string>(t, "model", f + ".template.model");
  node.cards = r.value<int>(t, "cards", f + ".template.cards", 1);
  node.card_memory_mib = r.required<int64_t>(t, "card_memory_mib", f + ".template.card_memory_mib");
  node.slots = r.value<int32_t>(t, "slots", f + ".template.slots", 10);
  node.cores = r.value<int32_t>(t, "cores", f + ".template.cores", 100);
  node.cpu_milli = r.value<int64_t>(t, "cpu_milli", f + ".template.cpu_milli", 0);
  node.memory_mib = r.value<int64_t>(t, "memory_mib", f + ".template.memory_mib", 0);
  if (node.cards < 0 || node.cards > 64) r.fail(t, f + ".template.cards", "must be between 0 and 64");
  if (node.card_memory_mib <= 0) r.fail(t, f + ".template.card_memory_mib", "must be positive");
  if (node.slots <= 0) r.fail(t, f + ".template.slots", "must be positive");
  if (node.cores <= 0) r.fail(t, f + ".template.cores", "must be positive");
  node.mode = r.value<std::string>(t, "mode", f + ".template.mode", "hami-core");
  if (node.mode == "mig")
    register_mig_template(r, t, f, config, node);
  else if (node.mode != "hami-core")
    r.fail(r.get(t, "mode"), f + ".template.mode", fmt::format("'{}': use hami-core or mig", node.mode));
  else if (r.get(t, "mig_instance_profiles"))
    r.fail(r.get(t, "mig_instance_profiles"), f + ".template.mig_instance_profiles",
           "is read only with mode: mig");
  return node;
}

void read_fleet(const Reader& r, const YAML::Node& fleet, const std::string& base_dir,
                const core::codec::DeviceConfig& config, Scenario& s) {
  if (!fleet) r.fail(fleet, "fleet", "is required");
  if (fleet.IsSequence()) {
    std::vector<FleetGroup> groups;
    int64_t total_units = 0;
    for (size_t i = 0; i < fleet.size(); ++i) {
      const std::string f = fmt::format("fleet[{}]", i);
      const YAML::Node g = fleet[i];
      r.only_keys(g, {"template", "count"}, f);
      FleetGroup fg;
      fg.node = read_node_template(r, g, f, config);
      const int64_t count = r.value<int64_t>(g, "count", f + ".count", 1);
      if (count < 0 || count > 10'000'000)
        r.fail(r.get(g, "count"), f + ".count", "must be between 0 and 10000000");
      fg.count = static_cast<int>(count);
      groups.push_back(fg);
      // Bounded memory: the whole fleet is built at once.
      total_units += static_cast<int64_t>(fg.count) * (1 + fg.node.cards);
      if (total_units > kMaxFleetUnits)
        r.fail(r.get(g, "count"), f + ".count",
               fmt::format("the fleet would hold more than {} nodes and cards together", kMaxFleetUnits));
    }
    s.fleet = build_fleet(groups);
    s.fleet_groups = std::move(groups);
    return;
  }
  r.only_keys(fleet, {"manifests", "openb"}, "fleet");
  if (YAML::Node m = r.get(fleet, "manifests")) {
    const std::string path = (std::filesystem::path(base_dir) / m.as<std::string>()).string();
    for (auto& nd : core::codec::parse_nodes(read_text(path, r.source, r.line(m), "fleet.manifests"), path))
      s.fleet.add_node(std::move(nd.node));
  } else if (YAML::Node o = r.get(fleet, "openb")) {
    const std::string path = (std::filesystem::path(base_dir) / o.as<std::string>()).string();
    s.fleet = load_openb_nodes(read_text(path, r.source, r.line(o), "fleet.openb"), path);
  } else {
    r.fail(fleet, "fleet", "give a list of templates, 'manifests' or 'openb'");
  }
}

// A duration: seconds as a number, or Go's form ("3m", "1h30m").
double read_duration(const Reader& r, const YAML::Node& map, const std::string& key, const std::string& field,
                     double fallback) {
  const YAML::Node n = r.get(map, key);
  if (!n) return fallback;
  const std::string text = n.IsScalar() ? n.Scalar() : "";
  std::optional<double> v = parse_duration(text);
  if (!v || !std::isfinite(*v))
    r.fail(n, field, fmt::format("'{}' is not a duration (seconds, or 30s, 3m, 1h30m)", text));
  return *v;
}

// A group's `node_labels:` (a --node-groups file): label keys to values.
std::vector<std::pair<std::string, std::string>> read_node_labels(const Reader& r, const YAML::Node& n,
                                                                  const std::string& field) {
  if (!n.IsMap() || n.size() == 0)
    r.fail(n, field, "must map label keys to values, e.g. {cloud.google.com/gke-nodepool: t4-pool}");
  std::vector<std::pair<std::string, std::string>> labels;
  for (auto it = n.begin(); it != n.end(); ++it) {
    const std::string key = r.key_text(it->first, field);
    if (!it->second.IsScalar()) r.fail(it->second, field + "." + key, "a label's value must be plain text");
    labels.emplace_back(key, it->second.Scalar());
  }
  return labels;
}

// `node_groups:`, Cluster Autoscaler's groups (docs/simulator.md#node-groups-and-the-autoscaler).
// labelled: a --node-groups file, whose groups may name `node_labels` and
// then may leave out `template` (a member node's registration is copied).
std::vector<NodeGroupSpec> read_node_groups(const Reader& r, const YAML::Node& list,
                                            const std::vector<FleetGroup>& fleet,
                                            const core::codec::DeviceConfig& config, bool labelled = false) {
  if (!list.IsSequence() || list.size() == 0) r.fail(list, "node_groups", "must be a list of groups");
  std::vector<NodeGroupSpec> groups;
  int64_t units = 0;
  for (size_t i = 0; i < list.size(); ++i) {
    const std::string f = fmt::format("node_groups[{}]", i);
    const YAML::Node g = list[i];
    if (labelled)
      r.only_keys(g,
                  {"name", "template", "min", "max", "price_per_hour", "scale_up_delay",
                   "scale_down_unneeded", "scale_down_utilization", "node_labels"},
                  f);
    else
      r.only_keys(g,
                  {"name", "template", "min", "max", "price_per_hour", "scale_up_delay",
                   "scale_down_unneeded", "scale_down_utilization"},
                  f);
    NodeGroupSpec spec;
    if (YAML::Node labels = r.get(g, "node_labels"))
      spec.node_labels = read_node_labels(r, labels, f + ".node_labels");
    if (spec.node_labels.empty() || r.get(g, "template")) {
      spec.node = read_node_template(r, g, f, config);
      spec.name = r.value<std::string>(g, "name", f + ".name", spec.node.name);
    } else {
      // The template comes from a member node (snapshot_node_groups.cpp);
      // its copies are named after the group.
      spec.name = r.required<std::string>(g, "name", f + ".name");
      if (std::string problem = core::codec::node_name_problem(spec.name); !problem.empty())
        r.fail(r.get(g, "name"), f + ".name", problem);
      spec.node.name = spec.name;
      spec.node.cards = 0;  // counted from the member's registration
    }
    spec.min = r.value<int>(g, "min", f + ".min", 0);
    spec.max = r.required<int>(g, "max", f + ".max");
    if (spec.min < 0) r.fail(r.get(g, "min"), f + ".min", "must not be negative");
    if (spec.max < 1) r.fail(r.get(g, "max"), f + ".max", "must be at least 1");
    if (spec.min > spec.max)
      r.fail(r.get(g, "min"), f + ".min", fmt::format("{} is above max ({})", spec.min, spec.max));
    spec.price_per_hour = r.finite(g, "price_per_hour", f + ".price_per_hour", 0.0);
    if (spec.price_per_hour < 0)
      r.fail(r.get(g, "price_per_hour"), f + ".price_per_hour", "must not be negative");
    spec.scale_up_delay = read_duration(r, g, "scale_up_delay", f + ".scale_up_delay", spec.scale_up_delay);
    spec.scale_down_unneeded =
        read_duration(r, g, "scale_down_unneeded", f + ".scale_down_unneeded", spec.scale_down_unneeded);
    spec.scale_down_utilization =
        r.finite(g, "scale_down_utilization", f + ".scale_down_utilization", spec.scale_down_utilization);
    if (spec.scale_down_utilization < 0 || spec.scale_down_utilization > 1)
      r.fail(r.get(g, "scale_down_utilization"), f + ".scale_down_utilization", "must be between 0 and 1");
    for (const auto& other : groups) {
      if (other.name == spec.name)
        r.fail(g, f + ".name", fmt::format("a second group named '{}'", spec.name));
      if (other.node.name == spec.node.name)
        r.fail(r.get(g, "template"), f + ".template.name",
               fmt::format("group '{}' already names its nodes '{}-<i>'", other.name, spec.node.name));
    }
    for (const auto& fg : fleet)
      if (fg.node.name == spec.node.name)
        r.fail(r.get(g, "template"), f + ".template.name",
               fmt::format("the fleet already names its nodes '{}-<i>'", spec.node.name));
    // Bounded memory: every node a group may hold is built up front.
    units += static_cast<int64_t>(spec.max) * (1 + spec.node.cards);
    if (units > kMaxFleetUnits)
      r.fail(r.get(g, "max"), f + ".max",
             fmt::format("the groups would hold more than {} nodes and cards together", kMaxFleetUnits));
    groups.push_back(std::move(spec));
  }
  return groups;
}

AutoscalerSpec read_autoscaler(const Reader& r, const YAML::Node& a) {
  r.only_keys(a, {"expander", "scan_interval", "scale_down_delay_after_add"}, "autoscaler");
  AutoscalerSpec spec;
  const std::string expander = r.value<std::string>(a, "expander", "autoscaler.expander", "least-waste");
  if (auto e = parse_expander(expander))
    spec.expander = *e;
  else
    r.fail(r.get(a, "expander"), "autoscaler.expander",
           fmt::format("'{}': use least-waste, price, most-pods or random", expander));
  spec.scan_interval = read_duration(r, a, "scan_interval", "autoscaler.scan_interval", spec.scan_interval);
  if (!(spec.scan_interval > 0))
    r.fail(r.get(a, "scan_interval"), "autoscaler.scan_interval", "must be positive");
  spec.scale_down_delay_after_add =
      read_duration(r, a, "scale_down_delay_after_add", "autoscaler.scale_down_delay_after_add",
                    spec.scale_down_delay_after_add);
  return spec;
}

}  // namespace

ScenarioFile parse_scenario_file(const std::string& text, const std::string& source,
                                 const std::string& base_dir, bool fleet_given) {
  YAML::Node root;
  bool found = false;
  for (const auto& doc : core::codec::load_yaml_documents(text, source)) {
    if (!doc || doc.IsNull()) continue;
    if (found)
      throw InputError(source, doc.Mark().line + 1, "", "a scenario is one YAML document, found a second");
    root = doc;
    found = true;
  }
  Reader r{source};
  if (!root.IsMap()) throw InputError(source, 1, "", "a scenario must be a mapping");
  r.only_keys(root,
              {"name", "policy", "gpu_policy", "seed", "queue", "fleet", "templates", "pods", "generator",
               "openb_pods", "priority_classes", "quotas", "node_groups", "autoscaler", "device_config"},
              "");
  ScenarioFile read;
  read.names_fleet = static_cast<bool>(root["fleet"]);
  read.names_queue = static_cast<bool>(root["queue"]);
  Scenario& s = read.scenario;
  if (text.rfind("#", 0) == 0) s.description = text.substr(1, text.find('\n') - 1);
  while (!s.description.empty() && s.description.front() == ' ') s.description.erase(0, 1);
  s.name = r.value<std::string>(root, "name", "name", std::filesystem::path(source).stem().string());
  s.policy = r.value<std::string>(root, "policy", "policy", "hami-binpack");
  if (std::string problem = core::policy_name_problem(s.policy); !problem.empty())
    r.fail(r.get(root, "policy"), "policy", problem);
  s.gpu_policy = r.value<std::string>(root, "gpu_policy", "gpu_policy", "spread");
  if (std::string problem = core::gpu_policy_problem(s.gpu_policy); !problem.empty())
    r.fail(r.get(root, "gpu_policy"), "gpu_policy", problem);
  s.seed = r.value<uint64_t>(root, "seed", "seed", 42);
  const std::string queue = r.value<std::string>(root, "queue", "queue", "fifo");
  if (auto q = parse_queue(queue))
    s.queue = *q;
  else
    r.fail(r.get(root, "queue"), "queue", fmt::format("'{}': use fifo or skip-ahead", queue));
  const YAML::Node node_groups = r.get(root, "node_groups");
  // else the snapshot's nodes replace any fleet here; node groups may stand instead of one
  // HAMi's device config (`device_config: FILE`): its migProfileAllowlist
  // names the profiles the fleet's MIG-mode cards register.
  core::codec::DeviceConfig device_config = core::codec::chart_default_device_config();
  if (YAML::Node d = r.get(root, "device_config")) {
    const std::string path =
        (std::filesystem::path(base_dir) / r.value<std::string>(root, "device_config", "device_config", ""))
            .string();
    device_config =
        core::codec::parse_device_config(read_text(path, source, r.line(d), "device_config"), path);
  }
  if (!fleet_given && (r.get(root, "fleet") || !node_groups))
    read_fleet(r, r.get(root, "fleet"), base_dir, device_config, s);
  if (node_groups) s.node_groups = read_node_groups(r, node_groups, s.fleet_groups, device_config);
  if (YAML::Node a = r.get(root, "autoscaler")) {
    if (!node_groups) r.fail(a, "autoscaler", "has no node_groups to scale");
    s.autoscaler = read_autoscaler(r, a);
  }

  s.priority_classes = read_priority_classes(r, root);
  if (YAML::Node t = r.get(root, "templates")) {
    if (!t.IsMap()) r.fail(t, "templates", "must map names to pod templates");
    for (auto it = t.begin(); it != t.end(); ++it) {
      const std::string name = r.key_text(it->first, "templates");
      s.templates.push_back(
          read_template(r, name, it->second, "templates." + name, s.priority_classes, s.warnings));
    }
  }
  auto find_template = [&](const YAML::Node& at, const std::string& name, const std::string& field) {
    for (const auto& t : s.templates)
      if (t.name == name) return t;
    r.fail(at, field, fmt::format("unknown template '{}'", name));
  };
  int sources = 0;
  if (YAML::Node pods = r.get(root, "pods")) {
    ++sources;
    if (!pods.IsSequence()) r.fail(pods, "pods", "must be a list");
    for (size_t i = 0; i < pods.size(); ++i) {
      const std::string f = fmt::format("pods[{}]", i);
      r.only_keys(pods[i], {"at", "duration", "template", "repeat"}, f);
      ExplicitPod p;
      p.at = r.finite(pods[i], "at", f + ".at", 0);
      p.duration = r.value<double>(pods[i], "duration", f + ".duration", kForever);
      p.template_name = r.required<std::string>(pods[i], "template", f + ".template");
      p.repeat = r.value<int>(pods[i], "repeat", f + ".repeat", 1);
      if (p.at < 0) r.fail(pods[i], f + ".at", "must not be negative");
      if (!(p.duration > 0)) r.fail(pods[i], f + ".duration", "must be positive (.inf: never leaves)");
      if (p.repeat < 1 || p.repeat > 1'000'000)
        r.fail(pods[i], f + ".repeat", "must be between 1 and 1000000");
      find_template(pods[i], p.template_name, f + ".template");
      s.pods.push_back(p);
    }
  }
  if (YAML::Node g = r.get(root, "generator")) {
    ++sources;
    r.only_keys(g,
                {"pods", "arrival", "rate_per_s", "duration", "mean_s", "sigma", "mix", "diurnal_amplitude",
                 "diurnal_peak"},
                "generator");
    GeneratorSpec spec;
    spec.pods = r.required<size_t>(g, "pods", "generator.pods");
    if (spec.pods > kMaxPods)
      r.fail(r.get(g, "pods"), "generator.pods", fmt::format("at most {} pods per run", kMaxPods));
    spec.arrival = r.value<std::string>(g, "arrival", "generator.arrival", "poisson");
    if (spec.arrival != "poisson" && spec.arrival != "uniform" && spec.arrival != "burst")
      r.fail(r.get(g, "arrival"), "generator.arrival", "use poisson, uniform or burst");
    spec.rate_per_s = r.finite(g, "rate_per_s", "generator.rate_per_s", 1.0);
    if (!(spec.rate_per_s > 0)) r.fail(r.get(g, "rate_per_s"), "generator.rate_per_s", "must be positive");
    spec.duration = r.value<std::string>(g, "duration", "generator.duration", "exponential");
    if (spec.duration != "exponential" && spec.duration != "fixed" && spec.duration != "lognormal" &&
        spec.duration != "forever")
      r.fail(r.get(g, "duration"), "generator.duration", "use exponential, fixed, lognormal or forever");
    spec.mean_s = r.finite(g, "mean_s", "generator.mean_s", 600.0);
    if (!(spec.mean_s > 0)) r.fail(r.get(g, "mean_s"), "generator.mean_s", "must be positive");
    spec.sigma = r.finite(g, "sigma", "generator.sigma", 1.0);
    if (spec.sigma < 0) r.fail(r.get(g, "sigma"), "generator.sigma", "must not be negative");
    spec.diurnal_amplitude = r.finite(g, "diurnal_amplitude", "generator.diurnal_amplitude", 0.0);
    if (spec.diurnal_amplitude < 0 || spec.diurnal_amplitude > 1)
      r.fail(r.get(g, "diurnal_amplitude"), "generator.diurnal_amplitude", "must be between 0 and 1");
    if (spec.diurnal_amplitude > 0 && spec.arrival != "poisson")
      r.fail(r.get(g, "diurnal_amplitude"), "generator.diurnal_amplitude", "needs arrival: poisson");
    spec.diurnal_peak = read_duration(r, g, "diurnal_peak", "generator.diurnal_peak", spec.diurnal_peak);
    YAML::Node mix = r.get(g, "mix");
    if (!mix || !mix.IsSequence() || mix.size() == 0) r.fail(g, "generator.mix", "needs a list of templates");
    for (size_t i = 0; i < mix.size(); ++i) {
      const std::string f = fmt::format("generator.mix[{}]", i);
      PodTemplate t = find_template(mix[i], r.required<std::string>(mix[i], "template", f + ".template"),
                                    f + ".template");
      r.only_keys(mix[i], {"template", "weight"}, f);
      t.weight = r.finite(mix[i], "weight", f + ".weight", 1.0);
      if (!(t.weight >= 0)) r.fail(mix[i], f + ".weight", "must not be negative");
      spec.mix.push_back(t);
    }
    double total_weight = 0;
    for (const auto& t : spec.mix) total_weight += t.weight;
    if (!(total_weight > 0)) r.fail(mix, "generator.mix", "every weight is 0: no template could be drawn");
    s.generator = spec;
  }
  if (YAML::Node o = r.get(root, "openb_pods")) {
    ++sources;
    r.only_keys(o, {"file", "tune", "resample", "departures", "priority_class_by_qos", "diurnal"},
                "openb_pods");
    const std::string file = r.required<std::string>(o, "file", "openb_pods.file");
    const std::string path = (std::filesystem::path(base_dir) / file).string();
    s.openb_pods_csv = read_text(path, source, r.line(o), "openb_pods.file");
    s.openb_pods_source = path;
    s.openb.tune = r.value<double>(o, "tune", "openb_pods.tune", 1.3);
    if (std::string problem = tune_problem(s.openb.tune); !problem.empty())
      r.fail(r.get(o, "tune"), "openb_pods.tune", problem);
    s.openb.resample = r.value<bool>(o, "resample", "openb_pods.resample", true);
    s.openb.departures = r.value<bool>(o, "departures", "openb_pods.departures", false);
    if (YAML::Node d = r.get(o, "diurnal")) {
      r.only_keys(d, {"rate_per_s", "amplitude", "peak", "days", "mean_s"}, "openb_pods.diurnal");
      OpenbDiurnal spec;
      spec.rate.rate_per_s = r.finite(d, "rate_per_s", "openb_pods.diurnal.rate_per_s", 0.0);
      if (!(spec.rate.rate_per_s > 0))
        r.fail(r.get(d, "rate_per_s"), "openb_pods.diurnal.rate_per_s", "must be positive");
      spec.rate.amplitude = r.finite(d, "amplitude", "openb_pods.diurnal.amplitude", 0.5);
      if (spec.rate.amplitude < 0 || spec.rate.amplitude > 1)
        r.fail(r.get(d, "amplitude"), "openb_pods.diurnal.amplitude", "must be between 0 and 1");
      spec.rate.peak = read_duration(r, d, "peak", "openb_pods.diurnal.peak", spec.rate.peak);
      spec.days = r.finite(d, "days", "openb_pods.diurnal.days", 1.0);
      if (!(spec.days > 0) || spec.days > 3660)
        r.fail(r.get(d, "days"), "openb_pods.diurnal.days", "must be between 0 and 3660");
      spec.mean_s = read_duration(r, d, "mean_s", "openb_pods.diurnal.mean_s", spec.mean_s);
      if (!(spec.mean_s > 0)) r.fail(r.get(d, "mean_s"), "openb_pods.diurnal.mean_s", "must be positive");
      // Bounded memory: the stream's expected size.
      if (spec.rate.rate_per_s * spec.days * 86400 > static_cast<double>(kMaxPods))
        r.fail(d, "openb_pods.diurnal", fmt::format("would draw more than {} pods", kMaxPods));
      s.openb.diurnal = spec;
    }
    if (YAML::Node q = r.get(o, "priority_class_by_qos")) {
      if (!q.IsMap())
        r.fail(q, "openb_pods.priority_class_by_qos", "must map qos values (LS, BE, ...) to classes");
      for (auto it = q.begin(); it != q.end(); ++it) {
        const std::string qos = r.key_text(it->first, "openb_pods.priority_class_by_qos");
        YAML::Node one;
        one["priority_class"] = it->second;
        s.openb.priority_by_qos[qos] =
            read_priority(r, one, "openb_pods.priority_class_by_qos." + qos, s.priority_classes);
      }
      s.openb.other = read_priority(r, YAML::Node(YAML::NodeType::Map), "openb_pods", s.priority_classes);
    }
  }
  if (YAML::Node q = r.get(root, "quotas")) s.quotas = read_quotas(r, q);
  if (sources > 1 || (sources == 0 && !fleet_given))
    r.fail(root, "pods", "give exactly one of pods, generator or openb_pods");
  if (!fleet_given && s.fleet.size() == 0 && s.node_groups.empty())
    r.fail(root, "fleet", "the fleet has no nodes");
  return read;
}

NodeGroupsFile parse_node_groups_file(const std::string& text, const std::string& source) {
  YAML::Node root;
  bool found = false;
  for (const auto& doc : core::codec::load_yaml_documents(text, source)) {
    if (!doc || doc.IsNull()) continue;
    if (found) throw InputError(source, doc.Mark().line + 1, "", "a node groups file is one YAML document");
    root = doc;
    found = true;
  }
  Reader r{source};
  if (!root.IsMap()) throw InputError(source, 1, "", "must be a mapping with node_groups (and autoscaler)");
  r.only_keys(root, {"node_groups", "autoscaler"}, "");
  NodeGroupsFile file;
  file.source = source;
  const YAML::Node list = r.get(root, "node_groups");
  if (!list) r.fail(root, "node_groups", "is required");
  // A template's MIG cards here are named by the chart's allowlist.
  file.groups = read_node_groups(r, list, {}, core::codec::chart_default_device_config(), true);
  for (size_t i = 0; i < file.groups.size(); ++i) {
    const YAML::Node labels = r.get(list[i], "node_labels");
    file.label_lines.push_back(r.line(labels ? labels : list[i]));
  }
  if (YAML::Node a = r.get(root, "autoscaler")) file.autoscaler = read_autoscaler(r, a);
  return file;
}

Scenario parse_scenario(const std::string& text, const std::string& source, const std::string& base_dir,
                        bool fleet_given) {
  return parse_scenario_file(text, source, base_dir, fleet_given).scenario;
}

std::optional<QueueDiscipline> parse_queue(std::string_view text) {
  if (text == "fifo") return QueueDiscipline::Fifo;
  if (text == "skip-ahead") return QueueDiscipline::SkipAhead;
  return std::nullopt;
}

void set_fleet_counts(Scenario& s, const std::vector<size_t>& which, const std::vector<int>& counts) {
  int64_t units = 0;
  for (size_t k = 0; k < which.size(); ++k) s.fleet_groups.at(which[k]).count = counts.at(k);
  for (const auto& g : s.fleet_groups) {
    if (g.count < 0) throw InputError("arguments", 0, "count", "must not be negative");
    units += static_cast<int64_t>(g.count) * (1 + g.node.cards);
  }
  if (units > kMaxFleetUnits)
    throw InputError(
        "arguments", 0, "count",
        fmt::format("the fleet would hold more than {} nodes and cards together", kMaxFleetUnits));
  s.fleet = build_fleet(s.fleet_groups, s.snapshot ? s.snapshot->nodes : std::vector<core::Node>{});
}

Scenario load_scenario(const std::string& path) {
  return parse_scenario(core::codec::read_text_file(path), path,
                        std::filesystem::path(path).parent_path().string());
}

namespace {
Workload later_pods(const Scenario& s, uint64_t seed) {
  // With node groups the pods are measured against every node the run may hold.
  const core::Cluster grown =
      s.node_groups.empty() ? core::Cluster{} : fleet_with_groups(s.fleet, s.node_groups);
  const core::Cluster& fleet = s.node_groups.empty() ? s.fleet : grown;
  if (s.generator) return generate(*s.generator, seed, typical_card_mib(fleet));
  if (s.openb_pods_csv) {
    OpenbOptions o = s.openb;
    o.seed = seed;
    if (o.diurnal) {
      OpenbOptions once = o;
      once.resample = false;
      return openb_diurnal(load_openb_pods(*s.openb_pods_csv, s.openb_pods_source, fleet, once), *o.diurnal,
                           seed);
    }
    return load_openb_pods(*s.openb_pods_csv, s.openb_pods_source, fleet, o);
  }
  Workload w;
  for (const auto& p : s.pods) {
    const PodTemplate* t = nullptr;
    for (const auto& tpl : s.templates)
      if (tpl.name == p.template_name) t = &tpl;
    for (int i = 0; i < p.repeat; ++i) {
      PodSpec spec;
      spec.request = t->request;
      spec.request.name = fmt::format("{}-{}", p.template_name, w.size());
      spec.kind = p.template_name;
      spec.priority = t->priority;
      spec.controlled = t->controlled;
      spec.pdb_protected = t->pdb_protected;
      spec.arrival = p.at;
      spec.duration = p.duration;
      spec.gpu_milli = gpu_milli_of(spec.request, typical_card_mib(fleet));
      w.push_back(std::move(spec));
    }
  }
  std::stable_sort(w.begin(), w.end(),
                   [](const PodSpec& a, const PodSpec& b) { return a.arrival < b.arrival; });
  return w;
}

std::string pod_name(const core::PodRequest& r) { return r.ns + "/" + r.name; }
}  // namespace

Workload materialize(const Scenario& s, uint64_t seed) {
  if (!s.snapshot) return later_pods(s, seed);
  // A snapshot run: the pods already placed, then the queue at time 0 in
  // creation order, then the later pods (a stable order at equal times).
  const int64_t typical = typical_card_mib(s.fleet);
  Workload w;
  for (const auto& p : s.snapshot->starting) {
    PodSpec spec;
    spec.request = p.request;
    spec.name = pod_name(p.request);
    spec.kind = "running";
    spec.duration = p.duration;
    spec.gpu_milli = gpu_milli_of(p.request, typical);
    spec.running_on = PodSpec::Placed{p.node, p.allocation};
    spec.priority = p.priority;
    spec.controlled = p.controlled;
    spec.counted_by_budgets = p.counted_by_budgets;
    spec.guarded_by_budgets = p.guarded_by_budgets;
    w.push_back(std::move(spec));
  }
  for (const auto& p : s.snapshot->queue) {
    PodSpec spec;
    spec.request = p.request;
    spec.name = pod_name(p.request);
    spec.kind = "queue";
    spec.origin = "queue";
    spec.priority = p.priority;
    spec.controlled = p.controlled;
    spec.counted_by_budgets = p.counted_by_budgets;
    spec.guarded_by_budgets = p.guarded_by_budgets;
    spec.duration = p.duration;
    spec.gpu_milli = gpu_milli_of(p.request, typical);
    w.push_back(std::move(spec));
  }
  for (auto& p : later_pods(s, seed)) {
    p.name = pod_name(p.request);
    p.origin = "later";
    w.push_back(std::move(p));
  }
  return w;
}

Scenario openb_scenario(const std::string& nodes_path, const std::string& pods_path,
                        const OpenbOptions& options) {
  Scenario s;
  s.name = "openb";
  s.description = "openb trace replay (Alibaba cluster-trace-gpu-v2023)";
  s.fleet =
      load_openb_nodes(read_text(nodes_path, "command line", 0, "--openb-nodes"), nodes_path, options.slots);
  s.openb_pods_csv = read_text(pods_path, "command line", 0, "--openb-pods");
  s.openb_pods_source = pods_path;
  s.openb = options;
  s.seed = options.seed;
  return s;
}

}  // namespace gpuslice::sim
