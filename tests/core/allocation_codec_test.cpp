#include <catch2/catch.hpp>

#include "gpuslice/core/dialects/hami/allocation_annotation.hpp"
#include "gpuslice/core/errors.hpp"

using namespace gpuslice::core;
using namespace gpuslice::core::codec;

namespace {
Node node_with(std::initializer_list<const char*> uuids) {
  Node n;
  n.name = "node";
  for (const char* u : uuids) {
    Device d;
    d.uuid = u;
    n.devices.push_back(d);
  }
  return n;
}
}  // namespace

TEST_CASE("HAMi's two-card example decodes and encodes to the same text", "[codec][allocation]") {
  const std::string text =
      "GPU-936619fc-f6a1-74a8-0bc6-ecf6b3269313,NVIDIA,1000,10:GPU-ebe7c3f7-303d-558d-435e-99a160631fe4,"
      "NVIDIA,3000,30:;";
  Node node =
      node_with({"GPU-ebe7c3f7-303d-558d-435e-99a160631fe4", "GPU-936619fc-f6a1-74a8-0bc6-ecf6b3269313"});
  auto parsed = decode_allocation_text(text);
  REQUIRE(parsed.size() == 1);
  REQUIRE(parsed[0].size() == 2);
  CHECK(parsed[0][1].memory_mib == 3000);
  CHECK(parsed[0][1].cores == 30);
  auto alloc = resolve_allocation(parsed, node, 0);
  CHECK(alloc.containers[0][0] == DeviceGrant{1, 1000, 10});
  CHECK(encode_allocation(alloc, node) == text);
}

TEST_CASE("init containers and containers without devices keep their entries", "[codec][allocation]") {
  Node node = node_with({"A", "B"});
  const std::string text = "A,NVIDIA,100,0:;;B,NVIDIA,200,5:A,NVIDIA,50,0:;;";
  auto parsed = decode_allocation_text(text);
  REQUIRE(parsed.size() == 4);
  CHECK(parsed[1].empty());
  CHECK(parsed[3].empty());
  auto alloc = resolve_allocation(parsed, node, 1);
  CHECK(alloc.init_count == 1);
  CHECK(encode_allocation(alloc, node) == text);
  auto charges = effective_charges(alloc);
  REQUIRE(charges.size() == 2);
  CHECK(charges[0].usage == DeviceUsage{1, 100, 0});  // A: max(init 100, app 50)
  CHECK(charges[1].usage == DeviceUsage{1, 200, 5});
}

TEST_CASE("malformed allocations are refused", "[codec][allocation]") {
  CHECK_THROWS_AS(decode_allocation_text("A,NVIDIA,100:;"), CodecError);
  CHECK_THROWS_AS(decode_allocation_text("A,NVIDIA,x,0:;"), CodecError);
  CHECK_THROWS_AS(decode_allocation_text("A,NVIDIA,-5,0:;"), CodecError);
  CHECK_THROWS_AS(decode_allocation_text("junk:;"), CodecError);
  CHECK_THROWS_AS(decode_allocation_text(",NVIDIA,1,0:;"), CodecError);
  Node node = node_with({"A"});
  CHECK_THROWS_WITH(resolve_allocation(decode_allocation_text("Z,NVIDIA,1,0:;"), node, 0),
                    Catch::Contains("'Z'"));
  CHECK(decode_allocation_text("").empty());
}
