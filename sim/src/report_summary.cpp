#include "report_summary.hpp"

#include <fmt/format.h>

#include <optional>

#include "gpuslice/sim/headline.hpp"
#include "gpuslice/sim/html_page.hpp"
#include "gpuslice/sim/run_metrics.hpp"

namespace gpuslice::sim {

namespace {
using Json = nlohmann::ordered_json;

struct Group {
  std::string title, rows;
  // `wrap`: a text that may be long (a path, a warning) may break across lines; figures do not.
  void add(const std::string& label, const std::string& value_html, const std::string& source,
           bool wrap = false) {
    rows += fmt::format("<tr title=\"summary.json: {}\"><th>{}</th><td{}>{}</td></tr>\n",
                        html::escape(source), html::escape(label), wrap ? " class=\"wrap\"" : "", value_html);
  }
  // A headline metric's row, when the run has it.
  void metric(const Json& s, std::string_view key, const std::string& label = {},
              const std::string& source = {}) {
    const HeadlineMetric* m = find_headline_metric(key);
    const auto v = headline_value(s, key);
    if (!m || !v) return;
    add(label.empty() ? std::string(m->label) : label, html::escape(format_headline(*m, *v)),
        source.empty() ? std::string(key) : source);
  }
  std::string html() const {
    return rows.empty() ? std::string()
                        : fmt::format("<table class=\"summary\"><caption>{}</caption>\n{}</table>\n",
                                      html::escape(title), rows);
  }
};

std::string text(const Json& s, const char* key) {
  return s.contains(key) && s[key].is_string() ? s[key].get<std::string>() : std::string();
}
std::optional<long long> count(const Json& s, const char* key) {
  return s.contains(key) && s[key].is_number() ? std::optional<long long>(s[key].get<long long>())
                                               : std::nullopt;
}
std::string plural(long long n, const char* one, const char* many) {
  return fmt::format("{} {}", n, n == 1 ? one : many);
}

std::string kind_text(const std::string& kind) {
  if (kind == "snapshot") return "a cluster snapshot and its queue";
  if (kind == "departures") return "pods come and go";
  if (kind == "no-departures") return "pods arrive, none leaves (the FGD study's model)";
  return kind;
}

Group run_group(const Json& s) {
  Group g{"Run", {}};
  if (!text(s, "scenario").empty()) g.add("Scenario", html::escape(text(s, "scenario")), "scenario");
  if (!text(s, "policy").empty()) g.add("Policy", html::escape(text(s, "policy")), "policy");
  if (const auto seed = count(s, "seed")) g.add("Seed", std::to_string(*seed), "seed");
  if (!text(s, "run_kind").empty())
    g.add("Kind", html::escape(kind_text(text(s, "run_kind"))), "run_kind", true);
  const auto nodes = count(s, "nodes"), gpus = count(s, "gpus");
  if (nodes && gpus)
    g.add("Fleet", html::escape(plural(*nodes, "node", "nodes") + ", " + plural(*gpus, "GPU", "GPUs")),
          "nodes, gpus");
  g.metric(s, "simulated_seconds", "Simulated time");
  if (s.contains("node_groups") && s["node_groups"].is_array()) {
    for (const auto& ng : s["node_groups"])
      g.add("Node group " + ng.value("name", std::string()),
            html::escape(
                fmt::format("{} scale-ups, {} scale-downs, peak {} nodes, {:.1f} node-hours, cost {:.2f}",
                            ng.value("scale_ups", size_t{0}), ng.value("scale_downs", size_t{0}),
                            ng.value("peak_nodes", 0), ng.value("node_hours", 0.0), ng.value("cost", 0.0))),
            "node_groups");
    g.add("Cost", html::escape(fmt::format("{:.2f}", s.value("cost", 0.0))), "cost");
  }
  if (s.value("interrupted", false))
    g.add("Interrupted", "<strong>yes: the figures cover only the part that ran</strong>", "interrupted");
  return g;
}

Group snapshot_group(const Json& s) {
  Group g{"Cluster snapshot", {}};
  if (!s.contains("snapshot") || !s["snapshot"].is_object()) return g;
  const Json& j = s["snapshot"];
  if (!text(j, "source").empty())
    g.add("File", "<code>" + html::escape(text(j, "source")) + "</code>", "snapshot.source", true);
  if (const auto n = count(j, "nodes")) {
    const auto added = count(j, "added_nodes").value_or(0);
    g.add("Nodes", html::escape(added ? fmt::format("{} ({} added)", *n, added) : std::to_string(*n)),
          "snapshot.nodes");
  }
  if (const auto n = count(j, "running_gpu_pods"))
    g.add("GPU pods running", std::to_string(*n), "snapshot.running_gpu_pods");
  if (const auto n = count(j, "queue"))
    g.add("Pods pending (the queue)", std::to_string(*n), "snapshot.queue");
  std::string skipped;
  if (j.contains("skipped") && j["skipped"].is_object())
    for (auto it = j["skipped"].begin(); it != j["skipped"].end(); ++it)
      if (it->is_number())
        skipped +=
            "<div>" + html::escape(plural(it->get<long long>(), "pod", "pods") + ": " + it.key()) + "</div>";
  if (!skipped.empty()) g.add("Pods skipped", skipped, "snapshot.skipped", true);
  if (j.contains("warnings") && j["warnings"].is_array())
    for (const auto& w : j["warnings"])
      if (w.is_string()) g.add("Warning", html::escape(w.get<std::string>()), "snapshot.warnings", true);
  return g;
}

Group pods_group(const RunResult& run) {
  const Json& s = run.summary;
  Group g{"Pods", {}};
  g.metric(s, "pods", "Arrived");
  if (const auto placed = headline_value(s, "placed")) {
    size_t at_once = 0, after = 0;
    for (const auto& p : run.pods)
      if (!p.starting && p.start >= 0) ++(p.start > p.arrival ? after : at_once);
    std::string value = format_headline(*find_headline_metric("placed"), *placed);
    if (at_once + after == static_cast<size_t>(*placed))
      value += fmt::format(" ({} at once, {} after waiting)", at_once, after);
    g.add("Placed", html::escape(value), "placements");
  }
  if (const auto refused = count(s, "refused"))
    g.add("Refused",
          html::escape(fmt::format("{} ({})", *refused,
                                   format_headline(*find_headline_metric("refused_pct"),
                                                   headline_value(s, "refused_pct").value_or(0)))),
          "refused");
  g.metric(s, "pending_at_end", "Still pending at the end");
  std::string reasons;
  if (s.contains("refusals_by_reason") && s["refusals_by_reason"].is_object())
    for (auto it = s["refusals_by_reason"].begin(); it != s["refusals_by_reason"].end(); ++it)
      if (it->is_number())
        reasons += "<div>" + html::escape(fmt::format("{} × {}", it->get<long long>(), it.key())) + "</div>";
  if (!reasons.empty()) g.add("Why not placed", reasons, "refusals_by_reason", true);
  if (const auto n = count(s, "preemptions"); n && *n > 0) {
    std::string value = fmt::format("{} (mode {})", *n, text(s, "preemption"));
    if (const auto lost = headline_value(s, "gpu_hours_lost_to_preemption"))
      value += fmt::format(", {:.2f} GPU hours lost", *lost);
    if (const auto ended = count(s, "preempted_not_running_again"); ended && *ended > 0)
      value += fmt::format(", {} never ran again", *ended);
    g.add("Preempted", html::escape(value), "preemptions, gpu_hours_lost_to_preemption", true);
  }
  return g;
}

Group waiting_group(const Json& s) {
  Group g{"Time pending", {}};
  g.metric(s, "p50_pending_s", "Median", "pending_seconds.p50");
  g.metric(s, "p95_pending_s", "95th percentile", "pending_seconds.p95");
  g.metric(s, "p99_pending_s", "99th percentile", "pending_seconds.p99");
  g.metric(s, "max_pending_s", "Longest", "pending_seconds.max");
  if (const auto waiting = count(s, "pending_includes_waiting"); waiting && *waiting > 0)
    g.add("Counting",
          html::escape(plural(*waiting, "pod", "pods") + " still waiting, with their wait so far"),
          "pending_includes_waiting");
  // By priority class, when priorities differ: what preemption trades.
  if (s.contains("pending_seconds_by_priority_class") && s["pending_seconds_by_priority_class"].is_object())
    for (auto it = s["pending_seconds_by_priority_class"].begin();
         it != s["pending_seconds_by_priority_class"].end(); ++it) {
      const Json& c = *it;
      if (!c.is_object() || !c.contains("p95") || !c["p95"].is_number() || !c["max"].is_number()) continue;
      g.add("Class " + html::escape(it.key()),
            html::escape(fmt::format("p95 {}, longest {} ({} placements)",
                                     human_duration(c["p95"].get<double>()),
                                     human_duration(c["max"].get<double>()), c.value("placements", 0))),
            "pending_seconds_by_priority_class", true);
    }
  return g;
}

// A percentage field with its peak (or its value at the end), "41.88 % (peak 79.18 %)".
std::string pct(double v) { return fmt::format("{:.2f} %", v); }

Group allocation_group(const Json& s) {
  Group g{"Fleet allocated", {}};
  auto number = [&](const std::string& key) -> std::optional<double> {
    return s.contains(key) && s[key].is_number() ? std::optional<double>(s[key].get<double>()) : std::nullopt;
  };
  for (const auto& [what, label] : {std::pair{"gpu", "GPU (milli-GPU)"}, std::pair{"memory", "Card memory"},
                                    std::pair{"cores", "Card cores"}}) {
    const std::string mean = fmt::format("alloc_{}_pct_time_weighted", what),
                      peak = fmt::format("peak_alloc_{}_pct", what),
                      end = fmt::format("final_alloc_{}_pct", what);
    if (const auto m = number(mean))
      g.add(std::string(label) + ", mean over time",
            html::escape(pct(*m) + (number(peak) ? " (peak " + pct(*number(peak)) + ")" : "")),
            mean + ", " + peak);
    else if (const auto e = number(end))
      g.add(std::string(label) + " at the end", html::escape(pct(*e)), end);
  }
  g.metric(s, "alloc_ratio_at_130_pct", "GPU at 130 % arrived demand");
  g.metric(s, "unallocated_gpus_at_130_pct", "GPUs unallocated at 130 % arrived");
  if (const auto f = number("final_frag_gpu_pct")) {
    const auto shapes = count(s, "typical_pod_shapes");
    g.add("GPU fragmented at the end",
          html::escape(pct(*f) +
                       (shapes ? fmt::format(" (for the run's {} typical pod shapes)", *shapes) : "")),
          "final_frag_gpu_pct");
  }
  return g;
}
}  // namespace

std::string summary_html(const RunResult& run) {
  const Json& s = run.summary;
  if (!s.is_object()) return "<p>summary.json holds no object.</p>\n";
  std::string html = "<div class=\"groups\">\n";
  for (const Group& g :
       {run_group(s), snapshot_group(s), pods_group(run), waiting_group(s), allocation_group(s)})
    html += g.html();
  html +=
      "</div>\n<p class=\"note\">Every figure, and more, is in <code>summary.json</code>; hover a row to see "
      "its field.</p>\n";
  return html;
}

}  // namespace gpuslice::sim
