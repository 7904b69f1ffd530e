// check_gradients over a whole recorded program: the tape's gradients against central
// differences of the loss, component by component.
#include <cmath>

#include "gradcheck_run.hpp"
#include "kjit/runtime/tape.hpp"

namespace kjit {

GradCheckReport check_gradients(const std::function<void(Tape&)>& program, const NdArray& loss,
                                const std::vector<NdArray>& inputs, const GradCheckOptions& options) {
  const Device cpu = Device::cpu();
  for (size_t k = 0; k < inputs.size(); ++k) {
    const NdArray& a = inputs[k];
    std::string name = "check_gradients of a program: input " + std::to_string(k);
    if (!a.defined() || !detail::checkable(a.element()))
      throw Error(ErrorKind::User, name + " must be an array of float32 or float64 components");
    if (!a.has_grad()) throw Error(ErrorKind::User, name + " has no gradient buffer: call requires_grad() on it");
    if (!a.is_contiguous()) throw Error(ErrorKind::User, name + " is not contiguous");
  }
  auto loss_value = [&] {
    Tape scratch;  // what the program records on it never runs
    {
      auto on = scratch.record();
      program(scratch);
    }
    return detail::component(loss.to(cpu), 0, 0);
  };

  // The tape's gradients, from zero: the inputs' and every array's the program recorded.
  std::vector<NdArray> grads;
  {
    Tape tape;
    {
      auto on = tape.record();
      program(tape);
    }
    for (NdArray a : inputs) a.zero_grad();
    tape.zero();
    tape.backward(loss);
    for (const NdArray& a : inputs) grads.push_back(a.grad().to(cpu));
  }

  GradCheckReport report;
  std::mt19937_64 rng(options.seed);
  for (size_t k = 0; k < inputs.size(); ++k) {
    NdArray input = inputs[k];
    NdArray original = input.to(cpu), perturbed = input.to(cpu);
    const ir::Type element = input.element();
    GradCheckParam row;
    row.name = "input " + std::to_string(k);
    double worst_score = -1;
    // The input with component c of element e at x, where the program reads it; returns the
    // value it actually holds (float rounding).
    auto set = [&](int64_t e, int c, double x) {
      detail::set_component(perturbed, e, c, x);
      input.copy_from(perturbed);
      return detail::component(perturbed, e, c);
    };
    for (int64_t e : detail::sample_elements(input.size(), options.max_elements, rng)) {
      for (int c = 0; c < element.lanes(); ++c) {
        const double x0 = detail::component(original, e, c);
        auto central = [&](double h) {
          double hp = set(e, c, x0 + h) - x0;
          double plus = loss_value();
          double hm = x0 - set(e, c, x0 - h);
          double minus = loss_value();
          set(e, c, x0);
          return (plus - minus) / (hp + hm);
        };
        double h = detail::step_for(options, element, std::fabs(x0));
        double numeric = central(h);
        if (options.richardson) numeric = (4.0 * central(h / 2) - numeric) / 3.0;
        detail::compare(row, detail::component(grads[k], e, c), numeric, detail::rtol_for(options, element),
                        detail::atol_for(options, element), e, c, worst_score);
      }
    }
    input.copy_from(original);
    report.params.push_back(row);
  }
  loss_value();  // the program's outputs as they were for the unperturbed inputs
  return report;
}

}  // namespace kjit
