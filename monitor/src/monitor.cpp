#include "gpuslice/monitor/monitor.hpp"

#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <filesystem>
#include <iostream>
#include <map>

#include "gpuslice/realgpu/file_users.hpp"

namespace gpuslice::monitor {

namespace fs = std::filesystem;

namespace {

int64_t epoch_now() { return static_cast<int64_t>(::time(nullptr)); }

// Seconds since the folder was last changed (the device plugin makes it at
// the container's Allocate).
double age_seconds(const std::string& dir) {
  struct stat st {};
  if (stat(dir.c_str(), &st) != 0) return 0;
  return static_cast<double>(epoch_now() - st.st_mtim.tv_sec);
}

}  // namespace

Monitor::Monitor(MonitorOptions options, std::unique_ptr<PodSource> pods, std::unique_ptr<HostGpus> gpus)
    : options_(std::move(options)),
      pods_(std::move(pods)),
      gpus_(std::move(gpus)),
      files_(options_.hook_path, options_.feedback || options_.clean_stale) {
  std::lock_guard lock(mutex_);
  for (const auto* e : files_.rescan())
    std::cerr << "gpuslice monitor: skipping " << e->dir.path << ": " << e->problem << "\n";
}

void Monitor::tick() {
  std::lock_guard lock(mutex_);
  for (const auto* e : files_.rescan())
    std::cerr << "gpuslice monitor: skipping " << e->dir.path << ": " << e->problem << "\n";
  if (options_.feedback) {
    last_feedback_ = files_.feedback();
    fill_utilization_locked();
    release_dead_files_locked();
  }
  if (options_.clean_stale) clean_stale_locked();
}

realgpu::FeedbackOutcome Monitor::last_feedback() const {
  std::lock_guard lock(mutex_);
  return last_feedback_;
}

void Monitor::fill_utilization_locked() {
  if (!gpus_->problem().empty()) {
    if (!said_nvml_)
      std::cerr << "gpuslice monitor: no per-process utilization: " << gpus_->problem() << "\n";
    said_nvml_ = true;
    return;
  }
  // HAMi-core's processes write their own; the shim writes it only while
  // it throttles, so the monitor fills it for the shim's files, by host pid.
  std::map<std::string, std::map<unsigned, unsigned>> by_card;
  for (const auto& e : files_.entries()) {
    if (!e.file || !e.file->written_by_gpuslice()) continue;
    const auto procs = e.file->processes();
    for (int d = 0; d < e.file->device_count(); ++d) {
      if (!e.file->valid_uuid(d)) continue;
      const std::string uuid = e.file->uuid(d);
      auto it = by_card.find(uuid);
      if (it == by_card.end()) it = by_card.emplace(uuid, gpus_->process_utilization(uuid)).first;
      for (const auto& p : procs) {
        if (p.host_pid <= 0) continue;
        const auto u = it->second.find(static_cast<unsigned>(p.host_pid));
        e.file->set_sm_util(p.slot, d, u == it->second.end() ? 0 : u->second);
      }
    }
  }
}

void Monitor::release_dead_files_locked() {
  // The shim holds a shared flock for as long as a process has the file
  // open: none held and slots still live means the container's processes
  // died without leaving (SIGKILL, OOM kill).
  for (const auto& e : files_.entries())
    if (e.file && e.file->written_by_gpuslice() && !e.file->processes().empty())
      realgpu::while_unused(e.file->path(), [&] { e.file->mark_all_exited(); });
}

void Monitor::clean_stale_locked() {
  if (!pods_->knows_pods()) return;
  std::set<std::string> live;
  for (const auto& p : pods_->pods(options_.node_name)) live.insert(p.uid);
  for (const auto& e : files_.entries()) {
    if (e.dir.pod_uid.empty() || live.count(e.dir.pod_uid)) continue;
    if (age_seconds(e.dir.path) < options_.stale_after) continue;
    std::error_code ec;
    auto remove = [&] { fs::remove_all(e.dir.path, ec); };
    bool removed = false;
    if (e.dir.cache_file.empty()) {
      remove();
      removed = true;
    } else {
      // No gpuslice process holds it (the flock, kept while the removal
      // runs) and no process this monitor can see maps it (libvgpu.so).
      struct stat st {};
      std::vector<pid_t> users;
      if (stat(e.dir.cache_file.c_str(), &st) == 0) users = realgpu::processes_mapping(st.st_dev, st.st_ino);
      std::erase(users, getpid());  // this monitor maps it too
      const bool mapped = !users.empty();
      removed = !mapped && realgpu::while_unused(e.dir.cache_file, remove);
    }
    if (!removed) {
      if (said_kept_.insert(e.dir.path).second)
        std::cerr << "gpuslice monitor: keeping " << e.dir.path
                  << ": its pod is gone but a live process holds " << e.dir.cache_file << "\n";
      continue;
    }
    std::cerr << "gpuslice monitor: removed stale folder " << e.dir.path
              << (ec ? " (failed: " + ec.message() + ")" : "") << "\n";
  }
}

std::vector<ContainerView> Monitor::containers() {
  std::lock_guard lock(mutex_);
  return containers_locked();
}

std::vector<ContainerView> Monitor::containers_locked() {
  std::vector<ContainerView> out;
  auto view_of = [](const realgpu::RegionFile& f, ContainerView v) {
    for (int d = 0; d < f.device_count(); ++d) {
      if (!f.valid_uuid(d)) continue;  // HAMi: "UUID not yet initialised"
      ContainerView::Device dev;
      dev.index = d;
      dev.uuid = f.uuid(d).substr(0, 40);
      const auto m = f.memory(d);
      dev.total = m.total;
      dev.limit = f.memory_limit(d);
      dev.context = m.context;
      dev.module = m.module;
      dev.buffer = m.buffer;
      dev.sm_util = f.sm_util(d);
      v.devices.push_back(std::move(dev));
    }
    v.last_kernel_time = f.last_kernel_time();
    return v;
  };
  if (!pods_->knows_pods()) {
    for (const auto& e : files_.entries())
      if (e.file) out.push_back(view_of(*e.file, ContainerView{"", e.dir.pod_uid, e.dir.container, {}, 0}));
    return out;
  }
  std::map<std::pair<std::string, std::string>, const realgpu::NodeFiles::Entry*> by_container;
  for (const auto& e : files_.entries())
    if (e.file) by_container[{e.dir.pod_uid, e.dir.container}] = &e;
  auto pods = pods_->pods(options_.node_name);
  std::sort(pods.begin(), pods.end(), [](const NodePod& a, const NodePod& b) {
    return std::tie(a.ns, a.name) < std::tie(b.ns, b.name);
  });
  for (const auto& p : pods)
    for (const auto& c : p.containers) {
      const auto it = by_container.find({p.uid, c});
      if (it != by_container.end())
        out.push_back(view_of(*it->second->file, ContainerView{p.ns, p.name, c, {}, 0}));
    }
  return out;
}

std::string Monitor::metrics() {
  std::vector<HostGpu> gpus = gpus_->list();
  std::lock_guard lock(mutex_);
  return render_metrics(options_.node_name, gpus, containers_locked(), epoch_now(), options_.legacy_metrics);
}

}  // namespace gpuslice::monitor
