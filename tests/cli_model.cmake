# halo simulate --params: the modeled times in the table and the JSON, host
# and device paths, a parameter file equal to the built-in set giving the same
# times, and bad parameter sets failing with the key and the line named (on
# every rank when launched on several).
set(gen --gen lap2d:30 --ranks 8 --ranks-per-node 4)

# run(NAME EXPECT_RC ARGS...): halo simulate ARGS, output in ${NAME}_out
function(run name expect_rc)
  execute_process(COMMAND ${HALO} simulate ${ARGN}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL expect_rc)
    message(FATAL_ERROR "halo simulate ${ARGN}: exit ${rc}, expected ${expect_rc}:\n${out}\n${err}")
  endif()
  set(${name}_out "${out}${err}" PARENT_SCOPE)
endfunction()

function(expect_text name text)
  string(FIND "${${name}_out}" "${text}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "'${text}' not in the output of ${name}:\n${${name}_out}")
  endif()
endfunction()

function(expect_no_text name text)
  string(FIND "${${name}_out}" "${text}" at)
  if(NOT at EQUAL -1)
    message(FATAL_ERROR "'${text}' in the output of ${name}:\n${${name}_out}")
  endif()
endfunction()

# The modeled transports of every strategy in a JSON report, and a positive time each.
function(check_json file want_transports)
  file(READ ${file} doc)
  string(JSON n LENGTH "${doc}" strategies)
  if(NOT n EQUAL 4)
    message(FATAL_ERROR "${file}: ${n} strategies")
  endif()
  math(EXPR last "${n} - 1")
  foreach(i RANGE ${last})
    string(JSON n_phases LENGTH "${doc}" strategies ${i} phases)
    set(got "")
    string(JSON n_model LENGTH "${doc}" strategies ${i} modeled)
    math(EXPR last_model "${n_model} - 1")
    foreach(m RANGE ${last_model})
      string(JSON t GET "${doc}" strategies ${i} modeled ${m} transport)
      string(JSON s GET "${doc}" strategies ${i} modeled ${m} exchange_s)
      string(JSON np LENGTH "${doc}" strategies ${i} modeled ${m} phases_s)
      if(NOT s MATCHES "^[0-9]" OR s MATCHES "^0(\\.0*)?$" OR NOT np EQUAL n_phases)
        message(FATAL_ERROR "${file}: strategy ${i} ${t}: exchange_s ${s}, ${np} phases")
      endif()
      list(APPEND got ${t})
    endforeach()
    if(NOT got STREQUAL want_transports)
      message(FATAL_ERROR "${file}: strategy ${i} models '${got}', expected '${want_transports}'")
    endif()
  endforeach()
endfunction()

# host plan
run(host 0 ${gen} --params lassen --json ${OUT}.host.json)
expect_text(host "modeled exchange, machine parameters lassen; host memory")
foreach(s standard 2step 3step split)
  if(NOT host_out MATCHES "\n${s} +host +[0-9]\\.[0-9]+e-[0-9]+ +[0-9]")
    message(FATAL_ERROR "no modeled host time of ${s}:\n${host_out}")
  endif()
endforeach()
check_json(${OUT}.host.json "host")
file(READ ${OUT}.host.json doc)
string(JSON p GET "${doc}" model params)
if(NOT p STREQUAL "lassen")
  message(FATAL_ERROR "model.params = ${p}")
endif()

# device plans: one rank per GPU (nccl too), two (no nccl)
run(gpu4 0 ${gen} --params lassen --gpus-per-node 4 --json ${OUT}.gpu4.json)
expect_text(gpu4 "4 GPUs per node, at most 1 rank per GPU")
check_json(${OUT}.gpu4.json "staged;ipc;nccl")
run(gpu2 0 ${gen} --params lassen --gpus-per-node 2 --json ${OUT}.gpu2.json)
expect_text(gpu2 "2 GPUs per node, at most 2 ranks per GPU")
expect_no_text(gpu2 "nccl")
check_json(${OUT}.gpu2.json "staged;ipc")

# without --params, no model
run(plain 0 ${gen} --json ${OUT}.plain.json)
expect_no_text(plain "modeled")
file(READ ${OUT}.plain.json doc)
string(JSON m ERROR_VARIABLE no_model GET "${doc}" strategies 0 modeled)
if(NOT no_model)
  message(FATAL_ERROR "a model without --params: ${m}")
endif()

# a parameter file with the Lassen values gives the very same times
set(lassen_keys
  "name = lassen-copy" "sockets_per_node = 2" "short_max = 256" "eager_max = 16384"
  "cpu.short.on_socket.alpha = 3.67e-07" "cpu.short.on_socket.beta = 1.32e-10"
  "cpu.short.on_node.alpha = 9.25e-07" "cpu.short.on_node.beta = 1.19e-09"
  "cpu.short.off_node.alpha = 1.89e-06" "cpu.short.off_node.beta = 6.88e-10"
  "cpu.eager.on_socket.alpha = 4.61e-07" "cpu.eager.on_socket.beta = 7.12e-11"
  "cpu.eager.on_node.alpha = 1.17e-06" "cpu.eager.on_node.beta = 2.18e-10"
  "cpu.eager.off_node.alpha = 2.44e-06" "cpu.eager.off_node.beta = 3.79e-10"
  "cpu.rendezvous.on_socket.alpha = 3.15e-06" "cpu.rendezvous.on_socket.beta = 3.40e-11"
  "cpu.rendezvous.on_node.alpha = 6.77e-06" "cpu.rendezvous.on_node.beta = 1.49e-10"
  "cpu.rendezvous.off_node.alpha = 7.76e-06" "cpu.rendezvous.off_node.beta = 7.97e-11"
  "gpu.eager.on_socket.alpha = 1.87e-06" "gpu.eager.on_socket.beta = 5.79e-11"
  "gpu.eager.on_node.alpha = 2.02e-05" "gpu.eager.on_node.beta = 2.15e-10"
  "gpu.eager.off_node.alpha = 8.95e-06" "gpu.eager.off_node.beta = 1.72e-10"
  "gpu.rendezvous.on_socket.alpha = 1.82e-05" "gpu.rendezvous.on_socket.beta = 1.46e-11"
  "gpu.rendezvous.on_node.alpha = 1.93e-05" "gpu.rendezvous.on_node.beta = 2.39e-11"
  "gpu.rendezvous.off_node.alpha = 1.10e-05" "gpu.rendezvous.off_node.beta = 1.72e-10"
  "copy.h2d.1.alpha = 1.30e-05" "copy.h2d.1.beta = 1.85e-11"
  "copy.h2d.4.alpha = 1.52e-05" "copy.h2d.4.beta = 5.52e-10"
  "copy.d2h.1.alpha = 1.27e-05" "copy.d2h.1.beta = 1.96e-11"
  "copy.d2h.4.alpha = 1.47e-05" "copy.d2h.4.beta = 1.50e-10"
  "injection.beta = 4.19e-11")
string(REPLACE ";" "\n" text "# Lassen, by hand\n${lassen_keys}\n")
file(WRITE ${OUT}.lassen.params "${text}")
run(file 0 ${gen} --params ${OUT}.lassen.params --gpus-per-node 2 --json ${OUT}.file.json)
file(READ ${OUT}.gpu2.json a)
file(READ ${OUT}.file.json b)
foreach(i 0 1 2 3)
  string(JSON ma GET "${a}" strategies ${i} modeled)
  string(JSON mb GET "${b}" strategies ${i} modeled)
  if(NOT ma STREQUAL mb)
    message(FATAL_ERROR "strategy ${i}: lassen\n${ma}\nthe file\n${mb}")
  endif()
endforeach()

# bad parameter sets: exit 1, the key (and the line) in the message
string(REPLACE "cpu.eager.on_node.beta = 2.18e-10" "cpu.eager.on_nod.beta = 2.18e-10" bad "${text}")
file(WRITE ${OUT}.unknown.params "${bad}")
run(unknown 1 ${gen} --params ${OUT}.unknown.params)
expect_text(unknown "unknown.params:15: unknown key 'cpu.eager.on_nod.beta'")
string(REPLACE "copy.d2h.4.beta = 1.50e-10\n" "" bad "${text}")
file(WRITE ${OUT}.missing.params "${bad}")
run(missing 1 ${gen} --params ${OUT}.missing.params --gpus-per-node 4)
expect_text(missing "missing key 'copy.d2h.4.beta'")
string(REPLACE "injection.beta = 4.19e-11" "injection.beta = -4.19e-11" bad "${text}")
file(WRITE ${OUT}.negative.params "${bad}")
run(negative 1 ${gen} --params ${OUT}.negative.params)
expect_text(negative "negative.params:44: injection.beta = -4.19e-11: negative")
run(name 1 ${gen} --params lasen)
expect_text(name "parameter set 'lasen': not a built-in one (lassen, h200)")
run(usage 2 ${gen} --gpus-per-node 2)
expect_text(usage "--gpus-per-node needs --params")
run(usage2 2 ${gen} --params lassen --gpus-per-node -1)
expect_text(usage2 "--gpus-per-node '-1'")
run(help 0 --help)
expect_text(help "--params NAME|FILE")
expect_text(help "--gpus-per-node G")

# on several ranks: every rank exits non-zero
execute_process(COMMAND ${MPIEXEC} 2 ${MPIFLAGS} ${HALO} simulate ${gen}
                        --params ${OUT}.unknown.params
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(rc EQUAL 0 OR NOT "${out}${err}" MATCHES "unknown key 'cpu.eager.on_nod.beta'")
  message(FATAL_ERROR "2 ranks, bad parameter file: exit ${rc}:\n${out}\n${err}")
endif()
message(STATUS "halo simulate --params: host and device models, parameter files and their errors")
