// The thread count of the host BLAS and LAPACK, set from the execution-space
// instance that calls them and restored afterwards: a call from Serial runs on
// one thread, one from an OpenMP instance (or a partition of one) on that
// instance's threads. Without this, every host space called an OpenBLAS that
// used every core, and Serial's gemm ran as fast as OpenMP's.
//
// The library's controls are looked up at run time (dlsym), so whichever BLAS
// the process linked is handled without a build option: OpenBLAS, MKL, BLIS.
// Any other has no control portalab knows; its calls then run with the
// library's own count, and rows say that it is unknown.
#pragma once

#include <Kokkos_Core.hpp>

#include <dlfcn.h>

#include <algorithm>
#include <string>

namespace portalab::libraries {

// How this process's host BLAS counts its threads, found once.
class LibraryThreadControl {
 public:
  enum class Kind { none, openblas, mkl, blis };

  // What one set() replaced, for restore().
  struct Saved {
    int library = 0;
    int omp = 0;  // the calling thread's omp_get_max_threads(), where it matters
    bool changed = false;
  };

  static const LibraryThreadControl& instance() {
    static const LibraryThreadControl control;
    return control;
  }

  Kind kind() const { return m_kind; }
  // "OpenBLAS (OpenMP threading)", "MKL", ..., or why there is no control.
  std::string describe() const {
    switch (m_kind) {
      case Kind::openblas:
        return m_openblas_parallel == 0   ? "OpenBLAS (sequential build: always 1 thread)"
               : m_openblas_parallel == 2 ? "OpenBLAS (OpenMP threading)"
                                          : "OpenBLAS (pthreads threading)";
      case Kind::mkl: return "MKL";
      case Kind::blis: return "BLIS";
      case Kind::none: break;
    }
    return "no known thread control (not OpenBLAS, MKL or BLIS): the library's own count";
  }
  // True when set() changes what a call uses.
  bool settable() const {
    return m_kind == Kind::mkl || m_kind == Kind::blis ||
           (m_kind == Kind::openblas && m_openblas_parallel != 0);
  }

  // The threads a library call made now, from this thread, may use; 0 when
  // that cannot be known. OpenBLAS built with OpenMP decides per call
  // (num_cpu_avail in its common_thread.h): 1 inside an OpenMP parallel region
  // or when its own count is 1, else the calling thread's
  // omp_get_max_threads(), which it adopts as its count.
  int current() const {
    switch (m_kind) {
      case Kind::openblas:
        if (m_openblas_parallel == 0) return 1;
        if (openblas_follows_omp()) {
          if (m_openblas_get() == 1 || (m_omp_in_parallel && m_omp_in_parallel())) return 1;
          return m_omp_get_max_threads();
        }
        return m_openblas_get();
      case Kind::mkl: return m_mkl_get_max();
      case Kind::blis: return m_blis_get();
      case Kind::none: break;
    }
    return 0;
  }

  // Sets the count for calls from this thread; nothing when already so.
  Saved set(int threads) const {
    Saved saved;
    threads = std::max(threads, 1);
    switch (m_kind) {
      case Kind::openblas:
        if (m_openblas_parallel == 0) break;
        saved.library = m_openblas_get();
        if (openblas_follows_omp()) saved.omp = m_omp_get_max_threads();
        // An OpenMP build takes its count per call from the calling thread's
        // omp_get_max_threads() (some versions' openblas_set_num_threads sets
        // it, others not): both are set, and put back by restore().
        if (saved.library != threads || (openblas_follows_omp() && saved.omp != threads)) {
          m_openblas_set(threads);
          if (openblas_follows_omp()) m_omp_set_num_threads(threads);
          saved.changed = true;
        }
        break;
      case Kind::mkl:
        // Thread-local in MKL; returns the previous local setting (0: none).
        saved.library = m_mkl_set_local(threads);
        saved.changed = true;
        break;
      case Kind::blis:
        saved.library = m_blis_get();
        if (saved.library != threads) {
          m_blis_set(threads);
          saved.changed = true;
        }
        break;
      case Kind::none: break;
    }
    return saved;
  }

