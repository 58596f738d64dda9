// The FGD study's grid (traces x policies x seeds) on openb, run on all
// cores: what `gpuslice study` and bench/sim run.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace gpuslice::sim {

struct StudyOptions {
  std::vector<std::string> policies = {"random", "dotprod", "gpuclustering", "gpupacking", "bestfit", "fgd"};
  std::vector<uint64_t> seeds = {42, 43, 44, 45, 46, 47, 48, 49, 50, 51};
  double tune = 1.3;
  unsigned jobs = 0;  // 0: one per core
  // Called after each (trace, seed) group with groups done and in all, from
  // the worker threads (the CLI's progress line).
  std::function<void(size_t done, size_t total)> progress;
};

struct StudyRun {
  std::string trace, policy;  // trace: the pod CSV's file name
  uint64_t seed = 0;
  double alloc_130 = 0, unallocated_gpus_130 = 0, frag_130 = 0, wall_s = 0;
  std::array<std::optional<double>, 131> alloc{}, frag{};  // by arrived %, as the study reads them
};

// Runs every (trace, policy, seed); results in that order. Throws
// InputError on unreadable or malformed CSVs and unknown policies.
std::vector<StudyRun> run_study(const std::string& nodes_csv, const std::vector<std::string>& pod_csvs,
                                const StudyOptions& options);

// The artifact's published results (analysis_allo_discrete.csv: workload,
// sc_policy, tune, seed, total_gpus, 0..130): allocation at 130 % arrived
// by (trace file stem, our policy name), one value per seed.
std::map<std::pair<std::string, std::string>, std::vector<double>> load_published(const std::string& path);
// The same file's mean curve (over its seeds) by (trace file stem, policy).
std::map<std::pair<std::string, std::string>, std::array<std::optional<double>, 131>> load_published_curves(
    const std::string& path);

// The file's stem: how the artifact names a trace ("openb_pod_list_default").
std::string trace_stem(const std::string& trace);

// One cell of the study's table: a (trace, policy) over its seeds, the
// allocation at 130 % arrived; beside it the artifact's published mean
// when one was given for that cell.
struct StudyCell {
  std::string trace, policy;
  size_t runs = 0;
  double mean = 0, min = 0, max = 0;
  std::optional<double> published;
};
// In the runs' order (trace, then policy). `published`: load_published's.
std::vector<StudyCell> study_cells(
    const std::vector<StudyRun>& runs,
    const std::map<std::pair<std::string, std::string>, std::vector<double>>& published);

// The study's report.html: per trace, allocation by arrived demand for each
// policy (ours, the mean over seeds; and the artifact's published curve where
// `published_curves` has it), then the table with the differences.
using PublishedCurves = std::map<std::pair<std::string, std::string>, std::array<std::optional<double>, 131>>;
std::string render_study_html(const std::vector<StudyRun>& runs, const std::vector<StudyCell>& cells,
                              const PublishedCurves& published_curves, const StudyOptions& options);

// "42-51" or "42,45,50-51".
std::vector<uint64_t> parse_seed_list(const std::string& text, const std::string& field);

}  // namespace gpuslice::sim
