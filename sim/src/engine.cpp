#include "gpuslice/sim/engine.hpp"

#include <stdexcept>

namespace gpuslice::sim {

void Engine::schedule(double time, EventKind kind, uint32_t pod) {
  if (time < now_) throw std::logic_error("an event cannot be scheduled in the past");
  queue_.push(Event{time, kind, seq_++, pod});
}

Event Engine::next() {
  Event e = queue_.top();
  queue_.pop();
  now_ = e.time;
  return e;
}

}  // namespace gpuslice::sim
