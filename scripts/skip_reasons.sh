#!/usr/bin/env bash
# Why tests were skipped: ctest lists skipped tests without the message that
# GTEST_SKIP gave them. This reads the last ctest run of a build folder
# (Testing/Temporary/LastTest.log) and prints one line per distinct reason:
# how many tests skipped for it and one of them. Prints nothing when none did.
#   scripts/skip_reasons.sh [BUILD_DIR]   (default: build)
set -euo pipefail
log="${1:-build}/Testing/Temporary/LastTest.log"
[[ -f "$log" ]] || exit 0
awk '
  # A test starts: "12/345 Testing: Suite.Name".
  /^[0-9]+\/[0-9]+ Testing: / { name = substr($0, index($0, "Testing: ") + 9); reason = ""; grabbing = 0; next }
  # GoogleTest: "<file>:<line>: Skipped", then the message, then "[  SKIPPED ] Suite.Name".
  /: Skipped$/ { grabbing = 1; reason = ""; next }
  /^\[  SKIPPED \]/ { grabbing = 0; next }
  grabbing && NF { reason = reason (reason == "" ? "" : " ") $0; next }
  # ctest: the test counts as skipped.
  /^Skip regular expression found in output/ {
    if (reason == "") reason = "(no message)"
    if (!(reason in count)) first[reason] = name
    count[reason]++
  }
  END { for (r in count) printf "%d\t%s\t%s\n", count[r], r, first[r] }
' "$log" | sort -t"$(printf '\t')" -k1,1nr -k2,2 | awk -F'\t' '
  NR == 1 { print "Skipped tests, by reason:" }
  { printf "  %4d  %s  (%s%s)\n", $1, $2, $3, ($1 > 1 ? " and " ($1 - 1) " more" : "") }
'
