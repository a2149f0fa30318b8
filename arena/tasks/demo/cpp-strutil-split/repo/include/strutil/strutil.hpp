#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace strutil {

// split("a,b", ',') == {"a", "b"}; every delimiter separates two fields.
std::vector<std::string> split(std::string_view text, char delimiter);

// join(split(s, d), d) == s for every s.
std::string join(const std::vector<std::string>& parts, char delimiter);

// trim removes spaces, tabs, CR and LF at both ends.
std::string trim(std::string_view text);

}  // namespace strutil
