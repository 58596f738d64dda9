// Evaluation of a compiled CEL selector against one device: CEL's semantics
// for the subset (cel-spec langdef.md): errors are values; && and || absorb
// an error when the other side decides (false && error is false); equality
// across types is false, across numeric types by value; ordering across
// numeric types by value, across other types an error; int arithmetic
// overflows are errors.
#include <cmath>
#include <limits>

#include "cel_program.hpp"

namespace gpuslice::core::dra {
namespace {

using cel_detail::Node;
using cel_detail::Op;
using cel_detail::Value;
using K = Value::Kind;

constexpr const char* kNoSuchKey = "no such key";
constexpr const char* kNoOverload = "no such overload";
constexpr const char* kOverflow = "integer overflow";
constexpr const char* kDivideByZero = "division by zero";
constexpr const char* kModulusByZero = "modulus by zero";
constexpr const char* kIndexRange = "index out of range";

bool numeric(K k) { return k == K::Int || k == K::Uint || k == K::Double; }

// -1, 0, 1; 2 when unordered (NaN).
int compare_numbers(const Value& a, const Value& b) {
  auto three = [](auto x, auto y) { return x < y ? -1 : (x > y ? 1 : 0); };
  if (a.kind == b.kind) {
    switch (a.kind) {
      case K::Int:
        return three(a.i, b.i);
      case K::Uint:
        return three(a.u, b.u);
      default:
        if (std::isnan(a.d) || std::isnan(b.d)) return 2;
        return three(a.d, b.d);
    }
  }
  if (a.kind == K::Double || b.kind == K::Double) {
    const double x = a.kind == K::Double ? a.d : (a.kind == K::Int ? double(a.i) : double(a.u));
    const double y = b.kind == K::Double ? b.d : (b.kind == K::Int ? double(b.i) : double(b.u));
    if (std::isnan(x) || std::isnan(y)) return 2;
    return three(x, y);
  }
  // Int against Uint.
  if (a.kind == K::Int) return a.i < 0 ? -1 : three(static_cast<uint64_t>(a.i), b.u);
  return b.i < 0 ? 1 : three(a.u, static_cast<uint64_t>(b.i));
}

Value attribute_value(const AttributeValue& a) {
  Value v;
  switch (a.kind) {
    case AttributeValue::Kind::Int:
      v.kind = K::Int;
      v.i = a.int_value;
      break;
    case AttributeValue::Kind::Bool:
      v.kind = K::Bool;
      v.b = a.bool_value;
      break;
    case AttributeValue::Kind::String:
      v.kind = K::String;
      v.s = a.string_value;
      break;
    case AttributeValue::Kind::Version:
      v.kind = K::Semver;
      v.semver = &a.version;
      break;
  }
  return v;
}

Value lookup_attribute(const DeviceView& d, std::string_view domain, std::string_view id) {
  if (const Attribute* a = d.device->attribute(domain, id)) return attribute_value(a->value);
  return Value::err(kNoSuchKey);
}

Value lookup_capacity(const DeviceView& d, std::string_view domain, std::string_view id) {
  for (const auto& c : d.device->capacity)
    if (c.name.id == id && c.name.domain == domain) {
      Value v;
      v.kind = K::Quantity;
      v.i = c.value_milli;
      return v;
    }
  return Value::err(kNoSuchKey);
}

bool has_attribute_domain(const DeviceView& d, std::string_view domain) {
  for (const auto& a : d.device->attributes)
    if (a.name.domain == domain) return true;
  return false;
}
bool has_capacity_domain(const DeviceView& d, std::string_view domain) {
  for (const auto& c : d.device->capacity)
    if (c.name.domain == domain) return true;
  return false;
}

// a == b as CEL's heterogeneous equality: an error, or a bool.
Value equals(const Value& a, const Value& b) {
  if (a.kind == K::Error) return a;
  if (b.kind == K::Error) return b;
  if (numeric(a.kind) && numeric(b.kind)) return Value::boolean(compare_numbers(a, b) == 0);
  if (a.kind != b.kind) return Value::boolean(false);
  switch (a.kind) {
    case K::Null:
      return Value::boolean(true);
    case K::Bool:
      return Value::boolean(a.b == b.b);
    case K::String:
      return Value::boolean(a.s == b.s);
    case K::Quantity:
      return Value::boolean(a.i == b.i);
    case K::Semver:
      return Value::boolean(a.semver->compare(*b.semver) == 0);
    case K::List: {
      if (a.list->size() != b.list->size()) return Value::boolean(false);
      for (size_t i = 0; i < a.list->size(); ++i) {
        const Value e = equals((*a.list)[i], (*b.list)[i]);
        if (e.kind == K::Error || !e.b) return e;
      }
      return Value::boolean(true);
    }
    default:
      return Value::err(kNoOverload);
  }
}

// a < b etc.: -1/0/1, or an error.
Value order(const Value& a, const Value& b) {
  if (a.kind == K::Error) return a;
  if (b.kind == K::Error) return b;
  if (numeric(a.kind) && numeric(b.kind)) {
    const int c = compare_numbers(a, b);
    if (c == 2) return Value::integer(2);
    return Value::integer(c);
  }
  if (a.kind != b.kind) return Value::err(kNoOverload);
  switch (a.kind) {
    case K::String: {
      const int c = a.s.compare(b.s);
      return Value::integer(c < 0 ? -1 : (c > 0 ? 1 : 0));
    }
    case K::Bool:
      return Value::integer(a.b == b.b ? 0 : (a.b ? 1 : -1));
    default:
      return Value::err(kNoOverload);
  }
}

// The number of UTF-8 code points (CEL's size of a string).
int64_t code_points(std::string_view s) {
  int64_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

Value arithmetic(Op op, const Value& a, const Value& b) {
  if (a.kind == K::Error) return a;
  if (b.kind == K::Error) return b;
  if (a.kind != b.kind) return Value::err(kNoOverload);
  if (a.kind == K::Int) {
    int64_t r = 0;
    switch (op) {
      case Op::Add:
        if (__builtin_add_overflow(a.i, b.i, &r)) return Value::err(kOverflow);
        return Value::integer(r);
      case Op::Sub:
        if (__builtin_sub_overflow(a.i, b.i, &r)) return Value::err(kOverflow);
        return Value::integer(r);
      case Op::Mul:
        if (__builtin_mul_overflow(a.i, b.i, &r)) return Value::err(kOverflow);
        return Value::integer(r);
      case Op::Div:
        if (b.i == 0) return Value::err(kDivideByZero);
        if (a.i == std::numeric_limits<int64_t>::min() && b.i == -1) return Value::err(kOverflow);
        return Value::integer(a.i / b.i);
      default:
        if (b.i == 0) return Value::err(kModulusByZero);
        if (a.i == std::numeric_limits<int64_t>::min() && b.i == -1) return Value::err(kOverflow);
        return Value::integer(a.i % b.i);
    }
  }
  if (a.kind == K::Uint) {
    Value v;
    v.kind = K::Uint;
    switch (op) {
      case Op::Add:
        if (__builtin_add_overflow(a.u, b.u, &v.u)) return Value::err(kOverflow);
        return v;
      case Op::Sub:
        if (__builtin_sub_overflow(a.u, b.u, &v.u)) return Value::err(kOverflow);
        return v;
      case Op::Mul:
        if (__builtin_mul_overflow(a.u, b.u, &v.u)) return Value::err(kOverflow);
        return v;
      case Op::Div:
        if (b.u == 0) return Value::err(kDivideByZero);
        v.u = a.u / b.u;
        return v;
      default:
        if (b.u == 0) return Value::err(kModulusByZero);
        v.u = a.u % b.u;
        return v;
    }
  }
  if (a.kind == K::Double) {
    Value v;
    v.kind = K::Double;
    switch (op) {
      case Op::Add:
        v.d = a.d + b.d;
        return v;
      case Op::Sub:
        v.d = a.d - b.d;
        return v;
      case Op::Mul:
        v.d = a.d * b.d;
        return v;
      case Op::Div:
        v.d = a.d / b.d;
        return v;
      default:
        return Value::err(kNoOverload);
    }
  }
  // String and list concatenation would allocate: refused by design.
  return Value::err(kNoOverload);
}

Value compare_to(Op op, const Value& a, const Value& b) {
  if (a.kind == K::Error) return a;
  if (b.kind == K::Error) return b;
  int c;
  if (a.kind == K::Quantity && b.kind == K::Quantity)
    c = a.i < b.i ? -1 : (a.i > b.i ? 1 : 0);
  else if (a.kind == K::Semver && b.kind == K::Semver)
    c = a.semver->compare(*b.semver);
  else
    return Value::err(kNoOverload);
  if (op == Op::CompareTo) return Value::integer(c);
  return Value::boolean(op == Op::IsGreaterThan ? c > 0 : c < 0);
}

Value string_test(Op op, const Value& a, const Value& b) {
  if (a.kind == K::Error) return a;
  if (b.kind == K::Error) return b;
  if (a.kind != K::String || b.kind != K::String) return Value::err(kNoOverload);
  switch (op) {
    case Op::StartsWith:
      return Value::boolean(a.s.substr(0, b.s.size()) == b.s);
    case Op::EndsWith:
      return Value::boolean(a.s.size() >= b.s.size() && a.s.substr(a.s.size() - b.s.size()) == b.s);
    default:
      return Value::boolean(a.s.find(b.s) != std::string_view::npos);
  }
}

// x in container.
Value membership(const Value& x, const Value& c, const DeviceView& d) {
  if (x.kind == K::Error) return x;
  if (c.kind == K::Error) return c;
  switch (c.kind) {
    case K::List: {
      for (const Value& e : *c.list) {
        const Value eq = equals(x, e);
        if (eq.kind == K::Bool && eq.b) return eq;
      }
      return Value::boolean(false);
    }
    case K::AttrMap:
    case K::CapMap:
    case K::AttrDomain:
    case K::CapDomain: {
      if (x.kind != K::String) return Value::boolean(false);
      if (c.kind == K::AttrMap) return Value::boolean(has_attribute_domain(d, x.s));
      if (c.kind == K::CapMap) return Value::boolean(has_capacity_domain(d, x.s));
      if (c.kind == K::AttrDomain) return Value::boolean(d.device->attribute(c.s, x.s) != nullptr);
      return Value::boolean(lookup_capacity(d, c.s, x.s).kind != K::Error);
    }
    default:
      return Value::err(kNoOverload);
  }
}

// container[key] or container.key on a value known only at run time.
Value element(const Value& c, const Value& key, const DeviceView& d) {
  if (c.kind == K::Error) return c;
  if (key.kind == K::Error) return key;
  switch (c.kind) {
    case K::AttrMap:
    case K::CapMap:
      if (key.kind != K::String) return Value::err(kNoSuchKey);
      {
        Value v;
        v.kind = c.kind == K::AttrMap ? K::AttrDomain : K::CapDomain;
        v.s = key.s;
        return v;
      }
    case K::AttrDomain:
      if (key.kind != K::String) return Value::err(kNoSuchKey);
      return lookup_attribute(d, c.s, key.s);
    case K::CapDomain:
      if (key.kind != K::String) return Value::err(kNoSuchKey);
      return lookup_capacity(d, c.s, key.s);
    case K::List: {
      int64_t i;
      if (key.kind == K::Int)
        i = key.i;
      else if (key.kind == K::Uint && key.u <= uint64_t(std::numeric_limits<int64_t>::max()))
        i = int64_t(key.u);
      else if (key.kind == K::Double && key.d == std::floor(key.d) && std::abs(key.d) < 9e18)
        i = int64_t(key.d);
      else
        return Value::err(kNoOverload);
      if (i < 0 || i >= int64_t(c.list->size())) return Value::err(kIndexRange);
      return (*c.list)[size_t(i)];
    }
    default:
      return Value::err(kNoOverload);
  }
}

}  // namespace

Value cel_evaluate(const CelProgram::Impl& p, uint32_t index, const DeviceView& d) {
  const Node& n = p.nodes[index];
  auto eval = [&](uint32_t i) { return cel_evaluate(p, i, d); };
  switch (n.op) {
    case Op::Const:
      return n.constant;
    case Op::Driver: {
      Value v;
      v.kind = K::String;
      v.s = d.driver;
      return v;
    }
    case Op::AllowMulti:
      return Value::boolean(d.device->allow_multiple_allocations);
    case Op::AttrMap:
    case Op::CapMap: {
      Value v;
      v.kind = n.op == Op::AttrMap ? K::AttrMap : K::CapMap;
      return v;
    }
    case Op::AttrDomain:
    case Op::CapDomain: {
      Value v;
      v.kind = n.op == Op::AttrDomain ? K::AttrDomain : K::CapDomain;
      v.s = n.text;
      return v;
    }
    case Op::Attr:
      return lookup_attribute(d, n.text, n.text2);
    case Op::Cap:
      return lookup_capacity(d, n.text, n.text2);
    case Op::HasAttr:
      return Value::boolean(d.device->attribute(n.text, n.text2) != nullptr);
    case Op::HasCap:
      return Value::boolean(lookup_capacity(d, n.text, n.text2).kind != K::Error);
    case Op::Select: {
      Value key;
      key.kind = K::String;
      key.s = n.text;
      return element(eval(n.a), key, d);
    }
    case Op::Has: {
      const Value c = eval(n.a);
      if (c.kind == K::Error) return c;
      if (c.kind != K::AttrMap && c.kind != K::CapMap && c.kind != K::AttrDomain && c.kind != K::CapDomain)
        return Value::err(kNoOverload);
      Value key;
      key.kind = K::String;
      key.s = n.text;
      return membership(key, c, d);
    }
    case Op::Index:
      return element(eval(n.a), eval(n.b), d);
    case Op::List:
      // Only non-constant lists get here; they are evaluated for `in` only.
      return Value::err(kNoOverload);
    case Op::Not: {
      const Value v = eval(n.a);
      if (v.kind == K::Error) return v;
      if (v.kind != K::Bool) return Value::err(kNoOverload);
      return Value::boolean(!v.b);
    }
    case Op::Neg: {
      Value v = eval(n.a);
      if (v.kind == K::Error) return v;
      if (v.kind == K::Int) {
        if (v.i == std::numeric_limits<int64_t>::min()) return Value::err(kOverflow);
        v.i = -v.i;
        return v;
      }
      if (v.kind == K::Double) {
        v.d = -v.d;
        return v;
      }
      return Value::err(kNoOverload);
    }
    case Op::And:
    case Op::Or: {
      const bool decisive = n.op == Op::Or;  // the value that decides alone
      const Value l = eval(n.a);
      if (l.kind == K::Bool && l.b == decisive) return l;
      const Value r = eval(n.b);
      if (r.kind == K::Bool && r.b == decisive) return r;
      if (l.kind == K::Error) return l;
      if (r.kind == K::Error) return r;
      if (l.kind != K::Bool || r.kind != K::Bool) return Value::err(kNoOverload);
      return Value::boolean(!decisive);
    }
    case Op::Cond: {
      const Value c = eval(n.a);
      if (c.kind == K::Error) return c;
      if (c.kind != K::Bool) return Value::err(kNoOverload);
      return eval(c.b ? n.b : n.c);
    }
    case Op::Eq:
      return equals(eval(n.a), eval(n.b));
    case Op::Ne: {
      Value v = equals(eval(n.a), eval(n.b));
      if (v.kind == K::Bool) v.b = !v.b;
      return v;
    }
    case Op::Lt:
    case Op::Le:
    case Op::Gt:
    case Op::Ge: {
      const Value c = order(eval(n.a), eval(n.b));
      if (c.kind == K::Error) return c;
      if (c.i == 2) return Value::boolean(false);  // NaN orders with nothing
      switch (n.op) {
        case Op::Lt:
          return Value::boolean(c.i < 0);
        case Op::Le:
          return Value::boolean(c.i <= 0);
        case Op::Gt:
          return Value::boolean(c.i > 0);
        default:
          return Value::boolean(c.i >= 0);
      }
    }
    case Op::In: {
      const Node& container = p.nodes[n.b];
      if (container.op == Op::List) {  // a list literal with non-constant items
        const Value x = eval(n.a);
        if (x.kind == K::Error) return x;
        for (uint32_t item : container.args) {
          const Value eq = equals(x, eval(item));
          if (eq.kind == K::Error) return eq;
          if (eq.b) return eq;
        }
        return Value::boolean(false);
      }
      return membership(eval(n.a), eval(n.b), d);
    }
    case Op::Add:
    case Op::Sub:
    case Op::Mul:
    case Op::Div:
    case Op::Mod:
      return arithmetic(n.op, eval(n.a), eval(n.b));
    case Op::Size: {
      const Value v = eval(n.a);
      if (v.kind == K::Error) return v;
      if (v.kind == K::String) return Value::integer(code_points(v.s));
      if (v.kind == K::List) return Value::integer(int64_t(v.list->size()));
      return Value::err(kNoOverload);
    }
    case Op::StartsWith:
    case Op::EndsWith:
    case Op::Contains:
      return string_test(n.op, eval(n.a), eval(n.b));
    case Op::Matches: {
      const Value v = eval(n.a);
      if (v.kind == K::Error) return v;
      if (v.kind != K::String) return Value::err(kNoOverload);
      return Value::boolean(std::regex_search(v.s.begin(), v.s.end(), *n.regex));
    }
    case Op::CompareTo:
    case Op::IsGreaterThan:
    case Op::IsLessThan:
      return compare_to(n.op, eval(n.a), eval(n.b));
    case Op::AsInteger: {
      const Value v = eval(n.a);
      if (v.kind == K::Error) return v;
      if (v.kind != K::Quantity) return Value::err(kNoOverload);
      if (v.i % 1000 != 0) return Value::err("quantity is not an integer");
      return Value::integer(v.i / 1000);
    }
    case Op::Major:
    case Op::Minor:
    case Op::Patch: {
      const Value v = eval(n.a);
      if (v.kind == K::Error) return v;
      if (v.kind != K::Semver) return Value::err(kNoOverload);
      const uint64_t part =
          n.op == Op::Major ? v.semver->major : (n.op == Op::Minor ? v.semver->minor : v.semver->patch);
      return Value::integer(int64_t(part));
    }
  }
  return Value::err(kNoOverload);
}

}  // namespace gpuslice::core::dra
