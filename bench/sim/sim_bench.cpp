// Simulator benchmarks (figures for docs/simulator.md, not tests):
//
//   sim_bench openb [policy...]      the study's openb default replay at tune 1.3, seed 42,
//                                    best of 3 runs per policy (default: all eight); the
//                                    last column compares with the study's artifact, which
//                                    took 2,620 s for one FGD run on this kind of machine
//   sim_bench synthetic [nodes] [pods]
//                                    a generated stream with departures on a fleet of
//                                    2-card nodes, HAMi binpack (default 100000 nodes,
//                                    1000000 pods); prints wall time and peak memory
//   sim_bench scaling                synthetic runs over a grid of nodes x pods
//   sim_bench autoscale [policy] [runs]
//                                    scenarios/openb-autoscale.yaml: 30 simulated days of
//                                    openb's pod shapes at a diurnal rate on two node groups
//                                    of up to 1,000 nodes each (Cluster Autoscaler); the
//                                    median wall time of `runs` runs (default 3) and the run's
//                                    pods, scale-ups, scale-downs, peak nodes and cost
//   sim_bench preemption [runs]      scenarios/openb-priorities.yaml (openb with three priority
//                                    classes) with --preemption off and hami-aware, in turn,
//                                    `runs` times each (default 11): the median of each mode's
//                                    loop and of its whole run as the command makes it (read the
//                                    scenario and trace, simulate, write the outputs and the
//                                    report), and the medians of the pairs' ratios (issue 34's
//                                    goal: at most 1.5x)
//   sim_bench study [dir] [jobs]     the study's grid: every openb_pod_list_*.csv in dir
//                                    (default: the shipped data) x 6 policies x seeds 42-51,
//                                    on all cores (or jobs); wall time of the grid and the
//                                    mean wall time per run of each policy
//
// Wall time covers the event loop (what summary.json's wall_seconds reports);
// building the workload and writing outputs are timed apart.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "child_process.hpp"
#include "gpuslice/core/policy.hpp"
#include "gpuslice/sim/html_report.hpp"
#include "gpuslice/sim/openb.hpp"
#include "gpuslice/sim/report.hpp"
#include "gpuslice/sim/scenario.hpp"
#include "gpuslice/sim/simulator.hpp"
#include "gpuslice/sim/study.hpp"
#include "measure.hpp"

using namespace gpuslice::sim;

namespace {

using gpuslice::bench::peak_rss_mib;
using gpuslice::bench::seconds_since;

int openb(std::vector<std::string> policies) {
  const std::string dir = GPUSLICE_OPENB_DIR;
  const Scenario s = openb_scenario(dir + "/openb_node_list_gpu_node.csv",
                                    dir + "/openb_pod_list_default.csv", OpenbOptions{});
  const Workload w = materialize(s, 42);
  if (policies.empty())
    policies = {"hami-binpack", "hami-spread",   "random",  "dotprod",
                "gpupacking",   "gpuclustering", "bestfit", "fgd"};
  fmt::print("openb default, tune 1.3, seed 42: {} nodes, {} pods (best of 3)\n", s.fleet.size(), w.size());
  fmt::print("{:<14} {:>9} {:>10} {:>9} {:>12}\n", "policy", "wall s", "pods/s", "alloc130", "vs artifact");
  for (const auto& p : policies) {
    RunOptions o;
    o.policy = p;
    o.seed = 42;
    o.card_use = false;
    double best = 1e300;
    RunResult r;
    for (int i = 0; i < 3; ++i) {
      r = simulate(study_node_order(s.fleet, 42), w, o, "openb");
      best = std::min(best, r.summary["wall_seconds"].get<double>());
    }
    fmt::print("{:<14} {:>9.3f} {:>10.0f} {:>8.2f}% {:>11.0f}x\n", p, best,
               static_cast<double>(w.size()) / best, r.summary["alloc_ratio_at_130_pct"].get<double>(),
               2620.0 / best);
  }
  return 0;
}

int study(const std::string& dir, unsigned jobs) {
  std::vector<std::string> traces;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    if (name.rfind("openb_pod_list_", 0) == 0 && e.path().extension() == ".csv")
      traces.push_back(e.path().string());
  }
  std::sort(traces.begin(), traces.end());
  StudyOptions o;
  o.jobs = jobs;
  const auto t0 = std::chrono::steady_clock::now();
  const auto runs = run_study(dir + "/openb_node_list_gpu_node.csv", traces, o);
  const double wall = seconds_since(t0);
  fmt::print(
      "study grid: {} traces x {} policies x {} seeds = {} runs in {:.1f} s wall ({} jobs; {:.3f} s per "
      "run)\n",
      traces.size(), o.policies.size(), o.seeds.size(), runs.size(), wall,
      jobs ? jobs : std::max(1u, std::thread::hardware_concurrency()),
      wall / static_cast<double>(runs.size()));
  std::map<std::string, std::pair<double, size_t>> per_policy;
  for (const auto& r : runs) {
    per_policy[r.policy].first += r.wall_s;
    ++per_policy[r.policy].second;
  }
  fmt::print("{:<14} {:>14}\n", "policy", "mean run s");
  for (const auto& p : o.policies)
    fmt::print("{:<14} {:>14.3f}\n", p, per_policy[p].first / static_cast<double>(per_policy[p].second));
  return 0;
}

