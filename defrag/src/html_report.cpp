#include "html_report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "gpuslice/defrag/outputs.hpp"
#include "gpuslice/sim/html_page.hpp"
#include "report_assets.hpp"

namespace gpuslice::defrag {

namespace {

using nlohmann::ordered_json;
using sim::html::escape;

// At most this many nodes' cards are drawn (a plan touches few; with no plan
// the first GPU nodes are shown as they are).
constexpr size_t kNodesDrawn = 24;

// The cluster after the plan: every move and target replayed on the core.
core::Cluster after_plan(const Problem& problem, const Plan& plan) {
  Replay replay(problem);
  for (const Move& m : plan.moves) replay.move(m.pod);
  replay.place_targets();
  return replay.cluster();
}

ordered_json card_rows(const DefragResult& r) {
  const Problem& p = r.built.problem;
  std::vector<size_t> nodes;
  std::set<std::pair<size_t, int>> target_cards;
  if (r.search.plan) {
    nodes = r.search.plan->nodes_touched;
    for (const Place& t : r.search.plan->targets) {
      nodes.push_back(t.node);
      for (const auto& c : t.allocation.containers)
        for (const auto& g : c) target_cards.insert({t.node, g.device});
    }
    std::sort(nodes.begin(), nodes.end());
    nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
  }
  if (nodes.empty())
    for (size_t n = 0; n < p.cluster.size() && nodes.size() < kNodesDrawn; ++n)
      if (!p.cluster.node(n).devices.empty()) nodes.push_back(n);
  if (nodes.size() > kNodesDrawn) nodes.resize(kNodesDrawn);
  const core::Cluster after = r.search.plan ? after_plan(p, *r.search.plan) : p.cluster;
  ordered_json rows = ordered_json::array();
  for (size_t n : nodes) {
    const core::Node& node = p.cluster.node(n);
    for (size_t d = 0; d < node.devices.size(); ++d) {
      const auto& before = p.cluster.usage(n)[d];
      const auto& now = after.usage(n)[d];
      rows.push_back(
          {{"label", fmt::format("{} card {}", node.name, node.devices[d].index)},
           {"capacity_mib", node.devices[d].memory_mib},
           {"capacity_cores", node.devices[d].cores},
           {"before_mib", before.memory_mib},
           {"after_mib", now.memory_mib},
           {"before_cores", before.cores},
           {"after_cores", now.cores},
           {"note", target_cards.count({n, static_cast<int>(d)}) ? "a target is placed here" : ""}});
    }
  }
  return rows;
}

std::string moves_table(const DefragResult& r) {
  const Problem& p = r.built.problem;
  if (!r.search.plan || r.search.plan->moves.empty()) return "<p class=\"note\">No move.</p>\n";
  std::string html =
      "<table class=\"moves\"><tr><th>step</th><th>pod</th><th>from</th><th>to</th><th>card "
      "memory</th></tr>\n";
  for (size_t i = 0; i < r.search.plan->moves.size(); ++i) {
    const Move& m = r.search.plan->moves[i];
    html += fmt::format(
        "<tr><td class=\"num\">{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"num\">{} MiB</td></tr>\n",
        i + 1, escape(p.pods[m.pod].key), escape(place_text(p.cluster, m.from)),
        escape(place_text(p.cluster, m.to)), p.pods[m.pod].gpu_mib);
  }
  return html + "</table>\n";
}

std::string targets_table(const DefragResult& r) {
  const Problem& p = r.built.problem;
  if (!r.search.plan) return "<p class=\"note\">Not placed: no plan.</p>\n";
  std::string html = "<table class=\"moves\"><tr><th>pod</th><th>placed on</th></tr>\n";
  for (size_t i = 0; i < r.search.plan->targets.size(); ++i)
    html += fmt::format("<tr><td>{}</td><td>{}</td></tr>\n", escape(p.targets[i].key),
                        escape(place_text(p.cluster, r.search.plan->targets[i])));
  return html + "</table>\n";
}

std::string answer_line(const DefragResult& r) {
  const SearchResult& s = r.search;
  if (s.plan) {
    const Cost& c = s.plan->cost;
    const std::string proof =
        s.proven_minimal
            ? "proven minimal"
            : fmt::format("not proven minimal: every plan needs at least {} moves", s.lower_bound);
    return fmt::format(
        "<p class=\"answer\">{} move{}, {} MiB of card memory moved, {} node{} touched "
        "<span class=\"proof\">({}, {} search)</span></p>\n",
        c.moves, c.moves == 1 ? "" : "s", c.mib, c.nodes, c.nodes == 1 ? "" : "s", proof, s.method);
  }
  std::string line = s.impossible ? "No plan: no sequence of moves places the targets"
                                  : fmt::format("No plan within {} moves", r.request.search.max_moves);
  if (r.add)
    line += r.add->count ? fmt::format("; adding {} node{} like {} would place them", *r.add->count,
                                       *r.add->count == 1 ? "" : "s", r.add->from)
                         : fmt::format("; adding up to {} nodes like {} would not place them",
                                       r.add->max_count, r.add->from);
  return fmt::format("<p class=\"answer\">{}</p>\n", escape(line));
}

}  // namespace

std::string render_html(const DefragResult& r) {
  const std::string title = fmt::format("gpuslice defrag: {}", r.snapshot);
  ordered_json data = {{"has_plan", r.search.plan.has_value()}, {"cards", card_rows(r)}};
  std::string html = sim::html::page_start(
      title,
      fmt::format("Written by <code>gpuslice defrag</code> with summary.json and moves.csv. Every move is an "
                  "eviction, then the scheduler placing the pod again under policy {}; the plan was replayed "
                  "step by step on the placement core. It needs no network.",
                  escape(r.built.problem.policy)),
      2, report_assets::page_style());
  html += "<section id=\"answer\"><h2>Answer</h2>\n" + answer_line(r);
  html += "<pre class=\"text\">" + escape(to_text(r)) + "</pre></section>\n";
  html += "<section id=\"moves\"><h2>Moves, in order</h2>\n" + moves_table(r) + "</section>\n";
  html += "<section id=\"targets\"><h2>Then the targets</h2>\n" + targets_table(r) + "</section>\n";
  const char* scope = r.search.plan ? "the cards of the nodes the plan touches and where the targets go"
                                    : "the cards of the first GPU nodes, as they are (no plan)";
  html += fmt::format(
      "<section><h2>Card memory before and after</h2><p class=\"note\">MiB in use on {}; the red marks are "
      "the cards' memory.</p>\n<div class=\"chart\" style=\"height:380px\"><canvas "
      "id=\"chart-memory\"></canvas></div>"
      "</section>\n",
      scope);
  html += fmt::format(
      "<section><h2>Card cores before and after</h2><p class=\"note\">Percent of each card's compute granted "
      "on {}.</p>\n"
      "<div class=\"chart\" style=\"height:380px\"><canvas id=\"chart-cores\"></canvas></div></section>\n",
      scope);
  html += sim::html::page_end(data, report_assets::page_script());
  return html;
}

}  // namespace gpuslice::defrag
