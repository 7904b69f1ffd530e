// Planning the spans of a long adjoint body (sweep_spans.hpp).
#include "sweep_spans.hpp"

#include <map>
#include <set>

namespace kjit::codegen {

namespace {

size_t count_statements(const ir::Stmt& top) {
  size_t n = 0;
  for_each_within(top, [&](const ir::Stmt&) { ++n; });
  return n;
}

}  // namespace

std::vector<SweepSpan> plan_sweep_spans(const ir::Block& body, int span_statements) {
  const size_t n = body.stmts.size();
  std::vector<size_t> sizes(n);
  size_t total = 0;
  for (size_t i = 0; i < n; ++i) total += sizes[i] = count_statements(body.stmts[i]);
  const size_t limit = span_statements > 0 ? size_t(span_statements) : 0;
  if (limit == 0 || total < 2 * limit) return {SweepSpan{0, n, {}, {}, {}}};

  std::vector<SweepSpan> spans;
  size_t begin = 0, size = 0;
  for (size_t i = 0; i < n; ++i) {
    size += sizes[i];
    // The last span takes the rest when it would be short: it is never run twice.
    if (size >= limit && total - size >= limit / 2) {
      spans.push_back(SweepSpan{begin, i + 1, {}, {}, {}});
      total -= size;
      begin = i + 1;
      size = 0;
    }
  }
  if (begin < n) spans.push_back(SweepSpan{begin, n, {}, {}, {}});

  std::map<ir::ValueId, size_t> defined_at;  // top-level results, parameters aside
  for (size_t i = 0; i < n; ++i)
    if (body.stmts[i].result != ir::kNoValue && body.stmts[i].op != ir::Op::Param) defined_at[body.stmts[i].result] = i;
  std::set<ir::ValueId> shared;  // used outside the span that defines them
  if (body.yield != ir::kNoValue) shared.insert(body.yield);
  std::vector<std::vector<ir::ValueId>> defined(spans.size());  // results and block arguments
  for (size_t j = 0; j < spans.size(); ++j) {
    SweepSpan& span = spans[j];
    std::set<int64_t> vars;
    std::set<ir::ValueId> used;
    for (size_t i = span.begin; i < span.end; ++i)
      for_each_within(body.stmts[i], [&](const ir::Stmt& s) {
        if (s.op == ir::Op::LoadVar) vars.insert(s.var());
        if (s.op != ir::Op::Param && s.result != ir::kNoValue) defined[j].push_back(s.result);
        used.insert(s.args.begin(), s.args.end());
        for (const ir::Block& r : s.regions) {
          defined[j].insert(defined[j].end(), r.args.begin(), r.args.end());
          if (r.yield != ir::kNoValue) used.insert(r.yield);
        }
      });
    span.vars_read.assign(vars.begin(), vars.end());
    for (ir::ValueId id : used) {
      auto d = defined_at.find(id);
      if (d != defined_at.end() && d->second < span.begin) span.inputs.push_back(id);
    }
    shared.insert(span.inputs.begin(), span.inputs.end());
  }
  for (size_t j = 0; j < spans.size(); ++j)
    for (ir::ValueId id : defined[j])
      if (!shared.count(id)) spans[j].locals.push_back(id);
  return spans;
}

}  // namespace kjit::codegen
