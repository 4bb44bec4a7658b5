// levelhist: counting sort of 8- and 16-bit samples.
//
// The histogram is the sort (Wilt part 1, "counting sort"): count every value
// once (one bin per value, levelhist::fill or a CUDA histogram strategy), take
// the exclusive prefix sum of the counts (where each value's run starts), then
// write each value count times in value order. It is
// O(n + k) for k = 256 or 65536 possible values and touches the input once.
//
//   std::vector<std::uint16_t> in = ..., out(in.size());
//   levelhist::counting_sort(levelhist::SampleType::u16, in.data(), out.data(), in.size());
//
// The output equals std::sort's: values ascending, signed types in signed order
// (i8: -128 first). The device-pointer API for CUDA callers is cuda_sort.hpp.
#pragma once
#include <cstdint>
#include <span>

#include "levelhist/levelhist.hpp"

namespace levelhist {

// Writes the n samples of `type` (u8, i8, u16 or i16) at `in` to `out` in
// ascending order. Host memory, any alignment; `out` must not overlap `in`
// (the input is read while the output is written). Returns the backend that
// ran: options.backend automatic takes CUDA when a GPU is present and the
// build has it, else the CPU; cuda without one throws Error(unsupported) as
// levelhist::fill does. options.threads caps the CPU threads; options.strategy
// must be "auto" (Error(usage) otherwise). Throws Error(usage) for another type.
Backend counting_sort(SampleType type, const void* in, void* out, std::uint64_t n, const Options& options = {});

template <class T>
Backend counting_sort(std::span<const T> in, std::span<T> out, const Options& options = {}) {
  if (out.size() < in.size()) throw Error(ErrorKind::usage, "counting_sort: the output is smaller than the input");
  return counting_sort(sample_type_of<T>(), in.data(), out.data(), in.size(), options);
}

// True for the types counting_sort takes.
constexpr bool counting_sort_supports(SampleType type) { return sample_size(type) <= 2; }

}  // namespace levelhist
