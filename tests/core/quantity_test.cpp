#include "gpuslice/core/codec/quantity.hpp"

#include <catch2/catch.hpp>

#include "gpuslice/core/errors.hpp"

using namespace gpuslice::core;
using namespace gpuslice::core::codec;

TEST_CASE("Kubernetes quantities", "[codec][quantity]") {
  CHECK(parse_quantity_milli("4") == 4000);
  CHECK(parse_quantity_milli("500m") == 500);
  CHECK(parse_quantity_milli("1.5") == 1500);
  CHECK(parse_quantity_milli("0.1m") == 1);  // rounded up, as Quantity does
  CHECK(parse_quantity_value("32Gi") == 34359738368LL);
  CHECK(parse_quantity_value("2k") == 2000);
  CHECK(parse_quantity_value("1e3") == 1000);
  CHECK(parse_quantity_value("1E-2") == 1);
  CHECK(parse_quantity_value("2.5Mi") == 2621440);
  CHECK(parse_quantity_value("+7") == 7);
  CHECK(parse_quantity_value("-3") == -3);
  CHECK(parse_quantity_integer("4000") == 4000);
  CHECK(parse_quantity_integer("1Ki") == 1024);
  CHECK(parse_quantity_integer("1.5k") == 1500);
  CHECK_THROWS_WITH(parse_quantity_integer("1.5"), Catch::Contains("whole number"));
  CHECK_THROWS_WITH(parse_quantity_value("abc"), Catch::Contains("no digits"));
  CHECK_THROWS_WITH(parse_quantity_value("10Xi"), Catch::Contains("suffix"));
  CHECK_THROWS_WITH(parse_quantity_value("1e"), Catch::Contains("suffix"));
  CHECK_THROWS_WITH(parse_quantity_value("1e+"), Catch::Contains("exponent"));
  CHECK_THROWS_WITH(parse_quantity_value("99999999999999999999999"), Catch::Contains("too large"));
  CHECK_THROWS_WITH(parse_quantity_value("9Ei"), Catch::Contains("too large"));
  CHECK_THROWS_AS(parse_quantity_value(""), CodecError);
  CHECK_THROWS_AS(parse_quantity_value("1e999"), CodecError);
}
