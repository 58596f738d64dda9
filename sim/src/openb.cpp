#include "gpuslice/sim/openb.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>

#include "gpuslice/core/codec/manifest.hpp"
#include "gpuslice/core/errors.hpp"
#include "gpuslice/sim/csv_table.hpp"

namespace gpuslice::sim {

namespace {

using core::InputError;

int64_t number(const CsvTable& t, size_t row, int col, const std::string& source, bool allow_empty = false) {
  const std::string& s = t.rows[row][static_cast<size_t>(col)];
  if (s.empty() && allow_empty) return 0;
  int64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size() || v < 0)
    throw InputError(source, t.lines[row], t.header[static_cast<size_t>(col)],
                     fmt::format("'{}' is not a non-negative integer", s));
  return v;
}

std::vector<std::string> models_of(const std::string& spec) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos <= spec.size() && !spec.empty()) {
    size_t bar = spec.find('|', pos);
    std::string m = spec.substr(pos, bar == std::string::npos ? std::string::npos : bar - pos);
    if (!m.empty()) out.push_back(m);
    if (bar == std::string::npos) break;
    pos = bar + 1;
  }
  return out;
}

}  // namespace

int64_t openb_card_memory_mib(std::string_view model) {
  if (model == "V100M32" || model == "G2" || model == "G3") return 32768;
  if (model == "A10") return 24576;
  if (model == "T4" || model == "P100" || model == "V100M16" || model == "G1") return 16384;
  return 0;  // not an openb model: its memory is not known
}

std::string tune_problem(double tune) {
  if (!(tune > 0) || !(tune <= kMaxTune))
    return fmt::format("{} is not a tune factor: give a number above 0 and at most {} (the study uses 1.3)",
                       tune, kMaxTune);
  return {};
}

void require_gpu_demand(const Workload& trace, const std::string& source) {
  if (std::none_of(trace.begin(), trace.end(), [](const PodSpec& p) { return p.gpu_milli > 0; }))
    throw InputError(source, 0, "num_gpu",
                     "no pod asks for a GPU (num_gpu or gpu_milli is 0 on every row): the study's "
                     "resampling draws until GPU demand reaches tune x the fleet's GPUs, which these "
                     "pods never would");
}

core::Cluster load_openb_nodes(std::string_view csv, const std::string& source, int32_t slots) {
  const CsvTable t = read_csv_table(csv, source);
  const int sn = t.column("sn", source), cpu = t.column("cpu_milli", source),
            mem = t.column("memory_mib", source), gpu = t.column("gpu", source),
            model = t.column("model", source);
  core::Cluster cluster;
  for (size_t r = 0; r < t.rows.size(); ++r) {
    core::Node n;
    n.name = t.rows[r][static_cast<size_t>(sn)];
    n.model = t.rows[r][static_cast<size_t>(model)];
    n.capacity = {number(t, r, cpu, source), number(t, r, mem, source)};
    const int64_t gpus = number(t, r, gpu, source);
    if (gpus > 64) throw InputError(source, t.lines[r], "gpu", "more than 64 GPUs on one node");
    if (gpus > 0 && n.model.empty())
      throw InputError(source, t.lines[r], "model", "a GPU node needs a model");
    if (gpus > 0 && openb_card_memory_mib(n.model) == 0)
      throw InputError(
          source, t.lines[r], "model",
          fmt::format("unknown openb GPU model '{}' (A10, G1, G2, G3, P100, T4, V100M16, V100M32): "
                      "its card memory is not known",
                      n.model));
    if (std::string problem = core::codec::node_name_problem(n.name); !problem.empty())
      throw InputError(source, t.lines[r], "sn", problem);
    // "NVIDIA-<model>": openb's model names are not substrings of each other,
    // so gpu_spec maps to HAMi's use-gputype substring match exactly.
    for (int64_t i = 0; i < gpus; ++i)
      n.devices.push_back(core::healthy_card(fmt::format("{}-gpu{}", n.name, i), static_cast<int>(i),
                                             "NVIDIA-" + n.model, slots, openb_card_memory_mib(n.model)));
    if (cluster.find(n.name))
      throw InputError(source, t.lines[r], "sn", fmt::format("duplicate node '{}'", n.name));
    cluster.add_node(std::move(n));
  }
  return cluster;
}

