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
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace gpuslice::core::codec
