// `levelhist text`: the letter histogram of Kirk & Hwu, PMPP chapter 9
// (Figs. 9.1 and 9.2) over files or standard input.
#include "cli.hpp"
#include "input.hpp"
#include "levelhist/text.hpp"

namespace levelhist::cli {

const char* const kTextHelp =
    "Usage: levelhist text [OPTION]... [FILE|-]...\n"
    "The text histogram of Programming Massively Parallel Processors, chapter 9: the\n"
    "letters a-z in groups of four, 7 bins a-d e-h i-l m-p q-t u-x y-z, of the bytes of\n"
    "the FILEs together (standard input when there is no FILE or a FILE is '-').\n"
    "As in the book (Fig. 9.2), only the lowercase ASCII letters count; every other\n"
    "byte (uppercase, digits, spaces, non-ASCII) is counted as 'other'.\n"
    "\n"
    "  --fold-case       count 'A'..'Z' as their lowercase letters\n"
    "  --format F        table (default), csv (bin,letters,count) or json\n"
    "  --per-file        one histogram per FILE, each labelled\n"
    "  --backend B       auto (default), cpu or cuda\n"
    "  --strategy NAME   a strategy from 'levelhist list', or auto (default)\n"
    "  --threads N       CPU worker threads; 0 (default) = all cores\n"
    "  -h, --help        show this help\n"
    "\n"
    "Example: echo 'programming massively parallel processors' | levelhist text\n";

namespace {

std::uint64_t letters_of(const Histogram& h) { return h.in_range(); }

std::string table_of(const Histogram& h, int width) {
  std::vector<TableRow> rows;
  for (std::uint64_t i = 0; i < text::kLetterBins; ++i) rows.push_back({std::string(text::letter_bin_label(i)), h.count(i)});
  return render_rows(rows, letters_of(h), width) +
         render_summary({{"letters", std::to_string(letters_of(h))},
                         {"other", std::to_string(text::other(h))},
                         {"total", std::to_string(h.total())}});
}

std::string json_counts(const Histogram& h) {
  std::string out = "[";
  for (std::uint64_t i = 0; i < h.bins(); ++i) out += (i ? ", " : "") + std::to_string(h.count(i));
  return out + "]";
}

std::string json_totals(const Histogram& h, const std::string& indent) {
  return indent + "\"letters\": " + std::to_string(letters_of(h)) + ",\n" + indent + "\"other\": " +
         std::to_string(text::other(h)) + ",\n" + indent + "\"total\": " + std::to_string(h.total());
}

}  // namespace

int run_text(const std::vector<std::string>& args) {
  std::vector<OptionSpec> specs = run_option_specs();
  specs.insert(specs.end(), {{"--fold-case", false}, {"--per-file", false}});
  ParsedArgs p = parse_args("text", args, specs);
  if (p.help) {
    write_stdout(kTextHelp);
    return 0;
  }
  RunOptions run = parse_run_options(p);
  const bool fold = p.has("--fold-case");
  const bool per_file_mode = p.has("--per-file");

  InputSet inputs(input_operands(p), 1, "u8");
  inputs.validate();
  const Binning bytes_binning = Binning::per_value(SampleType::u8);
  const Plan plan = make_plan(Request::counts(SampleType::u8, bytes_binning), run.library);
  Progress progress(inputs.known_bytes(), inputs.all_known());

  // Count bytes (256 bins) and fold them into letters afterwards: one pass,
  // any strategy, and --fold-case costs nothing.
  std::vector<Histogram> per_file;
  Histogram all_bytes(bytes_binning);
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    Histogram bytes(bytes_binning);
    inputs.scan(i, [&](const unsigned char* d, std::uint64_t n) {
      call_with_fix([&] { plan.fill(bytes, levelhist::Input::array(d, n)); });
    }, &progress);
    all_bytes += bytes;
    if (per_file_mode) per_file.push_back(text::letters_from_bytes(bytes, fold));
  }
  progress.finish();
  Histogram all = text::letters_from_bytes(all_bytes, fold);

  std::string out;
  if (run.format == Format::table) {
    int width = terminal_width();
    if (!per_file_mode) {
      out = table_of(all, width);
    } else {
      for (std::size_t f = 0; f < per_file.size(); ++f) {
        if (f) out += '\n';
        out += "==> " + (inputs[f].is_stdin ? std::string("standard input") : display_name(inputs[f].arg)) + " <==\n";
        out += table_of(per_file[f], width);
      }
    }
  } else if (run.format == Format::csv) {
    out = per_file_mode ? "file,bin,letters,count\n" : "bin,letters,count\n";
    auto rows = [&](const Histogram& h, const std::string& prefix) {
      for (std::uint64_t i = 0; i < text::kLetterBins; ++i)
        out += prefix + std::to_string(i) + "," + std::string(text::letter_bin_label(i)) + "," +
               std::to_string(h.count(i)) + "\n";
    };
    if (!per_file_mode) rows(all, "");
    for (std::size_t f = 0; f < per_file.size(); ++f) rows(per_file[f], csv_field(inputs[f].arg) + ",");
  } else {
    out = "{\n  \"command\": \"text\",\n";
    out += "  \"fold_case\": " + std::string(fold ? "true" : "false") + ",\n";
    out += "  \"files\": [";
    for (std::size_t f = 0; f < inputs.size(); ++f) out += (f ? ", " : "") + json_string(inputs[f].arg);
    out += "],\n";
    out += "  \"strategy\": " + json_string(std::string(plan.strategy().name)) + ",\n";
    out += "  \"bins\": " + std::to_string(text::kLetterBins) + ",\n";
    out += "  \"labels\": [";
    for (std::uint64_t i = 0; i < text::kLetterBins; ++i)
      out += (i ? ", " : "") + json_string(text::letter_bin_label(i));
    out += "],\n";
    out += "  \"counts\": " + json_counts(all) + ",\n";
    out += json_totals(all, "  ");
    if (per_file_mode) {
      out += ",\n  \"per_file\": [";
      for (std::size_t f = 0; f < per_file.size(); ++f) {
        out += f ? ",\n    {\n" : "\n    {\n";
        out += "      \"file\": " + json_string(inputs[f].arg) + ",\n";
        out += "      \"counts\": " + json_counts(per_file[f]) + ",\n";
        out += json_totals(per_file[f], "      ") + "\n    }";
      }
      out += "\n  ]";
    }
    out += "\n}\n";
  }
  write_stdout(out);
  return 0;
}

}  // namespace levelhist::cli
