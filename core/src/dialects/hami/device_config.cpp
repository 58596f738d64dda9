#include "gpuslice/core/dialects/hami/device_config.hpp"

#include <fmt/format.h>

#include "gpuslice/core/codec/yaml_documents.hpp"
#include "gpuslice/core/errors.hpp"

namespace gpuslice::core::codec {

namespace {

int line_of(const YAML::Node& n) { return n.Mark().line >= 0 ? n.Mark().line + 1 : 0; }

// One scalar of the nvidia block, as Go's YAML decoder takes it into the
// field's type: a value of another type is an error, as it is for HAMi.
template <typename T>
T scalar(const YAML::Node& n, const std::string& source, const std::string& field) {
  if (!n.IsScalar()) throw InputError(source, line_of(n), field, "must be a single value");
  try {
    return n.as<T>();
  } catch (const YAML::Exception&) {
    throw InputError(source, line_of(n), field, fmt::format("'{}' is not of the field's type", n.Scalar()));
  }
}

std::vector<std::string> string_list(const YAML::Node& n, const std::string& source,
                                     const std::string& field) {
  std::vector<std::string> out;
  if (n.IsNull()) return out;
  if (!n.IsSequence()) throw InputError(source, line_of(n), field, "must be a list of strings");
  for (size_t i = 0; i < n.size(); ++i)
    out.push_back(scalar<std::string>(n[i], source, fmt::format("{}[{}]", field, i)));
  return out;
}

// HAMi ValidateMigProfileAllowlist: models and profiles both given, each
// profile "<n>g.<rest>" (text before the first '.' at least two characters,
// ending in 'g').
void validate_allowlist_entry(const MigAllowlistEntry& e, const YAML::Node& at, const std::string& source,
                              const std::string& field) {
  if (e.models.empty() || e.profiles.empty())
    throw InputError(source, line_of(at), field, "MIG profile allowlist must define models and profiles");
  for (size_t i = 0; i < e.profiles.size(); ++i) {
    const std::string& p = e.profiles[i];
    const auto dot = p.find('.');
    const std::string_view head =
        dot == std::string::npos ? std::string_view(p) : std::string_view(p).substr(0, dot);
    if (dot == std::string::npos || head.size() < 2 || head.back() != 'g')
      throw InputError(source, line_of(at["profiles"][i]), fmt::format("{}.profiles[{}]", field, i),
                       fmt::format("invalid MIG profile \"{}\"", p));
  }
}

}  // namespace

DeviceConfig chart_default_device_config() {
  DeviceConfig c;
  c.mig_profile_allowlist = {
      {{"A30"}, {"1g.6gb", "2g.12gb", "4g.24gb"}},
      {{"A100-SXM4-40GB", "A100-40GB-PCIe", "A100-PCIE-40GB"}, {"1g.5gb", "2g.10gb", "3g.20gb", "7g.40gb"}},
      {{"A100-SXM4-80GB", "A100-80GB-PCIe", "A100-PCIE-80GB"}, {"1g.10gb", "2g.20gb", "3g.40gb", "7g.79gb"}},
      {{"H100-PCIE-80GB", "H100-SXM5-80GB"}, {"1g.10gb", "2g.20gb", "3g.40gb", "7g.80gb"}},
      {{"H100-PCIE-94GB", "H100-SXM5-94GB"}, {"1g.12gb", "2g.24gb", "3g.47gb", "7g.94gb"}},
      {{"H20", "H100 on GH200"}, {"1g.12gb", "2g.24gb", "3g.48gb", "7g.96gb"}},
      {{"H200 NVL", "H200-SXM5"}, {"1g.18gb", "2g.35gb", "3g.71gb", "7g.141gb"}},
      {{"B200"}, {"1g.23gb", "2g.45gb", "3g.90gb", "7g.180gb"}},
      {{"RTX PRO 6000 Blackwell Server Edition"}, {"1g.24gb", "2g.48gb", "4g.96gb"}},
  };
  return c;
}

DeviceConfig parse_device_config(std::string_view text, const std::string& source) {
  const YAML::Node root = load_yaml_document(text, source);
  if (!root.IsMap()) throw InputError(source, line_of(root), "", "a device config is a map of vendor blocks");
  // HAMi validateConfig: a config whose every vendor block is empty is refused.
  bool any = false;
  for (const auto& kv : root)
    if (kv.second && !kv.second.IsNull() && kv.second.size() > 0) any = true;
  if (!any) throw InputError(source, line_of(root), "", "all configurations are empty");
  // Fields the file leaves out are Go's zero values, as HAMi reads them.
  DeviceConfig c;
  c.requests = RequestDefaults{0, 0, 0, "", "", "", "", ""};
  c.plugin.split_count = 0;
  c.plugin.memory_scaling = 0;
  c.plugin.core_scaling = 0;
  const YAML::Node nv = root["nvidia"];
  if (!nv || nv.IsNull()) return c;
  if (!nv.IsMap()) throw InputError(source, line_of(nv), "nvidia", "must be a map");
  auto field = [](const char* key) { return fmt::format("nvidia.{}", key); };
  auto str = [&](const char* key, std::string& out) {
    if (auto n = nv[key]) out = scalar<std::string>(n, source, field(key));
  };
  str("resourceCountName", c.requests.resource_count);
  str("resourceMemoryName", c.requests.resource_memory);
  str("resourceMemoryPercentageName", c.requests.resource_memory_percentage);
  str("resourceCoreName", c.requests.resource_cores);
  str("resourcePriorityName", c.requests.resource_priority);
  if (auto n = nv["defaultMemory"])
    c.requests.default_memory_mib = scalar<int32_t>(n, source, field("defaultMemory"));
  if (auto n = nv["defaultCores"])
    c.requests.default_cores = scalar<int32_t>(n, source, field("defaultCores"));
  if (auto n = nv["defaultGPUNum"])
    c.requests.default_gpu_num = scalar<int32_t>(n, source, field("defaultGPUNum"));
  if (auto n = nv["memoryFactor"]) {
    const auto factor = scalar<int32_t>(n, source, field("memoryFactor"));
    // HAMi multiplies gpumem by it; gpuslice reads gpumem as MiB only.
    if (factor > 1)
      throw InputError(source, line_of(n), field("memoryFactor"),
                       fmt::format("{}: gpuslice models memoryFactor 1 only (gpumem in MiB)", factor));
  }
  if (auto n = nv["deviceSplitCount"])
    c.plugin.split_count = scalar<int32_t>(n, source, field("deviceSplitCount"));
  if (auto n = nv["deviceMemoryScaling"])
    c.plugin.memory_scaling = scalar<double>(n, source, field("deviceMemoryScaling"));
  if (auto n = nv["deviceCoreScaling"])
    c.plugin.core_scaling = scalar<double>(n, source, field("deviceCoreScaling"));
  if (auto list = nv["migProfileAllowlist"]; list && !list.IsNull()) {
    if (!list.IsSequence())
      throw InputError(source, line_of(list), field("migProfileAllowlist"), "must be a list");
    for (size_t i = 0; i < list.size(); ++i) {
      const YAML::Node e = list[i];
      const std::string at = fmt::format("nvidia.migProfileAllowlist[{}]", i);
      if (!e.IsMap()) throw InputError(source, line_of(e), at, "must be a map with models and profiles");
      MigAllowlistEntry entry;
      if (auto m = e["models"]) entry.models = string_list(m, source, at + ".models");
      if (auto p = e["profiles"]) entry.profiles = string_list(p, source, at + ".profiles");
      validate_allowlist_entry(entry, e, source, at);
      c.mig_profile_allowlist.push_back(std::move(entry));
    }
  }
  return c;
}

const MigAllowlistEntry* mig_allowlist_entry(const DeviceConfig& config, std::string_view card_type) {
  for (const auto& e : config.mig_profile_allowlist)
    for (const auto& m : e.models)
      if (card_type.find(m) != std::string_view::npos) return &e;
  return nullptr;
}

}  // namespace gpuslice::core::codec
