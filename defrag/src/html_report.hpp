// defrag's report.html: the answer, the moves and the targets' places,
// and card use before and after the plan on the nodes it touches; one
// self-contained page (Chart.js and the page's script inlined, no network).
#pragma once

#include <string>

#include "gpuslice/defrag/defrag.hpp"

namespace gpuslice::defrag {

std::string render_html(const DefragResult& result);

}  // namespace gpuslice::defrag
