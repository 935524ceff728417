package chaos

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/outboxkit/terraform-provider-outbox/internal/tfrun"
	"github.com/outboxkit/terraform-provider-outbox/outbox"
)

// The record contract changes mid-run, while events are pending: an apply
// changes table.sort_key_prefix and lowers pending_index.shards. Writers
// not yet redeployed keep the former contract for a while after the
// apply, then switch to the new one; no event may be stranded, whichever
// contract it was written with and whichever path delivers it.
const (
	newSortKeyPrefix = "EVT#"
	// contractChangeAt is when the apply starts, from the writers' start:
	// the mapping is held then, so every event written so far is pending.
	contractChangeAt = 3 * time.Second
	// formerWritesFor is how long the writers keep the former contract
	// once the apply is done.
	formerWritesFor = 5 * time.Second
)

// contract is one setting of the record contract and a writer that keeps
// it.
type contract struct {
	name  string
	table outbox.Table
	w     *outbox.Writer
	// written counts the events committed with it; afterChange those
	// committed once the new contract was applied.
	written, afterChange atomic.Int64
}

// contractChange is the run's two contracts and where the change stands.
type contractChange struct {
	// newPendingShards is the lower pending_index.shards of the new
	// contract.
	newPendingShards int
	former, next     *contract
	current          atomic.Pointer[contract]
	// applied is set once the new contract is applied; switched is
	// closed when the writers switch to it, or when the change failed.
	applied  atomic.Bool
	switched chan struct{}
	took     time.Duration
}

// newContractChange returns the change from base's settings (those of the
// first apply) to the new prefix and the lower shard count, with writers
// made with opts.
func newContractChange(ddb outbox.TransactWriter, base outbox.Table, newPendingShards int, opts ...outbox.WriterOption) (*contractChange, error) {
	if newPendingShards >= base.PendingShards {
		return nil, fmt.Errorf("the new contract's %d pending shards do not lower the %d of the former", newPendingShards, base.PendingShards)
	}
	next := base
	next.SortKeyPrefix, next.PendingShards = newSortKeyPrefix, newPendingShards
	cc := &contractChange{newPendingShards: newPendingShards, switched: make(chan struct{})}
	for _, c := range []struct {
		dst   **contract
		name  string
		table outbox.Table
	}{{&cc.former, "former", base}, {&cc.next, "new", next}} {
		w, err := outbox.NewWriter(ddb, c.table, opts...)
		if err != nil {
			return nil, fmt.Errorf("the %s contract: %w", c.name, err)
		}
		*c.dst = &contract{name: c.name, table: c.table, w: w}
	}
	cc.current.Store(cc.former)
	return cc, nil
}

// vars are the configuration's variables of the new contract.
func (cc *contractChange) vars() []tfrun.Var {
	return []tfrun.Var{
		{Name: "sort_key_prefix", Value: newSortKeyPrefix},
		{Name: "pending_shards", Value: fmt.Sprint(cc.newPendingShards)},
	}
}

// all returns both contracts.
func (cc *contractChange) all() []*contract { return []*contract{cc.former, cc.next} }

// committed counts an event committed with c.
func (cc *contractChange) committed(c *contract) {
	c.written.Add(1)
	if cc.applied.Load() {
		c.afterChange.Add(1)
	}
}

// run applies the new contract at start+contractChangeAt and switches the
// writers to it formerWritesFor later. A failed apply is reported through
// r.fail and leaves the writers on the former contract.
func (cc *contractChange) run(ctx context.Context, r *run, start time.Time, apply func(context.Context) error) {
	defer close(cc.switched)
	if !sleepUntil(ctx, start.Add(contractChangeAt)) {
		return
	}
	r.t.Logf("contract: applying sort_key_prefix=%q pending_index.shards=%d", newSortKeyPrefix, cc.newPendingShards)
	from := time.Now()
	if err := apply(ctx); err != nil {
		r.fail(fmt.Errorf("applying the new record contract: %w", err))
		return
	}
	cc.took = time.Since(from)
	cc.applied.Store(true)
	r.t.Logf("contract: applied in %s; the writers keep the former contract for %s", cc.took.Round(time.Second), formerWritesFor)
	if !sleepUntil(ctx, time.Now().Add(formerWritesFor)) {
		return
	}
	cc.current.Store(cc.next)
	r.t.Log("contract: the writers switched to the new contract")
}

// String sums the change up for the log.
func (cc *contractChange) String() string {
	return fmt.Sprintf("contract: former=%d (%d after the change) new=%d; applied in %s",
		cc.former.written.Load(), cc.former.afterChange.Load(), cc.next.written.Load(), cc.took.Round(time.Second))
}

// check fails unless events were written with the former contract after
// the change and with the new one.
func (cc *contractChange) check() error {
	var errs []error
	if !cc.applied.Load() {
		errs = append(errs, errors.New("the new record contract was never applied"))
	}
	if cc.former.afterChange.Load() == 0 {
		errs = append(errs, errors.New("no event was written with the former contract after the change"))
	}
	if cc.next.written.Load() == 0 {
		errs = append(errs, errors.New("no event was written with the new contract"))
	}
	return errors.Join(errs...)
}

// pendingShards is the most shards any contract wrote to.
func (cc *contractChange) pendingShards() int {
	return max(cc.former.table.PendingShards, cc.next.table.PendingShards)
}
