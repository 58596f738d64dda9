// The reader's two sides (kube_reader.cpp picks one by the text's first byte).
#pragma once

#include "gpuslice/core/codec/kube_reader.hpp"

namespace gpuslice::core::codec::detail {

ListInfo read_json(const KubeText& text, const ObjectVisitor& visit, const ReadOptions& options);
WatchEvent read_json_watch_event(const KubeText& line, const ReadOptions& options);
ListInfo read_yaml(const KubeText& text, const ObjectVisitor& visit, const ReadOptions& options);

}  // namespace gpuslice::core::codec::detail
