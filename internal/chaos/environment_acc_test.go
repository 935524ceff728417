package chaos

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs"
	"github.com/aws/aws-sdk-go-v2/service/iam"

	"github.com/outboxkit/terraform-provider-outbox/internal/acctest"
	"github.com/outboxkit/terraform-provider-outbox/internal/provision"
)

// Faults of the environment rather than of the event: they get fixed, and
// every event they touched must then go out with nobody's help.

// environmentSpell is one fault of the environment held for a while, then
// fixed.
type environmentSpell struct {
	name  string
	after time.Duration
	hold  time.Duration
	// start breaks the environment and returns the function that fixes it
	// and reports whether the fault was met.
	start func(ctx context.Context, r *run) (fix func(context.Context) (bool, error), err error)
}

// environmentSpells are the faults of the environment the run goes
// through on target k, timed from the mapping's first resume: the relay
// then works through the backlog the pause left, so the spells meet it.
func environmentSpells(k chaosTarget) []environmentSpell {
	return []environmentSpell{
		{name: "relay role loses " + k.permission, after: 0, hold: 20 * time.Second, start: revokePublish},
		{name: "target " + k.what + " missing", after: 22 * time.Second, hold: 10 * time.Second, start: targetMissing},
	}
}

// environmentChaos plays the spells, one after the other, from start, and
// reports through r.fail any that could not be played or never met the
// relay.
func (r *run) environmentChaos(ctx context.Context, start time.Time) {
	for _, sp := range environmentSpells(r.kind) {
		if !sleepUntil(ctx, start.Add(sp.after)) {
			return
		}
		r.t.Logf("environment: %s for %s", sp.name, sp.hold)
		fix, err := sp.start(ctx, r)
		if err != nil {
			r.fail(fmt.Errorf("environment fault %q: %w", sp.name, err))
			continue
		}
		sleepUntil(ctx, time.Now().Add(sp.hold))
		met, err := fix(context.WithoutCancel(ctx))
		switch {
		case err != nil:
			r.fail(fmt.Errorf("fixing %q: %w", sp.name, err))
		case !met:
			r.fail(fmt.Errorf("environment fault %q never met the relay", sp.name))
		}
		r.t.Logf("environment: %s fixed", sp.name)
	}
}

// revokePublish removes the target's publish permission (events:PutEvents,
// sns:Publish) from the relay role's policy, as a rogue IAM change would,
// and puts the policy back when fixed. The fault was met when the relay's
// publish calls were denied meanwhile.
func revokePublish(ctx context.Context, r *run) (func(context.Context) (bool, error), error) {
	names := provision.NamesFor(r.pipelineName)
	in := &iam.GetRolePolicyInput{RoleName: aws.String(names.RelayRole), PolicyName: aws.String(names.RelayPolicyName)}
	out, err := r.iam.GetRolePolicy(ctx, in)
	if err != nil {
		return nil, err
	}
	original, err := url.QueryUnescape(aws.ToString(out.PolicyDocument))
	if err != nil {
		return nil, err
	}
	revoked, err := withoutAction(original, r.kind.permission)
	if err != nil {
		return nil, err
	}
	put := func(ctx context.Context, doc string) error {
		_, err := r.iam.PutRolePolicy(ctx, &iam.PutRolePolicyInput{RoleName: in.RoleName, PolicyName: in.PolicyName, PolicyDocument: aws.String(doc)})
		return err
	}
	from := time.Now()
	if err := put(ctx, revoked); err != nil {
		return nil, err
	}
	return func(ctx context.Context) (bool, error) {
		if err := put(ctx, original); err != nil {
			return false, err
		}
		// The IAM denial's own words, not those of the injected per-entry
		// denials.
		return r.relayLogged(ctx, `"is not authorized to perform: `+r.kind.permission+`"`, from)
	}, nil
}

// errNotLogged is relayLogged's condition not yet met.
var errNotLogged = errors.New("not in the relay's log group yet")

// relayLogged reports whether the relay logged term since from: what an
// operator would search its log group for. A function's output can reach
// its log group after its invocation answered, so the search is repeated
// until acctest.Wait gives up.
func (r *run) relayLogged(ctx context.Context, term string, from time.Time) (bool, error) {
	err := acctest.Wait(ctx, "the relay logging "+term, func() error {
		out, err := r.logs.FilterLogEvents(ctx, &cloudwatchlogs.FilterLogEventsInput{
			LogGroupName:  aws.String(provision.NamesFor(r.pipelineName).RelayLogGroup),
			FilterPattern: aws.String(term),
			StartTime:     aws.Int64(from.UnixMilli()),
			Limit:         aws.Int32(1),
		})
		if err != nil {
			return fmt.Errorf("searching the relay's logs for %s: %w", term, err)
		}
		if len(out.Events) == 0 {
			return errNotLogged
		}
		return nil
	})
	if errors.Is(err, errNotLogged) {
		return false, nil
	}
	return err == nil, err
}

// withoutAction returns the policy document doc with action removed from
// every statement; it fails when no statement grants it.
func withoutAction(doc, action string) (string, error) {
	var policy struct {
		Version   string           `json:"Version"`
		Statement []map[string]any `json:"Statement"`
	}
	if err := json.Unmarshal([]byte(doc), &policy); err != nil {
		return "", fmt.Errorf("decoding the policy: %w", err)
	}
	found := false
	var kept []map[string]any
	for _, st := range policy.Statement {
		var actions []string
		switch a := st["Action"].(type) {
		case string:
			actions = []string{a}
		case []any:
			for _, v := range a {
				s, _ := v.(string)
				actions = append(actions, s)
			}
		}
		if i := slices.Index(actions, action); i >= 0 {
			found = true
			actions = slices.Delete(actions, i, i+1)
		}
		if len(actions) == 0 {
			continue
		}
		st["Action"] = actions
		kept = append(kept, st)
	}
	if !found {
		return "", fmt.Errorf("no statement grants %s", action)
	}
	policy.Statement = kept
	b, err := json.Marshal(policy)
	return string(b), err
}

// targetMissing makes every publish fail as the target answers when it
// does not exist (chaosTarget.missing), until fixed.
func targetMissing(ctx context.Context, r *run) (func(context.Context) (bool, error), error) {
	rule, err := r.ctl.AddFault(ctx, r.kind.missingRule())
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context) (bool, error) {
		rules, err := r.ctl.Faults(ctx)
		if err != nil {
			return false, err
		}
		fired := 0
		for _, f := range rules {
			if f.ID == rule.ID {
				fired = f.Fired
			}
		}
		if rule.Entry {
			r.refusedMidRun.Add(int64(fired))
		}
		return fired > 0, r.ctl.RemoveFault(ctx, rule.ID)
	}, nil
}
