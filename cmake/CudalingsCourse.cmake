# Course build rules (CUDALINGS_BUILD_COURSE): every lesson step exists twice, as the skeleton
# and as the reference solution, and both are compiled here so that CI proves every file builds.
#
#   skeletons  -> ${CMAKE_BINARY_DIR}/skeletons/<lesson>/<step>.so  from build/pristine (the course's
#                 skeletons, not the learner's working files: a learner's compile error does
#                 not break this build)
#   solutions  -> ${CMAKE_BINARY_DIR}/solutions/<lesson>/<step>.so  against the course's headers
#
# Neither is used by the checker: it compiles the learner's file, and the reference it is timed
# against, itself when a step is checked, for the GPU that is present, and caches both.

function(_cudalings_step_module target source lesson_dir out_dir)
  get_filename_component(step "${source}" NAME_WE)
  add_library(${target} MODULE "${source}")
  set_target_properties(${target} PROPERTIES
    PREFIX ""
    OUTPUT_NAME "${step}"
    LIBRARY_OUTPUT_DIRECTORY "${out_dir}"
    CUDA_RUNTIME_LIBRARY Shared)
  target_include_directories(${target} PRIVATE "${lesson_dir}"
                                               "${CUDALINGS_PRISTINE_DIR}/lessons/common")
  target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:-lineinfo>)
endfunction()

# cudalings_lesson(<lesson dir name>): build every NN_*.cu step of a lesson, both sides.
function(cudalings_lesson lesson)
  set(pristine_dir "${CUDALINGS_PRISTINE_DIR}/lessons/${lesson}")
  set(solution_dir "${PROJECT_SOURCE_DIR}/solutions/${lesson}")
  file(GLOB steps CONFIGURE_DEPENDS RELATIVE "${PROJECT_SOURCE_DIR}/lessons/${lesson}"
       "${PROJECT_SOURCE_DIR}/lessons/${lesson}/[0-9][0-9]_*.cu")
  list(SORT steps)
  foreach(step_file IN LISTS steps)
    get_filename_component(step "${step_file}" NAME_WE)
    string(REPLACE "-" "_" id "${lesson}_${step}")
    _cudalings_step_module(skeleton_${id} "${pristine_dir}/${step_file}" "${pristine_dir}"
                           "${CMAKE_BINARY_DIR}/skeletons/${lesson}")
    if(NOT EXISTS "${solution_dir}/${step_file}")
      message(FATAL_ERROR "lesson ${lesson}: step ${step_file} has no solution in solutions/")
    endif()
    _cudalings_step_module(solution_${id} "${solution_dir}/${step_file}" "${pristine_dir}"
                           "${CMAKE_BINARY_DIR}/solutions/${lesson}")
    add_dependencies(cudalings_skeletons skeleton_${id})
    add_dependencies(cudalings_solutions solution_${id})
  endforeach()
endfunction()
