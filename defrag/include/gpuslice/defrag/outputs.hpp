// What `gpuslice defrag` prints and writes: the plan in words (each move
// as `ml/train-3: gpu-a100-2 card 1 -> gpu-a100-5 card 0, 20000 MiB`),
// summary.json, moves.csv and report.html.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "gpuslice/defrag/defrag.hpp"

namespace gpuslice::defrag {

// moves.csv's columns, in order (the Python DataFrame's too).
std::vector<std::string> move_columns();

// "gpu-a100-2 card 1", "gpu-a100-2 cards 0,1": a place by node name and the
// cards' registered indexes.
std::string place_text(const core::Cluster& cluster, const Place& place);

nlohmann::ordered_json summary_json(const DefragResult& result);
std::string to_text(const DefragResult& result);
std::string moves_csv(const DefragResult& result);
// DIR/moves.csv, DIR/summary.json, DIR/report.html; throws core::InputError
// (field --out) when DIR cannot be written.
void write_outputs(const DefragResult& result, const std::string& dir);

}  // namespace gpuslice::defrag
