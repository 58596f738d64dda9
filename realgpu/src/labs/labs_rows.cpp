// How a lab row reads a view, an allocation and a compute run: one place,
// so every lab judges them by the same rule (lab_rules.hpp).
#include <fmt/format.h>

#include <cmath>

#include "labs_bench.hpp"

namespace gpuslice::realgpu::labs {

LabRow make_row(std::string lab, std::string step, std::string title, std::string criteria,
                std::string seed) {
  LabRow r;
  r.lab = std::move(lab);
  r.step = std::move(step);
  r.title = std::move(title);
  r.criteria = std::move(criteria);
  r.seed = std::move(seed);
  return r;
}

bool skip_unless_card_holds(LabRow& row, const Card& card, uint64_t mib) {
  if (card.mib() > mib) return false;
  row.status = RowStatus::Skip;
  row.why = fmt::format("the card has {} MiB; this step needs more than {} MiB", card.mib(), mib);
  return true;
}

void fill_view(LabRow& row, const std::vector<ViewRun>& views, uint64_t slice_mib) {
  const uint64_t limit = slice_mib * kMiB;
  bool ok = !views.empty();
  std::string ours, smi_note;
  nlohmann::json evidence = nlohmann::json::array();
  for (const ViewRun& v : views) {
    const uint64_t context = v.cuda_total > v.cuda_free ? v.cuda_total - v.cuda_free : 0;
    ok = ok && v.cuda_total == limit && v.device_total == limit;
    std::string one = fmt::format("cuMemGetInfo {} free of {}, cuDeviceTotalMem {}", mib_text(v.cuda_free),
                                  mib_text(v.cuda_total), mib_text(v.device_total));
    if (v.nvml_total) {
      ok = ok && *v.nvml_total == limit;
      one += fmt::format(", NVML {} / {}", mib_text(v.nvml_used.value_or(0)), mib_text(*v.nvml_total));
    }
    if (v.smi) {
      ok = ok && v.smi->second == slice_mib;
      one += fmt::format(", nvidia-smi {}MiB / {}MiB", v.smi->first, v.smi->second);
    } else if (!v.smi_note.empty()) {
      smi_note = v.smi_note;
    }
    ours += (ours.empty() ? "" : "; ") + (v.label.empty() ? "" : v.label + ": ") + one;
    if (row.context.empty()) row.context = mib_text(context);
    evidence.push_back(v.evidence);
  }
  if (!smi_note.empty()) ours += " (" + smi_note + ")";
  row.ours = ours;
  row.figures = {{"slice_bytes", limit}, {"views", evidence}};
  row.status = ok ? RowStatus::Pass : RowStatus::Fail;
  if (!ok) row.why = fmt::format("a total is not the slice's {} MiB", slice_mib);
}

void fill_allocation(LabRow& row, const AllocationRun& run) {
  const AllocationTrial& t = run.trial;
  const AllocationExpectation e = expected_outcome(t);
  if (!t.chunked)
    row.ours = t.granted > 0 ? fmt::format("{} granted", mib_text(t.request))
                             : fmt::format("{} refused ({})", mib_text(t.request), run.app_error);
  else
    row.ours = fmt::format("granted to {}, then {}", mib_text(t.granted),
                           t.refused ? "refused (" + run.app_error + ")" : "not refused");
  if (t.oom)
    row.ours += fmt::format("; shim: Device {} OOM {} / {}", t.oom->device, t.oom->needed, t.oom->limit);
  row.context = mib_text(t.context);
  row.figures = {{"limit_bytes", t.limit},
                 {"request_bytes", t.request},
                 {"chunked", t.chunked},
                 {"context_bytes", t.context},
                 {"granted_bytes", t.granted},
                 {"refused", t.refused},
                 {"application_error", run.app_error},
                 {"shim_line", run.shim_line},
                 {"expected_granted_bytes", e.granted},
                 {"expected_refused", e.refused},
                 {"expected_needed_bytes", e.needed},
                 {"evidence", run.evidence}};
  if (t.oom)
    row.figures["oom"] = {{"device", t.oom->device}, {"needed", t.oom->needed}, {"limit", t.oom->limit}};
  const Verdict v = judge_allocation(t);
  row.status = v.passed ? RowStatus::Pass : RowStatus::Fail;
  row.why = v.why;
}

void fill_share(LabRow& row, const ComputeRun& run, int cap_percent) {
  row.ours = run.summary();
  row.figures = {{"mean_utilisation_percent",
                  std::isnan(run.mean_util) ? nlohmann::json() : nlohmann::json(run.mean_util)},
                 {"samples_percent", run.samples},
                 {"step_seconds", run.step_seconds},
                 {"steps", run.steps},
                 {"cap_percent", cap_percent},
                 {"evidence", run.evidence}};
  const Verdict v = judge_share(run.mean_util, cap_percent, kShareTolerance);
  row.status = v.passed ? RowStatus::Pass : RowStatus::Fail;
  row.why = v.why;
  if (run.evidence.contains("nvml")) row.why += " (NVML: " + run.evidence["nvml"].get<std::string>() + ")";
}

}  // namespace gpuslice::realgpu::labs
