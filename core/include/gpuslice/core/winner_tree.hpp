// The best of n ranked entries under point updates: a winner (tournament)
// tree. The scheduler keeps one per request shape so a placement reads the
// best fitting node at the root instead of popping stale heap entries.
// The best is the highest rank; among equal ranks, the lowest index (the
// node listed first, HAMi's and the artifact's tie-break).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

namespace gpuslice::core {

class WinnerTree {
 public:
  // n entries, none present.
  void reset(size_t n) {
    n_ = n;
    leaves_ = 1;
    while (leaves_ < n) leaves_ *= 2;
    entries_.assign(leaves_, Entry{});
    winner_.assign(2 * leaves_, 0);
    for (size_t i = 0; i < leaves_; ++i) winner_[leaves_ + i] = static_cast<uint32_t>(i);
    for (size_t p = leaves_ - 1; p >= 1; --p) winner_[p] = winner_[2 * p];
  }
  size_t size() const { return n_; }

  void set(size_t i, double rank) {
    if (entries_[i].present && entries_[i].rank == rank) return;
    entries_[i] = {rank, true};
    replay(i);
  }
  void remove(size_t i) {
    if (!entries_[i].present) return;
    entries_[i].present = false;
    replay(i);
  }

  // The present entry with the highest rank (the lowest index among equals).
  std::optional<size_t> best() const {
    if (n_ == 0 || !entries_[winner_[1]].present) return std::nullopt;
    return winner_[1];
  }

 private:
  struct Entry {
    double rank = 0;
    bool present = false;
  };
  // The right child wins only when strictly better: the left one holds the
  // lower indices, so ties stay with it.
  uint32_t play(uint32_t left, uint32_t right) const {
    const Entry& l = entries_[left];
    const Entry& r = entries_[right];
    return r.present && (!l.present || r.rank > l.rank) ? right : left;
  }
  // Replays the matches on leaf i's path. Once a match is won by the same
  // other entry as before, nothing above it changes.
  void replay(size_t i) {
    for (size_t p = (leaves_ + i) / 2; p >= 1; p /= 2) {
      const uint32_t was = winner_[p];
      winner_[p] = play(winner_[2 * p], winner_[2 * p + 1]);
      if (winner_[p] == was && was != i) return;
    }
  }

  size_t n_ = 0;
  size_t leaves_ = 1;  // a power of two, at least n_ (winner_[1] is the root, or the one leaf)
  std::vector<Entry> entries_;
  std::vector<uint32_t> winner_;  // [1, leaves_): internal nodes; [leaves_, 2 leaves_): the leaves
};

}  // namespace gpuslice::core
