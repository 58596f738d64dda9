// gpuslice-probe: one isolation exercise per run, a JSON object on stdout.
//   info   the device as this process sees it (driver and NVML views)
//   alloc  allocate in chunks through one allocation path until refused
//   spin   run `spin` kernels for a while and report the device share had
// `gpuslice realgpu check` runs it under the shim with a slice's
// environment; it is also handy by hand (LD_PRELOAD=.../libgpuslice_shim.so).
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstring>
#include <iostream>
#include <nlohmann/json.hpp>
#include <vector>

#include "driver.hpp"
#include "gpuslice/realgpu/clock.hpp"
#include "gpuslice/realgpu/uuid_text.hpp"
#include "spin_kernel.hpp"

using gpuslice::probe::Driver;
using nlohmann::json;

namespace {

struct Failure {
  std::string what;
};

void check(const Driver& d, CUresult rc, const char* call) {
  if (rc != CUDA_SUCCESS) throw Failure{std::string(call) + ": " + d.error_name(rc)};
}

CUdevice open_device(const Driver& d, int ordinal) {
  check(d, d.cuInit(0), "cuInit");
  CUdevice dev{};
  check(d, d.cuDeviceGet(&dev, ordinal), "cuDeviceGet");
  CUcontext ctx{};
  check(d, d.cuDevicePrimaryCtxRetain(&ctx, dev), "cuDevicePrimaryCtxRetain");
  check(d, d.cuCtxSetCurrent(ctx), "cuCtxSetCurrent");
  return dev;
}

json view(const Driver& d, CUdevice dev) {
  json v;
  char name[128] = {};
  d.cuDeviceGetName(name, sizeof name, dev);
  v["name"] = name;
  size_t total = 0, free = 0, info_total = 0;
  d.cuDeviceTotalMem_v2(&total, dev);
  d.cuMemGetInfo_v2(&free, &info_total);
  v["device_total_bytes"] = total;
  v["cuda_total_bytes"] = info_total;
  v["cuda_free_bytes"] = free;
  if (d.has_nvml) {
    CUuuid uuid{};
    d.cuDeviceGetUuid_v2(&uuid, dev);
    gpuslice::realgpu::DeviceUuid bytes{};
    std::memcpy(bytes.data(), uuid.bytes, bytes.size());
    const std::string text = gpuslice::realgpu::uuid_text(bytes);
    v["uuid"] = text;
    nvmlDevice_t h{};
    if (d.nvmlDeviceGetHandleByUUID(text.c_str(), &h) == NVML_SUCCESS) {
      nvmlMemory_t m{};
      if (d.nvmlDeviceGetMemoryInfo(h, &m) == NVML_SUCCESS)
        v["nvml"] = {{"total_bytes", m.total}, {"used_bytes", m.used}, {"free_bytes", m.free}};
      nvmlMemory_v2_t m2{};
      m2.version = nvmlMemory_v2;
      if (d.nvmlDeviceGetMemoryInfo_v2(h, &m2) == NVML_SUCCESS)
        v["nvml_v2"] = {{"total_bytes", m2.total}, {"used_bytes", m2.used}, {"free_bytes", m2.free}};
    }
  }
  return v;
}

// One allocation path: allocate `bytes`, and the matching free.
struct Path {
  std::function<CUresult(size_t, uint64_t&)> allocate;
  std::function<CUresult(uint64_t)> release;
};

Path path_named(const Driver& d, const std::string& name, CUdevice dev) {
  if (name == "alloc")
    return {[&d](size_t b, uint64_t& h) { return d.cuMemAlloc_v2(reinterpret_cast<CUdeviceptr*>(&h), b); },
            [&d](uint64_t h) { return d.cuMemFree_v2(h); }};
  if (name == "pitch")
    return {[&d](size_t b, uint64_t& h) {
              size_t pitch = 0;
              return d.cuMemAllocPitch_v2(reinterpret_cast<CUdeviceptr*>(&h), &pitch, 1 << 20, b >> 20, 4);
            },
            [&d](uint64_t h) { return d.cuMemFree_v2(h); }};
  if (name == "managed")
    return {[&d](size_t b, uint64_t& h) {
              return d.cuMemAllocManaged(reinterpret_cast<CUdeviceptr*>(&h), b, CU_MEM_ATTACH_GLOBAL);
            },
            [&d](uint64_t h) { return d.cuMemFree_v2(h); }};
  if (name == "async")
    return {[&d](size_t b, uint64_t& h) {
              const CUresult rc = d.cuMemAllocAsync(reinterpret_cast<CUdeviceptr*>(&h), b, nullptr);
              return rc == CUDA_SUCCESS ? d.cuStreamSynchronize(nullptr) : rc;
            },
            [&d](uint64_t h) {
              const CUresult rc = d.cuMemFreeAsync(h, nullptr);
              return rc == CUDA_SUCCESS ? d.cuStreamSynchronize(nullptr) : rc;
            }};
  if (name == "pool")
    return {[&d, dev](size_t b, uint64_t& h) {
              CUmemoryPool pool{};
              CUresult rc = d.cuDeviceGetDefaultMemPool(&pool, dev);
              if (rc == CUDA_SUCCESS)
                rc = d.cuMemAllocFromPoolAsync(reinterpret_cast<CUdeviceptr*>(&h), b, pool, nullptr);
              return rc == CUDA_SUCCESS ? d.cuStreamSynchronize(nullptr) : rc;
            },
            [&d](uint64_t h) {
              const CUresult rc = d.cuMemFreeAsync(h, nullptr);
              return rc == CUDA_SUCCESS ? d.cuStreamSynchronize(nullptr) : rc;
            }};
  if (name == "vmm")
    return {[&d, dev](size_t b, uint64_t& h) {
              CUmemAllocationProp prop{};
              prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
              prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
              prop.location.id = dev;
              CUmemGenericAllocationHandle handle{};
              const CUresult rc = d.cuMemCreate(&handle, b, &prop, 0);
              h = handle;
              return rc;
            },
            [&d](uint64_t h) { return d.cuMemRelease(h); }};
  if (name == "array")
    return {[&d](size_t b, uint64_t& h) {
              CUDA_ARRAY_DESCRIPTOR desc{};
              desc.Width = 65536;  // 65536 texels x 4 channels x 4 bytes = 1 MiB a row
              desc.Height = b >> 20;
              desc.Format = CU_AD_FORMAT_FLOAT;
              desc.NumChannels = 4;
              CUarray array{};
              const CUresult rc = d.cuArrayCreate_v2(&array, &desc);
              h = reinterpret_cast<uint64_t>(array);
              return rc;
            },
            [&d](uint64_t h) { return d.cuArrayDestroy(reinterpret_cast<CUarray>(h)); }};
  throw Failure{"unknown allocation path '" + name + "' (alloc, pitch, managed, async, pool, vmm, array)"};
}

json run_alloc(const Driver& d, int ordinal, const std::string& path_name, uint64_t chunk_mib,
               uint64_t max_mib, int hold_ms, bool keep) {
  const CUdevice dev = open_device(d, ordinal);
  const Path path = path_named(d, path_name, dev);
  std::vector<uint64_t> held;
  uint64_t allocated = 0;
  std::string stopped_by = "max";
  const uint64_t chunk = chunk_mib << 20;
  while (max_mib == 0 || allocated + chunk <= (max_mib << 20)) {
    uint64_t h = 0;
    const CUresult rc = path.allocate(chunk, h);
    if (rc != CUDA_SUCCESS) {
      stopped_by = d.error_name(rc);
      break;
    }
    held.push_back(h);
    allocated += chunk;
  }
  json out = {{"command", "alloc"},           {"path", path_name},     {"chunk_bytes", chunk},
              {"allocated_bytes", allocated}, {"chunks", held.size()}, {"stopped_by", stopped_by}};
  out["view"] = view(d, dev);
  out["resolved_by"] = d.resolved_by;
  std::cout << out.dump() << std::endl;  // visible while the memory is held
  if (hold_ms > 0) usleep(static_cast<useconds_t>(hold_ms) * 1000);
  if (!keep)
    for (uint64_t h : held) check(d, path.release(h), "free");
  return {};
}

json list_devices(const Driver& d) {
  if (!d.has_nvml) throw Failure{"NVML (libnvidia-ml.so.1) is not available"};
  unsigned count = 0;
  if (d.nvmlDeviceGetCount_v2(&count) != NVML_SUCCESS) throw Failure{"nvmlDeviceGetCount_v2 failed"};
  json list = json::array();
  for (unsigned i = 0; i < count; ++i) {
    nvmlDevice_t h{};
    if (d.nvmlDeviceGetHandleByIndex_v2(i, &h) != NVML_SUCCESS) continue;
    char name[NVML_DEVICE_NAME_BUFFER_SIZE] = {}, uuid[NVML_DEVICE_UUID_BUFFER_SIZE] = {};
    nvmlMemory_t m{};
    d.nvmlDeviceGetName(h, name, sizeof name);
    d.nvmlDeviceGetUUID(h, uuid, sizeof uuid);
    d.nvmlDeviceGetMemoryInfo(h, &m);
    list.push_back({{"index", i}, {"name", name}, {"uuid", uuid}, {"memory_mib", m.total >> 20}});
  }
  return list;
}

// Cost of one driver call as this process sees it (with or without the
// shim): launches of a trivial kernel, or allocate+free pairs.
json run_timing(const Driver& d, int ordinal, const std::string& op, uint64_t count, uint64_t chunk_mib) {
  open_device(d, ordinal);
  const double start = gpuslice::realgpu::monotonic_seconds();
  if (op == "launch") {
    CUmodule module{};
    check(d, d.cuModuleLoadData(&module, gpuslice::probe::kSpinPtx), "cuModuleLoadData");
    CUfunction spin{};
    check(d, d.cuModuleGetFunction(&spin, module, "spin"), "cuModuleGetFunction");
    unsigned us = 0;
    void* params[] = {&us};
    const double t0 = gpuslice::realgpu::monotonic_seconds();
    for (uint64_t i = 0; i < count; ++i)
      check(d, d.cuLaunchKernel(spin, 1, 1, 1, 1, 1, 1, 0, nullptr, params, nullptr), "cuLaunchKernel");
    const double t1 = gpuslice::realgpu::monotonic_seconds();
    check(d, d.cuCtxSynchronize(), "cuCtxSynchronize");
    return {{"op", op}, {"count", count}, {"ns_per_op", (t1 - t0) * 1e9 / static_cast<double>(count)}};
  }
  if (op == "alloc") {
    double alloc_s = 0, free_s = 0;
    for (uint64_t i = 0; i < count; ++i) {
      CUdeviceptr p{};
      const double t0 = gpuslice::realgpu::monotonic_seconds();
      check(d, d.cuMemAlloc_v2(&p, chunk_mib << 20), "cuMemAlloc_v2");
      const double t1 = gpuslice::realgpu::monotonic_seconds();
      check(d, d.cuMemFree_v2(p), "cuMemFree_v2");
      free_s += gpuslice::realgpu::monotonic_seconds() - t1;
      alloc_s += t1 - t0;
    }
    const double n = static_cast<double>(count);
    return {{"op", op},
            {"count", count},
            {"chunk_mib", chunk_mib},
            {"ns_per_op", alloc_s * 1e9 / n},
            {"free_ns_per_op", free_s * 1e9 / n},
            {"wall_seconds", gpuslice::realgpu::monotonic_seconds() - start}};
  }
  throw Failure{"unknown timing op '" + op + "' (launch, alloc)"};
}

json run_spin(const Driver& d, int ordinal, double seconds, unsigned kernel_us, int batch) {
  open_device(d, ordinal);
  CUmodule module{};
  check(d, d.cuModuleLoadData(&module, gpuslice::probe::kSpinPtx), "cuModuleLoadData");
  CUfunction spin{};
  check(d, d.cuModuleGetFunction(&spin, module, "spin"), "cuModuleGetFunction");
  unsigned us = kernel_us;
  void* params[] = {&us};
  // One stream, so the kernels run one after another and their device time
  // adds up (kernels of two streams of one process run side by side on a real
  // GPU: a 1-thread kernel leaves the card almost empty, and kernels x
  // duration then counted the same second twice). Still, the device never
  // waits for the host: each batch is queued behind the previous one, and
  // the host waits only for the batch before that (an event per batch).
  CUstream stream{};
  check(d, d.cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
  CUevent done[2]{};
  for (auto& e : done) check(d, d.cuEventCreate(&e, CU_EVENT_DISABLE_TIMING), "cuEventCreate");
  uint64_t kernels = 0;
  auto launch_batch = [&](int k) {
    for (int i = 0; i < batch; ++i) {
      check(d, d.cuLaunchKernel(spin, 1, 1, 1, 1, 1, 1, 0, stream, params, nullptr), "cuLaunchKernel");
      ++kernels;
    }
    check(d, d.cuEventRecord(done[k % 2], stream), "cuEventRecord");
  };
  const double start = gpuslice::realgpu::monotonic_seconds();
  double end = start;
  launch_batch(0);
  for (int k = 1; end - start < seconds; ++k) {
    launch_batch(k);
    check(d, d.cuEventSynchronize(done[(k + 1) % 2]), "cuEventSynchronize");
    end = gpuslice::realgpu::monotonic_seconds();
  }
  check(d, d.cuCtxSynchronize(), "cuCtxSynchronize");
  end = gpuslice::realgpu::monotonic_seconds();
  for (auto& e : done) d.cuEventDestroy_v2(e);
  const double busy = static_cast<double>(kernels) * kernel_us * 1e-6;
  return {{"command", "spin"},           {"kernels", kernels},   {"kernel_us", kernel_us},
          {"wall_seconds", end - start}, {"busy_seconds", busy}, {"share", busy / (end - start)}};
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"gpuslice-probe: one isolation exercise, JSON on stdout"};
  app.require_subcommand(1);
  bool proc_address = false;
  int device = 0;
  bool per_thread = false;
  app.add_flag("--proc-address", proc_address,
               "resolve driver functions through cuGetProcAddress (like cudart)");
  app.add_flag("--per-thread-stream", per_thread,
               "with --proc-address: ask for the per-thread default stream variants (_ptsz/_ptds)");
  app.add_option("--device", device, "CUDA device ordinal");
  auto* info = app.add_subcommand("info", "the device as this process sees it");
  auto* devices = app.add_subcommand("devices", "the machine's GPUs as NVML lists them (for registrations)");
  auto* alloc = app.add_subcommand("alloc", "allocate in chunks until refused");
  std::string path = "alloc";
  uint64_t chunk_mib = 256, max_mib = 0;
  int hold_ms = 0;
  bool keep = false;
  alloc->add_option("--path", path, "alloc, pitch, managed, async, pool, vmm or array");
  alloc->add_option("--chunk-mib", chunk_mib, "chunk size in MiB")->check(CLI::PositiveNumber);
  alloc->add_option("--max-mib", max_mib, "stop after this much (0: until refused)");
  alloc->add_option("--hold-ms", hold_ms, "hold the memory this long before freeing it");
  alloc->add_flag("--keep", keep, "exit without freeing (the driver and the shim must reclaim it)");
  auto* spin = app.add_subcommand("spin", "run spin kernels and report the device share");
  double seconds = 5;
  unsigned kernel_us = 2000;
  int batch = 4;
  spin->add_option("--seconds", seconds, "how long");
  spin->add_option("--kernel-us", kernel_us, "device time of one kernel in microseconds");
  spin->add_option("--batch", batch, "kernels launched between synchronizations")->check(CLI::PositiveNumber);
  auto* timing = app.add_subcommand("time", "time driver calls (benchmarks)");
  std::string op = "launch";
  uint64_t count = 100000, timing_chunk_mib = 256;
  timing->add_option("--op", op, "launch or alloc");
  timing->add_option("--count", count, "how many calls")->check(CLI::PositiveNumber);
  timing->add_option("--chunk-mib", timing_chunk_mib, "allocation size for --op alloc")
      ->check(CLI::PositiveNumber);
  CLI11_PARSE(app, argc, argv);
  try {
    const Driver d = gpuslice::probe::open_driver(proc_address, per_thread);
    json out;
    if (*devices) {
      out = {{"command", "devices"}, {"devices", list_devices(d)}};
    } else if (*info) {
      out = {{"command", "info"}, {"view", view(d, open_device(d, device))}};
    } else if (*alloc) {
      run_alloc(d, device, path, chunk_mib, max_mib, hold_ms, keep);
      return 0;
    } else if (*timing) {
      out = run_timing(d, device, op, count, timing_chunk_mib);
    } else {
      out = run_spin(d, device, seconds, kernel_us, batch);
    }
    out["resolved_by"] = d.resolved_by;
    std::cout << out.dump() << std::endl;
  } catch (const Failure& f) {
    std::cout << json{{"error", f.what}}.dump() << std::endl;
    return 3;
  } catch (const std::exception& e) {
    std::cout << json{{"error", e.what()}}.dump() << std::endl;
    return 3;
  }
  return 0;
}
