package dynamodb

import (
	"container/heap"
	"fmt"

	mini "github.com/outboxkit/terraform-provider-outbox/third_party/minidyn/server"
)

// ttlMaxAge is how far in the past a TTL value may be and still expire
// its item: AWS leaves alone items whose TTL attribute is more than five
// years old.
const ttlMaxAge = 5 * 365 * 24 * 3600

// ttlSweepBatch bounds the items one sweep deletes per hold of the lock,
// so that writes interleave with a large sweep.
const ttlSweepBatch = 100

// ttlExpiry reads an item's expiry (epoch seconds) from its TTL
// attribute; false when the attribute is absent or not a number.
func ttlExpiry(it Item, attr string) (int64, bool) {
	v, ok := it[attr]
	if !ok || v == nil || v.N == nil {
		return 0, false
	}
	var exp float64
	if _, err := fmt.Sscan(*v.N, &exp); err != nil {
		return 0, false
	}
	return int64(exp), true
}

// ttlIndex holds, for a table with TTL enabled, the items whose TTL
// attribute is a number, ordered by expiry in a min-heap, so that a sweep
// reads only the items that have expired. Every write path updates it
// (Service.emitLocked); enabling TTL builds it from one scan.
//
// Entries more than five years in the past when a sweep reaches them are
// parked out of the heap: the clock only moves on, so they never expire.
// Should the stack's clock go back, they return to the heap.
type ttlIndex struct {
	attr    string
	entries map[string]*ttlEntry // by canonical key
	heap    ttlHeap
	lastNow int64 // clock of the last sweep
}

type ttlEntry struct {
	id  string
	key Item
	exp int64
	pos int // position in heap; -1 when parked
}

func newTTLIndex(attr string) *ttlIndex {
	return &ttlIndex{attr: attr, entries: map[string]*ttlEntry{}}
}

// note records an item's state after a write: its expiry, or nothing when
// it is gone or has no numeric TTL attribute.
func (ix *ttlIndex) note(key, item Item) {
	id := string(canonical(key))
	exp, ok := ttlExpiry(item, ix.attr)
	if item == nil || !ok {
		ix.remove(id)
		return
	}
	ix.set(id, key, exp)
}

func (ix *ttlIndex) set(id string, key Item, exp int64) {
	e, ok := ix.entries[id]
	if !ok {
		e = &ttlEntry{id: id, key: key, pos: -1}
		ix.entries[id] = e
	}
	e.exp = exp
	if e.pos < 0 {
		heap.Push(&ix.heap, e)
	} else {
		heap.Fix(&ix.heap, e.pos)
	}
}

func (ix *ttlIndex) remove(id string) {
	e, ok := ix.entries[id]
	if !ok {
		return
	}
	if e.pos >= 0 {
		heap.Remove(&ix.heap, e.pos)
	}
	delete(ix.entries, id)
}

// next returns the entry with the earliest expiry if it is at or before
// now, parking the entries too old to expire; nil when none is due.
func (ix *ttlIndex) next(now int64) *ttlEntry {
	if now < ix.lastNow && len(ix.entries) > len(ix.heap) {
		for _, e := range ix.entries {
			if e.pos < 0 {
				heap.Push(&ix.heap, e)
			}
		}
	}
	ix.lastNow = now
	for len(ix.heap) > 0 {
		e := ix.heap[0]
		if e.exp > now {
			return nil
		}
		if e.exp >= now-ttlMaxAge {
			return e
		}
		heap.Pop(&ix.heap)
	}
	return nil
}

type ttlHeap []*ttlEntry

func (h ttlHeap) Len() int           { return len(h) }
func (h ttlHeap) Less(i, j int) bool { return h[i].exp < h[j].exp }
func (h ttlHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].pos, h[j].pos = i, j
}

func (h *ttlHeap) Push(x any) {
	e, ok := x.(*ttlEntry)
	if !ok {
		return
	}
	e.pos = len(*h)
	*h = append(*h, e)
}

func (h *ttlHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	e.pos = -1
	return e
}

// indexTTLLocked keeps the table's TTL index in step with written items.
func (s *Service) indexTTLLocked(t *table, changes []change) {
	if t.ttl == nil {
		return
	}
	for _, c := range changes {
		t.ttl.note(c.keys, c.newImage)
	}
}

// buildTTLIndexLocked indexes every item of a table on a TTL attribute.
func (s *Service) buildTTLIndexLocked(t *table, attr string) (*ttlIndex, error) {
	items, err := s.scanAllLocked(t.name)
	if err != nil {
		return nil, err
	}
	ix := newTTLIndex(attr)
	keys := t.keyNames()
	for _, w := range items {
		it := fromWireItem(w)
		ix.note(project(it, keys), it)
	}
	return ix, nil
}

// SweepTTL deletes every expired item of the tables with TTL enabled, as
// the TTL process does, emitting REMOVE records with the service identity.
// Items whose TTL attribute is not a number, or is more than five years in
// the past, are left alone.
//
// A sweep reads only the expired items, through each table's TTL index,
// and holds the lock for at most ttlSweepBatch deletions at a time.
func (s *Service) SweepTTL() {
	now := s.env.Time().Unix()
	s.mu.Lock()
	names := make([]string, 0, len(s.tables))
	for name, t := range s.tables {
		if t.ttlEnabled {
			names = append(names, name)
		}
	}
	s.mu.Unlock()
	for _, name := range names {
		for {
			if done := s.sweepTableBatch(name, now); done {
				break
			}
		}
	}
}

// sweepTableBatch deletes up to ttlSweepBatch expired items of a table
// under the lock; true when none is left to delete.
func (s *Service) sweepTableBatch(name string, now int64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.tables[name]
	if !ok || !t.ttlEnabled || t.ttl == nil {
		return true
	}
	ix := t.ttl
	var changes []change
	defer func() { s.emitLocked(t, changes...) }()
	for range ttlSweepBatch {
		e := ix.next(now)
		if e == nil {
			return true
		}
		old := s.itemLocked(t, e.key)
		if exp, ok := ttlExpiry(old, ix.attr); old == nil || !ok || exp != e.exp {
			// The index is behind the item (a write it missed): catch up.
			ix.note(e.key, old)
			continue
		}
		ix.remove(e.id)
		if _, err := s.engine.DeleteItem(bg, &mini.DeleteItemInput{TableName: &t.name, Key: toWireItem(e.key)}); err != nil {
			continue
		}
		changes = append(changes, change{keys: e.key, oldImage: old, ttl: true})
	}
	return false
}
