#pragma once
// The names of the all-reduce family's choices, as the command line
// (--algo, --proto, --method) and the report write them; NCCL's own
// spellings (NCCL_ALGO=Ring, NCCL_PROTO=LL128) are the runner's.
#include "formats/named_enum.hpp"
#include "kernels/allreduce/nccl_runner.hpp"

namespace ulpscope::allreduce {

inline constexpr NameTable<Algorithm, 2> kAlgorithmNames = {{{Algorithm::ring, "ring"}, {Algorithm::tree, "tree"}}};
inline constexpr NameTable<Protocol, 3> kProtocolNames = {
    {{Protocol::simple, "simple"}, {Protocol::ll, "ll"}, {Protocol::ll128, "ll128"}}};
inline constexpr NameTable<Method, 3> kMethodNames = {
    {{Method::plain, "plain"}, {Method::upcast, "upcast"}, {Method::exact, "exact"}}};

constexpr std::string_view to_string(Algorithm a) { return name_in(kAlgorithmNames, a); }
constexpr std::string_view to_string(Protocol p) { return name_in(kProtocolNames, p); }
constexpr std::string_view to_string(Method m) { return name_in(kMethodNames, m); }

}  // namespace ulpscope::allreduce
