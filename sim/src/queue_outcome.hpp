// A snapshot's queue, pod by pod: where each pod went (node, cards, after
// how long) or why not. report.html's queue table and compare.html's (one
// column per run) read a pod the same way, as the terminal table does.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gpuslice/sim/simulator.hpp"

namespace gpuslice::sim {

struct QueueOutcome {
  enum class Kind { AtOnce, AfterWaiting, Refused, StillPending };
  struct Card {
    std::string uuid;
    int64_t memory_mib = 0;
    int32_t cores = 0;
    // Its MIG instances, "1g.10gb at slice 3" (HAMi v2.10's reservations).
    std::vector<std::string> mig_instances;
  };
  Kind kind = Kind::AtOnce;
  std::string node;
  std::vector<Card> cards;  // summed over the pod's containers, in order
  double waited = 0;        // before it was placed, or so far (still pending)
  std::string reason, shortfall;
};

// The pods a snapshot had pending, in pods.csv's order (creation order).
std::vector<const PodRecord*> queued_pods(const std::vector<PodRecord>& pods);
// `end`: the run's last instant (a pod still pending has waited until then).
QueueOutcome queue_outcome(const PodRecord& pod, double end);

// "placed at once", "placed after 3.0 h", "refused", "still pending after 2.0 h".
std::string outcome_text(const QueueOutcome& outcome);
// The cards as HTML: "GPU-...: 70000 MiB, 60 % cores", one per line.
std::string cards_html(const QueueOutcome& outcome);

// report.html's queue section (empty when the run had no queue): at most
// `limit` rows, then a line saying how many more pods.csv has.
std::string queue_section_html(const RunResult& run, double end, size_t limit);

}  // namespace gpuslice::sim
