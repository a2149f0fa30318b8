#pragma once
// A tiny test harness: each TEST registers a function; the binary runs the one named
// on its command line, so that ctest sees every test case on its own.

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <string>

namespace check {

inline std::map<std::string, std::function<void()>>& registry() {
    static std::map<std::string, std::function<void()>> tests;
    return tests;
}

struct Register {
    Register(const char* name, std::function<void()> fn) { registry()[name] = std::move(fn); }
};

inline int run(int argc, char** argv) {
    if (argc != 2 || registry().count(argv[1]) == 0) {
        std::fprintf(stderr, "usage: %s TEST (one of:", argv[0]);
        for (const auto& entry : registry()) std::fprintf(stderr, " %s", entry.first.c_str());
        std::fprintf(stderr, ")\n");
        return 2;
    }
    registry()[argv[1]]();
    std::printf("%s passed\n", argv[1]);
    return 0;
}

}  // namespace check

#define TEST(name)                                          \
    static void name();                                     \
    static check::Register name##_registration(#name, name); \
    static void name()

#define CHECK(cond)                                                              \
    do {                                                                         \
        if (!(cond)) {                                                           \
            std::fprintf(stderr, "%s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, #cond); \
            std::exit(1);                                                        \
        }                                                                        \
    } while (0)
