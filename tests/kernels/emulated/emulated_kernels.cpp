// The kernel launchers of kernels/*.cu compiled as host C++: with
// cuda_emulation.hpp included first, SMELT_LAUNCH runs each launch on the CPU.
#include "cuda_emulation.hpp"

#include "device/attention_kernels.cu"
#include "device/fill.cu"
#include "device/moe_kernels.cu"
