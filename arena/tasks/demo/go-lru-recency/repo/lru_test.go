package lru

import "testing"

func TestNewRejectsZeroCapacity(t *testing.T) {
	if _, err := New(0); err != ErrCapacity {
		t.Fatalf("New(0) error = %v", err)
	}
}

func TestEvictsOldestWhenFull(t *testing.T) {
	c, _ := New(2)
	var evicted []string
	c.OnEvict = func(k string) { evicted = append(evicted, k) }
	c.Put("a", []byte("1"))
	c.Put("b", []byte("2"))
	c.Put("c", []byte("3"))
	if _, ok := c.Get("a"); ok {
		t.Error("a should have been evicted")
	}
	if len(evicted) != 1 || evicted[0] != "a" {
		t.Errorf("evicted = %v", evicted)
	}
}

func TestGetMissing(t *testing.T) {
	c, _ := New(1)
	if _, ok := c.Get("nope"); ok {
		t.Error("found a key never stored")
	}
}
