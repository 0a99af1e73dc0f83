// The run-result sections of the report page: the fabric's tiers, the step breakdown, the per-rank
// timeline and the paused ports. Each reads only `syncsim run --json` keys (docs/cli.md) and says
// so on the page where the result does not have them.
#include <algorithm>
#include <array>
#include <cstddef>
#include <sstream>
#include <string>
#include <vector>

#include "run/report_format.hpp"
#include "run/report_page.hpp"
#include "run/report_sections.hpp"

namespace syncsim::app::report {

using json = nlohmann::json;

namespace {

constexpr int kWidth = 640;

std::string text_of(const json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); }

std::string svg_open(int height, std::string_view label, int width = kWidth) {
  return "<svg viewBox=\"0 0 " + std::to_string(width) + " " + std::to_string(height) +
         "\" width=\"" + std::to_string(width) + "\" height=\"" + std::to_string(height) +
         "\" role=\"img\" aria-label=\"" + escape(label) + "\">\n";
}

std::string rect(double x, double y, double w, double h, const std::string& fill,
                 const std::string& title) {
  std::ostringstream o;
  o << "<rect x=\"" << x << "\" y=\"" << y << "\" width=\"" << std::max(w, 0.5) << "\" height=\""
    << h << "\" fill=\"" << fill << "\"><title>" << escape(title) << "</title></rect>\n";
  return o.str();
}

std::string label(double x, double y, const std::string& text, const char* anchor = "start") {
  std::ostringstream o;
  o << "<text x=\"" << x << "\" y=\"" << y << "\" text-anchor=\"" << anchor << "\">" << escape(text)
    << "</text>\n";
  return o.str();
}

// The tiers top-down as they stand in a Clos: core over fabric (spine-leaf) over host links, then
// the links inside a host. Classes this list does not know come last, in the result's order.
int tier_rank(const std::string& tier) {
  static constexpr std::array<const char*, 5> kOrder{"core", "fabric", "host", "nvlink", "nvls"};
  for (std::size_t i = 0; i < kOrder.size(); ++i) {
    if (tier == kOrder[i]) return static_cast<int>(i);
  }
  return static_cast<int>(kOrder.size());
}

// The switches or endpoints under a tier's links.
std::string level_below(const std::string& tier) {
  if (tier == "core") return "spine switches";
  if (tier == "fabric") return "leaf switches";
  if (tier == "host") return "host NICs";
  if (tier == "nvlink") return "GPUs (NVLink ports)";
  if (tier == "nvls") return "NVLink SHARP engines";
  return "endpoints of " + tier;
}

std::string level_above(const std::string& tier) {
  if (tier == "core") return "core switches";
  if (tier == "fabric") return "spine switches";
  if (tier == "host") return "leaf switches";
  if (tier == "nvlink" || tier == "nvls") return "NVSwitch";
  return "switches of " + tier;
}

struct Tier {
  std::string name;
  double links, bandwidth_bps, bytes, mean, max;
};

}  // namespace

