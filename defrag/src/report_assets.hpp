// The texts defrag's report.html inlines besides Chart.js (the simulator
// report's), compiled in from defrag/report/ at build time
// (defrag/CMakeLists.txt generates their definitions with cmake/EmbedTexts.cmake).
#pragma once

#include <string_view>

namespace gpuslice::defrag::report_assets {

std::string_view page_script();  // defrag/report/defrag.js
std::string_view page_style();   // defrag/report/defrag.css

}  // namespace gpuslice::defrag::report_assets
