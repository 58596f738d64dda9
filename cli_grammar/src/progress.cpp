#include "gpuslice/cli/progress.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>

namespace gpuslice::cli {

Progress::Progress(std::string label, bool quiet)
    : label_(std::move(label)), shown_(!quiet && isatty(STDERR_FILENO)) {}

Progress::~Progress() { finish(); }

void Progress::step(size_t done, size_t total, const std::string& detail) {
  if (!shown_) return;
  const double share = total ? static_cast<double>(done) / static_cast<double>(total) : 0;
  draw(share, fmt::format("{}/{}{}", done, total, detail.empty() ? "" : " " + detail), done >= total);
}

void Progress::fraction(double done) {
  if (!shown_) return;
  const double share = std::clamp(done, 0.0, 1.0);
  draw(share, fmt::format("{:3.0f}%", share * 100), share >= 1);
}

void Progress::draw(double share, const std::string& figure, bool last) {
  std::lock_guard lock(mutex_);
  const auto now = std::chrono::steady_clock::now();
  if (drawn_ && !last && now - last_ < std::chrono::milliseconds(100)) return;
  last_ = now;
  drawn_ = true;
  const int width = 25;
  const int filled = std::clamp(static_cast<int>(share * width), 0, width);
  const std::string line =
      fmt::format("\r{} [{:<{}}] {}", label_, std::string(static_cast<size_t>(filled), '#'), width, figure);
  // \x1b[K clears what a longer previous line left.
  std::fputs((line + "\x1b[K").c_str(), stderr);
  std::fflush(stderr);
}

void Progress::finish() {
  if (!shown_) return;
  std::lock_guard lock(mutex_);
  if (!drawn_) return;
  std::fputs("\r\x1b[K", stderr);
  std::fflush(stderr);
  drawn_ = false;
}

}  // namespace gpuslice::cli
