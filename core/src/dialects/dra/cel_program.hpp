// The compiled form of a CEL selector (cel.hpp): a tree of nodes in one
// vector, children by index, constants and strings owned by the program so
// that evaluation only reads.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <regex>
#include <string>
#include <string_view>
#include <vector>

#include "gpuslice/core/dialects/dra/cel.hpp"

namespace gpuslice::core::dra::cel_detail {

struct Value {
  enum class Kind : uint8_t {
    Error,
    Null,
    Bool,
    Int,
    Uint,
    Double,
    String,
    Quantity,    // i: milli-units
    Semver,      // semver
    List,        // list
    AttrMap,     // device.attributes
    CapMap,      // device.capacity
    AttrDomain,  // device.attributes[s]
    CapDomain,   // device.capacity[s]
  };
  // One payload per kind (a union keeps the value at 32 bytes: it is copied at every node).
  Kind kind = Kind::Null;
  union {
    bool b;
    int64_t i = 0;
    uint64_t u;
    double d;
    const Semver* semver;
    const std::vector<Value>* list;
    const char* error;
  };
  std::string_view s;  // String; AttrDomain, CapDomain: the domain

  static Value err(const char* what) {
    Value v;
    v.kind = Kind::Error;
    v.error = what;
    return v;
  }
  static Value boolean(bool x) {
    Value v;
    v.kind = Kind::Bool;
    v.b = x;
    return v;
  }
  static Value integer(int64_t x) {
    Value v;
    v.kind = Kind::Int;
    v.i = x;
    return v;
  }
};

enum class Op : uint8_t {
  Const,
  Driver,      // device.driver
  AllowMulti,  // device.allowMultipleAllocations
  AttrMap,     // device.attributes
  CapMap,      // device.capacity
  AttrDomain,  // device.attributes[text]
  CapDomain,   // device.capacity[text]
  Attr,        // device.attributes[text].text2
  Cap,         // device.capacity[text].text2
  HasAttr,     // has(device.attributes[text].text2)
  HasCap,      // has(device.capacity[text].text2)
  Select,      // a.text on a value only known at run time
  Has,         // has(a.text)
  Index,       // a[b]
  List,        // [args...]
  Not,
  Neg,
  And,
  Or,
  Cond,  // a ? b : c
  Eq,
  Ne,
  Lt,
  Le,
  Gt,
  Ge,
  In,
  Add,
  Sub,
  Mul,
  Div,
  Mod,
  Size,
  StartsWith,
  EndsWith,
  Contains,
  Matches,  // a.matches(regex)
  CompareTo,
  IsGreaterThan,
  IsLessThan,
  AsInteger,
  Major,
  Minor,
  Patch,
};

struct Node {
  Op op = Op::Const;
  uint32_t a = 0, b = 0, c = 0;
  Value constant;
  std::string_view text, text2;
  std::vector<uint32_t> args;         // List
  const std::regex* regex = nullptr;  // Matches
};

}  // namespace gpuslice::core::dra::cel_detail

namespace gpuslice::core::dra {

struct CelProgram::Impl {
  std::string expression;
  std::vector<cel_detail::Node> nodes;
  uint32_t root = 0;
  // Owned storage the nodes point into (deques: pointers stay put).
  std::deque<std::string> strings;
  std::deque<Semver> semvers;
  std::deque<std::vector<cel_detail::Value>> lists;
  std::deque<std::regex> regexes;
};

// Evaluates node `n` of `program` (cel_eval.cpp).
cel_detail::Value cel_evaluate(const CelProgram::Impl& program, uint32_t n, const DeviceView& device);

}  // namespace gpuslice::core::dra
