// Errors raised while generating a kernel or device function name it and its lines.
#pragma once

#include <exception>
#include <string>

#include "kjit/error.hpp"
#include "source_writer.hpp"

namespace kjit::codegen {

/// Runs `emit`, the code generation of `what` ("kernel 'demo::damp'", defined at `loc`). A
/// failure inside becomes an error naming it, where it is defined and (with a writer) the
/// user line last generated, so that no failure reaches the user anonymous or as a bare
/// standard exception.
template <class Emit>
void generating(const std::string& what, const ir::SourceLoc& loc, const SourceWriter* w, Emit&& emit) {
  auto where = [&] {
    std::string text = what + " (" + loc.str() + "): code generation failed";
    if (w && w->last_user_loc().known()) text += " near " + w->last_user_loc().str();
    return text + ": ";
  };
  try {
    emit();
  } catch (const Error& e) {
    if (std::string(e.what()).rfind(what, 0) == 0) throw;  // already names it
    throw Error(e.kind(), where() + e.what());
  } catch (const std::exception& e) {
    throw Error(ErrorKind::Internal, where() + "internal error: " + e.what());
  }
}

}  // namespace kjit::codegen
