// Kubernetes' Dynamic Resource Allocation (resource.k8s.io/v1) as a dialect
// unit, over the GPUs HAMi-DRA publishes: its nodes' cards come from the
// dump's ResourceSlices, its pods ask and hold through ResourceClaims and
// templates printed after them (fleet_reading.cpp), a binding is the
// claim's allocation result (fleet.cpp), and it brings `--policy dra`
// (policy.cpp), which places HAMi's requests as kube-scheduler's default
// profile and the structured allocator would: that policy's dialect() is
// HAMi's (`place --policy dra` writes HAMi's annotations), so this unit is
// the fleet's reading, not the policy's. It is last in the registry: a DRA
// card is only for a node no other registration gave cards.
#include "dialects/dra/fleet_reading.hpp"
#include "gpuslice/core/dialects/dialect.hpp"
#include "gpuslice/core/dialects/dra/fleet.hpp"

namespace gpuslice::core::dra {
void register_dra_policies();  // policy.cpp
}

namespace gpuslice::core::dialects {

namespace {

class Dra final : public DialectUnit {
 public:
  Dialect id() const override { return Dialect::Dra; }
  std::string_view name() const override { return "dra"; }
  std::string_view registers_by() const override { return "HAMi-DRA's ResourceSlices"; }

  void register_nodes(NodeRegistration& r) const override { register_dra_nodes(r); }

  // A DRA pod asks through its claims, read once the dump is (complete_requests):
  // no field of the pod itself replaces HAMi's reading.
  bool names_request(const codec::PodObject& /*pod*/) const override { return false; }
  void read_request(const codec::PodFacts& /*facts*/, PodRequest& /*request*/) const override {}
  RequestAt request_at() const override { return RequestAt::Containers; }
  void complete_requests(RequestCompletion& completion) const override { complete_dra_requests(completion); }

  std::unique_ptr<PlacedReading> placed_reading(PlacedContext& context) const override {
    return dra_placed_reading(context);
  }

  // The claim's status.allocation, as the DynamicResources plugin writes it.
  Binding write_binding(const BindingInput& in) const override {
    Binding out;
    out.allocation = dra::allocation_result_json(in.node, in.allocation);
    out.enforcement =
        "the DRA driver prepares the allocated devices for the pod (HAMi-DRA caps memory and cores)";
    return out;
  }

  // `dra` places HAMi's requests (HAMi-DRA's webhook turns them into claims).
  std::optional<TranslationProblem> translate_request(PodRequest& pod) const override {
    return unit(Dialect::Hami).translate_request(pod);
  }

  void register_policies() const override { dra::register_dra_policies(); }

  bool counts_slots() const override { return false; }  // a shared device takes any number of claims
  bool hami_quotas() const override { return false; }   // HAMi's quota plugin does not see claims
  std::string serve_problem() const override {
    return "kube-scheduler's DynamicResources plugin allocates ResourceClaims and writes their status; no "
           "extender binds them, and serve reads neither ResourceSlices nor claims (use gpuslice simulate, "
           "plan or defrag --snapshot for DRA)";
  }
};

}  // namespace

const DialectUnit& dra_dialect() {
  static const Dra unit;
  return unit;
}

}  // namespace gpuslice::core::dialects
