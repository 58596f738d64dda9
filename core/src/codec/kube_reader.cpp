#include "gpuslice/core/codec/kube_reader.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "gpuslice/core/errors.hpp"
#include "kube_json.hpp"
#include "kube_shared.hpp"

namespace gpuslice::core::codec {

namespace detail {

namespace {

// Newlines in [from, to), eight bytes at a time: every object asks for its
// line, so a whole read counts every byte of the text once, and std::count's
// byte loop (not vectorised at -O2) was a tenth of reading a large dump.
size_t newlines(const char* from, const char* to) {
  constexpr uint64_t kOnes = 0x0101010101010101ULL, kLow7 = 0x7F7F7F7F7F7F7F7FULL;
  size_t n = 0;
  for (; from + 8 <= to; from += 8) {
    uint64_t word;
    std::memcpy(&word, from, 8);
    const uint64_t x = word ^ (kOnes * '\n');  // a newline byte becomes 0
    // Exact zero-byte test: a byte's high bit ends clear only when it was 0.
    const uint64_t nonzero = ((x & kLow7) + kLow7) | x;
    // One bit a newline byte, summed by a multiply (std::popcount is a
    // library call on baseline x86-64).
    n += static_cast<size_t>((((~nonzero & ~kLow7) >> 7) * kOnes) >> 56);
  }
  for (; from < to; ++from) n += *from == '\n';
  return n;
}

}  // namespace

int LineCounter::line_of(Position offset) const {
  const size_t to = std::min<size_t>(static_cast<size_t>(offset), text_.size());
  if (to >= at_)
    line_ += static_cast<int>(newlines(text_.data() + at_, text_.data() + to));
  else
    line_ -= static_cast<int>(newlines(text_.data() + to, text_.data() + at_));
  at_ = to;
  return line_;
}

Position UniqueKeys::add(std::string_view key, Position at) {
  Open& open = starts_.back();
  if (!open.hashed.empty()) {
    const auto [it, fresh] = open.hashed.emplace(key, at);
    return fresh ? kNoPosition : it->second;
  }
  for (size_t i = open.first; i < keys_.size(); ++i)
    if (keys_[i].first == key) return keys_[i].second;
  keys_.emplace_back(key, at);
  if (keys_.size() - open.first > kLinear) {
    // A long mapping: from here on by hash, so checking stays linear in its keys.
    for (size_t i = open.first; i < keys_.size(); ++i) open.hashed.emplace(keys_[i].first, keys_[i].second);
  }
  return kNoPosition;
}

void UniqueKeys::close() {
  keys_.resize(starts_.back().first);
  starts_.pop_back();
}

}  // namespace detail

void ReadContext::fail(Position at, const std::string& field, const std::string& what) const {
  throw InputError(source(), line_of(at), field, what);
}

KubeText::KubeText(size_t size, std::string source)
    : data_(new char[size + kPadding], Release{}), size_(size), source_(std::move(source)) {
  std::memset(data_.get() + size, 0, kPadding);
}

KubeText::KubeText(char* mapped, size_t mapped_bytes, size_t size, std::string source)
    : data_(mapped, Release{mapped_bytes}), size_(size), source_(std::move(source)) {}

void KubeText::Release::operator()(char* data) const {
  if (mapped_bytes)
    munmap(data, mapped_bytes);
  else
    delete[] data;
}

void KubeText::release_before(size_t offset) const {
  // Every 8 MiB: one madvise per stretch, not one per object.
  constexpr size_t kStep = 8u << 20;
  if (!data_.get_deleter().mapped_bytes || offset > size_ || offset < released_ + kStep) return;
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  const size_t upto = offset / page * page;
  madvise(data_.get() + released_, upto - released_, MADV_DONTNEED);
  released_ = upto;
}

namespace {
// Files from this size on are mapped: below it a copy costs little.
constexpr uintmax_t kMapFrom = 16u << 20;

// The file mapped read-only, followed by zeroed anonymous pages that hold at
// least kPadding bytes past its end (simdjson reads ahead into them); null
// when it cannot be mapped (the caller reads it instead).
char* map_file(const std::string& path, size_t size, size_t& mapped_bytes) {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  mapped_bytes = (size + KubeText::kPadding + page - 1) / page * page;
  void* room = mmap(nullptr, mapped_bytes, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (room == MAP_FAILED) return nullptr;
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  void* file = fd < 0 ? MAP_FAILED : mmap(room, size, PROT_READ, MAP_PRIVATE | MAP_FIXED, fd, 0);
  if (fd >= 0) close(fd);
  if (file == MAP_FAILED) {
    munmap(room, mapped_bytes);
    return nullptr;
  }
  return static_cast<char*>(file);
}
}  // namespace

KubeText KubeText::from_string(std::string_view text, std::string source) {
  KubeText t(text.size(), std::move(source));
  if (!text.empty()) std::memcpy(t.data_.get(), text.data(), text.size());
  return t;
}

KubeText KubeText::from_file(const std::string& path, const NamedAt* named_at) {
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
  const auto size = std::filesystem::file_size(path, ec);
  if (ec) refuse("cannot open file");
  if (size >= kMapFrom) {
    size_t mapped_bytes = 0;
    if (char* mapped = map_file(path, static_cast<size_t>(size), mapped_bytes))
      return KubeText(mapped, mapped_bytes, static_cast<size_t>(size), path);
  }
  // Read straight into the padded buffer: one copy of the file in memory.
  KubeText t(static_cast<size_t>(size), path);
  if (size > 0 && !in.read(t.data_.get(), static_cast<std::streamsize>(size))) refuse("cannot read file");
  return t;
}

namespace {

// JSON when the text opens an object with a quoted key (or an empty one):
// anything else, flow-style YAML included, is YAML (JSON is YAML too).
bool looks_like_json(std::string_view t) {
  size_t i = 0;
  if (t.substr(0, 3) == "\xEF\xBB\xBF") i = 3;  // a UTF-8 byte order mark
  auto skip_space = [&] {
    while (i < t.size() && (t[i] == ' ' || t[i] == '\n' || t[i] == '\r' || t[i] == '\t')) ++i;
  };
  skip_space();
  if (i >= t.size() || t[i] != '{') return false;
  ++i;
  skip_space();
  return i < t.size() && (t[i] == '"' || t[i] == '}');
}

}  // namespace

ListInfo read_kube_objects(const KubeText& text, const ObjectVisitor& visit, const ReadOptions& options) {
  if (looks_like_json(text.text())) return detail::read_json(text, visit, options);
  return detail::read_yaml(text, visit, options);
}

KubeObjects read_all_kube_objects(const KubeText& text, const ReadOptions& options) {
  KubeObjects out;
  read_kube_objects(
      text, [&](KubeObject&& object, const ReadContext&) { out.add(std::move(object)); }, options);
  return out;
}

WatchEvent read_watch_event(const KubeText& line, const ReadOptions& options) {
  return detail::read_json_watch_event(line, options);
}

const ObjectHeader& header_of(const KubeObject& object) {
  return std::visit([](const auto& o) -> const ObjectHeader& { return o.header; }, object);
}

void KubeObjects::add(KubeObject&& object) {
  std::visit(
      [&](auto&& o) {
        using T = std::decay_t<decltype(o)>;
        if constexpr (std::is_same_v<T, PodObject>)
          pods.push_back(std::move(o));
        else if constexpr (std::is_same_v<T, NodeObject>)
          nodes.push_back(std::move(o));
        else if constexpr (std::is_same_v<T, DeviceObject>)
          devices.push_back(std::move(o));
        else if constexpr (std::is_same_v<T, PodDisruptionBudgetObject>)
          disruption_budgets.push_back(std::move(o));
        else if constexpr (std::is_same_v<T, PriorityClassObject>)
          priority_classes.push_back(std::move(o));
        else if constexpr (std::is_same_v<T, ResourceQuotaObject>)
          resource_quotas.push_back(std::move(o));
        else
          resources.push_back(std::move(o));
      },
      std::move(object));
}

}  // namespace gpuslice::core::codec
