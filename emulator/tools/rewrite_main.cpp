// cudalings-emu-rewrite IN.cu OUT.cpp [--name PATH]: rewrites a CUDA file for the emulator.
// PATH (default: IN's absolute path) is the file name diagnostics will show.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

#include "rewrite.h"

int main(int argc, char** argv) {
    if (argc != 3 && !(argc == 5 && std::string(argv[3]) == "--name")) {
        std::cerr << "usage: cudalings-emu-rewrite IN.cu OUT.cpp [--name PATH]\n";
        return 2;
    }
    std::ifstream in(argv[1], std::ios::binary);
    if (!in) {
        std::cerr << "cudalings-emu-rewrite: cannot read " << argv[1] << "\n";
        return 1;
    }
    std::stringstream buf;
    buf << in.rdbuf();
    std::string name = argc == 5 ? argv[4] : std::filesystem::absolute(argv[1]).string();
    std::string out, error;
    if (!cudalings_emu_tools::rewrite(buf.str(), name, &out, &error)) {
        std::cerr << name << ": error: the emulator cannot rewrite this file: " << error << "\n";
        return 1;
    }
    std::error_code ec;
    auto parent = std::filesystem::path(argv[2]).parent_path();
    if (!parent.empty()) std::filesystem::create_directories(parent, ec);
    std::string tmp = std::string(argv[2]) + ".tmp";
    {
        std::ofstream o(tmp, std::ios::binary);
        o << out;
        if (!o) {
            std::cerr << "cudalings-emu-rewrite: cannot write " << tmp << "\n";
            return 1;
        }
    }
    std::filesystem::rename(tmp, argv[2]);
    return 0;
}
