/* The node-aware set-up's two decisions carried between nodes (nodeaware.c):
 * a node's incoming half tells each sending node's leader the pieces it will
 * receive and their receivers; the leader, once it has decided who sends each
 * piece, tells the incoming half it heard from. Point to point between the
 * halves of nodes that exchange data: no array of size P. */
#ifndef HALO_PLAN_DECISIONS_H
#define HALO_PLAN_DECISIONS_H

#include "plan/node.h"
#include "vec.h"

/** The arrays of one exchange of decisions, made before it and their failure
 *  agreed over the plan's communicator: a half that could not make them would
 *  send nothing, and its partners would wait. */
typedef struct {
  halo_vec *msg;
  MPI_Request *req;
} halo_decision_arrays;

/** Make them where maker (for n_to links) and agree over comm (collective); on
 *  failure, anywhere, nothing is left. The exchange frees them. */
halo_status halo_decision_arrays_make(MPI_Comm comm, int maker, int n_to, halo_decision_arrays *a);

/** Receive decisions: the incoming half sends the pieces and receivers of its n_in
 *  links to the sending nodes' leaders; a leader receives one for each of its n_out
 *  links, from any rank, matched by the node it names, and keeps in peer[b] the
 *  rank it came from. Every message is sent and received whatever fails; the
 *  caller agrees the failure. */
halo_status halo_decisions_receive(MPI_Comm comm, int my_node, halo_link *in, int n_in,
                                   halo_link *out, int n_out, int *peer, halo_decision_arrays *a);

/** Send decisions: a leader sends the senders of its n_out links' pieces to peer[b];
 *  the incoming half receives them from the sending nodes' leaders. */
halo_status halo_decisions_send(MPI_Comm comm, int my_node, halo_link *out, int n_out,
                                const int *peer, halo_link *in, int n_in, halo_decision_arrays *a);

#endif
