// gpu_raw_values: 16-bit samples into more bins than 32-bit shared counters
// hold (u16 one bin per value: 65539 slots, 256 KiB > 227 KiB), counted by
// raw value: the 65536 values' 16-bit counters in 128 KiB of shared memory,
// drained exactly at 2^14, each block's counts summed as floats in the
// workspace and mapped to their slots once, at the end (src/cuda/raw_pairs.cuh,
// the counting of gpu_joint's joint histogram of two 8-bit images). The map is
// applied 65536 times a call, not once a sample, so any binning costs the
// same: the generic BinIndexer slot, exact by definition.
//
// In the lab, not auto's choice: at 1 GiB it is 1.5-1.8x gpu_split_bins on
// uniform, constant and skewed data, but not level: a shared ATOMS.ADD takes a
// clock for every lane on its word, so data whose warps hold one value at once
// (8 values every lane sees alike, an opaque 16-bit RGBA image) or few values
// (ten labels in random order) runs at 0.24-0.69x gpu_split_bins, which is
// level within 0.70 (docs/PERFORMANCE-general.md, section 21).
#include <algorithm>
#include <cstdint>
#include <string>

#include "core/env_knob.hpp"
#include "cuda/general_common.cuh"
#include "cuda/raw_pairs.cuh"
#include "lab.hpp"

namespace levelhist::cuda_detail::raw_values {
namespace {

using raw_pairs::kPackedChunkPoints;

// A raw value's slot: the binning's slot of the sample with those bits.
template <class T>
struct ValueSlots {
  general::GenericMap<T> map;
  std::size_t place(std::size_t at) { return at; }  // no tables
  __device__ void setup(unsigned char*) {}
  __device__ __forceinline__ std::uint32_t operator()(unsigned value) const {
    return map(static_cast<T>(static_cast<std::uint16_t>(value)));
  }
};

bool is_sixteen_bit(SampleType t) { return t == SampleType::u16 || t == SampleType::i16; }

// LEVELHIST_RAW_VALUES_DRAIN_LIST: entries of the drain list (the tests make
// it 1 to take the full scan); LEVELHIST_RAW_VALUES_FLOAT_END=0: each block's
// 64-bit atomics instead of the float sums (for the tests and comparisons).
std::uint32_t drain_capacity() {
  return static_cast<std::uint32_t>(::levelhist::detail::env_knob(
      "LEVELHIST_RAW_VALUES_DRAIN_LIST", raw_pairs::kDrainListDefault, 1, 1u << 14));
}
bool float_end_wanted() { return ::levelhist::detail::env_knob("LEVELHIST_RAW_VALUES_FLOAT_END", 1, 0, 1) != 0; }

std::size_t shared_bytes(std::uint32_t capacity) {
  ValueSlots<std::uint16_t> slots{};
  return raw_pairs::counting_shared_bytes(slots, capacity);
}

bool supports(const Problem& p, std::string* why_not) {
  auto no = [&](const std::string& why) {
    if (why_not) *why_not = "gpu_raw_values: " + why;
    return false;
  };
  if (!is_sixteen_bit(p.type)) return no("counts 16-bit samples (u16, i16) only");
  // (Batches, N-d points, pixels and weights: no capability bit, so never offered.)
  if (const std::size_t bytes = shared_bytes(drain_capacity()); general::max_shared_bytes() < bytes)
    return no("needs " + std::to_string(bytes) + " bytes of shared memory a block");
  return true;
}

std::size_t workspace_bytes(const Problem&) { return raw_pairs::kPairSumBytes; }

void run(const RunArgs& a) {
  clear_slots_unless_accumulating(a);
  if (a.n == 0) return;
  const auto* bytes = static_cast<const unsigned char*>(a.samples);
  const auto address = reinterpret_cast<std::uintptr_t>(bytes);
  raw_pairs::SixteenBitSamples src{};
  src.lead_at = bytes;
  // At an even address the samples before the first 16-byte boundary go
  // straight to their slots; at an odd one no 16-byte load holds whole
  // samples, and every sample is read bytewise.
  src.vector = address % 2 == 0;
  if (src.vector) src.lead = static_cast<std::uint32_t>(std::min<std::uint64_t>((16 - address % 16) % 16 / 2, a.n));
  src.samples = bytes + 2 * src.lead;
  raw_pairs::RawWork w{};
  w.n = a.n - src.lead;
  w.drain_capacity = drain_capacity();
  w.two_values = false;
  w.out = a.slots;
  const std::size_t smem = shared_bytes(w.drain_capacity);
  auto go = [&](auto slots) {
    raw_pairs::count(w, src, slots, smem, a.workspace, a.workspace_bytes, float_end_wanted(), stream_of(a));
  };
  if (a.type == SampleType::u16) go(ValueSlots<std::uint16_t>{general::GenericMap<std::uint16_t>{a.indexer}});
  else go(ValueSlots<std::int16_t>{general::GenericMap<std::int16_t>{a.indexer}});
}

// A chunk's edges, a step's (16 samples) and the lead's.
std::vector<std::uint64_t> boundaries(const Problem&) {
  return {7, 8, 9, 15, 16, 17, 23, 24, 25, kPackedChunkPoints - 1, kPackedChunkPoints, kPackedChunkPoints + 1,
          2 * kPackedChunkPoints + 15};
}

}  // namespace
}  // namespace levelhist::cuda_detail::raw_values

namespace levelhist::strategies {

const Strategy gpu_raw_values{"gpu_raw_values",
                              Backend::cuda,
                              "16-bit samples counted by raw value in 16-bit shared counters drained at 2^14, the "
                              "blocks' counts summed as floats and mapped to their slots once, at the end; "
                              "any binning; runs of one value added once",
                              "levelhist (docs/PERFORMANCE-general.md, section 21: not level, not auto's choice)",
                              cuda_detail::raw_values::supports,
                              cuda_detail::raw_values::workspace_bytes,
                              cuda_detail::raw_values::run,
                              cuda_detail::raw_values::boundaries};

}  // namespace levelhist::strategies
