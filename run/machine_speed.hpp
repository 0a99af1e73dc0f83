#pragma once
// How fast this machine runs the simulator, against the machine the estimate's per-item costs were
// measured on (estimate_costs.hpp), so that a wall estimate is this machine's: the same build ran
// the reference packet runs 1.7-2.6x faster on a later 2-vCPU VM than on the one the costs came
// from, and its estimates read that much long. The measure is the event core's hold model
// (hold_model.hpp), which follows the simulator's own speed: 11.5 M events/s on the reference
// machine, 22-24 M on the faster one, where dividing by the ratio brought the shipped scenarios
// within 2x of their runs from 18 of 31 to 31 of 31 (docs/performance.md).
namespace syncsim::app {

// The hold model (4,096 pending events) on the reference machine, the 2-vCPU VM of the estimate
// survey of 2026-12-07: 11.72 and 11.29 M events/s in `syncsim bench` at 9070d97 and 5a60412.
inline constexpr double kReferenceHoldEventsPerS = 11.5e6;
// Runs estimated shorter than this on the reference machine get a short probe (0.3 ms on the faster
// VM, within 8 % of the full one there) instead of the full one (about 8 ms there, 16 ms on the
// reference machine), which would be a visible share of them.
inline constexpr double kMachineSpeedMinWallS = 0.25;

// This machine's speed against the reference (2 = twice as fast): the environment's
// SYNCSIM_MACHINE_SPEED when set to a positive number (tests, or a machine known to its user),
// else measured once per process: the best of three 50,000-event hold runs.
double machine_speed();

// The probes alone, measured anew on every call (no environment, no cache): the full one and the
// short one (the best of two 2,000-event hold runs with 256 pending).
double probe_machine_speed();
double short_probe_machine_speed();

// The speed to scale an estimate of `reference_wall_s` seconds on the reference machine by:
// machine_speed() for a run of kMachineSpeedMinWallS or more there, else the short probe's (once
// per process; SYNCSIM_MACHINE_SPEED stands in for both).
double machine_speed_for(double reference_wall_s);

}  // namespace syncsim::app
