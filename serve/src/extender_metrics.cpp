#include "gpuslice/serve/extender_metrics.hpp"

#include <fmt/format.h>

#include "gpuslice/serve/prometheus_text.hpp"

namespace gpuslice::serve {

void Metrics::Histogram::observe(double seconds) {
  for (size_t i = 0; i < kBuckets.size(); ++i)
    if (seconds <= kBuckets[i]) ++counts[i];
  ++count;
  sum += seconds;
}

void Metrics::observe_filter(FilterOutcome outcome, double seconds) {
  std::lock_guard lock(mutex_);
  (outcome == FilterOutcome::Error ? filter_error_ : filter_ok_).observe(seconds);
  ++decisions_[static_cast<size_t>(outcome)];
}

void Metrics::observe_bind(bool ok, double seconds) {
  std::lock_guard lock(mutex_);
  (ok ? bind_ok_ : bind_error_).observe(seconds);
}

void Metrics::observe_preempt(bool ok, double seconds) {
  std::lock_guard lock(mutex_);
  (ok ? preempt_ok_ : preempt_error_).observe(seconds);
}

std::string Metrics::render(DecisionState& state) const {
  std::string out;
  auto histogram = [&](const char* name, const char* help, const Histogram& ok, const Histogram& error) {
    out += fmt::format("# HELP {} {}\n# TYPE {} histogram\n", name, help, name);
    for (auto [result, h] : {std::pair{"success", &ok}, std::pair{"error", &error}}) {
      for (size_t i = 0; i < kBuckets.size(); ++i)
        out +=
            fmt::format("{}_bucket{{result=\"{}\",le=\"{}\"}} {}\n", name, result, kBuckets[i], h->counts[i]);
      out += fmt::format("{}_bucket{{result=\"{}\",le=\"+Inf\"}} {}\n", name, result, h->count);
      out += fmt::format("{}_sum{{result=\"{}\"}} {}\n{}_count{{result=\"{}\"}} {}\n", name, result, h->sum,
                         name, result, h->count);
    }
  };
  auto total = [&](const char* name, const char* help, const Histogram& ok, const Histogram& error) {
    out += fmt::format(
        "# HELP {} {}\n# TYPE {} counter\n{}{{result=\"success\"}} {}\n{}{{result=\"error\"}} {}\n", name,
        help, name, name, ok.count, name, error.count);
  };
  {
    std::lock_guard lock(mutex_);
    histogram("hami_scheduler_filter_duration_seconds", "Time spent processing Filter requests.", filter_ok_,
              filter_error_);
    total("hami_scheduler_filter_total", "Total number of Filter requests processed.", filter_ok_,
          filter_error_);
    histogram("hami_scheduler_bind_duration_seconds", "Time spent processing Bind requests.", bind_ok_,
              bind_error_);
    total("hami_scheduler_bind_total", "Total number of Bind requests processed.", bind_ok_, bind_error_);
    histogram("gpuslice_preempt_duration_seconds", "Time spent processing Preempt requests.", preempt_ok_,
              preempt_error_);
    total("gpuslice_preempt_total", "Total number of Preempt requests processed.", preempt_ok_,
          preempt_error_);
    out +=
        "# HELP gpuslice_filter_decisions_total Filter answers by outcome.\n"
        "# TYPE gpuslice_filter_decisions_total counter\n";
    for (auto o : {FilterOutcome::Placed, FilterOutcome::Unschedulable, FilterOutcome::PassThrough,
                   FilterOutcome::Error, FilterOutcome::DryRun})
      out += fmt::format("gpuslice_filter_decisions_total{{reason=\"{}\"}} {}\n", outcome_name(o),
                         decisions_[static_cast<size_t>(o)]);
    out += fmt::format(
        "# HELP gpuslice_dry_run_filters_total Cluster Autoscaler's dry-run filters (a Nodes request naming "
        "a "
        "node serve does not know), answered without reserving or writing anything.\n"
        "# TYPE gpuslice_dry_run_filters_total counter\ngpuslice_dry_run_filters_total {}\n",
        decisions_[static_cast<size_t>(FilterOutcome::DryRun)]);
  }
  out += fmt::format(
      "# HELP gpuslice_reservations Filter decisions not yet bound.\n# TYPE gpuslice_reservations gauge\n"
      "gpuslice_reservations {}\n"
      "# HELP gpuslice_reservations_expired_total Reservations returned because no bind came in time.\n"
      "# TYPE gpuslice_reservations_expired_total counter\ngpuslice_reservations_expired_total {}\n"
      "# HELP gpuslice_refusals_reused_total Refused filters answered with the last refusal's answer, every "
      "node changed since refusing the pod alike.\n"
      "# TYPE gpuslice_refusals_reused_total counter\ngpuslice_refusals_reused_total {}\n",
      state.reservation_count(), state.expired_count(), state.refusals_reused_count());

  const auto cards = state.card_use();
  struct Family {
    const char* name;
    const char* help;
  };
  auto per_card = [&](Family f, auto value, bool with_cores) {
    out += fmt::format("# HELP {} {}\n# TYPE {} gauge\n", f.name, f.help, f.name);
    for (const auto& c : cards)
      out += fmt::format(
          "{}{{device_index=\"{}\",{}device_type=\"{}\",device_uuid=\"{}\",node=\"{}\",zone=\"vGPU\"}} {}\n",
          f.name, c.index, with_cores ? fmt::format("device_cores=\"{}\",", c.cores_used) : "",
          prometheus_label_value(c.type), prometheus_label_value(c.uuid), prometheus_label_value(c.node),
          value(c));
  };
  constexpr double kMiB = 1024.0 * 1024.0;
  per_card(
      {"hami_gpu_memory_limit_bytes", "Device memory limit for a certain GPU"},
      [&](const CardUse& c) { return static_cast<double>(c.memory_mib) * kMiB; }, false);
  per_card(
      {"hami_gpu_core_limit_ratio", "Device core limit for a certain GPU"},
      [](const CardUse& c) { return c.cores; }, false);
  per_card(
      {"hami_gpu_memory_allocated_bytes", "Device memory allocated for a certain GPU"},
      [&](const CardUse& c) { return static_cast<double>(c.memory_used_mib) * kMiB; }, true);
  per_card(
      {"hami_gpu_core_allocated_ratio", "Device core allocated for a certain GPU"},
      [](const CardUse& c) { return c.cores_used; }, false);
  per_card(
      {"hami_gpu_shared_count", "Number of containers sharing this GPU"},
      [](const CardUse& c) { return c.slots_used; }, false);

  // HAMi v2.10's quota gauges (cmd/scheduler/metrics.go collectQuotaMetrics):
  // used for every namespace and resource HAMi has an entry for, its limit
  // as a label ("0" when none is set); the limit only where one is set.
  const auto quotas = state.quota_entries();
  out +=
      "# HELP hami_resource_quota_used resourcequota usage for a certain device\n"
      "# TYPE hami_resource_quota_used gauge\n";
  for (const auto& q : quotas)
    out += fmt::format("hami_resource_quota_used{{limit=\"{}\",namespace=\"{}\",quota_name=\"{}\"}} {}\n",
                       q.limit, prometheus_label_value(q.ns), q.resource, q.used);
  out +=
      "# HELP hami_resource_quota_limit resourcequota limit for a certain device\n"
      "# TYPE hami_resource_quota_limit gauge\n";
  for (const auto& q : quotas)
    if (q.limit_set)
      out += fmt::format("hami_resource_quota_limit{{namespace=\"{}\",quota_name=\"{}\"}} {}\n",
                         prometheus_label_value(q.ns), q.resource, q.limit);
  return out;
}

}  // namespace gpuslice::serve
