/* The registry of transports (transport.h): one line a transport. */
#include <string.h>

#include "exec/transport.h"

/* One line a transport: the list declares each descriptor (defined in the
 * transport's own file) and fills the table. Its order is the order in which
 * AUTO lists (and, between equal modeled times, prefers) its candidates. */
#define HALO_TRANSPORT_LIST(X)                                                                     \
  X(halo_transport_desc_host)                                                                      \
  X(halo_transport_desc_staged)                                                                    \
  X(halo_transport_desc_ipc)                                                                       \
  X(halo_transport_desc_nccl)                                                                      \
  X(halo_transport_desc_mpi_device)                                                                \
  X(halo_transport_desc_nvshmem)                                                                   \
  X(halo_transport_desc_rma)                                                                       \
  X(halo_transport_desc_neighbor)

#define HALO_DECLARE(desc) extern const halo_transport_desc desc;
HALO_TRANSPORT_LIST(HALO_DECLARE)
#undef HALO_DECLARE

#define HALO_ENTRY(desc) &desc,
static const halo_transport_desc *const registry[] = {HALO_TRANSPORT_LIST(HALO_ENTRY)};
#undef HALO_ENTRY

#define N_REGISTERED ((int)(sizeof registry / sizeof registry[0]))

const halo_transport_desc *halo_transport_find(halo_transport t) {
  for (int i = 0; i < N_REGISTERED; i++)
    if (registry[i]->id == t) return registry[i];
  return NULL;
}

const halo_transport_desc *const *halo_transport_all(int *n_p) {
  *n_p = N_REGISTERED;
  return registry;
}

int halo_transport_serves(const halo_transport_desc *t, halo_memory memory) {
  return (t->memory & (memory == HALO_MEMORY_DEVICE ? HALO_TMEM_DEVICE : HALO_TMEM_HOST)) != 0;
}

void halo_transport_list_names(int memory, char *buf, size_t len) {
  int n = 0, k = 0;
  size_t at = 0;
  buf[0] = '\0';
  for (int i = 0; i < N_REGISTERED; i++)
    n += memory < 0 || halo_transport_serves(registry[i], (halo_memory)memory);
  for (int i = 0; i < N_REGISTERED && at < len; i++) {
    if (memory >= 0 && !halo_transport_serves(registry[i], (halo_memory)memory)) continue;
    const char *sep = k == 0 ? "" : k == n - 1 ? " or " : ", ";
    int w = snprintf(buf + at, len - at, "%s%s", sep, registry[i]->name);
    if (w < 0) break;
    at += (size_t)w;
    k++;
  }
}

/* The reason t cannot run in memory at where, or HALO_SUCCESS. */
static halo_status check(const halo_transport_desc *t, halo_memory memory,
                         const halo_transport_where *w, char *why, size_t len) {
  char names[160];
  if (!halo_transport_serves(t, memory)) {
    halo_transport_list_names(memory, names, sizeof names);
    if (memory == HALO_MEMORY_DEVICE)
      snprintf(why, len, "transport %s is for host memory; device memory takes auto, %s", t->name,
               names);
    else
      snprintf(why, len,
               "transport %s needs device memory (the plan's memory is host): use auto, %s",
               t->name, names);
    return HALO_ERR_INVALID_ARG;
  }
  if (w->compiled_only && !t->compiled) {
    snprintf(why, len, "transport %s: not compiled in: rebuild with %s", t->name, t->build_hint);
    return HALO_ERR_NOT_COMPILED;
  }
  const unsigned own = HALO_NEEDS_OWN_GPU | (w->named ? 0u : (unsigned)HALO_NEEDS_OWN_GPU_AUTO);
  if ((t->needs & own) && !w->own_gpu) {
    snprintf(why, len,
             "transport %s needs one rank per GPU, but ranks share a GPU: use staged or ipc",
             t->name);
    return HALO_ERR_INVALID_ARG;
  }
  if ((t->needs & HALO_NEEDS_GPU_AWARE_MPI) && !w->gpu_aware_mpi) {
    snprintf(why, len,
             "transport %s: this MPI is not CUDA-aware (MPIX_Query_cuda_support() says no, or it "
             "cannot say); gpu_aware_mpi = 1 (or HALO_GPU_AWARE_MPI=1) forces it",
             t->name);
    return HALO_ERR_UNSUPPORTED;
  }
  return HALO_SUCCESS;
}

halo_status halo_transport_check(const halo_transport_desc *t, halo_memory memory,
                                 const halo_transport_where *where, int record) {
  char why[320];
  const halo_status st = check(t, memory, where, why, sizeof why);
  if (st == HALO_SUCCESS || !record) return st;
  return HALO_ERROR(st, "%s", why);
}

