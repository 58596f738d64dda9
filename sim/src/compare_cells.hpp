// What a comparison shows, cell by cell, for the terminal and for
// compare.html alike: the headline figures with the best marked, and a
// snapshot's queue with one cell per run.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "gpuslice/sim/compare.hpp"

namespace gpuslice::sim {

struct CompareCell {
  std::string text;  // as a person reads it; "-" where the run has no such figure
  bool best = false;
};
struct CompareRow {
  std::string key, label;
  std::vector<CompareCell> cells;  // one per run
};
struct CompareTable {
  std::vector<CompareRow> rows;  // who the runs are, then every headline figure some run has
};
CompareTable compare_table(const std::vector<ComparedRun>& runs);

// Time pending per priority class (summary.json's
// pending_seconds_by_priority_class): for each class some run has, in the
// order first met, its median, 95th percentile and longest wait and its
// placements, the shortest wait marked where the runs differ. Empty when no
// run's priorities differ.
std::vector<CompareRow> compare_by_class(const std::vector<ComparedRun>& runs);

struct QueueCell {
  std::string terminal;  // "gpu-a100-1 GPU-591a4d2f after 3.0 h", "refused: CardInsufficientMemory"
  std::string html;
  bool placed = false;
};
struct QueueRow {
  std::string pod;
  std::vector<QueueCell> cells;  // one per run
  bool differs = false;          // the runs did not all do the same with it
};
// The pods queued at the snapshot in any run, in the first run's order
// (then the others' pods it lacks).
std::vector<QueueRow> compare_queue(const std::vector<ComparedRun>& runs);

}  // namespace gpuslice::sim
