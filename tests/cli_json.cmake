# The JSON contract of halo spmv: run it and read every documented field.
# halo spmv on 3 ranks with ARGN and --json OUT, which must succeed; its JSON into doc
macro(spmv_json)
  execute_process(
    COMMAND ${MPIEXEC} 3 ${MPIFLAGS} ${HALO} spmv ${ARGN} --iterations 4 --warmup 1 --quiet
            --json ${OUT}
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "halo spmv ${ARGN} failed (${rc}): ${out} ${err}")
  endif()
  file(READ ${OUT} doc)
endmacro()
spmv_json(--gen irregular:500,3 --partition nnz --check)
macro(get var)
  string(JSON ${var} ERROR_VARIABLE jerr GET "${doc}" ${ARGN})
  if(jerr)
    message(FATAL_ERROR "JSON field ${ARGN}: ${jerr}")
  endif()
endmacro()
get(ranks ranks)
if(NOT ranks EQUAL 3)
  message(FATAL_ERROR "ranks = ${ranks}")
endif()
string(JSON n_rb LENGTH "${doc}" row_begin)
if(NOT n_rb EQUAL 4)
  message(FATAL_ERROR "row_begin has ${n_rb} entries, expected 4")
endif()
get(rb0 row_begin 0)
get(rb3 row_begin 3)
get(rows matrix rows)
if(NOT rb0 EQUAL 0 OR NOT rb3 EQUAL rows OR NOT rows EQUAL 500)
  message(FATAL_ERROR "row_begin ${rb0}..${rb3}, rows ${rows}")
endif()
get(err check max_rel_error)
if(err GREATER 1e-12)
  message(FATAL_ERROR "max_rel_error ${err}")
endif()
get(name strategies 0 name)
if(NOT name STREQUAL "standard")
  message(FATAL_ERROR "strategy ${name}")
endif()
get(cap strategies 0 message_cap_used)
get(t strategies 0 spmv_s)
get(scope strategies 0 phases 0 scope)
if(NOT scope STREQUAL "global")
  message(FATAL_ERROR "scope ${scope}")
endif()
foreach(f messages bytes max_messages_per_rank max_bytes_per_rank inter_node_messages
          inter_node_bytes max_inter_node_messages_per_node max_inter_node_bytes_per_node)
  get(v strategies 0 phases 0 ${f})
  if(NOT v MATCHES "^[0-9]+$")
    message(FATAL_ERROR "${f} = ${v}")
  endif()
endforeach()
get(msgs strategies 0 phases 0 messages)
get(bytes strategies 0 phases 0 bytes)
get(ghosts strategies 0 ghosts)
math(EXPR want "8 * ${ghosts}")
if(NOT bytes EQUAL want OR msgs LESS 2)
  message(FATAL_ERROR "bytes ${bytes}, ghosts ${ghosts}, messages ${msgs}")
endif()

# --rounds: every plan timed in turn, R times over; each time the median of the rounds, the
# product's fastest and slowest round beside it
spmv_json(--gen lap3d27:12 --strategy standard,3step --ranks-per-node 2 --rounds 3)
get(rounds rounds)
if(NOT rounds EQUAL 3)
  message(FATAL_ERROR "rounds = ${rounds}")
endif()
string(JSON n_rows LENGTH "${doc}" strategies)
if(NOT n_rows EQUAL 2)
  message(FATAL_ERROR "${n_rows} plans, expected 2")
endif()
foreach(i 0 1)
  get(t strategies ${i} spmv_s)
  get(lo strategies ${i} spmv_s_fastest_round)
  get(hi strategies ${i} spmv_s_slowest_round)
  get(same strategies ${i} identical_to_standard)
  if(NOT lo GREATER 0 OR lo GREATER t OR t GREATER hi OR NOT same)
    message(FATAL_ERROR "plan ${i}: rounds ${lo} <= ${t} <= ${hi}, identical ${same}")
  endif()
endforeach()
execute_process(
  COMMAND ${MPIEXEC} 1 ${MPIFLAGS} ${HALO} spmv --gen lap2d:8 --rounds 0
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 2 OR NOT "${out}${err}" MATCHES "--rounds")
  message(FATAL_ERROR "--rounds 0: exit ${rc}, expected 2 and a message naming it: ${out} ${err}")
endif()

# Time to solution (issue 42), printed first and in the JSON: each plan's set-up (the matrix,
# what the first plan made for the later ones, the plan's own creation) + its timed SpMVs
# (iterations x spmv_s), to the JSON's 9 digits; the table's columns add up to its 4 digits.
# holds(EXPR WHAT): the awk expression EXPR is true
macro(holds expr what)
  execute_process(COMMAND awk "function abs(v) { return v < 0 ? -v : v } BEGIN { exit !(${expr}) }"
                  RESULT_VARIABLE holds_rc)
  if(NOT holds_rc EQUAL 0)
    message(FATAL_ERROR "${what}: ${expr} does not hold")
  endif()
endmacro()
execute_process(
  COMMAND ${MPIEXEC} 2 ${MPIFLAGS} ${HALO} spmv --gen lap3d27:10 --ranks-per-node 1
          --strategy standard,split,auto --iterations 4 --warmup 1 --json ${OUT}
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "halo spmv (time to solution) failed (${rc}): ${out} ${err}")
endif()
file(READ ${OUT} doc)
get(its iterations)
get(matrix matrix_s)
get(shared first_plan_shared_s)
get(first first_plan_create_s)
holds("${matrix} > 0 && ${shared} >= 0 && ${first} > 0" "matrix_s, first_plan_*_s")
string(JSON n_rows LENGTH "${doc}" strategies)
if(NOT n_rows EQUAL 3)
  message(FATAL_ERROR "${n_rows} plans, expected 3")
endif()
foreach(i 0 1 2)
  get(tts strategies ${i} time_to_solution_s)
  get(setup strategies ${i} tts_setup_s)
  get(spmvs strategies ${i} tts_spmvs_s)
  get(plan strategies ${i} plan_create_s)
  get(t strategies ${i} spmv_s)
  holds("${plan} > 0 && abs(${tts} - (${setup} + ${spmvs})) <= 1e-7 * ${tts}"
        "plan ${i}: time_to_solution_s = tts_setup_s + tts_spmvs_s")
  holds("abs(${spmvs} - ${its} * ${t}) <= 1e-7 * ${spmvs}" "plan ${i}: tts_spmvs_s = iterations x spmv_s")
  holds("abs(${setup} - (${matrix} + ${shared} + ${plan})) <= 1e-7 * ${setup}"
        "plan ${i}: tts_setup_s = matrix_s + first_plan_shared_s + plan_create_s")
endforeach()
file(WRITE ${OUT}.txt "${out}")
execute_process(
  COMMAND awk "function abs(v) { return v < 0 ? -v : v }
    /^time to solution: set-up \\+ 4 SpMVs/ { if (table) bad = 1; s = 1; next }
    s == 1 { s = 2; next }
    s == 2 && /^\\(set-up = the matrix/ { s = 3; next }
    s == 2 { rows++; if (abs($3 - ($4 + $6)) > 2e-3 * $3) bad = 1 }
    /^strategy +transport +SpMV/ { table = 1 }
    END { exit bad || s != 3 || rows != 3 || !table }" ${OUT}.txt
  RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "no time to solution first, or its columns do not add up: ${out}")
endif()
