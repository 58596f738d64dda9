#include "gpuslice/sim/timeline_columns.hpp"

#include <array>

namespace gpuslice::sim {

namespace {

using Kind = TimelineColumn::Kind;

constexpr TimelineColumn count_column(std::string_view name, size_t TimelineRow::*member, bool optional,
                                      bool in_report) {
  return {name, Kind::Count, member, nullptr, optional, in_report};
}

constexpr TimelineColumn real_column(std::string_view name, Kind kind, double TimelineRow::*member,
                                     bool optional, bool in_report) {
  return {name, kind, nullptr, member, optional, in_report};
}

constexpr std::array kColumns = {
    real_column("time", Kind::Seconds, &TimelineRow::time, false, true),
    count_column("running", &TimelineRow::running, false, true),
    count_column("pending", &TimelineRow::pending, false, true),
    count_column("placed", &TimelineRow::placed, true, false),
    count_column("failed", &TimelineRow::failed, true, false),
    real_column("arrived_gpu_pct", Kind::Percent, &TimelineRow::arrived_pct, true, false),
    real_column("alloc_gpu_pct", Kind::Percent, &TimelineRow::alloc_gpu_pct, false, true),
    real_column("alloc_memory_pct", Kind::Percent, &TimelineRow::alloc_memory_pct, false, true),
    real_column("alloc_cores_pct", Kind::Percent, &TimelineRow::alloc_cores_pct, false, true),
    real_column("busy_cards_pct", Kind::Percent, &TimelineRow::busy_cards_pct, true, true),
    real_column("frag_gpu_pct", Kind::Percent, &TimelineRow::frag_gpu_pct, false, true),
    count_column("nodes", &TimelineRow::nodes, true, true),
};

}  // namespace

std::span<const TimelineColumn> timeline_columns() { return kColumns; }

}  // namespace gpuslice::sim
