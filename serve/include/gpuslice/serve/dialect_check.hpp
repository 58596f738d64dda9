// What `gpuslice serve` can serve, said before it starts (docs/serve.md,
// "Dialects"): serve reads HAMi's node registrations and writes HAMi's
// binding, so a policy of another dialect (Koordinator, KAI) is refused,
// and so is a snapshot whose GPU nodes only another dialect registers.
// Never silent: a fleet where some nodes are another dialect's is served
// with a line naming them.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "gpuslice/core/dialect.hpp"

namespace gpuslice::serve {

// GPU nodes of a snapshot by the dialect that registered their cards.
using NodesByDialect = std::map<core::Dialect, size_t>;

// Throws core::InputError (the CLI exits 2) naming the policy, or the
// snapshot `source` and what its nodes register through, when serve cannot
// serve them; returns the warnings to print otherwise. `snapshot_nodes` is
// null for a live cluster (its nodes are named as they are read).
std::vector<std::string> check_servable(const std::string& policy, const NodesByDialect* snapshot_nodes,
                                        const std::string& source);

// The line serve prints for a live node whose cards another dialect
// registers ("" when HAMi's or none): it answers "node unregistered".
std::string unserved_node_note(const std::string& node, core::Dialect registered_by);

}  // namespace gpuslice::serve
