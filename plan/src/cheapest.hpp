// The cheapest fleet that meets the targets (gpuslice plan --price): each
// varied template's count searched on its own, fleets priced per hour.
#pragma once

#include <functional>
#include <vector>

#include "fleet_trials.hpp"
#include "gpuslice/plan/plan.hpp"

namespace gpuslice::plan {

// Fills result.node_prices, .count, .counts, .cost, .points (by cost) and
// .interrupted. Counts range over 0..hi per template, at least lo nodes in
// all. Exact when more nodes of any template never make a fleet miss (the
// count search's assumption too): for each count of the other templates the
// last one's smallest count that meets is bisected, within what the best
// fleet so far costs; --search scan tries every fleet in range instead.
// plan --autoscale (req.autoscale): the counts are the node groups' max,
// each from floors[i] (its min, members, at least 1), and a fleet's cost
// is known only from its runs, so nothing is pruned by cost: for each max of
// the other groups the last one's smallest max that meets is taken, assuming
// (as for counts) that a larger max never makes a fleet miss, and that
// above the smallest max that meets, a larger max never costs less (the
// autoscaler adds the nodes the pods need, not the nodes max allows);
// --search scan tries every combination and assumes neither.
void search_cheapest(const PlanRequest& req, const sim::Scenario& base, const std::vector<Group>& groups,
                     int lo, int hi, PlanResult& result, std::function<bool(double)> should_continue,
                     std::vector<int> floors = {});

// A priced plan in JSON: "prices" (a node of each template, per hour),
// "cost" (the answer's), "cheaper_misses", and each curve row's "cost".
void add_prices(const PlanResult& result, nlohmann::ordered_json& j);
// A priced plan for a person: every fleet tried by cost, the answer and its
// cost, the cheaper fleets that miss and by how much.
std::string priced_text(const PlanResult& result);

}  // namespace gpuslice::plan
