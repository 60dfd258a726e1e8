// gpuprof/axes.hpp: named parameter axes, the points they span, and the name
// of a benchmark row at a point.
//
// ```cpp
// #include <gpuprof/axes.hpp>
// #include <iostream>
// int main() {
//   const gpuprof::Axes axes = gpuprof::Axes::product({{"size", {"small", "large"}}, {"ctx", {128, 512}}});
//   for (const gpuprof::AxisPoint& point : axes.points())
//     std::cout << point.row_name("attn") << '\n';  // attn[size=small,ctx=128] ... attn[size=large,ctx=512]
// }
// ```
//
// A value is an integer, a real or a text. Axes::product spans the cartesian
// product (the first axis varies slowest); Axes::list takes the points as
// given, for sweeps whose axes depend on each other. A row's name is
// `benchmark[axis=value,axis=value]` in the order the axes were declared;
// reals are written in the fewest digits that read back exactly (0.1, 1e-05). Names and
// texts may not hold `[`, `]`, `,` or `=`, so a name reads back into its
// values. gpuprof.bench files hold the values too (the row's "axes"), and
// gpuprof-compare matches rows on the benchmark and its axis values, in any
// order.
#pragma once
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <set>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "config.hpp"
#include "detail/number_text.hpp"
#include "error.hpp"

GPUPROF_NAMESPACE_BEGIN

class AxisValue {
 public:
  template <class Integer,
            std::enable_if_t<std::is_integral_v<Integer> && !std::is_same_v<Integer, bool>, int> = 0>
  AxisValue(Integer value) : value_(static_cast<std::int64_t>(value)) {}  // NOLINT: implicit on purpose
  AxisValue(double value) : value_(value) {}                              // NOLINT
  AxisValue(const char* value) : value_(std::string(value)) {}            // NOLINT
  AxisValue(std::string value) : value_(std::move(value)) {}              // NOLINT
  AxisValue(bool) = delete;  // a flag is a text axis ("on", "off"): a literal would become one silently

  bool is_integer() const { return std::holds_alternative<std::int64_t>(value_); }
  bool is_real() const { return std::holds_alternative<double>(value_); }
  bool is_text() const { return std::holds_alternative<std::string>(value_); }
  std::int64_t integer() const;
  double number() const;  // an integer or a real
  const std::string& text() const;
  const std::variant<std::int64_t, double, std::string>& value() const { return value_; }
  // As in a row's name: 128, 0.5, small.
  std::string to_string() const;

 private:
  std::variant<std::int64_t, double, std::string> value_;
};

struct Axis {
  std::string name;
  std::vector<AxisValue> values;
};

// One point: a value per axis, in the axes' order.
class AxisPoint {
 public:
  AxisPoint() = default;
  AxisPoint(std::vector<std::pair<std::string, AxisValue>> values);           // NOLINT: implicit on purpose
  AxisPoint(std::initializer_list<std::pair<std::string, AxisValue>> values)  // {{"ctx", 128}, ...}
      : AxisPoint(std::vector<std::pair<std::string, AxisValue>>(values)) {}

  const std::vector<std::pair<std::string, AxisValue>>& values() const { return values_; }
  bool empty() const { return values_.empty(); }
  // The value of axis `name`; throws gpuprof::Error when the point has none.
  const AxisValue& operator[](const std::string& name) const;
  std::int64_t integer(const std::string& name) const { return (*this)[name].integer(); }
  double number(const std::string& name) const { return (*this)[name].number(); }
  const std::string& text(const std::string& name) const { return (*this)[name].text(); }
  // "benchmark[axis=value,...]"; the benchmark's name alone at a point of no axes.
  std::string row_name(const std::string& benchmark) const;

 private:
  std::vector<std::pair<std::string, AxisValue>> values_;
};

class Axes {
 public:
  // Every combination of the axes' values; the last axis varies fastest.
  static Axes product(const std::vector<Axis>& axes);
  // These points, in this order; each names the same axes in the same order.
  static Axes list(std::vector<AxisPoint> points);
  const std::vector<AxisPoint>& points() const { return points_; }

 private:
  std::vector<AxisPoint> points_;
};

namespace detail {

// Names and texts that keep a row name readable back into its values.
inline void check_axis_text(const std::string& text, const std::string& what) {
  if (text.empty()) throw Error("gpuprof axes: " + what + " is empty");
  if (text.find_first_of("[],=") != std::string::npos)
    throw Error("gpuprof axes: " + what + " \"" + text +
                "\" holds one of [ ] , = (they delimit a row's name)");
}

inline void check_axis_value(const std::string& axis, const AxisValue& value) {
  if (value.is_text()) check_axis_text(value.text(), "a value of axis " + axis);
  if (value.is_real() && !std::isfinite(value.number()))
    throw Error("gpuprof axes: a value of axis " + axis + " is not finite");
}

}  // namespace detail

