// cuGetErrorName / cuGetErrorString over every CUresult of CUDA 13.0's
// cuda.h (names generated from the header; the common codes carry the real
// driver's wording, the rare ones a lower-cased form of their name).
#include "cuda_exports.hpp"

namespace {

#define GPUSLICE_FAKE_CUDA_ERRORS(X)                                                        \
  X(CUDA_SUCCESS, "no error")                                                               \
  X(CUDA_ERROR_INVALID_VALUE, "invalid argument")                                           \
  X(CUDA_ERROR_OUT_OF_MEMORY, "out of memory")                                              \
  X(CUDA_ERROR_NOT_INITIALIZED, "initialization error")                                     \
  X(CUDA_ERROR_DEINITIALIZED, "driver shutting down")                                       \
  X(CUDA_ERROR_PROFILER_DISABLED, "profiler disabled")                                      \
  X(CUDA_ERROR_PROFILER_NOT_INITIALIZED, "profiler not initialized")                        \
  X(CUDA_ERROR_PROFILER_ALREADY_STARTED, "profiler already started")                        \
  X(CUDA_ERROR_PROFILER_ALREADY_STOPPED, "profiler already stopped")                        \
  X(CUDA_ERROR_STUB_LIBRARY, "CUDA driver is a stub library")                               \
  X(CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER, "call requires newer driver")                    \
  X(CUDA_ERROR_DEVICE_UNAVAILABLE, "device unavailable")                                    \
  X(CUDA_ERROR_NO_DEVICE, "no CUDA-capable device is detected")                             \
  X(CUDA_ERROR_INVALID_DEVICE, "invalid device ordinal")                                    \
  X(CUDA_ERROR_DEVICE_NOT_LICENSED, "device not licensed")                                  \
  X(CUDA_ERROR_INVALID_IMAGE, "device kernel image is invalid")                             \
  X(CUDA_ERROR_INVALID_CONTEXT, "invalid device context")                                   \
  X(CUDA_ERROR_CONTEXT_ALREADY_CURRENT, "context already current")                          \
  X(CUDA_ERROR_MAP_FAILED, "map failed")                                                    \
  X(CUDA_ERROR_UNMAP_FAILED, "unmap failed")                                                \
  X(CUDA_ERROR_ARRAY_IS_MAPPED, "array is mapped")                                          \
  X(CUDA_ERROR_ALREADY_MAPPED, "already mapped")                                            \
  X(CUDA_ERROR_NO_BINARY_FOR_GPU, "no binary for gpu")                                      \
  X(CUDA_ERROR_ALREADY_ACQUIRED, "already acquired")                                        \
  X(CUDA_ERROR_NOT_MAPPED, "not mapped")                                                    \
  X(CUDA_ERROR_NOT_MAPPED_AS_ARRAY, "not mapped as array")                                  \
  X(CUDA_ERROR_NOT_MAPPED_AS_POINTER, "not mapped as pointer")                              \
  X(CUDA_ERROR_ECC_UNCORRECTABLE, "ecc uncorrectable")                                      \
  X(CUDA_ERROR_UNSUPPORTED_LIMIT, "unsupported limit")                                      \
  X(CUDA_ERROR_CONTEXT_ALREADY_IN_USE, "context already in use")                            \
  X(CUDA_ERROR_PEER_ACCESS_UNSUPPORTED, "peer access unsupported")                          \
  X(CUDA_ERROR_INVALID_PTX, "invalid ptx")                                                  \
  X(CUDA_ERROR_INVALID_GRAPHICS_CONTEXT, "invalid graphics context")                        \
  X(CUDA_ERROR_NVLINK_UNCORRECTABLE, "nvlink uncorrectable")                                \
  X(CUDA_ERROR_JIT_COMPILER_NOT_FOUND, "jit compiler not found")                            \
  X(CUDA_ERROR_UNSUPPORTED_PTX_VERSION, "unsupported ptx version")                          \
  X(CUDA_ERROR_JIT_COMPILATION_DISABLED, "jit compilation disabled")                        \
  X(CUDA_ERROR_UNSUPPORTED_EXEC_AFFINITY, "unsupported exec affinity")                      \
  X(CUDA_ERROR_UNSUPPORTED_DEVSIDE_SYNC, "unsupported devside sync")                        \
  X(CUDA_ERROR_CONTAINED, "contained")                                                      \
  X(CUDA_ERROR_INVALID_SOURCE, "invalid source")                                            \
  X(CUDA_ERROR_FILE_NOT_FOUND, "file not found")                                            \
  X(CUDA_ERROR_SHARED_OBJECT_SYMBOL_NOT_FOUND, "shared object symbol not found")            \
  X(CUDA_ERROR_SHARED_OBJECT_INIT_FAILED, "shared object init failed")                      \
  X(CUDA_ERROR_OPERATING_SYSTEM, "OS call failed or operation not supported on this OS")    \
  X(CUDA_ERROR_INVALID_HANDLE, "invalid resource handle")                                   \
  X(CUDA_ERROR_ILLEGAL_STATE, "illegal state")                                              \
  X(CUDA_ERROR_LOSSY_QUERY, "lossy query")                                                  \
  X(CUDA_ERROR_NOT_FOUND, "named symbol not found")                                         \
  X(CUDA_ERROR_NOT_READY, "device not ready")                                               \
  X(CUDA_ERROR_ILLEGAL_ADDRESS, "an illegal memory access was encountered")                 \
  X(CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES, "too many resources requested for launch")          \
  X(CUDA_ERROR_LAUNCH_TIMEOUT, "launch timeout")                                            \
  X(CUDA_ERROR_LAUNCH_INCOMPATIBLE_TEXTURING, "launch incompatible texturing")              \
  X(CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED, "peer access already enabled")                  \
  X(CUDA_ERROR_PEER_ACCESS_NOT_ENABLED, "peer access not enabled")                          \
  X(CUDA_ERROR_PRIMARY_CONTEXT_ACTIVE, "cannot set while device is active in this process") \
  X(CUDA_ERROR_CONTEXT_IS_DESTROYED, "context is destroyed")                                \
  X(CUDA_ERROR_ASSERT, "assert")                                                            \
  X(CUDA_ERROR_TOO_MANY_PEERS, "too many peers")                                            \
  X(CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED, "host memory already registered")            \
  X(CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED, "host memory not registered")                    \
  X(CUDA_ERROR_HARDWARE_STACK_ERROR, "hardware stack error")                                \
  X(CUDA_ERROR_ILLEGAL_INSTRUCTION, "illegal instruction")                                  \
  X(CUDA_ERROR_MISALIGNED_ADDRESS, "misaligned address")                                    \
  X(CUDA_ERROR_INVALID_ADDRESS_SPACE, "invalid address space")                              \
  X(CUDA_ERROR_INVALID_PC, "invalid pc")                                                    \
  X(CUDA_ERROR_LAUNCH_FAILED, "unspecified launch failure")                                 \
  X(CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE, "cooperative launch too large")                \
  X(CUDA_ERROR_TENSOR_MEMORY_LEAK, "tensor memory leak")                                    \
  X(CUDA_ERROR_NOT_PERMITTED, "operation not permitted")                                    \
  X(CUDA_ERROR_NOT_SUPPORTED, "operation not supported")                                    \
  X(CUDA_ERROR_SYSTEM_NOT_READY, "system not ready")                                        \
  X(CUDA_ERROR_SYSTEM_DRIVER_MISMATCH, "system driver mismatch")                            \
  X(CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE, "compat not supported on device")            \
  X(CUDA_ERROR_MPS_CONNECTION_FAILED, "mps connection failed")                              \
  X(CUDA_ERROR_MPS_RPC_FAILURE, "mps rpc failure")                                          \
  X(CUDA_ERROR_MPS_SERVER_NOT_READY, "mps server not ready")                                \
  X(CUDA_ERROR_MPS_MAX_CLIENTS_REACHED, "mps max clients reached")                          \
  X(CUDA_ERROR_MPS_MAX_CONNECTIONS_REACHED, "mps max connections reached")                  \
  X(CUDA_ERROR_MPS_CLIENT_TERMINATED, "mps client terminated")                              \
  X(CUDA_ERROR_CDP_NOT_SUPPORTED, "cdp not supported")                                      \
  X(CUDA_ERROR_CDP_VERSION_MISMATCH, "cdp version mismatch")                                \
  X(CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, "stream capture unsupported")                    \
  X(CUDA_ERROR_STREAM_CAPTURE_INVALIDATED, "stream capture invalidated")                    \
  X(CUDA_ERROR_STREAM_CAPTURE_MERGE, "stream capture merge")                                \
  X(CUDA_ERROR_STREAM_CAPTURE_UNMATCHED, "stream capture unmatched")                        \
  X(CUDA_ERROR_STREAM_CAPTURE_UNJOINED, "stream capture unjoined")                          \
  X(CUDA_ERROR_STREAM_CAPTURE_ISOLATION, "stream capture isolation")                        \
  X(CUDA_ERROR_STREAM_CAPTURE_IMPLICIT, "stream capture implicit")                          \
  X(CUDA_ERROR_CAPTURED_EVENT, "captured event")                                            \
  X(CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD, "stream capture wrong thread")                  \
  X(CUDA_ERROR_TIMEOUT, "wait operation timed out")                                         \
  X(CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE, "graph exec update failure")                      \
  X(CUDA_ERROR_EXTERNAL_DEVICE, "external device")                                          \
  X(CUDA_ERROR_INVALID_CLUSTER_SIZE, "invalid cluster size")                                \
  X(CUDA_ERROR_FUNCTION_NOT_LOADED, "function not loaded")                                  \
  X(CUDA_ERROR_INVALID_RESOURCE_TYPE, "invalid resource type")                              \
  X(CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION, "invalid resource configuration")            \
  X(CUDA_ERROR_KEY_ROTATION, "key rotation")                                                \
  X(CUDA_ERROR_UNKNOWN, "unknown error")

struct ErrorText {
  CUresult code;
  const char* name;
  const char* description;
};

constexpr ErrorText kErrors[] = {
#define GPUSLICE_FAKE_ERROR_ROW(code, text) {code, #code, text},
    GPUSLICE_FAKE_CUDA_ERRORS(GPUSLICE_FAKE_ERROR_ROW)
#undef GPUSLICE_FAKE_ERROR_ROW
};

const ErrorText* find(CUresult error) {
  for (const ErrorText& entry : kErrors)
    if (entry.code == error) return &entry;
  return nullptr;
}

}  // namespace

extern "C" CUresult cuGetErrorString(CUresult error, const char** pStr) {
  if (pStr == nullptr) return CUDA_ERROR_INVALID_VALUE;
  const ErrorText* entry = find(error);
  *pStr = entry != nullptr ? entry->description : nullptr;
  return entry != nullptr ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

extern "C" CUresult cuGetErrorName(CUresult error, const char** pStr) {
  if (pStr == nullptr) return CUDA_ERROR_INVALID_VALUE;
  const ErrorText* entry = find(error);
  *pStr = entry != nullptr ? entry->name : nullptr;
  return entry != nullptr ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}
