#include <catch2/catch.hpp>

#include "gpuslice/core/dialects/hami/registration.hpp"
#include "gpuslice/core/errors.hpp"

using namespace gpuslice::core;
using namespace gpuslice::core::codec;

TEST_CASE("JSON registration decodes HAMi's fixture and omits false/zero fields", "[codec][registration]") {
  const std::string text =
      R"([{"id":"GPU-0","index":0,"count":10,"devmem":24576,"devcore":100,"type":"NVIDIA-NVIDIA A10","numa":0,"mode":"hami-core","health":true},)"
      R"({"id":"GPU-1","index":1,"count":10,"devmem":24576,"devcore":100,"type":"NVIDIA-NVIDIA A10","numa":1,"mode":"hami-core"}])";
  auto devs = decode_registration(text);
  REQUIRE(devs.size() == 2);
  CHECK(devs[0].uuid == "GPU-0");
  CHECK(devs[0].slots == 10);
  CHECK(devs[0].memory_mib == 24576);
  CHECK(devs[0].cores == 100);
  CHECK(devs[0].type == "NVIDIA-NVIDIA A10");
  CHECK(devs[0].healthy);
  CHECK(devs[1].index == 1);
  CHECK(devs[1].numa == 1);
  CHECK_FALSE(devs[1].healthy);  // absent health means false
  const std::string encoded = encode_registration_json(devs);
  CHECK(
      encoded ==
      R"([{"id":"GPU-0","count":10,"devmem":24576,"devcore":100,"type":"NVIDIA-NVIDIA A10","mode":"hami-core","health":true},)"
      R"({"id":"GPU-1","index":1,"count":10,"devmem":24576,"devcore":100,"type":"NVIDIA-NVIDIA A10","numa":1,"mode":"hami-core"}])");
  auto again = decode_registration(encoded);
  REQUIRE(again.size() == 2);
  for (size_t i = 0; i < 2; ++i) {
    CHECK(again[i].uuid == devs[i].uuid);
    CHECK(again[i].index == devs[i].index);
    CHECK(again[i].memory_mib == devs[i].memory_mib);
    CHECK(again[i].healthy == devs[i].healthy);
    CHECK(again[i].numa == devs[i].numa);
  }
}

TEST_CASE("legacy 7- and 9-field registrations decode and round-trip", "[codec][registration]") {
  auto seven = decode_registration(
      "GPU-a,10,15360,100,NVIDIA-Tesla T4,0,true:GPU-b,5,8000,100,NVIDIA-Tesla T4,1,false:");
  REQUIRE(seven.size() == 2);
  CHECK(seven[0].mode == "hami-core");  // HAMi's default for the 7-field form
  CHECK(seven[0].index == 0);
  CHECK(seven[1].slots == 5);
  CHECK(seven[1].numa == 1);
  CHECK_FALSE(seven[1].healthy);
  auto nine = decode_registration("GPU-c,10,24576,200,NVIDIA-A10,0,True,3,mig:");
  REQUIRE(nine.size() == 1);
  CHECK(nine[0].index == 3);
  CHECK(nine[0].mode == "mig");
  CHECK(nine[0].cores == 200);
  CHECK(nine[0].healthy);
  const auto encoded = encode_registration_legacy(seven);
  CHECK(encoded ==
        "GPU-a,10,15360,100,NVIDIA-Tesla T4,0,true,0,hami-core:GPU-b,5,8000,100,NVIDIA-Tesla "
        "T4,1,false,0,hami-core:");
  auto back = decode_registration(encoded);
  REQUIRE(back.size() == 2);
  CHECK(back[1].uuid == "GPU-b");
  CHECK(back[1].memory_mib == 8000);
}

TEST_CASE("malformed registrations are refused with a reason", "[codec][registration]") {
  CHECK_THROWS_WITH(decode_registration("GPU-a,10,15360,100,T4,0,true"), Catch::Contains("separator"));
  CHECK_THROWS_WITH(decode_registration("GPU-a,10,15360,100,T4,0:"), Catch::Contains("field count 6"));
  CHECK_THROWS_WITH(decode_registration("GPU-a,x,15360,100,T4,0,true:"), Catch::Contains("count"));
  CHECK_THROWS_WITH(decode_registration("GPU-a,10,15360,100,T4,0,maybe:"), Catch::Contains("health"));
  CHECK_THROWS_WITH(decode_registration("GPU-a,10,99999999999,100,T4,0,true:"), Catch::Contains("devmem"));
  CHECK_THROWS_WITH(decode_registration("GPU-a,10,1,100,T4,0,true,-1,x:"), Catch::Contains("negative"));
  CHECK_THROWS_WITH(decode_registration("[{\"id\":\"a\",\"count\":\"ten\"}]"), Catch::Contains("count"));
  CHECK_THROWS_WITH(decode_registration("[{\"id\":\"a\",\"health\":1}]"), Catch::Contains("health"));
  CHECK_THROWS_WITH(decode_registration("[{\"id\":"), Catch::Contains("JSON"));
  CHECK_THROWS_WITH(decode_registration("{}"), Catch::Contains("separator"));
  CHECK_THROWS_AS(decode_registration("[1]"), CodecError);
}

TEST_CASE("pair scores decode by card position and round-trip", "[codec][topology]") {
  auto devs = decode_registration("g0,10,1,100,T,0,true:g1,10,1,100,T,0,true:g2,10,1,100,T,0,true:");
  auto m = decode_pair_scores(R"([{"uuid":"g0","score":{"g1":100,"g2":20}},{"uuid":"g1","score":{"g0":100}},)"
                              R"({"uuid":"unknown","score":{"g0":5}}])",
                              devs);
  CHECK(m[0][1] == 100);
  CHECK(m[0][2] == 20);
  CHECK(m[1][0] == 100);
  CHECK(m[2][0] == 0);
  auto back = decode_pair_scores(encode_pair_scores(m, devs), devs);
  CHECK(back == m);
  CHECK_THROWS_AS(decode_pair_scores(R"([{"uuid":"g0","score":{"g1":"x"}}])", devs), CodecError);
}

TEST_CASE("registered types and cards from NVML facts", "[codec][registration]") {
  CHECK(registered_type("Tesla T4") == "NVIDIA-Tesla T4");
  CHECK(registered_type("NVIDIA A10") == "NVIDIA A10");
  NodeDeviceConfig cfg;
  cfg.split_count = 4;
  cfg.memory_scaling = 1.5;
  cfg.core_scaling = 2;
  auto devs = register_cards({{"GPU-1", "Tesla T4", 15360, 1, true}}, cfg);
  REQUIRE(devs.size() == 1);
  CHECK(devs[0].slots == 4);
  CHECK(devs[0].memory_mib == 23040);
  CHECK(devs[0].cores == 200);
  CHECK(devs[0].type == "NVIDIA-Tesla T4");
  CHECK(devs[0].numa == 1);
  CHECK(decode_uuid_list(" GPU-a, ,GPU-b ") == std::vector<std::string>{"GPU-a", "GPU-b"});
}