inline std::int64_t AxisValue::integer() const {
  if (!is_integer()) throw Error("gpuprof axes: the value " + to_string() + " is not an integer");
  return std::get<std::int64_t>(value_);
}

inline double AxisValue::number() const {
  if (is_text()) throw Error("gpuprof axes: the value " + to_string() + " is not a number");
  return is_integer() ? static_cast<double>(std::get<std::int64_t>(value_)) : std::get<double>(value_);
}

inline const std::string& AxisValue::text() const {
  if (!is_text()) throw Error("gpuprof axes: the value " + to_string() + " is not a text");
  return std::get<std::string>(value_);
}

inline std::string AxisValue::to_string() const {
  if (is_integer()) return std::to_string(std::get<std::int64_t>(value_));
  if (is_real()) return detail::shortest_decimal(std::get<double>(value_));
  return std::get<std::string>(value_);
}

inline AxisPoint::AxisPoint(std::vector<std::pair<std::string, AxisValue>> values)
    : values_(std::move(values)) {
  std::set<std::string> names;
  for (const auto& [name, value] : values_) {
    detail::check_axis_text(name, "an axis name");
    if (!names.insert(name).second) throw Error("gpuprof axes: axis " + name + " is named twice in a point");
    detail::check_axis_value(name, value);
  }
}

inline const AxisValue& AxisPoint::operator[](const std::string& name) const {
  for (const auto& [axis, value] : values_)
    if (axis == name) return value;
  throw Error("gpuprof axes: the point " + row_name("") + " has no axis " + name);
}

inline std::string AxisPoint::row_name(const std::string& benchmark) const {
  if (values_.empty()) return benchmark;
  std::string name = benchmark + "[";
  for (std::size_t i = 0; i < values_.size(); ++i)
    name += (i ? "," : "") + values_[i].first + "=" + values_[i].second.to_string();
  return name + "]";
}

namespace detail {

// Points of one sweep: the same axes in the same order, one kind of value per
// axis (1 and 1.0 would share a name), no point twice.
inline void check_points(const std::vector<AxisPoint>& points) {
  if (points.empty()) throw Error("gpuprof axes: no points");
  const auto& first = points.front().values();
  std::set<std::string> names;
  for (const AxisPoint& point : points) {
    const auto& values = point.values();
    bool same_axes = values.size() == first.size();
    for (std::size_t i = 0; same_axes && i < values.size(); ++i)
      same_axes = values[i].first == first[i].first;
    if (!same_axes)
      throw Error("gpuprof axes: the point " + point.row_name("") + " does not name the axes of " +
                  points.front().row_name("") + " in their order");
    for (std::size_t i = 0; i < values.size(); ++i)
      if (values[i].second.value().index() != first[i].second.value().index())
        throw Error("gpuprof axes: axis " + first[i].first + " mixes integers, reals and texts (" +
                    first[i].second.to_string() + ", " + values[i].second.to_string() + ")");
    if (!names.insert(point.row_name("")).second)
      throw Error("gpuprof axes: the point " + point.row_name("") + " comes twice");
  }
}

}  // namespace detail

inline Axes Axes::product(const std::vector<Axis>& axes) {
  std::set<std::string> names;
  for (const Axis& axis : axes) {
    detail::check_axis_text(axis.name, "an axis name");
    if (!names.insert(axis.name).second) throw Error("gpuprof axes: two axes are named " + axis.name);
    if (axis.values.empty()) throw Error("gpuprof axes: axis " + axis.name + " has no values");
  }
  Axes result;
  std::vector<std::pair<std::string, AxisValue>> point;
  // Depth-first over the axes: the last one varies fastest.
  const auto span = [&](const auto& self, std::size_t axis) -> void {
    if (axis == axes.size()) {
      result.points_.emplace_back(point);
      return;
    }
    for (const AxisValue& value : axes[axis].values) {
      point.emplace_back(axes[axis].name, value);
      self(self, axis + 1);
      point.pop_back();
    }
  };
  span(span, 0);
  detail::check_points(result.points_);
  return result;
}

inline Axes Axes::list(std::vector<AxisPoint> points) {
  detail::check_points(points);
  Axes result;
  result.points_ = std::move(points);
  return result;
}

GPUPROF_NAMESPACE_END
