// The extender wire types as kube-scheduler sends them, in both casings.
#include "gpuslice/serve/protocol.hpp"

#include <algorithm>
#include <catch2/catch.hpp>

#include "serve_fixture.hpp"

using namespace gpuslice::serve;
using gpuslice::serve::testing::repo_file;

TEST_CASE("ExtenderArgs in either casing and either node form decode alike", "[serve][protocol]") {
  for (const char* file : {"filter_nodenames.json", "filter_nodenames_lower.json", "filter_nodes.json",
                           "filter_nodes_lower.json"}) {
    INFO(file);
    const auto args = decode_extender_args(repo_file(std::string("tests/serve/data/") + file));
    CHECK(args.node_names == std::vector<std::string>{"control-1", "gpu-t4-1"});
    CHECK(field(args.pod, "metadata")->at("name") == "vllm-0");
    CHECK(args.nodes_form == (std::string(file).find("nodes.json") != std::string::npos ||
                              std::string(file).find("nodes_lower") != std::string::npos));
  }
}

TEST_CASE("ExtenderBindingArgs in either casing", "[serve][protocol]") {
  for (const char* file : {"bind.json", "bind_lower.json"}) {
    const auto a = decode_binding_args(repo_file(std::string("tests/serve/data/") + file));
    CHECK(a.pod_name == "vllm-0");
    CHECK(a.pod_namespace == "default");
    CHECK(a.pod_uid == "6f1c2a9e-0000-4000-8000-000000000001");
    CHECK(a.node == "gpu-t4-1");
  }
}

TEST_CASE("filter results answer in the form asked, with Go's field names", "[serve][protocol]") {
  const auto names = decode_extender_args(repo_file("tests/serve/data/filter_nodenames.json"));
  ExtenderFilterResult r;
  r.nodes = std::vector<std::string>{"gpu-t4-1"};
  auto j = nlohmann::json::parse(encode_filter_result(r, names));
  CHECK(j["NodeNames"] == nlohmann::json::array({"gpu-t4-1"}));
  CHECK(j["Nodes"].is_null());
  CHECK(j["FailedNodes"].is_null());
  CHECK(j["Error"] == "");
  const auto nodes = decode_extender_args(repo_file("tests/serve/data/filter_nodes.json"));
  j = nlohmann::json::parse(encode_filter_result(r, nodes));
  CHECK(j["NodeNames"].is_null());
  REQUIRE(j["Nodes"]["items"].size() == 1);
  CHECK(j["Nodes"]["items"][0]["metadata"]["uid"] == "3f1d9c0e-5a7b-4c55-9b1e-0c7a2b9d1e02");
  ExtenderFilterResult failed;
  failed.failed["gpu-t4-1"] = "CardInsufficientMemory";
  j = nlohmann::json::parse(encode_filter_result(failed, names));
  CHECK(j["NodeNames"].is_null());
  CHECK(j["FailedNodes"]["gpu-t4-1"] == "CardInsufficientMemory");
}

TEST_CASE("bad requests are refused with the field named", "[serve][protocol][errors]") {
  auto refuses = [](const std::string& body, const std::string& words) {
    INFO(body);
    try {
      decode_extender_args(body);
      FAIL("accepted");
    } catch (const ProtocolError& e) {
      CHECK_THAT(e.what(), Catch::Contains(words));
    }
  };
  refuses("{bad", "not valid JSON");
  refuses("", "not valid JSON");
  refuses("[1,2]", "not a JSON object");
  refuses(R"({"NodeNames":["a"]})", "Pod is missing");
  refuses(R"({"Pod":"x","NodeNames":["a"]})", "Pod is missing or not an object");
  refuses(R"({"Pod":{},"NodeNames":"a"})", "NodeNames is not an array");
  refuses(R"({"Pod":{},"NodeNames":[1]})", "NodeNames[0] is not a string");
  refuses(R"({"Pod":{}})", "neither NodeNames nor Nodes");
  refuses(R"({"Pod":{},"Nodes":{"items":[{"metadata":{}}]}})", "Nodes.items[0].metadata.name is missing");
  CHECK_THROWS_AS(decode_binding_args(R"({"Node":"n"})"), ProtocolError);
  CHECK_THROWS_AS(decode_binding_args(R"({"PodName":"p","Node":7})"), ProtocolError);
  CHECK_THROWS_AS(decode_binding_args("\x01\x02"), ProtocolError);
}

TEST_CASE("FailedNodes is written byte for byte as a JSON tree writes it, plain names or not",
          "[serve][protocol]") {
  const auto names = decode_extender_args(repo_file("tests/serve/data/filter_nodenames.json"));
  const std::vector<std::string> reasons = {"1/8 CardInsufficientMemory", "NodeInsufficientDevice",
                                            "2/4 CardTypeMismatch, 2/4 CardInsufficientCore"};
  for (const bool by_name : {false, true})
    for (const std::string odd : {"", "gpu-\"quoted\"", "gpu-\xc3\xa9t\xc3\xa9", "back\\slash"}) {
      INFO("odd name: " << odd << ", added in name order: " << by_name);
      ExtenderFilterResult r;
      nlohmann::json map = nlohmann::json::object();
      // Added out of name order, as unregistered names come first in a
      // refusal, or in name order, as the decision state adds the rest.
      std::vector<std::pair<std::string, std::string>> entries;
      for (int i = 299; i >= 0; --i)
        entries.emplace_back("node-" + std::to_string(i * 7919 % 1000),
                             reasons[static_cast<size_t>(i) % reasons.size()]);
      if (!odd.empty()) entries.emplace_back(odd, "node unregistered");
      if (by_name) std::sort(entries.begin(), entries.end());
      for (const auto& [node, reason] : entries) {
        r.failed[node] = reason;
        map[node] = reason;
      }
      const nlohmann::json tree = {{"Error", ""},
                                   {"FailedAndUnresolvableNodes", nullptr},
                                   {"FailedNodes", map},
                                   {"NodeNames", nullptr},
                                   {"Nodes", nullptr}};
      CHECK(encode_filter_result(r, names) == tree.dump());
    }
}