  void restore(const Saved& saved) const {
    if (!saved.changed) return;
    switch (m_kind) {
      case Kind::openblas:
        m_openblas_set(saved.library);
        if (openblas_follows_omp() && saved.omp > 0) m_omp_set_num_threads(saved.omp);
        break;
      case Kind::mkl: m_mkl_set_local(saved.library); break;
      case Kind::blis: m_blis_set(saved.library); break;
      case Kind::none: break;
    }
  }

 private:
  bool openblas_follows_omp() const {
    return m_openblas_parallel == 2 && m_omp_get_max_threads && m_omp_set_num_threads;
  }

  template <class F>
  static F find(const char* name) {
    return reinterpret_cast<F>(dlsym(RTLD_DEFAULT, name));
  }

  LibraryThreadControl() {
    m_openblas_get = find<int (*)()>("openblas_get_num_threads");
    m_openblas_set = find<void (*)(int)>("openblas_set_num_threads");
    auto openblas_parallel = find<int (*)()>("openblas_get_parallel");
    m_mkl_get_max = find<int (*)()>("mkl_get_max_threads");
    m_mkl_set_local = find<int (*)(int)>("mkl_set_num_threads_local");
    m_blis_get = find<long (*)()>("bli_thread_get_num_threads");
    m_blis_set = find<void (*)(long)>("bli_thread_set_num_threads");
    m_omp_get_max_threads = find<int (*)()>("omp_get_max_threads");
    m_omp_set_num_threads = find<void (*)(int)>("omp_set_num_threads");
    m_omp_in_parallel = find<int (*)()>("omp_in_parallel");
    if (m_openblas_get && m_openblas_set) {
      m_kind = Kind::openblas;
      m_openblas_parallel = openblas_parallel ? openblas_parallel() : 1;
    } else if (m_mkl_get_max && m_mkl_set_local) {
      m_kind = Kind::mkl;
    } else if (m_blis_get && m_blis_set) {
      m_kind = Kind::blis;
    }
  }

  Kind m_kind = Kind::none;
  int m_openblas_parallel = 0;  // openblas_get_parallel(): 0 none, 1 pthreads, 2 OpenMP
  int (*m_openblas_get)() = nullptr;
  void (*m_openblas_set)(int) = nullptr;
  int (*m_mkl_get_max)() = nullptr;
  int (*m_mkl_set_local)(int) = nullptr;
  long (*m_blis_get)() = nullptr;
  void (*m_blis_set)(long) = nullptr;
  int (*m_omp_get_max_threads)() = nullptr;
  void (*m_omp_set_num_threads)(int) = nullptr;
  int (*m_omp_in_parallel)() = nullptr;
};

// While it lives, host library calls made from this thread use exec's
// concurrency (Serial 1, an OpenMP instance or partition its threads); the
// library's previous setting is restored when it goes. On spaces whose memory
// is not the host's (Cuda, HIP) it does nothing: their libraries run on the
// device. The framework puts one around every variant it runs (and one per
// instance of a concurrent run), so that Kokkos Kernels' calls
// (KokkosBlas::gemm, KokkosLapack::gesv) follow the space too; portalab's own
// vendor calls hold one of their own, for callers outside the framework.
template <class Exec>
class LibraryThreads {
 public:
  explicit LibraryThreads(const Exec& exec) {
    if constexpr (on_host) {
      const auto& control = LibraryThreadControl::instance();
      m_saved = control.set(exec.concurrency());
    } else {
      (void)exec;
    }
  }
  ~LibraryThreads() {
    if constexpr (on_host) LibraryThreadControl::instance().restore(m_saved);
  }
  LibraryThreads(const LibraryThreads&) = delete;
  LibraryThreads& operator=(const LibraryThreads&) = delete;

 private:
  static constexpr bool on_host =
      Kokkos::SpaceAccessibility<Kokkos::HostSpace, typename Exec::memory_space>::accessible;
  LibraryThreadControl::Saved m_saved;
};

}  // namespace portalab::libraries
