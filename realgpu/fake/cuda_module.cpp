// Modules and libraries: any image is accepted (nothing is compiled); a
// function exists for any non-empty name, and `spin` is the one kernel
// whose length is read from its argument.
#include <unistd.h>

#include <cstring>

#include "cuda_exports.hpp"
#include "driver.hpp"

using gpuslice::fake::Context;
using gpuslice::fake::Driver;
using gpuslice::fake::driver;
using gpuslice::fake::Function;
using gpuslice::fake::Module;

namespace {

// A loaded module or library takes GPUSLICE_FAKE_MODULE_MIB on the device
// (its code and globals), charged to the process like an allocation.
CUresult take_footprint(Driver& d, Module& module, std::size_t device) {
  if (d.module_footprint_bytes == 0) return CUDA_SUCCESS;
  std::uint64_t address = 0;
  if (const CUresult rc = d.charge(device, d.module_footprint_bytes, address); rc != CUDA_SUCCESS) return rc;
  module.bytes = d.module_footprint_bytes;
  module.device = device;
  return CUDA_SUCCESS;
}

CUresult load_module(CUmodule* module, const void* image) {
  Driver& d = driver();
  std::lock_guard lock(d.mutex);
  Context* context = nullptr;
  if (const CUresult rc = d.current_context(context); rc != CUDA_SUCCESS) return rc;
  if (module == nullptr || image == nullptr) return CUDA_ERROR_INVALID_VALUE;
  auto object = std::make_unique<Module>();
  object->context = context;
  if (const CUresult rc = take_footprint(d, *object, context->device); rc != CUDA_SUCCESS) return rc;
  *module = reinterpret_cast<CUmodule>(d.modules.add(std::move(object)));
  return CUDA_SUCCESS;
}

// The same name always yields the same handle, as with a real module.
CUresult get_function(Driver& d, Module& module, const char* name, Function*& out) {
  if (name == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (name[0] == '\0') return CUDA_ERROR_NOT_FOUND;
  const auto it = module.functions.find(std::string_view(name));
  if (it != module.functions.end()) {
    out = it->second;
    return CUDA_SUCCESS;
  }
  auto function = std::make_unique<Function>();
  function->name = name;
  // `spin(unsigned)` by its C name (PTX `.entry spin`, extern "C") or its
  // C++ mangled one.
  function->spin = std::strcmp(name, "spin") == 0 || std::strcmp(name, "_Z4spinj") == 0;
  out = d.functions.add(std::move(function));
  module.functions.emplace(out->name, out);
  return CUDA_SUCCESS;
}

void drop_functions(Driver& d, const Module& module) {
  for (const auto& [name, function] : module.functions) d.functions.erase(function);
}

// Modules and libraries are the same object in two tables: unloading and
// looking a kernel up work alike for both.
template <class Table, class Handle>
CUresult unload(Table Driver::*table, Handle handle) {
  Driver& d = driver();
  std::lock_guard lock(d.mutex);
  if (const CUresult rc = d.require_initialised(); rc != CUDA_SUCCESS) return rc;
  const Module* found = (d.*table).find(handle);
  if (found == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  drop_functions(d, *found);
  if (found->bytes > 0) d.uncharge(found->device, found->bytes);
  (d.*table).erase(handle);
  return CUDA_SUCCESS;
}

template <class Table, class Handle, class Out>
CUresult lookup(Table Driver::*table, Handle handle, const char* name, Out* out) {
  Driver& d = driver();
  std::lock_guard lock(d.mutex);
  if (const CUresult rc = d.require_initialised(); rc != CUDA_SUCCESS) return rc;
  Module* found = (d.*table).find(handle);
  if (found == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  if (out == nullptr) return CUDA_ERROR_INVALID_VALUE;
  Function* function = nullptr;
  if (const CUresult rc = get_function(d, *found, name, function); rc != CUDA_SUCCESS) return rc;
  *out = reinterpret_cast<Out>(function);
  return CUDA_SUCCESS;
}

}  // namespace

extern "C" CUresult cuModuleLoadData(CUmodule* module, const void* image) {
  return load_module(module, image);
}

extern "C" CUresult cuModuleLoadDataEx(CUmodule* module, const void* image, unsigned int /*numOptions*/,
                                       CUjit_option* /*options*/, void** /*optionValues*/) {
  return load_module(module, image);
}

// Any readable file is a module; a missing one fails as with the real driver.
extern "C" CUresult cuModuleLoad(CUmodule* module, const char* fname) {
  if (fname == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (::access(fname, R_OK) != 0) return CUDA_ERROR_FILE_NOT_FOUND;
  return load_module(module, fname);
}

extern "C" CUresult cuModuleUnload(CUmodule hmod) { return unload(&Driver::modules, hmod); }

extern "C" CUresult cuModuleGetFunction(CUfunction* hfunc, CUmodule hmod, const char* name) {
  return lookup(&Driver::modules, hmod, name, hfunc);
}

// Libraries are context-independent; their kernels (CUkernel) may be
// launched as CUfunction, as the real driver allows.
extern "C" CUresult cuLibraryLoadData(CUlibrary* library, const void* code, CUjit_option* /*jitOptions*/,
                                      void** /*jitOptionsValues*/, unsigned int /*numJitOptions*/,
                                      CUlibraryOption* /*libraryOptions*/, void** /*libraryOptionValues*/,
                                      unsigned int /*numLibraryOptions*/) {
  Driver& d = driver();
  std::lock_guard lock(d.mutex);
  if (const CUresult rc = d.require_initialised(); rc != CUDA_SUCCESS) return rc;
  if (library == nullptr || code == nullptr) return CUDA_ERROR_INVALID_VALUE;
  auto object = std::make_unique<Module>();
  // Loaded onto the current context's device (the real driver loads a
  // library into every context lazily; one device is what the fake models).
  Context* context = nullptr;
  if (d.current_context(context) == CUDA_SUCCESS)
    if (const CUresult rc = take_footprint(d, *object, context->device); rc != CUDA_SUCCESS) return rc;
  *library = reinterpret_cast<CUlibrary>(d.libraries.add(std::move(object)));
  return CUDA_SUCCESS;
}

extern "C" CUresult cuLibraryUnload(CUlibrary library) { return unload(&Driver::libraries, library); }

extern "C" CUresult cuLibraryGetKernel(CUkernel* pKernel, CUlibrary library, const char* name) {
  return lookup(&Driver::libraries, library, name, pKernel);
}

extern "C" CUresult cuModuleLoadFatBinary(CUmodule* module, const void* fatCubin) {
  return load_module(module, fatCubin);
}

extern "C" CUresult cuLibraryLoadFromFile(CUlibrary* library, const char* fileName, CUjit_option* jitOptions,
                                          void** jitOptionsValues, unsigned int numJitOptions,
                                          CUlibraryOption* libraryOptions, void** libraryOptionValues,
                                          unsigned int numLibraryOptions) {
  if (fileName == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (::access(fileName, R_OK) != 0) return CUDA_ERROR_FILE_NOT_FOUND;
  return cuLibraryLoadData(library, fileName, jitOptions, jitOptionsValues, numJitOptions, libraryOptions,
                           libraryOptionValues, numLibraryOptions);
}
