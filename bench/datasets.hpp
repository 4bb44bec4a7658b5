// levelhist bench: input generators. A Dataset is a named, deterministic way
// to make n samples of one type in host memory; the sections of the GPU
// benchmark (and anything else that needs test inputs) draw from these.
//
// Contention is what separates histogram methods, so the generators control
// it directly: all zeros (every sample collides), k distinct values
// (the `--random` parameter of Wilt part 1's test program), linear i % 256 (no
// two neighbours collide: the best case of Brown & Snoeyink, TRISH, Fig. 6),
// uniform random, and images, whose smooth regions repeat values locally
// (TRISH, Fig. 7).
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "levelhist/sample_type.hpp"

namespace levelhist::bench {

// n samples of one type in host memory. Not zero-initialized: a generator
// writes every byte, and clearing 1 GiB first would cost as much again.
class HostSamples {
 public:
  HostSamples(SampleType type, std::uint64_t n);

  SampleType type() const { return type_; }
  std::uint64_t size() const { return n_; }
  std::uint64_t bytes() const { return n_ * sample_size(type_); }
  unsigned char* data() { return data_.get(); }
  const unsigned char* data() const { return data_.get(); }
  std::span<unsigned char> byte_span() { return {data_.get(), bytes()}; }

 private:
  SampleType type_;
  std::uint64_t n_;
  std::unique_ptr<unsigned char[]> data_;
};

// A named input distribution. `fill` writes every sample of its argument and
// depends only on the dataset's parameters and the sample index, so the first
// m samples of make(n) equal make(m): prefixes of one buffer serve a size sweep.
// (Tiled images are the exception: their layout follows the side length.)
struct Dataset {
  std::string name;  // short and stable: a table column, a curve, a CSV field
  SampleType type;
  std::function<void(HostSamples&)> fill;

  HostSamples make(std::uint64_t n) const;
};

// Every sample 0: all threads collide on one bin.
Dataset zeros(SampleType type);
// Independent random bits: uniform over the whole range of an integer type;
// uniform in [0, 1) for f32 and f64.
Dataset uniform(SampleType type, std::uint64_t seed);
// u8 sample i = i % 256: neighbours never share a bin.
Dataset linear_bytes();
// u8 samples drawn uniformly from `count` distinct values (1..256), themselves
// a random subset of 0..255 chosen by the seed. Named "<count> distinct".
Dataset distinct_bytes(unsigned count, std::uint64_t seed);

// An 8-bit grayscale image.
struct Image {
  std::string name;
  unsigned width = 0;
  unsigned height = 0;
  std::vector<std::uint8_t> pixels;  // row-major, width * height
};

// Reads a binary PGM (P5) with maxval <= 255, comments allowed in the header.
// Throws Error(input) naming the file and what is wrong.
Image read_pgm(const std::string& path);
// A smooth picture: a few broad gaussian blobs over a diagonal gradient,
// quantized to 8 bits. Like a photograph's sky or skin it repeats values in
// large areas, but it needs no file.
Image smooth_synthetic_image(unsigned width, unsigned height, std::uint64_t seed);
// The image repeated in both directions to fill a square of side sqrt(n)
// (n must be a perfect square), as Brown & Snoeyink (TRISH, Fig. 7) tile their
// test images from 256^2 to 4096^2. Named "<image name>".
Dataset tiled_image(const Image& image);

// The directory holding the benchmark images: `override_dir` when not empty,
// else <executable dir>/../bench/data, else the source tree's bench/data as
// compiled in. Throws Error(input) listing the places tried.
std::string find_data_dir(const std::string& override_dir);

}  // namespace levelhist::bench
