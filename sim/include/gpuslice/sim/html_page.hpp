// What gpuslice's pages share (report.html, compare.html, the study's
// report.html, defrag's report.html): text made safe for HTML, and the page's frame: the style,
// the error hook the browser test reads, the chart sections, Chart.js, the
// page's data and scripts, all inlined (a page opens with no network).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace gpuslice::sim::html {

std::string escape(std::string_view s);

struct ChartSection {
  std::string id, title, note;
  std::string height = "320px";
};
std::string chart_section(const ChartSection& chart);

// <!doctype ...><body data-charts=N ...>, the error hook and the header.
// `charts` is how many canvases the page's script must draw (the browser
// test counts them); `page_style` follows the shared style.
std::string page_start(const std::string& title, const std::string& header_note_html, size_t charts,
                       std::string_view page_style = {});
// Chart.js, the data as JSON (id "report-data") and the shared script then
// `page_script`; closes the page.
std::string page_end(const nlohmann::ordered_json& data, std::string_view page_script);

}  // namespace gpuslice::sim::html
