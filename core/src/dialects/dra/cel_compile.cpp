// CEL text to the compiled tree (cel_program.hpp): a lexer and a recursive
// descent parser following CEL's grammar (langdef.md): conditional, or, and,
// relation, addition, multiplication, unary, member, primary. Device
// accesses with literal keys are resolved here into one node each, so a
// selector like device.attributes["gpu.example.com"].model costs one lookup.
#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <limits>

#include "cel_program.hpp"
#include "gpuslice/core/codec/quantity.hpp"
#include "gpuslice/core/errors.hpp"

namespace gpuslice::core::dra {
namespace {

using cel_detail::Node;
using cel_detail::Op;
using cel_detail::Value;

enum class Tok : uint8_t { End, Ident, Int, Uint, Double, String, Punct };

struct Token {
  Tok kind = Tok::End;
  std::string text;  // Ident, Punct, String (decoded)
  int64_t i = 0;
  uint64_t u = 0;
  double d = 0;
  size_t at = 0;
};

class Compiler {
 public:
  explicit Compiler(CelProgram::Impl& p) : p_(p), src_(p.expression) {}

  uint32_t compile() {
    lex();
    const uint32_t root = expr();
    if (peek().kind != Tok::End) fail(fmt::format("unexpected '{}'", peek().text));
    return root;
  }

 private:
  [[noreturn]] void fail(const std::string& why) const {
    throw CelError(fmt::format("CEL expression `{}`: {}", src_, why));
  }

  // ---- lexer ----
  void lex() {
    size_t i = 0;
    while (true) {
      while (i < src_.size() && (src_[i] == ' ' || src_[i] == '\t' || src_[i] == '\n' || src_[i] == '\r'))
        ++i;
      if (i + 1 < src_.size() && src_[i] == '/' && src_[i + 1] == '/') {  // comment to end of line
        while (i < src_.size() && src_[i] != '\n') ++i;
        continue;
      }
      Token t;
      t.at = i;
      if (i >= src_.size()) {
        tokens_.push_back(t);
        return;
      }
      const char c = src_[i];
      if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
        size_t j = i;
        while (j < src_.size() && (std::isalnum(static_cast<unsigned char>(src_[j])) || src_[j] == '_')) ++j;
        std::string word(src_.substr(i, j - i));
        if ((word == "r" || word == "R") && j < src_.size() && (src_[j] == '"' || src_[j] == '\'')) {
          i = string_literal(j, true, t);
        } else if ((word == "b" || word == "B" || word == "rb" || word == "br" || word == "RB" ||
                    word == "BR" || word == "Rb" || word == "bR" || word == "rB" || word == "Br") &&
                   j < src_.size() && (src_[j] == '"' || src_[j] == '\'')) {
          fail("bytes literals are outside the subset DRA selectors use");
        } else {
          t.kind = Tok::Ident;
          t.text = std::move(word);
          i = j;
        }
      } else if (std::isdigit(static_cast<unsigned char>(c)) ||
                 (c == '.' && i + 1 < src_.size() && std::isdigit(static_cast<unsigned char>(src_[i + 1])))) {
        i = number(i, t);
      } else if (c == '"' || c == '\'') {
        i = string_literal(i, false, t);
      } else {
        static constexpr std::string_view two[] = {"<=", ">=", "==", "!=", "&&", "||"};
        t.kind = Tok::Punct;
        bool matched = false;
        for (auto op : two)
          if (src_.substr(i, 2) == op) {
            t.text = std::string(op);
            i += 2;
            matched = true;
            break;
          }
        if (!matched) {
          if (std::string_view("()[]{}.,?:!-+*/%<>").find(c) == std::string_view::npos)
            fail(fmt::format("unexpected character '{}'", c));
          t.text = std::string(1, c);
          ++i;
        }
      }
      tokens_.push_back(std::move(t));
    }
  }

