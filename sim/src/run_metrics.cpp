#include "gpuslice/sim/run_metrics.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace gpuslice::sim {

std::string human_duration(double seconds) {
  if (!std::isfinite(seconds)) return "forever";
  if (seconds < 120) return fmt::format("{:.0f} s", seconds);
  if (seconds < 7200) return fmt::format("{:.1f} min", seconds / 60);
  if (seconds < 72 * 3600) return fmt::format("{:.1f} h", seconds / 3600);
  const auto hours = static_cast<int64_t>(std::llround(seconds / 3600));
  return hours % 24 ? fmt::format("{} d {} h", hours / 24, hours % 24) : fmt::format("{} d", hours / 24);
}

namespace {
constexpr double kFragmentUnitsPerMilli = 1e6;
int64_t fragment_units(double milli) { return std::llround(milli * kFragmentUnitsPerMilli); }
}  // namespace

Metrics::Metrics(const core::Cluster& fleet, bool milli_from_trace,
                 std::shared_ptr<core::FragmentationModel> fragmentation)
    : fragmentation_(std::move(fragmentation)), milli_from_trace_(milli_from_trace) {
  node_fragment_.resize(fleet.size());
  for (size_t n = 0; n < fleet.size(); ++n)
    fragment_total_ += node_fragment_[n] = fragment_units(fragmentation_->node_fragment(fleet.view(n)));
  for (size_t id = 0; id < fleet.size(); ++id) {
    first_card_.push_back(static_cast<uint32_t>(cards_));
    for (const auto& d : fleet.node(id).devices) {
      card_use_.push_back({d.memory_mib, 0, d.cores, 0});
      capacity_milli_ += 1000;
      capacity_memory_ += d.memory_mib;
      capacity_cores_ += d.cores;
      ++cards_;
    }
  }
  card_holders_.assign(static_cast<size_t>(cards_), 0);
}

double Metrics::arrived_pct() const {
  return capacity_milli_ == 0
             ? 0
             : 100.0 * static_cast<double>(arrived_milli_) / static_cast<double>(capacity_milli_);
}

double Metrics::alloc_gpu_pct() const {
  return capacity_milli_ == 0
             ? 0
             : 100.0 * static_cast<double>(allocated_milli_) / static_cast<double>(capacity_milli_);
}

namespace {
// Python's round(x, 2), closely enough for ratios in 0..100.
double round2(double x) { return std::nearbyint(x * 100) / 100; }
}  // namespace

void Metrics::observe_curve() {
  const double bucket = std::nearbyint(arrived_pct());  // half to even, as numpy rounds
  if (!(bucket >= 0 && bucket <= kArrivedPoints)) return;
  auto& b = buckets_[static_cast<size_t>(bucket)];
  ++b.records;
  b.alloc += round2(alloc_gpu_pct());
  b.frag += capacity_milli_ == 0 ? 0.0 : fragment_milli() / static_cast<double>(capacity_milli_);
}

std::array<std::optional<double>, Metrics::kArrivedPoints> Metrics::read_curve(double Bucket::*field,
                                                                               bool percent) const {
  std::array<std::optional<double>, kArrivedPoints> out{};
  for (size_t x = 0; x < static_cast<size_t>(kArrivedPoints); ++x) {
    size_t n = buckets_[x].records;
    double sum = buckets_[x].*field;
    if (n == 0) {
      for (size_t y : {x - 1, x + 1})
        if (y < buckets_.size()) {
          n += buckets_[y].records;
          sum += buckets_[y].*field;
        }
    }
    if (n > 0) out[x] = round2((percent ? 100.0 : 1.0) * sum / static_cast<double>(n));
  }
  return out;
}

std::array<std::optional<double>, Metrics::kArrivedPoints> Metrics::alloc_by_arrived() const {
  return read_curve(&Bucket::alloc, false);
}

std::array<std::optional<double>, Metrics::kArrivedPoints> Metrics::frag_by_arrived() const {
  return read_curve(&Bucket::frag, true);
}

void Metrics::arrived(double, const PodSpec& pod) { arrived_milli_ += pod.gpu_milli; }

double Metrics::fragment_milli() const {
  return static_cast<double>(fragment_total_) / kFragmentUnitsPerMilli;
}

void Metrics::fragment_changed(const core::Cluster& cluster, size_t node) {
  const int64_t f = fragment_units(fragmentation_->node_fragment(cluster.view(node)));
  fragment_total_ += f - node_fragment_[node];
  node_fragment_[node] = f;
}

void Metrics::node_present(const core::Cluster& cluster, size_t node, bool present) {
  const int64_t sign = present ? 1 : -1;
  for (const auto& d : cluster.node(node).devices) {
    capacity_milli_ += sign * 1000;
    capacity_memory_ += sign * d.memory_mib;
    capacity_cores_ += sign * d.cores;
    cards_ += sign;
  }
  if (present) {
    fragment_changed(cluster, node);
  } else {
    fragment_total_ -= node_fragment_[node];
    node_fragment_[node] = 0;
  }
}

