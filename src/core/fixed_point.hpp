// Deterministic weighted sums (Request::deterministic), the same arithmetic on
// the host and in kernels. Each weight w is rounded once to an integer number
// of quanta 2^(E - kWeightBits), E from the call's largest finite |weight|
// (bound < 2^E); the integers are added exactly (a 128-bit sum per slot, in
// any order: integer addition is associative, floating-point addition is
// not); at the end each slot's sum becomes one double. So the result depends
// only on the call's samples and weights, not on the order of the additions:
// not on the strategy, the grid, the number of threads or the run.
//
// This is the pre-rounding XGBoost's GPU histograms use for their gradient
// sums (docs/REFERENCES.md), with the quantum taken from the largest weight
// alone, so the precision does not shrink as n grows: a 128-bit sum holds 2^87
// weights of 40 bits.
//
// Non-finite weights cannot be integers: each slot keeps flags of the +inf,
// -inf and NaN weights it saw (order-free too), and its sum is then what
// double addition gives in any order: NaN for a NaN or for both infinities,
// else the infinity.
#pragma once
#include <cmath>
#include <cstdint>
#include <cstring>

#include "levelhist/config.hpp"

namespace levelhist::fixed {

// Bits of one rounded weight: |w| < 2^E rounds to at most 2^40 quanta, so a
// 64-bit partial sum holds 2^22 of them before it could overflow.
inline constexpr int kWeightBits = 40;
// Samples a 64-bit partial sum may take before it is added into the 128-bit one.
inline constexpr std::uint64_t kPartialSamples = std::uint64_t{1} << 22;

// The flags of a non-finite weight.
inline constexpr unsigned kPlusInf = 1, kMinusInf = 2, kNaN = 4;

// E for a call whose largest finite |weight| is `bound`: the smallest E with
// bound < 2^E (0 when every finite weight is 0).
LEVELHIST_HD inline int exponent_of(double bound) {
  if (!(bound > 0.0)) return 0;
  int e = 0;
#if defined(__CUDA_ARCH__)
  (void)frexp(bound, &e);  // bound = m 2^e, 0.5 <= m < 1
#else
  (void)std::frexp(bound, &e);
#endif
  return e;
}

// The flag of a non-finite value; 0 for a finite one.
LEVELHIST_HD inline unsigned special_of(double v) {
  if (v != v) return kNaN;
  if (v == INFINITY) return kPlusInf;
  if (v == -INFINITY) return kMinusInf;
  return 0;
}

// A finite v with |v| <= 2^e as a whole number of quanta 2^(e - kWeightBits),
// rounded to nearest, ties to even: a scaling by a power of two and one
// rounding to an integer. The scaling multiplies by 2^(kWeightBits - e) where
// that is a normal double (a product by an exact power of two rounds as
// ldexp does: exactly, or once where the result is subnormal), and calls
// ldexp only for the extreme exponents; the rounding adds and subtracts
// 1.5 x 2^52 on the host (exact for |x| <= 2^51, in the default rounding mode)
// and is one conversion on the device: the same integers either way, far
// cheaper than a libm call per weight.
class Quantizer {
 public:
  LEVELHIST_HD explicit Quantizer(int e) : e_(e) {
    const int k = kWeightBits - e;
    if (k >= -1022 && k <= 1023) {
      const std::uint64_t bits = static_cast<std::uint64_t>(k + 1023) << 52;
#if defined(__CUDA_ARCH__)
      factor_ = __longlong_as_double(static_cast<long long>(bits));
#else
      std::memcpy(&factor_, &bits, sizeof factor_);
#endif
    }
  }
  LEVELHIST_HD std::int64_t operator()(double v) const {
#if defined(__CUDA_ARCH__)
    const double x = factor_ != 0.0 ? __dmul_rn(v, factor_) : ldexp(v, kWeightBits - e_);
    return __double2ll_rn(x);
#else
    const double x = factor_ != 0.0 ? v * factor_ : std::ldexp(v, kWeightBits - e_);
    constexpr double kRound = 6755399441055744.0;  // 1.5 x 2^52
    return static_cast<std::int64_t>((x + kRound) - kRound);
#endif
  }
  LEVELHIST_HD int exponent() const { return e_; }

 private:
  int e_;
  double factor_ = 0.0;  // 2^(kWeightBits - e), or 0 when that is not a normal double
};

// A 128-bit two's-complement sum: hi * 2^64 + lo.
struct Wide {
  std::uint64_t lo = 0;
  std::int64_t hi = 0;
  LEVELHIST_HD void add(std::int64_t v) {
    const std::uint64_t before = lo;
    lo += static_cast<std::uint64_t>(v);
    hi += (v < 0 ? -1 : 0) + (lo < before ? 1 : 0);
  }
  // Another sum (a part's, added into the whole's).
  LEVELHIST_HD void add(const Wide& o) {
    const std::uint64_t before = lo;
    lo += o.lo;
    hi += o.hi + (lo < before ? 1 : 0);
  }
};

// Bits of the quiet NaN both sides return.
LEVELHIST_HD inline double quiet_nan() {
#if defined(__CUDA_ARCH__)
  return __longlong_as_double(0x7FF8000000000000LL);
#else
  const std::uint64_t bits = 0x7FF8000000000000ULL;
  double d;
  std::memcpy(&d, &bits, sizeof d);
  return d;
#endif
}

// The double of a slot: its sum of quanta times 2^(e - kWeightBits), or what
// its flags say. Sums that fit 64 bits convert with one correct rounding;
// wider ones as fl(fl(hi * 2^64) + fl(lo)), the same operations on both sides.
LEVELHIST_HD inline double to_double(Wide sum, unsigned flags, int e) {
  if ((flags & kNaN) || (flags & (kPlusInf | kMinusInf)) == (kPlusInf | kMinusInf)) return quiet_nan();
  if (flags & kPlusInf) return INFINITY;
  if (flags & kMinusInf) return -INFINITY;
  constexpr std::uint64_t kSign = std::uint64_t{1} << 63;
  double v;
  if ((sum.hi == 0 && sum.lo < kSign) || (sum.hi == -1 && sum.lo >= kSign)) {
#if defined(__CUDA_ARCH__)
    v = __ll2double_rn(static_cast<long long>(sum.lo));
#else
    v = static_cast<double>(static_cast<std::int64_t>(sum.lo));
#endif
  } else {
#if defined(__CUDA_ARCH__)
    v = __dadd_rn(__dmul_rn(__ll2double_rn(sum.hi), 18446744073709551616.0), __ull2double_rn(sum.lo));
#else
    v = static_cast<double>(sum.hi) * 18446744073709551616.0 + static_cast<double>(sum.lo);
#endif
  }
#if defined(__CUDA_ARCH__)
  return ldexp(v, e - kWeightBits);
#else
  return std::ldexp(v, e - kWeightBits);
#endif
}

}  // namespace levelhist::fixed
