// Registers the research policies (FGD and its baselines) with the core's registry.
namespace gpuslice::core {
void register_research_policies() {}
}  // namespace gpuslice::core
