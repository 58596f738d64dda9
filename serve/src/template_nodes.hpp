// Cluster Autoscaler's simulated nodes, as its dry-run filters name them
// (docs/serve.md#cluster-autoscaler): each read from the Node object the
// request carries (its registration annotation, zero usage), never part of
// the real cluster, and, for a node CA's binpacking estimator added
// ("<template>-e-<n>"), the pods CA packed onto it in this estimation, so the
// next pod asked against that node sees them.
//
// The packing rule: a pod that fits an estimator node, that node being the
// only node of the request it fits, is packed onto it: CA then has no other
// choice (its CheckPredicates on the last node it added names that node
// alone; then it adds the pod there). Where several fit, CA picks one by an
// order serve does not see, and nothing is packed. An estimation starts
// over, and its template family's packed pods are dropped, when a pod
// already packed on the node is asked against it again (CA adds each pod
// once per estimation). A family nobody asked about for `idle` is dropped:
// one estimation's requests are milliseconds apart, CA's loops seconds. At
// most `max_nodes` simulated nodes are kept (the least recently asked
// family goes first; an estimation larger than that forgets its earliest
// nodes).
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>

#include "gpuslice/core/cluster.hpp"
#include "gpuslice/core/policy.hpp"
#include "gpuslice/core/quota.hpp"
#include "gpuslice/core/scheduler.hpp"
#include "gpuslice/serve/decision_state.hpp"

namespace gpuslice::serve {

// --template-registration FILE: JSON {"templates": [{"labels": {...},
// "registration": [...]}]} (the registration as the annotation's JSON array,
// or that text as a string). Throws core::InputError naming the file and field.
std::vector<TemplateRegistration> parse_template_registrations(const std::string& text,
                                                               const std::string& source);

class TemplateNodes {
 public:
  using Time = std::chrono::system_clock::time_point;
  struct Limits {
    std::chrono::milliseconds idle{std::chrono::seconds(2)};  // well under CA's 10 s scan interval
    size_t max_nodes = 4096;
  };
  // The answer for one node: fits (with the cards it would take), or why not.
  struct Fit {
    bool fits = false;
    std::string reason;
    core::PodAllocation allocation;
  };

  // `policy`: the extender's policy name (each node gets its own instance);
  // `registrations`: for templates with no registration annotation.
  TemplateNodes(std::string policy, Limits limits, std::vector<TemplateRegistration> registrations = {});
  ~TemplateNodes();
  // The scheduler checks these quotas (read only), as the live one does.
  void set_quotas(const core::QuotaBook* quotas) { scheduler_.set_quotas(quotas); }

  // Whether `pod` fits the node `object` (named `name`), as CA's
  // simulation of it stands.
  Fit fit(const std::string& name, const nlohmann::json& object, const core::PodRequest& pod,
          const std::string& pod_key, Time now);
  // CA packs the pod onto the node it fits (called for the only fitting
  // node of a request; a node that is no estimator node holds nothing).
  void pack(const std::string& name, const core::PodRequest& pod, const std::string& pod_key,
            const core::PodAllocation& allocation, Time now);

  size_t node_count() const;

 private:
  struct Simulated {
    uint64_t fingerprint = 0;  // the object it was read from
    core::Cluster cluster;     // this node alone, with the pods packed onto it
    std::unique_ptr<core::Policy> policy;
    std::optional<std::string> unreadable;  // why the object gives no node
    bool registered = false;
    bool gpus_in_capacity = false;
    std::set<std::string> pods;  // packed, by key
  };
  struct Family {
    Time last_asked{};
    std::map<long, Simulated> nodes;  // by estimator number (-1: the template itself or another name)
  };
  // "<base>-e-<n>" -> (base, n); any other name -> (name, -1).
  static std::pair<std::string, long> split_name(const std::string& name);
  void forget_idle(Time now);
  void keep_bound(const std::string& asked, long asked_number);
  Simulated read(const std::string& name, const nlohmann::json& object, uint64_t fingerprint) const;

  // The registration a node group's template lacks, chosen by its labels.
  const std::string* registration_for(const nlohmann::json& object) const;

  std::string policy_name_;
  Limits limits_;
  std::vector<TemplateRegistration> registrations_;
  core::Scheduler scheduler_;
  std::map<std::string, Family> families_;  // by template base name
};

}  // namespace gpuslice::serve
