#!/usr/bin/env bash
# Makes .peer/petsc-cuda.tar.gz, the CUDA build of PETSc that bench/gpu/petsc.sh
# carries to the GPU machine (which has no PETSc and too little time per call
# to build one). Runs on the development machine (Debian, 2 cores: about an
# hour), which has the CUDA 13 toolkit but no GPU and no driver:
#
#   bench/gpu/petsc-peer.sh PETSC_SRC     (a checkout of PETSc's main branch: CUDA 13 support)
#
# The toolkit here lacks NVML's header and library, which PETSc's CUDA build
# needs: give the header as NVML_H (nvml.h of NVIDIA's public NVML API, e.g. from
# NVIDIA/go-nvml's pkg/nvml/, whose handle types are one-member structs: they
# are turned back into the pointer types of the driver's header), and the link
# is made against a stand-in libnvidia-ml.so.1 built here; at run time the GPU
# machine's driver library is loaded. BLAS and LAPACK are Debian's reference
# ones, carried with libgfortran and libquadmath in the prefix's lib/.
set -euo pipefail
src=$(realpath "$1")
here=$(realpath "$(dirname "$0")/../..")
NVML_H=${NVML_H:?the path of nvml.h}
work=/tmp/petsc-peer
prefix=/tmp/petsc-cuda-inst
rm -rf $work && mkdir -p $work/nvml/include $work/nvml/lib
python3 - "$NVML_H" $work/nvml/include/nvml.h <<'EOF'
import re, sys
s = open(sys.argv[1]).read()
s = re.sub(r'typedef struct\n\{\n    struct (nvml[A-Za-z]*_st)\* handle;\n\} (nvml[A-Za-z]*_t);',
           r'typedef struct \1* \2;', s)
open(sys.argv[2], 'w').write(s)
EOF
cat >$work/nvml/stub.c <<'EOF'
#include "nvml.h"
nvmlReturn_t nvmlInit_v2(void) { return NVML_ERROR_UNINITIALIZED; }
nvmlReturn_t nvmlShutdown(void) { return NVML_ERROR_UNINITIALIZED; }
const char *nvmlErrorString(nvmlReturn_t r) { (void)r; return "stand-in"; }
nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int i, nvmlDevice_t *d) { (void)i; (void)d; return NVML_ERROR_UNINITIALIZED; }
nvmlReturn_t nvmlDeviceGetFieldValues(nvmlDevice_t d, int n, nvmlFieldValue_t *v) { (void)d; (void)n; (void)v; return NVML_ERROR_UNINITIALIZED; }
nvmlReturn_t nvmlDeviceGetTotalEnergyConsumption(nvmlDevice_t d, unsigned long long *e) { (void)d; (void)e; return NVML_ERROR_UNINITIALIZED; }
EOF
gcc -shared -fPIC -I$work/nvml/include -o $work/nvml/lib/libnvidia-ml.so.1 -Wl,-soname,libnvidia-ml.so.1 $work/nvml/stub.c
ln -sf libnvidia-ml.so.1 $work/nvml/lib/libnvidia-ml.so
# PETSc's C++ and CUDA sources include nvml.h through petscdevice_cuda.h: the toolkit's folder
[ -f /usr/local/cuda/include/nvml.h ] || cp $work/nvml/include/nvml.h /usr/local/cuda/include/nvml.h
cd "$src"
python3 ./configure --with-cc=mpicc --with-cxx=mpicxx --with-fc=0 --with-cuda=1 \
  --with-cuda-dir=/usr/local/cuda --with-cuda-arch=90 --with-debugging=0 --with-shared-libraries=1 \
  --with-x=0 --with-blaslapack-lib="-L/usr/lib/x86_64-linux-gnu -llapack -lblas" \
  --COPTFLAGS=-O2 --CXXOPTFLAGS=-O2 --CUDAOPTFLAGS=-O2 --CPPFLAGS=-I$work/nvml/include \
  --CUDAPPFLAGS=-I$work/nvml/include --LDFLAGS=-L$work/nvml/lib --prefix=$prefix \
  --with-fortran-bindings=0 --with-ssl=0 --with-hwloc=0
make PETSC_DIR="$src" PETSC_ARCH=arch-linux-c-opt MAKE_NP="$(nproc)" all
make PETSC_DIR="$src" PETSC_ARCH=arch-linux-c-opt install
# what the GPU machine may lack, next to libpetsc
for l in libblas.so.3 liblapack.so.3 libgfortran.so.5 libquadmath.so.0; do
  cp -L /usr/lib/x86_64-linux-gnu/$l $prefix/lib/
done
cp $work/nvml/include/nvml.h $prefix/include/
strip --strip-unneeded $prefix/lib/libpetsc.so.*.*
git -C "$src" rev-parse --short HEAD >$prefix/petsc-commit 2>/dev/null || true
mkdir -p "$here/.peer"
# the library's names as they are in the prefix (a glob here would expand in the current
# folder, PETSc's sources, and name files tar cannot find in the prefix)
libs=$(cd $prefix && ls lib/libpetsc.so.*)
tar -czf "$here/.peer/petsc-cuda.tar.gz" -C $prefix include lib/libpetsc.so $libs \
  lib/libblas.so.3 lib/liblapack.so.3 lib/libgfortran.so.5 lib/libquadmath.so.0 \
  lib/pkgconfig petsc-commit
ls -la "$here/.peer/petsc-cuda.tar.gz"
