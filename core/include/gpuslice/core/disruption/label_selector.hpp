// Kubernetes label selectors, one model for both forms a cluster writes
// them in: the text of `kubectl -l` (`--movable 'app=web,tier in (a,b)'`)
// and the structured form of objects (a PodDisruptionBudget's
// spec.selector: matchLabels and matchExpressions). Matching follows
// apimachinery's labels.Requirement.Matches.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace gpuslice::core::disruption {

using Labels = std::map<std::string, std::string>;

struct LabelRequirement {
  enum class Op { In, NotIn, Exists, DoesNotExist, GreaterThan, LessThan };
  std::string key;
  Op op = Op::Exists;
  std::vector<std::string> values;  // In/NotIn: the set (`=` is In one value); Gt/Lt: one integer
  bool matches(const Labels& labels) const;
};

struct LabelSelector {
  std::vector<LabelRequirement> requirements;  // all must hold; none: every pod
  bool nothing = false;                        // a null selector (an object without one) selects no pod
  bool matches(const Labels& labels) const;
  std::string text() const;  // the `kubectl -l` form ("<nothing>" for the null selector)
};

// The text form (apimachinery's labels.Parse): requirements joined by ','
// each `key`, `!key`, `key=v`, `key==v`, `key!=v`, `key in (v1,v2)`,
// `key notin (v1,v2)`, `key>N`, `key<N`. Keys and values are checked as
// Kubernetes checks them. Throws std::invalid_argument saying what is wrong.
LabelSelector parse_label_selector(std::string_view text);

// Why a label key or value is not valid ("" when it is).
std::string label_key_problem(std::string_view key);
std::string label_value_problem(std::string_view value);

// One matchExpressions entry of the structured form: operator In, NotIn,
// Exists or DoesNotExist (metav1.LabelSelectorAsSelector's rules: In and
// NotIn need values, Exists and DoesNotExist take none). Throws
// std::invalid_argument saying what is wrong.
LabelRequirement label_expression(std::string key, std::string_view op, std::vector<std::string> values);

}  // namespace gpuslice::core::disruption
