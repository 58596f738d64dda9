#include "gpuslice/serve/webhook.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <optional>

#include "base64.hpp"
#include "gpuslice/core/codec/quantity.hpp"
#include "gpuslice/core/errors.hpp"

namespace gpuslice::serve {

namespace {

using nlohmann::json;

// A JSON Pointer token (RFC 6901): nvidia.com/gpu -> nvidia.com~1gpu.
std::string pointer_token(const std::string& key) {
  std::string out;
  for (char c : key) {
    if (c == '~')
      out += "~0";
    else if (c == '/')
      out += "~1";
    else
      out += c;
  }
  return out;
}

void diff(const json& a, const json& b, const std::string& at, json& ops) {
  if (a == b) return;
  if (a.is_object() && b.is_object()) {
    for (auto it = a.begin(); it != a.end(); ++it)
      if (!b.contains(it.key()))
        ops.push_back({{"op", "remove"}, {"path", at + "/" + pointer_token(it.key())}});
    for (auto it = b.begin(); it != b.end(); ++it) {
      const std::string path = at + "/" + pointer_token(it.key());
      if (!a.contains(it.key()))
        ops.push_back({{"op", "add"}, {"path", path}, {"value", it.value()}});
      else
        diff(a[it.key()], it.value(), path, ops);
    }
    return;
  }
  if (a.is_array() && b.is_array() && b.size() >= a.size()) {
    for (size_t i = 0; i < a.size(); ++i) diff(a[i], b[i], fmt::format("{}/{}", at, i), ops);
    for (size_t i = a.size(); i < b.size(); ++i)
      ops.push_back({{"op", "add"}, {"path", fmt::format("{}/{}", at, i)}, {"value", b[i]}});
    return;
  }
  ops.push_back({{"op", "replace"}, {"path", at}, {"value", b}});
}

// Thrown inside the mutation: HAMi's admission.Errored(code, err).
struct Errored {
  int code;
  std::string message;
};

// Quantity.Value() of a resource given as "4", "4k" or a JSON number.
int64_t quantity_value(const json& q, const std::string& field) {
  try {
    if (q.is_number_integer()) return q.get<int64_t>();
    if (q.is_number()) return core::codec::parse_quantity_value(fmt::format("{}", q.get<double>()));
    if (q.is_string()) return core::codec::parse_quantity_value(q.get<std::string>());
  } catch (const core::CodecError& e) {
    throw Errored{400, fmt::format("{}: {}", field, e.what())};
  }
  throw Errored{400, fmt::format("{}: a quantity must be a string or a number", field)};
}

const json* resource_in(const json& ctr, const char* list, const std::string& name) {
  if (name.empty() || !ctr.contains("resources") || !ctr["resources"].is_object()) return nullptr;
  const json& r = ctr["resources"];
  if (!r.contains(list) || !r[list].is_object() || !r[list].contains(name)) return nullptr;
  return &r[list][name];
}
bool in_limits(const json& ctr, const std::string& name) {
  return resource_in(ctr, "limits", name) != nullptr;
}
// HAMi's resourcePresent / resourceValue: limits first, then requests.
const json* present(const json& ctr, const std::string& name) {
  const json* q = resource_in(ctr, "limits", name);
  return q ? q : resource_in(ctr, "requests", name);
}

void set_limit(json& ctr, const std::string& name, const std::string& value) {
  if (!ctr.contains("resources") || !ctr["resources"].is_object()) ctr["resources"] = json::object();
  if (!ctr["resources"].contains("limits") || !ctr["resources"]["limits"].is_object())
    ctr["resources"]["limits"] = json::object();
  ctr["resources"]["limits"][name] = value;
}

void add_env(json& ctr, const std::string& name, const std::string& value) {
  if (!ctr.contains("env") || !ctr["env"].is_array()) ctr["env"] = json::array();
  ctr["env"].push_back({{"name", name}, {"value", value}});
}

// NvidiaGPUDevices.MutateAdmission for one container: whether it asks for
// HAMi GPUs after the defaults are applied.
bool mutate_container(json& ctr, json& pod, const WebhookConfig& cfg, const std::string& where) {
  const auto& d = cfg.defaults;
  const std::string name = ctr.value("name", "");
  if (const json* q = present(ctr, d.resource_memory_percentage)) {
    const int64_t pct = quantity_value(*q, where + d.resource_memory_percentage);
    if (pct < 0 || pct > 100)
      throw Errored{500,
                    fmt::format("invalid {} value {} in container {}: must be an integer between 0 and 100",
                                d.resource_memory_percentage, pct, name)};
  }
  if (const json* q = resource_in(ctr, "limits", d.resource_priority))
    add_env(ctr, "CUDA_TASK_PRIORITY", std::to_string(quantity_value(*q, where + d.resource_priority)));
  if (!cfg.gpu_core_policy.empty() && cfg.gpu_core_policy != "default")
    add_env(ctr, "GPU_CORE_UTILIZATION_POLICY", cfg.gpu_core_policy);

  // mutateContainerResource: limits only.
  bool has_resource = in_limits(ctr, d.resource_count);
  if (!has_resource &&
      (in_limits(ctr, d.resource_cores) || in_limits(ctr, d.resource_memory) ||
       in_limits(ctr, d.resource_memory_percentage)) &&
      d.default_gpu_num > 0) {
    set_limit(ctr, d.resource_count, std::to_string(d.default_gpu_num));
    has_resource = true;
  }
  // defaultExclusiveCoreIfNeeded: a whole card and no cores means the card
  // exclusively (gpucores 100), limits or requests.
  if (present(ctr, d.resource_count) && !present(ctr, d.resource_cores)) {
    bool exclusive;
    if (const json* q = present(ctr, d.resource_memory_percentage))
      exclusive = quantity_value(*q, where + d.resource_memory_percentage) == 100;
    else
      exclusive = d.resource_memory.empty() || !present(ctr, d.resource_memory);
    if (exclusive) {
      set_limit(ctr, d.resource_cores, "100");
      has_resource = true;
    }
  }
  if (has_resource && !cfg.runtime_class_name.empty() && !pod["spec"].contains("runtimeClassName"))
    pod["spec"]["runtimeClassName"] = cfg.runtime_class_name;
  if (!has_resource && cfg.overwrite_env) add_env(ctr, "NVIDIA_VISIBLE_DEVICES", "none");
  return has_resource;
}

// HAMi's NVIDIA GenerateResourceRequests for one (mutated) container, the
// part fitResourceQuota reads: {cards, MiB per card, cores per card}. A
// percentage (or no memory and no defaultMemory) asks 0 MiB here, so only
// MiB requests meet a memory quota at admission; what HAMi cannot read as a
// whole number asks nothing (its empty request).
struct AdmissionAsk {
  int64_t count = 0, memory_mib = 0, cores = 0;
};
AdmissionAsk admission_ask(const json& ctr, const core::codec::RequestDefaults& d) {
  try {
    const json* n = present(ctr, d.resource_count);
    if (!n) return {};
    AdmissionAsk ask{quantity_value(*n, d.resource_count), 0, d.default_cores};
    int64_t percent = core::kMemoryPercentUnset;
    if (const json* m = present(ctr, d.resource_memory)) {
      ask.memory_mib = quantity_value(*m, d.resource_memory);
      if (ask.memory_mib < 0 || ask.memory_mib > std::numeric_limits<int32_t>::max()) return {};
    }
    if (const json* p = present(ctr, d.resource_memory_percentage)) {
      const int64_t v = std::min<int64_t>(quantity_value(*p, d.resource_memory_percentage), 100);
      if (v > 0) percent = v;
    }
    if (percent == core::kMemoryPercentUnset && ask.memory_mib == 0) ask.memory_mib = d.default_memory_mib;
    if (const json* c = present(ctr, d.resource_cores)) ask.cores = quantity_value(*c, d.resource_cores);
    return ask;
  } catch (const Errored&) {
    return {};
  }
}

// HAMi fitResourceQuota (pkg/scheduler/webhook.go): app containers' asks
// summed (x cards), init containers' largest, each key on its own; the
// pod's effective ask is the larger. Nothing asked: nothing to check.
std::optional<core::QuotaUse> quota_ask(const json& spec, const core::codec::RequestDefaults& d) {
  core::QuotaUse app, init;
  if (spec.contains("containers"))
    for (const auto& c : spec["containers"]) {
      const AdmissionAsk a = admission_ask(c, d);
      app.memory_mib += a.memory_mib * a.count;
      app.cores += a.cores * a.count;
    }
  if (spec.contains("initContainers"))
    for (const auto& c : spec["initContainers"]) {
      const AdmissionAsk a = admission_ask(c, d);
      init.memory_mib = std::max(init.memory_mib, a.memory_mib * a.count);
      init.cores = std::max(init.cores, a.cores * a.count);
    }
  const core::QuotaUse ask{std::max(app.memory_mib, init.memory_mib), std::max(app.cores, init.cores)};
  if (ask.memory_mib == 0 && ask.cores == 0) return std::nullopt;
  return ask;
}

bool privileged(const json& ctr) {
  if (!ctr.contains("securityContext") || !ctr["securityContext"].is_object()) return false;
  const json& sc = ctr["securityContext"];
  return sc.contains("privileged") && sc["privileged"].is_boolean() && sc["privileged"].get<bool>();
}

json response(const std::string& uid, bool allowed, int code, const std::string& reason,
              const std::string& message) {
  json status = {{"code", code}};
  if (!reason.empty()) status["reason"] = reason;
  if (!message.empty()) status["message"] = message;
  return {{"uid", uid}, {"allowed", allowed}, {"status", status}};
}
json allowed(const std::string& uid, const std::string& message) {
  return response(uid, true, 200, "", message);
}
json denied(const std::string& uid, const std::string& message) {
  return response(uid, false, 403, "Forbidden", message);
}

json decide(const std::string& uid, const json& request, const WebhookConfig& cfg) {
  if (!request.contains("object") || !request["object"].is_object() || !request["object"].contains("spec") ||
      !request["object"]["spec"].is_object())
    return response(uid, false, 400, "", "request.object is not a Pod");
  const json& original = request["object"];
  json pod = original;
  json& spec = pod["spec"];
  for (const char* list : {"containers", "initContainers"})
    if (spec.contains(list) && !spec[list].is_array())
      return response(uid, false, 400, "", fmt::format("spec.{} must be a list", list));
  if (!spec.contains("containers") || spec["containers"].empty()) return denied(uid, "pod has no containers");

  const std::string scheduler = spec.value("schedulerName", "");
  if (!scheduler.empty() && (scheduler != "default-scheduler" || !cfg.force_overwrite_default_scheduler) &&
      (cfg.scheduler_name.empty() || scheduler != cfg.scheduler_name))
    return allowed(uid, "pod already has different scheduler assigned");

  std::string privileged_name;
  bool has_privileged = false;
  for (const char* list : {"initContainers", "containers"})
    if (spec.contains(list))
      for (const auto& c : spec[list])
        if (!has_privileged && c.is_object() && privileged(c)) {
          has_privileged = true;
          privileged_name = c.value("name", "");
        }

  bool has_resource = false;
  try {
    for (const char* list : {"initContainers", "containers"}) {
      if (!spec.contains(list)) continue;
      for (size_t i = 0; i < spec[list].size(); ++i) {
        json& c = spec[list][i];
        if (!c.is_object())
          return response(uid, false, 400, "", fmt::format("spec.{}[{}] is not an object", list, i));
        has_resource =
            mutate_container(c, pod, cfg, fmt::format("spec.{}[{}].resources.", list, i)) || has_resource;
      }
    }
  } catch (const Errored& e) {
    return response(uid, false, e.code, "", e.message);
  }
  if (has_privileged && has_resource)
    return denied(uid, fmt::format("container {} is privileged", privileged_name));
  if (has_resource && !cfg.scheduler_name.empty()) {
    spec["schedulerName"] = cfg.scheduler_name;
    if (!spec.value("nodeName", "").empty()) return denied(uid, "pod has node assigned");
  }
  // HAMi fitResourceQuota, on the mutated pod and its own namespace field.
  if (cfg.fits_quota)
    if (const auto ask = quota_ask(spec, cfg.defaults)) {
      const json& meta =
          pod.contains("metadata") && pod["metadata"].is_object() ? pod["metadata"] : json::object();
      const std::string ns = meta.contains("namespace") && meta["namespace"].is_string()
                                 ? meta["namespace"].get<std::string>()
                                 : "";
      if (!cfg.fits_quota(ns, *ask)) return denied(uid, "exceeding resource quota");
    }
  json out = allowed(uid, "");
  const json ops = json_patch(original, pod);
  if (!ops.empty()) {
    out["patchType"] = "JSONPatch";
    out["patch"] = base64_encode(ops.dump());
  }
  return out;
}

}  // namespace

json json_patch(const json& before, const json& after) {
  json ops = json::array();
  diff(before, after, "", ops);
  return ops;
}

json admit_pod(const json& review, const WebhookConfig& config) {
  if (!review.is_object() || !review.contains("request") || !review["request"].is_object() ||
      !review["request"].contains("uid") || !review["request"]["uid"].is_string())
    throw AdmissionDecodeError("not an AdmissionReview with request.uid");
  const json& request = review["request"];
  return {{"apiVersion", review.value("apiVersion", "admission.k8s.io/v1")},
          {"kind", "AdmissionReview"},
          {"response", decide(request["uid"].get<std::string>(), request, config)}};
}

}  // namespace gpuslice::serve
