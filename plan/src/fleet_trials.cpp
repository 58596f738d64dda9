#include "fleet_trials.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>

namespace gpuslice::plan {

using nlohmann::ordered_json;

FleetTrials::FleetTrials(const sim::Scenario& base, const RunSpec& spec, std::vector<Group> groups,
                         const std::vector<Target>& targets, std::vector<uint64_t> seeds,
                         std::function<bool(double)> should_continue, double expected_runs,
                         std::vector<double> node_prices, bool node_group_max)
    : base_(base),
      spec_(spec),
      groups_(std::move(groups)),
      targets_(targets),
      seeds_(std::move(seeds)),
      node_prices_(std::move(node_prices)),
      node_group_max_(node_group_max),
      should_continue_(std::move(should_continue)),
      expected_(std::max(1.0, expected_runs)) {}

bool FleetTrials::keep_going(double within_run) {
  if (!should_continue_) return true;
  const double f = std::min(0.99, (static_cast<double>(runs_done_) + within_run) / expected_);
  if (!should_continue_(f)) stop_ = true;
  return !stop_;
}

sim::Scenario FleetTrials::sized(const std::vector<int>& counts) const {
  sim::Scenario scenario = base_;
  if (node_group_max_) {
    for (size_t i = 0; i < groups_.size(); ++i) scenario.node_groups.at(groups_[i].index).max = counts[i];
    return scenario;
  }
  std::vector<size_t> which;
  for (const auto& g : groups_) which.push_back(g.index);
  sim::set_fleet_counts(scenario, which, counts);
  return scenario;
}

namespace {
// A run's cost per hour of simulated time: every node group's node-hours x
// its price_per_hour (unrounded), over the hours simulated.
double run_cost_per_hour(const ordered_json& summary) {
  const double hours = summary.value("simulated_seconds", 0.0) / 3600.0;
  if (!(hours > 0) || !summary.contains("node_groups")) return 0;
  double cost = 0;
  for (const auto& g : summary["node_groups"])
    cost += g.value("node_hours", 0.0) * g.value("price_per_hour", 0.0);
  return cost / hours;
}

// The summary the targets are judged on: the pods set aside counted out.
ordered_json judged_summary(const sim::RunResult& r, const std::set<std::string>& never) {
  if (never.empty()) return r.summary;
  int64_t aside = 0;
  for (const auto& pod : r.pods)
    if (pod.status == "refused" && never.count(pod.name)) ++aside;
  ordered_json s = r.summary;
  for (const char* key : {"pods", "refused", "failed"})
    if (s.contains(key) && s[key].is_number()) s[key] = s[key].get<int64_t>() - aside;
  return s;
}
}  // namespace

std::vector<std::string> FleetTrials::set_aside_never_placeable(const std::vector<int>& top) {
  const sim::Scenario scenario = sized(top);
  RunSpec spec = spec_;
  std::vector<std::string> shown;
  std::set<std::string> named;
  for (uint64_t seed : seeds_) {
    spec.seed = seed;
    sim::RunOptions o = options_for(scenario, spec);
    o.card_use = false;
    const sim::RunResult r = sim::simulate(scenario, o);
    // A NeverFits event marks a pod that fits no node with the fleet empty
    // (or that its namespace's quota refuses with nothing running); an
    // Untranslatable one, a request the policy cannot carry on any node.
    // Events name the pod without its namespace; pods.csv's rows with it.
    std::map<std::string, const sim::EventRecord*> why;
    for (const auto& e : r.events)
      if (e.reason == "NeverFits" || e.reason == "Untranslatable") why.emplace(e.pod, &e);
    for (const auto& pod : r.pods) {
      if (pod.status != "refused") continue;
      const auto it = why.find(pod.name.substr(pod.name.find('/') + 1));
      if (it == why.end()) continue;
      never_[seed].insert(pod.name);
      if (named.insert(pod.name).second)
        shown.push_back(fmt::format("{} ({}: {})", pod.name, it->second->reason, it->second->message));
    }
  }
  return shown;
}

const PlanPoint* FleetTrials::evaluate(const std::vector<int>& counts) {
  if (auto it = tried_.find(counts); it != tried_.end()) return &it->second;
  if (stop_) return nullptr;
  PlanPoint p;
  p.count = std::accumulate(counts.begin(), counts.end(), 0);
  for (size_t i = 0; i < groups_.size(); ++i) {
    p.counts[groups_[i].name.empty() ? fmt::format("fleet[{}]", groups_[i].index) : groups_[i].name] =
        counts[i];
  }
  if (!node_prices_.empty() && !node_group_max_)
    p.cost = std::inner_product(counts.begin(), counts.end(), node_prices_.begin(), 0.0);
  const sim::Scenario scenario = sized(counts);
  RunSpec spec = spec_;
  std::map<std::string, double> worst;
  p.meets = true;
  for (uint64_t seed : seeds_) {
    spec.seed = seed;
    sim::RunOptions o = options_for(scenario, spec);
    if (should_continue_) o.progress = [this](double f) { return keep_going(f); };
    sim::RunResult r = sim::simulate(scenario, o);
    if (r.interrupted || stop_) {
      stop_ = true;
      return nullptr;
    }
    ++runs_done_;
    if (!keep_going(0)) return nullptr;
    const ordered_json judged = judged_summary(r, never_[seed]);
    for (const auto& m : standard_metrics()) {
      const double v = metric(judged, m);
      auto [it, fresh] = worst.emplace(m, v);
      if (!fresh && (std::isnan(v) || v > it->second)) it->second = v;
    }
    for (const auto& tg : targets_) {
      const double v = metric(judged, tg.metric);
      auto [it, fresh] = worst.emplace(tg.text(), v);
      if (!fresh && (std::isnan(v) || (tg.lower_is_better() ? v > it->second : v < it->second)))
        it->second = v;
      if (!tg.met_by(v)) p.meets = false;
    }
    if (node_group_max_) p.cost = std::max(p.cost.value_or(0.0), run_cost_per_hour(r.summary));
    p.summaries.push_back(std::move(r.summary));
  }
  p.metrics = ordered_json::object();
  p.metrics["gpus"] = p.summaries.front().value("gpus", 0);
  for (const auto& m : standard_metrics()) p.metrics[m] = worst[m];
  for (const auto& tg : targets_) {
    if (!p.metrics.contains(tg.metric)) p.metrics[tg.metric] = worst[tg.text()];
    p.target_values[tg.text()] = worst[tg.text()];
  }
  return &tried_.emplace(counts, std::move(p)).first->second;
}

std::vector<PlanPoint> FleetTrials::points() && {
  std::vector<PlanPoint> out;
  for (auto& [counts, p] : tried_) out.push_back(std::move(p));
  return out;
}

}  // namespace gpuslice::plan
