#include "gpuslice/core/disruption/label_selector.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <optional>
#include <stdexcept>

namespace gpuslice::core::disruption {

namespace {

using Op = LabelRequirement::Op;

bool alnum(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; }

// A name part of a key, or a value: at most 63 characters, alphanumeric at
// both ends, '-', '_' and '.' inside (apimachinery's qualifiedNameRegexp).
bool qualified_name_part(std::string_view s) {
  if (s.empty() || s.size() > 63 || !alnum(s.front()) || !alnum(s.back())) return false;
  return std::all_of(s.begin(), s.end(), [](char c) { return alnum(c) || c == '-' || c == '_' || c == '.'; });
}

// A key's prefix: a DNS subdomain (lower case, at most 253 characters).
bool dns_subdomain(std::string_view s) {
  if (s.empty() || s.size() > 253) return false;
  size_t start = 0;
  while (start <= s.size()) {
    const size_t dot = s.find('.', start);
    const std::string_view label = s.substr(start, dot == std::string_view::npos ? s.npos : dot - start);
    if (label.empty() || label.size() > 63) return false;
    auto lower_alnum = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
    if (!lower_alnum(label.front()) || !lower_alnum(label.back())) return false;
    if (!std::all_of(label.begin(), label.end(), [&](char c) { return lower_alnum(c) || c == '-'; }))
      return false;
    if (dot == std::string_view::npos) break;
    start = dot + 1;
  }
  return true;
}

std::optional<int64_t> integer(std::string_view s) {
  int64_t v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return v;
}

// The lexer of apimachinery's selector parser: identifiers run until a
// blank or one of "=!(),<>".
struct Token {
  enum Kind {
    End,
    Identifier,
    In,
    NotIn,
    Not,
    Equals,
    DoubleEquals,
    NotEquals,
    Open,
    Close,
    Comma,
    Greater,
    Less
  };
  Kind kind = End;
  std::string text;
};

bool special(char c) {
  return c == '=' || c == '!' || c == '(' || c == ')' || c == ',' || c == '>' || c == '<';
}

std::vector<Token> tokens_of(std::string_view s) {
  std::vector<Token> out;
  size_t i = 0;
  while (i < s.size()) {
    const char c = s[i];
    if (std::isspace(static_cast<unsigned char>(c))) {
      ++i;
      continue;
    }
    if (special(c)) {
      const bool two = i + 1 < s.size() && s[i + 1] == '=' && (c == '=' || c == '!');
      Token t;
      switch (c) {
        case '=':
          t.kind = two ? Token::DoubleEquals : Token::Equals;
          break;
        case '!':
          t.kind = two ? Token::NotEquals : Token::Not;
          break;
        case '(':
          t.kind = Token::Open;
          break;
        case ')':
          t.kind = Token::Close;
          break;
        case ',':
          t.kind = Token::Comma;
          break;
        case '>':
          t.kind = Token::Greater;
          break;
        default:
          t.kind = Token::Less;
      }
      t.text = std::string(s.substr(i, two ? 2 : 1));
      out.push_back(std::move(t));
      i += two ? 2 : 1;
      continue;
    }
    size_t j = i;
    while (j < s.size() && !special(s[j]) && !std::isspace(static_cast<unsigned char>(s[j]))) ++j;
    Token t;
    t.text = std::string(s.substr(i, j - i));
    t.kind = t.text == "in" ? Token::In : t.text == "notin" ? Token::NotIn : Token::Identifier;
    out.push_back(std::move(t));
    i = j;
  }
  out.push_back({});
  return out;
}

class Parser {
 public:
  explicit Parser(std::string_view text) : tokens_(tokens_of(text)) {}

  LabelSelector parse() {
    LabelSelector sel;
    if (peek().kind == Token::End) return sel;  // "": every pod
    for (;;) {
      sel.requirements.push_back(requirement());
      const Token& t = next();
      if (t.kind == Token::End) break;
      if (t.kind != Token::Comma)
        fail(fmt::format("expected ',' or the end after a requirement, found '{}'", t.text));
      if (peek().kind == Token::End) fail("a ',' must be followed by a requirement");
    }
    return sel;
  }

