// JPEG through libjpeg (libjpeg-turbo's libjpeg API): every baseline or
// progressive 8-bit JPEG reads as 8-bit gray (one component) or RGB (three:
// YCbCr converted by libjpeg, or Adobe RGB as it is); CMYK and YCCK are
// refused. Writing takes 8-bit gray or RGB at quality 95 without chroma
// subsampling (JPEG is lossy: the other formats keep every sample).
//
// Reading is strict, as `djpeg -strict`: a warning about damaged data (a
// premature end of a data segment, a bad Huffman code, extraneous bytes) is an
// error, not a partly gray picture; only harmless header notes (an unknown
// JFIF revision, a malformed ICC profile chunk, an Adobe transform) pass. A
// progressive file of more than 500 scans is refused, as libjpeg-turbo's
// TJFLAG_LIMITSCANS does: each scan walks the whole image, so a small file of
// many tiny scans would otherwise cost minutes.
//
// libjpeg reports errors through error_exit, which must not return: it
// longjmps to the setjmp of the function running the session (run_read /
// run_write), whose frame holds only trivially destructible locals, as
// png_io.cpp does for libpng; the callers turn the failure into
// levelhist::Error. No C++ exception crosses libjpeg's C frames.
#include <csetjmp>
#include <cstdio>
#include <cstring>
#include <new>

#include "image/image_codecs.hpp"

namespace levelhist::image::detail {

bool looks_like_jpeg(std::span<const std::uint8_t> file) {
  // SOI, then the first marker's 0xFF.
  return file.size() >= 3 && file[0] == 0xff && file[1] == 0xd8 && file[2] == 0xff;
}

}  // namespace levelhist::image::detail

#if LEVELHIST_HAVE_JPEG
// jpeglib.h needs size_t and FILE declared before it.
#include <jerror.h>
#include <jpeglib.h>

