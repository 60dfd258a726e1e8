// cpu/checks.hpp: argument checks shared by the CPU layers, so a wrong shape
// or token id from a caller (a test, the backend) is a clear exception rather
// than an out-of-bounds access.
#pragma once
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include <Eigen/Core>

namespace transformer::cpu {

inline void require(bool condition, const char* where, const std::string& what) {
  if (!condition) throw std::invalid_argument(std::string(where) + ": " + what);
}

inline void require_shape(const char* where, const char* name, Eigen::Index rows, Eigen::Index cols,
                          Eigen::Index want_rows, Eigen::Index want_cols) {
  require(rows == want_rows && cols == want_cols, where,
          std::string(name) + " is [" + std::to_string(rows) + ", " + std::to_string(cols) + "], expected [" +
              std::to_string(want_rows) + ", " + std::to_string(want_cols) + "]");
}

// ids.size() == count and every id in [0, limit).
inline void require_ids(const char* where, const std::vector<std::int32_t>& ids, Eigen::Index count,
                        Eigen::Index limit) {
  require(static_cast<Eigen::Index>(ids.size()) == count, where,
          std::to_string(ids.size()) + " ids, expected " + std::to_string(count));
  for (std::size_t i = 0; i < ids.size(); ++i)
    require(ids[i] >= 0 && ids[i] < limit, where,
            "id " + std::to_string(ids[i]) + " at position " + std::to_string(i) + " is outside [0, " +
                std::to_string(limit) + ")");
}

}  // namespace transformer::cpu
