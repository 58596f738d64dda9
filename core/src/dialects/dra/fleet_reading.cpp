#include "dialects/dra/fleet_reading.hpp"

#include <fmt/format.h>

#include <unordered_set>

#include "gpuslice/core/dialects/dra/fleet.hpp"

namespace gpuslice::core::dialects {

void register_dra_nodes(NodeRegistration& r) {
  const auto& slices = r.objects.dra.slices;
  if (slices.empty()) return;
  const dra::SliceIndex index(slices);
  for (codec::NodeDocument& n : r.nodes) {
    if (!unregistered(n)) continue;  // HAMi's registration (or another's) comes first
    dra::NodeInfo info{n.node.name, {}};
    for (const auto& [key, value] : n.labels) info.labels.emplace_back(key, value);
    auto cards = dra::cards_from_slices(index, info, r.source, n.line, r.warnings);
    if (cards.empty()) continue;
    n.node.devices = std::move(cards);
    n.node.cards_from = Dialect::Dra;
    n.registered = true;
  }
}

void complete_dra_requests(RequestCompletion& c) {
  std::vector<size_t> with_claims;
  for (size_t i = 0; i < c.docs.size(); ++i)
    if (!c.docs[i].claims.empty()) with_claims.push_back(i);
  if (with_claims.empty()) return;
  const dra::ClaimIndex claims(c.objects.dra);
  std::unordered_set<std::string> counted;  // claims a pod already holds: a shared claim counts once
  for (size_t doc_index : with_claims) {
    codec::PodDocument& doc = c.docs[doc_index];
    const std::string name = doc.request.ns + "/" + doc.request.name;
    if (doc.terminated()) continue;
    dra::ResolvedClaims resolved = claims.resolve(doc.request.ns, doc.claims);
    const auto bound = doc.node_name.empty() ? std::nullopt : c.cluster.find(doc.node_name);
    if (bound) {
      if (!resolved.missing.empty()) {
        c.warnings.push_back(
            fmt::format("{}:{}: pod '{}' names {}, which the dump lacks: its devices are not counted",
                        c.source, doc.line, name, resolved.missing));
        continue;
      }
      std::vector<dra::ResolvedClaim> own;
      for (const auto& claim : resolved.claims)
        if (!claim.allocation || counted.insert(claim.name).second) own.push_back(claim);
      // A spec the request model cannot say: the pod asks what it holds.
      (void)dra::request_from_claims(own, doc.request);
      PodAllocation allocation;
      if (std::string problem =
              dra::held_from_allocations(own, c.cluster.node(*bound), doc.request, allocation);
          !problem.empty()) {
        c.warnings.push_back(fmt::format("{}:{}: pod '{}': {}: its devices are not counted", c.source,
                                         doc.line, name, problem));
        continue;
      }
      doc.claim_held = std::move(allocation);
      continue;
    }
    std::string problem = resolved.missing.empty()
                              ? dra::request_from_claims(resolved.claims, doc.request)
                              : fmt::format("names {}, which the dump lacks", resolved.missing);
    if (!problem.empty()) c.left_out(doc_index, "spec.resourceClaims", std::move(problem));
  }
}

namespace {

class DraPlacedReading final : public PlacedReading {
 public:
  explicit DraPlacedReading(PlacedContext& context) : c_(context) {}
  // After every other dialect: a bound pod none of them claimed.
  bool claims(const codec::PodDocument& doc, std::optional<size_t> bound) const override {
    return bound && doc.claim_held.has_value();
  }
  void read(size_t i) override {
    PlacedPod& p = c_.out[i];
    p.role = PlacedRole::Dra;
    p.allocation = *c_.docs[i].claim_held;
  }

 private:
  PlacedContext& c_;
};

}  // namespace

std::unique_ptr<PlacedReading> dra_placed_reading(PlacedContext& context) {
  return std::make_unique<DraPlacedReading>(context);
}

}  // namespace gpuslice::core::dialects
