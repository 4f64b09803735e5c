# The GPU architectures the checker's own CUDA code (the runner) is built for. Included before
# project(), so that CMAKE_CUDA_ARCHITECTURES has its value when CUDA is enabled.
#
#   -DCMAKE_CUDA_ARCHITECTURES=...         used as given;
#   -DCUDALINGS_CUDA_ARCHITECTURES=native  (the ./cudalings wrapper) the GPU of this machine, asked
#                                          with the toolkit's own __nvcc_device_query (what
#                                          CMake >= 3.24 does for "native"); with no GPU, or one
#                                          this nvcc cannot target, the first architecture nvcc
#                                          lists: nothing CUDA runs here, the build only has to
#                                          work (`cudalings doctor` says why);
#   neither                                75;80;90, which builds on a machine without a GPU.
#
# Lesson files and reference solutions are not built here: the checker compiles them for the
# GPU that is present when they are checked (any architecture the installed nvcc supports).

set(CUDALINGS_DEFAULT_CUDA_ARCHITECTURES "75;80;90")

# nvcc as CMake will find it: CUDACXX, CMAKE_CUDA_COMPILER, PATH, then the usual install place.
function(_cudalings_find_nvcc out)
  if(CMAKE_CUDA_COMPILER)
    set(${out} "${CMAKE_CUDA_COMPILER}" PARENT_SCOPE)
  elseif(DEFINED ENV{CUDACXX} AND NOT "$ENV{CUDACXX}" STREQUAL "")
    set(${out} "$ENV{CUDACXX}" PARENT_SCOPE)
  else()
    find_program(_cudalings_nvcc nvcc PATHS /usr/local/cuda/bin NO_CACHE)
    set(${out} "${_cudalings_nvcc}" PARENT_SCOPE)
  endif()
endfunction()

# The architectures (as "90") of the GPUs present, and those this nvcc can build for.
function(_cudalings_native_architectures nvcc present_out supported_out)
  get_filename_component(bin "${nvcc}" DIRECTORY)
  set(present "")
  if(EXISTS "${bin}/__nvcc_device_query")
    execute_process(COMMAND "${bin}/__nvcc_device_query" OUTPUT_VARIABLE query
                    RESULT_VARIABLE code ERROR_QUIET OUTPUT_STRIP_TRAILING_WHITESPACE
                    TIMEOUT 30)
    if(code EQUAL 0 AND query MATCHES "^[0-9;]+$")
      set(present "${query}")
    endif()
  endif()
  execute_process(COMMAND "${nvcc}" --list-gpu-arch OUTPUT_VARIABLE listed ERROR_QUIET
                  RESULT_VARIABLE code TIMEOUT 30)
  set(supported "")
  if(code EQUAL 0)
    string(REGEX MATCHALL "compute_[0-9]+" archs "${listed}")
    foreach(a IN LISTS archs)
      string(REPLACE "compute_" "" a "${a}")
      list(APPEND supported "${a}")
    endforeach()
  endif()
  set(${present_out} "${present}" PARENT_SCOPE)
  set(${supported_out} "${supported}" PARENT_SCOPE)
endfunction()

if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
  if(CUDALINGS_CUDA_ARCHITECTURES STREQUAL "native")
    _cudalings_find_nvcc(nvcc)
    set(chosen "")
    if(nvcc)
      _cudalings_native_architectures("${nvcc}" present supported)
      list(REMOVE_DUPLICATES present)
      foreach(a IN LISTS present)
        if(a IN_LIST supported)
          list(APPEND chosen "${a}")
        else()
          message(WARNING "cudalings: this machine's GPU (sm_${a}) is not supported by ${nvcc} "
                          "(it builds for: ${supported}). The checker is built, but checks "
                          "cannot run on that GPU: run `./cudalings doctor`.")
        endif()
      endforeach()
      if(NOT chosen AND supported)
        list(GET supported 0 chosen)  # no usable GPU: one architecture, the cheapest build
      endif()
    endif()
    if(NOT chosen)
      set(chosen "${CUDALINGS_DEFAULT_CUDA_ARCHITECTURES}")
    endif()
    set(CMAKE_CUDA_ARCHITECTURES "${chosen}" CACHE STRING "GPU architectures to build for")
    message(STATUS "cudalings: CUDA code for ${chosen} (the GPU present: ${present})")
  else()
    set(CMAKE_CUDA_ARCHITECTURES "${CUDALINGS_DEFAULT_CUDA_ARCHITECTURES}"
        CACHE STRING "GPU architectures to build for")
  endif()
endif()
