// Koordinator's DeviceShare as a dialect unit: its nodes' cards come from
// Device objects (scheduling.koordinator.sh/v1alpha1), its pods ask
// koordinator.sh/gpu-* resources, its placed pods hold what
// scheduling.koordinator.sh/device-allocated says, and its binding writes
// that annotation (codec.cpp); the koordinator* policies (policy.cpp).
#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "gpuslice/core/dialects/dialect.hpp"
#include "gpuslice/core/dialects/koordinator/codec.hpp"
#include "gpuslice/core/dialects/koordinator/policy.hpp"
#include "gpuslice/core/errors.hpp"

namespace gpuslice::core::dialects {

namespace {

constexpr int64_t kMiB = int64_t{1} << 20;

// A bound pod with DeviceShare's annotation holds what it says.
class KoordinatorPlacedReading final : public PlacedReading {
 public:
  explicit KoordinatorPlacedReading(PlacedContext& c) : c_(c) {}

  bool claims(const codec::PodDocument& doc, std::optional<size_t> bound) const override {
    return bound && !doc.koordinator_allocated.empty();
  }

  void read(size_t i) override {
    PlacedPod& p = c_.out[i];
    const codec::PodDocument& doc = c_.docs[p.doc];
    const std::string name = doc.request.ns + "/" + doc.request.name;
    const int line = doc.koordinator_allocated_line ? doc.koordinator_allocated_line : doc.line;
    std::vector<codec::KoordinatorGrantText> grants;
    try {
      grants = codec::decode_device_allocated(doc.koordinator_allocated);
    } catch (const CodecError& e) {
      throw InputError(c_.source, line, fmt::format("metadata.annotations.{}", codec::kKoordDeviceAllocated),
                       fmt::format("pod '{}': {}", name, e.what()));
    }
    const Node& node = c_.cluster.node(p.node);
    std::vector<std::string> dropped;
    const size_t device = std::min(doc.request.first_device_index(), doc.request.container_count() - 1);
    p.allocation = codec::resolve_device_allocated(grants, node, doc.request.container_count(),
                                                   doc.request.init_containers.size(), device, dropped);
    for (const auto& d : dropped)
      c_.warnings.push_back(fmt::format("{}:{}: pod '{}': {}", c_.source, line, name, d));
    p.role = PlacedRole::Koordinator;
  }

 private:
  PlacedContext& c_;
};

class Koordinator final : public DialectUnit {
 public:
  Dialect id() const override { return Dialect::Koordinator; }
  std::string_view name() const override { return "koordinator"; }
  std::string_view registers_by() const override { return "Koordinator's Device objects"; }

  void register_nodes(NodeRegistration& r) const override {
    if (r.objects.devices.empty()) return;
    std::map<std::string_view, codec::NodeDocument*> by_name;
    for (codec::NodeDocument& n : r.nodes) by_name.emplace(n.node.name, &n);
    for (const codec::DeviceDocument& d : r.objects.devices) {
      const auto it = by_name.find(d.cr.name);
      if (it == by_name.end()) {
        r.warnings.push_back(fmt::format("{}:{}: Device '{}' names no Node in the list: not counted",
                                         r.source, d.line, d.cr.name));
        continue;
      }
      codec::NodeDocument& node = *it->second;
      if (node.registered) continue;  // HAMi's registration is read first
      try {
        codec::apply_koordinator_device_cr(node.node, node.labels, d.cr, r.warnings);
      } catch (const CodecError& e) {
        throw InputError(r.source, d.line, "spec.devices", e.what());
      }
      node.node.cards_from = Dialect::Koordinator;
    }
  }

  // Only a pod that names a koordinator.sh/gpu* resource pays for its facts.
  bool names_request(const codec::PodObject& obj) const override {
    for (const auto* list : {&obj.init_containers, &obj.containers})
      for (const codec::ContainerObject& c : *list)
        for (const codec::StringMap* m : {&c.requests, &c.limits})
          for (const codec::Entry& e : m->entries)
            if (codec::is_koordinator_gpu_resource(e.key)) return true;
    return false;
  }

