// Prometheus's text exposition format (0.0.4), as client_golang writes it:
// the one writer for `gpuslice serve`'s and `gpuslice monitor`'s /metrics.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gpuslice::serve {

// A label value with backslash, double quote and newline escaped.
std::string prometheus_label_value(std::string_view v);

// A sample value as Go's strconv.FormatFloat(v, 'g', -1, 64) writes it
// (client_golang's choice): "0", "30", "1.073741824e+09", "NaN", "+Inf".
std::string prometheus_number(double v);

// One metric family: HELP and TYPE, then its samples sorted as
// client_golang's registry sorts them (by label values in label-name order).
struct PrometheusFamily {
  std::string name, help, type = "gauge";
  struct Sample {
    std::vector<std::pair<std::string, std::string>> labels;  // any order; written sorted by name
    double value = 0;
  };
  std::vector<Sample> samples;
  void add(std::vector<std::pair<std::string, std::string>> labels, double value) {
    samples.push_back({std::move(labels), value});
  }
};

// The families in name order, each skipped when it has no sample (as
// client_golang skips them).
std::string render_prometheus(std::vector<PrometheusFamily> families);

}  // namespace gpuslice::serve
