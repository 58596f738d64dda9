// Runs every case file under tests/core/data: HAMi's own tests re-expressed
// as data, and the seed labs.
#include <catch2/catch.hpp>

#include "case_runner.hpp"
#include "dialect_case_runner.hpp"

using gpuslice::testing::load_cases;
using gpuslice::testing::run_case;

namespace {
void run_file(const char* file) {
  auto f = load_cases(file);
  for (const auto& c : f.cases) {
    DYNAMIC_SECTION(c["name"].as<std::string>()) { run_case(c); }
  }
}
}  // namespace

TEST_CASE("HAMi Fit reason cases (device_test.go Test_Fit)", "[conformance][fit]") {
  run_file("fit_reasons.yaml");
}
TEST_CASE("HAMi Filter policy combinations (scheduler_test.go Test_Filter)", "[conformance][filter]") {
  run_file("filter_policies.yaml");
}
TEST_CASE("HAMi GPU policy orderings (gpu_policy_test.go)", "[conformance][order]") {
  run_file("gpu_ordering.yaml");
}
TEST_CASE("Topology-aware choice (calculate_score.go)", "[conformance][topology]") {
  run_file("topology.yaml");
}
TEST_CASE("Pod requests and webhook defaults", "[conformance][requests]") { run_file("requests.yaml"); }
TEST_CASE("Seed labs", "[conformance][seed]") { run_file("seed_labs.yaml"); }
TEST_CASE("HAMi v2.10 MIG placement (pkg/device/nvidia mig_*_test.go, pkg/scheduler mig_allocation_test.go)",
          "[conformance][mig]") {
  run_file("mig.yaml");
}
TEST_CASE("Events a user reads", "[conformance][events]") { run_file("events.yaml"); }
TEST_CASE(
    "HAMi namespace ResourceQuota (scheduler_test.go Test_ResourceQuota, quota_test.go, nvidia TestFitQuota)",
    "[conformance][quota]") {
  run_file("quota.yaml");
}

namespace {
void run_dialect_file(const char* file) {
  const auto f = gpuslice::testing::load_dialect_cases(file);
  for (const auto& c : f.cases) {
    DYNAMIC_SECTION(c["name"].as<std::string>()) { gpuslice::testing::run_dialect_case(f, c); }
  }
}
}  // namespace

TEST_CASE("Koordinator DeviceShare cases (its unit tests and docs)", "[conformance][koordinator]") {
  run_dialect_file("koordinator.yaml");
}
TEST_CASE("KAI GPU sharing cases (its unit tests and docs)", "[conformance][kai]") {
  run_dialect_file("kai.yaml");
}
