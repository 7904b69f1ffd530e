// Planning the spans of a long adjoint body (sweep_spans.hpp).
#include "sweep_spans.hpp"

#include <map>
#include <set>

namespace kjit::codegen {

namespace {

size_t count_statements(const ir::Stmt& s) {
  size_t n = 1;
  for (const ir::Block& r : s.regions) ir::for_each_stmt(r, [&](const ir::Stmt&) { ++n; });
  return n;
}

/// The variables statement `s` (and those inside it) reads, and every value it uses.
void collect_uses(const ir::Stmt& s, std::set<int64_t>& vars, std::set<ir::ValueId>& values) {
  auto one = [&](const ir::Stmt& t) {
    if (t.op == ir::Op::LoadVar) vars.insert(t.imm);
    values.insert(t.args.begin(), t.args.end());
    for (const ir::Block& r : t.regions)
      if (r.yield != ir::kNoValue) values.insert(r.yield);
  };
  one(s);
  for (const ir::Block& r : s.regions) ir::for_each_stmt(r, one);
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
  for (SweepSpan& span : spans) {
    std::set<int64_t> vars;
    std::set<ir::ValueId> values;
    for (size_t i = span.begin; i < span.end; ++i) collect_uses(body.stmts[i], vars, values);
    span.vars_read.assign(vars.begin(), vars.end());
    for (ir::ValueId id : values) {
      auto d = defined_at.find(id);
      if (d != defined_at.end() && d->second < span.begin) span.inputs.push_back(id);
    }
    shared.insert(span.inputs.begin(), span.inputs.end());
  }
  for (SweepSpan& span : spans) {
    auto local = [&](ir::ValueId id) {
      if (id != ir::kNoValue && !shared.count(id)) span.locals.push_back(id);
    };
    for (size_t i = span.begin; i < span.end; ++i) {
      const ir::Stmt& top = body.stmts[i];
      if (top.op != ir::Op::Param) local(top.result);
      for (const ir::Block& r : top.regions) {
        for (ir::ValueId a : r.args) local(a);
        ir::for_each_stmt(r, [&](const ir::Stmt& s) {
          local(s.result);
          for (const ir::Block& inner : s.regions)
            for (ir::ValueId a : inner.args) local(a);
        });
      }
    }
  }
  return spans;
}

}  // namespace kjit::codegen
