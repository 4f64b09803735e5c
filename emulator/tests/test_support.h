// Helpers of the emulator's tests: load an emulated module, find its entry points, set options.
#pragma once

#include <dlfcn.h>

#include <catch2/catch_test_macros.hpp>

#include <string>

#include "cudalings_emu/emulator.h"

namespace emu_test {

inline void* open_module(const char* path) {
    void* h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    INFO((h ? "" : dlerror()));
    REQUIRE(h);
    return h;
}

template <typename F>
F entry(void* module, const std::string& name) {
    void* f = dlsym(module, name.c_str());
    INFO(name);
    REQUIRE(f);
    return reinterpret_cast<F>(f);
}

// Check (and explain) mode on or off, lockstep on, the schedule as the environment says;
// pending diagnostics dropped.
inline void use_options(bool check, bool explain) {
    cudalings_emu::Options o = cudalings_emu::get_options();
    o.check = check;
    o.explain = explain;
    o.lockstep = true;
    cudalings_emu::set_options(o);
    (void)cudalings_emu::take_diagnostics();
}

}  // namespace emu_test
