// NVIDIA's KAI scheduler as a dialect unit: its nodes' cards come from GPU
// feature discovery's labels, its pods ask a share by annotation
// (gpu-fraction, gpu-memory), its placed pods hold their GPU groups' cards
// (runai-gpu-group labels and reservation pods, placed.cpp), its binding
// writes the group label, received-resource-type and a reservation pod per
// new group (codec.cpp); the kai-binpack and kai-spread policies (policy.cpp).
#include <fmt/format.h>

#include "dialects/kai/placed.hpp"
#include "gpuslice/core/dialects/dialect.hpp"
#include "gpuslice/core/dialects/kai/codec.hpp"
#include "gpuslice/core/dialects/kai/policy.hpp"
#include "gpuslice/core/errors.hpp"

namespace gpuslice::core::dialects {

namespace {

class Kai final : public DialectUnit {
 public:
  Dialect id() const override { return Dialect::Kai; }
  std::string_view name() const override { return "kai"; }
  std::string_view registers_by() const override { return "KAI's GPU labels (nvidia.com/gpu.memory)"; }

  // KAI reads a node's GPUs from GPU feature discovery's labels; without
  // its memory label the node keeps no cards.
  void register_nodes(NodeRegistration& r) const override {
    for (codec::NodeDocument& n : r.nodes) {
      if (!unregistered(n) || !n.labels.contains(codec::kGfdGpuMemory)) continue;
      try {
        if (codec::apply_kai_gpu_labels(n.node, n.labels, n.allocatable_gpus))
          n.node.cards_from = Dialect::Kai;
      } catch (const CodecError& e) {
        throw InputError(r.source, n.line, "metadata.labels", e.what());
      }
    }
  }

  bool names_request(const codec::PodObject& obj) const override {
    const auto& entries = obj.header.meta.annotations.entries;
    return std::any_of(entries.begin(), entries.end(),
                       [](const codec::Entry& e) { return codec::is_kai_share_annotation(e.key); });
  }

  void read_request(const codec::PodFacts& facts, PodRequest& p) const override {
    const codec::KaiShare share = codec::decode_kai_share(facts);
    ContainerRequest* target = &p.containers.front();
    if (!share.container.empty())
      for (auto* list : {&p.init_containers, &p.containers})
        for (ContainerRequest& c : *list)
          if (c.name == share.container) target = &c;
    target->count = share.count;
    target->memory_mib = share.memory_mib;
    target->memory_fraction = share.fraction;
    target->memory_percent = kMemoryPercentUnset;
    target->cores = 0;
  }
  RequestAt request_at() const override { return RequestAt::Annotations; }

  std::unique_ptr<PlacedReading> placed_reading(PlacedContext& context) const override {
    return kai_placed_reading(context);
  }

  Binding write_binding(const BindingInput& in) const override {
    Binding out;
    const auto b = codec::kai_binding(in.node, in.pod, in.allocation, in.gpu_groups);
    if (b.received_type.empty()) return out;
    out.labels = b.labels;
    out.annotations = {{std::string(codec::kKaiReceivedType), b.received_type}};
    out.reservation_pods = b.reservation_pods;
    out.enforcement = "KAI enforces nothing by default: no memory cap, the pods time-slice the GPU";
    return out;
  }

  std::optional<TranslationProblem> translate_request(PodRequest& pod) const override {
    if (auto p = translation::hami_only_annotations(pod, id())) return p;
    if (auto p = translation::one_device_container(pod, id())) return p;
    pod.gpu_isolation_provider.clear();
    for (auto* list : {&pod.init_containers, &pod.containers})
      for (ContainerRequest& c : *list) {
        if (!c.wants_devices()) continue;
        if (auto p = translation::bytes_as_mib(c, "KAI's gpu-memory")) return p;
        if (c.memory_mib > 0) {
          c.memory_percent = kMemoryPercentUnset;
        } else if (c.memory_fraction == 0 && c.memory_percent != kMemoryPercentUnset) {
          // A whole card with all its compute is a whole GPU (nvidia.com/gpu);
          // any other share of memory is a fraction.
          if (!(c.memory_percent >= 100 && c.cores >= 100)) c.memory_fraction = c.memory_percent / 100.0;
          c.memory_percent = kMemoryPercentUnset;
        }
        c.cores = c.memory_fraction > 0 || c.memory_mib > 0 ? 0 : 100;  // no compute share: time-slicing
      }
    return std::nullopt;
  }

  void register_policies() const override { register_kai_policies(); }

  bool counts_slots() const override { return false; }
  bool hami_quotas() const override { return false; }
  std::string serve_problem() const override {
    return "serve reads HAMi's node registrations and writes HAMi's annotations; KAI's GPU labels, GPU "
           "groups and reservation pods are neither read nor written (use gpuslice place or simulate for "
           "KAI)";
  }
};

}  // namespace

const DialectUnit& kai_dialect() {
  static const Kai unit;
  return unit;
}

}  // namespace gpuslice::core::dialects
