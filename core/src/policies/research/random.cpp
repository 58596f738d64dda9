// Random: a fitting (node, card) pair uniformly at random, from the seed.
#include "gpuslice/core/policy.hpp"

namespace gpuslice::core::research {

namespace {

class RandomPolicy final : public Policy {
 public:
  explicit RandomPolicy(const PolicyArgs& args) : state_(args.seed * 0x9e3779b97f4a7c15ULL + 1) {
    default_gpu_policy_ = args.gpu_policy;
  }
  std::string_view name() const override { return "random"; }
  bool chooses_share_card() const override { return true; }
  NodeScore score(const NodeView&, const PodRequest&, const PodAllocation&) override {
    const double r = static_cast<double>(next() >> 11) * 0x1.0p-53;
    return {r, r};
  }

 private:
  uint64_t next() {  // splitmix64: small, fast, and the same on every platform
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  uint64_t state_;
};

}  // namespace

void register_random() {
  register_policy("random", [](const PolicyArgs& a) { return std::make_unique<RandomPolicy>(a); });
}

}  // namespace gpuslice::core::research
