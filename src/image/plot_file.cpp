// levelhist: writing a plot in the format its file name asks for (plot.hpp).
#include <string>

#include "image/file_names.hpp"
#include "levelhist/error.hpp"
#include "levelhist/image.hpp"
#include "levelhist/plot.hpp"

namespace levelhist::plot {
namespace {

template <class Drawing>
void write_drawing(const std::string& path, const Drawing& drawing) {
  switch (plot_format(path)) {
    case PlotFormat::svg:
      write_svg_file(path, render_svg(drawing));
      return;
    case PlotFormat::png:
      if (!image::png_supported())
        throw Error(ErrorKind::usage, "cannot draw " + path + ": PNG output needs libpng at build time",
                    "name an .svg file");
      image::write_image(path, render_image(drawing), image::FileFormat::png);
      return;
  }
}

}  // namespace

PlotFormat plot_format(const std::string& path) {
  std::string ext = detail::lower_extension(path);
  if (ext == ".svg") return PlotFormat::svg;
  if (ext == ".png") return PlotFormat::png;
  throw Error(ErrorKind::usage, "cannot tell the plot format of '" + path + "'", "name an .svg or .png file");
}

void write_plot(const std::string& path, const Chart& chart) { write_drawing(path, chart); }
void write_plot(const std::string& path, const Figure& figure) { write_drawing(path, figure); }

}  // namespace levelhist::plot
