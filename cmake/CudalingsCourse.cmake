# Course build rules: every lesson step exists twice, as the learner's skeleton and as the
# reference solution. Both are built here so that CI proves every file compiles.
#
#   skeletons  -> ${CMAKE_BINARY_DIR}/skeletons/<lesson>/<step>.so (compile proof only)
#   solutions  -> ${CMAKE_BINARY_DIR}/refs/<lesson>/<step>.so      (timed beside the learner)
#
# The checker builds the learner's own file with nvcc at check time; the prebuilt references
# are loaded from refs/ next to the checker binary.

set(CUDALINGS_REFS_DIR "${CMAKE_BINARY_DIR}/refs")

function(_cudalings_step_module target source lesson_dir out_dir)
  get_filename_component(step "${source}" NAME_WE)
  add_library(${target} MODULE "${source}")
  set_target_properties(${target} PROPERTIES
    PREFIX ""
    OUTPUT_NAME "${step}"
    LIBRARY_OUTPUT_DIRECTORY "${out_dir}"
    CUDA_RUNTIME_LIBRARY Shared)
  target_include_directories(${target} PRIVATE "${lesson_dir}"
                                               "${PROJECT_SOURCE_DIR}/lessons/common")
  target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:-lineinfo>)
endfunction()

# cudalings_lesson(<lesson dir name>): build every NN_*.cu step of a lesson, both sides.
function(cudalings_lesson lesson)
  set(lesson_dir "${PROJECT_SOURCE_DIR}/lessons/${lesson}")
  set(solution_dir "${PROJECT_SOURCE_DIR}/solutions/${lesson}")
  file(GLOB steps CONFIGURE_DEPENDS RELATIVE "${lesson_dir}" "${lesson_dir}/[0-9][0-9]_*.cu")
  list(SORT steps)
  foreach(step_file IN LISTS steps)
    get_filename_component(step "${step_file}" NAME_WE)
    string(REPLACE "-" "_" id "${lesson}_${step}")
    _cudalings_step_module(skeleton_${id} "${lesson_dir}/${step_file}" "${lesson_dir}"
                           "${CMAKE_BINARY_DIR}/skeletons/${lesson}")
    if(NOT EXISTS "${solution_dir}/${step_file}")
      message(FATAL_ERROR "lesson ${lesson}: step ${step_file} has no solution in solutions/")
    endif()
    _cudalings_step_module(ref_${id} "${solution_dir}/${step_file}" "${lesson_dir}"
                           "${CUDALINGS_REFS_DIR}/${lesson}")
    add_dependencies(cudalings_skeletons skeleton_${id})
    add_dependencies(cudalings_refs ref_${id})
  endforeach()
endfunction()
