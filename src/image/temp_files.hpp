// Internal: temporary files that a SIGINT, SIGTERM or SIGHUP must not leave
// behind (an interrupted `levelhist sort` would otherwise leave OUT.tmp-PID-N,
// as large as its output).
//
// A process-wide registry: a fixed array of paths that a signal handler can
// walk without allocating or locking. The first registration installs the
// handler for each of the three signals whose action is still the default (a
// program's own handler, or SIG_IGN as under nohup, is left alone). The handler
// unlinks every registered path and re-raises the signal with the default
// action, so the process still dies of it and its exit status says so.
#pragma once

namespace levelhist::detail {

// Registers `path` (before the file is created: a signal in between then
// unlinks a name that does not exist yet, which is harmless). Returns a ticket
// for unregister_temp_file, or -1 when the registry is full or the path longer
// than it holds; such a file is simply not removed on a signal.
int register_temp_file(const char* path);
// Forgets a ticket (after the file was renamed or unlinked); -1 is ignored.
void unregister_temp_file(int ticket);

}  // namespace levelhist::detail
