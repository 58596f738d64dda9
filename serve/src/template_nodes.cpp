#include "template_nodes.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <functional>

#include "api_objects.hpp"
#include "gpuslice/core/codec/manifest.hpp"
#include "gpuslice/core/dialects/hami/policy.hpp"
#include "gpuslice/core/dialects/hami/registration.hpp"
#include "gpuslice/core/errors.hpp"

namespace gpuslice::serve {

namespace {

// Objects from a request have no text left to name lines in.
class RequestContext final : public core::codec::ReadContext {
 public:
  explicit RequestContext(std::string source) : source_(std::move(source)) {}
  const std::string& source() const override { return source_; }
  int line_of(core::codec::Position) const override { return 0; }
  std::string_view raw_object() const override { return {}; }

 private:
  std::string source_;
};

std::unique_ptr<core::Policy> policy_named(const std::string& name) {
  if (name == "hami") return std::make_unique<core::HamiPolicy>();
  return core::make_policy(name);
}

}  // namespace

std::vector<TemplateRegistration> parse_template_registrations(const std::string& text,
                                                               const std::string& source) {
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw core::InputError(source, 0, "(document)", std::string("is not JSON: ") + e.what());
  }
  const auto templates = doc.is_object() ? doc.find("templates") : doc.end();
  if (!doc.is_object() || templates == doc.end() || !templates->is_array())
    throw core::InputError(source, 0, "templates", "must be a list of {labels, registration}");
  std::vector<TemplateRegistration> out;
  for (size_t i = 0; i < templates->size(); ++i) {
    const nlohmann::json& t = (*templates)[i];
    const std::string where = fmt::format("templates[{}]", i);
    if (!t.is_object()) throw core::InputError(source, 0, where, "must be an object");
    TemplateRegistration r;
    const auto labels = t.find("labels");
    if (labels == t.end() || !labels->is_object() || labels->empty())
      throw core::InputError(source, 0, where + ".labels", "must be a non-empty map of label to value");
    for (auto it = labels->begin(); it != labels->end(); ++it) {
      if (!it->is_string())
        throw core::InputError(source, 0, where + ".labels." + it.key(), "must be a string");
      r.labels.emplace(it.key(), it->get<std::string>());
    }
    const auto registration = t.find("registration");
    if (registration == t.end() || !(registration->is_array() || registration->is_string()))
      throw core::InputError(source, 0, where + ".registration",
                             "must be hami.io/node-nvidia-register's JSON array (or that text)");
    r.registration = registration->is_string() ? registration->get<std::string>() : registration->dump();
    try {
      if (core::codec::decode_registration(r.registration).empty())
        throw core::InputError(source, 0, where + ".registration", "registers no card");
    } catch (const core::CodecError& e) {
      throw core::InputError(source, 0, where + ".registration", e.what());
    }
    out.push_back(std::move(r));
  }
  return out;
}

TemplateNodes::TemplateNodes(std::string policy, Limits limits,
                             std::vector<TemplateRegistration> registrations)
    : policy_name_(std::move(policy)), limits_(limits), registrations_(std::move(registrations)) {}

const std::string* TemplateNodes::registration_for(const nlohmann::json& object) const {
  if (registrations_.empty() || !object.is_object()) return nullptr;
  const auto meta = object.find("metadata");
  if (meta == object.end() || !meta->is_object()) return nullptr;
  if (const auto a = meta->find("annotations");
      a != meta->end() && a->is_object() && a->contains(core::codec::kRegisterAnnotation))
    return nullptr;  // its own registration comes first
  const auto labels = meta->find("labels");
  if (labels == meta->end() || !labels->is_object()) return nullptr;
  for (const auto& r : registrations_) {
    const bool all = std::all_of(r.labels.begin(), r.labels.end(), [&](const auto& kv) {
      const auto l = labels->find(kv.first);
      return l != labels->end() && l->is_string() && l->template get_ref<const std::string&>() == kv.second;
    });
    if (all) return &r.registration;
  }
  return nullptr;
}

TemplateNodes::~TemplateNodes() = default;

// CA names the nodes its estimator adds FreshNodeInfoFromTemplateNodeInfo(
// template, "e-<n>"): "<template name>-e-<n>".
std::pair<std::string, long> TemplateNodes::split_name(const std::string& name) {
  const size_t at = name.rfind("-e-");
  if (at == std::string::npos || at + 3 >= name.size() || name.size() - at > 3 + 9) return {name, -1};
  long n = 0;
  for (size_t i = at + 3; i < name.size(); ++i) {
    if (name[i] < '0' || name[i] > '9') return {name, -1};
    n = n * 10 + (name[i] - '0');
  }
  return {name.substr(0, at), n};
}

void TemplateNodes::forget_idle(Time now) {
  std::erase_if(families_, [&](const auto& f) { return now - f.second.last_asked >= limits_.idle; });
}

size_t TemplateNodes::node_count() const {
  size_t n = 0;
  for (const auto& [base, family] : families_) n += family.nodes.size();
  return n;
}

