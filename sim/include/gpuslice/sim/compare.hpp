// Several runs side by side (`gpuslice compare`, `simulate --policy a,b,c`,
// gpuslice.compare in Python): their headline figures with the best marked,
// their allocation and pending curves on one set of axes, and, for snapshot
// runs, the queue pod by pod with one column per run.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "gpuslice/sim/simulator.hpp"

namespace gpuslice::sim {

struct ComparedRun {
  std::string label;  // a column's name: the folder's name (its path where two share one)
  std::string dir;    // where the run's files are ("" for a run held in memory only)
  RunResult run;      // compare.csv reads its summary; the page its timeline and pods too
};

// Reads the run folders (summary.json, timeline.csv, pods.csv; not the
// per-card log). Bad input (fewer than two folders, the same folder twice,
// a missing or malformed file) is a core::InputError naming it.
std::vector<ComparedRun> load_compared_runs(const std::vector<std::string>& dirs);

// The folder compare.html goes to by default: the one that holds every run
// folder; an InputError naming --out when they have no parent in common.
std::string default_compare_folder(const std::vector<std::string>& dirs);

// compare.csv: its header and one row per run (run, dir, scenario, policy,
// seed, run_kind, nodes, gpus, then the headline metrics of sim/headline.hpp;
// an empty cell where a run has no such figure).
std::string compare_csv(const std::vector<ComparedRun>& runs);
// The table a person reads in the terminal: figures per run, the best
// marked *; for snapshot runs the queue, one column per run.
void print_comparison(const std::vector<ComparedRun>& runs, std::ostream& out);
// compare.html: self-contained (Chart.js and the page's script inlined).
std::string render_compare_html(const std::vector<ComparedRun>& runs);
// Writes DIR/compare.html and DIR/compare.csv; throws OutputError.
void write_comparison(const std::vector<ComparedRun>& runs, const std::string& dir);

}  // namespace gpuslice::sim
