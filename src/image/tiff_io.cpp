// TIFF through libtiff (4.5 or later: per-file error handlers and a cap on
// single allocations, TIFFOpenOptions). Reads the first image of a file:
// 8- or 16-bit unsigned samples, gray (min-is-black, or min-is-white, which is
// inverted), RGB, or either with one extra sample as alpha; strips or tiles;
// planes interleaved or separate; every compression libtiff was built with
// (JPEG-compressed YCbCr is converted to RGB by libtiff). Palettes, bilevel
// and other bit depths, signed and float samples, CMYK and Lab are refused
// with a message saying what the file holds. Writes every Image (8/16 bit,
// 1 to 4 channels) as one strip-organised, deflate-compressed TIFF.
//
// TIFF is the one format here that needs random access: its first directory
// (the header of the image) may be anywhere in the file, and libtiff writes it
// at the end. A regular file is read in place with pread; a memory source as
// it is; a pipe or a device is first read into memory, growing as the data
// arrives, up to 16 bytes per pixel of the limit plus the metadata budget, so
// an endless pipe still ends.
//
// libtiff reports errors through handlers and return values (no longjmp);
// none of our callbacks lets a C++ exception into its C frames.
#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <limits>
#include <new>

#include <unistd.h>

#include "image/image_codecs.hpp"

namespace levelhist::image::detail {

bool looks_like_tiff(std::span<const std::uint8_t> file) {
  if (file.size() < 4) return false;
  // Classic TIFF (42) or BigTIFF (43), little- or big-endian.
  const bool little = file[0] == 'I' && file[1] == 'I' && file[3] == 0 && (file[2] == 42 || file[2] == 43);
  const bool big = file[0] == 'M' && file[1] == 'M' && file[2] == 0 && (file[3] == 42 || file[3] == 43);
  return little || big;
}

}  // namespace levelhist::image::detail

#if LEVELHIST_HAVE_TIFF
#include <tiffio.h>

