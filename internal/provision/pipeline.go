package provision

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/outboxkit/terraform-provider-outbox/internal/component"
)

// ErrNotFound is returned by Read and Lookup when nothing of the pipeline
// exists any more: the provider removes it from its state.
var ErrNotFound = errors.New("outbox pipeline not found")

// TagAdded is set on the relay function of a pipeline that adopted a table,
// to what it added ("stream,pending_index,ttl"), so that an imported
// pipeline reverts the same things on delete.
const TagAdded = "outbox:added"

// Create builds every component of the pipeline described by s. If a step
// fails, it removes what it built, as component.Create describes.
func (c *Provisioner) Create(ctx context.Context, s Spec) (State, error) {
	return component.Create(ctx, c.waitTimeout(), s, c.apply, c.Delete)
}

// Update brings the pipeline recorded in st to s in place: mapping settings,
// function configuration and code, roles' policies, log retention, queue
// settings, schedule, alarms, tags, enabling or removing the reconciler or
// the alarms. It also recreates components that were deleted out of band
// (see Read). Changes listed by ReplacementFields cannot be applied here.
// Update returns the new State even on error, so that the provider records
// partial progress.
func (c *Provisioner) Update(ctx context.Context, s Spec, st State) (State, error) {
	return component.Update(ctx, s, st, c.apply)
}

// apply creates or updates every component of s, valid and with its
// defaults (component.Apply), recording each in st as soon as it exists.
func (c *Provisioner) apply(ctx context.Context, s Spec, st *State) error {
	if err := c.checkTarget(ctx, s); err != nil {
		return err
	}
	zip, sha, err := c.Code.get(s.Architecture)
	if err != nil {
		return fmt.Errorf("creating relay function (%s): %w", NamesFor(s.Name).RelayFunction, err)
	}
	st.Name, st.ForceDestroy = s.Name, s.ForceDestroy
	if err := component.Ensure(ctx, components, c, &pass{s: s, st: st, zip: zip, sha: sha}); err != nil {
		return err
	}
	st.RelayPackageSHA256 = sha
	return c.dropFormerPendingIndex(ctx, st)
}

func (a Added) tag() string {
	var parts []string
	if a.Stream {
		parts = append(parts, "stream")
	}
	if a.PendingIndex {
		parts = append(parts, "pending_index")
	}
	if a.TTL {
		parts = append(parts, "ttl")
	}
	return strings.Join(parts, ",")
}

func parseAdded(tag string) Added {
	var a Added
	for _, p := range strings.Split(tag, ",") {
		switch p {
		case "stream":
			a.Stream = true
		case "pending_index":
			a.PendingIndex = true
		case "ttl":
			a.TTL = true
		}
	}
	return a
}

// Delete removes the pipeline in the reverse order of creation. Components
// already gone are skipped; on an adopted table only what the pipeline added
// is reverted. It returns what remains (an empty State on success), so that
// a failed delete can be retried.
func (c *Provisioner) Delete(ctx context.Context, st State) (State, error) {
	// Nothing is removed while the table holds undelivered events: the
	// relay and the reconciler are what delivers them.
	if err := c.checkUndelivered(ctx, st); err != nil {
		return st, err
	}
	if err := c.checkUndeliveredClaims(ctx, st); err != nil {
		return st, err
	}
	if err := component.Remove(ctx, components, c, &st); err != nil {
		return st, err
	}
	return State{}, nil
}
