// `levelhist text`: the letter histogram of Kirk & Hwu, PMPP chapter 9
// (Figs. 9.1 and 9.2) over files or standard input.
#include "cli.hpp"
#include "input.hpp"
#include "json.hpp"
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
    "  --format F        table (default), csv (bin,letters,count; a last row 'other')\n"
    "                    or json\n"
    "  --per-file        one histogram per FILE, each labelled\n"
    "  --no-progress     never show the progress bar (shown on a terminal for\n"
    "                    inputs over 256 MiB)\n"
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

Json counts_of(const Histogram& h) {
  Json counts = Json::array();
  for (std::uint64_t i = 0; i < h.bins(); ++i) counts.push_back(h.count(i));
  return counts;
}

void add_totals(Json& object, const Histogram& h) {
  object["letters"] = letters_of(h);
  object["other"] = text::other(h);
  object["total"] = h.total();
}

}  // namespace

int run_text(const std::vector<std::string>& args) {
  std::vector<OptionSpec> specs = run_option_specs();
  specs.insert(specs.end(), {{"--fold-case", false}, {"--per-file", false}, {"--no-progress", false}});
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
  Progress progress(inputs.known_bytes(), inputs.all_known(), !p.has("--no-progress"));

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
    // The 7 letter bins, then every other byte, so the rows add up to the total.
    auto rows = [&](const Histogram& h, const std::string& prefix) {
      for (std::uint64_t i = 0; i < text::kLetterBins; ++i)
        out += prefix + std::to_string(i) + "," + std::string(text::letter_bin_label(i)) + "," +
               std::to_string(h.count(i)) + "\n";
      out += prefix + "other,," + std::to_string(text::other(h)) + "\n";
    };
    if (!per_file_mode) rows(all, "");
    for (std::size_t f = 0; f < per_file.size(); ++f) rows(per_file[f], csv_field(inputs[f].arg) + ",");
  } else {
    Json doc = json_document("text");
    doc["fold_case"] = fold;
    Json files = Json::array();
    for (std::size_t f = 0; f < inputs.size(); ++f) files.push_back(inputs[f].arg);
    doc["files"] = std::move(files);
    doc["strategy"] = std::string(plan.strategy().name);
    doc["bins"] = text::kLetterBins;
    Json labels = Json::array();
    for (std::uint64_t i = 0; i < text::kLetterBins; ++i) labels.push_back(std::string(text::letter_bin_label(i)));
    doc["labels"] = std::move(labels);
    doc["counts"] = counts_of(all);
    add_totals(doc, all);
    if (per_file_mode) {
      Json list = Json::array();
      for (std::size_t f = 0; f < per_file.size(); ++f) {
        Json entry = Json::object();
        entry["file"] = inputs[f].arg;
        entry["counts"] = counts_of(per_file[f]);
        add_totals(entry, per_file[f]);
        list.push_back(std::move(entry));
      }
      doc["per_file"] = std::move(list);
    }
    out = json_text(doc);
  }
  write_stdout(out);
  return 0;
}

}  // namespace levelhist::cli
