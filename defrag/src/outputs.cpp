#include "gpuslice/defrag/outputs.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "gpuslice/core/errors.hpp"
#include "gpuslice/sim/csv_table.hpp"
#include "html_report.hpp"

namespace gpuslice::defrag {

using nlohmann::ordered_json;

namespace {

// The cards a place holds (registered indexes), ascending.
std::vector<int> cards_of(const core::Cluster& cluster, const Place& place) {
  std::set<int> cards;
  for (const auto& c : place.allocation.containers)
    for (const auto& g : c)
      cards.insert(cluster.node(place.node).devices[static_cast<size_t>(g.device)].index);
  return {cards.begin(), cards.end()};
}

std::vector<std::string> uuids_of(const core::Cluster& cluster, const Place& place) {
  std::set<std::string> uuids;
  for (const auto& c : place.allocation.containers)
    for (const auto& g : c)
      uuids.insert(cluster.node(place.node).devices[static_cast<size_t>(g.device)].uuid);
  return {uuids.begin(), uuids.end()};
}

ordered_json place_json(const core::Cluster& cluster, const Place& place) {
  return {{"node", cluster.node(place.node).name},
          {"cards", cards_of(cluster, place)},
          {"uuids", uuids_of(cluster, place)}};
}

std::string plural(size_t n, const char* one, const char* many) {
  return fmt::format("{} {}", n, n == 1 ? one : many);
}

// At most ten names, then how many more ("a, b and 7 more"): a queue can
// hold thousands.
std::string names(const std::vector<std::string>& all) {
  constexpr size_t kShown = 10;
  if (all.size() <= kShown) return fmt::format("{}", fmt::join(all, ", "));
  return fmt::format("{} and {} more", fmt::join(all.begin(), all.begin() + kShown, ", "),
                     all.size() - kShown);
}

std::string goal_text(const Goal& g) {
  switch (g.kind) {
    case Goal::Kind::Pods:
      return fmt::format("for {}", names(g.pods));
    case Goal::Kind::Queue:
      return "for the queue";
    case Goal::Kind::FreeCards:
      return fmt::format("for {} free card{}{}", g.free_cards, g.free_cards == 1 ? "" : "s",
                         g.model.empty() ? "" : " of model " + g.model);
  }
  return "";
}

const char* goal_kind(const Goal& g) {
  switch (g.kind) {
    case Goal::Kind::Pods:
      return "for";
    case Goal::Kind::Queue:
      return "for-queue";
    case Goal::Kind::FreeCards:
      return "free-cards";
  }
  return "";
}

// Evictions the plan makes under each budget.
std::vector<int32_t> budget_use(const DefragResult& r) {
  std::vector<int32_t> used(r.built.problem.budgets.size(), 0);
  if (r.search.plan)
    for (const auto& m : r.search.plan->moves)
      for (uint32_t b : r.built.problem.pods[m.pod].budgets) ++used[b];
  return used;
}

}  // namespace

std::vector<std::string> move_columns() {
  return {"step", "pod", "from_node", "from_cards", "to_node", "to_cards", "gpu_mib"};
}

std::string place_text(const core::Cluster& cluster, const Place& place) {
  const auto cards = cards_of(cluster, place);
  return fmt::format("{} {} {}", cluster.node(place.node).name, cards.size() == 1 ? "card" : "cards",
                     fmt::join(cards, ","));
}

ordered_json summary_json(const DefragResult& r) {
  const Problem& p = r.built.problem;
  const SearchResult& s = r.search;
  ordered_json j;
  j["snapshot"] = r.snapshot;
  j["policy"] = p.policy;
  j["gpu_policy"] = p.policy_args.gpu_policy;
  const Goal& g = r.request.goal;
  j["goal"] = {{"kind", goal_kind(g)}};
  if (g.kind == Goal::Kind::FreeCards) {
    j["goal"]["free_cards"] = g.free_cards;
    j["goal"]["model"] = g.model;
  }
  std::vector<std::string> keys;
  for (const auto& t : p.targets) keys.push_back(t.key);
  j["goal"]["targets"] = keys;
  j["max_moves"] = r.request.search.max_moves;
  j["found"] = s.plan.has_value();
  j["moves"] = s.plan ? ordered_json(s.plan->cost.moves) : ordered_json(nullptr);
  j["gpu_mib_moved"] = s.plan ? ordered_json(s.plan->cost.mib) : ordered_json(nullptr);
  j["pods_restarted"] = s.plan ? ordered_json(s.plan->cost.moves) : ordered_json(nullptr);
  j["nodes_touched"] = s.plan ? ordered_json(s.plan->cost.nodes) : ordered_json(nullptr);
  j["proven_minimal"] = s.proven_minimal;
  j["lower_bound"] = s.impossible ? ordered_json(nullptr) : ordered_json(s.lower_bound);
  j["impossible"] = s.impossible;
  j["search"] = s.method;
  j["ties_exhaustive"] = s.ties_exhaustive;
  ordered_json moves = ordered_json::array();
  if (s.plan)
    for (size_t i = 0; i < s.plan->moves.size(); ++i) {
      const Move& m = s.plan->moves[i];
      moves.push_back({{"step", i + 1},
                       {"pod", p.pods[m.pod].key},
                       {"from", place_json(p.cluster, m.from)},
                       {"to", place_json(p.cluster, m.to)},
                       {"gpu_mib", p.pods[m.pod].gpu_mib}});
    }
  j["plan"] = moves;
  ordered_json targets = ordered_json::array();
  if (s.plan)
    for (size_t i = 0; i < s.plan->targets.size(); ++i) {
      ordered_json t = place_json(p.cluster, s.plan->targets[i]);
      t["pod"] = p.targets[i].key;
      targets.push_back(t);
    }
  j["targets"] = targets;
  std::vector<std::string> touched;
  if (s.plan)
    for (size_t n : s.plan->nodes_touched) touched.push_back(p.cluster.node(n).name);
  j["nodes"] = touched;
  j["never_fits"] = r.built.never_fits;
  std::map<std::string, size_t> pinned;
  size_t movable = 0;
  for (const auto& pod : p.pods) {
    if (pod.movable())
      ++movable;
    else
      ++pinned[std::string(pinned_text(pod.pinned))];
  }
  j["pods"] = {{"gpu_pods_running", p.pods.size()}, {"movable", movable}, {"not_movable", pinned}};
  ordered_json budgets = ordered_json::array();
  const auto used = budget_use(r);
  for (size_t b = 0; b < p.budgets.size(); ++b) {
    const auto& st = p.budgets[b];
    budgets.push_back({{"budget", st.ns + "/" + st.name},
                       {"matched", st.matched},
                       {"expected", st.expected},
                       {"healthy", st.healthy},
                       {"desired", st.desired},
                       {"allowed", st.allowed},
                       {"used", used[b]}});
  }
  j["budgets"] = budgets;
  if (r.add) {
    const AddInstead& a = *r.add;
    j["add"] = {{"template", a.template_name},
                {"from", a.from},
                {"count", a.count ? ordered_json(*a.count) : ordered_json(nullptr)},
                {"max_count", a.max_count},
                {"targets", a.targets},
                {"left_out", a.left_out}};
  } else {
    j["add"] = nullptr;
  }
  j["search_stats"] = {{"placements", s.placements},
                       {"states", s.states},
                       {"exact_depths_done", s.exact_depths_done},
                       {"exact_gave_up", s.exact_gave_up},
                       {"search_seconds", r.search_seconds},
                       {"add_seconds", r.add_seconds},
                       {"read_seconds", r.read_seconds}};
  j["warnings"] = r.warnings;
  return j;
}

std::string to_text(const DefragResult& r) {
  const Problem& p = r.built.problem;
  const SearchResult& s = r.search;
  std::string out;
  size_t cards = 0;
  for (size_t n = 0; n < p.cluster.size(); ++n) cards += p.cluster.node(n).devices.size();
  size_t movable = 0;
  std::map<std::string, size_t> pinned;
  for (const auto& pod : p.pods) {
    if (pod.movable())
      ++movable;
    else
      ++pinned[std::string(pinned_text(pod.pinned))];
  }
  out += fmt::format("defrag {}: policy {}, {}, up to {}\n", r.snapshot, p.policy, goal_text(r.request.goal),
                     plural(static_cast<size_t>(r.request.search.max_moves), "move", "moves"));
  std::vector<std::string> why;
  for (const auto& [reason, n] : pinned) why.push_back(fmt::format("{} {}", n, reason));
  out += fmt::format("  {}, {}; {} running, {} movable{}\n", plural(p.cluster.size(), "node", "nodes"),
                     plural(cards, "card", "cards"), plural(p.pods.size(), "GPU pod", "GPU pods"), movable,
                     why.empty() ? "" : fmt::format("; not movable: {}", fmt::join(why, "; ")));
  const auto used = budget_use(r);
  // Every budget on a small cluster; on a large one those the plan spends and a count of the others.
  const bool all_budgets = p.budgets.size() <= 8;
  size_t without = 0;
  for (const auto& b : p.budgets) without += b.allowed == 0 ? 1 : 0;
  if (!all_budgets)
    out += fmt::format("  {} PodDisruptionBudgets, {} allowing no eviction (summary.json lists them)\n",
                       p.budgets.size(), without);
  for (size_t b = 0; b < p.budgets.size(); ++b)
    if (all_budgets || used[b] > 0)
      out += fmt::format("  PodDisruptionBudget {}/{}: {} healthy of {} matched, {} desired: allows {}{}\n",
                         p.budgets[b].ns, p.budgets[b].name, p.budgets[b].healthy, p.budgets[b].matched,
                         p.budgets[b].desired,
                         plural(static_cast<size_t>(p.budgets[b].allowed), "eviction", "evictions"),
                         used[b] > 0 ? fmt::format(", the plan makes {}", used[b]) : "");
  if (!r.built.never_fits.empty())
    out += fmt::format("  fit no node even empty, left out: {}\n", names(r.built.never_fits));
  if (p.targets.empty()) out += "  nothing to place\n";
  const std::string how = fmt::format("{} search", s.method);
  if (s.plan) {
    const Plan& plan = *s.plan;
    if (plan.moves.empty()) {
      out += fmt::format("plan: no move needed, the targets place now ({})\n", how);
    } else {
      out += fmt::format(
          "plan: {}, {} MiB moved, {} restarted, {} touched; {}\n", plural(plan.cost.moves, "move", "moves"),
          plan.cost.mib, plural(plan.cost.moves, "pod", "pods"), plural(plan.cost.nodes, "node", "nodes"),
          s.proven_minimal ? fmt::format("proven minimal ({})", how)
                           : fmt::format("not proven minimal: every plan needs at least {} ({})",
                                         plural(static_cast<size_t>(s.lower_bound), "move", "moves"), how));
      for (size_t i = 0; i < plan.moves.size(); ++i) {
        const Move& m = plan.moves[i];
        out += fmt::format("  {}. {}: {} -> {}, {} MiB\n", i + 1, p.pods[m.pod].key,
                           place_text(p.cluster, m.from), place_text(p.cluster, m.to), p.pods[m.pod].gpu_mib);
      }
      out += "then:\n";
    }
    for (size_t i = 0; i < plan.targets.size(); ++i)
      out += fmt::format("  {}: {}\n", p.targets[i].key, place_text(p.cluster, plan.targets[i]));
  } else {
    const std::string within =
        fmt::format("within {}", plural(static_cast<size_t>(r.request.search.max_moves), "move", "moves"));
    if (s.impossible)
      out += fmt::format("no plan: no sequence of moves places the targets (proven, {})\n", how);
    else if (s.proven_minimal)
      out += fmt::format("no plan {}: every plan needs at least {} (proven, {})\n", within,
                         plural(static_cast<size_t>(s.lower_bound), "move", "moves"), how);
    else
      out += fmt::format("no plan found {} ({}; not proven: every plan needs at least {})\n", within, how,
                         plural(static_cast<size_t>(s.lower_bound), "move", "moves"));
  }
  if (r.add) {
    const AddInstead& a = *r.add;
    if (a.targets.empty())
      out += fmt::format("instead: adding nodes like {} places none of them\n", a.from);
    else if (a.count)
      out += fmt::format("instead: plan --add ({}): {} named {}-<i> {} {}\n", a.from,
                         plural(static_cast<size_t>(*a.count), "node", "nodes"), a.template_name,
                         *a.count == 1 ? "places" : "place", names(a.targets));
    else
      out += fmt::format("instead: plan --add ({}): no count up to {} places {}\n", a.from, a.max_count,
                         names(a.targets));
    if (!a.left_out.empty()) out += fmt::format("  fit no added node either: {}\n", names(a.left_out));
  }
  return out;
}

std::string moves_csv(const DefragResult& r) {
  const Problem& p = r.built.problem;
  std::string out = fmt::format("{}\n", fmt::join(move_columns(), ","));
  if (!r.search.plan) return out;
  for (size_t i = 0; i < r.search.plan->moves.size(); ++i) {
    const Move& m = r.search.plan->moves[i];
    out += fmt::format("{},{},{},{},{},{},{}\n", i + 1, sim::csv_cell(p.pods[m.pod].key),
                       sim::csv_cell(p.cluster.node(m.from.node).name),
                       fmt::join(cards_of(p.cluster, m.from), ";"),
                       sim::csv_cell(p.cluster.node(m.to.node).name),
                       fmt::join(cards_of(p.cluster, m.to), ";"), p.pods[m.pod].gpu_mib);
  }
  return out;
}

void write_outputs(const DefragResult& r, const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec)
    throw core::InputError("command line", 0, "--out",
                           fmt::format("cannot create '{}': {}", dir, ec.message()));
  auto write = [&](const char* name, const std::string& text) {
    const auto path = std::filesystem::path(dir) / name;
    std::ofstream f(path, std::ios::binary);
    if (!f || !(f << text) || !f.flush())
      throw core::InputError("command line", 0, "--out", fmt::format("cannot write '{}'", path.string()));
  };
  write("moves.csv", moves_csv(r));
  write("summary.json", summary_json(r).dump(2) + "\n");
  write("report.html", render_html(r));
}

}  // namespace gpuslice::defrag
