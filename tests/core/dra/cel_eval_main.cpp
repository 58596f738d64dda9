// dra_cel_eval: the DRA CEL evaluator as a filter, for the differential test
// (python/tests/test_dra_cel.py). Each input line is a JSON object
// {"expr": "...", "driver": "...", "attributes": {"name": {"int"|"bool"|
// "string"|"version": value}}, "capacity": {"name": "quantity"},
// "allowMultipleAllocations": bool}; each output line is "true", "false",
// "error" (a runtime error) or "refused: why" (outside the subset).
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>

#include "gpuslice/core/codec/quantity.hpp"
#include "gpuslice/core/dialects/dra/cel.hpp"

using namespace gpuslice::core;

int main() {
  std::string line;
  while (std::getline(std::cin, line)) {
    if (line.empty()) continue;
    const auto in = nlohmann::json::parse(line);
    const std::string driver = in.value("driver", "");
    dra::Device device;
    device.name = "dev";
    device.allow_multiple_allocations = in.value("allowMultipleAllocations", false);
    const nlohmann::json attributes = in.value("attributes", nlohmann::json::object());
    for (const auto& [name, typed] : attributes.items()) {
      dra::AttributeValue v;
      if (typed.contains("int")) {
        v.kind = dra::AttributeValue::Kind::Int;
        v.int_value = typed["int"].get<int64_t>();
      } else if (typed.contains("bool")) {
        v.kind = dra::AttributeValue::Kind::Bool;
        v.bool_value = typed["bool"].get<bool>();
      } else if (typed.contains("string")) {
        v.kind = dra::AttributeValue::Kind::String;
        v.string_value = typed["string"].get<std::string>();
      } else {
        v.kind = dra::AttributeValue::Kind::Version;
        v.version = *dra::parse_semver(typed["version"].get<std::string>());
      }
      device.attributes.push_back(dra::Attribute{dra::qualify(name, driver), v});
    }
    const nlohmann::json capacity = in.value("capacity", nlohmann::json::object());
    for (const auto& [name, quantity] : capacity.items())
      device.capacity.push_back(dra::Capacity{
          dra::qualify(name, driver), codec::parse_quantity_milli(quantity.get<std::string>()), {}});
    try {
      const auto program = dra::CelProgram::compile(in.at("expr").get<std::string>());
      const auto outcome = program.evaluate(dra::DeviceView{driver, &device});
      std::cout << (outcome.kind == dra::CelOutcome::Kind::True    ? "true"
                    : outcome.kind == dra::CelOutcome::Kind::False ? "false"
                                                                   : "error")
                << "\n";
    } catch (const dra::CelError& e) {
      std::cout << "refused: " << e.what() << "\n";
    }
  }
  return 0;
}
