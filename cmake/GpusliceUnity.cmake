# Unity builds (-DCMAKE_UNITY_BUILD=ON, which scripts/setup.sh passes for the
# cold builds of run-example, test.sh and CI): each library's sources are
# compiled in batches, so the heavy headers (CLI11, nlohmann/json, yaml-cpp,
# simdjson, fmt) are read once a batch instead of once a file.
#
# A batch is one translation unit: two sources defining the same name in an
# anonymous namespace cannot share one. Those below are compiled on their
# own (a helper of the same name as another file's). A new clash shows as
# "redefinition of '...{anonymous}::NAME'": rename the helper, or list the
# file here. The tests, benchmarks and fuzz targets are not unity-built
# (their files repeat helper names freely, and they change most often).
# Each entry: the folder whose CMakeLists.txt adds the target, then the file.
set(GPUSLICE_UNITY_ALONE
    core:src/cluster.cpp core:src/dialects/hami/allocation_annotation.cpp core:src/dialects/hami/device_config.cpp
    core:src/codec/kube_yaml.cpp core:src/dialects/hami/mig_allocations.cpp core:src/fit.cpp
    core:src/disruption/label_selector.cpp core:src/disruption/disruption_budget.cpp
    core:src/dialects/dra/cel_compile.cpp core:src/dialects/dra/cel_eval.cpp core:src/dialects/dra/hami_dra.cpp
    sim:src/compare.cpp sim:src/compare_cells.cpp sim:src/openb.cpp sim:src/report.cpp sim:src/run_folder.cpp
    realgpu:src/lab_001.cpp realgpu:src/lab_002.cpp realgpu:src/labs_bench.cpp
    realgpu/fake:proc_address.cpp
    serve:src/api_objects.cpp serve:src/preemption_protocol.cpp)
if(CMAKE_UNITY_BUILD)
  foreach(entry ${GPUSLICE_UNITY_ALONE})
    string(REPLACE ":" ";" parts ${entry})
    list(GET parts 0 area)
    list(GET parts 1 source)
    if(EXISTS ${PROJECT_SOURCE_DIR}/${area}/${source})
      set_source_files_properties(${PROJECT_SOURCE_DIR}/${area}/${source} DIRECTORY ${PROJECT_SOURCE_DIR}/${area}
                                  PROPERTIES SKIP_UNITY_BUILD_INCLUSION ON)
    endif()
  endforeach()
endif()
