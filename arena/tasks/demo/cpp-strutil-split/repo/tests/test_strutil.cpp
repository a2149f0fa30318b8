#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <strutil/strutil.hpp>

#define CHECK(cond)                                                              \
    do {                                                                         \
        if (!(cond)) {                                                           \
            std::fprintf(stderr, "%s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, #cond); \
            std::exit(1);                                                        \
        }                                                                        \
    } while (0)

using Parts = std::vector<std::string>;

static void split_simple() { CHECK((strutil::split("a,b,c", ',') == Parts{"a", "b", "c"})); }

static void split_no_delimiter() { CHECK((strutil::split("abc", ',') == Parts{"abc"})); }

static void trim_both_ends() { CHECK(strutil::trim("  x y\t\n") == "x y"); }

static void join_round_trip() {
    CHECK(strutil::join(strutil::split("k=v;x=y", ';'), ';') == "k=v;x=y");
}

struct Case {
    const char* name;
    void (*fn)();
};

static const Case kCases[] = {
    {"split_simple", split_simple},
    {"split_no_delimiter", split_no_delimiter},
    {"trim_both_ends", trim_both_ends},
    {"join_round_trip", join_round_trip},
};

int main(int argc, char** argv) {
    if (argc != 2) return 2;
    for (const Case& c : kCases) {
        if (std::strcmp(c.name, argv[1]) == 0) {
            c.fn();
            return 0;
        }
    }
    std::fprintf(stderr, "no test named %s\n", argv[1]);
    return 2;
}