Workload parse_openb_pods(std::string_view csv, const std::string& source, const OpenbOptions& options) {
  const CsvTable t = read_csv_table(csv, source);
  const int name = t.column("name", source), cpu = t.column("cpu_milli", source),
            mem = t.column("memory_mib", source), num = t.column("num_gpu", source),
            milli = t.column("gpu_milli", source), spec = t.column("gpu_spec", source, false),
            created = t.column("creation_time", source, false),
            deleted = t.column("deletion_time", source, false),
            qos = options.priority_by_qos.empty() ? -1 : t.column("qos", source);
  if (options.departures && (created < 0 || deleted < 0))
    throw InputError(source, 1, "creation_time", "departures need creation_time and deletion_time columns");
  Workload rows;
  for (size_t r = 0; r < t.rows.size(); ++r) {
    PodSpec p;
    p.request.name = t.rows[r][static_cast<size_t>(name)];
    p.request.host = {number(t, r, cpu, source), number(t, r, mem, source)};
    const int64_t gpus = number(t, r, num, source);
    const int64_t share = number(t, r, milli, source);
    if (share > 1000) throw InputError(source, t.lines[r], "gpu_milli", "more than 1000 milli of one GPU");
    if (gpus > 1 && share != 1000 && share != 0)
      throw InputError(source, t.lines[r], "gpu_milli", "a multi-GPU pod must take whole GPUs");
    core::ContainerRequest c;
    c.name = "main";
    if (gpus > 0 && share > 0) {
      c.count = static_cast<int32_t>(gpus);
      if (share >= 1000) {
        c.memory_percent = 100;
        c.cores = 100;
        p.kind = gpus > 1 ? "multi-gpu" : "whole-gpu";
      } else {
        // Memory and cores take the same whole percent, rounded down (at
        // least 1): then a card holds in two dimensions every set of shares
        // it holds in one (rounding memory up would turn three 333-milli
        // pods away from a card they fit).
        c.cores = static_cast<int32_t>(std::max<int64_t>(1, share / 10));
        c.memory_percent = c.cores;
        p.kind = "share";
      }
      p.gpu_milli = gpus * share;
      p.milli_from_trace = true;
    } else {
      p.kind = "cpu-only";
    }
    p.request.containers.push_back(c);
    if (spec >= 0) p.request.selectors.use_types = models_of(t.rows[r][static_cast<size_t>(spec)]);
    if (qos >= 0) {
      auto it = options.priority_by_qos.find(t.rows[r][static_cast<size_t>(qos)]);
      p.priority = it == options.priority_by_qos.end() ? options.other : it->second;
    }
    if (created >= 0 && deleted >= 0) {
      p.arrival = static_cast<double>(number(t, r, created, source, true));
      const double end = static_cast<double>(number(t, r, deleted, source, true));
      p.duration = options.departures && end > p.arrival ? end - p.arrival : kForever;
    }
    rows.push_back(std::move(p));
  }
  return rows;
}

Workload load_openb_pods(std::string_view csv, const std::string& source, const core::Cluster& fleet,
                         const OpenbOptions& options) {
  Workload rows = parse_openb_pods(csv, source, options);
  if (!options.resample) {
    std::stable_sort(rows.begin(), rows.end(),
                     [](const PodSpec& a, const PodSpec& b) { return a.arrival < b.arrival; });
    if (!options.departures)
      for (auto& p : rows) p.duration = kForever;
    return rows;
  }
  if (std::string problem = tune_problem(options.tune); !problem.empty())
    throw InputError(source, 0, "tune", problem);
  return study_workload(std::move(rows), fleet, options, source);
}

}  // namespace gpuslice::sim
