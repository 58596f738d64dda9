#include "gpuslice/core/codec/text_file.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "gpuslice/core/errors.hpp"

namespace gpuslice::core::codec {

std::string read_text_file(const std::string& path, const NamedAt* named_at) {
  // At the file itself "X: is a folder"; where it was named "F:12: field: 'X': is a folder".
  auto refuse = [&](const std::string& what) {
    if (named_at)
      throw InputError(named_at->source, named_at->line, named_at->field,
                       fmt::format("'{}': {}", path, what));
    throw InputError(path, 0, "", what);
  };
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) refuse("is a folder; give a file");
  if (std::filesystem::exists(path, ec) && !std::filesystem::is_regular_file(path, ec))
    refuse("is not a regular file");
  std::ifstream in(path, std::ios::binary);
  if (!in) refuse("cannot open file");
  // Straight into a string of the file's size: one copy, and a file too
  // big for the memory left is std::bad_alloc (docs/cli.md#memory), where a
  // stream would stop silently and hand on a truncated text.
  const auto size = std::filesystem::file_size(path, ec);
  if (!ec && size > 0) {
    std::string text(static_cast<size_t>(size), '\0');
    if (!in.read(text.data(), static_cast<std::streamsize>(size))) refuse("cannot read file");
    return text;
  }
  std::ostringstream text;  // a size the file system does not know (/proc, a pipe)
  text << in.rdbuf();
  return text.str();
}

}  // namespace gpuslice::core::codec
