// A one-line progress report on stderr for commands that run for seconds to
// minutes (study, plan, simulate, realgpu check and labs): shown only when
// stderr is a terminal and --quiet is not given, so logs, pipes and CI stay
// clean. Hand-written: Debian packages no C++ progress library (indicators
// is not in Debian), and a line of text is all it takes.
#pragma once

#include <chrono>
#include <cstddef>
#include <mutex>
#include <string>

namespace gpuslice::cli {

class Progress {
 public:
  Progress(std::string label, bool quiet);
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  bool shown() const { return shown_; }
  // done of total steps (and what is running); redrawn at most 10 times a
  // second, from any thread.
  void step(size_t done, size_t total, const std::string& detail = "");
  // The same as a share of the work (0..1) when the steps are not known.
  void fraction(double done);
  // Clears the line (before the command prints its answer).
  void finish();

 private:
  std::string label_;
  bool shown_;
  bool drawn_ = false;
  std::mutex mutex_;
  std::chrono::steady_clock::time_point last_{};
  void draw(double share, const std::string& figure, bool last);
};

}  // namespace gpuslice::cli
