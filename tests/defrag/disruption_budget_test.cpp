// disruptionsAllowed as the disruption controller computes it
// (pkg/controller/disruption: getExpectedPodCount, countHealthyPods,
// updatePdbStatus), on budgets written by hand.
#include "gpuslice/defrag/disruption_budget.hpp"

#include <catch2/catch.hpp>

using namespace gpuslice::defrag;

namespace {

PodFacts pod(const std::string& app, bool ready = true, bool controlled = true,
             const std::string& phase = "Running") {
  PodFacts p;
  p.labels = {{"app", app}};
  p.phase = phase;
  p.ready = ready;
  if (controlled) p.controller = ControllerRef{"ReplicaSet", app, "uid-" + app};
  return p;
}

BudgetFacts budget(const std::string& app, std::optional<IntOrPercent> min,
                   std::optional<IntOrPercent> max = {}) {
  BudgetFacts b;
  b.ns = "ml";
  b.name = app;
  b.selector = parse_label_selector("app=" + app);
  b.min_available = min;
  b.max_unavailable = max;
  return b;
}

WorkloadFacts three_web_pods() {
  WorkloadFacts f;
  f.pods["ml/web-0"] = pod("web");
  f.pods["ml/web-1"] = pod("web");
  f.pods["ml/web-2"] = pod("web");
  f.pods["other/web-3"] = pod("web");  // another namespace: not the budget's
  f.pods["ml/db-0"] = pod("db");
  return f;
}

}  // namespace

TEST_CASE("minAvailable as an integer: desired is the number, expected the pods matched", "[budget]") {
  auto f = three_web_pods();
  f.budgets.push_back(budget("web", IntOrPercent{2, false}));
  const auto s = evaluate_budgets(f).states.at(0);
  CHECK(s.matched == 3);
  CHECK(s.expected == 3);
  CHECK(s.healthy == 3);
  CHECK(s.desired == 2);
  CHECK(s.allowed == 1);
}

TEST_CASE("percentages round up (GetScaledValueFromIntOrPercent with roundUp)", "[budget]") {
  auto f = three_web_pods();
  f.budgets.push_back(budget("web", IntOrPercent{50, true}));      // ceil(1.5) = 2 desired
  f.budgets.push_back(budget("web", {}, IntOrPercent{34, true}));  // ceil(1.02) = 2 unavailable: 1 desired
  f.budgets.push_back(budget("web", {}, IntOrPercent{1, false}));
  const auto s = evaluate_budgets(f).states;
  CHECK(s[0].desired == 2);
  CHECK(s[0].allowed == 1);
  CHECK(s[1].desired == 1);
  CHECK(s[1].allowed == 2);
  CHECK(s[2].desired == 2);
  CHECK(s[2].allowed == 1);
}

TEST_CASE("unready pods are not healthy - a pod listing no conditions is when Running", "[budget]") {
  auto f = three_web_pods();
  f.pods["ml/web-1"] = pod("web", false);
  PodFacts no_conditions = pod("web");
  no_conditions.ready.reset();
  f.pods["ml/web-2"] = no_conditions;
  f.budgets.push_back(budget("web", IntOrPercent{2, false}));
  const auto s = evaluate_budgets(f).states.at(0);
  CHECK(s.healthy == 2);
  CHECK(s.allowed == 0);
}

TEST_CASE("a percentage counts only controlled pods that have not finished", "[budget]") {
  auto f = three_web_pods();
  f.pods["ml/web-2"] = pod("web", false, true, "Succeeded");
  f.pods["ml/web-bare"] = pod("web", true, false);
  f.budgets.push_back(budget("web", IntOrPercent{100, true}));
  const auto s = evaluate_budgets(f).states.at(0);
  CHECK(s.matched == 4);
  CHECK(s.expected == 2);  // web-0, web-1
  CHECK(s.healthy == 3);   // web-0, web-1, web-bare
  CHECK(s.desired == 2);
  CHECK(s.allowed == 1);
}

TEST_CASE("a budget selecting nothing allows nothing (expectedPods 0)", "[budget]") {
  auto f = three_web_pods();
  BudgetFacts null_selector = budget("web", IntOrPercent{0, false});
  null_selector.selector = LabelSelector{};
  null_selector.selector.nothing = true;
  f.budgets.push_back(null_selector);
  BudgetFacts empty_selector = budget("web", IntOrPercent{0, false});
  empty_selector.selector = LabelSelector{};  // policy/v1: every pod of the namespace
  f.budgets.push_back(empty_selector);
  const auto s = evaluate_budgets(f).states;
  CHECK(s[0].matched == 0);
  CHECK(s[0].allowed == 0);
  CHECK(s[1].matched == 4);
  CHECK(s[1].allowed == 4);
  const auto of_pod = evaluate_budgets(f).of_pod;
  CHECK(of_pod.at("ml/web-0") == std::vector<uint32_t>{1});
  CHECK(of_pod.at("ml/db-0") == std::vector<uint32_t>{1});
  CHECK_FALSE(of_pod.count("other/web-3"));
}

TEST_CASE("set-based selectors select what a scan of the namespace selects", "[budget]") {
  auto f = three_web_pods();
  f.pods["ml/web-1"].labels["tier"] = "canary";
  auto with = [&](const char* selector) {
    BudgetFacts b = budget("web", IntOrPercent{0, false});
    b.selector = parse_label_selector(selector);
    f.budgets = {b};
    return evaluate_budgets(f).states.at(0).matched;
  };
  CHECK(with("app in (web,db)") == 4);
  CHECK(with("app in (web,db),tier notin (canary)") == 3);
  CHECK(with("tier notin (canary)") == 3);
  CHECK(with("tier") == 1);
  CHECK(with("!tier,app=web") == 2);
  CHECK(with("app in (cache)") == 0);
}
