// Prices for planning in money (gpuslice plan --price MODEL=COST): a cost
// per hour for a node of a fleet template (by its name), or for a card of a
// GPU model (a node then costs the sum of its cards).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "gpuslice/sim/fleet.hpp"

namespace gpuslice::plan {

struct Price {
  std::string key;  // a template's name, or a card model ("A100", "Tesla T4", "NVIDIA A100-SXM4-40GB")
  double per_hour = 0;
};

// "A100=3.20": a positive, finite cost. Throws InputError naming --price.
Price parse_price(std::string_view text);

// What a node of the group costs per hour: the price given for its template's
// name, else the sum over its cards of the price of their model. A key names
// a model when its words (split at spaces, '-' and '_', case aside) appear in
// the model's in a row: "A100" is "NVIDIA A100-SXM4-40GB"'s, "L4" is not
// "NVIDIA L40S"'s; where several keys do, the one of most words. Throws
// InputError when no price covers the group, or two cover it alike.
double node_price(const sim::FleetGroup& group, const std::vector<Price>& prices);

// One warning per key that names a group's template and also its (or
// another group's) card model: node_price takes the template, pricing its
// node as a whole; the warning says so and how to price the cards instead.
std::vector<std::string> ambiguous_price_keys(const std::vector<const sim::FleetGroup*>& groups,
                                              const std::vector<Price>& prices);

}  // namespace gpuslice::plan
