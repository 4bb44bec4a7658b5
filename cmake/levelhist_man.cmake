# Generates the man page levelhist.1 from the help texts, at build time:
#   cmake -DLEVELHIST=<the built CLI> -DHELP2MAN=<help2man> -DOUT=<levelhist.1> -P levelhist_man.cmake
# help2man (GNU) turns 'levelhist --help' and '--version' into the page; the
# include file made here adds every command's own help ('levelhist help
# COMMAND') as a COMMANDS section, the environment and where the full
# reference is. Nothing is written by hand twice: the help texts are the source.
cmake_minimum_required(VERSION 3.24)
foreach(var LEVELHIST HELP2MAN OUT)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "levelhist_man.cmake needs -D${var}=...")
  endif()
endforeach()

# Text as roff: backslashes as \e, hyphens as \- (so options copy as typed),
# and a line that starts with '.' or '\'' protected by \&.
function(levelhist_roff text out)
  string(REPLACE "\\" "\\e" text "${text}")
  string(REPLACE "-" "\\-" text "${text}")
  string(REGEX REPLACE "(^|\n)([.'])" "\\1\\\\&\\2" text "${text}")
  set(${out} "${text}" PARENT_SCOPE)
endfunction()

# The examples of 'levelhist --help', one command per line (help2man would
# fill them into one paragraph).
execute_process(COMMAND "${LEVELHIST}" --help OUTPUT_VARIABLE main_help RESULT_VARIABLE status)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "'${LEVELHIST} --help' failed (${status})")
endif()
string(FIND "${main_help}" "\nExamples:\n" at)
set(include "")
if(at GREATER -1)
  math(EXPR at "${at} + 11")
  string(SUBSTRING "${main_help}" ${at} -1 examples)
  levelhist_roff("${examples}" examples)
  set(include "[=EXAMPLES]\n.nf\n${examples}.fi\n\n")
endif()
string(APPEND include "[COMMANDS]\n")
foreach(command count text sort list image threshold equalize joint bench)
  execute_process(COMMAND "${LEVELHIST}" help ${command} OUTPUT_VARIABLE help RESULT_VARIABLE status)
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "'${LEVELHIST} help ${command}' failed (${status})")
  endif()
  levelhist_roff("${help}" help)
  string(APPEND include ".SS \"levelhist ${command}\"\n.nf\n${help}.fi\n")
endforeach()
string(APPEND include "
[ENVIRONMENT]
.TP
.B LEVELHIST_MAX_PIXELS
the largest image (width x height) the image commands read when \\-\\-max\\-pixels is not given (default 2^28)
.TP
.B TMPDIR
where \\fBcount \\-\\-range auto\\fR keeps a piped standard input for its second pass (default /tmp)
.TP
.B COLUMNS
the width of the tables' bars when standard output is not a terminal (default 80)
.TP
.B LEVELHIST_WINDOW_BYTES, LEVELHIST_CHUNK_BYTES, LEVELHIST_PROGRESS_BYTES, LEVELHIST_BYTE_COUNTER
testing knobs: the mapping window, the read chunk, the input size above which the progress bar shows, the CPU byte counter (see the reference)

[SEE ALSO]
The full reference, with every output format and error: docs/CLI.md in the levelhist sources.
")
get_filename_component(work "${OUT}" DIRECTORY)
file(WRITE "${work}/levelhist.h2m" "${include}")
execute_process(COMMAND "${HELP2MAN}" --no-info --section=1
                        "--name=fast, level histograms on CPUs and NVIDIA GPUs"
                        "--include=${work}/levelhist.h2m" "--output=${OUT}.tmp" "${LEVELHIST}"
                RESULT_VARIABLE status ERROR_VARIABLE errors)
if(NOT status EQUAL 0)
  file(REMOVE "${OUT}.tmp")
  message(FATAL_ERROR "help2man failed (${status}): ${errors}")
endif()
file(RENAME "${OUT}.tmp" "${OUT}")
