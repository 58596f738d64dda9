#include "gpuslice/sim/html_page.hpp"

#include <fmt/format.h>

#include "gpuslice/sim/report_assets.hpp"

namespace gpuslice::sim::html {

namespace {
// JSON inside <script>: "</" would end the element early, so it is written
// "<\/" (the same string to a JSON reader).
std::string script_safe(const std::string& json) {
  std::string out;
  out.reserve(json.size() + 64);
  for (size_t i = 0; i < json.size(); ++i) {
    out += json[i];
    if (json[i] == '<' && i + 1 < json.size() && json[i + 1] == '/') out += '\\';
  }
  return out;
}
}  // namespace

std::string escape(std::string_view s) {
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

std::string chart_section(const ChartSection& c) {
  return fmt::format(
      "<section><h2>{}</h2><p class=\"note\" id=\"{}-note\">{}</p>\n"
      "<div class=\"chart\" style=\"height:{}\"><canvas id=\"{}\"></canvas></div></section>\n",
      escape(c.title), c.id, c.note, c.height, c.id);
}

std::string page_start(const std::string& title, const std::string& header_note_html, size_t charts,
                       std::string_view page_style) {
  std::string html = fmt::format(
      "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>{}</title>\n"
      "<style>\n{}{}</style>\n</head>\n<body data-charts=\"{}\" data-rendered=\"0\">\n",
      escape(title), report_assets::page_style(), page_style, charts);
  // First in the body, before any other script: an error anywhere leaves a
  // mark the browser test reads.
  html +=
      "<script>window.onerror = function (message, source, line) {\n"
      "  document.body.setAttribute('data-script-error', message + ' (line ' + line + ')');\n};</script>\n";
  html +=
      fmt::format("<header><h1>{}</h1><p class=\"note\">{}</p></header>\n", escape(title), header_note_html);
  return html;
}

std::string page_end(const nlohmann::ordered_json& data, std::string_view page_script) {
  std::string html;
  html.reserve(report_assets::chartjs().size() + 300000);
  html += "<script>\n";
  html += report_assets::chartjs();
  html += "\n</script>\n<script type=\"application/json\" id=\"report-data\">";
  html += script_safe(data.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace));
  html += "</script>\n<script>\n";
  html += report_assets::common_script();
  html += "\n";
  html += page_script;
  html += "\n</script>\n</body>\n</html>\n";
  return html;
}

}  // namespace gpuslice::sim::html
