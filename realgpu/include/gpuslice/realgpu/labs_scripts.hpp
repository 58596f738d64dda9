// The Python scripts the labs run under PyTorch (`realgpu labs --framework
// torch`), compiled in from realgpu/labs/*.py at build time
// (realgpu/CMakeLists.txt, cmake/EmbedTexts.cmake) and written beside each
// run, so a labs run needs no data files wherever the binary is.
#pragma once

#include <string_view>

namespace gpuslice::realgpu::labs_scripts {

std::string_view alloc();  // realgpu/labs/labs_alloc.py: labs 000 and 001's allocations
std::string_view train();  // realgpu/labs/labs_train.py: a training-like step for the compute labs

}  // namespace gpuslice::realgpu::labs_scripts
