#pragma once

#include <cstddef>

namespace ring {

// mean of the values held, 0 for an empty buffer.
template <typename Buffer>
double mean(const Buffer& buffer) {
    if (buffer.empty()) {
        return 0.0;
    }
    double sum = 0.0;
    for (std::size_t i = 0; i < buffer.size(); ++i) {
        sum += buffer.at(i);
    }
    return sum / static_cast<double>(buffer.size());
}

}  // namespace ring
