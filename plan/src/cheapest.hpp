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
void search_cheapest(const PlanRequest& req, const sim::Scenario& base, const std::vector<Group>& groups,
                     int lo, int hi, PlanResult& result, std::function<bool(double)> should_continue);

// A priced plan in JSON: "prices" (a node of each template, per hour),
// "cost" (the answer's), "cheaper_misses", and each curve row's "cost".
void add_prices(const PlanResult& result, nlohmann::ordered_json& j);
// A priced plan for a person: every fleet tried by cost, the answer and its
// cost, the cheaper fleets that miss and by how much.
std::string priced_text(const PlanResult& result);

}  // namespace gpuslice::plan
