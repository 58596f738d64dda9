// The grammar every gpuslice subcommand shares (docs/cli.md): numbers are
// checked for form and range with the project's message, unknown words get
// a "did you mean", usage errors exit 2.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace gpuslice::cli {

// A whole number in [min, max]: "'abc' is not a whole number from 0 to 600".
CLI::Validator whole_number(int64_t min = 0, int64_t max = std::numeric_limits<int64_t>::max());
// An unsigned 64-bit number (seeds, byte counts): any value from 0 up.
CLI::Validator unsigned_number();
// A finite number in [min, max] (or (min, max] with min_open).
CLI::Validator number(double min, double max, bool min_open = false);

// Every numeric option of the tree that has no range check of its own gets
// the form check of its type (whole, unsigned, number), so a word where a
// number belongs is refused with the flag's name, never a converter's text.
void check_number_forms(CLI::App& app);

// The message for a word where a subcommand belongs at any level
// (`gpuslice frobnicate`, `gpuslice realgpu chek`), or "" when the command
// line names known subcommands. --help anywhere is left to CLI11.
std::string unknown_subcommand(const CLI::App& app, int argc, const char* const* argv);

// The text printed for a usage error: the project's form
// ("command line: --flag: what") with a "did you mean" for unknown flags.
std::string usage_error_text(const CLI::App& app, const CLI::ParseError& e);

// The closest of the candidates to word (edit distance at most a third of
// its length, at least 1 and at most 3), or "" when none is close.
std::string closest(const std::string& word, const std::vector<std::string>& candidates);

}  // namespace gpuslice::cli
