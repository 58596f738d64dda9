#include "gpuslice/sim/study.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <charconv>
#include <exception>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <numeric>
#include <sstream>
#include <thread>

#include "gpuslice/core/codec/text_file.hpp"
#include "gpuslice/core/errors.hpp"
#include "gpuslice/core/policy.hpp"
#include "gpuslice/sim/memory_estimate.hpp"
#include "gpuslice/sim/openb.hpp"
#include "gpuslice/sim/simulator.hpp"

namespace gpuslice::sim {

namespace {

using core::InputError;

std::string read_file(const std::string& path, const std::string& field) {
  const core::codec::NamedAt named{"command line", 0, field};
  return core::codec::read_text_file(path, &named);
}

std::string stem(const std::string& path) { return std::filesystem::path(path).stem().string(); }

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, sep)) out.push_back(item);
  if (!s.empty() && s.back() == sep) out.emplace_back();
  return out;
}

uint64_t parse_u64(const std::string& s, const std::string& field) {
  uint64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || p != s.data() + s.size())
    throw InputError("command line", 0, field, fmt::format("'{}' is not a non-negative integer", s));
  return v;
}

}  // namespace

std::vector<uint64_t> parse_seed_list(const std::string& text, const std::string& field) {
  std::vector<uint64_t> seeds;
  for (const auto& part : split(text, ',')) {
    const auto dash = part.find('-');
    if (dash == std::string::npos) {
      seeds.push_back(parse_u64(part, field));
      continue;
    }
    const uint64_t from = parse_u64(part.substr(0, dash), field),
                   to = parse_u64(part.substr(dash + 1), field);
    if (to < from || to - from >= 100000)
      throw InputError("command line", 0, field,
                       fmt::format("'{}' is not a range of at most 100000 seeds", part));
    for (uint64_t s = from; s <= to; ++s) seeds.push_back(s);
  }
  if (seeds.empty()) throw InputError("command line", 0, field, "no seed given");
  return seeds;
}

std::vector<StudyRun> run_study(const std::string& nodes_csv, const std::vector<std::string>& pod_csvs,
                                const StudyOptions& options) {
  const auto known = core::policy_names();
  for (const auto& p : options.policies)
    if (std::find(known.begin(), known.end(), p) == known.end())
      throw InputError("command line", 0, "--policies", fmt::format("unknown policy '{}'", p));
  if (options.seeds.empty()) throw InputError("command line", 0, "--seeds", "no seed given");
  if (!(options.tune > 0 && options.tune <= 10))
    throw InputError("command line", 0, "--tune", "must be in (0, 10]");
  if (pod_csvs.empty()) throw InputError("command line", 0, "--openb-pods", "no pod list given");

  const core::Cluster fleet = load_openb_nodes(read_file(nodes_csv, "--openb-nodes"), nodes_csv);
  // Parse every trace once, up front: bad rows fail before any run, and
  // each run only reorders and resamples the parsed rows for its seed.
  std::vector<Workload> traces;
  for (const auto& path : pod_csvs) {
    traces.push_back(parse_openb_pods(read_file(path, "--openb-pods"), path, OpenbOptions{}));
    require_gpu_demand(traces.back(), path);
  }

  const size_t per_group = options.policies.size();
  const size_t groups = pod_csvs.size() * options.seeds.size();
  std::vector<StudyRun> runs(groups * per_group);
  std::atomic<size_t> next{0}, finished{0};
  std::exception_ptr failure;
  std::mutex failure_mutex;
  auto worker = [&] {
    for (size_t g; (g = next++) < groups;) {
      try {
        const size_t t = g / options.seeds.size();
        const uint64_t seed = options.seeds[g % options.seeds.size()];
        OpenbOptions o;
        o.tune = options.tune;
        o.seed = seed;
        const Workload w = study_workload(traces[t], fleet, o, pod_csvs[t]);
        const core::Cluster ordered = study_node_order(fleet, seed);

        for (size_t p = 0; p < per_group; ++p) {
          RunOptions ro;
          ro.policy = options.policies[p];
          ro.seed = seed;
          ro.card_use = false;
          ro.records = false;
          const RunResult r = simulate(ordered, w, ro, stem(pod_csvs[t]));
          StudyRun& out = runs[g * per_group + p];
          out.trace = std::filesystem::path(pod_csvs[t]).filename().string();
          out.policy = ro.policy;
          out.seed = seed;
          const auto& s = r.summary;
          out.alloc_130 =
              s["alloc_ratio_at_130_pct"].is_null() ? 0 : s["alloc_ratio_at_130_pct"].get<double>();
          out.unallocated_gpus_130 =
              s["unallocated_gpus_at_130_pct"].is_null() ? 0 : s["unallocated_gpus_at_130_pct"].get<double>();
          const auto& frag = s["frag_ratio_by_arrived_pct"];
          const auto& alloc = s["alloc_ratio_by_arrived_pct"];
          for (size_t x = 0; x < out.alloc.size(); ++x) {
            if (!alloc[x].is_null()) out.alloc[x] = alloc[x].get<double>();
            if (!frag[x].is_null()) out.frag[x] = frag[x].get<double>();
          }
          out.frag_130 = out.frag[130].value_or(0);
          out.wall_s = s["wall_seconds"].get<double>();
        }
        if (options.progress) options.progress(++finished, groups);
      } catch (...) {
        std::lock_guard lock(failure_mutex);
        if (!failure) failure = std::current_exception();
        next = groups;
      }
    }
  };
  unsigned jobs = options.jobs ? options.jobs : std::max(1u, std::thread::hardware_concurrency());
  jobs = static_cast<unsigned>(std::min<size_t>(jobs, groups));
  // Each worker holds one run at a time (no card use, no records).
  RunSize largest{0, fleet.size()};
  for (const auto& t : traces)
    largest.pods = std::max(largest.pods,
                            static_cast<size_t>(static_cast<double>(t.size()) * std::max(1.0, options.tune)));
  guard_run_memory(largest, false, jobs);
  std::vector<std::thread> threads;
  for (unsigned j = 1; j < jobs; ++j) threads.emplace_back(worker);
  worker();
  for (auto& th : threads) th.join();
  if (failure) std::rethrow_exception(failure);
  return runs;
}

