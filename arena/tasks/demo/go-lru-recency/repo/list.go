package lru

// entry is a node of the recency list; the most recently used entry is at the front.
type entry struct {
	key        string
	value      []byte
	prev, next *entry
}

// list is a doubly linked list with a sentinel root.
type list struct {
	root entry
	len  int
}

func newList() *list {
	l := &list{}
	l.root.next = &l.root
	l.root.prev = &l.root
	return l
}

func (l *list) pushFront(e *entry) {
	e.prev = &l.root
	e.next = l.root.next
	l.root.next.prev = e
	l.root.next = e
	l.len++
}

func (l *list) remove(e *entry) {
	e.prev.next = e.next
	e.next.prev = e.prev
	e.prev, e.next = nil, nil
	l.len--
}

func (l *list) moveToFront(e *entry) {
	if l.root.next == e {
		return
	}
	l.remove(e)
	l.pushFront(e)
}

func (l *list) back() *entry {
	if l.len == 0 {
		return nil
	}
	return l.root.prev
}
