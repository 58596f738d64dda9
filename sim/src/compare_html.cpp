// compare.html: the runs' headline figures side by side (the best marked),
// a snapshot's queue with one column per run, and the runs' curves on
// shared axes, drawn by compare.js.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>

#include "compare_cells.hpp"
#include "gpuslice/sim/compare.hpp"
#include "gpuslice/sim/html_page.hpp"
#include "gpuslice/sim/report_assets.hpp"
#include "report_data.hpp"

namespace gpuslice::sim {

namespace {
using Json = nlohmann::ordered_json;

constexpr size_t kTimePoints = 1500;  // per run: the page stays small whatever the runs' size
constexpr size_t kWaitPoints = 400;

// The share of the run's pods placed after waiting at most x, at each wait
// some pod waited (pods refused or never placed keep the curve below 100 %).
Json waits_curve(const RunResult& run) {
  std::vector<double> waits;
  size_t pods = 0;
  for (const auto& p : run.pods) {
    if (p.starting) continue;
    ++pods;
    if (p.start >= 0) waits.push_back(std::max(0.0, p.start - p.arrival));
  }
  std::sort(waits.begin(), waits.end());
  // One point per distinct wait (the share placed within it), then every
  // k-th of them and the last, so the page stays small.
  std::vector<size_t> ends;
  for (size_t i = 0; i < waits.size(); ++i)
    if (i + 1 == waits.size() || waits[i + 1] != waits[i]) ends.push_back(i);
  const size_t step = std::max<size_t>(1, (ends.size() + kWaitPoints - 1) / kWaitPoints);
  Json x = Json::array(), y = Json::array();
  for (size_t k = 0; k < ends.size(); ++k) {
    if (k % step != 0 && k + 1 != ends.size()) continue;
    const size_t i = ends[k];
    x.push_back(std::round(waits[i] * 1000) / 1000);
    y.push_back(std::round(10000.0 * static_cast<double>(i + 1) / static_cast<double>(pods)) / 100);
  }
  return {{"pods", pods}, {"placed", waits.size()}, {"seconds", x}, {"pct", y}};
}

Json curve_of(const Json& summary) {
  if (!summary.contains("alloc_ratio_by_arrived_pct") || !summary["alloc_ratio_by_arrived_pct"].is_array())
    return nullptr;
  const Json& c = summary["alloc_ratio_by_arrived_pct"];
  return std::any_of(c.begin(), c.end(), [](const Json& v) { return v.is_number(); }) ? c : Json(nullptr);
}

std::string figures_table(const std::vector<ComparedRun>& runs) {
  const CompareTable table = compare_table(runs);
  std::string html = "<table class=\"compare figures\">\n<thead><tr><th></th>";
  for (const auto& r : runs) html += "<th>" + html::escape(r.label) + "</th>";
  html += "</tr></thead>\n<tbody>\n<tr><th>folder</th>";
  for (const auto& r : runs)
    html += "<td><code>" + html::escape(r.dir.empty() ? "-" : r.dir) + "</code></td>";
  html += "</tr>\n";
  for (const auto& row : table.rows) {
    const bool figure =
        row.key != "scenario" && row.key != "policy" && row.key != "seed" && row.key != "fleet";
    html += fmt::format("<tr title=\"{}\"><th>{}</th>", html::escape(row.key), html::escape(row.label));
    for (const auto& c : row.cells) {
      std::string cls = figure ? "num" : "";
      if (c.best) cls += " best";
      html += fmt::format("<td{}>{}</td>", cls.empty() ? "" : " class=\"" + cls + "\"", html::escape(c.text));
    }
    html += "</tr>\n";
  }
  return html + "</tbody></table>\n";
}

// Time pending per priority class, one column per run: what preemption
// trades between classes.
std::string class_table(const std::vector<ComparedRun>& runs) {
  const auto rows = compare_by_class(runs);
  if (rows.empty()) return {};
  std::string html =
      "<section id=\"classes\"><h2>Time pending by priority class</h2>\n<p class=\"note\">Each class's "
      "waits (pods placed, summary.json's pending_seconds_by_priority_class), one column per run; the "
      "shortest in green where the runs differ. A pod without a class is \"priority N\".</p>\n"
      "<table class=\"compare figures by-class\">\n<thead><tr><th></th>";
  for (const auto& r : runs) html += "<th>" + html::escape(r.label) + "</th>";
  html += "</tr></thead>\n<tbody>\n";
  for (const auto& row : rows) {
    html += fmt::format("<tr title=\"{}\"><th>{}</th>", html::escape(row.key), html::escape(row.label));
    for (const auto& c : row.cells)
      html += fmt::format("<td class=\"num{}\">{}</td>", c.best ? " best" : "", html::escape(c.text));
    html += "</tr>\n";
  }
  return html + "</tbody></table></section>\n";
}

std::string queue_table(const std::vector<ComparedRun>& runs) {
  const auto rows = compare_queue(runs);
  if (rows.empty()) return {};
  size_t differ = 0;
  for (const auto& r : rows) differ += r.differs ? 1 : 0;
  std::string html = fmt::format(
      "<section id=\"queue\"><h2>The queue, pod by pod</h2>\n<p class=\"note\">The pods pending at the "
      "snapshot, "
      "in creation order, one column per run: the node and each card's slice (memory, share of the card's "
      "cores), or why the pod was not placed. The runs differ on {} of the {} pods (shaded).</p>\n"
      "<table class=\"compare queue-compare\">\n<thead><tr><th>pod</th>",
      differ, rows.size());
  for (const auto& r : runs) html += "<th>" + html::escape(r.label) + "</th>";
  html += "</tr></thead>\n<tbody>\n";
  for (const auto& row : rows) {
    html += fmt::format("<tr class=\"queued\"><th><code>{}</code></th>", html::escape(row.pod));
    for (const auto& c : row.cells)
      html += fmt::format("<td{}>{}</td>", row.differs ? " class=\"differs\"" : "", c.html);
    html += "</tr>\n";
  }
  return html + "</tbody></table></section>\n";
}
}  // namespace

std::string render_compare_html(const std::vector<ComparedRun>& runs) {
  Json data = {{"end_seconds", 0.0}, {"runs", Json::array()}};
  bool every_curve = !runs.empty();
  for (const auto& r : runs) {
    data["end_seconds"] = std::max(data["end_seconds"].get<double>(), end_of(r.run));
    Json curve = curve_of(r.run.summary);
    every_curve = every_curve && !curve.is_null();
    data["runs"].push_back({{"label", r.label},
                            {"timeline", sampled_timeline(r.run.timeline, kTimePoints)},
                            {"waits", waits_curve(r.run)},
                            {"curve", curve}});
  }
  // The study's curve only where every run has one (a fill with nothing leaving).
  data["curves"] = every_curve;
  std::vector<html::ChartSection> charts = {
      {"chart-allocation", "GPU allocated over time",
       "The share of the fleet's GPU capacity (the study's milli-GPU count) that placed pods hold, one line "
       "per "
       "run."},
      {"chart-pending", "Pods pending over time", "Pods waiting in the queue, one line per run."},
      {"chart-waits", "Time pending",
       "The share of each run's pods placed after waiting at most this long; where a line ends below 100 %, "
       "the "
       "rest were refused or still waiting at the end."},
  };
  if (every_curve)
    charts.push_back(
        {"chart-curve", "GPU allocated by arrived demand",
         "The FGD study's curve: allocation as GPU demand arrives (% of capacity), one line per run."});
  std::vector<std::string> labels;
  for (const auto& r : runs) labels.push_back(r.label);
  const std::string title = "gpuslice comparison: " + fmt::format("{}", fmt::join(labels, " · "));
  std::string html = html::page_start(
      title,
      "Written by <code>gpuslice compare</code> from the runs' output files (summary.json, timeline.csv, "
      "pods.csv); each run's own report.html is in its folder. compare.csv holds the figures. It needs no "
      "network.",
      charts.size());
  html +=
      "<section id=\"figures\"><h2>Headline figures</h2>\n<p class=\"note\">Best in green where lower "
      "(waits, "
      "refusals, fragmentation) or higher (pods placed, allocation) is better and the runs differ.</p>\n" +
      figures_table(runs) + "</section>\n";
  html += class_table(runs);
  html += queue_table(runs);
  for (const auto& c : charts) html += html::chart_section(c);
  return html + html::page_end(data, report_assets::compare_script());
}

}  // namespace gpuslice::sim
