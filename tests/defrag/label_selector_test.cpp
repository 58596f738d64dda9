// Label selectors as Kubernetes reads them (apimachinery labels.Parse and
// metav1.LabelSelectorAsSelector), checked on the examples of the
// Kubernetes documentation ("Labels and Selectors").
#include "gpuslice/defrag/label_selector.hpp"

#include <catch2/catch.hpp>

using namespace gpuslice::defrag;

namespace {
bool match(const char* selector, const Labels& labels) {
  return parse_label_selector(selector).matches(labels);
}
}  // namespace

TEST_CASE("equality-based requirements, as the Kubernetes docs write them", "[labels]") {
  const Labels prod{{"environment", "production"}, {"tier", "backend"}};
  const Labels qa{{"environment", "qa"}, {"tier", "frontend"}};
  CHECK(match("environment = production", prod));
  CHECK(match("environment==production", prod));
  CHECK_FALSE(match("environment = production", qa));
  CHECK(match("tier != frontend", prod));
  CHECK_FALSE(match("tier != frontend", qa));
  // != selects resources without the key too.
  CHECK(match("tier != frontend", Labels{}));
  CHECK(match("environment=production,tier!=frontend", prod));
  CHECK_FALSE(match("environment=production,tier!=frontend", qa));
}

TEST_CASE("set-based requirements", "[labels]") {
  const Labels prod{{"environment", "production"}, {"tier", "backend"}, {"partition", "a"}};
  const Labels dev{{"environment", "dev"}, {"tier", "frontend"}};
  CHECK(match("environment in (production, qa)", prod));
  CHECK_FALSE(match("environment in (production, qa)", dev));
  CHECK(match("tier notin (frontend, backend)", Labels{{"tier", "cache"}}));
  CHECK_FALSE(match("tier notin (frontend, backend)", prod));
  CHECK(match("tier notin (frontend, backend)", Labels{}));  // notin selects pods without the key
  CHECK(match("partition", prod));
  CHECK_FALSE(match("partition", dev));
  CHECK(match("!partition", dev));
  CHECK_FALSE(match("!partition", prod));
  CHECK(match("partition,environment notin (qa)", prod));
  CHECK(match("replicas>2", Labels{{"replicas", "3"}}));
  CHECK_FALSE(match("replicas>2", Labels{{"replicas", "two"}}));
  CHECK(match("replicas<2", Labels{{"replicas", "1"}}));
}

TEST_CASE("an empty selector selects every pod - a null one none", "[labels]") {
  CHECK(match("", Labels{}));
  CHECK(match("  ", Labels{{"a", "b"}}));
  LabelSelector none;
  none.nothing = true;
  CHECK_FALSE(none.matches(Labels{}));
}

TEST_CASE("empty values: key= and in ()", "[labels]") {
  CHECK(match("a=", Labels{{"a", ""}}));
  CHECK_FALSE(match("a=", Labels{{"a", "x"}}));
  CHECK(match("a in ()", Labels{{"a", ""}}));
}

TEST_CASE("bad selectors are refused with a reason", "[labels]") {
  CHECK_THROWS_WITH(parse_label_selector("a in b"), Catch::Contains("parentheses"));
  CHECK_THROWS_WITH(parse_label_selector("a in (b"), Catch::Contains("not closed"));
  CHECK_THROWS_WITH(parse_label_selector("a=b=c"), Catch::Contains("expected ','"));
  CHECK_THROWS_WITH(parse_label_selector("a,"), Catch::Contains("followed by a requirement"));
  CHECK_THROWS_WITH(parse_label_selector("=b"), Catch::Contains("label key"));
  CHECK_THROWS_WITH(parse_label_selector("-a=b"), Catch::Contains("alphanumeric"));
  CHECK_THROWS_WITH(parse_label_selector("a=-b"), Catch::Contains("label value"));
  CHECK_THROWS_WITH(parse_label_selector("Example.com/a=b"), Catch::Contains("DNS subdomain"));
  CHECK_THROWS_WITH(parse_label_selector("a>b"), Catch::Contains("integer"));
  CHECK_THROWS_WITH(parse_label_selector(std::string(64, 'a') + "=b"), Catch::Contains("63"));
  CHECK_NOTHROW(parse_label_selector("example.com/tier-name_x.y=a.b-c_d"));
}

TEST_CASE("the structured form: matchExpressions operators", "[labels]") {
  LabelSelector s;
  s.requirements.push_back(label_expression("app", "In", {"web", "api"}));
  s.requirements.push_back(label_expression("canary", "DoesNotExist", {}));
  CHECK(s.matches(Labels{{"app", "api"}}));
  CHECK_FALSE(s.matches(Labels{{"app", "api"}, {"canary", "yes"}}));
  CHECK_FALSE(s.matches(Labels{{"app", "db"}}));
  CHECK(s.text() == "app in (api,web),!canary");
  CHECK_THROWS_WITH(label_expression("app", "In", {}), Catch::Contains("at least one value"));
  CHECK_THROWS_WITH(label_expression("app", "Exists", {"x"}), Catch::Contains("takes no values"));
  CHECK_THROWS_WITH(label_expression("app", "Gt", {"1"}), Catch::Contains("unknown operator"));
}
