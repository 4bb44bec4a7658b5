#include "levelhist/sample_type.hpp"

namespace levelhist {

std::string_view to_string(SampleType type) {
  switch (type) {
    case SampleType::u8: return "u8";
    case SampleType::i8: return "i8";
    case SampleType::u16: return "u16";
    case SampleType::i16: return "i16";
    case SampleType::i32: return "i32";
    case SampleType::u32: return "u32";
    case SampleType::f32: return "f32";
    case SampleType::f64: return "f64";
  }
  return "?";
}

std::optional<SampleType> parse_sample_type(std::string_view name) {
  for (SampleType t : kAllSampleTypes)
    if (to_string(t) == name) return t;
  return std::nullopt;
}

}  // namespace levelhist
