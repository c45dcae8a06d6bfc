# Shared set-up of the compatibility interface packages (see README.md here).
#
# The interface wheels on PyPI export `<pkg>__rosidl_generator_py` targets whose include directories are
# those of the machine they were built on (/opt/python/...).  CMake refuses targets that name a missing
# path, so before generating we point them at this interpreter's Python and NumPy headers.
find_package(Python3 REQUIRED COMPONENTS Interpreter Development NumPy)

function(wmr_fix_python_include_dirs)
  foreach(dep ${ARGN})
    set(target "${dep}::${dep}__rosidl_generator_py")
    if(TARGET ${target})
      get_target_property(dirs ${target} INTERFACE_INCLUDE_DIRECTORIES)
      set(kept "")
      foreach(dir ${dirs})
        if(EXISTS "${dir}")
          list(APPEND kept "${dir}")
        endif()
      endforeach()
      list(APPEND kept ${Python3_INCLUDE_DIRS} ${Python3_NumPy_INCLUDE_DIRS})
      set_target_properties(${target} PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "${kept}")
    endif()
  endforeach()
endfunction()
