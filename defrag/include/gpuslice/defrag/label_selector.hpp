// Label selectors for defrag: the one model lives in the core
// (gpuslice/core/disruption/label_selector.hpp), which the simulator's
// preemption also reads; defrag names it here.
#pragma once

#include "gpuslice/core/disruption/label_selector.hpp"

namespace gpuslice::defrag {

using core::disruption::label_expression;
using core::disruption::label_key_problem;
using core::disruption::label_value_problem;
using core::disruption::LabelRequirement;
using core::disruption::Labels;
using core::disruption::LabelSelector;
using core::disruption::parse_label_selector;

}  // namespace gpuslice::defrag
