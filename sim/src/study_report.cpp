// The study's report.html (`gpuslice study --out DIR`): the table of
// allocation at 130 % arrived with the artifact's published means and the
// differences, then the study's figure per trace, drawn by study.js.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "gpuslice/sim/html_page.hpp"
#include "gpuslice/sim/report_assets.hpp"
#include "gpuslice/sim/study.hpp"

namespace gpuslice::sim {

namespace {
using Json = nlohmann::ordered_json;

// The reproduction's bar (docs/reproduction.md): a cell within this many
// points of the published mean reproduces it.
constexpr double kWithin = 0.5;

Json curve_json(const std::array<std::optional<double>, 131>& c) {
  Json out = Json::array();
  for (const auto& v : c) out.push_back(v ? Json(std::round(*v * 100) / 100) : Json(nullptr));
  return out;
}

// The mean over seeds at each arrived %, where every seed has a record there.
std::array<std::optional<double>, 131> mean_curve(const std::vector<const StudyRun*>& runs) {
  std::array<std::optional<double>, 131> out{};
  for (size_t x = 0; x < out.size(); ++x) {
    double sum = 0;
    size_t n = 0;
    for (const auto* r : runs)
      if (r->alloc[x]) {
        sum += *r->alloc[x];
        ++n;
      }
    if (n == runs.size() && n > 0) out[x] = sum / static_cast<double>(n);
  }
  return out;
}

// Where the figure starts: 10 points before the policies first part by more
// than a point, in tens (before it their curves all but coincide).
int first_parting(const std::vector<std::array<std::optional<double>, 131>>& curves) {
  for (size_t x = 0; x < 131; ++x) {
    double lo = 1e9, hi = -1e9;
    for (const auto& c : curves)
      if (c[x]) {
        lo = std::min(lo, *c[x]);
        hi = std::max(hi, *c[x]);
      }
    if (hi - lo > 1) return std::max(0, static_cast<int>(x) / 10 * 10 - 10);
  }
  return 0;
}

std::string table_html(const std::vector<StudyCell>& cells, bool published) {
  std::string html =
      "<table class=\"compare study\">\n<thead><tr><th>trace</th><th>policy</th><th>runs</th><th>mean</th>"
      "<th>min</th><th>max</th>";
  if (published) html += "<th>published</th><th>difference</th>";
  html += "</tr></thead>\n<tbody>\n";
  for (const auto& c : cells) {
    html += fmt::format(
        "<tr><td>{}</td><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{:.2f} %</td><td "
        "class=\"num\">{:.2f} "
        "%</td><td class=\"num\">{:.2f} %</td>",
        html::escape(trace_stem(c.trace)), html::escape(c.policy), c.runs, c.mean, c.min, c.max);
    if (published) {
      if (c.published) {
        const double diff = c.mean - *c.published;
        html += fmt::format("<td class=\"num\">{:.2f} %</td><td class=\"num {}\">{:+.2f}</td>", *c.published,
                            std::abs(diff) <= kWithin ? "within" : "off", diff);
      } else {
        html += "<td class=\"num na\">-</td><td class=\"num na\">-</td>";
      }
    }
    html += "</tr>\n";
  }
  return html + "</tbody></table>\n";
}
}  // namespace

std::string render_study_html(const std::vector<StudyRun>& runs, const std::vector<StudyCell>& cells,
                              const PublishedCurves& published_curves, const StudyOptions& options) {
  // Traces and their policies in the runs' order.
  std::vector<std::string> traces;
  std::map<std::string, std::vector<std::string>> policies;
  std::map<std::pair<std::string, std::string>, std::vector<const StudyRun*>> by_cell;
  for (const auto& r : runs) {
    if (std::find(traces.begin(), traces.end(), r.trace) == traces.end()) traces.push_back(r.trace);
    auto& p = policies[r.trace];
    if (std::find(p.begin(), p.end(), r.policy) == p.end()) p.push_back(r.policy);
    by_cell[{r.trace, r.policy}].push_back(&r);
  }
  const bool published =
      std::any_of(cells.begin(), cells.end(), [](const auto& c) { return c.published.has_value(); });
  Json data = {{"traces", Json::array()}};
  std::string sections;
  for (size_t t = 0; t < traces.size(); ++t) {
    const std::string& trace = traces[t];
    Json lines = Json::array();
    std::vector<std::array<std::optional<double>, 131>> ours;
    size_t with_published = 0;
    for (const auto& policy : policies[trace]) {
      ours.push_back(mean_curve(by_cell[{trace, policy}]));
      const auto pub = published_curves.find({trace_stem(trace), policy});
      with_published += pub != published_curves.end() ? 1 : 0;
      lines.push_back(
          {{"policy", policy},
           {"ours", curve_json(ours.back())},
           {"published", pub == published_curves.end() ? Json(nullptr) : curve_json(pub->second)}});
    }
    const std::string id = fmt::format("chart-trace-{}", t);
    data["traces"].push_back(
        {{"id", id}, {"trace", trace_stem(trace)}, {"from", first_parting(ours)}, {"lines", lines}});
    const size_t seeds = by_cell[{trace, policies[trace].front()}].size();
    sections += html::chart_section(
        {id, trace_stem(trace),
         fmt::format(
             "GPU allocation ratio as GPU demand arrives (% of the fleet's capacity), as the FGD study draws "
             "it: "
             "solid, ours (the mean over {} seed{}){}. Left of the figure the policies' curves lie within "
             "a point of each other.",
             seeds, seeds == 1 ? "" : "s",
             with_published ? "; dashed, the artifact's published mean (analysis_allo_discrete.csv)"
             : published_curves.empty() ? " (run with --published to draw the artifact's curves beside)"
                                        : "; the published file has no curve for this trace"),
         "460px"});
  }
  std::vector<std::string> seed_text;
  for (auto s : options.seeds) seed_text.push_back(std::to_string(s));
  const std::string note = fmt::format(
      "Written by <code>gpuslice study</code>: {} trace{} × {} polic{} × {} seed{} ({}), demand resampled to "
      "{} × "
      "the fleet's GPU capacity; runs.csv, curves.csv and table.csv hold the figures. It needs no network.",
      traces.size(), traces.size() == 1 ? "" : "s", options.policies.size(),
      options.policies.size() == 1 ? "y" : "ies", options.seeds.size(), options.seeds.size() == 1 ? "" : "s",
      html::escape(fmt::format("{}", fmt::join(seed_text, ","))), options.tune);
  std::string html = html::page_start("gpuslice study: the FGD grid on openb", note, traces.size());
  html +=
      "<section id=\"table\"><h2>Allocation at 130 % arrived</h2>\n<p class=\"note\">The share of GPU "
      "capacity "
      "allocated when the arrived demand reaches 130 % of it, per trace and policy over the seeds" +
      std::string(
          published
              ? fmt::format("; beside it the artifact's published mean (over its seeds) and our difference, "
                            "green within {} points (the reproduction's bar), red past it",
                            kWithin)
              : "") +
      ".</p>\n" + table_html(cells, published) + "</section>\n";
  html += sections;
  return html + html::page_end(data, report_assets::study_script());
}

}  // namespace gpuslice::sim
