// Graphs, minimal: kernel nodes only. A node's length is fixed when it is
// added (the real driver copies kernel arguments then too); launching an
// instantiated graph books its kernels back to back, in insertion order.
#include <algorithm>

#include "cuda_exports.hpp"
#include "driver.hpp"

using gpuslice::fake::Context;
using gpuslice::fake::Driver;
using gpuslice::fake::driver;
using gpuslice::fake::Function;
using gpuslice::fake::Graph;
using gpuslice::fake::GraphExec;
using gpuslice::fake::GraphNode;
using gpuslice::fake::Stream;

namespace {

CUresult launch_graph(CUgraphExec hGraphExec, CUstream hStream) {
  Driver& d = driver();
  std::lock_guard lock(d.mutex);
  if (const CUresult rc = d.require_initialised(); rc != CUDA_SUCCESS) return rc;
  const GraphExec* exec = d.graph_execs.find(hGraphExec);
  if (exec == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  Context* context = nullptr;
  Stream* object = nullptr;
  if (const CUresult rc = d.stream_context(hStream, context, object); rc != CUDA_SUCCESS) return rc;
  return d.run(context, object, exec->durations_ns);
}

}  // namespace

extern "C" CUresult cuGraphCreate(CUgraph* phGraph, unsigned int flags) {
  Driver& d = driver();
  std::lock_guard lock(d.mutex);
  if (const CUresult rc = d.require_initialised(); rc != CUDA_SUCCESS) return rc;
  if (phGraph == nullptr || flags != 0) return CUDA_ERROR_INVALID_VALUE;
  *phGraph = reinterpret_cast<CUgraph>(d.graphs.add(std::make_unique<Graph>()));
  return CUDA_SUCCESS;
}

extern "C" CUresult cuGraphAddKernelNode_v2(CUgraphNode* phGraphNode, CUgraph hGraph,
                                            const CUgraphNode* dependencies, size_t numDependencies,
                                            const CUDA_KERNEL_NODE_PARAMS* nodeParams) {
  Driver& d = driver();
  std::lock_guard lock(d.mutex);
  if (const CUresult rc = d.require_initialised(); rc != CUDA_SUCCESS) return rc;
  Graph* graph = d.graphs.find(hGraph);
  if (graph == nullptr || phGraphNode == nullptr || nodeParams == nullptr ||
      (numDependencies > 0 && dependencies == nullptr))
    return CUDA_ERROR_INVALID_VALUE;
  for (size_t i = 0; i < numDependencies; ++i) {
    const auto known = [&](const std::unique_ptr<GraphNode>& node) {
      return reinterpret_cast<CUgraphNode>(node.get()) == dependencies[i];
    };
    if (std::none_of(graph->nodes.begin(), graph->nodes.end(), known)) return CUDA_ERROR_INVALID_VALUE;
  }
  const void* handle = nodeParams->func != nullptr ? static_cast<const void*>(nodeParams->func)
                                                   : static_cast<const void*>(nodeParams->kern);
  const Function* function = d.functions.find(handle);
  if (function == nullptr) return CUDA_ERROR_INVALID_VALUE;
  auto node = std::make_unique<GraphNode>();
  if (const CUresult rc = gpuslice::fake::kernel_duration(*function, nodeParams->kernelParams,
                                                          nodeParams->extra, node->duration_ns);
      rc != CUDA_SUCCESS)
    return rc;
  *phGraphNode = reinterpret_cast<CUgraphNode>(node.get());
  graph->nodes.push_back(std::move(node));
  return CUDA_SUCCESS;
}

extern "C" CUresult cuGraphInstantiateWithFlags(CUgraphExec* phGraphExec, CUgraph hGraph,
                                                unsigned long long /*flags*/) {
  Driver& d = driver();
  std::lock_guard lock(d.mutex);
  if (const CUresult rc = d.require_initialised(); rc != CUDA_SUCCESS) return rc;
  const Graph* graph = d.graphs.find(hGraph);
  if (graph == nullptr || phGraphExec == nullptr) return CUDA_ERROR_INVALID_VALUE;
  auto exec = std::make_unique<GraphExec>();
  for (const auto& node : graph->nodes) exec->durations_ns.push_back(node->duration_ns);
  *phGraphExec = reinterpret_cast<CUgraphExec>(d.graph_execs.add(std::move(exec)));
  return CUDA_SUCCESS;
}

extern "C" CUresult cuGraphLaunch(CUgraphExec hGraphExec, CUstream hStream) {
  return launch_graph(hGraphExec, hStream);
}
extern "C" CUresult cuGraphLaunch_ptsz(CUgraphExec hGraphExec, CUstream hStream) {
  return launch_graph(hGraphExec, hStream);
}

extern "C" CUresult cuGraphExecDestroy(CUgraphExec hGraphExec) {
  Driver& d = driver();
  std::lock_guard lock(d.mutex);
  if (const CUresult rc = d.require_initialised(); rc != CUDA_SUCCESS) return rc;
  return d.graph_execs.erase(hGraphExec) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

extern "C" CUresult cuGraphDestroy(CUgraph hGraph) {
  Driver& d = driver();
  std::lock_guard lock(d.mutex);
  if (const CUresult rc = d.require_initialised(); rc != CUDA_SUCCESS) return rc;
  return d.graphs.erase(hGraph) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}
