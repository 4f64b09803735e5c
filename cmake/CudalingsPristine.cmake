# The course's own lesson files, kept apart from the learner's edits.
#
# The learner edits lessons/ (step files, and sometimes a header they should not touch). Whatever
# they do, the reference solutions, the lesson checks and the test suite must see the course's
# files, not theirs. cmake/pristine-lessons.sha256 records the SHA-256 of every lesson file as
# the course ships it; at configure time each one is copied into ${CUDALINGS_PRISTINE_DIR}:
#
#   build/pristine/course.json -> the course's      build/pristine/lessons/NN_topic/...  copies
#   build/pristine/solutions   -> the course's      build/pristine/checks -> the course's (if any)
#
# so build/pristine is a course of its own whose lessons are the skeletons as shipped. A file
# whose working copy no longer matches its record is taken from git's history (any commit that
# had that content) when the course is a git clone; failing that the working copy is used and
# listed in build/pristine/unverified.txt (`cudalings doctor` reports it).
#
# The checker compiles references and checks against build/pristine/lessons (its headers come
# first on the include path; a learner's step still sees its own folder first, so an edit to a
# header can only affect that learner's steps). `cudalings reset` restores files from here.
#
# Maintainers: after changing a lesson file, `./cudalings dev update` (which runs
# CudalingsPristineRecord.cmake) or `cmake --build build --target cudalings_pristine_update`
# rewrites the record (the test `pristine_record_current` fails in CI while it is stale).

set(CUDALINGS_PRISTINE_RECORD "${PROJECT_SOURCE_DIR}/cmake/pristine-lessons.sha256")
set(CUDALINGS_PRISTINE_DIR "${CMAKE_BINARY_DIR}/pristine")

# Every lesson file the record covers: sources and headers (not the lesson texts).
function(cudalings_lesson_files out root)
  file(GLOB_RECURSE files RELATIVE "${root}/lessons"
       "${root}/lessons/*.cu" "${root}/lessons/*.cuh" "${root}/lessons/*.h" "${root}/lessons/*.hpp")
  list(SORT files)
  set(${out} "${files}" PARENT_SCOPE)
endfunction()

# Looks for a past version of lessons/<path> whose SHA-256 is <hash> in the course's git
# history and writes it to <dest>; <ok> says whether it was found.
function(_cudalings_pristine_from_git path hash dest ok)
  set(${ok} FALSE PARENT_SCOPE)
  find_package(Git QUIET)
  if(NOT GIT_EXECUTABLE OR NOT EXISTS "${PROJECT_SOURCE_DIR}/.git")
    return()
  endif()
  # Every blob this path has had, in any commit of any branch.
  execute_process(COMMAND "${GIT_EXECUTABLE}" log --all --format= --raw --no-abbrev --
                          "lessons/${path}"
                  WORKING_DIRECTORY "${PROJECT_SOURCE_DIR}" OUTPUT_VARIABLE raw
                  RESULT_VARIABLE code ERROR_QUIET)
  if(NOT code EQUAL 0)
    return()
  endif()
  # Lines ":100644 100644 <old blob> <new blob> M<tab>path": the 40-digit words.
  string(REGEX MATCHALL "[0-9a-f]+" words "${raw}")
  set(blobs "")
  foreach(word IN LISTS words)
    string(LENGTH "${word}" length)
    if(length EQUAL 40 AND NOT word MATCHES "^0+$")
      list(APPEND blobs "${word}")
    endif()
  endforeach()
  list(REMOVE_DUPLICATES blobs)
  set(candidate "${dest}.git")
  foreach(blob IN LISTS blobs)
    execute_process(COMMAND "${GIT_EXECUTABLE}" cat-file blob "${blob}"
                    WORKING_DIRECTORY "${PROJECT_SOURCE_DIR}" OUTPUT_FILE "${candidate}"
                    RESULT_VARIABLE code ERROR_QUIET)
    if(code EQUAL 0)
      file(SHA256 "${candidate}" got)
      if(got STREQUAL hash)
        file(RENAME "${candidate}" "${dest}")
        set(${ok} TRUE PARENT_SCOPE)
        return()
      endif()
    endif()
  endforeach()
  file(REMOVE "${candidate}")
endfunction()

# A symbolic link <link> -> <target>, replacing whatever is there.
function(_cudalings_link target link)
  if(IS_SYMLINK "${link}" OR EXISTS "${link}")
    file(REMOVE "${link}")
  endif()
  if(EXISTS "${target}")
    file(CREATE_LINK "${target}" "${link}" SYMBOLIC)
  endif()
