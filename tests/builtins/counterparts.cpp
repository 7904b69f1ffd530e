// Warp's list of builtins (../shared/reference/warp-builtins.csv) against kjit's: every
// in-scope builtin has a counterpart (a builtin call or an intrinsic), with an adjoint where
// Warp has one; and docs/DSL.md's table names each with the same differentiability.
#include <doctest/doctest.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>

#include "kjit/ir/builtins.hpp"
#include "test_support.hpp"

namespace {

/// Warp's list: KJIT_WARP_BUILTINS_CSV, else ../shared/reference next to the source tree.
std::string csv_path() {
  if (const char* p = std::getenv("KJIT_WARP_BUILTINS_CSV")) return p;
  for (std::string dir : {std::string(KJIT_SOURCE_DIR) + "/../shared", std::string(KJIT_SOURCE_DIR) + "/shared",
                          std::string("/work/shared")}) {
    std::string p = dir + "/reference/warp-builtins.csv";
    if (kjit::test::exists(p)) return p;
  }
  return "";
}

struct WarpRow {
  std::string category, name, differentiable, in_scope;
};

std::vector<WarpRow> read_csv(const std::string& path) {
  std::vector<WarpRow> rows;
  std::ifstream f(path);
  std::string line;
  bool header = false;
  while (std::getline(f, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string> cells;
    std::stringstream ss(line);
    for (std::string cell; std::getline(ss, cell, ',');) cells.push_back(cell);
    if (!header) {  // category,name,warp_differentiable,in_scope
      header = true;
      continue;
    }
    if (cells.size() >= 4) rows.push_back({cells[0], cells[1], cells[2], cells[3]});
  }
  return rows;
}

}  // namespace

TEST_CASE("every in-scope Warp builtin has a kjit counterpart, with an adjoint where Warp has one") {
  const std::string path = csv_path();
  if (path.empty()) {
    MESSAGE("SKIPPED LOUDLY: warp-builtins.csv not found (set KJIT_WARP_BUILTINS_CSV, or place it in "
            "../shared/reference next to the source tree); the builtin coverage was NOT checked");
    return;
  }
  std::vector<WarpRow> rows = read_csv(path);
  REQUIRE(rows.size() > 250);
  int in_scope = 0;
  for (const WarpRow& r : rows) {
    if (r.in_scope != "yes") continue;
    ++in_scope;
    INFO("Warp builtin " << r.name << " (" << r.category << ")");
    auto c = kjit::ir::find_counterpart(r.name);
    CHECK_MESSAGE(c.has_value(), "no kjit counterpart for in-scope Warp builtin " << r.name);
    if (!c) continue;
    if (r.differentiable == "yes" || r.differentiable == "partly")
      CHECK_MESSAGE(c->differentiable, "Warp differentiates " << r.name << " but kjit has no adjoint for it");
  }
  CHECK(in_scope == 173);
}

TEST_CASE("docs/DSL.md has one table row per builtin and intrinsic, with the registry's differentiability") {
  const std::string doc = kjit::test::read_file(std::string(KJIT_SOURCE_DIR) + "/docs/DSL.md");
  REQUIRE(!doc.empty());
  // Each table row: | `warp name` | kjit spelling | differentiable | tested in |
  std::map<std::string, std::string> rows;  // warp name -> the differentiable column
  std::stringstream ss(doc);
  for (std::string line; std::getline(ss, line);) {
    if (line.rfind("| `", 0) != 0) continue;
    std::vector<std::string> cells;  // split on unescaped '|'
    for (size_t p = 1; p < line.size();) {
      size_t q = p;
      while (q < line.size() && !(line[q] == '|' && line[q - 1] != '\\')) ++q;
      cells.push_back(line.substr(p, q - p));
      p = q + 1;
    }
    REQUIRE(cells.size() >= 4);
    std::string name = cells[0].substr(cells[0].find('`') + 1);
    name = name.substr(0, name.find('`'));
    std::string diff = cells[2];
    diff.erase(0, diff.find_first_not_of(' '));
    diff.erase(diff.find_last_not_of(' ') + 1);
    CHECK_MESSAGE(!rows.count(name), "docs/DSL.md lists " << name << " twice");
    rows[name] = diff;
  }
  for (const kjit::ir::Counterpart& c : kjit::ir::all_counterparts()) {
    INFO("builtin " << c.warp_name);
    REQUIRE_MESSAGE(rows.count(c.warp_name), "docs/DSL.md has no row for " << c.warp_name);
    CHECK(rows[c.warp_name] == (c.differentiable ? "yes" : "no"));
  }
  CHECK(rows.size() == kjit::ir::all_counterparts().size());
}