halo_transport halo_transport_default(halo_memory memory, const halo_transport_where *where) {
  const halo_transport_desc *best = NULL;
  char why[320];
  if (memory != HALO_MEMORY_DEVICE) return HALO_TRANSPORT_HOST;
  for (int paid_only = 1; paid_only >= 0 && !best; paid_only--)
    for (int i = 0; i < N_REGISTERED; i++) {
      const halo_transport_desc *t = registry[i];
      const int to_pay = (t->model.setup_alpha > 0 || t->model.setup_per_rank > 0) &&
                         !(where->made && where->made[t->id]);
      if (t->default_rank <= 0 || (paid_only && to_pay) ||
          check(t, memory, where, why, sizeof why) != HALO_SUCCESS)
        continue;
      if (!best || t->default_rank < best->default_rank) best = t;
    }
  return best ? best->id : HALO_TRANSPORT_STAGED;
}

int halo_transport_candidates(halo_memory memory, const halo_transport_where *where,
                              int (*priced)(const void *arg, halo_transport t), const void *arg,
                              halo_transport *list) {
  char why[320];
  int n = 0;
  for (int i = 0; i < N_REGISTERED; i++) {
    const halo_transport_desc *t = registry[i];
    if (t->auto_policy == HALO_AUTO_NEVER) continue;
    if (check(t, memory, where, why, sizeof why) != HALO_SUCCESS) continue;
    if (t->auto_policy == HALO_AUTO_PRICED && !(priced && priced(arg, t->id))) continue;
    list[n++] = t->id;
  }
  return n;
}

halo_status halo_transport_states_collect(void **state, MPI_Comm comm) {
  for (int i = 0; i < N_REGISTERED; i++)
    if (registry[i]->collect) HALO_CHECK(registry[i]->collect(state[registry[i]->id], comm));
  return HALO_SUCCESS;
}

int halo_transport_state_count(void *const *state, halo_transport t) {
  const halo_transport_desc *d = halo_transport_find(t);
  return d && d->state_count ? d->state_count(state[t]) : 0;
}

void halo_transport_states_free(void **state) {
  for (int i = 0; i < N_REGISTERED; i++)
    if (registry[i]->release && state[registry[i]->id])
      registry[i]->release(&state[registry[i]->id]);
}

/* ---- the public names ------------------------------------------------------ */

const char *halo_transport_name(halo_transport t) {
  if (t == HALO_TRANSPORT_AUTO) return "auto";
  const halo_transport_desc *d = halo_transport_find(t);
  return d ? d->name : "unknown";
}

halo_status halo_transport_from_name(const char *name, halo_transport *transport_p) {
  char known[256];
  if (!transport_p) return HALO_ERROR(HALO_ERR_INVALID_ARG, "transport_p is NULL");
  if (!name) return HALO_ERROR(HALO_ERR_INVALID_ARG, "transport name is NULL");
  if (strcmp(name, "auto") == 0) {
    *transport_p = HALO_TRANSPORT_AUTO;
    return HALO_SUCCESS;
  }
  for (int i = 0; i < N_REGISTERED; i++)
    if (strcmp(registry[i]->name, name) == 0) {
      *transport_p = registry[i]->id;
      return HALO_SUCCESS;
    }
  snprintf(known, sizeof known, "auto, ");
  for (int i = 0; i < N_REGISTERED; i++) {
    strncat(known, registry[i]->name, sizeof known - strlen(known) - 1);
    if (i + 1 < N_REGISTERED) strncat(known, ", ", sizeof known - strlen(known) - 1);
  }
  return HALO_ERROR(HALO_ERR_INVALID_ARG, "unknown transport '%s' (known: %s)", name, known);
}

halo_status halo_transport_get_info(halo_transport transport, halo_transport_info *info_p) {
  if (!info_p) return HALO_ERROR(HALO_ERR_INVALID_ARG, "info_p is NULL");
  const halo_transport_desc *d = halo_transport_find(transport);
  if (!d && transport == HALO_TRANSPORT_AUTO)
    return HALO_ERROR(HALO_ERR_INVALID_ARG,
                      "transport auto is no transport of its own: it chooses one");
  if (!d)
    return HALO_ERROR(HALO_ERR_INVALID_ARG,
                      "transport %d is unknown: no descriptor is registered for it",
                      (int)transport);
  memset(info_p, 0, sizeof *info_p);
  info_p->name = d->name;
  info_p->summary = d->summary;
  info_p->host_memory = (d->memory & HALO_TMEM_HOST) != 0;
  info_p->device_memory = (d->memory & HALO_TMEM_DEVICE) != 0;
  info_p->compiled = d->compiled;
  info_p->needs_own_gpu = (d->needs & HALO_NEEDS_OWN_GPU) != 0;
  info_p->needs_gpu_aware_mpi = (d->needs & HALO_NEEDS_GPU_AWARE_MPI) != 0;
  static const char *const none[] = {NULL};
  info_p->settings = d->settings ? d->settings : none;
  return HALO_SUCCESS;
}
