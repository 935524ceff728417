package pipeline

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/outboxkit/terraform-provider-outbox/internal/awsops"
)

// ErrNotFound is returned by Read and Lookup when nothing of the pipeline
// exists any more: the provider removes it from its state.
var ErrNotFound = errors.New("outbox pipeline not found")

// TagAdded is set on the relay function of a pipeline that adopted a table,
// to what it added ("stream,pending_index,ttl"), so that an imported
// pipeline reverts the same things on delete.
const TagAdded = "outbox:added"

// Create builds every component of the pipeline described by s. If a step
// fails, it removes what it built, as awsops.Create describes.
func (c *Clients) Create(ctx context.Context, s Spec) (State, error) {
	return awsops.Create(ctx, c.waitTimeout(), func(ctx context.Context, st *State) error {
		return c.apply(ctx, s, st)
	}, c.Delete)
}

// Update brings the pipeline recorded in st to s in place: mapping settings,
// function configuration and code, roles' policies, log retention, queue
// settings, schedule, alarms, tags, enabling or removing the reconciler or
// the alarms. It also recreates components that were deleted out of band
// (see Read). Changes listed by ReplacementFields cannot be applied here.
// Update returns the new State even on error, so that the provider records
// partial progress.
func (c *Clients) Update(ctx context.Context, s Spec, st State) (State, error) {
	err := c.apply(ctx, s, &st)
	return st, err
}

