// What one filter's steps hand each other (decision_state.cpp, and the dry
// run in decision_dry_run.cpp): private to the decision state.
#pragma once

#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "gpuslice/serve/decision_state.hpp"

namespace gpuslice::serve {

// The pod as sent: who it is (namespace defaulted), what it asks, its key.
struct DecisionState::FilterPod {
  PodRef ref;
  core::PodRequest request;
  std::string key;       // in held_
  int32_t priority = 0;  // spec.priority (0 when unset, as kube-scheduler reads it)
  // How HAMi reads the request otherwise than written (gpucores above 100):
  // said on stderr once per pod (DecisionState::warn_once).
  std::vector<std::string> warnings;
};

// The named nodes: each registered node once, in the order named, and the
// names with no registration (views into the request's names).
struct DecisionState::Candidates {
  std::vector<size_t> ids;
  std::set<std::string_view> unregistered;
  size_t asked() const { return ids.size() + unregistered.size(); }
};

// What a filter decided under the lock, for the API calls made after it.
struct DecisionState::Choice {
  core::Decision decision;
  std::string node_name, allocation, mig_allocations;  // placed: what is written on the pod
  uint64_t generation = 0;                             // placed: the reservation made
};

}  // namespace gpuslice::serve
