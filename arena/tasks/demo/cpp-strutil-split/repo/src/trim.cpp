#include "strutil/strutil.hpp"

namespace strutil {

namespace {
constexpr std::string_view kSpace = " \t\r\n";
}

std::string trim(std::string_view text) {
    std::size_t first = text.find_first_not_of(kSpace);
    std::size_t last = text.find_last_not_of(kSpace);
    return std::string(text.substr(first, last - first + 1));
}

}  // namespace strutil
