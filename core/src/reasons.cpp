#include "gpuslice/core/reasons.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace gpuslice::core {

std::string_view reason_name(Reason r) {
  switch (r) {
    case Reason::CardTypeMismatch:
      return "CardTypeMismatch";
    case Reason::CardUuidMismatch:
      return "CardUuidMismatch";
    case Reason::CardTimeSlicingExhausted:
      return "CardTimeSlicingExhausted";
    case Reason::CardComputeUnitsExhausted:
      return "CardComputeUnitsExhausted";
    case Reason::CardInsufficientMemory:
      return "CardInsufficientMemory";
    case Reason::CardInsufficientCore:
      return "CardInsufficientCore";
    case Reason::CardNotHealth:
      return "CardNotHealth";
    case Reason::CardCordoned:
      return "CardCordoned";
    case Reason::NumaNotFit:
      return "NumaNotFit";
    case Reason::ExclusiveDeviceAllocateConflict:
      return "ExclusiveDeviceAllocateConflict";
    case Reason::ResourceQuotaNotFit:
      return "ResourceQuotaNotFit";
    case Reason::AllocatedCardsInsufficientRequest:
      return "AllocatedCardsInsufficientRequest";
    case Reason::NodeInsufficientDevice:
      return "NodeInsufficientDevice";
    case Reason::InsufficientCpu:
      return "Insufficient cpu";
    case Reason::InsufficientMemory:
      return "Insufficient memory";
    case Reason::kCount:
      break;
  }
  return "Unknown";
}

bool ReasonTally::empty() const {
  return std::all_of(counts_.begin(), counts_.end(), [](int c) { return c == 0; });
}

std::string ReasonTally::format(int cards) const {
  std::vector<std::string> parts;
  for (size_t i = 0; i < kReasonCount; ++i)
    if (counts_[i] != 0)
      parts.push_back(fmt::format("{}/{} {}", counts_[i], cards, reason_name(static_cast<Reason>(i))));
  std::sort(parts.begin(), parts.end());
  return fmt::format("{}", fmt::join(parts, ", "));
}

std::vector<std::string> parse_reason_names(std::string_view formatted) {
  // HAMi ParseReason reads "<n>/<m> <Name>" entries split by ", ". Entries
  // without a count (NodeInsufficientDevice, host reasons) are whole names:
  // HAMi drops them from its events, we keep them so users see why.
  std::vector<std::string> names;
  size_t pos = 0;
  while (pos < formatted.size()) {
    size_t end = formatted.find(", ", pos);
    std::string_view part =
        formatted.substr(pos, end == std::string_view::npos ? std::string_view::npos : end - pos);
    size_t space = part.find(' ');
    size_t slash = part.find('/');
    if (space != std::string_view::npos && slash != std::string_view::npos && slash < space) {
      std::string_view name = part.substr(space + 1);
      names.emplace_back(name.substr(0, name.find(' ')));
    } else if (!part.empty()) {
      names.emplace_back(part);
    }
    if (end == std::string_view::npos) break;
    pos = end + 2;
  }
  return names;
}

}  // namespace gpuslice::core