// 2-card L40S nodes; arrivals at 100 pods/s, mean duration 3,300 s: about
// 330,000 pods live, about 95% of the GPUs: the fleet fills, some pods wait.
std::string synthetic_yaml(size_t nodes, size_t pods) {
  return fmt::format(R"(name: synthetic
policy: hami-binpack
queue: fifo
fleet:
- template: {{name: n, model: NVIDIA L40S, cards: 2, card_memory_mib: 46068, slots: 10, cpu_milli: 64000, memory_mib: 524288}}
  count: {}
templates:
  small: {{gpu: 1, gpumem: 10000, gpucores: 25, cpu: "2", memory: 8Gi}}
  medium: {{gpu: 1, gpumem: 20000, gpucores: 50, cpu: "4", memory: 32Gi}}
  whole: {{gpu: 1, cpu: "8", memory: 64Gi}}
  pair: {{gpu: 2, cpu: "16", memory: 128Gi}}
generator:
  pods: {}
  arrival: poisson
  rate_per_s: {}
  duration: exponential
  mean_s: 3300
  mix:
  - {{template: small, weight: 5}}
  - {{template: medium, weight: 3}}
  - {{template: whole, weight: 1}}
  - {{template: pair, weight: 1}}
)",
                     nodes, pods, 100.0 * static_cast<double>(nodes) / 100000.0);
}

struct SyntheticFigures {
  double build_s = 0, run_s = 0, rss_mib = 0;
  size_t placed = 0, failed = 0;
  double final_alloc = 0, p95_pending = 0;
};

SyntheticFigures synthetic(size_t nodes, size_t pods) {
  SyntheticFigures f;
  auto t0 = std::chrono::steady_clock::now();
  const Scenario s = parse_scenario(synthetic_yaml(nodes, pods), "synthetic", ".");
  const Workload w = materialize(s, 42);
  f.build_s = seconds_since(t0);
  RunOptions o;
  o.policy = "hami-binpack";
  o.card_use = false;
  const RunResult r = simulate(s.fleet, w, o, "synthetic");
  f.run_s = r.summary["wall_seconds"].get<double>();
  f.rss_mib = peak_rss_mib();
  f.placed = r.summary["placements"].get<size_t>();
  f.failed = r.summary["failed"].get<size_t>();
  f.final_alloc = r.summary["peak_alloc_gpu_pct"].get<double>();
  f.p95_pending = r.summary["pending_seconds"]["p95"].get<double>();
  return f;
}

void print_synthetic_header() {
  fmt::print("{:>8} {:>9} {:>8} {:>8} {:>10} {:>9} {:>9} {:>9}\n", "nodes", "pods", "build s", "run s",
             "pods/s", "peak GPU", "p95 wait", "RSS MiB");
}

