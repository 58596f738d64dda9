// A deterministic HAMi cluster as `kubectl get nodes,pods -A` prints it:
// nodes of 8 A100 / H100 / L40S cards with HAMi's registration, about 8
// running GPU pods per node with HAMi's grant annotations, 2 daemon pods per
// node, and Pending GPU pods (0.4 per node). The objects carry what real
// ones carry (conditions, images, projected volumes, container statuses), so
// a reader skips what it would skip on a real dump. Benchmarks only: the
// 4,000-node files are generated at bench time, never committed.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>

namespace gpuslice::bench {

struct DumpShape {
  int nodes = 4000;
  int daemon_pods_per_node = 2;
  // Running GPU pods: 8 per node, 7 on every 22nd node (7.95 on average:
  // 31,818 on 4,000 nodes). Pending GPU pods: 2 per 5 nodes.
  int gpu_pods_per_node = 8;
  uint64_t seed = 1;
};

struct DumpCounts {
  size_t nodes = 0, gpu_pods = 0, daemon_pods = 0, pending_pods = 0, bytes = 0;
  size_t pods() const { return gpu_pods + daemon_pods + pending_pods; }
};

// `kubectl get nodes,pods -A -o json`: a v1 List, 4-space indent, keys in
// order, Go's escapes of <, > and &. compact: the same List on one line (what
// `kubectl ... -o json | jq -c` gives).
DumpCounts write_kubectl_json(const DumpShape& shape, std::FILE* out, bool compact = false);
// `kubectl get nodes,pods -A -o yaml`: go-yaml v2's style (block sequences
// at their key's indent, quotes only where a plain scalar would change type,
// long quoted lines folded at spaces past column 80, literal blocks).
DumpCounts write_kubectl_yaml(const DumpShape& shape, std::FILE* out);
// What the API server answers to GET /api/v1/nodes and /api/v1/pods
// (NodeList and PodList, items without kind), as nodes.json and pods.json in
// `dir`, the API double's fixtures.
DumpCounts write_api_lists(const DumpShape& shape, const std::string& dir);

}  // namespace gpuslice::bench
