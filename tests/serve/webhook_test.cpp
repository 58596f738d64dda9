// HAMi's mutating admission, golden cases written from HAMi's webhook.go and
// the NVIDIA device's MutateAdmission (data/webhook/cases.json).
#include "gpuslice/serve/webhook.hpp"

#include <algorithm>
#include <catch2/catch.hpp>
#include <fstream>
#include <sstream>

#include "base64.hpp"

using namespace gpuslice::serve;
using nlohmann::json;

namespace {
const std::string kData = GPUSLICE_SERVE_TEST_DATA "/webhook";

json load(const std::string& name) {
  std::ifstream in(kData + "/" + name);
  REQUIRE(in);
  return json::parse(in);
}

json by_path(json ops) {
  std::sort(ops.begin(), ops.end(), [](const json& a, const json& b) { return a["path"] < b["path"]; });
  return ops;
}
}  // namespace

TEST_CASE("webhook: HAMi's admission decisions and patches (golden cases)", "[serve][webhook]") {
  const json review_template = load("review_template.json");
  for (const json& c : load("cases.json")) {
    DYNAMIC_SECTION(c["name"].get<std::string>()) {
      WebhookConfig config;
      if (c.contains("config")) {
        const json& k = c["config"];
        config.force_overwrite_default_scheduler = k.value("force_overwrite_default_scheduler", true);
        config.runtime_class_name = k.value("runtime_class_name", "");
        config.overwrite_env = k.value("overwrite_env", false);
        config.defaults.default_gpu_num = k.value("default_gpu_num", 1);
      }
      json review = review_template;
      json pod = {{"apiVersion", "v1"},
                  {"kind", "Pod"},
                  {"metadata", {{"name", "vllm-0"}, {"namespace", "default"}}},
                  {"spec", c["pod"]}};
      review["request"]["object"] = pod;
      const json answer = admit_pod(review, config);
      CHECK(answer["apiVersion"] == "admission.k8s.io/v1");
      CHECK(answer["kind"] == "AdmissionReview");
      const json& r = answer["response"];
      CHECK(r["uid"] == review["request"]["uid"]);
      const json& expect = c["expect"];
      CHECK(r["allowed"] == expect["allowed"]);
      CHECK(r["status"] == expect["status"]);
      if (!expect.contains("patch") || expect["patch"].is_null()) {
        CHECK_FALSE(r.contains("patch"));
        CHECK_FALSE(r.contains("patchType"));
      } else {
        REQUIRE(r.contains("patch"));
        CHECK(r["patchType"] == "JSONPatch");
        const auto bytes = base64_decode(r["patch"].get<std::string>());
        REQUIRE(bytes);
        const json ops = json::parse(*bytes);
        CHECK(by_path(ops) == by_path(expect["patch"]));
        // The patch applies to the object the API server holds.
        CHECK_NOTHROW(pod.patch(ops));
      }
    }
  }
}

TEST_CASE("webhook: what is not an AdmissionReview is refused", "[serve][webhook]") {
  CHECK_THROWS_AS(admit_pod(json::parse(R"({"kind":"AdmissionReview"})"), {}), AdmissionDecodeError);
  CHECK_THROWS_AS(admit_pod(json::parse("[1,2]"), {}), AdmissionDecodeError);
  // A request whose object is no Pod: HAMi's decoder answers 400.
  const json r = admit_pod(json::parse(R"({"request":{"uid":"u1","object":{"kind":"ConfigMap","data":{}}}})"),
                           {})["response"];
  CHECK(r["allowed"] == false);
  CHECK(r["status"]["code"] == 400);
  CHECK(r["uid"] == "u1");
  // A quantity that does not parse is a 400 too, never a crash.
  const json bad = admit_pod(
      json::parse(
          R"({"request":{"uid":"u2","object":{"spec":{"containers":[{"name":"m","resources":{"limits":{"nvidia.com/gpu":"1","nvidia.com/gpumem-percentage":"lots"}}}]}}}})"),
      {})["response"];
  CHECK(bad["allowed"] == false);
  CHECK(bad["status"]["code"] == 400);
}

TEST_CASE("json_patch: objects key by key, arrays by their tail", "[serve][webhook]") {
  const json a = json::parse(R"({"a":1,"b":{"c":[1,2]},"d":"x"})");
  const json b = json::parse(R"({"a":2,"b":{"c":[1,2,3]},"e/f":true})");
  const json ops = json_patch(a, b);
  CHECK(a.patch(ops) == b);
  CHECK(json_patch(a, a).empty());
}
