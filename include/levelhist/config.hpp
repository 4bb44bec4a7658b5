// levelhist: compile-time configuration shared by host and device code.
#pragma once

// LEVELHIST_HD marks functions that run on both the CPU and the GPU. The public
// headers compile with any C++20 compiler; only under nvcc does it expand.
#if defined(__CUDACC__)
#define LEVELHIST_HD __host__ __device__
#else
#define LEVELHIST_HD
#endif
