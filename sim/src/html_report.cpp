#include "gpuslice/sim/html_report.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>

#include "gpuslice/sim/html_page.hpp"
#include "gpuslice/sim/report.hpp"
#include "gpuslice/sim/report_assets.hpp"
#include "queue_outcome.hpp"
#include "report_data.hpp"
#include "report_summary.hpp"

namespace gpuslice::sim {

namespace {
using Json = nlohmann::ordered_json;

// The charts report.js draws, in page order.
const html::ChartSection kCharts[] = {
    {"chart-allocation", "Allocation over time",
     "Share of the fleet's capacity that placed pods hold: GPU (the study's milli-GPU count), card memory "
     "and "
     "card cores.",
     "320px"},
    {"chart-fragmentation", "Fragmentation over time",
     "FGD fragmentation: GPU capacity that the run's typical pod shapes cannot use, as a share of all GPU "
     "capacity; and the share of cards holding at least one slice.",
     "320px"},
    {"chart-pods", "Running and pending pods over time",
     "Pods placed and running, and pods waiting in the queue.", "320px"},
    {"chart-pending", "Pending-time distribution",
     "How long pods waited before they were placed; pods still waiting when the run ended are shown apart, "
     "with their wait so far (a lower bound).",
     "320px"},
    {"chart-heatmap", "Per-card use over time", "", "560px"},
    {"chart-refusals", "Pods not placed, by reason",
     "The HAMi reason each pod that was not placed got: refused outright, or still waiting at the end.",
     "300px"},
};
// Runs with node groups only.
const html::ChartSection kNodesChart = {
    "chart-nodes", "Nodes per node group over time",
    "Each group's nodes as Cluster Autoscaler sized it: from the scale-up decision (billed from then, Ready "
    "after the group's scale_up_delay) to the node's removal.",
    "300px"};
}  // namespace

std::string render_report_html(const RunResult& run, const ReportLimits& limits) {
  const Json& s = run.summary;
  auto text = [&](const char* key) {
    return s.is_object() && s.contains(key) && s[key].is_string() ? s[key].get<std::string>() : std::string();
  };
  std::string title = "gpuslice simulation report";
  if (!text("scenario").empty()) title += ": " + text("scenario");
  if (!text("policy").empty()) title += " · " + text("policy");
  const Json data = report_data(run, limits);
  const bool node_groups = data.contains("node_groups");
  std::string html =
      html::page_start(title,
                       "Written by gpuslice from this run's output files (summary.json, timeline.csv, "
                       "pods.csv, card_use.csv); "
                       "<code>gpuslice report DIR</code> writes it again. It needs no network.",
                       std::size(kCharts) + (node_groups ? 1 : 0));
  html += "<section id=\"summary\"><h2>Summary</h2>\n" + summary_html(run) + "</section>\n";
  html += queue_section_html(run, data["end_seconds"].get<double>(), limits.queue_rows);
  for (const auto& c : kCharts) html += html::chart_section(c);
  if (node_groups) html += html::chart_section(kNodesChart);
  return html + html::page_end(data, report_assets::page_script());
}

void write_report(const RunResult& run, const std::string& dir) {
  const auto path = std::filesystem::path(dir) / "report.html";
  std::ofstream f(path, std::ios::binary);
  if (!f) throw OutputError(fmt::format("cannot write '{}'", path.string()));
  f << render_report_html(run);
  if (!f.flush()) throw OutputError(fmt::format("cannot write '{}'", path.string()));
}

}  // namespace gpuslice::sim
