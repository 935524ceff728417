package awsapi

import "time"

// Window remembers values by key for a while: the deduplication interval
// of SQS FIFO queues and SNS FIFO topics, the retries of a ReceiveMessage
// attempt. Entries expire in the order they were put, so that remembering
// many keys costs no scan of them all. The zero value is empty; it is not
// safe for concurrent use (its owner's lock guards it).
type Window[V any] struct {
	entries map[string]windowEntry[V]
	order   []windowKey
}

type windowEntry[V any] struct {
	value V
	at    time.Time
}

type windowKey struct {
	key string
	at  time.Time
}

// Get returns the value put under key less than d before now.
func (w *Window[V]) Get(key string, now time.Time, d time.Duration) (V, bool) {
	w.expire(now, d)
	e, ok := w.entries[key]
	if !ok || now.Sub(e.at) >= d {
		var zero V
		return zero, false
	}
	return e.value, true
}

// Put remembers value under key from now on, replacing what key held.
func (w *Window[V]) Put(key string, value V, now time.Time) {
	if w.entries == nil {
		w.entries = map[string]windowEntry[V]{}
	}
	w.entries[key] = windowEntry[V]{value: value, at: now}
	w.order = append(w.order, windowKey{key: key, at: now})
}

// Delete forgets key.
func (w *Window[V]) Delete(key string) { delete(w.entries, key) }

// Len is the number of keys remembered, expired ones not yet dropped
// included.
func (w *Window[V]) Len() int { return len(w.entries) }

// expire drops the entries put d or longer before now.
func (w *Window[V]) expire(now time.Time, d time.Duration) {
	n := 0
	for ; n < len(w.order) && now.Sub(w.order[n].at) >= d; n++ {
		k := w.order[n]
		if e, ok := w.entries[k.key]; ok && e.at.Equal(k.at) {
			delete(w.entries, k.key)
		}
	}
	w.order = w.order[n:]
}
