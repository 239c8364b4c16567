#pragma once
// Names of enumerations, kept as one table per enumeration so that a new op,
// accumulator or shape is a new row (parsing, printing and --help follow).
#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace ulpscope {

template <class E, std::size_t N>
using NameTable = std::array<std::pair<E, std::string_view>, N>;

template <class E, std::size_t N>
constexpr std::string_view name_in(const NameTable<E, N>& table, E value) {
  for (const auto& [e, name] : table)
    if (e == value) return name;
  return "?";
}

template <class E, std::size_t N>
constexpr std::optional<E> parse_in(const NameTable<E, N>& table, std::string_view name) {
  for (const auto& [e, n] : table)
    if (n == name) return e;
  return std::nullopt;
}

// "a, b, c": for messages that name the accepted values.
template <class E, std::size_t N>
std::string names_of(const NameTable<E, N>& table) {
  std::string out;
  for (const auto& [e, name] : table) {
    if (!out.empty()) out += ", ";
    out += name;
  }
  return out;
}

}  // namespace ulpscope
