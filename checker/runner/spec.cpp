#include "spec.h"

namespace runner {
namespace {

std::vector<Spec* (*)()>& registry() {
    static std::vector<Spec* (*)()> makers;
    return makers;
}

}  // namespace

bool register_spec(Spec* (*make)()) {
    registry().push_back(make);
    return true;
}

Spec* find_spec(const std::string& name) {
    for (auto make : registry()) {
        Spec* s = make();
        if (name == s->name()) return s;
    }
    return nullptr;
}

std::vector<std::string> spec_names() {
    std::vector<std::string> names;
    for (auto make : registry()) names.push_back(make()->name());
    return names;
}

}  // namespace runner
