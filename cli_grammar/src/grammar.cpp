#include "gpuslice/cli/grammar.hpp"

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <cstring>
#include <functional>

namespace gpuslice::cli {

namespace {

bool whole_form(const std::string& s, int64_t& value) {
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  return !s.empty() && ec == std::errc() && p == s.data() + s.size();
}

bool unsigned_form(const std::string& s, uint64_t& value) {
  if (s.empty() || s[0] == '-' || s[0] == '+') return false;
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  return ec == std::errc() && p == s.data() + s.size();
}

bool number_form(const std::string& s, double& value) {
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  return !s.empty() && ec == std::errc() && p == s.data() + s.size();
}

// `{:g}` with enough digits for 2^53 and 1e7 alike, never 300 of them.
std::string shown(double v) { return fmt::format("{:.12g}", v); }

// The app and its subcommands, depth first.
void each_app(CLI::App& app, const std::function<void(CLI::App&)>& visit) {
  visit(app);
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) each_app(*sub, visit);
}

bool is_help(const char* word) { return std::strcmp(word, "--help") == 0 || std::strcmp(word, "-h") == 0; }

std::string command_path(const CLI::App& app) {
  std::string path;
  for (const CLI::App* a = &app; a; a = a->get_parent())
    path = (a->get_parent() ? a->get_name() : std::string("gpuslice")) + (path.empty() ? "" : " ") + path;
  return path;
}

// The deepest subcommand the command line selected.
const CLI::App& selected(const CLI::App& app) {
  for (const CLI::App* sub : app.get_subcommands())
    if (sub->parsed()) return selected(*sub);
  return app;
}

std::vector<std::string> flag_names(const CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::Option* o : app.get_options()) {
    for (const auto& l : o->get_lnames()) names.push_back("--" + l);
    for (const auto& s : o->get_snames()) names.push_back("-" + s);
  }
  return names;
}

std::vector<std::string> subcommand_names(const CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; }))
    names.push_back(sub->get_name());
  return names;
}

std::string join(const std::vector<std::string>& words) {
  std::string out;
  for (const auto& w : words) out += (out.empty() ? "" : ", ") + w;
  return out;
}

}  // namespace

CLI::Validator whole_number(int64_t min, int64_t max) {
  return CLI::Validator(
      [min, max](std::string& s) -> std::string {
        int64_t v = 0;
        const bool any = min == std::numeric_limits<int64_t>::min();
        const std::string range = max == std::numeric_limits<int64_t>::max()
                                      ? (any ? std::string() : fmt::format(" {} or more", min))
                                      : fmt::format(" from {} to {}", min, max);
        if (!whole_form(s, v) || v < min || v > max)
          return fmt::format("'{}' is not a whole number{}", s, range);
        return {};
      },
      "", "gpuslice-number");
}

CLI::Validator unsigned_number() {
  return CLI::Validator(
      [](std::string& s) -> std::string {
        uint64_t v = 0;
        if (!unsigned_form(s, v)) return fmt::format("'{}' is not a whole number 0 or more", s);
        return {};
      },
      "", "gpuslice-number");
}

CLI::Validator number(double min, double max, bool min_open) {
  return CLI::Validator(
      [min, max, min_open](std::string& s) -> std::string {
        double v = 0;
        if (!number_form(s, v) || !std::isfinite(v) || v < min || (min_open && v == min) || v > max)
          return fmt::format("'{}' is not a number in {}{}, {}]", s, min_open ? "(" : "[", shown(min),
                             shown(max));
        return {};
      },
      "", "gpuslice-number");
}

namespace {
// The form of any number (nan and inf included: the command's own range
// check names them with its message).
CLI::Validator number_word() {
  return CLI::Validator(
      [](std::string& s) -> std::string {
        double v = 0;
        if (!number_form(s, v)) return fmt::format("'{}' is not a number", s);
        return {};
      },
      "", "gpuslice-number-form");
}
}  // namespace

void check_number_forms(CLI::App& root) {
  each_app(root, [](CLI::App& app) {
    for (CLI::Option* o : app.get_options([](CLI::Option*) { return true; })) {
      if (o->get_expected_min() == 0) continue;  // a flag
      const std::string type = o->get_type_name();
      const std::string base = type.substr(0, type.find(':'));
      if (base == "INT")
        o->check(whole_number(std::numeric_limits<int64_t>::min()));
      else if (base == "UINT")
        o->check(unsigned_number());
      else if (base == "FLOAT")
        o->check(number_word());
    }
  });
}

std::string unknown_subcommand(const CLI::App& root, int argc, const char* const* argv) {
  for (int i = 1; i < argc; ++i)
    if (is_help(argv[i])) return {};
  const CLI::App* app = &root;
  for (int i = 1; i < argc; ++i) {
    const auto names = subcommand_names(*app);
    // Only a level that takes subcommands reads its first word as one; the
    // words after a leaf subcommand are its own arguments.
    if (names.empty() || argv[i][0] == '-') return {};
    const std::string word = argv[i];
    const CLI::App* next = nullptr;
    for (const CLI::App* sub : app->get_subcommands([](const CLI::App*) { return true; }))
      if (sub->get_name() == word) next = sub;
    if (!next) {
      const std::string guess = closest(word, names);
      return fmt::format(
          "A subcommand is required: '{}' is not a {} subcommand{} (subcommands: {}).\n"
          "Run with --help for more information.",
          word, command_path(*app), guess.empty() ? "" : "; did you mean '" + guess + "'?", join(names));
    }
    app = next;
  }
  return {};
}

std::string usage_error_text(const CLI::App& root, const CLI::ParseError& e) {
  const CLI::App& app = selected(root);
  // CLI11 checks required options before it names unknown words: a
  // mistyped `--ouot DIR` would read "--out is required". The unknown word
  // is the mistake, so it is named first whatever CLI11 threw.
  if (dynamic_cast<const CLI::ExtrasError*>(&e) || !app.remaining(false).empty()) {
    // The first unknown flag is the mistake (the words after it are its
    // value); with none, the first stray word.
    const auto words = app.remaining(false);
    std::string out;
    for (const auto& word : words)
      if (!word.empty() && word[0] == '-') {
        const std::string name = word.substr(0, word.find('='));
        const std::string guess = closest(name, flag_names(app));
        out = fmt::format("command line: {}: not a flag of `{}`{}\n", name, command_path(app),
                          guess.empty() ? "" : "; did you mean " + guess + "?");
        break;
      }
    if (out.empty() && !words.empty())
      out =
          fmt::format("command line: '{}': `{}` takes no such argument\n", words.front(), command_path(app));
    if (!out.empty()) return out + "Run with --help for more information.";
  }
  if (dynamic_cast<const CLI::ValidationError*>(&e))
    return fmt::format("command line: {}\nRun with --help for more information.", e.what());
  return fmt::format("{}\nRun with --help for more information.", e.what());
}

}  // namespace gpuslice::cli
