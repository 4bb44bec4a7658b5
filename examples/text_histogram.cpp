// The text histogram of Kirk & Hwu, PMPP ch. 9 (Figs. 9.1 and 9.2):
// letters a-z in groups of four, 7 bins (a-d, e-h, ..., y-z). Reads a file, or
// standard input when there is no argument or it is "-"; counts lowercase
// letters only, as the book does (Fig. 9.2), or also uppercase with --fold-case.
//
//   $ echo 'programming massively parallel processors' | ./example_text_histogram
//   a-d 5
//   e-h 5
//   ...
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include <levelhist/levelhist.hpp>
#include <levelhist/text.hpp>

int main(int argc, char** argv) {
  bool fold_case = false;
  const char* path = nullptr;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--fold-case") == 0) {
      fold_case = true;
    } else if (std::strcmp(argv[i], "-h") == 0 || std::strcmp(argv[i], "--help") == 0) {
      std::printf("usage: %s [--fold-case] [FILE|-]\n", argv[0]);
      return 0;
    } else if (!path) {
      path = argv[i];
    } else {
      std::fprintf(stderr, "%s: one file at most; usage: %s [--fold-case] [FILE|-]\n", argv[0], argv[0]);
      return 2;
    }
  }

  // A small example: read the whole text into memory (the levelhist CLI's
  // `text` command streams files of any size instead).
  FILE* in = stdin;
  if (path && std::strcmp(path, "-") != 0) in = std::fopen(path, "rb");
  if (!in) {
    std::fprintf(stderr, "%s: cannot open '%s': %s\n", argv[0], path, std::strerror(errno));
    return 1;
  }
  std::vector<char> text;
  char buf[1 << 16];
  std::size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, in)) > 0) text.insert(text.end(), buf, buf + n);
  bool failed = std::ferror(in);
  if (in != stdin) std::fclose(in);
  if (failed) {
    std::fprintf(stderr, "%s: read error\n", argv[0]);
    return 1;
  }

  try {
    // The letter histogram is an ordinary Binning over bytes (explicit edges
    // 'a', 'e', ..., 'y', 'z' + 1); bytes that are not letters land in
    // underflow/overflow, which text::other() adds up.
    levelhist::Histogram h = levelhist::text::letter_histogram(text.data(), text.size(), fold_case);
    for (std::uint64_t bin = 0; bin < levelhist::text::kLetterBins; ++bin)
      std::printf("%s %llu\n", std::string(levelhist::text::letter_bin_label(bin)).c_str(),
                  static_cast<unsigned long long>(h.count(bin)));
    std::printf("other %llu\n", static_cast<unsigned long long>(levelhist::text::other(h)));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: %s\n", argv[0], e.what());
    return 1;
  }
  return 0;
}