namespace levelhist::image::detail {
namespace {

// The most scans a progressive file may have (libjpeg-turbo's TJFLAG_LIMITSCANS).
constexpr int kMaxScans = 500;
// The bytes the source manager asks the ByteSource for at a time.
constexpr std::size_t kChunk = std::size_t{1} << 16;

// Why a session stopped, for the caller's message.
enum class Stop { none, libjpeg_error, data_ended, too_many_scans };

// The error manager: libjpeg's, then what the caller needs after the jump.
struct ErrorState {
  jpeg_error_mgr pub;  // first: libjpeg casts cinfo->err to this
  std::jmp_buf jump;
  Stop stop = Stop::none;
  char text[JMSG_LENGTH_MAX] = "";
};

[[noreturn]] void on_error(j_common_ptr cinfo) {
  auto* e = reinterpret_cast<ErrorState*>(cinfo->err);
  if (e->stop == Stop::none) {
    e->stop = Stop::libjpeg_error;
    (*cinfo->err->format_message)(cinfo, e->text);
    // A message is one line, whatever a marker's text put into it.
    for (char& c : e->text)
      if (c != '\0' && static_cast<unsigned char>(c) < 0x20) c = ' ';
  }
  std::longjmp(e->jump, 1);
}

// Level -1 is a warning (damaged data, see the file comment); higher levels are traces.
void on_message(j_common_ptr cinfo, int level) {
  if (level >= 0) return;
  const int code = cinfo->err->msg_code;
  if (code == JWRN_JFIF_MAJOR || code == JWRN_ADOBE_XFORM || code == JWRN_BOGUS_ICC) return;
  on_error(cinfo);
}

// The source manager: libjpeg pulls the file from a ByteSource in chunks.
struct SourceState {
  jpeg_source_mgr pub;  // first: libjpeg casts cinfo->src to this
  ByteSource* source;
  JOCTET* buffer;  // kChunk bytes, owned by the caller
};

void init_source(j_decompress_ptr) {}

boolean fill_input_buffer(j_decompress_ptr cinfo) {
  auto* s = reinterpret_cast<SourceState*>(cinfo->src);
  const std::size_t got = s->source->read(s->buffer, kChunk);
  if (got == 0) {
    // libjpeg would insert a fake end of image and go on with a warning; the
    // data ended (or could not be read, or reached its budget): the caller says which.
    reinterpret_cast<ErrorState*>(cinfo->err)->stop = Stop::data_ended;
    on_error(reinterpret_cast<j_common_ptr>(cinfo));
  }
  s->pub.next_input_byte = s->buffer;
  s->pub.bytes_in_buffer = got;
  return TRUE;
}

void skip_input_data(j_decompress_ptr cinfo, long count) {
  auto* s = reinterpret_cast<SourceState*>(cinfo->src);
  if (count <= 0) return;
  auto left = static_cast<std::size_t>(count);
  while (left > s->pub.bytes_in_buffer) {
    left -= s->pub.bytes_in_buffer;
    fill_input_buffer(cinfo);
  }
  s->pub.next_input_byte += left;
  s->pub.bytes_in_buffer -= left;
}

void term_source(j_decompress_ptr) {}

// Counts scans as libjpeg reads them.
void on_progress(j_common_ptr cinfo) {
  if (!cinfo->is_decompressor) return;
  if (reinterpret_cast<j_decompress_ptr>(cinfo)->input_scan_number > kMaxScans) {
    reinterpret_cast<ErrorState*>(cinfo->err)->stop = Stop::too_many_scans;
    on_error(cinfo);
  }
}

// Owns the decompressor (destroyed on every way out, after any jump).
struct Decompressor {
  jpeg_decompress_struct cinfo{};
  ErrorState errors;
  SourceState source_state{};
  jpeg_progress_mgr progress{};
  bool created = false;
  Decompressor() = default;
  Decompressor(const Decompressor&) = delete;
  Decompressor& operator=(const Decompressor&) = delete;
  ~Decompressor() {
    if (created) jpeg_destroy_decompress(&cinfo);
  }
};

struct ReadShape {
  std::uint32_t width = 0, height = 0, channels = 0;
  std::size_t bytes = 0;
};

enum class ReadStatus { ok, stopped, too_large, out_of_memory, unsupported_color };

// Only trivially destructible locals here (see the file comment); `bytes`
// and `buffer` belong to the caller.
ReadStatus run_read(Decompressor& d, ByteSource& source, std::uint64_t max_pixels, ReadShape& shape,
                    std::vector<std::uint8_t>& bytes, JOCTET* buffer) {
  jpeg_decompress_struct& cinfo = d.cinfo;
  cinfo.err = jpeg_std_error(&d.errors.pub);
  d.errors.pub.error_exit = on_error;
  d.errors.pub.emit_message = on_message;
  if (setjmp(d.errors.jump)) return ReadStatus::stopped;
  jpeg_create_decompress(&cinfo);
  d.created = true;
  d.source_state.source = &source;
  d.source_state.buffer = buffer;
  d.source_state.pub.init_source = init_source;
  d.source_state.pub.fill_input_buffer = fill_input_buffer;
  d.source_state.pub.skip_input_data = skip_input_data;
  d.source_state.pub.resync_to_restart = jpeg_resync_to_restart;
  d.source_state.pub.term_source = term_source;
  cinfo.src = &d.source_state.pub;
  d.progress.progress_monitor = on_progress;
  cinfo.progress = &d.progress;
  // The markers before the first scan (APPn: EXIF, ICC, ...) are skipped as they come, within this much.
  source.set_budget(kMetadataBudget);
  jpeg_read_header(&cinfo, TRUE);
  shape.width = cinfo.image_width;
  shape.height = cinfo.image_height;
  if (cinfo.num_components == 1) {
    cinfo.out_color_space = JCS_GRAYSCALE;
  } else if (cinfo.num_components == 3 && (cinfo.jpeg_color_space == JCS_YCbCr || cinfo.jpeg_color_space == JCS_RGB)) {
    cinfo.out_color_space = JCS_RGB;
  } else {
    shape.channels = static_cast<std::uint32_t>(cinfo.num_components);
    return ReadStatus::unsupported_color;
  }
  shape.channels = cinfo.num_components == 1 ? 1 : 3;
  shape.bytes = image_bytes(shape.width, shape.height, shape.channels, 8);
  // Before jpeg_start_decompress, which allocates the whole image's
  // coefficients for a progressive file.
  if (shape.bytes == 0 || std::uint64_t{shape.width} * shape.height > max_pixels) return ReadStatus::too_large;
  // Entropy-coded data is at most a few times the raw pixels even at quality
  // 100 and in many scans: four times them, and the metadata after, is all a
  // real file can hold.
  source.set_budget(saturating_add(source.taken(), saturating_add(saturating_mul(shape.bytes, 4), kMetadataBudget)));
  jpeg_start_decompress(&cinfo);
  const std::size_t row_bytes = shape.bytes / shape.height;
  // Row by row, the buffer growing as rows decode (png_io.cpp says why).
  while (cinfo.output_scanline < cinfo.output_height) {
    const std::size_t y = cinfo.output_scanline;
    if (!grow_pixels(bytes, (y + 1) * row_bytes, shape.bytes)) return ReadStatus::out_of_memory;
    JSAMPROW row = bytes.data() + y * row_bytes;
    jpeg_read_scanlines(&cinfo, &row, 1);
  }
  jpeg_finish_decompress(&cinfo);
  return ReadStatus::ok;
}

// The destination manager: compressed bytes appended to a vector.
struct DestinationState {
  jpeg_destination_mgr pub;  // first: libjpeg casts cinfo->dest to this
  std::vector<std::uint8_t>* out;
  JOCTET* buffer;  // kChunk bytes, owned by the caller
};

// Appends n bytes of the buffer; false when memory runs out.
bool append(DestinationState* d, std::size_t n) noexcept {
  try {
    d->out->insert(d->out->end(), d->buffer, d->buffer + n);
  } catch (const std::bad_alloc&) {
    return false;
  } catch (const std::length_error&) {
    return false;
  }
  return true;
}

void init_destination(j_compress_ptr cinfo) {
  auto* d = reinterpret_cast<DestinationState*>(cinfo->dest);
  d->pub.next_output_byte = d->buffer;
  d->pub.free_in_buffer = kChunk;
}

boolean empty_output_buffer(j_compress_ptr cinfo) {
  auto* d = reinterpret_cast<DestinationState*>(cinfo->dest);
  // Outside a catch block: the jump must not leave one.
  if (!append(d, kChunk)) ERREXIT1(cinfo, JERR_OUT_OF_MEMORY, 0);
  d->pub.next_output_byte = d->buffer;
  d->pub.free_in_buffer = kChunk;
  return TRUE;
}

void term_destination(j_compress_ptr cinfo) {
  auto* d = reinterpret_cast<DestinationState*>(cinfo->dest);
  if (!append(d, kChunk - d->pub.free_in_buffer)) ERREXIT1(cinfo, JERR_OUT_OF_MEMORY, 0);
}

struct Compressor {
  jpeg_compress_struct cinfo{};
  ErrorState errors;
  DestinationState destination{};
  bool created = false;
  Compressor() = default;
  Compressor(const Compressor&) = delete;
  Compressor& operator=(const Compressor&) = delete;
  ~Compressor() {
    if (created) jpeg_destroy_compress(&cinfo);
  }
};

bool run_write(Compressor& c, const Image& img, std::vector<std::uint8_t>& out, JOCTET* buffer) {
  jpeg_compress_struct& cinfo = c.cinfo;
  cinfo.err = jpeg_std_error(&c.errors.pub);
  c.errors.pub.error_exit = on_error;
  c.errors.pub.emit_message = on_message;
  if (setjmp(c.errors.jump)) return false;
  jpeg_create_compress(&cinfo);
  c.created = true;
  c.destination.out = &out;
  c.destination.buffer = buffer;
  c.destination.pub.init_destination = init_destination;
  c.destination.pub.empty_output_buffer = empty_output_buffer;
  c.destination.pub.term_destination = term_destination;
  cinfo.dest = &c.destination.pub;
  cinfo.image_width = img.width;
  cinfo.image_height = img.height;
  cinfo.input_components = static_cast<int>(img.channels);
  cinfo.in_color_space = img.channels == 1 ? JCS_GRAYSCALE : JCS_RGB;
  jpeg_set_defaults(&cinfo);
  jpeg_set_quality(&cinfo, 95, TRUE);
  // No chroma subsampling (4:4:4): colors keep their full resolution.
  for (int i = 0; i < cinfo.num_components; ++i)
    cinfo.comp_info[i].h_samp_factor = cinfo.comp_info[i].v_samp_factor = 1;
  jpeg_start_compress(&cinfo, TRUE);
  const std::size_t row_bytes = img.bytes.size() / img.height;
  while (cinfo.next_scanline < cinfo.image_height) {
    // libjpeg takes non-const rows but only reads them.
    JSAMPROW row = const_cast<std::uint8_t*>(img.bytes.data()) + cinfo.next_scanline * row_bytes;
    jpeg_write_scanlines(&cinfo, &row, 1);
  }
  jpeg_finish_compress(&cinfo);
  return true;
}

}  // namespace

Image decode_jpeg(ByteSource& source, const std::string& name, std::uint64_t max_pixels) {
  std::vector<JOCTET> buffer(kChunk);
  Decompressor d;
  ReadShape shape;
  Image img;
  switch (run_read(d, source, max_pixels, shape, img.bytes, buffer.data())) {
    case ReadStatus::ok: break;
    case ReadStatus::stopped:
      if (source.status() == ByteSource::Status::read_error)
        input_error(name, "cannot read it (" + source.error_text() + ")", "check that it is a readable file");
      if (source.status() == ByteSource::Status::over_budget)
        input_error(name,
                    shape.bytes == 0 ? "the JPEG markers before the image go on past " +
                                           std::to_string(source.budget()) + " bytes"
                                     : "the JPEG data goes on past " + std::to_string(source.budget()) +
                                           " bytes, more than a " + std::to_string(shape.width) + " x " +
                                           std::to_string(shape.height) + " image and its metadata can need",
                    "the file is damaged or not a real image");
      if (d.errors.stop == Stop::data_ended)
        input_error(name, "the file ends in the middle of the JPEG image (truncated)",
                    "the file is incomplete: re-create it");
      if (d.errors.stop == Stop::too_many_scans)
        input_error(name, "the progressive JPEG has more than " + std::to_string(kMaxScans) + " scans",
                    "the file is damaged or made to be slow; re-encode it");
      input_error(name, std::string("not a valid JPEG image (libjpeg: ") + d.errors.text + ")",
                  "the file is damaged or incomplete: re-create it");
    case ReadStatus::too_large:
      check_pixel_limit(name, "JPEG", shape.width, shape.height, max_pixels);
      input_error(name, "a JPEG image of " + std::to_string(shape.width) + " x " + std::to_string(shape.height) +
                            " pixels is too large for memory", "the file is damaged or not a real image");
    case ReadStatus::out_of_memory:
      allocation_error(name, shape.width, shape.height, shape.bytes);
    case ReadStatus::unsupported_color:
      input_error(name, "a JPEG of " + std::to_string(shape.channels) + " color components (CMYK or YCCK) is not supported",
                  "convert it to RGB or gray");
  }
  img.width = shape.width;
  img.height = shape.height;
  img.channels = shape.channels;
  img.bit_depth = 8;
  img.maxval = 255;
  return img;
}

std::vector<std::uint8_t> encode_jpeg(const Image& img) {
  if (img.bit_depth != 8)
    throw Error(ErrorKind::usage, "JPEG holds 8-bit samples, and this image has 16-bit ones",
                "write a .png, .tif or .pgm/.ppm file");
  if (img.has_alpha())
    throw Error(ErrorKind::usage, "JPEG has no alpha channel, and this image has one", "write a .png or .tif file");
  std::vector<JOCTET> buffer(kChunk);
  std::vector<std::uint8_t> out;
  Compressor c;
  if (!run_write(c, img, out, buffer.data()))
    throw Error(ErrorKind::input, std::string("cannot encode the JPEG image (libjpeg: ") + c.errors.text + ")",
                "check the free memory");
  return out;
}

}  // namespace levelhist::image::detail
#endif