std::string fabric_section(const RunInput& in) {
  const json* raw = in.find("link_tiers");
  if (raw == nullptr) {
    return "<section id=\"fabric\"><h2>Fabric</h2>\n" +
           note(
               "This result has no <code>link_tiers</code> key (it was written by an older "
               "syncsim): no link utilisation to draw.") +
           "</section>\n";
  }
  std::vector<Tier> tiers;
  for (const json& t : in.list("link_tiers")) {
    tiers.push_back(
        {t.is_object() && t.contains("tier") ? text_of(t["tier"]) : "?",
         in.member(t, "link_tiers", "links"), in.member(t, "link_tiers", "bandwidth_bps"),
         in.member(t, "link_tiers", "bytes"), in.member(t, "link_tiers", "mean_utilisation"),
         in.member(t, "link_tiers", "max_utilisation")});
  }
  std::stable_sort(tiers.begin(), tiers.end(), [](const Tier& a, const Tier& b) {
    return tier_rank(a.name) < tier_rank(b.name);
  });
  const bool any_bytes =
      std::any_of(tiers.begin(), tiers.end(), [](const Tier& t) { return t.bytes > 0; });
  std::ostringstream o;
  o << "<section id=\"fabric\" data-expect-svg><h2>Fabric tiers and link utilisation</h2>\n";
  constexpr int kLevel = 22;
  constexpr int kBand = 46;
  std::ostringstream svg;
  double y = 8;
  std::string above;
  for (const Tier& t : tiers) {
    const std::string top = level_above(t.name);
    if (top != above) {
      svg << rect(20, y, 300, kLevel - 4, "#dde1e7", top) << label(30, y + 13, top);
      y += kLevel;
    }
    // One stroke per cable (at most 40 drawn), coloured by the tier's mean; the last one, thicker,
    // is the busiest port. Grey when nothing was routed: no utilisation to show.
    const int strokes = std::clamp(static_cast<int>(t.links), 1, 40);
    const std::string mean_colour = any_bytes ? heat_colour(t.mean) : "#c8ccd2";
    const std::string max_colour = any_bytes ? heat_colour(t.max) : "#c8ccd2";
    for (int s = 0; s < strokes; ++s) {
      const double x = 24 + s * (292.0 / strokes);
      const bool busiest = s == strokes - 1;
      svg << "<line x1=\"" << x << "\" y1=\"" << y - 4 << "\" x2=\"" << x + 6 << "\" y2=\""
          << y + kBand - 4 << "\" stroke=\"" << (busiest ? max_colour : mean_colour)
          << "\" stroke-width=\"" << (busiest ? 5 : 3) << "\"/>\n";
    }
    svg << label(332, y + 12,
                 t.name + ": " + number(t.links) + " links x " + bits_per_second(t.bandwidth_bps));
    svg << label(332, y + 27,
                 any_bytes ? "mean " + percent(t.mean) + ", busiest port " + percent(t.max)
                           : "no bytes routed");
    svg << label(332, y + 40, bytes(t.bytes) + " payload");
    y += kBand;
    const std::string bottom = level_below(t.name);
    svg << rect(20, y, 300, kLevel - 4, "#dde1e7", bottom) << label(30, y + 13, bottom);
    y += kLevel;
    above = bottom;
  }
  // The colour scale.
  y += 6;
  for (int i = 0; i < 20; ++i) svg << rect(20 + i * 10, y, 10, 10, heat_colour(i / 19.0), "");
  svg << label(20, y + 24, "0%") << label(220, y + 24, "100% utilisation", "end")
      << label(240, y + 9, "thin: the tier's mean; thick: its busiest port");
  o << svg_open(static_cast<int>(y) + 32, "fabric tiers coloured by link utilisation") << svg.str()
    << "</svg>\n";
  if (!any_bytes) {
    o << note(
        "No payload was routed over the fabric's links in this run's own simulation (0 bytes on "
        "every tier): the step's collectives were timed on private idle-fabric runs or in closed "
        "form, so the result holds no utilisation.");
  }
  o << note(
      "Utilisation: payload bytes x 8 / (line rate x simulated time); headers not counted, "
      "so a saturated port reads about 98%.");
  o << "</section>\n";
  return o.str();
}

std::string step_section(const RunInput& in) {
  const json* step = in.number("step_time_s");
  if (step == nullptr) {
    return "<section id=\"step\"><h2>Step breakdown</h2>\n" +
           note(
               "No training step: the scenario has no <code>workload:</code>, so there is no "
               "step breakdown.") +
           "</section>\n";
  }
  const double step_s = step->get<double>();
  static constexpr std::array<std::pair<const char*, const char*>, 4> kShares{
      {{"compute", "compute"},
       {"exposed_communication", "exposed communication"},
       {"pipeline_bubble", "pipeline bubble"},
       {"optimizer", "optimizer"}}};
  std::ostringstream o;
  o << "<section id=\"step\" data-expect-svg><h2>Step breakdown: " << seconds(step_s) << "</h2>\n";
  o << svg_open(100, "the step's shares as one bar");
  double x = 10;
  for (std::size_t i = 0; i < kShares.size(); ++i) {
    const json* share = in.number(std::string("step_shares.") + kShares[i].first);
    if (share == nullptr) continue;
    const double f = share->get<double>();
    const double w = f * (kWidth - 20);
    const std::string text =
        std::string(kShares[i].second) + " " + seconds(f * step_s) + " (" + percent(f) + ")";
    o << rect(x, 10, w, 34, category_colour(i), text);
    const double legend_x = 10 + 315.0 * static_cast<double>(i % 2);
    const double legend_y = 56 + 20.0 * (i < 2 ? 0.0 : 1.0);
    o << rect(legend_x, legend_y, 10, 10, category_colour(i), "")
      << label(legend_x + 14, legend_y + 9, text);
    x += w;
  }
  o << "</svg>\n<table>\n";
  for (const auto& [key, name] : std::array<std::pair<const char*, const char*>, 7>{
           {{"forward_s", "forward"},
            {"backward_s", "backward"},
            {"optimizer_s", "optimizer"},
            {"sync_s", "synchronisation busy"},
            {"exposed_comm_s", "exposed communication"},
            {"tail_s", "tail after backward"},
            {"pipeline_bubble_s", "pipeline bubble"}}}) {
    if (const json* v = in.number(key)) {
      o << "<tr><td>" << name << "</td><td class=\"v\">" << seconds(v->get<double>())
        << "</td></tr>\n";
    }
  }
  o << "</table>\n</section>\n";
  return o.str();
}

