#include "gpuslice/sim/engine.hpp"

#include <stdexcept>

namespace gpuslice::sim {

void Engine::schedule(double time, EventKind kind, uint32_t pod) {
  if (time < now_) throw std::logic_error("an event cannot be scheduled in the past");
  const Event e{time, kind, seq_++, pod};
  if (in_order_next_ == in_order_.size()) {
    in_order_.clear();
    in_order_next_ = 0;
  }
  if (in_order_.empty() || !EventLater{}(in_order_.back(), e))
    in_order_.push_back(e);
  else
    queue_.push(e);
}

Event Engine::next() {
  Event e;
  if (in_order_next_ < in_order_.size() &&
      (queue_.empty() || EventLater{}(queue_.top(), in_order_[in_order_next_]))) {
    e = in_order_[in_order_next_++];
    // Bounded by the events still waiting, not by all ever scheduled.
    if (in_order_next_ >= 4096 && 2 * in_order_next_ >= in_order_.size()) {
      in_order_.erase(in_order_.begin(), in_order_.begin() + static_cast<std::ptrdiff_t>(in_order_next_));
      in_order_next_ = 0;
    }
  } else {
    e = queue_.top();
    queue_.pop();
  }
  now_ = e.time;
  return e;
}

}  // namespace gpuslice::sim
