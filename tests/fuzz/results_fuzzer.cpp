// libFuzzer target for the check of a results file that `portalab db
// import` reads (results/results_check.hpp): results.json, or (an input
// whose first byte is 'J') the rest as its journal, results.jsonl.
// InputError is the expected answer to bad input, its message one line of
// bounded, quoted text; a document accepted must meet what the store relies
// on: rows there, each of the schema. Anything else aborts the run.
#include "deck/deck.hpp"
#include "fuzz_common.hpp"
#include "results/results_check.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace {

using namespace portalab;
using portalab::fuzz::broken;
using portalab::fuzz::check_message;

void check_accepted(const nlohmann::json& doc) {
  if (!doc.is_object() || !doc.contains("provenance") || !doc["provenance"].is_object())
    broken("accepted without a provenance object");
  const auto& rows = doc["results"];
  if (!rows.is_array() || rows.empty()) broken("accepted without rows");
  for (std::size_t i = 0; i < rows.size(); ++i)
    if (const auto p = first_problem(rows[i], "row", "results/" + std::to_string(i)))
      broken("accepted a row of the schema's problems", *p);
  if (const auto p = first_problem(doc["provenance"], "provenance", "provenance"))
    broken("accepted a provenance of the schema's problems", *p);
  for (const auto& r : rows) {
    const auto& reps = r["reps"];
    if (reps.is_number_unsigned() && reps.get<std::uint64_t>() > std::uint64_t{INT64_MAX})
      broken("accepted reps beyond a 64-bit integer");
    if (!r["experiment"].is_string() || !r["n"].is_number())
      broken("accepted a row without its key");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const bool journal = !input.empty() && input.front() == 'J';
  try {
    check_accepted(journal ? parse_journal(input.substr(1), "fuzz/results.jsonl")
                           : parse_results(input, "fuzz/results.json"));
  } catch (const InputError& e) {
    check_message(e.what());
  }
  return 0;
}
