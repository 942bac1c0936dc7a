// The kernel launchers of kernels/*.cu compiled as host C++: with
// cuda_emulation.hpp included first, SMELT_LAUNCH runs each launch on the CPU.
#include "cuda_emulation.hpp"

#include "attention_kernels.cu"
#include "fill.cu"
#include "moe_kernels.cu"
