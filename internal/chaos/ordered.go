package chaos

import (
	"fmt"
	"sync"
)

// KeyOrder records, per ordering key, the sequences of the ordered events the
// consumer received, in the order it first received each event: a second
// reception of an event (by id) is a duplicate, which the Tally counts, not
// a step back in its key's order. It is safe for concurrent use.
type KeyOrder struct {
	mu   sync.Mutex
	seen map[string]struct{}
	keys map[string]*keySequences
	// inversions counts first receptions of a sequence below one of its
	// key already received; unsequenced the events received without an
	// ordering key or a sequence.
	inversions, unsequenced int
	// examples describes the first inversions, for the log.
	examples []string
}

// keySequences is what one ordering key's events showed: the highest sequence
// received and every sequence received.
type keySequences struct {
	max      int64
	received map[int64]struct{}
}

// maxOrderExamples bounds the inversions KeyOrder describes.
const maxOrderExamples = 10

// NewKeyOrder returns an empty KeyOrder.
func NewKeyOrder() *KeyOrder {
	return &KeyOrder{seen: map[string]struct{}{}, keys: map[string]*keySequences{}}
}

// Received records a reception of the event id, of ordering key key with
// sequence seq (0 and "" for an unordered event).
func (o *KeyOrder) Received(id, key string, seq int64) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if _, again := o.seen[id]; again {
		return
	}
	o.seen[id] = struct{}{}
	if key == "" || seq <= 0 {
		o.unsequenced++
		return
	}
	k := o.keys[key]
	if k == nil {
		k = &keySequences{received: map[int64]struct{}{}}
		o.keys[key] = k
	}
	if seq < k.max {
		o.inversions++
		if len(o.examples) < maxOrderExamples {
			o.examples = append(o.examples, fmt.Sprintf("ordering key %q: sequence %d (event %s) after %d", key, seq, id, k.max))
		}
	}
	k.max = max(k.max, seq)
	k.received[seq] = struct{}{}
}

// Fill sets the order's counts of r (Counts): Inversions, Gaps and
// Unsequenced, and marks r Ordered.
func (o *KeyOrder) Fill(r *Result) {
	r.Ordered = true
	r.Inversions, r.Gaps, r.Unsequenced = o.Counts()
}

// Counts returns the inversions, the gaps (for each key, the sequences
// from 1 to its highest that were never received) and the events received
// without an ordering key or a sequence.
func (o *KeyOrder) Counts() (inversions, gaps, unsequenced int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, k := range o.keys {
		gaps += int(k.max) - len(k.received)
	}
	return o.inversions, gaps, o.unsequenced
}

// Keys is how many ordering keys the consumer received events of.
func (o *KeyOrder) Keys() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return len(o.keys)
}

// Examples describes the first inversions.
func (o *KeyOrder) Examples() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]string(nil), o.examples...)
}

// orderProblems adds to v the violations of an ordered run's order: none
// for a run that is not ordered.
func (r Result) orderProblems(v *violations) {
	if !r.Ordered {
		return
	}
	v.add(r.Inversions != 0, "%d events were first received after a later event of their ordering key", r.Inversions)
	v.add(r.Gaps != 0, "%d sequences below their ordering key's highest received were never received", r.Gaps)
	v.add(r.Unsequenced != 0, "%d events were received without an ordering key and a sequence", r.Unsequenced)
}
