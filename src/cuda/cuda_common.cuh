// Shared pieces of every CUDA strategy: error checking that turns CUDA's
// status into levelhist::Error, what the library knows about each device
// (cached per device: a process may use several GPUs), unaligned-safe sample
// loads, and the 64-bit flush of 32-bit block counts.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <utility>

#include "core/env_knob.hpp"
#include "levelhist/bin_index.hpp"
#include "levelhist/error.hpp"
#include "levelhist/strategy.hpp"

namespace levelhist::cuda_detail {

[[noreturn]] void throw_cuda_error(cudaError_t status, const char* what, const char* file, int line);

// Checks a CUDA runtime call; on failure throws Error(cuda) naming the call and CUDA's message.
#define LEVELHIST_CUDA_CHECK(call)                                                               \
  do {                                                                                           \
    cudaError_t levelhist_status_ = (call);                                                      \
    if (levelhist_status_ != cudaSuccess)                                                        \
      ::levelhist::cuda_detail::throw_cuda_error(levelhist_status_, #call, __FILE__, __LINE__);  \
  } while (0)

// After a kernel launch: checks the launch itself (not its completion).
#define LEVELHIST_CUDA_CHECK_LAUNCH() LEVELHIST_CUDA_CHECK(cudaGetLastError())

inline cudaStream_t stream_of(const RunArgs& a) { return static_cast<cudaStream_t>(a.stream); }

// ---- devices ----------------------------------------------------------------------

// What the library reads off a device once (src/cuda/device.cu).
struct DeviceFacts {
  int device = -1;
  std::string name;
  int sm_count = 0;
  int compute_capability = 0;           // major * 10 + minor
  std::size_t max_shared_optin = 0;     // bytes of shared memory a block may opt in to
  std::size_t l2_bytes = 0;
};

// cudaMalloc and cudaMallocHost that say what ran out: Error(resource) naming
// what needed the memory (`what`, e.g. "the plan's bin edges and tables"), how
// much, and for device memory how much the device has free, e.g. "out of
// device memory: the plan's bin edges and tables, 1024 bytes, on CUDA device 0
// (1.5 MiB free of 139.8 GiB)". Other failures: Error(cuda).
void* device_alloc(std::size_t bytes, const char* what);
void* pinned_alloc(std::size_t bytes, const char* what);

// The current device (cudaGetDevice); throws Error(cuda) without one.
int current_device();
// The facts of `device`, read once per device and kept.
const DeviceFacts& device_facts(int device);
inline const DeviceFacts& current_device_facts() { return device_facts(current_device()); }
// Number of multiprocessors of the current device.
inline int sm_count() { return current_device_facts().sm_count; }

// Makes `device` current for a scope and restores the previous one (only
// when they differ: a plan's calls on its own device cost nothing).
class DeviceGuard {
 public:
  explicit DeviceGuard(int device);
  ~DeviceGuard();
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int previous_ = -1;
};

// Blocks of `kernel` with `threads` threads and `dynamic_smem` bytes of
// dynamic shared memory resident on the whole current device at once (a
// persistent grid). Cached per device, kernel and shape.
int resident_blocks_of(const void* kernel, int threads, std::size_t dynamic_smem);
template <class Kernel>
int resident_blocks(Kernel kernel, int threads, std::size_t dynamic_smem = 0) {
  return resident_blocks_of(reinterpret_cast<const void*>(kernel), threads, dynamic_smem);
}
// Lets `kernel` use up to `bytes` of dynamic shared memory on the current
// device (function attributes are per device): done once per device and
// kernel, a lookup afterwards.
void allow_dynamic_shared_of(const void* kernel, std::size_t bytes);
template <class Kernel>
void allow_dynamic_shared(Kernel kernel, std::size_t bytes) {
  allow_dynamic_shared_of(reinterpret_cast<const void*>(kernel), bytes);
}
// The static shared memory `kernel` declares (the same on every device):
// asked once per kernel, a lookup afterwards.
std::size_t static_shared_bytes_of(const void* kernel);
template <class Kernel>
std::size_t static_shared_bytes(Kernel kernel) {
  return static_shared_bytes_of(reinterpret_cast<const void*>(kernel));
}
// Asks for the largest shared-memory carveout for `kernel` on the current
// device (more resident blocks for kernels with static shared memory); once
// per device and kernel.
void prefer_max_shared_of(const void* kernel);
template <class Kernel>
void prefer_max_shared(Kernel kernel) {
  prefer_max_shared_of(reinterpret_cast<const void*>(kernel));
}

// Clears the output counters unless the caller accumulates.
inline void clear_slots_unless_accumulating(const RunArgs& a) {
  if (!a.accumulate)
    LEVELHIST_CUDA_CHECK(cudaMemsetAsync(a.slots, 0, a.binning->slots() * sizeof(std::uint64_t), stream_of(a)));
}

// ---- samples ----------------------------------------------------------------------

// A sample at byte address p of any alignment.
template <class T>
__device__ __forceinline__ T load_unaligned(const unsigned char* p) {
  T v;
  memcpy(&v, p, sizeof(T));
  return v;
}

// Sample i of an array that may or may not be aligned to sizeof(T).
template <class T, bool Aligned>
__device__ __forceinline__ T load_sample(const void* samples, std::uint64_t i) {
  if constexpr (Aligned || sizeof(T) == 1) {
    return static_cast<const T*>(samples)[i];
  } else {
    return load_unaligned<T>(static_cast<const unsigned char*>(samples) + i * sizeof(T));
  }
}

// Adds a 32-bit partial count into a 64-bit output counter.
__device__ __forceinline__ void add_to_slot(std::uint64_t* slot, unsigned int count) {
  if (count) atomicAdd(reinterpret_cast<unsigned long long*>(slot), static_cast<unsigned long long>(count));
}

// ---- programmatic dependent launch (sm_90; PTX griddepcontrol) ----------------------
// A kernel launched with cudaLaunchAttributeProgrammaticStreamSerialization
// (launch_kernel<true>) may start while the kernel before it in the stream
// still runs, once that one has called allow_dependent_launch() or ended. Each
// of its threads calls wait_for_prior_grid() before its first access to memory
// a kernel may have written (the input, the workspace, the slots): it returns
// once that kernel has completed and its writes are visible. What runs before
// the wait (clearing shared memory; the slots' map, from the plan's edges,
// uploaded synchronously when the plan was made) overlaps the previous call
// (docs/PERFORMANCE.md, change 15).
// Both are no-ops where the launch was not a dependent one; before sm_90 they
// do not exist (nor does the launch attribute: launch_kernel leaves it off).
__device__ __forceinline__ void wait_for_prior_grid() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}
__device__ __forceinline__ void allow_dependent_launch() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

// LEVELHIST_DEPENDENT_LAUNCH=0: plain launches where the policy asks for
// dependent ones (for comparisons in one binary).
inline bool dependent_launch_allowed() {
  static const bool on = ::levelhist::detail::env_knob("LEVELHIST_DEPENDENT_LAUNCH", 1, 0, 1) != 0;
  return on && current_device_facts().compute_capability >= 90;
}

// Launches `k` on `stream`, as a programmatic dependent launch where kDependent
// (the kernel must then wait_for_prior_grid() before it touches global memory)
// and the device has it (sm_90 on).
template <bool kDependent, class... Params, class... Args>
void launch_kernel(void (*k)(Params...), int blocks, int threads, std::size_t smem, cudaStream_t stream,
                   Args&&... args) {
  if (kDependent && dependent_launch_allowed()) {
    cudaLaunchConfig_t config{};
    config.gridDim = dim3(blocks);
    config.blockDim = dim3(threads);
    config.dynamicSmemBytes = smem;
    config.stream = stream;
    cudaLaunchAttribute attribute[1]{};
    attribute[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attribute[0].val.programmaticStreamSerializationAllowed = 1;
    config.attrs = attribute;
    config.numAttrs = 1;
    LEVELHIST_CUDA_CHECK(cudaLaunchKernelEx(&config, k, std::forward<Args>(args)...));
  } else {
    k<<<blocks, threads, smem, stream>>>(std::forward<Args>(args)...);
  }
  LEVELHIST_CUDA_CHECK_LAUNCH();
}

// A release-and-acquire fence at GPU scope (PTX fence.acq_rel.gpu, SASS
// MEMBAR.ALL.GPU): what a flag or a ticket between blocks needs. __threadfence()
// is the sequentially consistent fence.sc.gpu (MEMBAR.SC.GPU), which also
// orders fences among themselves, which no kernel here relies on.
__device__ __forceinline__ void fence_acq_rel_gpu() {
#if defined(__CUDA_ARCH__)
  asm volatile("fence.acq_rel.gpu;" ::: "memory");
#endif
}

// Whether this block is the last of the grid to finish, for the kernels whose
// last block folds every block's partial sums (a ticket counter in the
// workspace, which that block resets). The fence before the ticket makes this
// block's global additions visible to the last block; the fence after it, in
// the last block, orders its reads after everyone's (kSeqCst: __threadfence,
// else fence_acq_rel_gpu). Every thread of the block calls it.
template <bool kSeqCst = true>
__device__ __forceinline__ bool last_block_to_finish(unsigned* ticket) {
  __shared__ bool is_last_block;
  if constexpr (kSeqCst) __threadfence();
  else fence_acq_rel_gpu();
  __syncthreads();
  if (threadIdx.x == 0) is_last_block = atomicAdd(ticket, 1u) == gridDim.x - 1;
  __syncthreads();
  if (!is_last_block) return false;
  if constexpr (kSeqCst) __threadfence();
  else fence_acq_rel_gpu();
  return true;
}

// The last block's fold: each 32-bit per-call count is taken from `accum`
// (leaving it zero) and added to its 64-bit slot. kBatch slots a thread at a
// time, their exchanges and loads all issued before any store, so the fold
// waits about one round trip to L2 per kBatch x blockDim slots, not one per
// blockDim (4099 slots: 9 round trips at 512 threads and kBatch 1, 2 at 8).
template <int kBatch>
__device__ __forceinline__ void fold_into_slots(unsigned* accum, std::uint64_t* slots, std::uint32_t count,
                                                bool accumulate) {
  for (std::uint32_t base = threadIdx.x; base < count; base += kBatch * blockDim.x) {
    unsigned c[kBatch];
    std::uint64_t old[kBatch];
#pragma unroll
    for (int k = 0; k < kBatch; ++k) {
      const std::uint32_t s = base + k * blockDim.x;
      c[k] = s < count ? atomicExch(accum + s, 0u) : 0u;
      old[k] = s < count && accumulate ? slots[s] : 0;
    }
#pragma unroll
    for (int k = 0; k < kBatch; ++k) {
      const std::uint32_t s = base + k * blockDim.x;
      if (s < count) slots[s] = old[k] + c[k];
    }
  }
}

// Calls f.template operator()<T, Aligned>() for the sample type of `a` and
// whether its samples pointer is aligned to the type's size: the one place
// the generic kernels turn run-time type and alignment into template arguments.
template <class F>
void dispatch_type_and_alignment(const RunArgs& a, F&& f) {
  visit_sample_type(a.type, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if (reinterpret_cast<std::uintptr_t>(a.samples) % sizeof(T) == 0)
      f.template operator()<T, true>();
    else
      f.template operator()<T, false>();
  });
}

}  // namespace levelhist::cuda_detail
