// Request shapes: pods that fit and scoring cannot tell apart share an id;
// any field HAMi's fit or a policy's score reads tells them apart.
#include "gpuslice/core/request_shape.hpp"

#include <catch2/catch.hpp>
#include <functional>
#include <string>
#include <utility>
#include <vector>

using namespace gpuslice::core;

namespace {

PodRequest base_pod() {
  PodRequest p;
  p.name = "a";
  p.uid = "uid-a";
  ContainerRequest c;
  c.name = "main";
  c.count = 1;
  c.memory_mib = 3000;
  c.cores = 30;
  p.containers.push_back(c);
  p.host = {4000, 8192};
  return p;
}

}  // namespace

TEST_CASE("request shapes: names, UIDs, namespaces and priorities do not make a new shape", "[shape]") {
  RequestShapes shapes;
  PodRequest a = base_pod();
  PodRequest b = base_pod();
  b.name = "b";
  b.uid = "uid-b";
  b.ns = "other";
  b.containers[0].name = "sidecar";
  b.containers[0].priority = 1;  // env only: fit never reads it
  CHECK(shape_hash(a) == shape_hash(b));
  CHECK(same_shape(a, b));
  CHECK(shapes.id(a) == 0);
  CHECK(shapes.id(b) == 0);
  CHECK(shapes.size() == 1);
  CHECK(shapes.representative(0).name == "a");  // the first seen
}

TEST_CASE("request shapes: every field fit or scoring reads makes a shape of its own", "[shape]") {
  const std::vector<std::pair<std::string, std::function<void(PodRequest&)>>> changes = {
      {"host CPU", [](PodRequest& p) { p.host.cpu_milli += 1; }},
      {"host memory", [](PodRequest& p) { p.host.memory_mib += 1; }},
      {"card count", [](PodRequest& p) { p.containers[0].count = 2; }},
      {"memory MiB", [](PodRequest& p) { p.containers[0].memory_mib = 3001; }},
      {"memory percent", [](PodRequest& p) { p.containers[0].memory_percent = 50; }},
      {"cores", [](PodRequest& p) { p.containers[0].cores = 31; }},
      {"memory bytes (Koordinator)", [](PodRequest& p) { p.containers[0].memory_bytes = 1; }},
      {"memory fraction (KAI)", [](PodRequest& p) { p.containers[0].memory_fraction = 0.5; }},
      {"isolation provider (Koordinator)", [](PodRequest& p) { p.gpu_isolation_provider = "HAMi-core"; }},
      {"vendor", [](PodRequest& p) { p.containers[0].vendor = "Cambricon"; }},
      {"a second container", [](PodRequest& p) { p.containers.push_back(p.containers[0]); }},
      {"the container as an init container",
       [](PodRequest& p) {
         p.init_containers = p.containers;
         p.containers.clear();
       }},
      {"use types", [](PodRequest& p) { p.selectors.use_types = {"T4"}; }},
      {"nouse types", [](PodRequest& p) { p.selectors.nouse_types = {"T4"}; }},
      {"use uuids", [](PodRequest& p) { p.selectors.use_uuids = {"GPU-1"}; }},
      {"nouse uuids", [](PodRequest& p) { p.selectors.nouse_uuids = {"GPU-1"}; }},
      {"numa bind", [](PodRequest& p) { p.selectors.numa_bind = true; }},
      {"vgpu mode", [](PodRequest& p) { p.selectors.vgpu_mode = "hami-core"; }},
      {"GPU policy", [](PodRequest& p) { p.gpu_policy = "binpack"; }},
      {"node policy", [](PodRequest& p) { p.node_policy = "spread"; }},
      {"scoring weights", [](PodRequest& p) { p.weights.memory = 2; }},
      {"allowed models", [](PodRequest& p) { p.allowed_models = {"A10"}; }},
  };
  RequestShapes shapes;
  const PodRequest a = base_pod();
  REQUIRE(shapes.id(a) == 0);
  uint32_t next = 1;
  for (const auto& [what, change] : changes) {
    INFO(what);
    PodRequest b = base_pod();
    change(b);
    CHECK_FALSE(same_shape(a, b));
    CHECK(shapes.id(b) == next);  // a new, dense id
    CHECK(shapes.id(b) == next);  // and the same one when asked again
    ++next;
  }
  CHECK(shapes.id(a) == 0);
  CHECK(shapes.size() == changes.size() + 1);
}