 private:
  [[noreturn]] static void fail(const std::string& what) { throw std::invalid_argument(what); }
  const Token& peek() const { return tokens_[at_]; }
  const Token& next() { return tokens_[at_ < tokens_.size() - 1 ? at_++ : at_]; }

  std::string key() {
    const Token& t = next();
    if (t.kind != Token::Identifier)
      fail(t.kind == Token::End ? "a requirement needs a label key"
                                : fmt::format("expected a label key, found '{}'", t.text));
    if (std::string problem = label_key_problem(t.text); !problem.empty()) fail(problem);
    return t.text;
  }

  LabelRequirement requirement() {
    LabelRequirement r;
    if (peek().kind == Token::Not) {
      next();
      r.key = key();
      r.op = Op::DoesNotExist;
      return r;
    }
    r.key = key();
    const Token& op = peek();
    switch (op.kind) {
      case Token::End:
      case Token::Comma:
        r.op = Op::Exists;
        return r;
      case Token::Equals:
      case Token::DoubleEquals:
      case Token::NotEquals:
        next();
        r.op = op.kind == Token::NotEquals ? Op::NotIn : Op::In;
        r.values = {single_value()};
        return r;
      case Token::In:
      case Token::NotIn:
        next();
        r.op = op.kind == Token::In ? Op::In : Op::NotIn;
        r.values = value_set();
        return r;
      case Token::Greater:
      case Token::Less: {
        next();
        r.op = op.kind == Token::Greater ? Op::GreaterThan : Op::LessThan;
        const Token& v = next();
        if (v.kind != Token::Identifier || !integer(v.text))
          fail(fmt::format("'{}{}' needs an integer after it", r.key, op.text));
        r.values = {v.text};
        return r;
      }
      default:
        fail(fmt::format("'{}' cannot follow the key '{}' (use =, ==, !=, in, notin, >, <)", op.text, r.key));
    }
  }

  std::string single_value() {
    const Token& t = peek();
    if (t.kind == Token::End || t.kind == Token::Comma) return "";  // "key=": the empty value
    next();
    if (t.kind != Token::Identifier && t.kind != Token::In && t.kind != Token::NotIn)
      fail(fmt::format("expected a label value, found '{}'", t.text));
    if (std::string problem = label_value_problem(t.text); !problem.empty()) fail(problem);
    return t.text;
  }

  std::vector<std::string> value_set() {
    if (next().kind != Token::Open) fail("'in' and 'notin' need a list of values in parentheses");
    std::vector<std::string> values;
    if (peek().kind == Token::Close) {
      next();
      return {""};  // "in ()": apimachinery reads it as the empty value
    }
    for (;;) {
      const Token& t = peek();
      if (t.kind == Token::Comma || t.kind == Token::Close) {
        values.push_back("");  // "in (a,,b)": an empty value between commas
      } else {
        next();
        if (t.kind != Token::Identifier && t.kind != Token::In && t.kind != Token::NotIn)
          fail(t.kind == Token::End ? "a value list is not closed with ')'"
                                    : fmt::format("expected a label value, found '{}'", t.text));
        if (std::string problem = label_value_problem(t.text); !problem.empty()) fail(problem);
        values.push_back(t.text);
      }
      const Token& sep = next();
      if (sep.kind == Token::Close) break;
      if (sep.kind != Token::Comma) fail("a value list is not closed with ')'");
    }
    std::sort(values.begin(), values.end());
    values.erase(std::unique(values.begin(), values.end()), values.end());
    return values;
  }

