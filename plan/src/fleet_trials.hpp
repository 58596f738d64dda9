// Fleets tried during a plan: the varied templates at given counts, every
// seed simulated, the worst of each metric over the seeds and whether every
// seed meets every target; each fleet tried once. The count search
// (plan_capacity) and the cheapest-fleet search (cheapest.cpp) share it.
#pragma once

#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "gpuslice/plan/plan.hpp"

namespace gpuslice::plan {

// A fleet template whose count a plan varies (plan --autoscale: a node
// group whose max it varies).
struct Group {
  size_t index;  // in the scenario's fleet list (autoscale: its node_groups)
  std::string name;
  int base_count;
};

class FleetTrials {
 public:
  // `expected_runs`: how many simulations the search expects, for the
  // fraction `should_continue` is given. `node_prices`: per group, a node's
  // price per hour (a tried fleet's cost); empty when unpriced.
  // node_group_max (plan --autoscale): counts are the node groups' max, and
  // a fleet's cost is its runs' (the worst seed's), per hour.
  FleetTrials(const sim::Scenario& base, const RunSpec& spec, std::vector<Group> groups,
              const std::vector<Target>& targets, std::vector<uint64_t> seeds,
              std::function<bool(double)> should_continue, double expected_runs,
              std::vector<double> node_prices = {}, bool node_group_max = false);
  // The fleet with counts[i] nodes of groups[i]; nullptr once stopped.
  const PlanPoint* evaluate(const std::vector<int>& counts);
  bool stopped() const { return stop_; }
  // The pods the largest fleet (`top`: every varied template at its most)
  // refuses, per seed: they fit no node of it even empty, so no count of
  // the varied templates places them. From then on every fleet's targets
  // are judged on the other pods (refused, failed and pods less these);
  // the summaries are kept as simulated. Returns "ns/pod (why)", each once.
  std::vector<std::string> set_aside_never_placeable(const std::vector<int>& top);
  // Every fleet tried, in the order of their counts.
  std::vector<PlanPoint> points() &&;

 private:
  bool keep_going(double within_run);
  sim::Scenario sized(const std::vector<int>& counts) const;
  const sim::Scenario& base_;
  const RunSpec& spec_;
  std::vector<Group> groups_;
  const std::vector<Target>& targets_;
  std::vector<uint64_t> seeds_;
  std::vector<double> node_prices_;
  bool node_group_max_ = false;
  std::function<bool(double)> should_continue_;
  double expected_;
  size_t runs_done_ = 0;
  bool stop_ = false;
  std::map<std::vector<int>, PlanPoint> tried_;
  std::map<uint64_t, std::set<std::string>> never_;  // per seed
};

}  // namespace gpuslice::plan
