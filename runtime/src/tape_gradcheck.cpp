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
    NdArray perturbed = input.to(cpu);  // perturbed on the host, copied to the input; restored by the check
    const ir::Type element = input.element();
    GradCheckParam row;
    row.name = "input " + std::to_string(k);
    auto get = [&](int64_t e, int c) { return detail::component(perturbed, e, c); };
    auto set = [&](int64_t e, int c, double x) {
      detail::set_component(perturbed, e, c, x);
      input.copy_from(perturbed);
    };
    detail::check_components(row, options, element, detail::sample_elements(input.size(), options.max_elements, rng),
                             get, set, loss_value, [](double plus, double minus) { return plus - minus; },
                             [&](int64_t e, int c) { return detail::component(grads[k], e, c); });
    report.params.push_back(row);
  }
  loss_value();  // the program's outputs as they were for the unperturbed inputs
  return report;
}

}  // namespace kjit
