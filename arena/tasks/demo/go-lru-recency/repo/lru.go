// Package lru is a fixed-capacity least-recently-used cache.
package lru

import "errors"

// ErrCapacity is returned by New for a capacity below one.
var ErrCapacity = errors.New("lru: capacity must be at least 1")

// Cache maps keys to values, evicting the least recently used entry when full.
type Cache struct {
	capacity int
	items    map[string]*entry
	order    *list
	// OnEvict, when set, is called with each evicted key.
	OnEvict func(key string)
}

// New makes an empty cache holding at most capacity entries.
func New(capacity int) (*Cache, error) {
	if capacity < 1 {
		return nil, ErrCapacity
	}
	return &Cache{capacity: capacity, items: make(map[string]*entry), order: newList()}, nil
}

// Len is the number of entries in the cache.
func (c *Cache) Len() int { return c.order.len }

// Get returns the value for key and marks it as recently used.
func (c *Cache) Get(key string) ([]byte, bool) {
	e, ok := c.items[key]
	if !ok {
		return nil, false
	}
	return e.value, true
}

// Peek returns the value for key without touching its recency.
func (c *Cache) Peek(key string) ([]byte, bool) {
	e, ok := c.items[key]
	if !ok {
		return nil, false
	}
	return e.value, true
}

// Contains reports whether key is cached, without touching its recency.
func (c *Cache) Contains(key string) bool {
	_, ok := c.items[key]
	return ok
}

// Put stores value under key, evicting the least recently used entry if full.
func (c *Cache) Put(key string, value []byte) {
	e := &entry{key: key, value: value}
	c.items[key] = e
	c.order.pushFront(e)
	if c.order.len > c.capacity {
		c.evict()
	}
}

func (c *Cache) evict() {
	oldest := c.order.back()
	if oldest == nil {
		return
	}
	c.order.remove(oldest)
	delete(c.items, oldest.key)
	if c.OnEvict != nil {
		c.OnEvict(oldest.key)
	}
}
