#include "gpuslice/plan/plan.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>

#include "cheapest.hpp"
#include "fleet_trials.hpp"
#include "gpuslice/core/codec/resource_quota.hpp"
#include "gpuslice/core/codec/text_file.hpp"
#include "gpuslice/core/codec/yaml_documents.hpp"
#include "gpuslice/core/errors.hpp"
#include "gpuslice/core/gpu_policy.hpp"
#include "gpuslice/core/policy.hpp"
#include "gpuslice/sim/headline.hpp"
#include "gpuslice/sim/memory_estimate.hpp"
#include "gpuslice/sim/openb.hpp"

namespace gpuslice::plan {

using core::InputError;
using nlohmann::json;
using nlohmann::ordered_json;

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

struct ResolvedText {
  std::string text, source, base_dir;
};

ResolvedText resolve_text(const ScenarioSource& s) {
  if (s.text) return {*s.text, s.source, s.base_dir};
  return {core::codec::read_text_file(s.path), s.path, std::filesystem::path(s.path).parent_path().string()};
}

YAML::Node to_yaml(const json& j) {
  switch (j.type()) {
    case json::value_t::null:
      return YAML::Node(YAML::NodeType::Null);
    case json::value_t::boolean:
      return YAML::Node(j.get<bool>());
    case json::value_t::number_integer:
      return YAML::Node(j.get<int64_t>());
    case json::value_t::number_unsigned:
      return YAML::Node(j.get<uint64_t>());
    case json::value_t::number_float:
      return YAML::Node(j.get<double>());
    case json::value_t::string:
      return YAML::Node(j.get<std::string>());
    case json::value_t::array: {
      YAML::Node n(YAML::NodeType::Sequence);
      for (const auto& v : j) n.push_back(to_yaml(v));
      return n;
    }
    case json::value_t::object: {
      YAML::Node n(YAML::NodeType::Map);
      for (auto it = j.begin(); it != j.end(); ++it) n[it.key()] = to_yaml(it.value());
      return n;
    }
    default:
      return YAML::Node(YAML::NodeType::Null);
  }
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : s) {
    if (c == sep) {
      out.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  out.push_back(cur);
  return out;
}

// Handles are passed by value: yaml-cpp's assignment between handles would
// overwrite the node instead of rebinding, so the walk recurses.
void set_path(YAML::Node node, const std::vector<std::string>& segs, size_t i, const YAML::Node& value,
              const std::string& source, const std::string& path) {
  const std::string& k = segs[i];
  const bool last = i + 1 == segs.size();
  if (k.empty()) throw InputError(source, 0, path, "empty segment in override path");
  if (node.IsSequence()) {
    size_t idx = 0;
    const auto [p, ec] = std::from_chars(k.data(), k.data() + k.size(), idx);
    if (ec != std::errc() || p != k.data() + k.size() || idx >= node.size())
      throw InputError(source, 0, path,
                       fmt::format("'{}' is not an index of a list of {} items", k, node.size()));
    if (last)
      node[idx] = value;
    else
      set_path(node[idx], segs, i + 1, value, source, path);
    return;
  }
  if (!node.IsMap() && !node.IsNull())
    throw InputError(source, 0, path, fmt::format("cannot set '{}' inside a scalar", k));
  if (last) {
    node[k] = value;
    return;
  }
  if (!node[k] || node[k].IsNull()) node[k] = YAML::Node(YAML::NodeType::Map);
  set_path(node[k], segs, i + 1, value, source, path);
}

// Through the guarded reader (runaway streams, duplicate keys), as every
// front end reads YAML.
YAML::Node load_yaml(const std::string& text, const std::string& source) {
  return core::codec::load_yaml_document(text, source);
}

bool is_openb(const ScenarioSource& s) { return !s.openb_nodes.empty() || !s.openb_pods.empty(); }

}  // namespace

std::string apply_overrides(const std::string& yaml_text, const json& overrides, const std::string& source) {
  if (overrides.is_null() || overrides.empty()) return yaml_text;
  if (!overrides.is_object()) throw InputError(source, 0, "overrides", "must map dotted paths to values");
  YAML::Node root = load_yaml(yaml_text, source);
  if (!root.IsMap()) throw InputError(source, 1, "", "a scenario must be a mapping");
  for (auto it = overrides.begin(); it != overrides.end(); ++it)
    set_path(root, split(it.key(), '.'), 0, to_yaml(it.value()), source, it.key());
  YAML::Emitter out;
  out << root;
  if (!out.good()) throw InputError(source, 0, "overrides", out.GetLastError());
  std::string text;
  // Keep the description line (the comment at the top).
  if (yaml_text.rfind("#", 0) == 0) text = yaml_text.substr(0, yaml_text.find('\n')) + "\n";
  return text + out.c_str() + "\n";
}

namespace {
sim::Scenario load_source(const RunSpec& spec);
}  // namespace

sim::Scenario load(const RunSpec& spec) {
  sim::Scenario scenario = load_source(spec);
  if (!spec.scenario.quotas_path.empty()) {
    std::vector<std::string> warnings;
    for (auto& q : core::codec::read_resource_quota_file(spec.scenario.quotas_path, &warnings))
      scenario.quotas.push_back(std::move(q));
  }
  return scenario;
}

namespace {
sim::Scenario load_source(const RunSpec& spec) {
  const ScenarioSource& s = spec.scenario;
  if (s.snapshot) {
    if (is_openb(s) || s.text || (!s.overrides.is_null() && !s.overrides.empty()))
      throw InputError("arguments", 0, "snapshot",
                       "a snapshot run takes its pods from the snapshot and a pods file, not from these");
    sim::SnapshotRunSpec snap = *s.snapshot;
    if (!s.path.empty()) snap.pods = s.path;  // the scenario's pod source; the snapshot gives the fleet
    return sim::snapshot_scenario(snap);
  }
  if (is_openb(s)) {
    if (!s.path.empty() || s.text)
      throw InputError("arguments", 0, "openb_nodes", "give a scenario or an openb replay, not both");
    if (s.openb_nodes.empty() || s.openb_pods.empty())
      throw InputError("arguments", 0, s.openb_nodes.empty() ? "openb_nodes" : "openb_pods",
                       "an openb replay needs both openb_nodes and openb_pods");
    if (std::string problem = sim::tune_problem(s.tune); !problem.empty())
      throw InputError("arguments", 0, "tune", problem);
    if (!s.overrides.is_null() && !s.overrides.empty())
      throw InputError("arguments", 0, "overrides", "overrides apply to scenario files, not openb replays");
    sim::OpenbOptions o;
    o.tune = s.tune;
    o.seed = spec.seed.value_or(42);
    sim::Scenario sc = sim::openb_scenario(s.openb_nodes, s.openb_pods, o);
    sc.policy = "hami-binpack";
    return sc;
  }
  if (s.path.empty() && !s.text)
    throw InputError("arguments", 0, "scenario", "give a scenario, or openb_nodes and openb_pods");
  const ResolvedText t = resolve_text(s);
  json overrides = s.overrides.is_null() ? json::object() : s.overrides;
  if (s.scenario_tune) {
    if (std::string problem = sim::tune_problem(*s.scenario_tune); !problem.empty())
      throw InputError("arguments", 0, "tune", problem);
    const YAML::Node root = load_yaml(t.text, t.source);
    if (!root.IsMap() || !root["openb_pods"] || !root["openb_pods"].IsMap())
      throw InputError(t.source, 0, "tune", "tune applies to openb replays (openb_pods: {file: ...})");
    overrides["openb_pods.tune"] = *s.scenario_tune;
  }
  return sim::parse_scenario(apply_overrides(t.text, overrides, t.source), t.source, t.base_dir);
}
}  // namespace

sim::RunOptions options_for(const sim::Scenario& scenario, const RunSpec& spec) {
  sim::RunOptions options;
  options.policy = spec.policy && !spec.policy->empty() ? *spec.policy : scenario.policy;
  if (std::string problem = core::policy_name_problem(options.policy); !problem.empty())
    throw InputError("arguments", 0, "policy", problem);
  options.gpu_policy = spec.gpu_policy ? *spec.gpu_policy : scenario.gpu_policy;
  if (std::string problem = core::gpu_policy_problem(options.gpu_policy); !problem.empty())
    throw InputError("arguments", 0, "gpu_policy", problem);
  options.seed = spec.seed.value_or(scenario.seed);
  options.queue = scenario.queue;
  if (spec.queue && !spec.queue->empty()) {
    auto q = sim::parse_queue(*spec.queue);
    if (!q)
      throw InputError("arguments", 0, "queue", fmt::format("'{}': use fifo or skip-ahead", *spec.queue));
    options.queue = *q;
  }
  return options;
}

sim::RunResult run(const RunSpec& spec, std::function<bool(double)> progress) {
  const sim::Scenario scenario = load(spec);
  sim::RunOptions options = options_for(scenario, spec);
  options.progress = std::move(progress);
  return sim::simulate(scenario, options);
}

// ---------------------------------------------------------------- targets

bool Target::met_by(double v) const {
  if (std::isnan(v)) return false;
  if (op == "<=") return v <= value;
  if (op == "<") return v < value;
  if (op == ">=") return v >= value;
  return v > value;
}

std::string Target::text() const { return fmt::format("{}{}{}", metric, op, value); }

Target parse_target(std::string_view text) {
  std::string s;
  for (char c : text)
    if (c != ' ' && c != '\t') s += c;
  for (const char* op : {"<=", ">=", "<", ">"}) {
    const auto pos = s.find(op);
    if (pos == std::string::npos) continue;
    Target t;
    t.metric = s.substr(0, pos);
    t.op = op;
    const std::string v = s.substr(pos + std::string_view(op).size());
    double value = 0;
    const auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), value);
    if (t.metric.empty() || v.empty() || ec != std::errc() || p != v.data() + v.size() ||
        !std::isfinite(value))
      throw InputError("arguments", 0, "target",
                       fmt::format("'{}': write METRIC<=VALUE, e.g. p95_pending_s<=60", text));
    t.value = value;
    const auto std_metrics = standard_metrics();
    if (std::find(std_metrics.begin(), std_metrics.end(), t.metric) == std_metrics.end() &&
        t.metric.find('_') == std::string::npos && t.metric.find('.') == std::string::npos)
      throw InputError("arguments", 0, "target",
                       fmt::format("unknown metric '{}' (known: {}, or a summary.json field such as "
                                   "final_alloc_gpu_pct)",
                                   t.metric, fmt::join(std_metrics, ", ")));
    return t;
  }
  throw InputError("arguments", 0, "target",
                   fmt::format("'{}': write METRIC<=VALUE (or <, >=, >), e.g. refused_pct<=1", text));
}

