#pragma once
// The parts of run/estimate.cpp for workloads other than one training step: a Chakra trace's
// replay and the jobs of a shared fabric.
#include "run/estimate.hpp"
#include "scenario/scenario.hpp"

namespace syncsim::app {

// `workload.chakra`: the transfers of the trace's collectives, each planned as the replay plans
// it (run/chakra_run.cpp: its protocol's chunk and ring slicing), every group counted as all of
// the trace's ranks (an upper bound for smaller process groups); a send is one transfer.
double chakra_transfers(const Scenario& scenario);
// The bytes the trace's collectives and sends put on the wire, over all ranks (a collective: each
// member's bus bytes, as if every group held all of the trace's ranks).
double chakra_bytes_moved(const Scenario& scenario);

// `jobs:` (run/multi_job.hpp): each job estimated as a scenario of its own, added to `e` (at
// packet level its packet hops, which the caller then times; else its transfers' wall too).
void add_jobs(const Scenario& scenario, bool port_counters, Estimate& e);

}  // namespace syncsim::app
