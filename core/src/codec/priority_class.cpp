#include "gpuslice/core/codec/priority_class.hpp"

#include <fmt/format.h>

#include <charconv>
#include <limits>
#include <map>

#include "gpuslice/core/errors.hpp"

namespace gpuslice::core::codec {

namespace {

const std::string& text_of(const Scalar& s, const ReadContext& context, const char* field) {
  if (!s.is_text()) context.fail(s.at, field, "must be a string or number");
  return s.text;
}

// The classes every cluster has without a manifest (pkg/apis/scheduling:
// SystemClusterCritical and SystemNodeCritical).
const PriorityClassDocument kSystemClasses[] = {
    {"system-cluster-critical", 2000000000, false, false, 0},
    {"system-node-critical", 2000001000, false, false, 0},
};

}  // namespace

PriorityClassDocument priority_class_document(const PriorityClassObject& object, const ReadContext& context) {
  PriorityClassDocument out;
  out.line = object.header.line;
  const ObjectMeta& meta = object.header.meta;
  if (!meta.name.given()) context.fail(object.header.at, "metadata.name", "a PriorityClass needs a name");
  out.name = text_of(meta.name, context, "metadata.name");
  if (!object.value.given()) context.fail(object.header.at, "value", "a PriorityClass needs a value");
  const std::string& value = text_of(object.value, context, "value");
  int64_t v = 0;
  const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
  if (ec != std::errc() || end != value.data() + value.size() || v < std::numeric_limits<int32_t>::min() ||
      v > std::numeric_limits<int32_t>::max())
    context.fail(object.value.at, "value", fmt::format("'{}' is not a 32-bit integer", value));
  out.value = static_cast<int32_t>(v);
  if (object.global_default.given()) {
    const std::string& g = text_of(object.global_default, context, "globalDefault");
    if (g != "true" && g != "false")
      context.fail(object.global_default.at, "globalDefault", fmt::format("'{}' is not true or false", g));
    out.global_default = g == "true";
  }
  if (object.preemption_policy.given()) {
    const std::string& p = text_of(object.preemption_policy, context, "preemptionPolicy");
    if (p != "Never" && p != "PreemptLowerPriority")
      context.fail(object.preemption_policy.at, "preemptionPolicy",
                   fmt::format("unknown policy '{}' (PreemptLowerPriority, Never)", p));
    out.preempt_never = p == "Never";
  }
  return out;
}

void admit_priorities(std::span<const PriorityClassDocument> classes, std::vector<PodDocument>& pods,
                      const std::string& source, std::vector<std::string>& warnings) {
  std::map<std::string, const PriorityClassDocument*, std::less<>> by_name;
  for (const auto& c : kSystemClasses) by_name.emplace(c.name, &c);
  const PriorityClassDocument* global_default = nullptr;
  for (const auto& c : classes) {
    if (auto [it, fresh] = by_name.emplace(c.name, &c); !fresh) {
      // A manifest of a system class restates it; two of one name is an error.
      if (it->second->line != 0)
        throw InputError(source, c.line, "metadata.name",
                         fmt::format("PriorityClass '{}' is listed twice", c.name));
      it->second = &c;
    }
    if (!c.global_default) continue;
    if (global_default)
      throw InputError(source, c.line, "globalDefault",
                       fmt::format("PriorityClass '{}' and '{}' are both the global default",
                                   global_default->name, c.name));
    global_default = &c;
  }
  for (PodDocument& pod : pods) {
    if (pod.priority_given) continue;
    const PriorityClassDocument* cls = global_default;
    if (!pod.priority_class.empty()) {
      const auto it = by_name.find(pod.priority_class);
      if (it == by_name.end()) {
        warnings.push_back(
            fmt::format("{}:{}: pod {}/{}: spec.priorityClassName '{}' is in no PriorityClass of "
                        "the dump (the API server would refuse the pod); priority 0",
                        source, pod.line, pod.request.ns, pod.request.name, pod.priority_class));
        continue;
      }
      cls = it->second;
    }
    if (!cls) continue;
    pod.priority = cls->value;
    pod.priority_class = cls->name;  // admission names the default class on the pod
    if (!pod.preemption_policy_given) pod.preempt_never = cls->preempt_never;
  }
}

}  // namespace gpuslice::core::codec
