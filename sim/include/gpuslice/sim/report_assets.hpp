// The texts report.html (and defrag's page) inline, compiled in from files at build time
// (sim/CMakeLists.txt generates their definitions with cmake/EmbedTexts.cmake).
#pragma once

#include <string_view>

namespace gpuslice::sim::report_assets {

std::string_view chartjs();         // Chart.js 3, the UMD build (Debian's libjs-chart.js)
std::string_view common_script();   // sim/report/common.js: before each page's own script
std::string_view page_script();     // sim/report/report.js
std::string_view compare_script();  // sim/report/compare.js
std::string_view study_script();    // sim/report/study.js
std::string_view page_style();      // sim/report/report.css

}  // namespace gpuslice::sim::report_assets
