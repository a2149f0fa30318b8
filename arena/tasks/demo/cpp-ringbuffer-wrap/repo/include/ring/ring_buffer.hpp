#pragma once

#include <array>
#include <cstddef>
#include <optional>

namespace ring {

// RingBuffer keeps the most recent Capacity values; push() on a full buffer
// overwrites the oldest value.
template <typename T, std::size_t Capacity>
class RingBuffer {
    static_assert(Capacity > 0, "capacity must be positive");

public:
    void push(const T& value) {
        data_[tail_] = value;
        tail_ = (tail_ + 1) % Capacity;
        if (size_ == Capacity) {
            head_ = (head_ + 1) % Capacity;
        } else {
            ++size_;
        }
    }

    std::optional<T> pop() {
        if (size_ == 0) {
            return std::nullopt;
        }
        T value = data_[head_];
        head_ = (head_ + 1) % Capacity;
        --size_;
        return value;
    }

    // at(i) is the i-th oldest value still held.
    const T& at(std::size_t i) const { return data_[i]; }

    std::size_t size() const { return size_; }
    bool empty() const { return size_ == 0; }
    bool full() const { return size_ == Capacity; }
    static constexpr std::size_t capacity() { return Capacity; }

    // newest() is the value pushed last.
    const T& newest() const { return data_[tail_ > 0 ? tail_ - 1 : 0]; }

private:
    std::array<T, Capacity> data_{};
    std::size_t head_ = 0;
    std::size_t tail_ = 0;
    std::size_t size_ = 0;
};

}  // namespace ring
