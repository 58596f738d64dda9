// The probe's kernel, `spin(unsigned microseconds)`: busy-waits on the GPU's
// global timer, so its device time is known without measuring it. As PTX it
// is compiled by the real driver's JIT; the fake driver accepts any module
// and models `spin` by name.
#pragma once

namespace gpuslice::probe {

inline constexpr const char* kSpinPtx = R"(
.version 7.0
.target sm_70
.address_size 64

.visible .entry spin(.param .u32 spin_param_0)
{
  .reg .pred %p<2>;
  .reg .b32 %r<2>;
  .reg .b64 %rd<6>;
  ld.param.u32 %r1, [spin_param_0];
  cvt.u64.u32 %rd1, %r1;
  mul.lo.u64 %rd2, %rd1, 1000;
  mov.u64 %rd3, %globaltimer;
  add.u64 %rd4, %rd3, %rd2;
$L_wait:
  mov.u64 %rd5, %globaltimer;
  setp.lt.u64 %p1, %rd5, %rd4;
  @%p1 bra $L_wait;
  ret;
}
)";

}  // namespace gpuslice::probe
