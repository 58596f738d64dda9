// The event engine: a simulated clock and a queue of timed events. It knows
// nothing about GPUs; the simulator gives events their meaning.
#pragma once

#include <cstddef>
#include <cstdint>
#include <queue>
#include <vector>

namespace gpuslice::sim {

// At one instant: departures, arrivals, then Cluster Autoscaler's loop
// (a scan for scale-up, a node becoming Ready, a node's scale-down check).
enum class EventKind : uint8_t {
  Departure = 0,
  Arrival = 1,
  ScaleUpScan = 2,
  NodeReady = 3,
  ScaleDownCheck = 4
};

struct Event {
  double time = 0;
  EventKind kind = EventKind::Arrival;
  uint64_t seq = 0;  // insertion order: equal times run first-in, first-out
  uint32_t pod = 0;  // the pod; a node for NodeReady and ScaleDownCheck
};

// Earlier time first; at one instant departures before arrivals (freed
// capacity is visible to pods arriving then), then insertion order.
struct EventLater {
  bool operator()(const Event& a, const Event& b) const {
    if (a.time != b.time) return a.time > b.time;
    if (a.kind != b.kind) return a.kind > b.kind;
    return a.seq > b.seq;
  }
};

class Engine {
 public:
  void schedule(double time, EventKind kind, uint32_t pod);
  bool empty() const { return queue_.empty() && in_order_next_ == in_order_.size(); }
  // Removes and returns the next event, advancing the clock to it.
  Event next();
  double now() const { return now_; }
  size_t pending() const { return queue_.size() + (in_order_.size() - in_order_next_); }

 private:
  // Events scheduled in the order they will run (a trace's arrivals, all
  // known up front) wait in a plain list; the rest in a heap. next() takes
  // the earlier of the two heads, so the order is the heap's alone.
  std::vector<Event> in_order_;
  size_t in_order_next_ = 0;
  std::priority_queue<Event, std::vector<Event>, EventLater> queue_;
  uint64_t seq_ = 0;
  double now_ = 0;
};

}  // namespace gpuslice::sim