std::vector<std::string> standard_metrics() {
  return {"p50_pending_s", "p95_pending_s", "p99_pending_s",     "max_pending_s",
          "refused_pct",   "failed_pct",    "pending_at_end_pct"};
}

double metric(const ordered_json& s, const std::string& name) {
  // The standard metrics are headline figures, read as report.html and
  // `gpuslice compare` read them.
  const auto std_metrics = standard_metrics();
  if (std::find(std_metrics.begin(), std_metrics.end(), name) != std_metrics.end())
    return sim::headline_value(s, name).value_or(kNaN);
  const ordered_json* cur = &s;
  for (const auto& seg : split(name, '.')) {
    if (!cur->is_object() || !cur->contains(seg)) {
      // The numbers this level has, so the user can pick the one meant.
      std::vector<std::string> known = cur == &s ? std_metrics : std::vector<std::string>{};
      if (cur->is_object())
        for (const auto& [key, value] : cur->items())
          if (value.is_number() || value.is_object()) known.push_back(key);
      throw InputError(
          "arguments", 0, "target",
          fmt::format("the summary has no metric '{}' (known: {})", name, fmt::join(known, ", ")));
    }
    cur = &(*cur)[seg];
  }
  return cur->is_number() ? cur->get<double>() : kNaN;
}

