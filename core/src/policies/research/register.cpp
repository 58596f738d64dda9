// Registers the research policies (FGD and its baselines, one file each).
namespace gpuslice::core {
namespace research {
void register_random();
void register_dotprod();
void register_gpupacking();
void register_gpuclustering();
void register_bestfit();
void register_fgd();
}  // namespace research

void register_research_policies() {
  research::register_random();
  research::register_dotprod();
  research::register_gpupacking();
  research::register_gpuclustering();
  research::register_bestfit();
  research::register_fgd();
}
}  // namespace gpuslice::core
