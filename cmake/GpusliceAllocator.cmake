# The programs that read whole clusters and run simulations allocate with
# mimalloc (Debian's libmimalloc-dev, scripts/setup.sh): reading a
# 20,000-node dump decodes millions of small strings and lists one object
# at a time, and glibc's malloc and free took a fifth of `simulate
# --snapshot`'s time there (0.72x wall with mimalloc; the study's grid
# 0.95x). Sanitizer and fuzzing builds keep their own allocator. The
# libraries (the core, the shim, the Python module) never choose one: that
# is the hosting process's call.
option(GPUSLICE_MIMALLOC "Link the gpuslice executable and the benchmarks with mimalloc" ON)
if(GPUSLICE_MIMALLOC AND NOT GPUSLICE_SANITIZE AND NOT GPUSLICE_BUILD_FUZZ)
  find_package(mimalloc CONFIG QUIET)
  if(NOT mimalloc_FOUND)
    message(FATAL_ERROR "mimalloc not found: install Debian's libmimalloc-dev (scripts/setup.sh does), "
                        "or configure with -DGPUSLICE_MIMALLOC=OFF to use the C library's allocator")
  endif()
  set(GPUSLICE_WITH_MIMALLOC ON)
endif()

# Links `target` with mimalloc: the executable needs it before the C
# library, so its malloc and free are the ones the dynamic linker binds for
# the whole process (libraries loaded later included).
function(gpuslice_use_fast_allocator target)
  if(GPUSLICE_WITH_MIMALLOC)
    target_link_libraries(${target} PRIVATE mimalloc)
  endif()
endfunction()
