// The figures a person reads first about a run, named once: report.html's
// summary, `gpuslice compare` (its table, compare.csv and the Python
// DataFrame) and `gpuslice plan`'s targets read them from summary.json
// through this table, so a run is judged the same way everywhere.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace gpuslice::sim {

struct HeadlineMetric {
  enum class Unit { Count, Percent, Seconds, Gpus, Hours, NodeHours, Money };
  // Which way is better, where it is a choice: allocation up, waits down.
  enum class Better { Lower, Higher, Neither };
  std::string_view key;    // compare.csv's column and plan's metric name
  std::string_view label;  // for people
  Unit unit;
  Better better;
};

// In compare.csv's order.
std::span<const HeadlineMetric> headline_metrics();
const HeadlineMetric* find_headline_metric(std::string_view key);

// The metric's value in a summary.json object; nullopt where the run has
// none (a departures run has no allocation at 130 % arrived).
std::optional<double> headline_value(const nlohmann::ordered_json& summary, std::string_view key);

// "41.88 %", "3.0 h", "1,234", "293.8 GPUs": the value as a person reads it.
std::string format_headline(const HeadlineMetric& metric, double value);

}  // namespace gpuslice::sim
