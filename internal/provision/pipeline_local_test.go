package provision

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/lambda"

	"github.com/outboxkit/terraform-provider-outbox/internal/component/componenttest"
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws"
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/control"
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/localawstest"
)

// Services that a pipeline without reconciler needs; the reconciler adds
// scheduler.
var coreServices = []string{"dynamodb", "sqs", "lambda", "iam", "logs"}

// testCode is a relay package whose bootstrap does nothing; content varies
// it, so that tests can change the code.
func testCode(t *testing.T, content string) RelayCode {
	t.Helper()
	var buf bytes.Buffer
	w := zip.NewWriter(&buf)
	h := &zip.FileHeader{Name: "bootstrap", Method: zip.Deflate, Modified: time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)}
	h.SetMode(0o755)
	f, err := w.CreateHeader(h)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write([]byte("#!/bin/sh\n# " + content + "\n")); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	b := buf.Bytes()
	sum := sha256.Sum256(b)
	sha := base64.StdEncoding.EncodeToString(sum[:])
	return RelayCode{
		Zip:    func(string) ([]byte, error) { return b, nil },
		SHA256: func(string) (string, error) { return sha, nil },
	}
}

// startStack starts a local stack and skips the test when it does not serve
// every service needed yet. It returns the stack, a Provisioner of it and the
// test's context.
func startStack(t *testing.T, services ...string) (*localaws.Stack, *Provisioner, context.Context) {
	t.Helper()
	stack, ctx := componenttest.Start(t, services...)
	c := New(localawstest.Config(stack), testCode(t, "v1"))
	c.PropagationTimeout = 10 * time.Second
	c.WaitTimeout, c.PollInterval = componenttest.WaitTimeout, componenttest.PollInterval
	return stack, c, ctx
}

// must makes the Provisioner's calls, failing the test on an error.
var must componenttest.Must[Spec, State]

func TestLocalLifecycleDedicatedTable(t *testing.T) {
	t.Parallel()
	stack, c, ctx := startStack(t, coreServices...)
	before := componenttest.Inventory(t, ctx, stack)

	spec := Spec{Name: "orders", Reconciler: ReconcilerSpec{Disabled: true}, Tags: map[string]string{"team": "payments"}}
	st := must.Create(t, ctx, c, spec)
	if !st.TableOwned || st.StreamARN == "" || st.MappingUUID == "" || st.QueueARN == "" || st.RelayFunctionARN == "" {
		t.Fatalf("Create returned an incomplete state: %+v", st)
	}
	sha, _ := c.Code.SHA256("arm64")
	if st.RelayPackageSHA256 != sha {
		t.Errorf("RelayPackageSHA256 = %q, want %q", st.RelayPackageSHA256, sha)
	}

	got, drift := must.Read(t, ctx, c, spec, st)
	if !drift.None() {
		t.Fatalf("Read after Create reports drift: %s", drift)
	}
	if !reflect.DeepEqual(got, st) {
		t.Errorf("Read changed the state:\n got %+v\nwant %+v", got, st)
	}

	// In place: mapping settings, function configuration, code, retention,
	// queue, tags.
	updated := spec
	updated.Mapping.BatchSize = 25
	updated.Mapping.MaximumRetryAttempts = aws.Int32(3)
	updated.Relay.MemorySize = 512
	updated.Relay.LogRetentionDays = 30
	updated.DeadLetterQueue.MessageRetentionSeconds = 3600
	updated.Tags = map[string]string{"team": "orders"}
	updated.Table.SortKeyPrefix = "EVT#"
	if f := ReplacementFields(spec, updated); len(f) != 0 {
		t.Fatalf("ReplacementFields = %v, want none", f)
	}
	c.Code = testCode(t, "v2")
	st2, err := c.Update(ctx, updated, st)
	if err != nil {
		t.Fatalf("Update: %v", err)
	}
	if st2.MappingUUID != st.MappingUUID || st2.RelayFunctionARN != st.RelayFunctionARN {
		t.Errorf("Update replaced components: %+v -> %+v", st, st2)
	}
	newSHA, _ := c.Code.SHA256("arm64")
	if st2.RelayPackageSHA256 != newSHA || newSHA == sha {
		t.Errorf("RelayPackageSHA256 after update = %q, want %q", st2.RelayPackageSHA256, newSHA)
	}
	if _, drift := must.Read(t, ctx, c, updated, st2); !drift.None() {
		t.Fatalf("Read after Update reports drift: %s", drift)
	}
	// The old spec now differs in every updated component.
	_, drift = must.Read(t, ctx, c, spec, st2)
	for _, comp := range []string{ComponentMapping, ComponentRelayFunction, ComponentRelayLogGroup, ComponentDeadLetterQueue} {
		if !slices.ContainsFunc(drift.Changed, func(ch Change) bool { return ch.Component == comp }) {
			t.Errorf("Read against the old spec does not report %s: %s", comp, drift)
		}
	}

	checkDeleteAll(t, ctx, stack, c, before, updated, st2)
}