// ---------------------------------------------------------------- search

namespace {

// Counts per varied group for a total, in the proportions of the base counts
// (largest remainder; equal shares when all base counts are 0).
std::vector<int> apportion(const std::vector<Group>& groups, int total) {
  double sum = 0;
  for (const auto& g : groups) sum += g.base_count;
  std::vector<int> out(groups.size(), 0);
  std::vector<std::pair<double, size_t>> rest;
  int given = 0;
  for (size_t i = 0; i < groups.size(); ++i) {
    const double w = sum > 0 ? groups[i].base_count / sum : 1.0 / static_cast<double>(groups.size());
    const double exact = w * total;
    out[i] = static_cast<int>(std::floor(exact));
    given += out[i];
    rest.push_back({exact - out[i], i});
  }
  std::stable_sort(rest.begin(), rest.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  for (size_t k = 0; given < total; ++k, ++given) ++out[rest[k % rest.size()].second];
  return out;
}

}  // namespace

namespace {
// What reading the input found (a template's gpucores HAMi clamps, the
// snapshot's skipped objects and malformed pods): the CLI says it on stderr.
std::vector<std::string> read_warnings(const sim::Scenario& scenario) {
  std::vector<std::string> out = scenario.warnings;
  if (scenario.snapshot)
    out.insert(out.end(), scenario.snapshot->warnings.begin(), scenario.snapshot->warnings.end());
  return out;
}

// plan --autoscale: the cheapest max per node group (or combination of
// them) that meets the targets, each costed by its runs (cheapest.hpp).
PlanResult plan_autoscale(const PlanRequest& req, const sim::Scenario& base,
                          std::function<bool(double)> should_continue) {
  const std::string source = req.run.scenario.path.empty() ? req.run.scenario.source : req.run.scenario.path;
  if (base.node_groups.empty())
    throw InputError(source, 0, "node_groups", "plan --autoscale needs a scenario with node_groups");
  if (!req.prices.empty())
    throw InputError("command line", 0, "--price",
                     "plan --autoscale prices nodes by the groups' price_per_hour, not --price");
  if (req.run.scenario.snapshot && !req.run.scenario.snapshot->add_nodes.empty())
    throw InputError("command line", 0, "--add", "plan --autoscale varies the node groups' max, not --add");
  std::vector<Group> groups;
  std::vector<int> floors;
  auto add = [&](size_t i) {
    const sim::NodeGroupSpec& g = base.node_groups[i];
    groups.push_back({i, g.name, g.max});
    // max is at least 1, the group's min and its members (snapshot nodes).
    floors.push_back(std::max({1, g.min, static_cast<int>(g.members.size())}));
  };
  if (req.vary.empty()) {
    for (size_t i = 0; i < base.node_groups.size(); ++i) add(i);
  } else {
    for (const auto& v : req.vary) {
      auto it = std::find_if(base.node_groups.begin(), base.node_groups.end(),
                             [&](const sim::NodeGroupSpec& g) { return g.name == v; });
      if (it == base.node_groups.end())
        throw InputError("arguments", 0, "vary", fmt::format("the scenario has no node group named '{}'", v));
      add(static_cast<size_t>(it - base.node_groups.begin()));
    }
  }
  if (req.max_count < 0)
    throw InputError("arguments", 0, "max_count",
                     fmt::format("{} is negative (0 or none: the default)", req.max_count));
  // Default: up to the largest max the scenario gives.
  int hi = req.max_count;
  if (hi == 0)
    for (const auto& g : groups) hi = std::max(hi, g.base_count);
  for (size_t i = 0; i < groups.size(); ++i)
    if (floors[i] > hi)
      throw InputError("arguments", 0, "max_count",
                       fmt::format("{} is below group '{}''s least max ({}: its min, members, at least 1)",
                                   hi, groups[i].name, floors[i]));
  if (hi > 1'000'000) throw InputError("arguments", 0, "max_count", "must be at most 1000000");
  PlanResult result;
  result.warnings = read_warnings(base);
  result.autoscale = true;
  result.targets = req.targets;
  for (const auto& g : groups) result.vary.push_back(g.name);
  result.min_count = 0;
  result.max_count = hi;
  {
    const sim::RunOptions o = options_for(base, req.run);
    result.policy = o.policy;
    result.scenario = base.name;
    result.seeds = req.seeds.empty() ? std::vector<uint64_t>{o.seed} : req.seeds;
  }
  search_cheapest(req, base, groups, 0, hi, result, std::move(should_continue), floors);
  return result;
}
}  // namespace

PlanResult plan_capacity(const PlanRequest& req, std::function<bool(double)> should_continue) {
  if (is_openb(req.run.scenario))
    throw InputError("arguments", 0, "scenario",
                     "capacity planning needs a scenario whose fleet is node templates x counts");
  if (req.targets.empty()) throw InputError("arguments", 0, "target", "give at least one target");
  if (req.search != "bisect" && req.search != "scan")
    throw InputError("arguments", 0, "search", "use bisect or scan");

  // The base scenario (user overrides applied), read once; each try sets
  // the varied groups' counts on a copy of it.
  const bool snapshot = req.run.scenario.snapshot.has_value() || (req.scenario && req.scenario->snapshot);
  if (req.run.scenario.path.empty() && !req.run.scenario.text && !snapshot && !req.scenario)
    throw InputError("arguments", 0, "scenario", "give a scenario");
  if (req.run.scenario.snapshot && req.run.scenario.snapshot->add_nodes.empty() && !req.autoscale)
    throw InputError("arguments", 0, "add", "give the node to add (--add NODE.yaml)");
  const sim::Scenario base_scenario = req.scenario ? *req.scenario : load(req.run);
  if (req.autoscale) return plan_autoscale(req, base_scenario, std::move(should_continue));
  if (base_scenario.fleet_groups.empty())
    throw InputError(req.run.scenario.path.empty() ? req.run.scenario.source : req.run.scenario.path, 0,
                     "fleet", "capacity planning needs a fleet of node templates x counts");
  std::vector<Group> all;
  for (size_t i = 0; i < base_scenario.fleet_groups.size(); ++i)
    all.push_back({i, base_scenario.fleet_groups[i].node.name, base_scenario.fleet_groups[i].count});
  std::vector<Group> groups;
  if (req.vary.empty()) {
    groups = all;
  } else {
    for (const auto& v : req.vary) {
      auto it = std::find_if(all.begin(), all.end(), [&](const Group& g) { return g.name == v; });
      if (it == all.end())
        throw InputError("arguments", 0, "vary", fmt::format("the fleet has no template named '{}'", v));
      groups.push_back(*it);
    }
  }
  if (groups.empty()) throw InputError("arguments", 0, "fleet", "the fleet has no templates");
  int base_total = 0;
  for (const auto& g : groups) base_total += g.base_count;

  PlanResult result;
  result.warnings = read_warnings(base_scenario);
  result.targets = req.targets;
  for (const auto& g : groups) result.vary.push_back(g.name);
  // 0 is "the default"; a negative count is a mistake, never the default.
  if (req.max_count < 0)
    throw InputError("arguments", 0, "max_count",
                     fmt::format("{} is negative (0 or none: the default)", req.max_count));
  if (req.curve_points < 0 || req.curve_points > 10'000)
    throw InputError("arguments", 0, "curve_points", fmt::format("{} is not in 0..10000", req.curve_points));
  const int lo = req.min_count;
  const int hi = req.max_count > 0 ? req.max_count : std::max(16, 4 * base_total);
  // A snapshot already has nodes: adding none may be the answer.
  if (lo < (snapshot ? 0 : 1))
    throw InputError("arguments", 0, "min_count", snapshot ? "must not be negative" : "must be at least 1");
  if (hi < lo) throw InputError("arguments", 0, "max_count", "must not be below min_count");
  if (hi > 1'000'000) throw InputError("arguments", 0, "max_count", "must be at most 1000000");
  result.min_count = lo;
  result.max_count = hi;
  // The largest fleet tried is the run that holds the most: refused up
  // front when it cannot fit, before any trial (docs/simulator.md#memory).
  sim::RunSize largest = sim::run_size(base_scenario);
  largest.nodes += static_cast<size_t>(std::max(0, hi - base_total));
  sim::guard_run_memory(largest, true);

  const RunSpec& base = req.run;
  {
    const sim::RunOptions o = options_for(base_scenario, base);
    result.policy = o.policy;
    result.scenario = base_scenario.name;
    result.seeds = req.seeds.empty() ? std::vector<uint64_t>{o.seed} : req.seeds;
  }

  if (!req.prices.empty()) {
    search_cheapest(req, base_scenario, groups, lo, hi, result, std::move(should_continue));
    return result;
  }

  const int log_steps = static_cast<int>(std::ceil(std::log2(std::max(2, hi - lo + 1)))) + 2;
  const double expected = static_cast<double>(result.seeds.size()) *
                          (req.search == "scan" ? hi - lo + 1 : log_steps + std::max(0, req.curve_points));
  FleetTrials trials(base_scenario, base, groups, req.targets, result.seeds, should_continue, expected);
  if (hi > 0) result.never_placeable = trials.set_aside_never_placeable(apportion(groups, hi));
  auto evaluate = [&](int total) { return trials.evaluate(apportion(groups, total)); };
  std::optional<int> answer;
  if (req.search == "scan") {
    for (int c = lo; c <= hi; ++c) {
      const PlanPoint* p = evaluate(c);
      if (!p) break;
      if (p->meets && !answer) answer = c;
    }
  } else {
    const PlanPoint* top = evaluate(hi);
    if (top && top->meets) {
      const PlanPoint* bottom = evaluate(lo);
      if (bottom && bottom->meets) {
        answer = lo;
      } else if (bottom) {
        int bad = lo, good = hi;  // invariant: bad fails, good meets
        while (good - bad > 1) {
          const int mid = bad + (good - bad) / 2;
          const PlanPoint* p = evaluate(mid);
          if (!p) break;
          (p->meets ? good : bad) = mid;
        }
        if (!trials.stopped()) answer = good;
      }
    }
    // The curve: evenly spaced counts over the range, and the neighbours of the answer.
    const int n = std::max(0, req.curve_points);
    for (int i = 0; i < n && !trials.stopped(); ++i) {
      const int c =
          n == 1 ? lo : lo + static_cast<int>(std::lround((hi - lo) * static_cast<double>(i) / (n - 1)));
      evaluate(std::clamp(c, lo, hi));
    }
    if (answer && *answer > lo && !trials.stopped()) evaluate(*answer - 1);
  }

  result.interrupted = trials.stopped();
  result.count = answer;
  if (answer) result.counts = evaluate(*answer)->counts;
  result.points = std::move(trials).points();
  // In the order of the count (a mix's counts need not grow together).
  std::stable_sort(result.points.begin(), result.points.end(),
                   [](const PlanPoint& a, const PlanPoint& b) { return a.count < b.count; });
  if (should_continue && !trials.stopped()) should_continue(1.0);
  return result;
}

ordered_json to_json(const PlanResult& r) {
  ordered_json j;
  j["scenario"] = r.scenario;
  j["policy"] = r.policy;
  j["count"] = r.count ? ordered_json(*r.count) : ordered_json(nullptr);
  j["counts"] = r.counts;
  j["met"] = r.count.has_value();
  ordered_json targets = ordered_json::array();
  for (const auto& t : r.targets) targets.push_back(t.text());
  j["targets"] = targets;
  j["vary"] = r.vary;
  j["seeds"] = r.seeds;
  j["min_count"] = r.min_count;
  j["max_count"] = r.max_count;
  j["interrupted"] = r.interrupted;
  ordered_json curve = ordered_json::array();
  for (const auto& p : r.points) {
    ordered_json row;
    row["count"] = p.count;
    row["counts"] = p.counts;
    row["meets"] = p.meets;
    for (auto it = p.metrics.begin(); it != p.metrics.end(); ++it) {
      const auto& v = it.value();
      row[it.key()] = v.is_number_float() && std::isnan(v.get<double>()) ? ordered_json(nullptr) : v;
    }
    curve.push_back(row);
  }
  j["curve"] = curve;
  if (!r.node_prices.empty()) add_prices(r, j);
  j["never_placeable"] = r.never_placeable;
  return j;
}

std::string never_placeable_text(const PlanResult& r) {
  if (r.never_placeable.empty()) return {};
  std::string out = fmt::format(
      "  set aside: {} {} no count of {} can place (they fit no node of the largest fleet, even empty); "
      "the targets are judged on the other pods:\n",
      r.never_placeable.size(), r.never_placeable.size() == 1 ? "pod" : "pods", fmt::join(r.vary, ", "));
  for (const auto& pod : r.never_placeable) out += "    " + pod + "\n";
  return out;
}

std::string to_text(const PlanResult& r) {
  if (!r.node_prices.empty()) return priced_text(r) + never_placeable_text(r);
  std::string out;
  std::vector<std::string> targets;
  for (const auto& t : r.targets) targets.push_back(t.text());
  out += fmt::format("plan {}  policy {}  targets {}  seeds {}\n", r.scenario, r.policy,
                     fmt::join(targets, ", "), fmt::join(r.seeds, ","));
  out += fmt::format("  {:>6} {:>6} {:>5} {:>10} {:>10} {:>10}", "nodes", "gpus", "meets", "p95_pend_s",
                     "refused%", "failed%");
  std::set<std::string> extra;
  for (const auto& t : r.targets)
    if (t.metric != "p95_pending_s" && t.metric != "refused_pct" && t.metric != "failed_pct")
      extra.insert(t.metric);
  for (const auto& m : extra) out += fmt::format(" {:>14}", m);
  out += "\n";
  for (const auto& p : r.points) {
    auto get = [&](const std::string& k) {
      return p.metrics.contains(k) && p.metrics[k].is_number() ? p.metrics[k].get<double>() : kNaN;
    };
    out +=
        fmt::format("  {:>6} {:>6} {:>5} {:>10.1f} {:>10.2f} {:>10.2f}", p.count, p.metrics.value("gpus", 0),
                    p.meets ? "yes" : "no", get("p95_pending_s"), get("refused_pct"), get("failed_pct"));
    for (const auto& m : extra) out += fmt::format(" {:>14.3f}", get(m));
    out += "\n";
  }
  if (r.interrupted) out += "  interrupted\n";
  out += never_placeable_text(r);
  if (r.count) {
    std::vector<std::string> mix;
    for (const auto& [k, v] : r.counts) mix.push_back(fmt::format("{} x {}", v, k));
    out += fmt::format("answer: {} nodes ({})\n", *r.count, fmt::join(mix, ", "));
  } else {
    out += fmt::format("answer: none between {} and {} nodes meets the targets\n", r.min_count, r.max_count);
  }
  return out;
}

}  // namespace gpuslice::plan
