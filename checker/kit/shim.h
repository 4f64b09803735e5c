// A lesson's call shims: what the learner's process needs to make a call the judge packed
// (remote_call.h), and nothing else of the checker. One line per entry point of the lesson's
// header, in a small source of its own built per lesson:
//
//     #include "shim.h"
//     #include "vector_add.cuh"
//     CUDALINGS_SHIM(vector_add);
//
// `decltype(&vector_add)` is all a shim takes from the header: the declaration, never a
// definition, so the shim links without the learner's object and finds the entry point by its
// symbol at call time.
#pragma once

#include <cuda_runtime.h>

#include <string>

#include "remote_call.h"

namespace kit::shim {

// Makes the call `m` on `fn` (the learner's entry point), with the learner's addresses.
using Caller = cudaError_t (*)(void* fn, const remote::CallMessage& m, const remote::Borrower& b);

// The shim registered for `symbol`, or null.
Caller find(const std::string& symbol);
bool add(const char* symbol, Caller caller);

template <typename Fn>
cudaError_t call(void* fn, const remote::CallMessage& m, const remote::Borrower& b) {
    return remote::Signature<Fn>::call(fn, m, b);
}

}  // namespace kit::shim

#define KIT_SHIM_CONCAT_INNER(a, b) a##b
#define KIT_SHIM_CONCAT(a, b) KIT_SHIM_CONCAT_INNER(a, b)
#define CUDALINGS_SHIM(symbol)                                                  \
    [[maybe_unused]] static const bool KIT_SHIM_CONCAT(kit_shim_, symbol) =     \
        ::kit::shim::add(#symbol, &::kit::shim::call<decltype(&symbol)>)
