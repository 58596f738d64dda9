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

// parse_quantity_milli reads whole numbers with the usual suffixes in 64-bit
// arithmetic and everything else by the exact path: both give the same
// values and refusals at the edges between them (worked by hand).
TEST_CASE("quantities in milli-units agree on both sides of the whole-number path", "[codec][quantity]") {
  CHECK(parse_quantity_milli("0") == 0);
  CHECK(parse_quantity_milli("-0") == 0);
  CHECK(parse_quantity_milli("81920Mi") == 85899345920000LL);  // 81920 x 2^20 x 1000
  CHECK(parse_quantity_milli("-5Gi") == -5368709120000LL);     // -(5 x 2^30 x 1000)
  CHECK(parse_quantity_milli("1Ti") == 1099511627776000LL);    // 2^40 x 1000
  CHECK(parse_quantity_milli("3k") == 3000000);
  CHECK(parse_quantity_milli("2G") == 2000000000000LL);
  CHECK(parse_quantity_milli("1.5Gi") == 1610612736000LL);  // a fraction: the exact path
  CHECK(parse_quantity_milli("+4") == 4000);                // a plus sign: the exact path
  // The largest whole number of units that fits in milli-units, and one more.
  CHECK(parse_quantity_milli("9223372036854775") == 9223372036854775000LL);
  CHECK_THROWS_WITH(parse_quantity_milli("9223372036854776"), Catch::Contains("too large"));
  // 19 digits: past the 64-bit path's 18, read exactly (INT64_MAX milli-units).
  CHECK(parse_quantity_milli("9223372036854775807m") == 9223372036854775807LL);
  CHECK_THROWS_WITH(parse_quantity_milli("8589934592Gi"), Catch::Contains("too large"));  // 2^63 units
  CHECK_THROWS_WITH(parse_quantity_milli("5Xi"), Catch::Contains("suffix"));
  CHECK_THROWS_WITH(parse_quantity_milli("-"), Catch::Contains("no digits"));
}