  void read_request(const codec::PodFacts& facts, PodRequest& p) const override {
    std::optional<ContainerRequest> r = codec::decode_koordinator_request(facts);
    if (!r) return;
    // The pod-level request goes on the first container naming a GPU resource.
    const auto names_gpu = [](const codec::TextMap& m) {
      return std::any_of(m.begin(), m.end(), [](const auto& kv) {
        return codec::is_koordinator_gpu_resource(kv.first) || kv.first == "nvidia.com/gpu";
      });
    };
    const size_t inits = facts.init_containers.size();
    size_t at = 0;
    for (size_t i = 0; i < inits + facts.containers.size(); ++i) {
      const codec::ContainerResources& c = i < inits ? facts.init_containers[i] : facts.containers[i - inits];
      if (names_gpu(c.requests) || names_gpu(c.limits)) {
        at = i;
        break;
      }
    }
    for (auto* list : {&p.init_containers, &p.containers})
      for (ContainerRequest& c : *list) {
        c.count = 0;
        c.memory_mib = 0;
        c.memory_percent = kMemoryPercentUnset;
        c.cores = 0;
      }
    ContainerRequest& target = at < inits ? p.init_containers[at] : p.containers[at - inits];
    r->name = target.name;
    r->priority = target.priority;
    target = *r;
  }
  RequestAt request_at() const override { return RequestAt::Containers; }

  std::unique_ptr<PlacedReading> placed_reading(PlacedContext& context) const override {
    return std::make_unique<KoordinatorPlacedReading>(context);
  }

  Binding write_binding(const BindingInput& in) const override {
    Binding b;
    if (in.allocation.empty()) return b;
    b.allocation = codec::encode_device_allocated(in.allocation, in.node);
    b.annotations = {{std::string(codec::kKoordDeviceAllocated), b.allocation}};
    b.enforcement = in.pod.gpu_isolation_provider == "HAMi-core"
                        ? "HAMi-core caps the container's memory and compute "
                          "(koordinator.sh/gpu-isolation-provider: HAMi-core)"
                        : "no isolation: Koordinator caps shares only with "
                          "koordinator.sh/gpu-isolation-provider: HAMi-core";
    return b;
  }

  std::optional<TranslationProblem> translate_request(PodRequest& pod) const override {
    if (auto p = translation::hami_only_annotations(pod, id())) return p;
    if (auto p = translation::one_device_container(pod, id())) return p;
    for (auto* list : {&pod.init_containers, &pod.containers})
      for (ContainerRequest& c : *list) {
        if (!c.wants_devices()) continue;
        if (auto p = in_koordinator_terms(c)) return p;
      }
    return std::nullopt;
  }

  void register_policies() const override { register_koordinator_policies(); }

  bool counts_slots() const override { return false; }
  bool hami_quotas() const override { return false; }
  std::string serve_problem() const override {
    return "serve reads HAMi's node registrations and writes HAMi's annotations; Koordinator's Device "
           "objects are not listed and scheduling.koordinator.sh/device-allocated is not written "
           "(use gpuslice place or simulate for Koordinator)";
  }

 private:
  static std::optional<TranslationProblem> in_koordinator_terms(ContainerRequest& c) {
    if (auto p = translation::fraction_as_percent(c, "koordinator.sh/gpu-memory-ratio")) return p;
    if (c.memory_mib > 0) {  // HAMi reads MiB before a percentage
      c.memory_bytes = c.memory_mib * kMiB;
      c.memory_mib = 0;
      c.memory_percent = kMemoryPercentUnset;
    }
    if (c.memory_percent == kMemoryPercentUnset && c.memory_bytes == 0)
      return TranslationProblem{"koordinator.sh/gpu-core",
                                "a core share without memory is not a valid Koordinator request "
                                "(invalid resource device requests)"};
    return std::nullopt;
  }
};

}  // namespace

const DialectUnit& koordinator_dialect() {
  static const Koordinator unit;
  return unit;
}

}  // namespace gpuslice::core::dialects
