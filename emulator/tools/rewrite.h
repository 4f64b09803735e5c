// The emulator's source rewriter (see rewrite.cpp).
#pragma once

#include <string>

namespace cudalings_emu_tools {

// Rewrites CUDA source text for the emulator. `path` is named in the #line directive.
bool rewrite(const std::string& source, const std::string& path, std::string* out,
             std::string* error);

}  // namespace cudalings_emu_tools