// checkDeleteAll deletes the pipeline st, checks that it leaves nothing
// beyond the inventory before, and that deleting again is harmless.
func checkDeleteAll(t *testing.T, ctx context.Context, stack *localaws.Stack, c *Provisioner, before map[string][]string, updated Spec, st2 State) {
	t.Helper()
	rest, err := c.Delete(ctx, st2)
	if err != nil {
		t.Fatalf("Delete: %v", err)
	}
	if rest.Exists() {
		t.Errorf("Delete left state: %+v", rest)
	}
	componenttest.CheckInventory(t, ctx, stack, before, "Delete")
	// Deleting again is harmless.
	if _, err := c.Delete(ctx, st2); err != nil {
		t.Errorf("second Delete: %v", err)
	}
	if _, _, err := c.Read(ctx, updated, st2); !errors.Is(err, ErrNotFound) {
		t.Errorf("Read after Delete = %v, want ErrNotFound", err)
	}
}

func TestLocalDriftAndRepair(t *testing.T) {
	t.Parallel()
	stack, c, ctx := startStack(t, coreServices...)
	spec := Spec{Name: "drift", Reconciler: ReconcilerSpec{Disabled: true}}
	st := must.Create(t, ctx, c, spec)
	t.Cleanup(func() { _, _ = c.Delete(context.Background(), st) })

	// The mapping, deleted out of band.
	if _, err := c.Lambda.DeleteEventSourceMapping(ctx, &lambda.DeleteEventSourceMappingInput{UUID: aws.String(st.MappingUUID)}); err != nil {
		t.Fatal(err)
	}
	var observed State
	var drift Drift
	deadline := time.Now().Add(30 * time.Second)
	for {
		observed, drift = must.Read(t, ctx, c, spec, st)
		if slices.Contains(drift.Missing, ComponentMapping) || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if !slices.Contains(drift.Missing, ComponentMapping) || observed.MappingUUID != "" {
		t.Fatalf("Read after deleting the mapping: drift %s, state mapping %q", drift, observed.MappingUUID)
	}
	repaired, err := c.Update(ctx, spec, observed)
	if err != nil {
		t.Fatalf("Update (repair of the mapping): %v", err)
	}
	if repaired.MappingUUID == "" || repaired.MappingUUID == st.MappingUUID {
		t.Errorf("the mapping was not recreated: %q", repaired.MappingUUID)
	}
	st = repaired

	// The function, deleted out of band: its mapping goes with it.
	if _, err := c.Lambda.DeleteFunction(ctx, &lambda.DeleteFunctionInput{FunctionName: aws.String(st.RelayFunctionName)}); err != nil {
		t.Fatal(err)
	}
	observed, drift = must.Read(t, ctx, c, spec, st)
	if !slices.Contains(drift.Missing, ComponentRelayFunction) {
		t.Fatalf("Read after deleting the function: drift %s", drift)
	}
	repaired, err = c.Update(ctx, spec, observed)
	if err != nil {
		t.Fatalf("Update (repair of the function): %v", err)
	}
	st = repaired
	if _, drift := must.Read(t, ctx, c, spec, st); !drift.None() {
		t.Fatalf("Read after the repair reports drift: %s", drift)
	}

	// Import by name finds the same pipeline.
	found, foundState, err := c.Lookup(ctx, "drift")
	if err != nil {
		t.Fatalf("Lookup: %v", err)
	}
	if foundState.MappingUUID != st.MappingUUID || foundState.TableARN != st.TableARN || !foundState.TableOwned || !found.Reconciler.Disabled {
		t.Errorf("Lookup = %+v, %+v; want the state %+v", found, foundState, st)
	}
	if _, drift := must.Read(t, ctx, c, found, foundState); !drift.None() {
		t.Errorf("the imported spec drifts: %s", drift)
	}
	if _, _, err := c.Lookup(ctx, "nothing"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Lookup of a missing pipeline = %v, want ErrNotFound", err)
	}
	_ = stack
}

func TestLocalCreateFailureCleansUp(t *testing.T) {
	t.Parallel()
	stack, c, ctx := startStack(t, coreServices...)
	before := componenttest.Inventory(t, ctx, stack)
	ctl := localawstest.Control(stack)
	if _, err := ctl.AddFault(ctx, control.FaultRule{
		Service: "lambda", Operation: "CreateEventSourceMapping",
		Code: "InvalidParameterValueException", Message: "injected failure",
	}); err != nil {
		t.Fatal(err)
	}
	st, err := c.Create(ctx, Spec{Name: "broken", Reconciler: ReconcilerSpec{Disabled: true}})
	if err == nil || !strings.Contains(err.Error(), "creating event source mapping") || !strings.Contains(err.Error(), "injected failure") {
		t.Fatalf("Create = %v, want the mapping's error", err)
	}
	if st.Exists() {
		t.Errorf("Create returned a state although it cleaned up: %+v", st)
	}
	componenttest.CheckInventory(t, ctx, stack, before, "the failed Create")
}

func TestLocalRetriesIAMPropagation(t *testing.T) {
	t.Parallel()
	stack, c, ctx := startStack(t, coreServices...)
	ctl := localawstest.Control(stack)
	for _, op := range []string{"CreateFunction", "CreateEventSourceMapping"} {
		if _, err := ctl.AddFault(ctx, control.FaultRule{
			Service: "lambda", Operation: op, Count: 2,
			Code: "InvalidParameterValueException", Message: "The role defined for the function cannot be assumed by Lambda.",
		}); err != nil {
			t.Fatal(err)
		}
	}
	st, err := c.Create(ctx, Spec{Name: "eventual", Reconciler: ReconcilerSpec{Disabled: true}})
	if err != nil {
		t.Fatalf("Create while IAM propagates: %v", err)
	}
	must.Delete(t, ctx, c, st, "Delete")
}

func TestLocalReconciler(t *testing.T) {
	t.Parallel()
	stack, c, ctx := startStack(t, append(coreServices, "scheduler")...)
	before := componenttest.Inventory(t, ctx, stack)
	spec := Spec{Name: "recon"}
	st := must.Create(t, ctx, c, spec)
	if st.ScheduleARN == "" || st.ReconcilerFunctionARN == "" || st.SchedulerRoleARN == "" {
		t.Fatalf("Create returned no reconciler: %+v", st)
	}
	if _, drift := must.Read(t, ctx, c, spec, st); !drift.None() {
		t.Fatalf("Read after Create reports drift: %s", drift)
	}
	updated := spec
	updated.Reconciler.ScheduleExpression = "rate(10 minutes)"
	updated.Reconciler.MinAge = 15 * time.Minute
	st = must.Update(t, ctx, c, updated, st, "Update")
	if _, drift := must.Read(t, ctx, c, updated, st); !drift.None() {
		t.Fatalf("Read after Update reports drift: %s", drift)
	}
	updated.Reconciler.Disabled = true
	st = must.Update(t, ctx, c, updated, st, "Update (disable the reconciler)")
	if st.ScheduleName != "" || st.ReconcilerFunctionName != "" || st.SchedulerRoleName != "" {
		t.Errorf("disabling the reconciler left %+v", st)
	}
	must.Delete(t, ctx, c, st, "Delete")
	componenttest.CheckInventory(t, ctx, stack, before, "Delete")
}
