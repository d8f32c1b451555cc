// Element-wise operators as named types, and `each`: one kernel per operator,
// one element per index, as NumPy and CuPy launch an expression's operators.
//
// Why named types and no KOKKOS_LAMBDA in these headers: a kernel template
// here is instantiated in several translation units of one binary (each
// experiment, its tests, its benchmarks). nvcc's extended __host__
// __device__ lambda keeps its copy function in a per-unit static; the linker
// kept one unit's parallel_for and another's caller, and the copy called a
// null pointer (a segfault on a GPU). A named functor
// has one definition everywhere. tests/no_header_lambdas.py keeps it so.
#pragma once

#include "host_math.hpp"
#include "range.hpp"

#include <Kokkos_Core.hpp>

#include <cstdint>

namespace portalab::kernels::op {

struct Copy {
  template <class T>
  KOKKOS_INLINE_FUNCTION T operator()(T a) const {
    return a;
  }
};
struct Add {
  template <class T>
  KOKKOS_INLINE_FUNCTION T operator()(T a, T b) const {
    return a + b;
  }
};
struct Subtract {
  template <class T>
  KOKKOS_INLINE_FUNCTION T operator()(T a, T b) const {
    return a - b;
  }
};
struct Multiply {
  template <class T>
  KOKKOS_INLINE_FUNCTION T operator()(T a, T b) const {
    return a * b;
  }
};
struct Divide {
  template <class T>
  KOKKOS_INLINE_FUNCTION T operator()(T a, T b) const {
    return a / b;
  }
};
struct Square {
  template <class T>
  KOKKOS_INLINE_FUNCTION T operator()(T a) const {
    return a * a;
  }
};
// Cos, Sin, Sqrt: a host block's loop (host_loop) takes whole vectors from
// libmvec where the build has it; GCC calls it only under -ffast-math.
struct Cos {
  template <class T>
  KOKKOS_INLINE_FUNCTION T operator()(T a) const {
    return Kokkos::cos(a);
  }
  template <class T>
  void host_loop(T* o, const T* const* p, std::int64_t m) const {
    host_apply<Fn::cos>(o, p[0], m);
  }
};
struct Sin {
  template <class T>
  KOKKOS_INLINE_FUNCTION T operator()(T a) const {
    return Kokkos::sin(a);
  }
  template <class T>
  void host_loop(T* o, const T* const* p, std::int64_t m) const {
    host_apply<Fn::sin>(o, p[0], m);
  }
};
struct Sqrt {
  template <class T>
  KOKKOS_INLINE_FUNCTION T operator()(T a) const {
    return Kokkos::sqrt(a);
  }
  template <class T>
  void host_loop(T* o, const T* const* p, std::int64_t m) const {
    host_apply<Fn::sqrt>(o, p[0], m);
  }
};
// a + s
template <class S>
struct AddScalar {
  S s;
  KOKKOS_INLINE_FUNCTION S operator()(S a) const { return a + s; }
};
// s·a
template <class S>
struct Scale {
  S s;
  KOKKOS_INLINE_FUNCTION S operator()(S a) const { return s * a; }
};
// a + s·b (STREAM's triad)
template <class S>
struct Triad {
  S s;
  KOKKOS_INLINE_FUNCTION S operator()(S a, S b) const { return a + s * b; }
};

}  // namespace portalab::kernels::op

namespace portalab::kernels {

template <class Op, class Out, class A>
struct EachUnary {
  Op op;
  Out out;
  A a;
  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t i) const { out(i) = op(a(i)); }
};
template <class Op, class Out, class A, class B>
struct EachBinary {
  Op op;
  Out out;
  A a;
  B b;
  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t i) const { out(i) = op(a(i), b(i)); }
};

// out(i) = op(a(i)) or op(a(i), b(i)) for every i of out, one index per
// thread on a GPU: a library's kernel for one operator (`map` is the tuned
// loop). On a host, contiguous views take the vectorised block loop, as
// NumPy's own loop for one operator is.
template <class Exec, class Op, class Out, class A>
void each(const char* label, const Exec& exec, Paths& paths, const Op& op, const Out& out,
          const A& a) {
  if (host_map<false>(label, exec, paths, op, out, a)) return;
  paths.took(Path::loops);
  Kokkos::parallel_for(label, Range<Exec>(exec, 0, out.extent(0)),
                       EachUnary<Op, Out, A>{op, out, a});
}
template <class Exec, class Op, class Out, class A, class B>
void each(const char* label, const Exec& exec, Paths& paths, const Op& op, const Out& out,
          const A& a, const B& b) {
  if (host_map<false>(label, exec, paths, op, out, a, b)) return;
  paths.took(Path::loops);
  Kokkos::parallel_for(label, Range<Exec>(exec, 0, out.extent(0)),
                       EachBinary<Op, Out, A, B>{op, out, a, b});
}

// m(i, j) = 1 on the diagonal, 0 elsewhere.
template <class M>
struct SetIdentity {
  using T = typename M::non_const_value_type;
  M m;
  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t i, std::int64_t j) const {
    m(i, j) = i == j ? T(1) : T(0);
  }
};

}  // namespace portalab::kernels
