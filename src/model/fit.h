/* Least-squares fits of the postal model: the public part is
 * include/halo/model.h. */
#ifndef HALO_MODEL_FIT_H
#define HALO_MODEL_FIT_H

#include "halo/model.h"
#include "halo_impl.h"

#endif