  size_t number(size_t i, Token& t) {
    size_t j = i;
    const bool hex = src_.substr(i, 2) == "0x" || src_.substr(i, 2) == "0X";
    if (hex) {
      j += 2;
      while (j < src_.size() && std::isxdigit(static_cast<unsigned char>(src_[j]))) ++j;
    } else {
      while (j < src_.size() && std::isdigit(static_cast<unsigned char>(src_[j]))) ++j;
    }
    bool is_double = false;
    if (!hex) {
      if (j < src_.size() && src_[j] == '.' && j + 1 < src_.size() &&
          std::isdigit(static_cast<unsigned char>(src_[j + 1]))) {
        is_double = true;
        ++j;
        while (j < src_.size() && std::isdigit(static_cast<unsigned char>(src_[j]))) ++j;
      }
      if (j < src_.size() && (src_[j] == 'e' || src_[j] == 'E')) {
        size_t k = j + 1;
        if (k < src_.size() && (src_[k] == '+' || src_[k] == '-')) ++k;
        if (k < src_.size() && std::isdigit(static_cast<unsigned char>(src_[k]))) {
          is_double = true;
          j = k;
          while (j < src_.size() && std::isdigit(static_cast<unsigned char>(src_[j]))) ++j;
        }
      }
    }
    const std::string digits(src_.substr(hex ? i + 2 : i, j - (hex ? i + 2 : i)));
    if (is_double) {
      t.kind = Tok::Double;
      t.d = std::strtod(std::string(src_.substr(i, j - i)).c_str(), nullptr);
      return j;
    }
    const bool is_uint = j < src_.size() && (src_[j] == 'u' || src_[j] == 'U');
    uint64_t v = 0;
    const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v, hex ? 16 : 10);
    if (digits.empty() || ec != std::errc() || end != digits.data() + digits.size())
      fail(fmt::format("malformed number '{}'", src_.substr(i, j - i)));
    if (is_uint) {
      t.kind = Tok::Uint;
      t.u = v;
      return j + 1;
    }
    // The magnitude 2^63 is allowed only under a unary minus (checked by the parser).
    if (v > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) + 1)
      fail(fmt::format("integer literal '{}' out of range", src_.substr(i, j - i)));
    t.kind = Tok::Int;
    t.u = v;
    return j;
  }

  size_t string_literal(size_t i, bool raw, Token& t) {
    const char q = src_[i];
    const bool triple = src_.substr(i, 3) == std::string(3, q);
    size_t j = i + (triple ? 3 : 1);
    std::string out;
    while (true) {
      if (j >= src_.size()) fail("unterminated string literal");
      if (triple ? src_.substr(j, 3) == std::string(3, q) : src_[j] == q) {
        j += triple ? 3 : 1;
        break;
      }
      const char c = src_[j];
      if (!triple && (c == '\n' || c == '\r')) fail("newline in a string literal");
      if (c != '\\' || raw) {
        out += c;
        ++j;
        continue;
      }
      if (j + 1 >= src_.size()) fail("unterminated string literal");
      const char e = src_[j + 1];
      j += 2;
      switch (e) {
        case '\\':
          out += '\\';
          break;
        case '\'':
          out += '\'';
          break;
        case '"':
          out += '"';
          break;
        case '`':
          out += '`';
          break;
        case '?':
          out += '?';
          break;
        case 'n':
          out += '\n';
          break;
        case 't':
          out += '\t';
          break;
        case 'r':
          out += '\r';
          break;
        case 'a':
          out += '\a';
          break;
        case 'b':
          out += '\b';
          break;
        case 'f':
          out += '\f';
          break;
        case 'v':
          out += '\v';
          break;
        default:
          fail(fmt::format("escape '\\{}' is outside the subset DRA selectors use", e));
      }
    }
    t.kind = Tok::String;
    t.text = std::move(out);
    return j;
  }

  // ---- parser ----
  const Token& peek() const { return tokens_[pos_]; }
  bool is_punct(std::string_view p) const { return peek().kind == Tok::Punct && peek().text == p; }
  bool accept(std::string_view p) {
    if (!is_punct(p)) return false;
    ++pos_;
    return true;
  }
  void expect(std::string_view p) {
    if (!accept(p)) fail(fmt::format("expected '{}' at offset {}", p, peek().at));
  }

  uint32_t add(Node n) {
    p_.nodes.push_back(std::move(n));
    return static_cast<uint32_t>(p_.nodes.size() - 1);
  }
  uint32_t add(Op op, uint32_t a = 0, uint32_t b = 0, uint32_t c = 0) {
    Node n;
    n.op = op;
    n.a = a;
    n.b = b;
    n.c = c;
    return add(std::move(n));
  }
  uint32_t constant(Value v) {
    Node n;
    n.op = Op::Const;
    n.constant = v;
    return add(std::move(n));
  }
  std::string_view own(std::string s) { return p_.strings.emplace_back(std::move(s)); }
  const Node& node(uint32_t i) const { return p_.nodes[i]; }
  bool constant_string(uint32_t i) const {
    return node(i).op == Op::Const && node(i).constant.kind == Value::Kind::String;
  }

  uint32_t expr() {
    const uint32_t cond = or_expr();
    if (!accept("?")) return cond;
    const uint32_t yes = or_expr();
    expect(":");
    const uint32_t no = expr();
    return add(Op::Cond, cond, yes, no);
  }
  uint32_t or_expr() {
    uint32_t left = and_expr();
    while (accept("||")) left = add(Op::Or, left, and_expr());
    return left;
  }
  uint32_t and_expr() {
    uint32_t left = relation();
    while (accept("&&")) left = add(Op::And, left, relation());
    return left;
  }
  uint32_t relation() {
    uint32_t left = addition();
    while (true) {
      Op op;
      if (accept("<"))
        op = Op::Lt;
      else if (accept("<="))
        op = Op::Le;
      else if (accept(">"))
        op = Op::Gt;
      else if (accept(">="))
        op = Op::Ge;
      else if (accept("=="))
        op = Op::Eq;
      else if (accept("!="))
        op = Op::Ne;
      else if (peek().kind == Tok::Ident && peek().text == "in") {
        ++pos_;
        op = Op::In;
      } else
        return left;
      left = add(op, left, addition());
    }
  }
  uint32_t addition() {
    uint32_t left = multiplication();
    while (true) {
      if (accept("+"))
        left = add(Op::Add, left, multiplication());
      else if (accept("-"))
        left = add(Op::Sub, left, multiplication());
      else
        return left;
    }
  }
  uint32_t multiplication() {
    uint32_t left = unary();
    while (true) {
      if (accept("*"))
        left = add(Op::Mul, left, unary());
      else if (accept("/"))
        left = add(Op::Div, left, unary());
      else if (accept("%"))
        left = add(Op::Mod, left, unary());
      else
        return left;
    }
  }
  uint32_t unary() {
    if (accept("!")) return add(Op::Not, unary());
    if (is_punct("-")) {
      ++pos_;
      // -9223372036854775808 is a literal of its own.
      if (peek().kind == Tok::Int) {
        const Token t = peek();
        ++pos_;
        Value v = Value::integer(t.u == static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) + 1
                                     ? std::numeric_limits<int64_t>::min()
                                     : -static_cast<int64_t>(t.u));
        return member(constant(v));
      }
      return add(Op::Neg, unary());
    }
    return member(primary());
  }

  // Selection, indexing and method calls after a primary.
  uint32_t member(uint32_t target) {
    while (true) {
      if (accept(".")) {
        if (peek().kind != Tok::Ident) fail("expected a field or method name after '.'");
        const std::string name = peek().text;
        ++pos_;
        if (accept("(")) {
          std::vector<uint32_t> args = arguments();
          target = method(target, name, args);
        } else {
          target = select(target, name);
        }
      } else if (accept("[")) {
        const uint32_t key = expr();
        expect("]");
        target = index(target, key);
      } else {
        return target;
      }
    }
  }

  std::vector<uint32_t> arguments() {
    std::vector<uint32_t> args;
    if (accept(")")) return args;
    while (true) {
      args.push_back(expr());
      if (accept(")")) return args;
      expect(",");
    }
  }

  uint32_t select(uint32_t target, const std::string& field) {
    const Node& t = node(target);
    if (t.op == Op::AttrDomain || t.op == Op::CapDomain) {
      Node n;
      n.op = t.op == Op::AttrDomain ? Op::Attr : Op::Cap;
      n.text = t.text;
      n.text2 = own(field);
      return add(std::move(n));
    }
    if (t.op == Op::AttrMap || t.op == Op::CapMap) {
      Node n;
      n.op = t.op == Op::AttrMap ? Op::AttrDomain : Op::CapDomain;
      n.text = own(field);
      return add(std::move(n));
    }
    Node n;
    n.op = Op::Select;
    n.a = target;
    n.text = own(field);
    return add(std::move(n));
  }

  uint32_t index(uint32_t target, uint32_t key) {
    const Node& t = node(target);
    if (constant_string(key) &&
        (t.op == Op::AttrDomain || t.op == Op::CapDomain || t.op == Op::AttrMap || t.op == Op::CapMap))
      return select(target, std::string(node(key).constant.s));
    return add(Op::Index, target, key);
  }

  uint32_t method(uint32_t target, const std::string& name, const std::vector<uint32_t>& args) {
    auto want = [&](size_t n) {
      if (args.size() != n) fail(fmt::format("{}() takes {} argument(s) here, not {}", name, n, args.size()));
    };
    static const std::pair<std::string_view, Op> one_argument[] = {
        {"startsWith", Op::StartsWith}, {"endsWith", Op::EndsWith},           {"contains", Op::Contains},
        {"compareTo", Op::CompareTo},   {"isGreaterThan", Op::IsGreaterThan}, {"isLessThan", Op::IsLessThan},
    };
    for (const auto& [fn, op] : one_argument)
      if (name == fn) {
        want(1);
        return add(op, target, args[0]);
      }
    static const std::pair<std::string_view, Op> no_argument[] = {
        {"size", Op::Size},   {"asInteger", Op::AsInteger}, {"major", Op::Major},
        {"minor", Op::Minor}, {"patch", Op::Patch},
    };
    for (const auto& [fn, op] : no_argument)
      if (name == fn) {
        want(0);
        return add(op, target);
      }
    if (name == "matches") {
      want(1);
      return matches(target, args[0]);
    }
    fail(fmt::format("method {}() is outside the subset DRA selectors use", name));
  }

  uint32_t matches(uint32_t target, uint32_t pattern) {
    if (!constant_string(pattern)) fail("matches() takes a string literal pattern here");
    Node n;
    n.op = Op::Matches;
    n.a = target;
    try {
      n.regex = &p_.regexes.emplace_back(std::string(node(pattern).constant.s), std::regex::ECMAScript);
    } catch (const std::regex_error& e) {
      fail(fmt::format("invalid pattern '{}': {}", node(pattern).constant.s, e.what()));
    }
    return add(std::move(n));
  }

  uint32_t primary() {
    const Token t = peek();
    switch (t.kind) {
      case Tok::Int:
        ++pos_;
        if (t.u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
          fail("integer literal out of range");
        return constant(Value::integer(static_cast<int64_t>(t.u)));
      case Tok::Uint: {
        ++pos_;
        Value v;
        v.kind = Value::Kind::Uint;
        v.u = t.u;
        return constant(v);
      }
      case Tok::Double: {
        ++pos_;
        Value v;
        v.kind = Value::Kind::Double;
        v.d = t.d;
        return constant(v);
      }
      case Tok::String: {
        ++pos_;
        Value v;
        v.kind = Value::Kind::String;
        v.s = own(t.text);
        return constant(v);
      }
      case Tok::Ident:
        ++pos_;
        return identifier(t.text);
      case Tok::Punct:
        if (accept("(")) {
          const uint32_t inner = expr();
          expect(")");
          return inner;
        }
        if (accept("[")) return list();
        if (is_punct("{")) fail("map literals are outside the subset DRA selectors use");
        if (is_punct(".")) fail("qualified identifiers ('.name') are outside the subset DRA selectors use");
        fail(fmt::format("unexpected '{}'", t.text));
      case Tok::End:
        fail("unexpected end of expression");
    }
    fail("unexpected token");
  }

  uint32_t list() {
    Node n;
    n.op = Op::List;
    if (!accept("]")) {
      while (true) {
        n.args.push_back(expr());
        if (accept("]")) break;
        expect(",");
        if (accept("]")) break;  // a trailing comma
      }
    }
    // A list of constants is one constant.
    bool all_constant = true;
    for (uint32_t a : n.args) all_constant = all_constant && node(a).op == Op::Const;
    if (all_constant) {
      auto& items = p_.lists.emplace_back();
      for (uint32_t a : n.args) items.push_back(node(a).constant);
      Value v;
      v.kind = Value::Kind::List;
      v.list = &items;
      return constant(v);
    }
    return add(std::move(n));
  }

  uint32_t identifier(const std::string& name) {
    if (name == "true" || name == "false") return constant(Value::boolean(name == "true"));
    if (name == "null") return constant(Value{});
    if (is_punct("(")) {
      ++pos_;
      if (name == "has") return has();
      std::vector<uint32_t> args = arguments();
      return function(name, args);
    }
    if (name == "device") return device_field();
    fail(fmt::format("undeclared reference to '{}' (only `device` is declared)", name));
  }

  // device.<field>: the fields DRA declares.
  uint32_t device_field() {
    expect(".");
    if (peek().kind != Tok::Ident) fail("expected a field of `device`");
    const std::string field = peek().text;
    ++pos_;
    if (field == "driver") return add(Op::Driver);
    if (field == "allowMultipleAllocations") return add(Op::AllowMulti);
    if (field == "attributes") return add(Op::AttrMap);
    if (field == "capacity") return add(Op::CapMap);
    fail(fmt::format("undefined field '{}' of `device`", field));
  }

  // has(x.f): the argument is parsed as a member expression and must end in a selection.
  uint32_t has() {
    const uint32_t arg = expr();
    expect(")");
    Node& n = p_.nodes[arg];
    switch (n.op) {
      case Op::Attr:
        n.op = Op::HasAttr;
        return arg;
      case Op::Cap:
        n.op = Op::HasCap;
        return arg;
      case Op::Select:
        n.op = Op::Has;
        return arg;
      case Op::AttrDomain:
      case Op::CapDomain: {
        // has(device.attributes.domain): is the domain there?
        Node h;
        h.op = Op::Has;
        h.a = add(n.op == Op::AttrDomain ? Op::AttrMap : Op::CapMap);
        h.text = p_.nodes[arg].text;
        return add(std::move(h));
      }
      default:
        fail("has() takes a field selection");
    }
  }

  uint32_t function(const std::string& name, const std::vector<uint32_t>& args) {
    if (name == "size") {
      if (args.size() != 1) fail("size() takes one argument");
      return add(Op::Size, args[0]);
    }
    if (name == "matches") {
      if (args.size() != 2) fail("matches() takes two arguments");
      return matches(args[0], args[1]);
    }
    if (name == "quantity" || name == "semver") {
      if (args.size() != 1 || !constant_string(args[0]))
        fail(fmt::format("{}() takes one string literal here", name));
      const std::string_view text = node(args[0]).constant.s;
      Value v;
      if (name == "quantity") {
        v.kind = Value::Kind::Quantity;
        try {
          v.i = codec::parse_quantity_milli(text);
        } catch (const std::exception&) {
          fail(fmt::format("quantity('{}') is not a valid quantity", text));
        }
      } else {
        const auto parsed = parse_semver(text);
        if (!parsed) fail(fmt::format("semver('{}') is not a valid semantic version", text));
        v.kind = Value::Kind::Semver;
        v.semver = &p_.semvers.emplace_back(*parsed);
      }
      return constant(v);
    }
    fail(fmt::format("function {}() is outside the subset DRA selectors use", name));
  }

  CelProgram::Impl& p_;
  std::string_view src_;
  std::vector<Token> tokens_;
  size_t pos_ = 0;
};

}  // namespace

CelProgram::CelProgram(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
CelProgram::CelProgram(CelProgram&&) noexcept = default;
CelProgram& CelProgram::operator=(CelProgram&&) noexcept = default;
CelProgram::~CelProgram() = default;

const std::string& CelProgram::expression() const { return impl_->expression; }

CelProgram CelProgram::compile(std::string_view expression) {
  auto impl = std::make_unique<Impl>();
  impl->expression = std::string(expression);
  impl->nodes.reserve(32);
  impl->root = Compiler(*impl).compile();
  return CelProgram(std::move(impl));
}

CelOutcome CelProgram::evaluate(const DeviceView& device) const {
  const cel_detail::Value v = cel_evaluate(*impl_, impl_->root, device);
  if (v.kind == cel_detail::Value::Kind::Bool)
    return CelOutcome{v.b ? CelOutcome::Kind::True : CelOutcome::Kind::False, ""};
  if (v.kind == cel_detail::Value::Kind::Error) return CelOutcome{CelOutcome::Kind::Error, v.error};
  return CelOutcome{CelOutcome::Kind::Error, "the result is not a bool"};
}

}  // namespace gpuslice::core::dra
