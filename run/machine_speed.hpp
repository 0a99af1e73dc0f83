#pragma once
// How fast this machine runs the simulator, against the machine the estimate's per-item costs were
// measured on (estimate_costs.hpp), so that a wall estimate is this machine's: the same build ran
// the reference packet runs 1.7-2.6x faster on a later 2-vCPU VM than on the one the costs came
// from, and its estimates read that much long. The measure is the event core's hold model
// (hold_model.hpp), which follows the simulator's own speed: on those two machines it ran at
// 11.5 and 23.4 M events/s, and its ratio (2.03) brought the estimates of the shipped scenarios
// that had drifted to 1.9-2.6x of their runs back to 0.8-1.3x (docs/performance.md).
namespace syncsim::app {

// The hold model (4,096 pending events) on the reference machine, the 2-vCPU VM of the estimate
// survey of 2026-12-07: 11.72 and 11.29 M events/s in `syncsim bench` at 9070d97 and 5a60412.
inline constexpr double kReferenceHoldEventsPerS = 11.5e6;
// Runs estimated shorter than this on the reference machine keep the reference figure: the probe
// (about 10 ms there, 5 ms on the faster VM) would be a noticeable share of them.
inline constexpr double kMachineSpeedMinWallS = 0.25;

// This machine's speed against the reference (2 = twice as fast): the environment's
// SYNCSIM_MACHINE_SPEED when set to a positive number (tests, or a machine known to its user),
// else measured once per process: the best of three 50,000-event hold runs.
double machine_speed();
// The probe alone, measured anew on every call (no environment, no cache).
double probe_machine_speed();

// The speed to scale an estimate of `reference_wall_s` seconds on the reference machine by:
// machine_speed() when the run is long enough to be worth the probe, else 1.
double machine_speed_for(double reference_wall_s);

}  // namespace syncsim::app
