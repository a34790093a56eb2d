/* The registry of strategies: halo_strategy -> descriptor (strategy.h). */
#ifndef HALO_PLAN_REGISTRY_H
#define HALO_PLAN_REGISTRY_H

#include "plan/strategy.h"

/**
 * The descriptor of strategy s. Not collective.
 *
 * @param s       a strategy that builds schedules (not HALO_STRATEGY_AUTO,
 *                which chooses one of them)
 * @param desc_p  the descriptor, a static constant
 * @return HALO_ERR_INVALID_ARG for auto or a value no strategy registers
 */
halo_status halo_strategy_desc_find(halo_strategy s, const halo_strategy_desc **desc_p);

/** Whether s is a registered strategy with node-aware decisions (built by
 *  nodebuild.h), as opposed to Standard, Auto or an unknown value. */
int halo_strategy_node_aware(halo_strategy s);

#endif