namespace {

// One row of the artifact's analysis_*_discrete.csv: (workload, our policy
// name) and its values at 0..130 % arrived (empty cells: none).
struct PublishedRow {
  std::string workload, policy;
  std::array<std::optional<double>, 131> values{};
};

std::vector<PublishedRow> read_published(const std::string& path) {
  const std::string text = read_file(path, "--published");
  std::vector<PublishedRow> rows;
  std::stringstream ss(text);
  std::string line;
  int line_no = 0, workload = -1, policy = -1;
  std::array<int, 131> at{};
  at.fill(-1);
  size_t columns = 0;
  while (std::getline(ss, line)) {
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    const auto cells = split(line, ',');
    if (columns == 0) {
      columns = cells.size();
      for (size_t i = 0; i < cells.size(); ++i) {
        if (cells[i] == "workload") workload = static_cast<int>(i);
        if (cells[i] == "sc_policy") policy = static_cast<int>(i);
        for (size_t x = 0; x < at.size(); ++x)
          if (cells[i] == std::to_string(x)) at[x] = static_cast<int>(i);
      }
      if (workload < 0) throw InputError(path, line_no, "workload", "missing column");
      if (policy < 0) throw InputError(path, line_no, "sc_policy", "missing column");
      if (at[130] < 0) throw InputError(path, line_no, "130", "missing column");
      continue;
    }
    if (cells.size() != columns)
      throw InputError(path, line_no, "", fmt::format("{} cells, the header has {}", cells.size(), columns));
    PublishedRow row;
    row.workload = cells[static_cast<size_t>(workload)];
    // "06-FGD" -> "fgd"
    std::string name = cells[static_cast<size_t>(policy)];
    name = name.substr(name.find('-') == std::string::npos ? 0 : name.find('-') + 1);
    std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
    row.policy = name;
    for (size_t x = 0; x < at.size(); ++x) {
      if (at[x] < 0) continue;
      const std::string& v = cells[static_cast<size_t>(at[x])];
      if (v.empty()) continue;
      double value = 0;
      auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), value);
      if (ec != std::errc() || p != v.data() + v.size())
        throw InputError(path, line_no, std::to_string(x), fmt::format("'{}' is not a number", v));
      row.values[x] = value;
    }
    if (!row.values[130]) throw InputError(path, line_no, "130", "empty");
    rows.push_back(std::move(row));
  }
  if (columns == 0) throw InputError(path, 0, "", "empty file");
  return rows;
}

}  // namespace

std::string trace_stem(const std::string& trace) { return std::filesystem::path(trace).stem().string(); }

std::vector<StudyCell> study_cells(
    const std::vector<StudyRun>& runs,
    const std::map<std::pair<std::string, std::string>, std::vector<double>>& published) {
  std::vector<StudyCell> cells;
  std::map<std::pair<std::string, std::string>, std::vector<double>> values;
  for (const auto& r : runs) {
    auto& v = values[{r.trace, r.policy}];
    if (v.empty()) {
      StudyCell c;
      c.trace = r.trace;
      c.policy = r.policy;
      cells.push_back(std::move(c));
    }
    v.push_back(r.alloc_130);
  }
  for (auto& c : cells) {
    const auto& v = values[{c.trace, c.policy}];
    c.runs = v.size();
    c.mean = std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
    const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
    c.min = *lo;
    c.max = *hi;
    const auto it = published.find({trace_stem(c.trace), c.policy});
    if (it != published.end() && !it->second.empty())
      c.published =
          std::accumulate(it->second.begin(), it->second.end(), 0.0) / static_cast<double>(it->second.size());
  }
  return cells;
}

std::map<std::pair<std::string, std::string>, std::vector<double>> load_published(const std::string& path) {
  std::map<std::pair<std::string, std::string>, std::vector<double>> out;
  for (const auto& row : read_published(path)) out[{row.workload, row.policy}].push_back(*row.values[130]);
  return out;
}

std::map<std::pair<std::string, std::string>, std::array<std::optional<double>, 131>> load_published_curves(
    const std::string& path) {
  std::map<std::pair<std::string, std::string>, std::array<std::pair<double, int>, 131>> sums;
  for (const auto& row : read_published(path)) {
    auto& s = sums[{row.workload, row.policy}];
    for (size_t x = 0; x < row.values.size(); ++x)
      if (row.values[x]) {
        s[x].first += *row.values[x];
        ++s[x].second;
      }
  }
  std::map<std::pair<std::string, std::string>, std::array<std::optional<double>, 131>> out;
  for (const auto& [key, s] : sums)
    for (size_t x = 0; x < s.size(); ++x)
      if (s[x].second > 0) out[key][x] = s[x].first / s[x].second;
  return out;
}

}  // namespace gpuslice::sim
