# Editor support: build/compile_commands.json for the course's own files (lesson steps, headers'
# users, solutions), so that clangd (VS Code, vim, Emacs...) understands them: it finds the file
# in build/ by itself. The entries use clang's CUDA mode, which clangd speaks (nvcc's flags it
# does not). Written only when CMake is not exporting its own compile commands.

if(CMAKE_EXPORT_COMPILE_COMMANDS)
  return()
endif()

# The architecture clangd should assume: the first the runner is built for.
list(GET CMAKE_CUDA_ARCHITECTURES 0 _cudalings_editor_arch)
string(REGEX REPLACE "[^0-9].*$" "" _cudalings_editor_arch "${_cudalings_editor_arch}")
if(NOT _cudalings_editor_arch)
  set(_cudalings_editor_arch 75)
endif()

function(_cudalings_json_string out text)
  string(REPLACE "\\" "\\\\" text "${text}")
  string(REPLACE "\"" "\\\"" text "${text}")
  set(${out} "\"${text}\"" PARENT_SCOPE)
endfunction()

function(cudalings_write_compile_commands)
  set(root "${PROJECT_SOURCE_DIR}")
  file(GLOB sources "${root}/lessons/[0-9][0-9]_*/*.cu" "${root}/solutions/[0-9][0-9]_*/*.cu")
  list(SORT sources)
  set(entries "")
  foreach(source IN LISTS sources)
    get_filename_component(dir "${source}" DIRECTORY)
    get_filename_component(lesson "${dir}" NAME)
    set(args clang++ -x cuda "--cuda-path=${CUDAToolkit_LIBRARY_ROOT}"
             "--cuda-gpu-arch=sm_${_cudalings_editor_arch}" --no-cuda-version-check -std=c++17
             "-I${root}/lessons/${lesson}" "-I${root}/lessons/common" -c "${source}")
    set(quoted "")
    foreach(a IN LISTS args)
      _cudalings_json_string(q "${a}")
      list(APPEND quoted "${q}")
    endforeach()
    list(JOIN quoted ", " arguments)
    _cudalings_json_string(d "${dir}")
    _cudalings_json_string(f "${source}")
    list(APPEND entries "  {\"directory\": ${d}, \"file\": ${f},\n   \"arguments\": [${arguments}]}")
  endforeach()
  list(JOIN entries ",\n" body)
  file(WRITE "${CMAKE_BINARY_DIR}/compile_commands.json.tmp" "[\n${body}\n]\n")
  file(COPY_FILE "${CMAKE_BINARY_DIR}/compile_commands.json.tmp"
       "${CMAKE_BINARY_DIR}/compile_commands.json" ONLY_IF_DIFFERENT)
  file(REMOVE "${CMAKE_BINARY_DIR}/compile_commands.json.tmp")
endfunction()

cudalings_write_compile_commands()
