// levelhist: the sample types a histogram can count.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <type_traits>

namespace levelhist {

// Every sample type the library accepts. Multi-byte samples are read in the
// host's byte order (little-endian on every supported machine).
enum class SampleType : std::uint8_t { u8, i8, u16, i16, i32, u32, f32, f64 };

inline constexpr SampleType kAllSampleTypes[] = {SampleType::u8,  SampleType::i8,  SampleType::u16,
                                                 SampleType::i16, SampleType::i32, SampleType::u32,
                                                 SampleType::f32, SampleType::f64};

template <class T> struct type_tag { using type = T; };

// The C++ type behind each SampleType, and back.
template <class T> constexpr SampleType sample_type_of() {
  if constexpr (std::is_same_v<T, std::uint8_t>) return SampleType::u8;
  else if constexpr (std::is_same_v<T, std::int8_t>) return SampleType::i8;
  else if constexpr (std::is_same_v<T, std::uint16_t>) return SampleType::u16;
  else if constexpr (std::is_same_v<T, std::int16_t>) return SampleType::i16;
  else if constexpr (std::is_same_v<T, std::int32_t>) return SampleType::i32;
  else if constexpr (std::is_same_v<T, std::uint32_t>) return SampleType::u32;
  else if constexpr (std::is_same_v<T, float>) return SampleType::f32;
  else if constexpr (std::is_same_v<T, double>) return SampleType::f64;
  else static_assert(sizeof(T) == 0, "levelhist: unsupported sample type");
}

// Calls f(type_tag<T>{}) with the C++ type of `type`; the one switch over
// sample types that every backend uses.
template <class F> decltype(auto) visit_sample_type(SampleType type, F&& f) {
  switch (type) {
    case SampleType::u8: return f(type_tag<std::uint8_t>{});
    case SampleType::i8: return f(type_tag<std::int8_t>{});
    case SampleType::u16: return f(type_tag<std::uint16_t>{});
    case SampleType::i16: return f(type_tag<std::int16_t>{});
    case SampleType::i32: return f(type_tag<std::int32_t>{});
    case SampleType::u32: return f(type_tag<std::uint32_t>{});
    case SampleType::f32: return f(type_tag<float>{});
    case SampleType::f64: break;
  }
  return f(type_tag<double>{});
}

constexpr std::size_t sample_size(SampleType type) {
  switch (type) {
    case SampleType::u8: case SampleType::i8: return 1;
    case SampleType::u16: case SampleType::i16: return 2;
    case SampleType::i32: case SampleType::u32: case SampleType::f32: return 4;
    case SampleType::f64: return 8;
  }
  return 0;
}

constexpr bool is_integer(SampleType type) {
  return type != SampleType::f32 && type != SampleType::f64;
}

std::string_view to_string(SampleType type);
std::optional<SampleType> parse_sample_type(std::string_view name);

}  // namespace levelhist
