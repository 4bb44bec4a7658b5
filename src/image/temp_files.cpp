// levelhist: temporary files removed on SIGINT, SIGTERM and SIGHUP (temp_files.hpp).
#include "image/temp_files.hpp"

#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <mutex>

namespace levelhist::detail {
namespace {

// Enough for every temporary file levelhist has at once (one output, one
// spilled standard input) with room for a library user's threads.
constexpr int kSlots = 32;
constexpr std::size_t kPathBytes = 4096;  // PATH_MAX on Linux, the terminating NUL included

// A slot is free, being filled or emptied (the handler skips it), or live.
enum SlotState : int { kFree = 0, kBusy = 1, kLive = 2 };

struct Slot {
  std::atomic<int> state{kFree};
  char path[kPathBytes];
};
Slot g_slots[kSlots];
static_assert(std::atomic<int>::is_always_lock_free, "the signal handler reads the slots' states");

constexpr int kSignals[] = {SIGINT, SIGTERM, SIGHUP};

extern "C" void remove_temp_files_and_reraise(int signal_number) {
  const int saved_errno = errno;
  for (Slot& slot : g_slots)
    if (slot.state.load(std::memory_order_acquire) == kLive) ::unlink(slot.path);
  // SA_RESETHAND restored the default action; the signal stays blocked until
  // this handler returns, and is then delivered again: the process dies of it.
  ::raise(signal_number);
  errno = saved_errno;
}

void install_handlers() {
  for (int signal_number : kSignals) {
    struct sigaction current {};
    if (::sigaction(signal_number, nullptr, &current) != 0) continue;
    if ((current.sa_flags & SA_SIGINFO) || current.sa_handler != SIG_DFL) continue;  // someone else's choice
    struct sigaction action {};
    action.sa_handler = remove_temp_files_and_reraise;
    sigemptyset(&action.sa_mask);
    for (int other : kSignals) sigaddset(&action.sa_mask, other);  // one cleanup at a time
    action.sa_flags = SA_RESETHAND | SA_RESTART;
    ::sigaction(signal_number, &action, nullptr);
  }
}

}  // namespace

int register_temp_file(const char* path) {
  static std::once_flag installed;
  std::call_once(installed, install_handlers);
  const std::size_t length = std::strlen(path);
  if (length >= kPathBytes) return -1;
  for (int i = 0; i < kSlots; ++i) {
    int expected = kFree;
    if (!g_slots[i].state.compare_exchange_strong(expected, kBusy, std::memory_order_acquire)) continue;
    std::memcpy(g_slots[i].path, path, length + 1);
    g_slots[i].state.store(kLive, std::memory_order_release);
    return i;
  }
  return -1;
}

void unregister_temp_file(int ticket) {
  if (ticket < 0 || ticket >= kSlots) return;
  g_slots[ticket].state.store(kFree, std::memory_order_release);
}

}  // namespace levelhist::detail
