#include "run/report_format.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>

namespace syncsim::app::report {

std::string escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string number(double v) {
  if (!std::isfinite(v)) return "n/a";
  std::array<char, 32> buf{};
  std::snprintf(buf.data(), buf.size(), "%.3g", v);
  return buf.data();
}

namespace {

// v / scale with the unit of the largest scale not above |v| (the last one below the smallest).
struct Scale {
  double factor;
  const char* unit;
};

template <std::size_t N>
std::string scaled(double v, const std::array<Scale, N>& scales) {
  if (!std::isfinite(v)) return "n/a";
  if (v == 0) return "0";
  for (const Scale& s : scales) {
    if (std::fabs(v) >= s.factor) return number(v / s.factor) + " " + s.unit;
  }
  return number(v / scales.back().factor) + " " + scales.back().unit;
}

}  // namespace

std::string seconds(double s) {
  static constexpr std::array<Scale, 4> kScales{
      {{1, "s"}, {1e-3, "ms"}, {1e-6, "us"}, {1e-9, "ns"}}};
  return scaled(s, kScales);
}

std::string bytes(double b) {
  static constexpr std::array<Scale, 5> kScales{
      {{1e12, "TB"}, {1e9, "GB"}, {1e6, "MB"}, {1e3, "kB"}, {1, "B"}}};
  return scaled(b, kScales);
}

std::string bits_per_second(double bps) {
  static constexpr std::array<Scale, 5> kScales{
      {{1e12, "Tb/s"}, {1e9, "Gb/s"}, {1e6, "Mb/s"}, {1e3, "kb/s"}, {1, "b/s"}}};
  return scaled(bps, kScales);
}

std::string percent(double fraction) {
  if (!std::isfinite(fraction)) return "n/a";
  std::array<char, 32> buf{};
  std::snprintf(buf.data(), buf.size(), "%.1f%%", fraction * 100);
  return buf.data();
}

std::string heat_colour(double fraction) {
  // ColorBrewer YlOrRd, 5 classes: #ffffb2 #fecc5c #fd8d3c #f03b20 #bd0026.
  static constexpr std::array<std::array<int, 3>, 5> kStops{
      {{255, 255, 178}, {254, 204, 92}, {253, 141, 60}, {240, 59, 32}, {189, 0, 38}}};
  const double f = std::isfinite(fraction) ? std::clamp(fraction, 0.0, 1.0) : 0.0;
  const double pos = f * (kStops.size() - 1);
  const auto i = std::min(static_cast<std::size_t>(pos), kStops.size() - 2);
  const double t = pos - static_cast<double>(i);
  std::array<char, 8> buf{};
  std::array<int, 3> rgb{};
  for (std::size_t c = 0; c < 3; ++c) {
    rgb[c] = static_cast<int>(std::lround(kStops[i][c] + t * (kStops[i + 1][c] - kStops[i][c])));
  }
  std::snprintf(buf.data(), buf.size(), "#%02x%02x%02x", rgb[0], rgb[1], rgb[2]);
  return buf.data();
}

std::string category_colour(std::size_t index) {
  static constexpr std::array<const char*, 7> kOkabeIto{"#0072B2", "#E69F00", "#009E73", "#CC79A7",
                                                        "#56B4E9", "#D55E00", "#F0E442"};
  return kOkabeIto[index % kOkabeIto.size()];
}

}  // namespace syncsim::app::report
