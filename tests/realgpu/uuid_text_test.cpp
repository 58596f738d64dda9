#include "gpuslice/realgpu/uuid_text.hpp"

#include <catch2/catch.hpp>

using namespace gpuslice::realgpu;

TEST_CASE("UUID text: NVML's spelling, read back byte for byte") {
  DeviceUuid u{};
  for (size_t i = 0; i < u.size(); ++i) u[i] = static_cast<unsigned char>(i * 17 + 3);
  const std::string text = uuid_text(u);
  CHECK(text == "GPU-03142536-4758-697a-8b9c-adbecfe0f102");
  DeviceUuid back{};
  REQUIRE(parse_uuid_text(text, back));
  CHECK(back == u);
  CHECK(parse_uuid_text("03142536475869 7A8B9CADBECFE0F102", back) == false);           // not hex
  CHECK(parse_uuid_text("GPU-03142536-4758-697a-8b9c-adbecfe0f1", back) == false);      // 15 bytes
  CHECK(parse_uuid_text("GPU-03142536-4758-697a-8b9c-adbecfe0f10203", back) == false);  // 17 bytes
}
