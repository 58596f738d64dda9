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

// HAMi v2.10 pkg/scheduler/webhook_test.go TestFitResourceQuota: namespace
// "default" holds 1000 of 2000 MiB and 200 of 400 cores; the webhook denies
// with "exceeding resource quota" when what a pod asks (app containers
// summed x cards, init containers' largest) would pass a limit.
TEST_CASE("webhook: HAMi's fitResourceQuota denies a pod over its namespace's quota",
          "[serve][webhook][quota]") {
  gpuslice::core::QuotaBook book;
  book.add_quota("default", {2000, 400});
  book.charge("default", {1000, 200});
  WebhookConfig config;
  config.fits_quota = [&book](const std::string& ns, const gpuslice::core::QuotaUse& ask) {
    const auto headroom = book.headroom(ns);
    return !headroom || headroom->admits(ask);
  };
  auto container = [](const std::string& name, const std::string& gpus, const std::string& mib) {
    return json{{"name", name},
                {"resources", {{"limits", {{"nvidia.com/gpu", gpus}, {"nvidia.com/gpumem", mib}}}}}};
  };
  auto review = [](const std::string& ns, json spec) {
    spec["schedulerName"] = "hami-scheduler";
    return json{
        {"apiVersion", "admission.k8s.io/v1"},
        {"kind", "AdmissionReview"},
        {"request",
         {{"uid", "u-1"},
          {"object", {{"kind", "Pod"}, {"metadata", {{"name", "p"}, {"namespace", ns}}}, {"spec", spec}}}}}};
  };
  auto answer = [&](const std::string& ns, json spec) {
    return admit_pod(review(ns, spec), config)["response"];
  };
  const json denied = {{"code", 403}, {"reason", "Forbidden"}, {"message", "exceeding resource quota"}};

  SECTION("quota passed: 1 card x 100 MiB, 1100 of 2000") {
    CHECK(answer("default", {{"containers", {container("c1", "1", "100")}}})["allowed"] == true);
  }
  SECTION("quota exceeded: 1 card x 1024 MiB, 2024 of 2000") {
    const json r = answer("default", {{"containers", {container("c1", "1", "1024")}}});
    CHECK(r["allowed"] == false);
    CHECK(r["status"] == denied);
  }
  SECTION("request multiple gpus: 2 cards x 1024 MiB count 2048, 3048 of 2000") {
    CHECK(answer("default", {{"containers", {container("c1", "2", "1024")}}})["allowed"] == false);
  }
  SECTION("request multiple gpus within quota: 2 x 400, 1800 of 2000") {
    CHECK(answer("default", {{"containers", {container("c1", "2", "400")}}})["allowed"] == true);
  }
  SECTION("init containers run one after another: max(800, 800) beside app 500 is 800, 1800 of 2000") {
    const json spec = {{"initContainers", {container("init1", "1", "800"), container("init2", "1", "800")}},
                       {"containers", {container("app1", "1", "500")}}};
    CHECK(answer("default", spec)["allowed"] == true);
  }
  SECTION("an init container of 1500 passes the limit on its own, 2500 of 2000") {
    const json spec = {{"initContainers", {container("init-massive", "1", "1500")}},
                       {"containers", {container("app1", "1", "100")}}};
    CHECK(answer("default", spec)["allowed"] == false);
  }
  SECTION("exactly at the limit fits (HAMi's check is strict): 1000 more, 2000 of 2000") {
    CHECK(answer("default", {{"containers", {container("c1", "1", "1000")}}})["allowed"] == true);
  }
  SECTION("a percentage asks 0 MiB at admission, and the webhook's exclusive 100 cores 300 of 400 fit") {
    const json c = {
        {"name", "c1"},
        {"resources", {{"limits", {{"nvidia.com/gpu", "1"}, {"nvidia.com/gpumem-percentage", "100"}}}}}};
    CHECK(answer("default", {{"containers", {c}}})["allowed"] == true);
  }
  SECTION("cores count too: whole cards get 100 cores each from the webhook") {
    const json two = {{"name", "c1"}, {"resources", {{"limits", {{"nvidia.com/gpu", "2"}}}}}};
    const json three = {{"name", "c1"}, {"resources", {{"limits", {{"nvidia.com/gpu", "3"}}}}}};
    CHECK(answer("default", {{"containers", {two}}})["allowed"] == true);     // 200 + 200 = 400 of 400
    CHECK(answer("default", {{"containers", {three}}})["allowed"] == false);  // 200 + 300 = 500 of 400
  }
  SECTION("another namespace without a quota is not checked") {
    CHECK(answer("team-b", {{"containers", {container("c1", "1", "100000")}}})["allowed"] == true);
  }
  SECTION("without a quota book (the pure function's default) nothing is denied for quota") {
    config.fits_quota = nullptr;
    CHECK(answer("default", {{"containers", {container("c1", "1", "100000")}}})["allowed"] == true);
  }
}
