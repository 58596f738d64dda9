# The libraries the placement core, the simulator and the planner link
# (Debian packages, scripts/setup.sh): found by the top-level build and by
# the Python module built on its own against that build (python/CMakeLists.txt).
find_package(fmt REQUIRED)
find_package(yaml-cpp REQUIRED)
find_package(nlohmann_json REQUIRED)
find_package(Boost REQUIRED)
find_package(CLI11 REQUIRED)
find_package(Threads REQUIRED)
# The one reader of cluster state (core/src/codec/kube_*): simdjson for JSON,
# libyaml for YAML. The core links them privately, but a static core hands
# them on to whatever links it (the Python module among them).
find_package(simdjson REQUIRED)
find_package(PkgConfig REQUIRED)
pkg_check_modules(LIBYAML REQUIRED IMPORTED_TARGET yaml-0.1)
# SHA-256 for the names of KAI's reservation pods (core/src/codec/kai.cpp).
find_package(OpenSSL REQUIRED)
