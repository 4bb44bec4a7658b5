// JPEG and TIFF files written and read by libjpeg and libtiff directly, as
// the image tests' independent side: files the library's reader must decode
// to the exact pixels (TIFF: the pattern written; JPEG: what libjpeg itself
// decodes the file to), and a check that the library's own files read back
// through the libraries. Only in builds with those formats.
#pragma once
#include <unistd.h>

#include <algorithm>
#include <csetjmp>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <levelhist/image.hpp>

#if LEVELHIST_HAVE_JPEG
#include <jpeglib.h>
#endif
#if LEVELHIST_HAVE_TIFF
#include <tiffio.h>
#endif

namespace image_test {

#if LEVELHIST_HAVE_JPEG
struct JpegErrors {
  jpeg_error_mgr pub;
  std::jmp_buf jump;
};
[[noreturn]] inline void jpeg_test_error(j_common_ptr cinfo) {
  std::longjmp(reinterpret_cast<JpegErrors*>(cinfo->err)->jump, 1);
}

// What raw_jpeg writes: an 8-bit gray or RGB image (or 4 samples per pixel as
// CMYK when `cmyk`), baseline or progressive, or with its own scan script.
struct RawJpeg {
  const levelhist::image::Image* img = nullptr;
  int quality = 90;
  bool progressive = false;
  bool cmyk = false;
  std::vector<jpeg_scan_info> script;  // non-empty: these scans
};

// Only trivially destructible locals between setjmp and the libjpeg calls.
inline bool raw_jpeg_encode(const RawJpeg& p, unsigned char** buffer, unsigned long* size) {
  jpeg_compress_struct cinfo{};
  JpegErrors err;
  cinfo.err = jpeg_std_error(&err.pub);
  err.pub.error_exit = jpeg_test_error;
  if (setjmp(err.jump)) {
    jpeg_destroy_compress(&cinfo);
    return false;
  }
  jpeg_create_compress(&cinfo);
  jpeg_mem_dest(&cinfo, buffer, size);
  const levelhist::image::Image& img = *p.img;
  cinfo.image_width = img.width;
  cinfo.image_height = img.height;
  cinfo.input_components = static_cast<int>(img.channels);
  cinfo.in_color_space = p.cmyk ? JCS_CMYK : img.channels == 1 ? JCS_GRAYSCALE : JCS_RGB;
  jpeg_set_defaults(&cinfo);
  jpeg_set_quality(&cinfo, p.quality, TRUE);
  if (p.progressive) jpeg_simple_progression(&cinfo);
  if (!p.script.empty()) {
    cinfo.scan_info = p.script.data();
    cinfo.num_scans = static_cast<int>(p.script.size());
  }
  jpeg_start_compress(&cinfo, TRUE);
  const std::size_t row_bytes = img.bytes.size() / img.height;
  while (cinfo.next_scanline < cinfo.image_height) {
    JSAMPROW row = const_cast<std::uint8_t*>(img.bytes.data()) + cinfo.next_scanline * row_bytes;
    jpeg_write_scanlines(&cinfo, &row, 1);
  }
  jpeg_finish_compress(&cinfo);
  jpeg_destroy_compress(&cinfo);
  return true;
}

inline std::string raw_jpeg(const RawJpeg& p) {
  unsigned char* buffer = nullptr;
  unsigned long size = 0;
  std::string out;
  if (raw_jpeg_encode(p, &buffer, &size)) out.assign(reinterpret_cast<char*>(buffer), size);
  std::free(buffer);
  return out;
}

inline bool raw_jpeg_decode(const std::string& file, levelhist::image::Image& img) {
  jpeg_decompress_struct cinfo{};
  JpegErrors err;
  cinfo.err = jpeg_std_error(&err.pub);
  err.pub.error_exit = jpeg_test_error;
  if (setjmp(err.jump)) {
    jpeg_destroy_decompress(&cinfo);
    return false;
  }
  jpeg_create_decompress(&cinfo);
  jpeg_mem_src(&cinfo, reinterpret_cast<const unsigned char*>(file.data()), file.size());
  jpeg_read_header(&cinfo, TRUE);
  cinfo.out_color_space = cinfo.num_components == 1 ? JCS_GRAYSCALE : JCS_RGB;
  jpeg_start_decompress(&cinfo);
  img.width = cinfo.output_width;
  img.height = cinfo.output_height;
  img.channels = static_cast<std::uint32_t>(cinfo.output_components);
  img.bit_depth = 8;
  img.maxval = 255;
  img.bytes.resize(std::size_t{img.width} * img.height * img.channels);
  while (cinfo.output_scanline < cinfo.output_height) {
    JSAMPROW row = img.bytes.data() + std::size_t{cinfo.output_scanline} * img.width * img.channels;
    jpeg_read_scanlines(&cinfo, &row, 1);
  }
  jpeg_finish_decompress(&cinfo);
  jpeg_destroy_decompress(&cinfo);
  return true;
}

// What libjpeg itself decodes a file to (gray or RGB); an empty image when it fails.
inline levelhist::image::Image libjpeg_decode(const std::string& file) {
  levelhist::image::Image img;
  if (!raw_jpeg_decode(file, img)) img = levelhist::image::Image{};
  return img;
}
#endif

#if LEVELHIST_HAVE_TIFF
// A file's bytes, through a temporary file (libtiff writes and reads paths).
inline std::string temp_tiff_path() {
  char tmpl[] = "/tmp/levelhist-tiff-test-XXXXXX";
  const int fd = mkstemp(tmpl);
  if (fd >= 0) close(fd);
  return tmpl;
}
inline std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// What raw_tiff writes: `img` as strips or tiles, planes contiguous or
// separate, in either byte order, with any compression; min-is-white stores
// maxval - v so that a reader that inverts it gets the image back.
struct RawTiff {
  const levelhist::image::Image* img = nullptr;
  bool tiled = false;
  std::uint32_t tile = 16;  // tile width and length (multiples of 16)
  bool separate = false;
  bool min_is_white = false;
  bool big_endian = false;
  std::uint16_t compression = COMPRESSION_NONE;
  std::uint32_t rows_per_strip = 3;
};

inline std::string raw_tiff(const RawTiff& p) {
  TIFFSetWarningHandler(nullptr);
  const levelhist::image::Image& img = *p.img;
  const std::string path = temp_tiff_path();
  TIFF* tif = TIFFOpen(path.c_str(), p.big_endian ? "wb" : "wl");
  if (!tif) return "";
  const std::uint32_t bps = img.bit_depth / 8, ch = img.channels;
  TIFFSetField(tif, TIFFTAG_IMAGEWIDTH, img.width);
  TIFFSetField(tif, TIFFTAG_IMAGELENGTH, img.height);
  TIFFSetField(tif, TIFFTAG_BITSPERSAMPLE, static_cast<std::uint16_t>(img.bit_depth));
  TIFFSetField(tif, TIFFTAG_SAMPLESPERPIXEL, static_cast<std::uint16_t>(ch));
  TIFFSetField(tif, TIFFTAG_PHOTOMETRIC,
               ch >= 3 ? PHOTOMETRIC_RGB : p.min_is_white ? PHOTOMETRIC_MINISWHITE : PHOTOMETRIC_MINISBLACK);
  TIFFSetField(tif, TIFFTAG_PLANARCONFIG, p.separate ? PLANARCONFIG_SEPARATE : PLANARCONFIG_CONTIG);
  TIFFSetField(tif, TIFFTAG_COMPRESSION, p.compression);
  if (ch == 2 || ch == 4) {
    const std::uint16_t extra[1] = {EXTRASAMPLE_ASSOCALPHA};
    TIFFSetField(tif, TIFFTAG_EXTRASAMPLES, std::uint16_t{1}, extra);
  }
  // The stored value of channel c of pixel (x, y).
  auto stored = [&](std::uint32_t x, std::uint32_t y, std::uint32_t c) {
    const std::uint32_t v = img.at(x, y, c);
    return p.min_is_white && c == 0 ? img.maxval - v : v;
  };
  auto put = [&](std::vector<std::uint8_t>& buf, std::size_t i, std::uint32_t v) {
    if (bps == 1) buf[i] = static_cast<std::uint8_t>(v);
    else {
      const auto s = static_cast<std::uint16_t>(v);  // host order: libtiff swaps for big-endian files
      std::memcpy(buf.data() + 2 * i, &s, 2);
    }
  };
  const std::uint16_t planes = p.separate ? static_cast<std::uint16_t>(ch) : 1;
  const std::uint32_t per = p.separate ? 1 : ch;
  bool ok = true;
  if (p.tiled) {
    TIFFSetField(tif, TIFFTAG_TILEWIDTH, p.tile);
    TIFFSetField(tif, TIFFTAG_TILELENGTH, p.tile);
    std::vector<std::uint8_t> buf(std::size_t{p.tile} * p.tile * per * bps);
    for (std::uint16_t s = 0; s < planes; ++s)
      for (std::uint32_t ty = 0; ty < img.height; ty += p.tile)
        for (std::uint32_t tx = 0; tx < img.width; tx += p.tile) {
          std::fill(buf.begin(), buf.end(), 0);
          for (std::uint32_t y = ty; y < std::min(img.height, ty + p.tile); ++y)
            for (std::uint32_t x = tx; x < std::min(img.width, tx + p.tile); ++x)
              for (std::uint32_t k = 0; k < per; ++k)
                put(buf, (std::size_t{y - ty} * p.tile + (x - tx)) * per + k, stored(x, y, p.separate ? s : k));
          ok = ok && TIFFWriteTile(tif, buf.data(), tx, ty, 0, s) >= 0;
        }
  } else {
    TIFFSetField(tif, TIFFTAG_ROWSPERSTRIP, p.rows_per_strip);
    std::vector<std::uint8_t> buf(std::size_t{img.width} * per * bps);
    for (std::uint16_t s = 0; s < planes; ++s)
      for (std::uint32_t y = 0; y < img.height; ++y) {
        for (std::uint32_t x = 0; x < img.width; ++x)
          for (std::uint32_t k = 0; k < per; ++k) put(buf, std::size_t{x} * per + k, stored(x, y, p.separate ? s : k));
        ok = ok && TIFFWriteScanline(tif, buf.data(), y, s) >= 0;
      }
  }
  TIFFClose(tif);
  std::string bytes = ok ? slurp(path) : "";
  std::remove(path.c_str());
  return bytes;
}

// A TIFF that is not what levelhist reads: `bits` per sample of
// `sample_format`, `photometric` (a palette gets a gray ramp colormap).
inline std::string raw_tiff_other(std::uint16_t bits, std::uint16_t sample_format, std::uint16_t photometric,
                                  std::uint16_t samples = 1) {
  TIFFSetWarningHandler(nullptr);
  const std::string path = temp_tiff_path();
  TIFF* tif = TIFFOpen(path.c_str(), "w");
  if (!tif) return "";
  const std::uint32_t w = 4, h = 2;
  TIFFSetField(tif, TIFFTAG_IMAGEWIDTH, w);
  TIFFSetField(tif, TIFFTAG_IMAGELENGTH, h);
  TIFFSetField(tif, TIFFTAG_BITSPERSAMPLE, bits);
  TIFFSetField(tif, TIFFTAG_SAMPLESPERPIXEL, samples);
  TIFFSetField(tif, TIFFTAG_SAMPLEFORMAT, sample_format);
  TIFFSetField(tif, TIFFTAG_PHOTOMETRIC, photometric);
  TIFFSetField(tif, TIFFTAG_PLANARCONFIG, PLANARCONFIG_CONTIG);
  TIFFSetField(tif, TIFFTAG_ROWSPERSTRIP, h);
  std::vector<std::uint16_t> map(std::size_t{1} << (bits <= 8 ? bits : 8));
  if (photometric == PHOTOMETRIC_PALETTE) {
    for (std::size_t i = 0; i < map.size(); ++i) map[i] = static_cast<std::uint16_t>(i * 257);
    TIFFSetField(tif, TIFFTAG_COLORMAP, map.data(), map.data(), map.data());
  }
  std::vector<std::uint8_t> row((std::size_t{w} * samples * bits + 7) / 8, 0x11);
  for (std::uint32_t y = 0; y < h; ++y) TIFFWriteScanline(tif, row.data(), y, 0);
  TIFFClose(tif);
  std::string bytes = slurp(path);
  std::remove(path.c_str());
  return bytes;
}

// What libtiff itself reads from a contiguous, strip-organised TIFF (as the
// library writes them): the samples in host order; an empty image when it fails.
inline levelhist::image::Image libtiff_decode(const std::string& bytes) {
  TIFFSetWarningHandler(nullptr);
  levelhist::image::Image img;
  const std::string path = temp_tiff_path();
  std::ofstream(path, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  TIFF* tif = TIFFOpen(path.c_str(), "r");
  if (tif) {
    std::uint16_t spp = 1, bits = 8;
    TIFFGetField(tif, TIFFTAG_IMAGEWIDTH, &img.width);
    TIFFGetField(tif, TIFFTAG_IMAGELENGTH, &img.height);
    TIFFGetFieldDefaulted(tif, TIFFTAG_SAMPLESPERPIXEL, &spp);
    TIFFGetFieldDefaulted(tif, TIFFTAG_BITSPERSAMPLE, &bits);
    img.channels = spp;
    img.bit_depth = bits;
    img.maxval = bits == 16 ? 65535 : 255;
    const std::size_t row = std::size_t{img.width} * spp * (bits / 8);
    img.bytes.resize(row * img.height);
    for (std::uint32_t y = 0; y < img.height; ++y)
      if (TIFFReadScanline(tif, img.bytes.data() + y * row, y, 0) < 0) img.bytes.clear();
    TIFFClose(tif);
  }
  std::remove(path.c_str());
  return img;
}
#endif

}  // namespace image_test
