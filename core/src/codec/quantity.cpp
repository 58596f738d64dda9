#include "gpuslice/core/codec/quantity.hpp"

#include <fmt/format.h>

#include <cctype>
#include <limits>
#include <optional>
#include <string>

#include "gpuslice/core/errors.hpp"

namespace gpuslice::core::codec {

namespace {

__extension__ typedef __int128 i128;
constexpr i128 kLimit = static_cast<i128>(std::numeric_limits<int64_t>::max()) * 1000;

// A quantity as the exact fraction numerator / denominator (in units).
struct Exact {
  i128 numerator = 0;
  i128 denominator = 1;
  bool negative = false;
};

i128 checked_mul(i128 a, i128 b, std::string_view text) {
  if (a != 0 && b > kLimit / a) throw CodecError(fmt::format("quantity '{}' is too large", text));
  return a * b;
}

i128 pow_int(i128 base, int exp, std::string_view text) {
  i128 r = 1;
  for (int i = 0; i < exp; ++i) r = checked_mul(r, base, text);
  return r;
}

Exact parse_exact(std::string_view text) {
  if (text.empty()) throw CodecError("empty quantity");
  Exact q;
  size_t i = 0;
  if (text[i] == '+' || text[i] == '-') {
    q.negative = text[i] == '-';
    ++i;
  }
  i128 digits = 0;
  int frac_digits = 0;
  bool any_digit = false, in_frac = false;
  for (; i < text.size(); ++i) {
    const char c = text[i];
    if (std::isdigit(static_cast<unsigned char>(c))) {
      digits = checked_mul(digits, 10, text) + (c - '0');
      if (digits > kLimit) throw CodecError(fmt::format("quantity '{}' is too large", text));
      if (in_frac) ++frac_digits;
      any_digit = true;
    } else if (c == '.' && !in_frac) {
      in_frac = true;
    } else {
      break;
    }
  }
  if (!any_digit) throw CodecError(fmt::format("quantity '{}' has no digits", text));
  std::string_view suffix = text.substr(i);
  i128 num = digits, den = pow_int(10, frac_digits, text);
  struct Unit {
    std::string_view s;
    int base;
    int exp;
  };
  static constexpr Unit units[] = {{"Ki", 2, 10}, {"Mi", 2, 20}, {"Gi", 2, 30}, {"Ti", 2, 40},
                                   {"Pi", 2, 50}, {"Ei", 2, 60}, {"n", 10, -9}, {"u", 10, -6},
                                   {"m", 10, -3}, {"", 10, 0},   {"k", 10, 3},  {"M", 10, 6},
                                   {"G", 10, 9},  {"T", 10, 12}, {"P", 10, 15}, {"E", 10, 18}};
  bool matched = false;
  for (const auto& u : units) {
    if (suffix == u.s) {
      matched = true;
      if (u.exp >= 0)
        num = checked_mul(num, pow_int(u.base, u.exp, text), text);
      else
        den = checked_mul(den, pow_int(u.base, -u.exp, text), text);
      break;
    }
  }
  if (!matched) {
    // Decimal exponent form: 1e3, 2E-2.
    if (suffix.size() >= 2 && (suffix[0] == 'e' || suffix[0] == 'E')) {
      size_t j = 1;
      bool neg = false;
      if (suffix[j] == '+' || suffix[j] == '-') {
        neg = suffix[j] == '-';
        ++j;
      }
      if (j >= suffix.size()) throw CodecError(fmt::format("quantity '{}' has a bad exponent", text));
      int e = 0;
      for (; j < suffix.size(); ++j) {
        if (!std::isdigit(static_cast<unsigned char>(suffix[j])))
          throw CodecError(fmt::format("quantity '{}' has a bad exponent", text));
        e = e * 10 + (suffix[j] - '0');
        if (e > 40) throw CodecError(fmt::format("quantity '{}' is out of range", text));
      }
      if (neg)
        den = checked_mul(den, pow_int(10, e, text), text);
      else
        num = checked_mul(num, pow_int(10, e, text), text);
    } else {
      throw CodecError(fmt::format("quantity '{}' has an unknown suffix '{}'", text, suffix));
    }
  }
  q.numerator = num;
  q.denominator = den;
  return q;
}

// The common spellings ("80Gi", "40000Mi", "25", "500m"): whole digits and
// one of the usual suffixes, in int64 arithmetic. Anything else, and any
// overflow, goes to parse_exact, so results and errors are its own; the
// value is exact here, so there is nothing to round.
std::optional<int64_t> simple_quantity_milli(std::string_view text) {
  size_t i = 0;
  const bool negative = !text.empty() && text[0] == '-';
  if (negative) i = 1;
  const size_t first = i;
  int64_t digits = 0;
  for (; i < text.size() && i - first < 18; ++i) {
    const char c = text[i];
    if (c < '0' || c > '9') break;
    digits = digits * 10 + (c - '0');
  }
  if (i == first) return std::nullopt;
  const std::string_view suffix = text.substr(i);
  int64_t multiplier = 0;  // milli-units per written unit
  if (suffix.empty())
    multiplier = 1000;
  else if (suffix == "m")
    multiplier = 1;
  else if (suffix == "k")
    multiplier = 1000LL * 1000;
  else if (suffix == "M")
    multiplier = 1000LL * 1000 * 1000;
  else if (suffix == "G")
    multiplier = 1000LL * 1000 * 1000 * 1000;
  else if (suffix == "Ki")
    multiplier = 1000LL << 10;
  else if (suffix == "Mi")
    multiplier = 1000LL << 20;
  else if (suffix == "Gi")
    multiplier = 1000LL << 30;
  else if (suffix == "Ti")
    multiplier = 1000LL << 40;
  else
    return std::nullopt;  // a fraction, an exponent, 19+ digits, another suffix: the exact path
  int64_t milli = 0;
  if (__builtin_mul_overflow(digits, multiplier, &milli)) return std::nullopt;
  return negative ? -milli : milli;
}

}  // namespace

int64_t parse_quantity_milli(std::string_view text) {
  if (const auto simple = simple_quantity_milli(text)) return *simple;
  Exact q = parse_exact(text);
  i128 milli = checked_mul(q.numerator, 1000, text);
  i128 v = (milli + q.denominator - 1) / q.denominator;  // round up, as Quantity does
  if (v > std::numeric_limits<int64_t>::max())
    throw CodecError(fmt::format("quantity '{}' is too large", text));
  return static_cast<int64_t>(q.negative ? -v : v);
}

int64_t parse_quantity_value(std::string_view text) {
  Exact q = parse_exact(text);
  i128 v = (q.numerator + q.denominator - 1) / q.denominator;
  if (v > std::numeric_limits<int64_t>::max())
    throw CodecError(fmt::format("quantity '{}' is too large", text));
  return static_cast<int64_t>(q.negative ? -v : v);
}

int64_t parse_quantity_integer(std::string_view text) {
  Exact q = parse_exact(text);
  if (q.numerator % q.denominator != 0)
    throw CodecError(fmt::format("quantity '{}' is not a whole number", text));
  i128 v = q.numerator / q.denominator;
  if (v > std::numeric_limits<int64_t>::max())
    throw CodecError(fmt::format("quantity '{}' is too large", text));
  return static_cast<int64_t>(q.negative ? -v : v);
}

std::string format_quantity_decimal_si(int64_t value) {
  // int64Amount.AsCanonicalBytes: drop factors of ten, then keep an
  // exponent that is a multiple of three.
  int64_t amount = value;
  int exponent = 0;
  while ((amount >= 10 || amount <= -10) && amount % 10 == 0) {
    amount /= 10;
    ++exponent;
  }
  while (exponent % 3 != 0) {
    amount *= 10;
    --exponent;
  }
  static constexpr const char* suffix[] = {"", "k", "M", "G", "T", "P", "E"};
  return fmt::format("{}{}", amount, suffix[exponent / 3]);
}

std::string format_quantity_binary_si(int64_t value) {
  if (value > -1024 && value < 1024) return format_quantity_decimal_si(value);
  int64_t amount = value;
  int exponent = 0;
  while ((amount >= 1024 || amount <= -1024) && amount % 1024 == 0) {
    amount /= 1024;
    ++exponent;
  }
  static constexpr const char* suffix[] = {"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
  return fmt::format("{}{}", amount, suffix[exponent]);
}

}  // namespace gpuslice::core::codec