namespace {

// Intervals of one communication lane, [start, end) in seconds.
struct Lane {
  std::string name;
  std::vector<std::pair<double, double>> spans;
};

// Beyond this many intervals the lane is cut (a page stays a few MB at most); the page says so.
constexpr std::size_t kMaxSpans = 4000;

}  // namespace

std::string timeline_section(const RunInput& in) {
  const json& ranks = in.list("rank_timeline");
  const json* step = in.number("step_time_s");
  if (step == nullptr || ranks.empty() || !(step->get<double>() > 0)) {
    return "<section id=\"timeline\"><h2>Per-rank timeline</h2>\n" +
           note(step == nullptr ? "No training step, so no per-rank timeline."
                                : "No <code>rank_timeline</code> to draw (a result of an older "
                                  "syncsim, a step without per-rank times, or one of zero "
                                  "length).") +
           "</section>\n";
  }
  const double step_s = step->get<double>();
  const json* opt = in.number("optimizer_s");
  const double optimizer_s = opt != nullptr ? opt->get<double>() : 0.0;
  // Communication: the DDP buckets' all-reduces, or the FSDP collectives by kind. The closed form
  // lists one row per kind with its duration, not a time on the step: nothing to place.
  std::vector<Lane> lanes;
  bool cut = false;
  auto add = [&](const std::string& lane_name, double start, double end) {
    auto it = std::find_if(lanes.begin(), lanes.end(),
                           [&](const Lane& l) { return l.name == lane_name; });
    if (it == lanes.end()) it = lanes.insert(lanes.end(), Lane{lane_name, {}});
    if (it->spans.size() >= kMaxSpans) {
      cut = true;
      return;
    }
    it->spans.emplace_back(start, end);
  };
  for (const json& b : in.list("buckets")) {
    add("all-reduce (buckets)", in.member(b, "buckets", "start_s"),
        in.member(b, "buckets", "end_s"));
  }
  const json* engine = in.find("engine");
  const bool closed_form = engine != nullptr && engine->is_string() && *engine == "closed_form";
  if (!closed_form) {
    for (const json& c : in.list("collectives")) {
      const std::string kind = c.is_object() && c.contains("kind") ? text_of(c["kind"]) : "?";
      add(kind, in.member(c, "collectives", "start_s"), in.member(c, "collectives", "end_s"));
    }
  }
  constexpr int kTimelineWidth = 1000;
  constexpr double kLeft = 100;
  constexpr int kRow = 22;
  const double span_w = kTimelineWidth - kLeft - 10;
  const auto x_of = [&](double t) { return kLeft + span_w * std::clamp(t / step_s, 0.0, 1.0); };
  const int rows = static_cast<int>(ranks.size() + lanes.size());
  const int height = 20 + rows * kRow + 44;
  std::ostringstream o;
  o << "<section id=\"timeline\" class=\"wide\" data-expect-svg><h2>Per-rank timeline (first "
    << ranks.size() << " ranks)</h2>\n";
  o << svg_open(height, "per-rank compute and the step's communication over time", kTimelineWidth);
  double y = 10;
  for (const json& r : ranks) {
    const double bs = in.member(r, "rank_timeline", "backward_start_s");
    const double be = in.member(r, "rank_timeline", "backward_end_s");
    const std::string rank = "rank " + number(in.member(r, "rank_timeline", "rank"));
    o << label(6, y + 13, rank);
    o << rect(x_of(0), y, x_of(bs) - x_of(0), kRow - 6, category_colour(0),
              rank + ": forward (and earlier micro-batches) 0 - " + seconds(bs));
    o << rect(x_of(bs), y, x_of(be) - x_of(bs), kRow - 6, category_colour(4),
              rank + ": last backward " + seconds(bs) + " - " + seconds(be));
    if (optimizer_s > 0) {
      o << rect(x_of(step_s - optimizer_s), y, x_of(step_s) - x_of(step_s - optimizer_s), kRow - 6,
                category_colour(3), rank + ": optimizer " + seconds(optimizer_s));
    }
    y += kRow;
  }
  for (std::size_t l = 0; l < lanes.size(); ++l) {
    o << label(6, y + 13, lanes[l].name);
    for (const auto& [start, end] : lanes[l].spans) {
      o << rect(x_of(start), y, x_of(end) - x_of(start), kRow - 6, category_colour(1 + 4 * l),
                lanes[l].name + " " + seconds(start) + " - " + seconds(end));
    }
    y += kRow;
  }
  for (int tick = 0; tick <= 4; ++tick) {
    const double t = step_s * tick / 4.0;
    o << "<line x1=\"" << x_of(t) << "\" y1=\"6\" x2=\"" << x_of(t) << "\" y2=\"" << y
      << "\" stroke=\"#dde1e7\"/>\n"
      << label(x_of(t), y + 14, seconds(t), tick == 0 ? "start" : (tick == 4 ? "end" : "middle"));
  }
  o << rect(kLeft, y + 24, 10, 10, category_colour(0), "") << label(kLeft + 14, y + 33, "forward")
    << rect(kLeft + 90, y + 24, 10, 10, category_colour(4), "")
    << label(kLeft + 104, y + 33, "backward")
    << rect(kLeft + 190, y + 24, 10, 10, category_colour(3), "")
    << label(kLeft + 204, y + 33, "optimizer");
  o << "</svg>\n";
  if (!lanes.empty()) {
    o << note(
        "Communication lanes are the step's collectives, the same on every rank in this "
        "model.");
  }
  if (closed_form) {
    o << note(
        "Closed-form engine (model parallelism): its collectives are durations per kind, "
        "not placed on the step, so no communication lane is drawn.");
  }
  if (cut) o << note("Only the first 4000 intervals of a lane are drawn.");
  o << "</section>\n";
  return o.str();
}

