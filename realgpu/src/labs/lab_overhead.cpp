// What the shim costs (no seed document; HAMi-core's PR #155 measured its
// libvgpu.so at 12.7 ms against 0.59 ms without, per 256 MiB allocation with
// 8 processes at once). Only a GPU's figures mean anything: on the fake
// driver the rows are skipped unless asked for (--overhead on), and then
// they are information, not verdicts.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>

#include "gpuslice/realgpu/call_overhead.hpp"
#include "labs_bench.hpp"

namespace gpuslice::realgpu::labs {

namespace {

struct Timings {
  double bare = 0, ours = 0;
  std::optional<double> other;  // HAMi-core's libvgpu.so
};

// Best of three runs of each (noise only ever adds time).
Timings best_of_three(const Bench& b, int processes, const std::vector<std::string>& args) {
  const CallTiming setup{b.toolkit(), b.options().compare_libvgpu, 600};
  Timings t{1e300, 1e300, std::nullopt};
  for (int i = 0; i < 3; ++i) {
    t.bare = std::min(t.bare, mean_ns_per_call(setup, Preload::None, processes, args));
    t.ours = std::min(t.ours, mean_ns_per_call(setup, Preload::Shim, processes, args));
    if (!setup.other_library.empty())
      t.other = std::min(t.other.value_or(1e300), mean_ns_per_call(setup, Preload::Other, processes, args));
  }
  return t;
}

std::string timings_text(const Timings& t, double scale, const char* unit) {
  std::string s = fmt::format("without {:.2f} {}, gpuslice {:.2f} {} ({:+.2f})", t.bare / scale, unit,
                              t.ours / scale, unit, (t.ours - t.bare) / scale);
  if (t.other)
    s += fmt::format(", libvgpu.so {:.2f} {} ({:+.2f})", *t.other / scale, unit, (*t.other - t.bare) / scale);
  return s;
}

nlohmann::json timings_json(const Timings& t) {
  nlohmann::json j = {{"without_ns", t.bare}, {"gpuslice_ns", t.ours}};
  if (t.other) j["libvgpu_ns"] = *t.other;
  return j;
}

}  // namespace

void lab_overhead(Bench& b) {
  b.begin_lab(
      {"overhead", "What the shim adds",
       "HAMi-core PR #155: 256 MiB cuMemAlloc with 8 processes, 12.7 ms with libvgpu.so vs 0.59 ms without",
       ""},
      SeedCard{"NVIDIA H100 80GB HBM3", 81559, 132, 0});
  const auto& o = b.options();
  const bool run = o.overhead == OverheadRows::On || (o.overhead == OverheadRows::Auto && !b.fake());
  // On the fake a call costs what the fake spends, not what a GPU does.
  const bool judge = !b.fake();
  auto row = [&](std::string step, std::string title, std::string criteria, std::string seed) {
    LabRow r = b.row(std::move(step), std::move(title), std::move(criteria), std::move(seed));
    r.workload = "gpuslice-probe time";
    return r;
  };
  auto verdict = [&](LabRow& r, bool ok, std::string why) {
    r.status = !judge ? RowStatus::Info : ok ? RowStatus::Pass : RowStatus::Fail;
    if (!judge)
      r.why = "fake driver: its own call costs, not a GPU's";
    else if (!ok)
      r.why = std::move(why);
  };
  auto skipped = [&](LabRow& r) {
    if (run) return false;
    r.status = RowStatus::Skip;
    r.why =
        o.overhead == OverheadRows::Off
            ? "--overhead off"
            : "only meaningful on a GPU: the fake driver's call costs are its own (--overhead on runs them)";
    return true;
  };
  const std::string launches = std::to_string(o.launches), allocs = std::to_string(o.allocs);

  // The three call timings: the probe's `time`, without and with the shim.
  struct Timed {
    std::string step, title, criteria, seed;
    int processes;
    std::vector<std::string> probe_args;
    double scale;  // ns per unit shown
    const char* unit;
    std::function<bool(const Timings&)> ok;
    std::string why;
  };
  const std::vector<std::string> alloc_args{"time", "--op", "alloc", "--count", allocs, "--chunk-mib", "256"};
  const std::vector<Timed> timed{
      {"1",
       fmt::format("cuLaunchKernel, empty kernel, {} launches", launches),
       "adds at most 1 us per launch (no compute limit)",
       "not reported",
       1,
       {"time", "--op", "launch", "--count", launches},
       1,
       "ns",
       [](const Timings& t) { return t.ours - t.bare <= 1000; },
       "adds more than 1 us per launch"},
      {"2", "cuMemAlloc 256 MiB, 1 process", "adds at most half the driver's own time, or 20 us",
       "not reported", 1, alloc_args, 1e3, "us",
       [](const Timings& t) { return t.ours - t.bare <= std::max(0.5 * t.bare, 20e3); },
       "adds more than half the driver's time"},
      {"3", "cuMemAlloc 256 MiB, 8 processes at once", "at most twice the time without the shim",
       "libvgpu.so 12.7 ms vs 0.59 ms without (21.5 x)", 8, alloc_args, 1e3, "us",
       [](const Timings& t) { return t.ours <= 2 * t.bare; }, "more than twice the time without the shim"}};
  for (const Timed& step : timed)
    b.step(row(step.step, step.title, step.criteria, step.seed), [&](LabRow& r) {
      if (skipped(r)) return;
      const Timings t = best_of_three(b, step.processes, step.probe_args);
      r.ours = timings_text(t, step.scale, step.unit);
      r.figures = timings_json(t);
      verdict(r, step.ok(t), step.why);
    });

  auto training_env = [&](const std::string& name, int cores, bool other) {
    auto env = b.slice(name, b.card().mib(), cores, cores > 0 ? "force" : "default");
    if (other) env["LD_PRELOAD"] = o.compare_libvgpu;
    return env;
  };
  b.step(
      row("4", "Training step, slice without a compute cap", "at most 5% slower than without the shim",
          "not reported"),
      [&](LabRow& r) {
        r.workload = b.workload();
        if (skipped(r)) return;
        const ComputeRun& bare = b.bare();
        const ComputeRun ours = b.train(training_env("ovh-nocap", 0, false));
        const double slowdown = ours.step_seconds / bare.step_seconds;
        r.ours = fmt::format("step {:.4f} s without, {:.4f} s with gpuslice (x{:.3f})", bare.step_seconds,
                             ours.step_seconds, slowdown);
        r.figures = {{"bare_step_seconds", bare.step_seconds}, {"gpuslice_step_seconds", ours.step_seconds}};
        if (!o.compare_libvgpu.empty()) {
          const ComputeRun other = b.train(training_env("ovh-nocap-libvgpu", 0, true));
          r.ours += fmt::format(", {:.4f} s with libvgpu.so (x{:.3f})", other.step_seconds,
                                other.step_seconds / bare.step_seconds);
          r.figures["libvgpu_step_seconds"] = other.step_seconds;
        }
        verdict(r, slowdown <= 1.05, fmt::format("x{:.3f} slower", slowdown));
      });
  b.step(row("5", "Training step at gpucores 30 (force)",
             "information: a loop that keeps the card U% busy alone should take about U/30 times as long",
             "not reported"),
         [&](LabRow& r) {
           r.workload = b.workload();
           if (skipped(r)) return;
           const ComputeRun& bare = b.bare();
           const ComputeRun ours = b.train(training_env("ovh-cores30", 30, false));
           const std::string expectation =
               std::isnan(bare.mean_util)
                   ? std::string("no utilisation sample of the loop alone")
                   : fmt::format("the loop alone kept the card {:.1f}% busy: x{:.2f} expected",
                                 bare.mean_util, bare.mean_util / 30);
           r.ours = fmt::format("step {:.4f} s without, {:.4f} s at 30% (x{:.2f}; {}); {}", bare.step_seconds,
                                ours.step_seconds, ours.step_seconds / bare.step_seconds, expectation,
                                ours.summary());
           r.figures = {{"bare_step_seconds", bare.step_seconds},
                        {"bare_mean_utilisation_percent", bare.mean_util},
                        {"gpuslice_step_seconds", ours.step_seconds},
                        {"gpuslice_mean_utilisation_percent", ours.mean_util}};
           if (!o.compare_libvgpu.empty()) {
             const ComputeRun other = b.train(training_env("ovh-cores30-libvgpu", 30, true));
             r.ours += fmt::format("; libvgpu.so: step {:.4f} s (x{:.2f}), {}", other.step_seconds,
                                   other.step_seconds / bare.step_seconds, other.summary());
             r.figures["libvgpu_step_seconds"] = other.step_seconds;
             r.figures["libvgpu_mean_utilisation_percent"] = other.mean_util;
           }
           r.status = RowStatus::Info;
         });
}

}  // namespace gpuslice::realgpu::labs
