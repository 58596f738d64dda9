#include "report_data.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <unordered_map>

#include "gpuslice/sim/timeline_columns.hpp"

namespace gpuslice::sim {

namespace {
using Json = nlohmann::ordered_json;

double round_to(double v, double step) { return std::round(v / step) * step; }

}  // namespace

double end_of(const RunResult& run) {
  double end = 0;
  for (const auto& t : run.timeline) end = std::max(end, t.time);
  for (const auto& c : run.card_use) end = std::max(end, c.time);
  return end;
}

// Every k-th record, and always the last: the series keep their shape and
// end where the run ends.
nlohmann::ordered_json sampled_timeline(const std::vector<TimelineRow>& rows, size_t limit) {
  const size_t stride = std::max<size_t>(1, (rows.size() + limit - 1) / std::max<size_t>(1, limit));
  Json out = {{"records", rows.size()}, {"stride", stride}};
  for (const auto& column : timeline_columns()) {
    if (!column.in_report) continue;
    Json series = Json::array();
    for (size_t i = 0; i < rows.size(); ++i) {
      if (i % stride != 0 && i + 1 != rows.size()) continue;
      if (column.count)
        series.push_back(rows[i].*column.count);
      else
        series.push_back(
            round_to(rows[i].*column.real, column.kind == TimelineColumn::Kind::Seconds ? 0.001 : 0.01));
    }
    out[std::string(column.name)] = std::move(series);
  }
  return out;
}

namespace {

// The unit a span of `seconds` reads best in, and its length in seconds.
std::pair<double, const char*> time_unit(double seconds) {
  if (seconds >= 2 * 86400) return {86400, "days"};
  if (seconds >= 2 * 3600) return {3600, "h"};
  if (seconds >= 120) return {60, "min"};
  return {1, "s"};
}

// Bins of a round width in the longest wait's unit (0.1, 0.2, 0.25, 0.5, 1,
// 2, 2.5, 5, 10 ... of it), as few as give at most `limit` bins, the longest
// wait inside the last one: each bin's start is then an exact label
// ("2.5 h", never "2.4999" shown as "2.5" twice). A handful of waits gets
// fewer, wider bins than thousands.
struct Bins {
  double width_seconds = 0;
  size_t count = 0;
  int decimals = 0;  // to write a bin's start in the unit
};
Bins round_bins(double longest, size_t waits, size_t limit) {
  Bins b;
  if (!(longest > 0) || limit == 0) return b;
  const auto [unit, name] = time_unit(longest);
  (void)name;
  const size_t wanted =
      std::clamp<size_t>(static_cast<size_t>(std::ceil(4 * std::sqrt(static_cast<double>(waits)))),
                         std::min<size_t>(8, limit), limit);
  const double span = longest / unit;
  for (int exponent = -3; exponent <= 12 && b.count == 0; ++exponent)
    for (const auto& [mantissa, digits] :
         {std::pair{1.0, 0}, std::pair{2.0, 0}, std::pair{2.5, 1}, std::pair{5.0, 0}}) {
      const double width = mantissa * std::pow(10.0, exponent);
      const double bins = std::floor(span / width + 1e-9) + 1;
      if (bins > static_cast<double>(wanted)) continue;
      b.width_seconds = width * unit;
      b.count = static_cast<size_t>(bins);
      b.decimals = std::max(0, digits - exponent);
      break;
    }
  return b;
}

// Waits of placed pods and, apart, of pods still waiting at the end (the
// wait so far). Pods placed at once are counted, not binned: they would
// dwarf every other bar. A snapshot's pods running before the run did not
// wait in it: they are not counted at all.
Json pending_histogram(const std::vector<PodRecord>& pods, double end, size_t limit) {
  std::vector<double> waited, still;
  size_t at_once = 0;
  for (const auto& p : pods) {
    if (p.starting) continue;
    if (p.start >= 0) {
      const double w = p.start - p.arrival;
      if (w > 1e-9)
        waited.push_back(w);
      else
        ++at_once;
    } else if (p.status == "pending") {
      still.push_back(std::max(0.0, end - p.arrival));
    }
  }
  double longest = 0;
  for (double w : waited) longest = std::max(longest, w);
  for (double w : still) longest = std::max(longest, w);
  const Bins bins = round_bins(longest, waited.size() + still.size(), limit);  // nobody waited: no bins
  std::vector<size_t> waited_bins(bins.count, 0), still_bins(bins.count, 0);
  auto bin_of = [&](double w) {
    return std::min(bins.count - 1, static_cast<size_t>(std::floor(w / bins.width_seconds + 1e-9)));
  };
  for (double w : waited) ++waited_bins[bin_of(w)];
  for (double w : still) ++still_bins[bin_of(w)];
  const auto [unit, unit_name] = time_unit(longest);
  Json labels = Json::array();
  for (size_t i = 0; i < bins.count; ++i)
    labels.push_back(
        fmt::format("{:.{}f}", static_cast<double>(i) * bins.width_seconds / unit, bins.decimals));
  return {{"placed_at_once", at_once},
          {"placed_after_waiting", waited.size()},
          {"still_waiting", still.size()},
          {"bin_seconds", bins.width_seconds},
          {"unit", unit_name},
          {"unit_seconds", unit},
          {"labels", labels},
          {"waited", waited_bins},
          {"still_waiting_bins", still_bins}};
}

// Card use (memory in use as a share of the card, or HAMi's core percent
// where a card's memory is not known) over time, as a grid of at most
// rows x columns: cards in the order they first held a slice, grouped; each
// cell the time-weighted mean over its cards and its time span.
Json card_heatmap(const RunResult& run, double end, const ReportLimits& limits) {
  std::unordered_map<uint64_t, size_t> index;
  std::vector<std::string> labels;
  bool by_memory = true;
  for (const auto& c : run.card_use) {
    const uint64_t key = (static_cast<uint64_t>(c.node) << 16) | static_cast<uint16_t>(c.card);
    if (index.emplace(key, labels.size()).second)
      labels.push_back((c.node < run.node_names.size() ? run.node_names[c.node] : std::to_string(c.node)) +
                       "/" + std::to_string(c.card));
    if (c.card_memory_mib <= 0) by_memory = false;
  }
  const size_t cards = labels.size();
  const size_t group =
      std::max<size_t>(1, (cards + limits.heatmap_rows - 1) / std::max<size_t>(1, limits.heatmap_rows));
  const size_t rows = (cards + group - 1) / group;
  const size_t cols = std::max<size_t>(1, limits.heatmap_columns);
  const double span = end > 0 ? end : 1;  // a run that ends at 0 s shows its final use
  const double width = span / static_cast<double>(cols);
  std::vector<double> area(rows * cols, 0);
  struct State {
    double since = 0, value = 0;
  };
  std::vector<State> state(cards);
  auto integrate = [&](size_t card, double until) {
    State& s = state[card];
    if (s.value > 0 && until > s.since) {
      const size_t row = card / group;
      size_t col = std::min(cols - 1, static_cast<size_t>(s.since / width));
      double from = s.since;
      while (from < until && col < cols) {
        const double to = col + 1 == cols ? until : std::min(until, static_cast<double>(col + 1) * width);
        area[row * cols + col] += s.value * (to - from);
        from = to;
        ++col;
      }
    }
    s.since = until;
  };
  for (const auto& c : run.card_use) {
    const size_t card = index[(static_cast<uint64_t>(c.node) << 16) | static_cast<uint16_t>(c.card)];
    integrate(card, c.time);
    state[card].value =
        by_memory ? 100.0 * static_cast<double>(c.used.memory_mib) / static_cast<double>(c.card_memory_mib)
                  : static_cast<double>(c.used.cores);
  }
  for (size_t card = 0; card < cards; ++card) integrate(card, span);
  Json values = Json::array(), row_labels = Json::array();
  for (size_t r = 0; r < rows; ++r) {
    const size_t first = r * group, in_row = std::min(group, cards - first);
    row_labels.push_back(in_row > 1 ? labels[first] + " +" + std::to_string(in_row - 1) : labels[first]);
    for (size_t c = 0; c < cols; ++c)
      values.push_back(std::lround(area[r * cols + c] / (static_cast<double>(in_row) * width)));
  }
  return {{"kept", !run.node_names.empty()},
          {"metric", by_memory ? "memory" : "cores"},
          {"cards", cards},
          {"cards_per_row", group},
          {"rows", rows},
          {"columns", cols},
          {"span_seconds", span},
          {"row_labels", row_labels},
          {"values", values}};
}

// Pods not placed, by the reason the simulator gave: refused, or still
// waiting at the end.
Json not_placed(const std::vector<PodRecord>& pods) {
  std::map<std::string, std::pair<size_t, size_t>> by_reason;
  for (const auto& p : pods) {
    if (p.status == "refused") ++by_reason[p.reason].first;
    if (p.status == "pending") ++by_reason[p.reason].second;
  }
  std::vector<std::pair<std::string, std::pair<size_t, size_t>>> sorted(by_reason.begin(), by_reason.end());
  std::stable_sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) {
    return a.second.first + a.second.second > b.second.first + b.second.second;
  });
  Json reasons = Json::array(), refused = Json::array(), waiting = Json::array();
  for (const auto& [reason, n] : sorted) {
    reasons.push_back(reason.empty() ? "(no reason given)" : reason);
    refused.push_back(n.first);
    waiting.push_back(n.second);
  }
  return {{"reasons", reasons}, {"refused", refused}, {"still_pending", waiting}};
}
}  // namespace

nlohmann::ordered_json report_data(const RunResult& run, const ReportLimits& limits) {
  const double end = end_of(run);
  Json data = {{"end_seconds", end},
               {"timeline", sampled_timeline(run.timeline, limits.time_points)},
               {"pending", pending_histogram(run.pods, end, limits.pending_bins)},
               {"heatmap", card_heatmap(run, end, limits)},
               {"not_placed", not_placed(run.pods)}};
  // Node groups: each group's size over time (summary.json keeps its changes),
  // held to the end of the run.
  const Json& s = run.summary;
  if (s.is_object() && s.contains("node_groups") && s["node_groups"].is_array()) {
    Json groups = Json::array();
    for (const auto& g : s["node_groups"]) {
      if (!g.contains("sizes")) continue;
      Json time = g["sizes"]["time"], nodes = g["sizes"]["nodes"];
      if (!nodes.empty() && time.back().get<double>() < end) {
        time.push_back(end);
        nodes.push_back(nodes.back());
      }
      groups.push_back(
          {{"name", g.value("name", "")}, {"time", std::move(time)}, {"nodes", std::move(nodes)}});
    }
    data["node_groups"] = std::move(groups);
  }
  return data;
}

}  // namespace gpuslice::sim
