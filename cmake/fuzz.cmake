# HALO_FUZZ: libFuzzer targets of the readers and of the command line
# (tests/fuzz/), with AddressSanitizer and UndefinedBehaviorSanitizer. The
# whole project is compiled for them: every C file gets the fuzzer's coverage
# and both sanitizers, so a fuzz build is a build of its own (.ci/fuzz.sh:
# build-fuzz, CC=clang). Targets: fuzz_mmio (Matrix Market), fuzz_hcsr
# (.hcsr), fuzz_params (parameter files), fuzz_cli (option parsing), fuzz_wisdom (the
# remembered choices' file), fuzz_env
# (the environment variables) and, with hypre, fuzz_amg (halo amg's input, to
# BoomerAMG); with BUILD_TESTING, a test each runs its seed corpus
# (tests/fuzz/corpus/NAME).
if(NOT HALO_FUZZ)
  return()
endif()
if(NOT CMAKE_C_COMPILER_ID MATCHES "Clang")
  message(FATAL_ERROR "HALO_FUZZ needs clang's libFuzzer: configure with CC=clang "
    "(Debian: apt-get install clang), not ${CMAKE_C_COMPILER_ID}")
endif()
if(HALO_SANITIZE)
  message(FATAL_ERROR "HALO_FUZZ builds with address and undefined already: leave HALO_SANITIZE empty")
endif()
set(halo_fuzz_flags -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined
    -fno-omit-frame-pointer)
add_compile_options("$<$<COMPILE_LANGUAGE:C>:${halo_fuzz_flags}>")
add_link_options(-fsanitize=address,undefined)

set(halo_fuzz_dir ${PROJECT_SOURCE_DIR}/tests/fuzz)
set(halo_fuzz_cli_sources driver.c report.c cmd_spmv.c cmd_simulate.c json.c devmem.c
    cmd_params.c cmd_convert.c progress.c memory.c)
list(TRANSFORM halo_fuzz_cli_sources PREPEND ${PROJECT_SOURCE_DIR}/tools/)
set(halo_fuzz_targets fuzz_mmio fuzz_hcsr fuzz_params fuzz_cli fuzz_env fuzz_wisdom)
if(HALO_HAVE_HYPRE) # the adapter is defined later in CMakeLists.txt
  list(APPEND halo_fuzz_targets fuzz_amg)
endif()
foreach(t ${halo_fuzz_targets})
  add_executable(${t} ${halo_fuzz_dir}/${t}.c)
  if(t STREQUAL "fuzz_amg") # the driver's amg on the shared library, as halo amg runs
    target_link_libraries(${t} PRIVATE halo_hypre ${HYPRE_LIBRARY} halo m)
  else()
    target_link_libraries(${t} PRIVATE halo_internal m)
  endif()
  target_link_options(${t} PRIVATE -fsanitize=fuzzer)
  target_compile_options(${t} PRIVATE ${halo_c_warnings})
  if(BUILD_TESTING) # each seed once (files, not the folder: nothing is added to it)
    file(GLOB seeds ${halo_fuzz_dir}/corpus/${t}/*)
    add_test(NAME ${t}_corpus COMMAND ${t} ${seeds})
    set_tests_properties(${t}_corpus PROPERTIES TIMEOUT 120
      ENVIRONMENT "OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1")
  endif()
endforeach()
target_sources(fuzz_cli PRIVATE ${halo_fuzz_cli_sources})
if(HALO_HAVE_HYPRE)
  set(halo_fuzz_amg_sources driver.c report.c json.c devmem.c progress.c memory.c cmd_amg.c
      amg_hypre.c amg_sim.c)
  list(TRANSFORM halo_fuzz_amg_sources PREPEND ${PROJECT_SOURCE_DIR}/tools/)
  target_sources(fuzz_amg PRIVATE ${halo_fuzz_amg_sources})
  target_compile_definitions(fuzz_amg PRIVATE HALO_TOOL_AMG=1)
  target_include_directories(fuzz_amg SYSTEM PRIVATE ${HYPRE_INCLUDE_DIR})
endif()
