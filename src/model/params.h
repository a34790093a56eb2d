/* Machine parameters of the performance model: the public part is
 * include/halo/model.h. */
#ifndef HALO_MODEL_PARAMS_H
#define HALO_MODEL_PARAMS_H

#include "halo/model.h"
#include "halo_impl.h"

#endif
