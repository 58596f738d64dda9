#include "gpuslice/sim/html_report.hpp"

#include <fmt/format.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <optional>
#include <regex>

#include "gpuslice/sim/report.hpp"
#include "gpuslice/sim/report_assets.hpp"
#include "report_data.hpp"

namespace gpuslice::sim {

std::string escape_html(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string script_safe(std::string json) {
  for (size_t at = json.find("</"); at != std::string::npos; at = json.find("</", at + 3))
    json.insert(at + 1, "\\");
  return json;
}

namespace {
using Json = nlohmann::ordered_json;

// The unit a summary key's name gives its values (and its children's).
enum class Unit { None, Percent, Seconds, Mib, PerSecond };

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// The study's figures "at 130 % arrived" end in _at_130_pct whatever their
// unit: the stem says it (a ratio is in %, a count of GPUs is not).
struct AtArrived {
  std::string stem, percent;
};
std::optional<AtArrived> at_arrived(const std::string& key) {
  static const std::regex pattern("^(.+)_at_([0-9]+)_pct$");
  std::smatch m;
  if (!std::regex_match(key, m, pattern)) return std::nullopt;
  return AtArrived{m[1].str(), m[2].str()};
}

Unit unit_of(const std::string& key, Unit inherited) {
  if (auto a = at_arrived(key))
    return ends_with(a->stem, "ratio") || ends_with(a->stem, "_pct") ? Unit::Percent : Unit::None;
  // "alloc_gpu_pct_time_weighted": a percent, averaged over time.
  if (ends_with(key, "_pct") || ends_with(key, "_pct_time_weighted")) return Unit::Percent;
  if (ends_with(key, "_seconds") || key == "seconds") return Unit::Seconds;
  if (ends_with(key, "_mib")) return Unit::Mib;
  if (ends_with(key, "_per_second")) return Unit::PerSecond;
  return inherited;
}

// "final_alloc_gpu_pct" -> "Final alloc GPU": words, the unit left to the value.
std::string label_of(const std::string& key) {
  if (auto a = at_arrived(key)) return label_of(a->stem) + " at " + a->percent + " % arrived";
  std::string k = key;
  if (ends_with(k, "_pct_time_weighted")) k.replace(k.size() - 18, 4, "");  // "Alloc GPU time weighted"
  for (const char* tail : {"_pct", "_seconds", "_mib"})
    if (ends_with(k, tail) && k.size() > std::string(tail).size())
      k.resize(k.size() - std::string(tail).size());
  if (ends_with(key, "_seconds") && k.find('_') == std::string::npos)
    k += "_time";  // "wall_seconds": "Wall time"
  std::string out, word;
  auto flush = [&] {
    if (word.empty()) return;
    if (word == "gpu" || word == "cpu" || word == "fgd" || word == "hami" || word == "id")
      for (char& c : word) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    else if (word == "gpus")
      word = "GPUs";
    out += (out.empty() ? "" : " ") + word;
    word.clear();
  };
  for (char c : k) {
    if (c == '_')
      flush();
    else
      word += c;
  }
  flush();
  if (!out.empty()) out[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(out[0])));
  return out;
}

// 1234567 -> "1,234,567".
std::string grouped(long long v) {
  std::string digits = std::to_string(v < 0 ? -v : v), out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return (v < 0 ? "-" : "") + out;
}

std::string human_seconds(double s) {
  if (s < 120) return fmt::format("{:.3g} s", s);
  std::string human = s < 7200        ? fmt::format("{:.1f} min", s / 60)
                      : s < 2 * 86400 ? fmt::format("{:.1f} h", s / 3600)
                                      : fmt::format("{:.1f} days", s / 86400);
  return fmt::format("{} ({} s)", human, grouped(std::llround(s)));
}

std::string format_number(const Json& v, Unit unit) {
  const double d = v.get<double>();
  const bool integral = v.is_number_integer() || v.is_number_unsigned();
  switch (unit) {
    case Unit::Percent:
      return fmt::format("{:.2f} %", d);
    case Unit::Seconds:
      return human_seconds(d);
    case Unit::Mib:
      return d >= 10240 ? fmt::format("{:.1f} GiB", d / 1024)
                        : fmt::format("{} MiB", grouped(std::llround(d)));
    case Unit::PerSecond:
      return fmt::format("{} /s", grouped(std::llround(d)));
    case Unit::None:
      break;
  }
  if (integral)
    return grouped(v.is_number_unsigned() ? static_cast<long long>(v.get<uint64_t>()) : v.get<long long>());
  return std::abs(d) >= 1000 ? grouped(std::llround(d)) : fmt::format("{:.4g}", d);  // no 5.804e+04
}

std::string format_value(const Json& v, Unit unit) {
  if (v.is_null()) return "<span class=\"na\">n/a</span>";
  if (v.is_boolean()) return v.get<bool>() ? "yes" : "no";
  if (v.is_string()) return escape_html(v.get<std::string>());
  if (v.is_number()) return format_number(v, unit);
  if (v.is_array()) {
    size_t known = 0;
    for (const auto& e : v) known += e.is_null() ? 0 : 1;
    return fmt::format("<span class=\"na\">a list of {} values ({} known): see summary.json</span>", v.size(),
                       known);
  }
  return {};
}

std::string summary_table(const Json& object, Unit inherited);

std::string summary_row(const std::string& key, const Json& v, Unit inherited) {
  const Unit unit = unit_of(key, inherited);
  const std::string value =
      v.is_object() ? (v.empty() ? std::string("<span class=\"na\">none</span>") : summary_table(v, unit))
                    : format_value(v, unit);
  return fmt::format("<tr><th>{}<code>{}</code></th><td>{}</td></tr>\n", escape_html(label_of(key)),
                     escape_html(key), value);
}

// Every key of summary.json: scalars as rows, objects as tables inside
// their row, so the table fits whatever keys the run writes.
std::string summary_table(const Json& object, Unit inherited) {
  std::string html = "<table class=\"summary\">\n";
  for (auto it = object.begin(); it != object.end(); ++it)
    html += summary_row(it.key(), it.value(), inherited);
  return html + "</table>\n";
}

// The top level in two columns of about equal height (an object counts as
// its rows), so a long summary does not push the charts off the first screen.
std::string summary_columns(const Json& summary) {
  auto height = [](const Json& v) { return v.is_object() ? std::max<size_t>(1, v.size()) : size_t{1}; };
  size_t total = 0;
  for (const auto& v : summary) total += height(v);
  std::string left, right;
  size_t so_far = 0;
  for (auto it = summary.begin(); it != summary.end(); ++it) {
    (so_far * 2 < total ? left : right) += summary_row(it.key(), it.value(), Unit::None);
    so_far += height(it.value());
  }
  return "<div class=\"columns\"><table class=\"summary\">\n" + left + "</table><table class=\"summary\">\n" +
         right + "</table></div>\n";
}

struct Chart {
  const char* id;
  const char* title;
  const char* note;
  const char* height;
};

// The charts report.js draws, in page order.
constexpr Chart kCharts[] = {
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
}  // namespace

std::string render_report_html(const RunResult& run, const ReportLimits& limits) {
  const Json& s = run.summary;
  auto text = [&](const char* key) {
    return s.is_object() && s.contains(key) && s[key].is_string() ? s[key].get<std::string>() : std::string();
  };
  std::string title = "gpuslice simulation report";
  if (!text("scenario").empty()) title += ": " + text("scenario");
  if (!text("policy").empty()) title += " · " + text("policy");
  std::string html;
  html.reserve(report_assets::chartjs().size() + 400000);
  html += fmt::format(
      "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>{}</title>\n"
      "<style>\n{}</style>\n</head>\n<body data-charts=\"{}\" data-rendered=\"0\">\n",
      escape_html(title), report_assets::page_style(), std::size(kCharts));
  // First in the body, before any other script: an error anywhere leaves a
  // mark the browser test reads.
  html +=
      "<script>window.onerror = function (message, source, line) {\n"
      "  document.body.setAttribute('data-script-error', message + ' (line ' + line + ')');\n};</script>\n";
  html += fmt::format(
      "<header><h1>{}</h1><p class=\"note\">Written by gpuslice from this run's output files "
      "(summary.json, timeline.csv, pods.csv, card_use.csv); <code>gpuslice report DIR</code> "
      "writes it again. It needs no network.</p></header>\n",
      escape_html(title));
  html += "<section id=\"summary\"><h2>Summary</h2>\n";
  html += s.is_object() ? summary_columns(s) : std::string("<p>summary.json holds no object</p>\n");
  html += "</section>\n";
  for (const Chart& c : kCharts)
    html += fmt::format(
        "<section><h2>{}</h2><p class=\"note\" id=\"{}-note\">{}</p>\n"
        "<div class=\"chart\" style=\"height:{}\"><canvas id=\"{}\"></canvas></div></section>\n",
        c.title, c.id, c.note, c.height, c.id);
  html += "<script>\n";
  html += report_assets::chartjs();
  html += "\n</script>\n<script>\n";
  html += report_assets::chart_marks();
  html += "\n</script>\n<script type=\"application/json\" id=\"report-data\">";
  html += script_safe(report_data(run, limits).dump(-1, ' ', false, Json::error_handler_t::replace));
  html += "</script>\n<script>\n";
  html += report_assets::page_script();
  html += "\n</script>\n</body>\n</html>\n";
  return html;
}

void write_report(const RunResult& run, const std::string& dir) {
  const auto path = std::filesystem::path(dir) / "report.html";
  std::ofstream f(path, std::ios::binary);
  if (!f) throw OutputError(fmt::format("cannot write '{}'", path.string()));
  f << render_report_html(run);
  if (!f.flush()) throw OutputError(fmt::format("cannot write '{}'", path.string()));
}

}  // namespace gpuslice::sim
