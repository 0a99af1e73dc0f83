#pragma once
// Text and colour helpers of the report page (run/report_page.hpp): HTML escaping, numbers with
// their unit scaled for reading (1.23 ms, 4.5 GB, 400 Gb/s, 12.3%), and the colour scale the page
// paints utilisation with.
#include <string>
#include <string_view>

namespace syncsim::app::report {

// & < > " ' as entities, so any text of a result (a scenario name, a port) is inert in the page.
std::string escape(std::string_view text);

// Three significant digits: "0.000123" -> "0.000123", "1234567" -> "1.23e+06".
std::string number(double v);
// Seconds as ns / us / ms / s with three significant digits ("1.23 ms").
std::string seconds(double s);
// Bytes in decimal units ("4.19 MB"), as the result keys count them.
std::string bytes(double b);
// bit/s ("400 Gb/s").
std::string bits_per_second(double bps);
// A fraction as a percentage ("12.3%").
std::string percent(double fraction);
// A fraction in [0, 1] (clamped) as an "#rrggbb" colour on a sequential scale from pale yellow
// (idle) through orange to dark red (saturated): the YlOrRd scheme of ColorBrewer
// (https://colorbrewer2.org, Cynthia Brewer, Penn State), interpolated between its 5-class stops.
std::string heat_colour(double fraction);
// The fixed colours of the page's categories (compute, communication, ...): the Okabe-Ito
// palette, distinguishable under the common colour-vision deficiencies
// (https://jfly.uni-koeln.de/color/, Okabe and Ito 2008). Index wraps around.
std::string category_colour(std::size_t index);

}  // namespace syncsim::app::report