int autoscale(const std::string& policy, int runs) {
  Scenario s = load_scenario(std::string(GPUSLICE_SOURCE_DIR) + "/scenarios/openb-autoscale.yaml");
  RunOptions o;
  o.policy = policy;
  o.queue = s.queue;
  o.seed = 42;
  o.card_use = false;
  o.records = false;
  std::vector<double> walls;
  RunResult r;
  for (int i = 0; i < runs; ++i) {
    r = simulate(s, o);
    walls.push_back(r.summary["wall_seconds"].get<double>());
  }
  std::sort(walls.begin(), walls.end());
  const auto& sm = r.summary;
  fmt::print(
      "openb-autoscale, {}: {} pods over {}, median wall {:.2f} s of {} runs (min {:.2f}, max {:.2f})\n",
      policy, sm["pods"].get<size_t>(), sm["simulated_time"].get<std::string>(), walls[walls.size() / 2],
      runs, walls.front(), walls.back());
  for (const auto& g : sm["node_groups"])
    fmt::print("  {:<4} {:>5} scale-ups {:>5} scale-downs peak {:>4} nodes {:>9.1f} node-hours cost {:.2f}\n",
               g["name"].get<std::string>(), g["scale_ups"].get<size_t>(), g["scale_downs"].get<size_t>(),
               g["peak_nodes"].get<int>(), g["node_hours"].get<double>(), g["cost"].get<double>());
  fmt::print("  cost {:.2f}, p95 pending {:.0f} s, peak RSS {:.0f} MiB\n", sm["cost"].get<double>(),
             sm["pending_seconds"]["p95"].get<double>(), peak_rss_mib());
  return 0;
}

// One run as `gpuslice simulate` makes it, in this process: the loop's
// wall time, and the whole of reading, running and writing (no process
// start or exit).
struct InProcessRun {
  double loop_s = 0, read_run_write_s = 0;
};

InProcessRun in_process_run(const std::string& scenario, Preemption mode, const std::string& out) {
  const auto t0 = std::chrono::steady_clock::now();
  const Scenario s = load_scenario(scenario);
  RunOptions o = scenario_options(s);
  o.preemption = mode;
  const RunResult r = simulate(s, o);
  write_outputs(r, out);
  write_report(r, out);
  return {r.summary["wall_seconds"].get<double>(), seconds_since(t0)};
}

