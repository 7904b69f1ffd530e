// The adjoint (reverse-mode) body of a kernel: a forward replay without side effects,
// then a reverse sweep that propagates adjoints to the inputs. Dynamic loops are replayed
// from per-thread checkpoints (see docs/AUTODIFF.md).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "expr_emitter.hpp"
#include "kjit/codegen/codegen.hpp"
#include "lower.hpp"
#include "prelude.hpp"
#include "source_writer.hpp"

namespace kjit::codegen {

/// Writes the statements of the adjoint body of `lowered` (its jump-lowered form, spans and
/// loops) between the braces of its body function. Its loops are numbered from `first_loop` (each one's id + 1 is the status code it
/// reports when it passes its checkpoint bound: the module plan's numbering).
void emit_adjoint_body(SourceWriter& w, const LoweredFunction& lowered, const CodegenOptions& options,
                       int first_loop, const FunctionNames* functions = nullptr);

/// emit_adjoint_body for a kernel whose body function is not open yet: a long body's reverse
/// spans become functions of their own, named `span_prefix` + their number, written first;
/// then `open_body()` writes the body function's signature, and the body follows (calling
/// them). ptxas's time grew with the square of one long function (docs/BENCHMARKS.md,
/// compile time against kernel size); a span is short.
void emit_adjoint_kernel_body(SourceWriter& w, const LoweredFunction& lowered, const CodegenOptions& options,
                              int first_loop, const FunctionNames* functions,
                              const std::string& span_prefix, const std::function<void()>& open_body);

/// The reverse sweep's call `call` of an adjoint rule under strong-zero semantics (an exactly
/// zero incoming adjoint `adj_ret` contributes nothing, even through an inf or NaN partial;
/// docs/AUTODIFF.md). On CUDA without a branch: the rule runs into the accumulators it adds
/// to (`accumulators`), and those take back their earlier values unless
/// `adj_ret` has a nonzero component, the same bits as skipping the rule; one branch per
/// statement made NVVM's time grow with the square of the kernel (docs/BENCHMARKS.md). The
/// host skips the rule (the KJ_SZ_ macros of the prelude's core chunk): GCC's time grows
/// linearly with the branches, and running every rule made damp's adjoint 1.8x slower.
std::string strong_zero(const std::string& adj_ret, const std::vector<std::string>& accumulators, const std::string& call);

/// strong_zero's text before the rule (`open`) and after it (`close`), for a printer that
/// writes the rule on lines of its own.
struct StrongZeroText {
  std::string open, close;
};
StrongZeroText strong_zero_parts(const std::string& adj_ret, const std::vector<std::string>& accumulators);

/// Whether device function `f` has an adjoint: it takes a differentiable value or array, and
/// takes no gradient itself (ir::takes_gradient).
/// Its adjoint is `adj_<name>(dim, kj_index, args..., [ret,] adjoint of each differentiable
/// argument..., [adj_ret when the result is differentiable])`; the body of an automatic one
/// reads adj_ret as `kj_adj_ret`.
bool function_has_adjoint(const ir::Function& f);
/// Fails, saying what it met, for statement `s` of `fn` that no adjoint writer takes: the
/// tangent of a builtin or grad() of a function (adjoint_obstacle refuses them first), or a
/// statement the reverse transform makes (it is an adjoint already).
[[noreturn]] void adjoint_cannot_reverse(const ir::Function& fn, const ir::Stmt& s);
/// Whether the code generator writes device function `f`'s adjoint by reversing its body: it
/// has one (function_has_adjoint) and the user gave none (a custom adjoint is printed as written).
inline bool function_reversed(const ir::Function& f) { return function_has_adjoint(f) && !f.custom_adjoint; }

}  // namespace kjit::codegen
