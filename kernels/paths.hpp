// The code paths of the kernels that have a choice, as data. The caller
// passes the choice (a HostPolicy, made from the run's calibration in
// limits/calibrate.cpp and held by the run state) with every call, and the
// kernels say which paths they took, for the result row's `path`
// (docs/result-files.md). No kernel keeps a setting of its own.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>

namespace portalab::kernels {

// A path a kernel took. Its name is the row's word for it.
enum class Path : unsigned {
  loops = 1u << 0,             // portalab's own loop, plain stores
  streaming_stores = 1u << 1,  // a host loop or copy with non-temporal stores
  libc_copy = 1u << 2,         // a host copy by the C library's memcpy
  dot_vectors = 1u << 3,       // the host's float64 dot in vector partial sums
  dot_chain = 1u << 4,         // the host's float64 dot in one chain of FMAs
};
inline constexpr Path all_paths[] = {Path::loops, Path::streaming_stores, Path::libc_copy,
                                     Path::dot_vectors, Path::dot_chain};

constexpr std::string_view path_name(Path p) {
  switch (p) {
    case Path::loops: return "loops";
    case Path::streaming_stores: return "streaming-stores";
    case Path::libc_copy: return "memcpy";
    case Path::dot_vectors: return "dot-vectors";
    case Path::dot_chain: return "dot-chain";
  }
  return "";
}

// Where a host space's kernels take their other path: the bytes of a call's
// arrays together from which they do; negative: never. Value-initialised,
// the plain paths everywhere (plain stores, memcpy, vector sums). One per
// host execution space: the thread count changes the answer. Device spaces'
// kernels have no choice and ignore it.
struct HostPolicy {
  std::int64_t streaming_from = -1;       // map, each, broadcast_add: streaming stores
  std::int64_t copy_streaming_from = -1;  // host copies: streaming stores, not memcpy
  std::int64_t dot_chain_from = -1;       // the float64 dot: one chain, not vector sums

  // Whether a call over `bytes` is at or beyond the threshold `from`.
  static constexpr bool reaches(std::int64_t from, std::int64_t bytes) {
    return from >= 0 && bytes >= from;
  }
  friend bool operator==(const HostPolicy&, const HostPolicy&) = default;
};

// What a kernel with a choice is handed: the policy, and a record of the
// paths its calls took (host instances may report from threads at once).
class Paths {
 public:
  explicit Paths(const HostPolicy& policy = {}) : m_policy(policy) {}
  Paths(const Paths&) = delete;
  Paths& operator=(const Paths&) = delete;

  const HostPolicy& policy() const { return m_policy; }
  void took(Path p) { m_taken.fetch_or(static_cast<unsigned>(p), std::memory_order_relaxed); }
  bool has(Path p) const { return (m_taken.load() & static_cast<unsigned>(p)) != 0; }
  // The paths taken, in the order of Path, joined by '+': "loops",
  // "loops+streaming-stores"; "" when none was reported.
  std::string names() const {
    std::string out;
    for (const Path p : all_paths)
      if (has(p)) {
        if (!out.empty()) out += '+';
        out += path_name(p);
      }
    return out;
  }
  void forget() { m_taken.store(0); }

 private:
  HostPolicy m_policy;
  std::atomic<unsigned> m_taken{0};
};

}  // namespace portalab::kernels