int64_t Metrics::CardUse::milli() const {
  int64_t m = 0;
  if (cores > 0) m = std::max<int64_t>(m, 1000 * static_cast<int64_t>(cores_used) / cores);
  if (memory_mib > 0) m = std::max<int64_t>(m, 1000 * memory_used / memory_mib);
  return std::min<int64_t>(m, 1000);
}

void Metrics::charge_cards(size_t node, const core::PodAllocation& allocation, int sign) {
  for (const auto& c : core::effective_charges(allocation)) {
    allocated_memory_ += sign * c.usage.memory_mib;
    allocated_cores_ += sign * c.usage.cores;
    const size_t k = first_card_[node] + static_cast<size_t>(c.device);
    auto& h = card_holders_[k];
    if (sign > 0 && h++ == 0) ++busy_cards_;
    if (sign < 0 && --h == 0) --busy_cards_;
    CardUse& card = card_use_[k];
    const int64_t before = card.milli();
    card.memory_used += sign * c.usage.memory_mib;
    card.cores_used += sign * c.usage.cores;
    if (!milli_from_trace_) allocated_milli_ += card.milli() - before;
  }
}

void Metrics::placed(const PodMove& move) {
  if (milli_from_trace_) allocated_milli_ += move.pod.gpu_milli;
  charge_cards(move.node, move.allocation, +1);
  fragment_changed(move.cluster, move.node);
}

void Metrics::departed(const PodMove& move) {
  if (milli_from_trace_) allocated_milli_ -= move.pod.gpu_milli;
  charge_cards(move.node, move.allocation, -1);
  fragment_changed(move.cluster, move.node);
}

TimelineRow Metrics::row(double time, size_t running, size_t pending, size_t placed, size_t failed) const {
  auto pct = [](int64_t a, int64_t b) {
    return b == 0 ? 0.0 : 100.0 * static_cast<double>(a) / static_cast<double>(b);
  };
  return {time,
          running,
          pending,
          placed,
          failed,
          arrived_pct(),
          alloc_gpu_pct(),
          pct(allocated_memory_, capacity_memory_),
          pct(allocated_cores_, capacity_cores_),
          pct(busy_cards_, cards_),
          capacity_milli_ == 0 ? 0.0 : 100.0 * fragment_milli() / static_cast<double>(capacity_milli_),
          0};
}

void Metrics::observe_peaks() {
  const TimelineRow r = row(0, 0, 0, 0, 0);
  peak_gpu_ = std::max(peak_gpu_, r.alloc_gpu_pct);
  peak_memory_ = std::max(peak_memory_, r.alloc_memory_pct);
  peak_cores_ = std::max(peak_cores_, r.alloc_cores_pct);
}

void Metrics::advance(double now) {
  observe_peaks();
  if (now <= last_time_) return;
  const TimelineRow r = row(0, 0, 0, 0, 0);
  const double dt = now - last_time_;
  area_gpu_ += r.alloc_gpu_pct * dt;
  area_memory_ += r.alloc_memory_pct * dt;
  area_cores_ += r.alloc_cores_pct * dt;
  last_time_ = now;
}

Metrics::Held Metrics::held(double now) const {
  const TimelineRow r = row(0, 0, 0, 0, 0);
  Held h;
  h.peak_gpu_pct = std::max(peak_gpu_, r.alloc_gpu_pct);
  h.peak_memory_pct = std::max(peak_memory_, r.alloc_memory_pct);
  h.peak_cores_pct = std::max(peak_cores_, r.alloc_cores_pct);
  if (now > 0 && last_time_ > 0) {
    // The state after the last event is held for no time: the mean covers [0, now].
    const double span = std::max(now, last_time_);
    h.gpu_pct = area_gpu_ / span;
    h.memory_pct = area_memory_ / span;
    h.cores_pct = area_cores_ / span;
  } else {
    h.gpu_pct = r.alloc_gpu_pct;
    h.memory_pct = r.alloc_memory_pct;
    h.cores_pct = r.alloc_cores_pct;
  }
  return h;
}

double Metrics::percentile_pending(double p) const {
  if (pending_.empty()) return 0;
  if (!pending_sorted_) {
    std::sort(pending_.begin(), pending_.end());
    pending_sorted_ = true;
  }
  // Nearest rank.
  const size_t rank = static_cast<size_t>(std::ceil(p / 100.0 * static_cast<double>(pending_.size())));
  return pending_[std::min(pending_.size() - 1, rank == 0 ? 0 : rank - 1)];
}

double Metrics::max_pending() const {
  return pending_.empty() ? 0 : *std::max_element(pending_.begin(), pending_.end());
}

}  // namespace gpuslice::sim