// The command itself, a child process as a shell runs it (its output
// dropped); a failed run stops the bench.
gpuslice::bench::ChildFigures process_run(const std::vector<std::string>& argv) {
  const gpuslice::bench::ChildFigures f = gpuslice::bench::run_child(argv, "/dev/null", "/dev/null");
  if (f.status != 0)
    throw std::runtime_error(fmt::format("{} failed (status {})", fmt::join(argv, " "), f.status));
  return f;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// A figure of both modes, pair by pair.
struct PairedFigure {
  explicit PairedFigure(std::string figure) : name(std::move(figure)) {}
  std::string name;
  std::vector<double> off, on, ratio;
  void add(double off_s, double on_s) {
    off.push_back(off_s);
    on.push_back(on_s);
    ratio.push_back(on_s / off_s);
  }
  void print() const {
    fmt::print("{:<30} {:>8.4f} {:>12.4f} {:>7.2f}x\n", name, median(off), median(on), median(ratio));
  }
};

int preemption(int runs) {
  const std::string scenario = std::string(GPUSLICE_SOURCE_DIR) + "/scenarios/openb-priorities.yaml";
  const std::string out = (std::filesystem::temp_directory_path() / "gpuslice-sim-bench-preemption").string();
  // The gpuslice executable built beside this benchmark, if any.
  const std::string gpuslice =
      (std::filesystem::read_symlink("/proc/self/exe").parent_path() / "gpuslice").string();
  const bool has_command = std::filesystem::exists(gpuslice);
  auto command = [&](Preemption mode) {
    return process_run({gpuslice, "simulate", scenario, "--preemption", std::string(preemption_name(mode)),
                        "--out", out, "--quiet"});
  };
  PairedFigure loop{"loop (the wall time it prints)"}, in_process{"read, run, write (in process)"},
      command_cpu{"gpuslice simulate, CPU"}, command_wall{"gpuslice simulate, wall"};
  in_process_run(scenario, Preemption::Off, out);  // warm: the trace read once before timing
  for (int i = 0; i < runs; ++i) {
    const InProcessRun off = in_process_run(scenario, Preemption::Off, out);
    const InProcessRun on = in_process_run(scenario, Preemption::HamiAware, out);
    loop.add(off.loop_s, on.loop_s);
    in_process.add(off.read_run_write_s, on.read_run_write_s);
    if (has_command) {
      const auto off_command = command(Preemption::Off);
      const auto on_command = command(Preemption::HamiAware);
      command_cpu.add(off_command.cpu_s, on_command.cpu_s);
      command_wall.add(off_command.wall_s, on_command.wall_s);
    }
  }
  std::filesystem::remove_all(out);
  fmt::print("openb-priorities, hami-binpack, seed 42: {} pairs in turn, medians (ratio: of the pairs')\n",
             runs);
  fmt::print("{:<30} {:>8} {:>12} {:>8}\n", "", "off s", "hami-aware s", "ratio");
  loop.print();
  in_process.print();
  if (has_command) {
    command_cpu.print();
    command_wall.print();
  } else {
    fmt::print("(no {} beside this benchmark: the command's own rows are left out)\n", gpuslice);
  }
  return 0;
}

void print_synthetic(size_t nodes, size_t pods, const SyntheticFigures& f) {
  fmt::print("{:>8} {:>9} {:>8.2f} {:>8.2f} {:>10.0f} {:>8.1f}% {:>8.0f}s {:>9.0f}\n", nodes, pods, f.build_s,
             f.run_s, static_cast<double>(pods) / f.run_s, f.final_alloc, f.p95_pending, f.rss_mib);
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const std::string mode = argc > 1 ? argv[1] : "openb";
    if (mode == "openb") return openb(std::vector<std::string>(argv + std::min(argc, 2), argv + argc));
    if (mode == "study") {
      std::string dir = GPUSLICE_OPENB_DIR;
      if (std::filesystem::exists(std::string(GPUSLICE_SOURCE_DIR) + "/../shared/data/openb"))
        dir = std::string(GPUSLICE_SOURCE_DIR) + "/../shared/data/openb";
      if (argc > 2) dir = argv[2];
      return study(dir, argc > 3 ? static_cast<unsigned>(std::stoul(argv[3])) : 0u);
    }
    if (mode == "preemption") return preemption(argc > 2 ? std::stoi(argv[2]) : 11);
    if (mode == "autoscale")
      return autoscale(argc > 2 ? argv[2] : "hami-binpack", argc > 3 ? std::stoi(argv[3]) : 3);
    if (mode == "synthetic") {
      const size_t nodes = argc > 2 ? std::stoul(argv[2]) : 100000;
      const size_t pods = argc > 3 ? std::stoul(argv[3]) : 1000000;
      print_synthetic_header();
      print_synthetic(nodes, pods, synthetic(nodes, pods));
      return 0;
    }
    if (mode == "scaling") {
      // Peak RSS only grows within a process: read the memory column from
      // `synthetic` runs, one per process.
      print_synthetic_header();
      for (size_t nodes : {1000, 10000, 100000}) print_synthetic(nodes, 100000, synthetic(nodes, 100000));
      for (size_t pods : {10000, 100000, 1000000}) {
        const size_t nodes = pods / 10;  // constant load: the fleet grows with the stream
        print_synthetic(nodes, pods, synthetic(nodes, pods));
      }
      return 0;
    }
    fmt::print(
        stderr,
        "usage: sim_bench openb [policy...] | synthetic [nodes] [pods] | scaling | study [dir] [jobs] | "
        "autoscale [policy] [runs] | preemption [runs]\n");
    return 2;
  } catch (const std::exception& e) {
    fmt::print(stderr, "sim_bench: {}\n", e.what());
    return 1;
  }
}
