// Range rules of the fabric builders' parameter structs (fabric_params.hpp). The shape rules of
// each topology (counts, oversubscription, sizes) are checked where the shape is resolved
// (spine_leaf.cpp, fat_tree.cpp, rail_optimized.cpp, fabric_checks.cpp).
#include "topologies/fabric_params.hpp"

#include <string>

namespace syncsim::topo {

FieldErrors HostParams::check() const {
  FieldErrors errors;
  if (gpus == 0) errors.push_back({"gpus", "expected at least 1 GPU per host, got 0"});
  if (nics == 0) errors.push_back({"nics", "expected at least 1 NIC per host, got 0"});
  return errors;
}

FieldErrors HostParams::check_every_nic_used(uint32_t nics_per_gpu) const {
  FieldErrors errors;
  if (nics_per_gpu > 1) {
    if (gpus >= 1 && nics > gpus * nics_per_gpu) {
      errors.push_back({"nics", "expected at most " + std::to_string(nics_per_gpu) +
                                    " NICs per GPU (one per plane), got " + std::to_string(nics) +
                                    " for " + std::to_string(gpus) + " GPUs"});
    }
    return errors;
  }
  if (gpus >= 1 && nics > gpus) {
    errors.push_back({"nics",
                      "expected at most one NIC per GPU (each GPU sends through one NIC, so NICs "
                      "beyond fabric.host.gpus = " +
                          std::to_string(gpus) +
                          " would carry nothing; give one NIC the combined rate instead), got " +
                          std::to_string(nics)});
  }
  return errors;
}

}  // namespace syncsim::topo
