#include "queue_outcome.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "gpuslice/core/codec/quantity.hpp"
#include "gpuslice/core/dialects/hami/allocation_annotation.hpp"
#include "gpuslice/core/dialects/hami/mig_allocations.hpp"
#include "gpuslice/core/errors.hpp"
#include "gpuslice/sim/html_page.hpp"
#include "gpuslice/sim/run_metrics.hpp"

namespace gpuslice::sim {

std::vector<const PodRecord*> queued_pods(const std::vector<PodRecord>& pods) {
  std::vector<const PodRecord*> out;
  for (const auto& p : pods)
    if (p.origin == "queue") out.push_back(&p);
  return out;
}

namespace {
// Under dra the cards are the claims' devices, "driver/pool/device", with the
// capacity each result consumed (a run folder read back holds the same JSON
// in `allocation`, which is not HAMi's annotation there).
QueueOutcome with_claim_devices(QueueOutcome o, const std::string& claim_allocation) {
  const auto result = nlohmann::json::parse(claim_allocation, nullptr, false);
  try {
    if (result.is_discarded()) throw core::CodecError("not JSON");
    for (const auto& r : result.at("devices").at("results")) {
      const std::string card =
          fmt::format("{}/{}/{}", r.at("driver").get<std::string>(), r.at("pool").get<std::string>(),
                      r.at("device").get<std::string>());
      auto it = std::find_if(o.cards.begin(), o.cards.end(), [&](const auto& c) { return c.uuid == card; });
      if (it == o.cards.end()) it = o.cards.insert(o.cards.end(), {card, 0, 0, {}});
      const auto& consumed = r.value("consumedCapacity", nlohmann::json::object());
      if (consumed.contains("memory"))
        it->memory_mib +=
            core::codec::parse_quantity_value(consumed["memory"].get<std::string>()) / (1024 * 1024);
      if (consumed.contains("cores"))
        it->cores +=
            static_cast<int32_t>(core::codec::parse_quantity_value(consumed["cores"].get<std::string>()));
    }
  } catch (const std::exception&) {
    // A hand-edited pods.csv: the node is still known, the devices are not.
    o.cards.clear();
  }
  return o;
}
}  // namespace

QueueOutcome queue_outcome(const PodRecord& pod, double end) {
  QueueOutcome o;
  o.node = pod.node;
  o.reason = pod.reason;
  o.shortfall = pod.shortfall;
  if (pod.start >= 0) {
    o.waited = std::max(0.0, pod.start - pod.arrival);
    o.kind = o.waited > 0 ? QueueOutcome::Kind::AfterWaiting : QueueOutcome::Kind::AtOnce;
  } else {
    o.kind = pod.status == "refused" ? QueueOutcome::Kind::Refused : QueueOutcome::Kind::StillPending;
    o.waited = std::max(0.0, end - pod.arrival);
  }
  if (!pod.claim_allocation.empty()) return with_claim_devices(std::move(o), pod.claim_allocation);
  if (pod.allocation.empty()) return o;
  try {
    for (const auto& container : core::codec::decode_allocation_text(pod.allocation))
      for (const auto& g : container) {
        const std::string card(core::codec::card_of(g.uuid));
        auto it = std::find_if(o.cards.begin(), o.cards.end(), [&](const auto& c) { return c.uuid == card; });
        if (it == o.cards.end()) it = o.cards.insert(o.cards.end(), {card, 0, 0, {}});
        it->memory_mib += g.memory_mib;
        it->cores += g.cores;
      }
  } catch (const core::CodecError&) {
    // A hand-edited pods.csv: the node is still known, the cards are not.
    o.cards.clear();
  }
  try {
    for (const auto& r : core::codec::decode_mig_allocations(pod.mig_allocations))
      for (auto& c : o.cards)
        if (c.uuid == r.gpu_uuid)
          c.mig_instances.push_back(r.placement.size == 1
                                        ? fmt::format("{} at slice {}", r.profile, r.placement.start)
                                        : fmt::format("{} at slices {}-{}", r.profile, r.placement.start,
                                                      r.placement.start + r.placement.size - 1));
  } catch (const core::CodecError&) {
    // We wrote it; cannot happen.
  }
  return o;
}

std::string outcome_text(const QueueOutcome& o) {
  switch (o.kind) {
    case QueueOutcome::Kind::AtOnce:
      return "placed at once";
    case QueueOutcome::Kind::AfterWaiting:
      return "placed after " + human_duration(o.waited);
    case QueueOutcome::Kind::Refused:
      return "refused";
    case QueueOutcome::Kind::StillPending:
      return "still pending after " + human_duration(o.waited);
  }
  return {};
}

std::string cards_html(const QueueOutcome& o) {
  std::string html;
  for (const auto& c : o.cards) {
    std::string mig;
    for (const auto& instance : c.mig_instances)
      mig += fmt::format("<div class=\"note\">MIG {}</div>", html::escape(instance));
    html += fmt::format("<div><code>{}</code><div class=\"note\">{} MiB, {} % cores</div>{}</div>",
                        html::escape(c.uuid), c.memory_mib, c.cores, mig);
  }
  return html;
}

std::string queue_section_html(const RunResult& run, double end, size_t limit) {
  const auto queue = queued_pods(run.pods);
  if (queue.empty()) return {};
  size_t placed = 0;
  for (const auto* p : queue) placed += p->start >= 0 ? 1 : 0;
  std::string html = fmt::format(
      "<section id=\"queue\"><h2>The queue, pod by pod</h2>\n<p class=\"note\">The {} pods pending at the "
      "snapshot, in creation order: {} placed, {} not. A placed pod shows its node and the slice of each "
      "card "
      "(memory, share of the card's cores); a pod not placed shows HAMi's reason and how close the best card "
      "came.</p>\n<table class=\"queue\">\n<thead><tr><th>pod</th><th>outcome</th><th>node</th><th>cards</th>"
      "<th>reason</th></tr></thead>\n<tbody>\n",
      queue.size(), placed, queue.size() - placed);
  for (size_t i = 0; i < queue.size() && i < limit; ++i) {
    const QueueOutcome o = queue_outcome(*queue[i], end);
    const bool placed_pod =
        o.kind == QueueOutcome::Kind::AtOnce || o.kind == QueueOutcome::Kind::AfterWaiting;
    // A pod placed after waiting keeps the reason it could not be placed at first.
    std::string why =
        o.reason.empty() ? std::string() : (placed_pod ? "waited: " : "") + html::escape(o.reason);
    if (!o.shortfall.empty()) why += "<div class=\"note\">" + html::escape(o.shortfall) + "</div>";
    html += fmt::format(
        "<tr class=\"{}\"><td><code>{}</code></td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n",
        placed_pod ? "placed" : "not-placed", html::escape(queue[i]->name), html::escape(outcome_text(o)),
        html::escape(o.node), cards_html(o), why);
  }
  html += "</tbody></table>\n";
  if (queue.size() > limit)
    html += fmt::format("<p class=\"note\">... and {} more pods in pods.csv.</p>\n", queue.size() - limit);
  return html + "</section>\n";
}

}  // namespace gpuslice::sim
