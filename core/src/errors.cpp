#include "gpuslice/core/errors.hpp"

#include <fmt/format.h>

namespace gpuslice::core {

static std::string where(const std::string& file, int line, const std::string& field,
                         const std::string& what) {
  std::string out = file;
  if (line > 0) out += fmt::format(":{}", line);
  out += ": ";
  if (!field.empty()) out += field + ": ";
  return out + what;
}

InputError::InputError(std::string file, int line, std::string field, std::string what)
    : std::runtime_error(where(file, line, field, what)),
      file_(std::move(file)),
      line_(line),
      field_(std::move(field)),
      detail_(std::move(what)) {}

}  // namespace gpuslice::core
