// HAMi as a dialect unit: its registration annotation is read with each
// Node (registration.cpp), its resource names are the request model's own
// reading of a pod (codec/manifest.cpp), its placed pods are read by
// placed.cpp, its binding is hami.io/vgpu-devices-allocated, and it brings
// the hami, hami-binpack and hami-spread policies (policy.cpp).
#include <algorithm>

#include "dialects/hami/placed.hpp"
#include "gpuslice/core/dialects/dialect.hpp"
#include "gpuslice/core/dialects/hami/allocation_annotation.hpp"
#include "gpuslice/core/dialects/hami/mig_allocations.hpp"
#include "gpuslice/core/dialects/hami/policy.hpp"

namespace gpuslice::core::dialects {

namespace {

class Hami final : public DialectUnit {
 public:
  Dialect id() const override { return Dialect::Hami; }
  std::string_view name() const override { return "hami"; }
  std::string_view registers_by() const override { return "HAMi's hami.io/node-nvidia-register annotation"; }

  // Read with the Node itself (codec::node_document sets `registered`).
  void register_nodes(NodeRegistration&) const override {}

  // HAMi's resources are the request model's own reading of a pod.
  bool names_request(const codec::PodObject&) const override { return false; }
  void read_request(const codec::PodFacts&, PodRequest&) const override {}
  RequestAt request_at() const override { return RequestAt::Containers; }

  std::unique_ptr<PlacedReading> placed_reading(PlacedContext& context) const override {
    return hami_placed_reading(context);
  }

  Binding write_binding(const BindingInput& in) const override {
    Binding b;
    b.allocation = codec::encode_allocation(in.allocation, in.node);
    b.annotations = {{std::string(codec::kAllocatedAnnotation), b.allocation}};
    // HAMi v2.10 PatchAnnotations: the MIG reservations beside the grants.
    if (auto mig = codec::encode_mig_allocations(in.allocation, in.node); !mig.empty())
      b.annotations.emplace_back(std::string(codec::kMigAllocationsAnnotation), std::move(mig));
    return b;
  }

  std::optional<TranslationProblem> translate_request(PodRequest& pod) const override {
    pod.gpu_isolation_provider.clear();
    for (auto* list : {&pod.init_containers, &pod.containers})
      for (ContainerRequest& c : *list) {
        if (!c.wants_devices()) continue;
        if (auto p = translation::bytes_as_mib(c, "nvidia.com/gpumem")) return p;
        if (auto p = translation::fraction_as_percent(c, "nvidia.com/gpumem-percentage")) return p;
        c.cores = std::min(c.cores, 100);  // HAMi clamps gpucores
      }
    return std::nullopt;
  }

  void register_policies() const override { register_hami_policies(); }

  bool counts_slots() const override { return true; }
  bool hami_quotas() const override { return true; }
  std::string serve_problem() const override { return {}; }
};

}  // namespace

const DialectUnit& hami_dialect() {
  static const Hami unit;
  return unit;
}

}  // namespace gpuslice::core::dialects
