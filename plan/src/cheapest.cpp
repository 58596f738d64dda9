#include "cheapest.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "gpuslice/core/errors.hpp"
#include "gpuslice/plan/price.hpp"

namespace gpuslice::plan {

namespace {
using core::InputError;

// Fleets tried in a scan at most: the grid grows as (max + 1) ^ templates.
constexpr double kMaxScan = 20000;

// Cheaper first; then fewer nodes; then the counts in order: one answer
// whatever order the search met them in.
bool cheaper(double cost_a, const std::vector<int>& a, double cost_b, const std::vector<int>& b) {
  constexpr double kSameCost = 1e-9;
  if (std::abs(cost_a - cost_b) > kSameCost * std::max(1.0, std::abs(cost_b))) return cost_a < cost_b;
  const int na = std::accumulate(a.begin(), a.end(), 0), nb = std::accumulate(b.begin(), b.end(), 0);
  if (na != nb) return na < nb;
  return a < b;
}
}  // namespace

void search_cheapest(const PlanRequest& req, const sim::Scenario& base, const std::vector<Group>& groups,
                     int lo, int hi, PlanResult& result, std::function<bool(double)> should_continue,
                     std::vector<int> floors) {
  const bool autoscale = req.autoscale;
  floors.resize(groups.size(), 0);
  // A node's price per template; every price must name some template or its cards.
  std::vector<double> price;
  for (const auto& g : groups) {
    price.push_back(autoscale ? base.node_groups.at(g.index).price_per_hour
                              : node_price(base.fleet_groups.at(g.index), req.prices));
    result.node_prices[g.name] = price.back();
  }
  if (!autoscale) {
    std::vector<const sim::FleetGroup*> fleet;
    for (const auto& g : groups) fleet.push_back(&base.fleet_groups.at(g.index));
    for (std::string& w : ambiguous_price_keys(fleet, req.prices)) result.warnings.push_back(std::move(w));
  }
  for (const auto& p : req.prices) {
    bool used = false;
    for (const auto& g : groups) try {
        used = used || node_price(base.fleet_groups.at(g.index), {p}) > 0;
      } catch (const InputError&) {
      }
    if (!used)
      throw InputError(
          "command line", 0, "--price",
          fmt::format("'{}' names no varied fleet template and none of their cards' models", p.key));
  }
  const size_t k = groups.size();
  double grid = 1;
  for (int f : floors) grid *= static_cast<double>(hi - f + 1);
  if (req.search == "scan" && grid > kMaxScan)
    throw InputError(
        "arguments", 0, "search",
        fmt::format("a scan would try {:.0f} fleets ({} templates, 0..{} each): lower --max, or bisect", grid,
                    k, hi));
  const double log_steps = std::ceil(std::log2(std::max(2, hi + 1))) + 2;
  const double expected =
      static_cast<double>(result.seeds.size()) *
      (req.search == "scan" ? grid : std::pow(hi + 1.0, static_cast<double>(k) - 1) * log_steps);
  FleetTrials trials(base, req.run, groups, req.targets, result.seeds, should_continue, expected, price,
                     autoscale);
  if (hi > 0) result.never_placeable = trials.set_aside_never_placeable(std::vector<int>(groups.size(), hi));
  auto cost_of = [&](const std::vector<int>& counts) {
    double c = 0;
    for (size_t i = 0; i < k; ++i) c += counts[i] * price[i];
    return c;
  };

  std::optional<std::vector<int>> best;
  double best_cost = 0;
  auto consider = [&](const std::vector<int>& counts) {
    // Autoscaled: what the runs cost, not what the counts do.
    const double c = autoscale ? *trials.evaluate(counts)->cost : cost_of(counts);
    if (!best || cheaper(c, counts, best_cost, *best)) {
      best = counts;
      best_cost = c;
    }
  };
  // The other templates' counts, odometer-wise: prefix[0..k-2], each 0..hi.
  std::vector<int> counts = floors;
  while (!trials.stopped()) {
    const int prefix_nodes = std::accumulate(counts.begin(), counts.end() - 1, 0);
    counts.back() = 0;
    const double prefix_cost = cost_of(counts);
    const int first = std::max(floors.back(), lo - prefix_nodes);
    if (req.search == "scan") {
      for (int c = first; c <= hi && !trials.stopped(); ++c) {
        counts.back() = c;
        if (const PlanPoint* p = trials.evaluate(counts); p && p->meets) consider(counts);
      }
    } else if (autoscale || !best || prefix_cost <= best_cost) {
      // The last template's counts a cheaper (or as cheap) fleet can have.
      int last = hi;
      if (best && !autoscale)
        last =
            std::min<int>(hi, static_cast<int>(std::floor((best_cost - prefix_cost) / price.back() + 1e-9)));
      if (first <= last) {
        counts.back() = last;
        const PlanPoint* top = trials.evaluate(counts);
        if (top && top->meets) {
          counts.back() = first;
          const PlanPoint* bottom = trials.evaluate(counts);
          int good = last;
          if (bottom && bottom->meets) {
            good = first;
          } else if (bottom) {
            int bad = first;  // invariant: bad misses, good meets
            while (good - bad > 1 && !trials.stopped()) {
              counts.back() = bad + (good - bad) / 2;
              const PlanPoint* p = trials.evaluate(counts);
              if (!p) break;
              (p->meets ? good : bad) = counts.back();
            }
          }
          if (!trials.stopped() && bottom) {
            counts.back() = good;
            consider(counts);
          }
        }
      }
    }
    // The next prefix.
    size_t i = 0;
    while (i + 1 < k && counts[i] == hi) {
      counts[i] = floors[i];
      ++i;
    }
    if (i + 1 >= k) break;
    ++counts[i];
  }

  result.interrupted = trials.stopped();
  if (best) {
    result.count = std::accumulate(best->begin(), best->end(), 0);
    result.cost = best_cost;
    result.counts = trials.evaluate(*best)->counts;
  }
  result.points = std::move(trials).points();
  std::stable_sort(result.points.begin(), result.points.end(),
                   [](const PlanPoint& a, const PlanPoint& b) { return *a.cost < *b.cost; });
  if (should_continue && !trials.stopped()) should_continue(1.0);
}

std::vector<const PlanPoint*> cheaper_misses(const PlanResult& r, size_t n) {
  std::vector<const PlanPoint*> out;
  for (auto it = r.points.rbegin(); it != r.points.rend() && out.size() < n; ++it)
    if (!it->meets && it->cost && (!r.cost || *it->cost < *r.cost)) out.push_back(&*it);
  return out;
}

std::vector<std::string> misses(const PlanPoint& p, const std::vector<Target>& targets) {
  std::vector<std::string> out;
  for (const auto& t : targets) {
    const auto it = p.target_values.find(t.text());
    const double v = it == p.target_values.end() ? std::nan("") : it->second;
    if (t.met_by(v)) continue;
    if (std::isnan(v)) {
      out.push_back(fmt::format("{} has no value (target {} {})", t.metric, t.op, t.value));
      continue;
    }
    out.push_back(fmt::format("{} {:.4g} (target {} {}, {:.4g} {})", t.metric, v, t.op, t.value,
                              std::abs(v - t.value), t.lower_is_better() ? "over" : "under"));
  }
  return out;
}

namespace {
std::string mix_text(const std::map<std::string, int>& counts) {
  std::vector<std::string> parts;
  for (const auto& [name, n] : counts)
    if (n > 0) parts.push_back(fmt::format("{} x {}", n, name));
  return parts.empty() ? std::string("no nodes") : fmt::format("{}", fmt::join(parts, " + "));
}

// plan --autoscale: each node group's max.
std::string max_text(const std::map<std::string, int>& counts) {
  std::vector<std::string> parts;
  for (const auto& [name, n] : counts) parts.push_back(fmt::format("{} max {}", name, n));
  return fmt::format("{}", fmt::join(parts, ", "));
}

constexpr double kHoursPerDay = 24;
}  // namespace

namespace {
// Money is shown in cents everywhere (the text's {:.2f} and the JSON alike);
// the search itself compares the exact costs.
double cents(double money) { return std::round(money * 100) / 100; }
}  // namespace

void add_prices(const PlanResult& r, nlohmann::ordered_json& j) {
  nlohmann::ordered_json prices = nlohmann::ordered_json::object();
  for (const auto& [name, price] : r.node_prices) prices[name] = cents(price);
  j["prices"] = prices;
  j["cost"] = r.cost ? nlohmann::ordered_json(cents(*r.cost)) : nlohmann::ordered_json(nullptr);
  auto& curve = j["curve"];
  for (size_t i = 0; i < r.points.size() && i < curve.size(); ++i)
    curve[i]["cost"] = cents(*r.points[i].cost);
  nlohmann::ordered_json cheaper = nlohmann::ordered_json::array();
  for (const PlanPoint* p : cheaper_misses(r, 3)) {
    cheaper.push_back({{"counts", p->counts}, {"cost", cents(*p->cost)}, {"misses", misses(*p, r.targets)}});
    if (r.autoscale) cheaper.back()["cost_per_day"] = cents(*p->cost * kHoursPerDay);
  }
  j["cheaper_misses"] = cheaper;
  if (!r.autoscale) return;
  // Autoscaled: counts are each group's max, prices a node's, costs the runs'.
  j["autoscale"] = true;
  j["cost_per_day"] =
      r.cost ? nlohmann::ordered_json(cents(*r.cost * kHoursPerDay)) : nlohmann::ordered_json(nullptr);
  // j["curve"] again: adding keys to an ordered_json moved its entries.
  for (size_t i = 0; i < r.points.size() && i < j["curve"].size(); ++i)
    j["curve"][i]["cost_per_day"] = cents(*r.points[i].cost * kHoursPerDay);
}

namespace {
// plan --autoscale for a person: each group's max tried, its cost per day and hour.
std::string autoscale_text(const PlanResult& r) {
  std::vector<std::string> targets, prices;
  for (const auto& t : r.targets) targets.push_back(t.text());
  for (const auto& [name, price] : r.node_prices) prices.push_back(fmt::format("{} {:.2f}/h", name, price));
  std::string out = fmt::format(
      "plan {} --autoscale  policy {}  targets {}  seeds {}\n  a node costs: {}\n"
      "  cost per day: the run's node-hours x price_per_hour of every group, over its simulated hours, x 24 "
      "(the worst seed's)\n",
      r.scenario, r.policy, fmt::join(targets, ", "), fmt::join(r.seeds, ","), fmt::join(prices, ", "));
  size_t width = 12;
  for (const auto& p : r.points) width = std::max(width, max_text(p.counts).size());
  out += fmt::format("  {:<{}} {:>10} {:>10} {:>5} {:>10} {:>10} {:>10}\n", "node groups", width, "cost/day",
                     "cost/h", "meets", "p95_pend_s", "refused%", "failed%");
  for (const auto& p : r.points) {
    auto get = [&](const char* k) {
      return p.metrics.contains(k) && p.metrics[k].is_number() ? p.metrics[k].get<double>() : std::nan("");
    };
    out += fmt::format("  {:<{}} {:>10.2f} {:>10.2f} {:>5} {:>10.1f} {:>10.2f} {:>10.2f}\n",
                       max_text(p.counts), width, *p.cost * kHoursPerDay, *p.cost, p.meets ? "yes" : "no",
                       get("p95_pending_s"), get("refused_pct"), get("failed_pct"));
  }
  if (r.interrupted) out += "  interrupted\n";
  if (r.cost)
    out += fmt::format(
        "answer: {}, {:.2f} per day ({:.2f} per hour): the cheapest max in range that meets the targets\n",
        max_text(r.counts), *r.cost * kHoursPerDay, *r.cost);
  else
    out += fmt::format("answer: no max of up to {} per group meets the targets\n", r.max_count);
  const auto cheaper = cheaper_misses(r, 3);
  if (!cheaper.empty()) out += r.cost ? "cheaper that miss:\n" : "closest tried:\n";
  for (const PlanPoint* p : cheaper)
    out += fmt::format("  {}, {:.2f}/day: {}\n", max_text(p->counts), *p->cost * kHoursPerDay,
                       fmt::join(misses(*p, r.targets), "; "));
  return out;
}

}  // namespace

std::string priced_text(const PlanResult& r) {
  if (r.autoscale) return autoscale_text(r);
  std::vector<std::string> targets, prices;
  for (const auto& t : r.targets) targets.push_back(t.text());
  for (const auto& [name, price] : r.node_prices) prices.push_back(fmt::format("{} {:.2f}/h", name, price));
  std::string out =
      fmt::format("plan {}  policy {}  targets {}  seeds {}\n  a node costs: {}\n", r.scenario, r.policy,
                  fmt::join(targets, ", "), fmt::join(r.seeds, ","), fmt::join(prices, ", "));
  size_t width = 12;
  for (const auto& p : r.points) width = std::max(width, mix_text(p.counts).size());
  out += fmt::format("  {:<{}} {:>10} {:>6} {:>5} {:>10} {:>10} {:>10}\n", "fleet", width, "cost/h", "gpus",
                     "meets", "p95_pend_s", "refused%", "failed%");
  for (const auto& p : r.points) {
    auto get = [&](const char* k) {
      return p.metrics.contains(k) && p.metrics[k].is_number() ? p.metrics[k].get<double>() : std::nan("");
    };
    out += fmt::format("  {:<{}} {:>10.2f} {:>6} {:>5} {:>10.1f} {:>10.2f} {:>10.2f}\n", mix_text(p.counts),
                       width, *p.cost, p.metrics.value("gpus", 0), p.meets ? "yes" : "no",
                       get("p95_pending_s"), get("refused_pct"), get("failed_pct"));
  }
  if (r.interrupted) out += "  interrupted\n";
  if (r.cost)
    out += fmt::format(
        "answer: {} ({} nodes), {:.2f} per hour: the cheapest fleet in range that meets the targets\n",
        mix_text(r.counts), *r.count, *r.cost);
  else
    out +=
        fmt::format("answer: no fleet of 0 to {} nodes per template ({} or more in all) meets the targets\n",
                    r.max_count, r.min_count);
  const auto cheaper = cheaper_misses(r, 3);
  if (!cheaper.empty()) out += r.cost ? "cheaper fleets that miss:\n" : "closest tried:\n";
  for (const PlanPoint* p : cheaper)
    out += fmt::format("  {}, {:.2f}/h: {}\n", mix_text(p->counts), *p->cost,
                       fmt::join(misses(*p, r.targets), "; "));
  return out;
}

}  // namespace gpuslice::plan