// apply creates or updates every component, recording each in st as soon
// as it exists.
func (c *Clients) apply(ctx context.Context, s Spec, st *State) error {
	if err := s.Validate(); err != nil {
		return err
	}
	s = s.WithDefaults()
	if st.Name != "" && st.Name != s.Name {
		return fmt.Errorf("updating outbox pipeline (%s): the name changed to %s, which requires replacing the pipeline", st.Name, s.Name)
	}
	if err := c.checkTarget(ctx, s); err != nil {
		return err
	}
	zip, sha, err := c.Code.get(s.Architecture)
	if err != nil {
		return fmt.Errorf("creating relay function (%s): %w", NamesFor(s.Name).RelayFunction, err)
	}
	st.Name, st.ForceDestroy = s.Name, s.ForceDestroy
	n := NamesFor(s.Name)
	tags := s.tags()

	if err := c.ensureTable(ctx, s, st); err != nil {
		return err
	}
	if err := c.trackLayout(ctx, s, st); err != nil {
		return err
	}
	a := st.account()
	st.TargetARN = s.TargetARN(a)
	if err := c.ensureQueue(ctx, s, st); err != nil {
		return err
	}
	res := s.resources(a, st.TableARN, st.QueueARN)

	owned, err := c.ensureLogGroup(ctx, "relay log group", n.RelayLogGroup, s.Relay.LogRetentionDays, tags, a, st.RelayLogGroup != "")
	if owned {
		st.RelayLogGroup = n.RelayLogGroup
	}
	if err != nil {
		return err
	}
	arn, err := c.ensureRole(ctx, roleSpec{
		what: "relay role", name: n.RelayRole, service: "lambda.amazonaws.com",
		policyName: n.RelayPolicyName, policy: RelayPolicy(s, res), tags: tags, iam: s.IAM,
	}, st.RelayRoleName != "")
	if arn != "" {
		st.RelayRoleName, st.RelayRoleARN = n.RelayRole, arn
	}
	if err != nil {
		return err
	}
	fnTags := tags
	if added := st.Added.tag(); added != "" {
		fnTags = s.tags()
		fnTags[TagAdded] = added
	}
	env := s.environment(*st)
	arn, err = c.ensureFunction(ctx, functionSpec{
		what: "relay function", name: n.RelayFunction, roleARN: st.RelayRoleARN, config: s.Relay,
		arch: s.Architecture, env: env, controls: s.Controls, tags: fnTags, zip: zip, sha: sha,
	}, st.RelayFunctionName != "")
	if arn != "" {
		st.RelayFunctionName, st.RelayFunctionARN = n.RelayFunction, arn
	}
	if err != nil {
		return err
	}
	if err := c.ensureMapping(ctx, s, st); err != nil {
		return err
	}

	if s.Reconciler.Disabled {
		// The oldest_pending_age alarm watches the reconciler: it goes first.
		if err := c.ensureAlarms(ctx, s, st); err != nil {
			return err
		}
		if err := c.deleteReconciler(ctx, st); err != nil {
			return err
		}
		st.RelayPackageSHA256 = sha
		return c.dropFormerPendingIndex(ctx, st)
	}
	r := s.Reconciler
	owned, err = c.ensureLogGroup(ctx, "reconciler log group", n.ReconcilerLogGroup, r.Function.LogRetentionDays, tags, a, st.ReconcilerLogGroup != "")
	if owned {
		st.ReconcilerLogGroup = n.ReconcilerLogGroup
	}
	if err != nil {
		return err
	}
	arn, err = c.ensureRole(ctx, roleSpec{
		what: "reconciler role", name: n.ReconcilerRole, service: "lambda.amazonaws.com",
		policyName: n.ReconcilerPolicyName, policy: ReconcilerPolicy(s, res), tags: tags, iam: s.IAM,
	}, st.ReconcilerRoleName != "")
	if arn != "" {
		st.ReconcilerRoleName, st.ReconcilerRoleARN = n.ReconcilerRole, arn
	}
	if err != nil {
		return err
	}
	arn, err = c.ensureFunction(ctx, functionSpec{
		what: "reconciler function", name: n.ReconcilerFunction, roleARN: st.ReconcilerRoleARN, config: r.Function,
		arch: s.Architecture, env: env, controls: s.Controls, tags: tags, zip: zip, sha: sha,
	}, st.ReconcilerFunctionName != "")
	if arn != "" {
		st.ReconcilerFunctionName, st.ReconcilerFunctionARN = n.ReconcilerFunction, arn
	}
	if err != nil {
		return err
	}
	arn, err = c.ensureRole(ctx, roleSpec{
		what: "scheduler role", name: n.SchedulerRole, service: "scheduler.amazonaws.com",
		policyName: n.SchedulerRolePolicyName, policy: SchedulerPolicy(st.ReconcilerFunctionARN), tags: tags, iam: s.IAM,
		sourceAccount: a.ID,
	}, st.SchedulerRoleName != "")
	if arn != "" {
		st.SchedulerRoleName, st.SchedulerRoleARN = n.SchedulerRole, arn
	}
	if err != nil {
		return err
	}
	if err := c.ensureSchedule(ctx, s, st, st.ScheduleName != ""); err != nil {
		return err
	}
	if err := c.ensureAlarms(ctx, s, st); err != nil {
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

// deleteReconciler removes the schedule, its role, the reconciler function,
// its role and its log group.
func (c *Clients) deleteReconciler(ctx context.Context, st *State) error {
	if err := c.deleteSchedule(ctx, st); err != nil {
		return err
	}
	if err := c.deleteRole(ctx, "scheduler role", st.SchedulerRoleName); err != nil {
		return err
	}
	st.SchedulerRoleName, st.SchedulerRoleARN = "", ""
	if err := c.deleteFunction(ctx, "reconciler function", st.ReconcilerFunctionName); err != nil {
		return err
	}
	st.ReconcilerFunctionName, st.ReconcilerFunctionARN = "", ""
	if err := c.deleteRole(ctx, "reconciler role", st.ReconcilerRoleName); err != nil {
		return err
	}
	st.ReconcilerRoleName, st.ReconcilerRoleARN = "", ""
	if err := c.deleteLogGroup(ctx, "reconciler log group", st.ReconcilerLogGroup); err != nil {
		return err
	}
	st.ReconcilerLogGroup = ""
	return nil
}

// Delete removes the pipeline in the reverse order of creation. Components
// already gone are skipped; on an adopted table only what the pipeline added
// is reverted. It returns what remains (an empty State on success), so that
// a failed delete can be retried.
func (c *Clients) Delete(ctx context.Context, st State) (State, error) {
	// Nothing is removed while the table holds undelivered events: the
	// relay and the reconciler are what delivers them.
	if err := c.checkUndelivered(ctx, st); err != nil {
		return st, err
	}
	if err := c.deleteAlarms(ctx, &st); err != nil {
		return st, err
	}
	if err := c.deleteReconciler(ctx, &st); err != nil {
		return st, err
	}
	if err := c.deleteMapping(ctx, &st); err != nil {
		return st, err
	}
	if err := c.deleteFunction(ctx, "relay function", st.RelayFunctionName); err != nil {
		return st, err
	}
	st.RelayFunctionName, st.RelayFunctionARN = "", ""
	if err := c.deleteRole(ctx, "relay role", st.RelayRoleName); err != nil {
		return st, err
	}
	st.RelayRoleName, st.RelayRoleARN = "", ""
	if err := c.deleteLogGroup(ctx, "relay log group", st.RelayLogGroup); err != nil {
		return st, err
	}
	st.RelayLogGroup = ""
	if err := c.deleteQueue(ctx, &st); err != nil {
		return st, err
	}
	if err := c.deleteTable(ctx, &st); err != nil {
		return st, err
	}
	return State{}, nil
}
