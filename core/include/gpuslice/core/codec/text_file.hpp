// Reading an input file whole: the one place the front ends (CLI, simulator,
// planner, realgpu runner) open their inputs, so every refusal reads alike.
#pragma once

#include <iosfwd>
#include <string>

namespace gpuslice::core::codec {

// Where a file was named, for errors about it: a field of another file (a
// scenario naming its openb CSV) or of the command line.
struct NamedAt {
  std::string source;
  int line = 0;
  std::string field;
};

// The whole text of `path`. A folder, anything but a regular file (a FIFO or
// a device would block or never end) and a file that cannot be opened are an
// InputError: at `path` itself, or where it was named when `named_at` is set.
std::string read_text_file(const std::string& path, const NamedAt* named_at = nullptr);

// Opens `path` into `in` (binary), with read_text_file's refusals: for a
// reader that reads the file its own way (KubeText::from_file, into its buffer).
void open_input_file(std::ifstream& in, const std::string& path, const NamedAt* named_at = nullptr);

// The InputError read_text_file throws: `what` at `path` itself, or
// "'PATH': what" where it was named.
[[noreturn]] void refuse_input_file(const std::string& path, const NamedAt* named_at,
                                    const std::string& what);

}  // namespace gpuslice::core::codec