endfunction()

function(cudalings_make_pristine)
  set(dir "${CUDALINGS_PRISTINE_DIR}")
  file(MAKE_DIRECTORY "${dir}/lessons")
  set(recorded "")
  set(unverified "")
  set(restored "")
  if(EXISTS "${CUDALINGS_PRISTINE_RECORD}")
    file(STRINGS "${CUDALINGS_PRISTINE_RECORD}" lines REGEX "^[0-9a-f]+  .+$")
    foreach(line IN LISTS lines)
      string(REGEX REPLACE "^([0-9a-f]+)  (.+)$" "\\1" hash "${line}")
      string(REGEX REPLACE "^([0-9a-f]+)  (.+)$" "\\2" path "${line}")
      list(APPEND recorded "${path}")
      set(src "${PROJECT_SOURCE_DIR}/lessons/${path}")
      set(dest "${dir}/lessons/${path}")
      get_filename_component(dest_dir "${dest}" DIRECTORY)
      file(MAKE_DIRECTORY "${dest_dir}")
      if(EXISTS "${dest}")
        file(SHA256 "${dest}" have)
        if(have STREQUAL hash)
          continue()  # kept from an earlier configure
        endif()
      endif()
      set(working "")
      if(EXISTS "${src}")
        file(SHA256 "${src}" working)
      endif()
      if(working STREQUAL hash)
        file(COPY_FILE "${src}" "${dest}")
        continue()
      endif()
      _cudalings_pristine_from_git("${path}" "${hash}" "${dest}" found)
      if(found)
        list(APPEND restored "${path}")
      elseif(EXISTS "${src}")
        file(COPY_FILE "${src}" "${dest}")
        list(APPEND unverified "${path}")
      else()
        list(APPEND unverified "${path} (missing)")
      endif()
    endforeach()
  endif()
  # Lesson files the record does not know yet (a lesson being written): their working copies.
  cudalings_lesson_files(files "${PROJECT_SOURCE_DIR}")
  set(unlisted "")
  foreach(path IN LISTS files)
    if(NOT path IN_LIST recorded)
      list(APPEND unlisted "${path}")
      set(dest "${dir}/lessons/${path}")
      get_filename_component(dest_dir "${dest}" DIRECTORY)
      file(MAKE_DIRECTORY "${dest_dir}")
      file(COPY_FILE "${PROJECT_SOURCE_DIR}/lessons/${path}" "${dest}")
    endif()
  endforeach()
  _cudalings_link("${PROJECT_SOURCE_DIR}/course.json" "${dir}/course.json")
  _cudalings_link("${PROJECT_SOURCE_DIR}/solutions" "${dir}/solutions")
  _cudalings_link("${PROJECT_SOURCE_DIR}/checks" "${dir}/checks")
  string(REPLACE ";" "\n" text "${unverified}")
  file(WRITE "${dir}/unverified.txt" "${text}")
  if(restored)
    string(REPLACE ";" ", " text "${restored}")
    message(STATUS "cudalings: the course's versions of your edited ${text} come from git")
  endif()
  if(unverified)
    string(REPLACE ";" ", " text "${unverified}")
    message(WARNING "cudalings: lessons/{${text}} differ from the course's version and no copy "
                    "of the course's version was found: the checker uses yours. "
                    "`./cudalings doctor` says more.")
  endif()
  if(unlisted)
    list(LENGTH unlisted count)
    message(STATUS "cudalings: ${count} lesson file(s) not in cmake/pristine-lessons.sha256 yet "
                   "(maintainers: cmake --build build --target cudalings_pristine_update)")
  endif()
endfunction()

if(CMAKE_SCRIPT_MODE_FILE)
  return()  # included by a test script for its functions
endif()
cudalings_make_pristine()
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${CUDALINGS_PRISTINE_RECORD}")

# Maintainers: record the current lesson files as the course's version.
add_custom_target(cudalings_pristine_update
  COMMAND "${CMAKE_COMMAND}" -DROOT=${PROJECT_SOURCE_DIR} -DRECORD=${CUDALINGS_PRISTINE_RECORD}
          -DMODE=write -P "${CMAKE_CURRENT_LIST_DIR}/CudalingsPristineRecord.cmake"
  COMMAND "${CMAKE_COMMAND}" "${CMAKE_BINARY_DIR}"  # take the new record into build/pristine
  COMMENT "Recording every lesson file as the course's version" VERBATIM)