namespace levelhist::image::detail {
namespace {

// The bytes of a file libtiff reads: memory, or a regular file through pread.
struct ReadHandle {
  std::span<const std::uint8_t> memory;
  int fd = -1;  // >= 0: pread from offset + pos
  std::uint64_t offset = 0;
  std::uint64_t size = 0;
  std::uint64_t pos = 0;
  int read_errno = 0;  // the first read error
};

tmsize_t read_proc(thandle_t h, void* out, tmsize_t n) {
  auto* r = static_cast<ReadHandle*>(h);
  if (n <= 0 || r->pos >= r->size) return 0;
  const std::uint64_t want = std::min<std::uint64_t>(static_cast<std::uint64_t>(n), r->size - r->pos);
  if (r->fd < 0) {
    std::memcpy(out, r->memory.data() + r->pos, static_cast<std::size_t>(want));
    r->pos += want;
    return static_cast<tmsize_t>(want);
  }
  std::uint64_t done = 0;
  while (done < want) {
    const ssize_t got = ::pread(r->fd, static_cast<char*>(out) + done, static_cast<std::size_t>(want - done),
                                static_cast<off_t>(r->offset + r->pos + done));
    if (got < 0 && errno == EINTR) continue;
    if (got < 0 && r->read_errno == 0) r->read_errno = errno;
    if (got <= 0) break;  // a file cut short while read: libtiff reports the short read
    done += static_cast<std::uint64_t>(got);
  }
  r->pos += done;
  return static_cast<tmsize_t>(done);
}

tmsize_t no_write(thandle_t, void*, tmsize_t) { return 0; }

// A seek past the end is allowed (reads there return nothing); before the start is not.
toff_t seek_to(std::uint64_t& pos, std::uint64_t size, toff_t off, int whence) {
  std::uint64_t base = whence == SEEK_SET ? 0 : whence == SEEK_CUR ? pos : size;
  if (off > std::numeric_limits<std::uint64_t>::max() - base) return static_cast<toff_t>(-1);
  pos = base + off;
  return pos;
}

toff_t read_seek(thandle_t h, toff_t off, int whence) {
  auto* r = static_cast<ReadHandle*>(h);
  return seek_to(r->pos, r->size, off, whence);
}
toff_t read_size(thandle_t h) { return static_cast<ReadHandle*>(h)->size; }
int close_proc(thandle_t) { return 0; }
int no_map(thandle_t, void**, toff_t*) { return 0; }
void no_unmap(thandle_t, void*, toff_t) {}

// The first error libtiff reports for one file; warnings are dropped (they
// would go to stderr by default).
struct Messages {
  char error[256] = "";
};

int on_error(TIFF*, void* user_data, const char* module, const char* format, va_list args) {
  auto* m = static_cast<Messages*>(user_data);
  if (m->error[0] == '\0') {
    char text[200];
    std::vsnprintf(text, sizeof text, format, args);
    std::snprintf(m->error, sizeof m->error, "%s%s%s", module ? module : "", module ? ": " : "", text);
    // Some of libtiff's messages run over lines ("Tag InkNames:\n  Value 1 ..."): an error is one line.
    for (char& c : m->error)
      if (c != '\0' && static_cast<unsigned char>(c) < 0x20) c = ' ';
  }
  return 1;  // handled: libtiff prints nothing
}
int on_warning(TIFF*, void*, const char*, const char*, va_list) { return 1; }

// The options every open gets: our handlers and a cap on libtiff's single
// allocations (a tag that claims a billion entries).
struct OpenOptions {
  TIFFOpenOptions* opts = TIFFOpenOptionsAlloc();
  OpenOptions(Messages& messages, std::uint64_t max_alloc) {
    if (!opts) throw std::bad_alloc();
    TIFFOpenOptionsSetErrorHandlerExtR(opts, on_error, &messages);
    TIFFOpenOptionsSetWarningHandlerExtR(opts, on_warning, nullptr);
    const auto cap = std::min<std::uint64_t>(max_alloc, static_cast<std::uint64_t>(std::numeric_limits<tmsize_t>::max()));
    TIFFOpenOptionsSetMaxSingleMemAlloc(opts, static_cast<tmsize_t>(cap));
  }
  ~OpenOptions() { TIFFOpenOptionsFree(opts); }
  OpenOptions(const OpenOptions&) = delete;
  OpenOptions& operator=(const OpenOptions&) = delete;
};

struct Closer {
  TIFF* tif;
  ~Closer() {
    if (tif) TIFFClose(tif);
  }
};

// What the image needs at most in memory, and what a pipe may send: 16 bytes
// per pixel of the limit (16-bit RGBA stored uncompressed, twice) and the metadata.
std::uint64_t data_budget(std::uint64_t max_pixels) {
  return saturating_add(saturating_mul(max_pixels, 16), kMetadataBudget);
}

// A tile may be larger than the image (a 256 x 256 tile over a 10 x 10
// image), but not without bound: at most this many pixels, or the image's.
constexpr std::uint64_t kMaxTilePixels = std::uint64_t{1} << 24;

// A pipe or device, read whole into `data` within the budget, the buffer
// growing as the data arrives.
void read_all(ByteSource& source, const std::string& name, std::uint64_t budget, std::vector<std::uint8_t>& data) {
  source.set_budget(budget);
  // One byte of room past the budget: the budget, not the buffer, stops the reads.
  const std::size_t room = static_cast<std::size_t>(std::min<std::uint64_t>(budget, SIZE_MAX / 4)) + 1;
  std::size_t got = 0;
  while (true) {
    if (got == data.size() && !grow_pixels(data, got + 1, room))
      input_error(name, "cannot allocate " + std::to_string(std::min(room, data.size() * 2)) +
                            " bytes to hold the TIFF file (out of memory)",
                  "close other programs, or give the image as a file");
    got += source.read(data.data() + got, data.size() - got);
    if (got < data.size()) break;  // the data stopped: status() says why
  }
  if (source.status() == ByteSource::Status::read_error)
    input_error(name, "cannot read it (" + source.error_text() + ")", "check that it is a readable file");
  if (source.status() == ByteSource::Status::over_budget)
    input_error(name,
                "the TIFF data goes on past " + std::to_string(budget) +
                    " bytes, more than an image within the pixel limit and its metadata can need",
                "the file is damaged or not a real image; raise the limit with --max-pixels if it is real");
  data.resize(got);
}

[[noreturn]] void refuse(const std::string& name, const std::string& what) {
  input_error(name, "a TIFF image of " + what + " is not supported",
              "convert it to 8- or 16-bit gray or RGB (e.g. PNG or a plain TIFF)");
}

std::string tiff_failure(const Messages& m, const ReadHandle& r) {
  if (r.read_errno != 0) return std::string("cannot read it (") + std::strerror(r.read_errno) + ")";
  return std::string("not a valid TIFF image (libtiff: ") + (m.error[0] ? m.error : "unknown error") + ")";
}

// Copies `count` samples of `bytes_per_sample` from `from` to every `step`-th
// sample at `to` (a plane's samples into their interleaved places).
void scatter(const std::uint8_t* from, std::uint8_t* to, std::size_t count, std::size_t step,
             std::size_t bytes_per_sample) {
  if (step == 1) {
    std::memcpy(to, from, count * bytes_per_sample);
    return;
  }
  for (std::size_t i = 0; i < count; ++i)
    std::memcpy(to + i * step * bytes_per_sample, from + i * bytes_per_sample, bytes_per_sample);
}

}  // namespace

Image decode_tiff(ByteSource& source, const std::string& name, std::uint64_t max_pixels) {
  const std::uint64_t budget = data_budget(max_pixels);
  ReadHandle handle;
  std::vector<std::uint8_t> whole;  // a pipe's or device's data
  if (source.seekable_fd() >= 0) {
    handle.fd = source.seekable_fd();
    handle.offset = source.file_offset();
    handle.size = *source.size();
  } else {
    handle.memory = source.memory();
    if (handle.memory.empty()) {  // not a memory source: a pipe or a device
      read_all(source, name, budget, whole);
      handle.memory = whole;
    }
    handle.size = handle.memory.size();
  }
  Messages messages;
  OpenOptions options(messages, budget);
  // "r": read; "m": never memory-map (we read through the handle).
  TIFF* tif = TIFFClientOpenExt(name.c_str(), "rm", &handle, read_proc, no_write, read_seek, close_proc, read_size,
                                no_map, no_unmap, options.opts);
  if (!tif) input_error(name, tiff_failure(messages, handle), "the file is damaged or incomplete: re-create it");
  const Closer closer{tif};

  std::uint32_t width = 0, height = 0;
  if (!TIFFGetField(tif, TIFFTAG_IMAGEWIDTH, &width) || !TIFFGetField(tif, TIFFTAG_IMAGELENGTH, &height))
    input_error(name, "the TIFF directory has no image width or length", "the file is damaged: re-create it");
  if (width == 0 || height == 0)
    input_error(name, "the image is " + std::to_string(width) + " x " + std::to_string(height) + " pixels",
                "an image needs a width and a height of at least 1");
  check_pixel_limit(name, "TIFF", width, height, max_pixels);

  std::uint16_t samples = 1, bits = 1, planar = PLANARCONFIG_CONTIG, format = SAMPLEFORMAT_UINT, photometric = 0,
                compression = COMPRESSION_NONE;
  TIFFGetFieldDefaulted(tif, TIFFTAG_SAMPLESPERPIXEL, &samples);
  TIFFGetFieldDefaulted(tif, TIFFTAG_BITSPERSAMPLE, &bits);
  TIFFGetFieldDefaulted(tif, TIFFTAG_PLANARCONFIG, &planar);
  TIFFGetFieldDefaulted(tif, TIFFTAG_SAMPLEFORMAT, &format);
  TIFFGetFieldDefaulted(tif, TIFFTAG_COMPRESSION, &compression);
  if (!TIFFGetField(tif, TIFFTAG_PHOTOMETRIC, &photometric))
    input_error(name, "the TIFF directory has no photometric interpretation (gray or RGB?)",
                "the file is damaged: re-create it");
  std::uint32_t colors = 0;
  switch (photometric) {
    case PHOTOMETRIC_MINISBLACK:
    case PHOTOMETRIC_MINISWHITE: colors = 1; break;
    case PHOTOMETRIC_RGB: colors = 3; break;
    case PHOTOMETRIC_YCBCR:
      if (compression != COMPRESSION_JPEG) refuse(name, "YCbCr samples (not JPEG-compressed)");
      // libtiff's JPEG codec converts to RGB itself.
      TIFFSetField(tif, TIFFTAG_JPEGCOLORMODE, JPEGCOLORMODE_RGB);
      colors = 3;
      break;
    case PHOTOMETRIC_PALETTE: refuse(name, "palette colors");
    case PHOTOMETRIC_SEPARATED: refuse(name, "CMYK (separated) colors");
    default: refuse(name, "photometric interpretation " + std::to_string(photometric));
  }
  if (bits != 8 && bits != 16) refuse(name, std::to_string(bits) + "-bit samples");
  if (format != SAMPLEFORMAT_UINT && format != SAMPLEFORMAT_VOID)
    refuse(name, format == SAMPLEFORMAT_IEEEFP ? "floating-point samples" : "signed samples");
  if (samples != colors && samples != colors + 1)
    refuse(name, std::to_string(samples) + " samples per pixel (" + std::to_string(colors) + " color sample" +
                     (colors == 1 ? "" : "s") + " and at most one alpha are supported)");
  if (planar != PLANARCONFIG_CONTIG && planar != PLANARCONFIG_SEPARATE)
    input_error(name, "the TIFF planar configuration " + std::to_string(planar) + " is unknown",
                "the file is damaged: re-create it");

  const std::uint32_t channels = samples;
  const std::uint32_t depth = bits;
  const std::size_t total = image_bytes(width, height, channels, depth);
  if (total == 0)
    input_error(name, "a TIFF image of " + std::to_string(width) + " x " + std::to_string(height) +
                          " pixels is too large for memory", "the file is damaged or not a real image");
  const std::size_t sample_bytes = depth / 8;
  const std::size_t row_bytes = total / height;
  const bool separate = planar == PLANARCONFIG_SEPARATE && channels > 1;
  const std::uint16_t planes = separate ? static_cast<std::uint16_t>(channels) : 1;
  // A plane's samples per pixel in the data libtiff hands over.
  const std::size_t per_pixel = separate ? 1 : channels;

  Image img;
  img.width = width;
  img.height = height;
  img.channels = channels;
  img.bit_depth = depth;
  img.maxval = depth == 16 ? 65535 : 255;
  // The buffer grows with the rows decoded (png_io.cpp says why), in the first plane.
  auto rows_needed = [&](std::uint64_t rows) {
    if (!grow_pixels(img.bytes, static_cast<std::size_t>(rows) * row_bytes, total))
      allocation_error(name, width, height, total);
  };
  auto failed = [&](const char* what) {
    input_error(name, std::string("cannot decode the TIFF ") + what + ": " + tiff_failure(messages, handle),
                "the file is damaged or incomplete: re-create it");
  };

  std::vector<std::uint8_t> buffer;
  if (TIFFIsTiled(tif)) {
    std::uint32_t tile_w = 0, tile_h = 0;
    if (!TIFFGetField(tif, TIFFTAG_TILEWIDTH, &tile_w) || !TIFFGetField(tif, TIFFTAG_TILELENGTH, &tile_h) ||
        tile_w == 0 || tile_h == 0)
      input_error(name, "the TIFF tiles have no size", "the file is damaged: re-create it");
    const std::uint64_t tile_pixels = std::uint64_t{tile_w} * tile_h;
    const tmsize_t tile_size = TIFFTileSize(tif);
    if (tile_pixels > std::max<std::uint64_t>(kMaxTilePixels, std::uint64_t{width} * height) ||
        tile_size <= 0 || static_cast<std::uint64_t>(tile_size) != tile_pixels * per_pixel * sample_bytes)
      input_error(name, "the TIFF tiles of " + std::to_string(tile_w) + " x " + std::to_string(tile_h) +
                            " pixels do not fit the image", "the file is damaged or not a real image");
    buffer.resize(static_cast<std::size_t>(tile_size));
    for (std::uint16_t plane = 0; plane < planes; ++plane)
      for (std::uint32_t ty = 0; ty < height; ty += tile_h) {
        const std::uint32_t rows = std::min(tile_h, height - ty);
        if (plane == 0) rows_needed(std::uint64_t{ty} + rows);
        for (std::uint32_t tx = 0; tx < width; tx += tile_w) {
          if (TIFFReadTile(tif, buffer.data(), tx, ty, 0, plane) < 0) failed("tile");
          const std::uint32_t cols = std::min(tile_w, width - tx);
          for (std::uint32_t y = 0; y < rows; ++y) {
            const std::uint8_t* from = buffer.data() + std::size_t{y} * tile_w * per_pixel * sample_bytes;
            std::uint8_t* to = img.bytes.data() + (std::size_t{ty} + y) * row_bytes +
                               (std::size_t{tx} * channels + plane) * sample_bytes;
            scatter(from, to, std::size_t{cols} * per_pixel, separate ? channels : 1, sample_bytes);
          }
        }
      }
  } else {
    const tmsize_t line = TIFFScanlineSize(tif);
    if (line <= 0 || static_cast<std::uint64_t>(line) != std::uint64_t{width} * per_pixel * sample_bytes)
      input_error(name, "the TIFF rows are not " + std::to_string(width) + " pixels of " + std::to_string(per_pixel) +
                            " samples", "the file is damaged or not a real image");
    buffer.resize(static_cast<std::size_t>(line));
    for (std::uint16_t plane = 0; plane < planes; ++plane)
      for (std::uint32_t y = 0; y < height; ++y) {
        if (plane == 0) rows_needed(std::uint64_t{y} + 1);
        if (TIFFReadScanline(tif, buffer.data(), y, plane) < 0) failed("rows");
        scatter(buffer.data(), img.bytes.data() + std::size_t{y} * row_bytes + plane * sample_bytes,
                std::size_t{width} * per_pixel, separate ? channels : 1, sample_bytes);
      }
  }
  if (photometric == PHOTOMETRIC_MINISWHITE) {
    // 0 is white: as every other format stores gray, 0 is black.
    for (std::size_t i = 0; i < img.samples(); i += channels) store_sample(img, i, img.maxval - load_sample(img, i));
  }
  return img;
}

namespace {

// The file being written: a vector with a position, grown as libtiff writes.
struct WriteHandle {
  std::vector<std::uint8_t> data;
  std::uint64_t pos = 0;
  bool out_of_memory = false;
};

tmsize_t write_proc(thandle_t h, void* from, tmsize_t n) {
  auto* w = static_cast<WriteHandle*>(h);
  if (n <= 0) return 0;
  try {
    const std::uint64_t end = w->pos + static_cast<std::uint64_t>(n);
    if (end > w->data.size()) w->data.resize(static_cast<std::size_t>(end));
  } catch (...) {
    w->out_of_memory = true;
    return -1;
  }
  std::memcpy(w->data.data() + w->pos, from, static_cast<std::size_t>(n));
  w->pos += static_cast<std::uint64_t>(n);
  return n;
}
tmsize_t write_handle_read(thandle_t h, void* out, tmsize_t n) {
  auto* w = static_cast<WriteHandle*>(h);
  if (n <= 0 || w->pos >= w->data.size()) return 0;
  const std::uint64_t k = std::min<std::uint64_t>(static_cast<std::uint64_t>(n), w->data.size() - w->pos);
  std::memcpy(out, w->data.data() + w->pos, static_cast<std::size_t>(k));
  w->pos += k;
  return static_cast<tmsize_t>(k);
}
toff_t write_seek(thandle_t h, toff_t off, int whence) {
  auto* w = static_cast<WriteHandle*>(h);
  return seek_to(w->pos, w->data.size(), off, whence);
}
toff_t write_size(thandle_t h) { return static_cast<WriteHandle*>(h)->data.size(); }

}  // namespace

std::vector<std::uint8_t> encode_tiff(const Image& img) {
  Messages messages;
  OpenOptions options(messages, std::numeric_limits<std::uint64_t>::max());
  WriteHandle handle;
  // Classic TIFF addresses 4 GiB; larger images need BigTIFF ("8").
  const char* mode = img.bytes.size() > (std::uint64_t{1} << 31) ? "w8" : "w";
  TIFF* tif = TIFFClientOpenExt("output", mode, &handle, write_handle_read, write_proc, write_seek, close_proc,
                                write_size, no_map, no_unmap, options.opts);
  auto failed = [&] {
    if (handle.out_of_memory) throw std::bad_alloc();
    throw Error(ErrorKind::input,
                std::string("cannot encode the TIFF image (libtiff: ") +
                    (messages.error[0] ? messages.error : "unknown error") + ")",
                "check the free memory");
  };
  if (!tif) failed();
  {
    const Closer closer{tif};
    const bool color = img.channels >= 3;
    const std::uint16_t compression =
        TIFFIsCODECConfigured(COMPRESSION_ADOBE_DEFLATE) ? COMPRESSION_ADOBE_DEFLATE : COMPRESSION_NONE;
    bool ok = TIFFSetField(tif, TIFFTAG_IMAGEWIDTH, img.width) && TIFFSetField(tif, TIFFTAG_IMAGELENGTH, img.height) &&
              TIFFSetField(tif, TIFFTAG_BITSPERSAMPLE, static_cast<std::uint16_t>(img.bit_depth)) &&
              TIFFSetField(tif, TIFFTAG_SAMPLESPERPIXEL, static_cast<std::uint16_t>(img.channels)) &&
              TIFFSetField(tif, TIFFTAG_SAMPLEFORMAT, SAMPLEFORMAT_UINT) &&
              TIFFSetField(tif, TIFFTAG_PHOTOMETRIC, color ? PHOTOMETRIC_RGB : PHOTOMETRIC_MINISBLACK) &&
              TIFFSetField(tif, TIFFTAG_PLANARCONFIG, PLANARCONFIG_CONTIG) &&
              TIFFSetField(tif, TIFFTAG_ORIENTATION, ORIENTATION_TOPLEFT) &&
              TIFFSetField(tif, TIFFTAG_COMPRESSION, compression) &&
              TIFFSetField(tif, TIFFTAG_ROWSPERSTRIP, TIFFDefaultStripSize(tif, 0));
    if (ok && img.has_alpha()) {
      const std::uint16_t alpha[1] = {EXTRASAMPLE_UNASSALPHA};
      ok = TIFFSetField(tif, TIFFTAG_EXTRASAMPLES, std::uint16_t{1}, alpha);
    }
    if (!ok) failed();
    const std::size_t row_bytes = img.bytes.size() / img.height;
    // A copy per row: a codec may change the row it is given.
    std::vector<std::uint8_t> row(row_bytes);
    for (std::uint32_t y = 0; y < img.height; ++y) {
      std::memcpy(row.data(), img.bytes.data() + y * row_bytes, row_bytes);
      if (TIFFWriteScanline(tif, row.data(), y, 0) < 0) failed();
    }
    if (!TIFFWriteDirectory(tif)) failed();
  }
  if (handle.out_of_memory) throw std::bad_alloc();
  return std::move(handle.data);
}

}  // namespace levelhist::image::detail
#endif