// The least recently asked families go first; then, when the one being
// asked alone passes the bound (an estimation of more nodes than that), its
// lowest-numbered nodes, never the node being asked.
void TemplateNodes::keep_bound(const std::string& asked, long asked_number) {
  while (node_count() > limits_.max_nodes) {
    auto oldest = families_.end();
    for (auto it = families_.begin(); it != families_.end(); ++it)
      if (it->first != asked &&
          (oldest == families_.end() || it->second.last_asked < oldest->second.last_asked))
        oldest = it;
    if (oldest == families_.end()) {
      auto& nodes = families_.at(asked).nodes;
      auto lowest = nodes.begin();
      if (lowest != nodes.end() && lowest->first == asked_number) ++lowest;
      if (lowest == nodes.end()) return;
      nodes.erase(lowest);
      continue;
    }
    families_.erase(oldest);
  }
}

TemplateNodes::Simulated TemplateNodes::read(const std::string& name, const nlohmann::json& object,
                                             uint64_t fingerprint) const {
  Simulated s;
  s.fingerprint = fingerprint;
  const std::string source = "Nodes.items (node " + name + ")";
  try {
    // A group's template without a registration: the one its labels select.
    nlohmann::json with_registration;
    const nlohmann::json* read_from = &object;
    if (const std::string* registration = registration_for(object)) {
      with_registration = object;
      with_registration["metadata"]["annotations"][std::string(core::codec::kRegisterAnnotation)] =
          *registration;
      read_from = &with_registration;
    }
    const auto decoded = decode_api_json(*read_from, "Node", source);
    const auto* node = decoded ? std::get_if<core::codec::NodeObject>(&*decoded) : nullptr;
    if (!node) throw core::InputError(source, 0, "kind", "is not a Node");
    core::codec::NodeDocument doc = core::codec::node_document(*node, RequestContext(source));
    s.registered = doc.registered && !doc.node.devices.empty();
    s.gpus_in_capacity = doc.allocatable_gpus.value_or(0) > 0;
    doc.node.name = name;
    s.cluster.add_node(std::move(doc.node));
  } catch (const core::InputError& e) {
    s.unreadable = e.what();
  }
  s.policy = policy_named(policy_name_);
  return s;
}

TemplateNodes::Fit TemplateNodes::fit(const std::string& name, const nlohmann::json& object,
                                      const core::PodRequest& pod, const std::string& pod_key, Time now) {
  forget_idle(now);
  const auto [base, number] = split_name(name);
  Family& family = families_[base];
  family.last_asked = now;
  // A new estimation: the pod was packed here already. (An earlier node
  // asked alone while a later one holds pods is no sign of one: CA's
  // FitsAnyNodeMatching sends only the nodes its own filters pass.)
  if (auto it = family.nodes.find(number); it != family.nodes.end() && it->second.pods.count(pod_key))
    family.nodes.clear();

  const uint64_t fingerprint = std::hash<std::string>{}(object.dump());
  auto it = family.nodes.find(number);
  if (it == family.nodes.end() || it->second.fingerprint != fingerprint)
    it = family.nodes.insert_or_assign(number, read(name, object, fingerprint)).first;
  keep_bound(base, number);
  Simulated& node = it->second;

  Fit answer;
  if (node.unreadable) {
    answer.reason = "node registration unreadable: " + *node.unreadable;
  } else if (!node.registered) {
    // HAMi's reason, and what a template needs (a node group scaled from
    // zero has no device plugin to register its cards).
    answer.reason =
        node.gpus_in_capacity
            ? "node unregistered: the template node has nvidia.com/gpu but no HAMi registration "
              "annotation (hami.io/node-nvidia-register) and no --template-registration entry matches "
              "its labels: the cards' memory and cores are unknown until one of them gives them"
            : "node unregistered";
  } else {
    const core::Decision d = scheduler_.place_among(node.cluster, std::vector<size_t>{0}, 1, pod,
                                                    *node.policy, core::Detail::Full);
    if (d.placed()) {
      answer.fits = true;
      answer.allocation = d.allocation;
    } else {
      answer.reason = d.failed.empty() ? std::string("no fit") : d.failed.front().second.format();
    }
  }
  return answer;
}

void TemplateNodes::pack(const std::string& name, const core::PodRequest& pod, const std::string& pod_key,
                         const core::PodAllocation& allocation, Time now) {
  const auto [base, number] = split_name(name);
  if (number < 0) return;  // CA checks the template itself without adding pods to it
  auto family = families_.find(base);
  if (family == families_.end()) return;
  auto it = family->second.nodes.find(number);
  if (it == family->second.nodes.end() || it->second.cluster.size() != 1) return;
  Simulated& node = it->second;
  node.cluster.charge(0, allocation, pod.host);
  core::reserved(*node.policy, node.cluster.view(0), pod, allocation);
  node.pods.insert(pod_key);
  family->second.last_asked = now;
}

}  // namespace gpuslice::serve
