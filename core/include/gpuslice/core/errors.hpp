// Bad input is reported with where it came from: file, line and field.
#pragma once

#include <stdexcept>
#include <string>

namespace gpuslice::core {

class InputError : public std::runtime_error {
 public:
  InputError(std::string file, int line, std::string field, std::string what);
  const std::string& file() const { return file_; }
  int line() const { return line_; }
  const std::string& field() const { return field_; }
  const std::string& detail() const { return detail_; }

 private:
  std::string file_;
  int line_;
  std::string field_;
  std::string detail_;
};

// Codecs throw this without a location; the loader that knows the file and
// line rethrows it as an InputError.
class CodecError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace gpuslice::core
