#pragma once
// The device memory a training step's communication holds on each GPU, part of the step's memory
// estimate (StepResult::memory_per_gpu_bytes): NCCL's connection buffers for the communicators the
// step runs collectives on, and PyTorch DDP's gradient buckets.
//
// NCCL gives every connection it opens a receive buffer for each protocol (src/init.cc: LL, LL128
// and Simple; the transports allocate all three per connection) and connects only the algorithms
// a communicator runs (NCCL_RUNTIME_CONNECT, on by default since NCCL 2.22). Per channel a ring
// receives from one peer, a tree from its neighbours. The buffers sit on the GPU for NVLink and
// GPUDirect RDMA connections (src/transport/p2p.cc, net.cc).
#include <cstdint>

#include "models/collective_plan.hpp"

namespace syncsim::models {

// src/init.cc: DEFAULT_LL_BUFFSIZE = NCCL_LL_LINES_PER_THREAD (8) x NCCL_LL_MAX_NTHREADS (512) x
// NCCL_STEPS (8) x 16 B per LL line; DEFAULT_LL128_BUFFSIZE = NCCL_LL128_ELEMS_PER_THREAD (120) x
// NCCL_LL128_MAX_NTHREADS (640) x NCCL_STEPS x 8 B; DEFAULT_BUFFSIZE (NCCL_BUFFSIZE) 4 MiB.
inline constexpr int64_t kNcclLlBufferBytes = int64_t{8} * 512 * 8 * 16;
inline constexpr int64_t kNcclLl128BufferBytes = int64_t{120} * 640 * 8 * 8;
inline constexpr int64_t kNcclSimpleBufferBytes = int64_t{1} << 22;
inline constexpr int64_t kNcclConnectionBufferBytes =
    kNcclLlBufferBytes + kNcclLl128BufferBytes + kNcclSimpleBufferBytes;

// Receive connections one rank of a communicator of `ranks` ranks opens per channel for `algo`:
// ring 1 (its predecessor); tree 2 (NCCL's tree runs up and down: a GPU inside a node's chain
// receives from both chain neighbours; a node's head, with its parent and up to two children
// between nodes, holds up to 4, counted as 2); hierarchical 2 (an intra-host and an inter-host
// ring); halving-doubling one per partner, ceil(log2 ranks); CollNet as a ring (its SHARP
// buffers, in the network, are not on the GPU). 0 for a communicator of one rank.
uint32_t nccl_connections_per_channel(CollectiveAlgo algo, uint32_t ranks);

// NCCL's buffers on each GPU of one communicator: channels x connections x all three protocols.
double nccl_communicator_buffer_bytes(CollectiveAlgo algo, uint32_t ranks, uint32_t channels);

// Point-to-point over the network (pipeline sends, expert all-to-alls between hosts): NCCL's
// shared p2p buffers (src/transport/net.cc sharedNetBuffersInit), one pool to send and one to
// receive per GPU and communicator, each p2pnChannels x NCCL_SHARED_STEPS (16) x p2pChunkSize
// (NCCL_P2P_NET_CHUNKSIZE, 128 KiB between nodes: src/init.cc), where p2pnChannels is the
// communicator's channel count rounded up to a power of two (src/graph/paths.cc
// ncclTopoComputeP2pChannels). NVLink p2p inside a host (src/transport/p2p.cc) is not counted.
inline constexpr int64_t kNcclSharedSteps = 16;
inline constexpr int64_t kNcclP2pNetChunkBytes = int64_t{1} << 17;
double nccl_p2p_buffer_bytes(uint32_t channels);

// The communicators of a model-parallel layout (Megatron order, models/parallelism.hpp) as one
// GPU holds them.
struct LayoutCommunicators {
  uint32_t tensor = 1;
  uint32_t context = 1;
  uint32_t pipeline = 1;
  uint32_t data = 1;
  uint32_t expert = 1;
  uint32_t fsdp_shard = 0;         // FSDP: the shard group's ranks; 0: not FSDP
  uint32_t fsdp_replicas = 1;      // HSDP's replicate groups (1: FULL_SHARD)
  bool sharded_optimizer = false;  // Megatron's distributed optimizer
  CollectiveAlgo data_algorithm = CollectiveAlgo::Ring;  // the DP x CP all-reduce's
  uint32_t gpus_per_host = 1;
  uint32_t channels = 1;
};

// NCCL's buffers of such a layout on each GPU: the TP and CP groups' rings and the DP x CP group's
// all-reduce algorithm (rings for FSDP's and the distributed optimizer's gathers and scatters;
// HSDP's replicate all-reduce beside them); the shared p2p buffers when the pipeline's sends
// (stages a TP x CP x DP block apart) or an EP group's all-to-alls (EP ranks TP x CP apart) cross
// hosts. Megatron's DDP reduces its contiguous gradient buffer in place, so no bucket copy.
double layout_communication_buffer_bytes(const LayoutCommunicators& l);

}  // namespace syncsim::models
