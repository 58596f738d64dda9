// CEL selectors worked by hand from cel-spec's rules and DRA's device
// variable (k8s.io/dynamic-resource-allocation/cel/compile.go). The
// expression-by-expression comparison with a reference implementation is
// python/tests/test_dra_cel.py.
#include "gpuslice/core/dialects/dra/cel.hpp"

#include <catch2/catch.hpp>

#include "device_fixtures.hpp"

using namespace gpuslice::core::dra;
using namespace gpuslice::core::dra::test;

namespace {

const std::string kDriver = "gpu.example.com";

const Device& a100() {
  static const Device d = make_device("gpu-0", kDriver,
                                      {{"model", string_value("A100")},
                                       {"index", int_value(0)},
                                       {"mig", bool_value(true)},
                                       {"driverVersion", version_value("550.54.15")},
                                       {"numa.example.com/node", int_value(1)}},
                                      {{"memory", "80Gi"}, {"cores", "100"}});
  return d;
}

CelOutcome::Kind run(const std::string& expression, const Device& d = a100()) {
  return CelProgram::compile(expression).evaluate(DeviceView{kDriver, &d}).kind;
}

constexpr auto True = CelOutcome::Kind::True;
constexpr auto False = CelOutcome::Kind::False;
constexpr auto Error = CelOutcome::Kind::Error;

}  // namespace

TEST_CASE("cel: driver and attributes of the driver's own domain") {
  CHECK(run("device.driver == 'gpu.example.com'") == True);
  CHECK(run("device.attributes['gpu.example.com'].model == 'A100'") == True);
  CHECK(run("device.attributes[\"gpu.example.com\"][\"index\"] == 0") == True);
  CHECK(run("device.attributes['gpu.example.com'].mig") == True);
  // An attribute written with a domain stays in that domain.
  CHECK(run("device.attributes['numa.example.com'].node == 1") == True);
  CHECK(run("device.attributes['gpu.example.com'].model == 'H100'") == False);
}

TEST_CASE("cel: a missing attribute is a runtime error, has() tests it") {
  CHECK(run("device.attributes['gpu.example.com'].missing == 'x'") == Error);
  // A missing domain is an empty map (compile.go's mapper default): the lookup inside it fails.
  CHECK(run("device.attributes['other.example.com'].model == 'A100'") == Error);
  CHECK(run("has(device.attributes['gpu.example.com'].model)") == True);
  CHECK(run("has(device.attributes['gpu.example.com'].missing)") == False);
  CHECK(run("has(device.attributes['other.example.com'].model)") == False);
  // && and || absorb an error when the other side decides alone.
  CHECK(run("device.attributes['gpu.example.com'].missing == 'x' && false") == False);
  CHECK(run("false && device.attributes['gpu.example.com'].missing == 'x'") == False);
  CHECK(run("device.attributes['gpu.example.com'].missing == 'x' || true") == True);
  CHECK(run("device.attributes['gpu.example.com'].missing == 'x' && true") == Error);
}

TEST_CASE("cel: comparisons, in, strings") {
  CHECK(run("device.attributes['gpu.example.com'].index < 1 && device.attributes['gpu.example.com'].index >= "
            "0") == True);
  CHECK(run("device.attributes['gpu.example.com'].model in ['A100', 'H100']") == True);
  CHECK(run("device.attributes['gpu.example.com'].model in ['V100']") == False);
  CHECK(run("'model' in device.attributes['gpu.example.com']") == True);
  CHECK(run("device.attributes['gpu.example.com'].model.startsWith('A1')") == True);
  CHECK(run("device.attributes['gpu.example.com'].model.endsWith('00')") == True);
  CHECK(run("device.attributes['gpu.example.com'].model.contains('10')") == True);
  CHECK(run("device.attributes['gpu.example.com'].model.matches('^A[0-9]+$')") == True);
  CHECK(run("size(device.attributes['gpu.example.com'].model) == 4") == True);
  // Ordering a string against an int has no overload; equality across types is false.
  CHECK(run("device.attributes['gpu.example.com'].model < 1") == Error);
  CHECK(run("device.attributes['gpu.example.com'].model == 1") == False);
  CHECK(run("!(device.attributes['gpu.example.com'].index == 0)") == False);
}

TEST_CASE("cel: quantities and semantic versions") {
  CHECK(run("device.capacity['gpu.example.com'].memory.compareTo(quantity('40Gi')) > 0") == True);
  CHECK(run("device.capacity['gpu.example.com'].memory.isGreaterThan(quantity('80Gi'))") == False);
  CHECK(run("device.capacity['gpu.example.com'].memory == quantity('80Gi')") == True);
  CHECK(run("device.capacity['gpu.example.com'].cores.asInteger() == 100") == True);
  CHECK(run("device.attributes['gpu.example.com'].driverVersion.isGreaterThan(semver('550.0.0'))") == True);
  CHECK(run("device.attributes['gpu.example.com'].driverVersion.compareTo(semver('550.54.15')) == 0") ==
        True);
  CHECK(run("device.attributes['gpu.example.com'].driverVersion.major() == 550") == True);
  // A prerelease sorts before its release.
  CHECK(run("semver('1.0.0-rc.1').isLessThan(semver('1.0.0'))") == True);
  CHECK(run("semver('1.0.0-alpha.2').isLessThan(semver('1.0.0-alpha.10'))") == True);
  CHECK(run("semver('1.0.0-alpha').isLessThan(semver('1.0.0-alpha.1'))") == True);
}

TEST_CASE("cel: arithmetic errors are values") {
  CHECK(run("1 / 0 == 1") == Error);
  CHECK(run("9223372036854775807 + 1 > 0") == Error);
  CHECK(run("-9223372036854775808 < 0") == True);
  CHECK(run("7 % 3 == 1 && 7 / 2 == 3 && -7 / 2 == -3") == True);
  CHECK(run("1 == 1.0 && 2u > 1") == True);
  CHECK(run("'a' + 'b' == 'ab'") == Error);  // concatenation allocates: outside the evaluator
}

TEST_CASE("cel: a result that is not a bool is an error") { CHECK(run("device.driver") == Error); }

TEST_CASE("cel: expressions outside the subset are refused naming the expression") {
  auto refused = [](const std::string& e) {
    try {
      CelProgram::compile(e);
    } catch (const CelError& err) {
      return std::string(err.what()).find("`" + e + "`") != std::string::npos;
    }
    return false;
  };
  CHECK(refused("device.attributes['d'].list.exists(x, x == 1)"));
  CHECK(refused("{'a': 1}['a'] == 1"));
  CHECK(refused("pod.name == 'x'"));
  CHECK(refused("device.name == 'x'"));
  CHECK(refused("int('1') == 1"));
  CHECK(refused("quantity(device.driver).isZero()"));
  CHECK(refused("device.driver == "));
  CHECK(refused("semver('1.0') == semver('1.0.0')"));
}