std::string ports_section(const RunInput& in) {
  std::ostringstream o;
  const json* fidelity = in.find("fidelity");
  const bool packet = fidelity != nullptr && *fidelity == "packet";
  const json& top = in.list("pfc.top_paused_ports");
  const json* sim = in.number("sim_time_s");
  const double sim_s = sim != nullptr ? sim->get<double>() : 0.0;
  o << "<section id=\"ports\"" << (top.empty() ? "" : " data-expect-svg")
    << "><h2>Paused ports and congested links</h2>\n";
  if (!packet) {
    o << note("This is a " + escape(fidelity != nullptr ? text_of(*fidelity) : "?") +
              "-fidelity run: PFC pauses and queues exist only at packet fidelity, so there are no "
              "paused ports or queue depths.");
  } else if (top.empty()) {
    o << note("No egress port was paused (PFC) in this run.");
  } else {
    const double longest =
        std::max(in.member(top.front(), "pfc.top_paused_ports", "paused_time_s"), 1e-30);
    o << svg_open(static_cast<int>(top.size()) * 24 + 10, "the most paused egress ports");
    double y = 6;
    for (const json& p : top) {
      const std::string port = p.is_object() && p.contains("port") ? text_of(p["port"]) : "?";
      const double paused = in.member(p, "pfc.top_paused_ports", "paused_time_s");
      const double share = sim_s > 0 ? paused / sim_s : 0.0;
      o << label(6, y + 13, port)
        << rect(190, y, 240 * paused / longest, 17, heat_colour(share),
                port + " paused " + seconds(paused))
        << label(438, y + 13, seconds(paused) + " (" + percent(share) + " of the run)");
      y += 24;
    }
    o << "</svg>\n";
  }
  o << "<table>\n";
  const auto row = [&](const std::string& name, const std::string& value) {
    o << "<tr><td>" << name << "</td><td class=\"v\">" << value << "</td></tr>\n";
  };
  if (packet) {
    if (const json* v = in.number("pfc.pause_frames")) row("PAUSE frames", v->dump());
    if (const json* v = in.number("pfc.paused_time_s")) {
      row("paused time, all ports", seconds(v->get<double>()));
    }
  }
  if (const json* q = in.find("queue.port")) {
    const json* mean = in.number("queue.mean_bytes");
    const json* p99 = in.number("queue.p99_bytes");
    row("busiest queue " + escape(text_of(*q)),
        "mean " + (mean ? bytes(mean->get<double>()) : "?") + ", p99 " +
            (p99 ? bytes(p99->get<double>()) : "?"));
  }
  if (packet) {
    if (const json* v = in.number("max_queue_bytes")) row("deepest queue", bytes(v->get<double>()));
  }
  if (const json* d = in.find("drops"); d != nullptr && d->is_object()) {
    for (const auto& [reason, n] : d->items()) {
      if (reason != "buffer_full_packets" && n.is_number() && n.get<double>() > 0) {
        row("drops: " + escape(reason), n.dump());
      }
    }
  }
  // The congested links: each tier's busiest port.
  for (const json& t : in.list("link_tiers")) {
    const double max = in.member(t, "link_tiers", "max_utilisation");
    if (max > 0) {
      row("busiest " + escape(t.contains("tier") ? text_of(t["tier"]) : "?") + " port",
          percent(max) + " utilised");
    }
  }
  o << "</table>\n";
  if (packet && !in.find("queue.port")) {
    o << note(
        "Queue depths per port need <code>syncsim run --counters FILE</code> (the "
        "<code>queue.*</code> keys).");
  }
  o << "</section>\n";
  return o.str();
}

}  // namespace syncsim::app::report