  std::vector<Token> tokens_;
  size_t at_ = 0;
};

const char* op_text(Op op) {
  switch (op) {
    case Op::In:
      return "in";
    case Op::NotIn:
      return "notin";
    case Op::GreaterThan:
      return ">";
    case Op::LessThan:
      return "<";
    default:
      return "";
  }
}

}  // namespace

std::string label_key_problem(std::string_view key) {
  const size_t slash = key.find('/');
  const std::string_view name = slash == std::string_view::npos ? key : key.substr(slash + 1);
  if (slash != std::string_view::npos && !dns_subdomain(key.substr(0, slash)))
    return fmt::format("label key '{}': its prefix must be a DNS subdomain (lower case, dots, at most 253)",
                       key);
  if (!qualified_name_part(name))
    return fmt::format(
        "label key '{}': the name must be at most 63 characters, alphanumeric at both ends, with '-', '_' or "
        "'.' between",
        key);
  return {};
}

std::string label_value_problem(std::string_view value) {
  if (value.empty() || qualified_name_part(value)) return {};
  return fmt::format(
      "label value '{}' must be empty or at most 63 characters, alphanumeric at both ends, with '-', '_' or "
      "'.' between",
      value);
}

bool LabelRequirement::matches(const Labels& labels) const {
  const auto it = labels.find(key);
  const bool has = it != labels.end();
  auto in_values = [&] { return std::find(values.begin(), values.end(), it->second) != values.end(); };
  switch (op) {
    case Op::In:
      return has && in_values();
    case Op::NotIn:
      return !has || !in_values();
    case Op::Exists:
      return has;
    case Op::DoesNotExist:
      return !has;
    case Op::GreaterThan:
    case Op::LessThan: {
      if (!has || values.size() != 1) return false;
      const auto label = integer(it->second), bound = integer(values.front());
      if (!label || !bound) return false;
      return op == Op::GreaterThan ? *label > *bound : *label < *bound;
    }
  }
  return false;
}

bool LabelSelector::matches(const Labels& labels) const {
  if (nothing) return false;
  return std::all_of(requirements.begin(), requirements.end(),
                     [&](const LabelRequirement& r) { return r.matches(labels); });
}

std::string LabelSelector::text() const {
  if (nothing) return "<nothing>";
  std::vector<std::string> parts;
  for (const auto& r : requirements) {
    switch (r.op) {
      case Op::Exists:
        parts.push_back(r.key);
        break;
      case Op::DoesNotExist:
        parts.push_back("!" + r.key);
        break;
      case Op::In:
      case Op::NotIn:
        if (r.values.size() == 1)
          parts.push_back(r.key + (r.op == Op::In ? "=" : "!=") + r.values.front());
        else
          parts.push_back(fmt::format("{} {} ({})", r.key, op_text(r.op), fmt::join(r.values, ",")));
        break;
      default:
        parts.push_back(r.key + op_text(r.op) + r.values.front());
    }
  }
  return fmt::format("{}", fmt::join(parts, ","));
}

LabelSelector parse_label_selector(std::string_view text) { return Parser(text).parse(); }

LabelRequirement label_expression(std::string key, std::string_view op, std::vector<std::string> values) {
  if (std::string problem = label_key_problem(key); !problem.empty()) throw std::invalid_argument(problem);
  LabelRequirement r;
  r.key = std::move(key);
  if (op == "In" || op == "NotIn") {
    if (values.empty()) throw std::invalid_argument(fmt::format("operator {} needs at least one value", op));
    r.op = op == "In" ? Op::In : Op::NotIn;
  } else if (op == "Exists" || op == "DoesNotExist") {
    if (!values.empty()) throw std::invalid_argument(fmt::format("operator {} takes no values", op));
    r.op = op == "Exists" ? Op::Exists : Op::DoesNotExist;
  } else {
    throw std::invalid_argument(fmt::format("unknown operator '{}' (In, NotIn, Exists, DoesNotExist)", op));
  }
  for (const auto& v : values)
    if (std::string problem = label_value_problem(v); !problem.empty()) throw std::invalid_argument(problem);
  std::sort(values.begin(), values.end());
  values.erase(std::unique(values.begin(), values.end()), values.end());
  r.values = std::move(values);
  return r;
}

}  // namespace gpuslice::core::disruption
