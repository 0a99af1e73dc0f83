#pragma once
#include <memory>

#include "sim/backends/transfer_backend.hpp"

namespace syncsim {

// The backend a fidelity names. Every caller goes through here, so adding a fidelity is one place.
std::unique_ptr<TransferBackend> make_backend(Fidelity fidelity, Simulation& sim,
                                              const net::NetworkSpec& spec);
const char* fidelity_name(Fidelity fidelity);

}  // namespace syncsim
