#include "check.hpp"

#include <ring/ring_buffer.hpp>
#include <ring/stats.hpp>

using ring::RingBuffer;

TEST(push_and_pop_in_order) {
    RingBuffer<int, 3> buf;
    buf.push(1);
    buf.push(2);
    CHECK(buf.size() == 2);
    CHECK(*buf.pop() == 1);
    CHECK(*buf.pop() == 2);
    CHECK(buf.empty());
}

TEST(pop_from_empty) {
    RingBuffer<int, 2> buf;
    CHECK(!buf.pop().has_value());
}

TEST(overwrites_oldest_when_full) {
    RingBuffer<int, 2> buf;
    buf.push(1);
    buf.push(2);
    buf.push(3);
    CHECK(buf.full());
    CHECK(*buf.pop() == 2);
    CHECK(*buf.pop() == 3);
}

int main(int argc, char** argv) { return check::run(argc, argv); }
