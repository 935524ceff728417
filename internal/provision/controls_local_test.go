package provision

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	lambdatypes "github.com/aws/aws-sdk-go-v2/service/lambda/types"
	"github.com/aws/aws-sdk-go-v2/service/scheduler"

	"github.com/outboxkit/terraform-provider-outbox/internal/awsops"
)

func TestLocalScheduleControls(t *testing.T) {
	t.Parallel()
	_, c, ctx := startStack(t, append(coreServices, "scheduler")...)
	if _, err := c.Scheduler.CreateScheduleGroup(ctx, &scheduler.CreateScheduleGroupInput{Name: aws.String("ops")}); err != nil {
		t.Fatal(err)
	}
	spec := Spec{Name: "scheduled", Reconciler: ReconcilerSpec{
		ScheduleExpression: "cron(0/10 * * * ? *)", ScheduleTimezone: "Europe/Paris", FlexibleTimeWindowMinutes: 3, ScheduleGroup: "ops",
	}}
	st := must.Create(t, ctx, c, spec)
	t.Cleanup(func() { _, _ = c.Delete(context.Background(), st) })
	check := func(when, group, tz string, window int32) {
		t.Helper()
		have, err := c.getSchedule(ctx, st.ScheduleName, group)
		if err != nil {
			t.Fatalf("%s: no schedule in group %s (%v)", when, group, err)
		}
		if aws.ToString(have.ScheduleExpressionTimezone) != tz || aws.ToInt32(have.FlexibleTimeWindow.MaximumWindowInMinutes) != window {
			t.Fatalf("%s: time zone %q, window %d; want %q, %d", when, aws.ToString(have.ScheduleExpressionTimezone), aws.ToInt32(have.FlexibleTimeWindow.MaximumWindowInMinutes), tz, window)
		}
	}
	check("created", "ops", "Europe/Paris", 3)
	if _, drift := must.Read(t, ctx, c, spec, st); !drift.None() {
		t.Fatalf("Read after Create: %s", drift)
	}
	found, _, err := c.Lookup(ctx, "scheduled")
	if err != nil {
		t.Fatal(err)
	}
	if r := found.Reconciler; r.ScheduleGroup != "ops" || r.ScheduleTimezone != "Europe/Paris" || r.FlexibleTimeWindowMinutes != 3 {
		t.Errorf("Lookup found %+v", r)
	}

	// Out of band, then reported.
	have, err := c.getSchedule(ctx, st.ScheduleName, "ops")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Scheduler.UpdateSchedule(ctx, &scheduler.UpdateScheduleInput{
		Name: aws.String(st.ScheduleName), GroupName: aws.String("ops"), ScheduleExpression: aws.String(spec.Reconciler.ScheduleExpression),
		ScheduleExpressionTimezone: aws.String("UTC"), FlexibleTimeWindow: spec.Reconciler.flexibleWindow(), Target: have.Target,
	}); err != nil {
		t.Fatal(err)
	}
	if _, drift := must.Read(t, ctx, c, spec, st); !hasChange(drift, ComponentSchedule, "schedule_timezone") {
		t.Fatalf("Read misses a time zone changed out of band: %s", drift)
	}

	// In place: the default group, time zone and no window.
	spec.Reconciler.ScheduleTimezone, spec.Reconciler.FlexibleTimeWindowMinutes, spec.Reconciler.ScheduleGroup = "", 0, ""
	st = must.Update(t, ctx, c, spec, st, "Update")
	check("updated", ScheduleGroup, "UTC", 0)
	if _, err := c.getSchedule(ctx, st.ScheduleName, "ops"); !errors.Is(err, awsops.ErrNotFound) {
		t.Fatalf("the schedule is still in group ops after the move (%v)", err)
	}
	if _, drift := must.Read(t, ctx, c, spec, st); !drift.None() {
		t.Fatalf("Read after Update: %s", drift)
	}
	for _, bad := range []ReconcilerSpec{{ScheduleTimezone: "Mars/Olympus"}, {FlexibleTimeWindowMinutes: 1441}, {ScheduleGroup: "no spaces"}} {
		if err := (Spec{Name: "x", Reconciler: bad}).Validate(); err == nil {
			t.Errorf("Validate accepts %+v", bad)
		}
	}
}

func TestLocalLambdaControls(t *testing.T) {
	t.Parallel()
	_, c, ctx := startStack(t, coreServices...)
	controls := LambdaControls{
		TracingMode: "Active", LogFormat: "JSON", ApplicationLogLevel: "DEBUG", SystemLogLevel: "WARN",
		KMSKeyARN: "arn:aws:kms:us-east-1:000000000000:key/1234abcd-12ab-34cd-56ef-1234567890ab",
		SubnetIDs: []string{"subnet-0a1", "subnet-0b2"}, SecurityGroupIDs: []string{"sg-0c3"},
	}
	spec := Spec{Name: "controlled", Reconciler: ReconcilerSpec{Disabled: true}, Controls: controls}
	st := must.Create(t, ctx, c, spec)
	t.Cleanup(func() { _, _ = c.Delete(context.Background(), st) })
	get := func() *lambda.GetFunctionOutput {
		t.Helper()
		fn, err := c.getFunction(ctx, st.RelayFunctionName)
		if err != nil {
			t.Fatalf("reading the relay function: %v", err)
		}
		return fn
	}
	if got := lookupControls(get()); !reflect.DeepEqual(got, controls) {
		t.Fatalf("the relay function has the controls %+v, want %+v", got, controls)
	}
	if _, drift := must.Read(t, ctx, c, spec, st); !drift.None() {
		t.Fatalf("Read after Create: %s", drift)
	}
	found, _, err := c.Lookup(ctx, "controlled")
	if err != nil || !reflect.DeepEqual(found.Controls, controls) {
		t.Fatalf("Lookup found the controls %+v (%v)", found.Controls, err)
	}

	if _, err := c.Lambda.UpdateFunctionConfiguration(ctx, &lambda.UpdateFunctionConfigurationInput{
		FunctionName: aws.String(st.RelayFunctionName), TracingConfig: &lambdatypes.TracingConfig{Mode: lambdatypes.TracingModePassThrough},
	}); err != nil {
		t.Fatal(err)
	}
	if err := c.waitFunctionReady(ctx, st.RelayFunctionName); err != nil {
		t.Fatal(err)
	}
	if _, drift := must.Read(t, ctx, c, spec, st); !hasChange(drift, ComponentRelayFunction, "tracing_mode") {
		t.Fatalf("Read misses tracing turned off out of band: %s", drift)
	}

	spec.Controls = LambdaControls{}
	st = must.Update(t, ctx, c, spec, st, "Update to the defaults")
	if got, want := lookupControls(get()), (LambdaControls{}).withDefaults(); !reflect.DeepEqual(got, want) {
		t.Fatalf("after Update the controls are %+v, want %+v", got, want)
	}
	if _, drift := must.Read(t, ctx, c, spec, st); !drift.None() {
		t.Fatalf("Read after Update: %s", drift)
	}
	for _, bad := range []LambdaControls{
		{TracingMode: "On"}, {ApplicationLogLevel: "DEBUG"}, {LogFormat: "JSON", SystemLogLevel: "ERROR"},
		{KMSKeyARN: "alias/mine"}, {SubnetIDs: []string{"subnet-0a1"}}, {SubnetIDs: []string{"net-1"}, SecurityGroupIDs: []string{"sg-1"}},
	} {
		if err := (Spec{Name: "x", Controls: bad}).Validate(); err == nil {
			t.Errorf("Validate accepts %+v", bad)
		}
	}
}

// The stack refuses a VPC attachment whose role may not manage network
// interfaces, as Lambda does.
func TestLocalVPCNeedsNetworkInterfacePermissions(t *testing.T) {
	t.Parallel()
	stack, c, ctx := startStack(t, coreServices...)
	role, err := c.ensureRole(ctx, roleSpec{what: "test role", name: "bare", service: "lambda.amazonaws.com", policyName: "p",
		policy: PolicyDocument{Version: policyVersion, Statement: []Statement{allow("Logs", []string{"logs:PutLogEvents"}, "*")}}}, false)
	if err != nil {
		t.Fatal(err)
	}
	zip, _, _ := c.Code.get(ArchARM64)
	_, err = c.Lambda.CreateFunction(ctx, &lambda.CreateFunctionInput{
		FunctionName: aws.String("vpc-bare"), Role: aws.String(role), Runtime: lambdatypes.Runtime(Runtime), Handler: aws.String(Handler),
		Code: &lambdatypes.FunctionCode{ZipFile: zip}, Architectures: []lambdatypes.Architecture{lambdatypes.ArchitectureArm64},
		VpcConfig: &lambdatypes.VpcConfig{SubnetIds: []string{"subnet-0a1"}, SecurityGroupIds: []string{"sg-0c3"}},
	})
	if err == nil || !strings.Contains(err.Error(), "CreateNetworkInterface") {
		t.Fatalf("CreateFunction in a VPC with a role without EC2 permissions: %v", err)
	}
	// A role scoped to other subnets may not create interfaces in these.
	other := LambdaControls{SubnetIDs: []string{"subnet-0ff"}, SecurityGroupIDs: []string{"sg-0c3"}}
	a := Account{Partition: "aws", Region: stack.Options().Region, ID: stack.Options().AccountID}
	role, err = c.ensureRole(ctx, roleSpec{what: "test role", name: "other-subnet", service: "lambda.amazonaws.com", policyName: "p",
		policy: PolicyDocument{Version: policyVersion, Statement: other.controlStatements(a)}}, false)
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Lambda.CreateFunction(ctx, &lambda.CreateFunctionInput{
		FunctionName: aws.String("vpc-other"), Role: aws.String(role), Runtime: lambdatypes.Runtime(Runtime), Handler: aws.String(Handler),
		Code: &lambdatypes.FunctionCode{ZipFile: zip}, Architectures: []lambdatypes.Architecture{lambdatypes.ArchitectureArm64},
		VpcConfig: &lambdatypes.VpcConfig{SubnetIds: []string{"subnet-0a1"}, SecurityGroupIds: []string{"sg-0c3"}},
	})
	if err == nil || !strings.Contains(err.Error(), "CreateNetworkInterface") {
		t.Fatalf("CreateFunction in subnet-0a1 with a role scoped to subnet-0ff: %v", err)
	}
}

func TestLocalIAMControls(t *testing.T) {
	t.Parallel()
	_, c, ctx := startStack(t, append(coreServices, "scheduler")...)
	p, err := c.IAM.CreatePolicy(ctx, &iam.CreatePolicyInput{PolicyName: aws.String("boundary"),
		PolicyDocument: aws.String(`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"*","Resource":"*"}]}`)})
	if err != nil {
		t.Fatal(err)
	}
	boundary := aws.ToString(p.Policy.Arn)
	spec := Spec{Name: "bounded", IAM: IAMSpec{PermissionsBoundary: boundary, Path: "/outbox/"}}
	st := must.Create(t, ctx, c, spec)
	t.Cleanup(func() { _, _ = c.Delete(context.Background(), st) })
	roles := func() []string { return []string{st.RelayRoleName, st.ReconcilerRoleName, st.SchedulerRoleName} }
	check := func(when, path, boundary string) {
		t.Helper()
		for _, name := range roles() {
			out, err := c.IAM.GetRole(ctx, &iam.GetRoleInput{RoleName: aws.String(name)})
			if err != nil {
				t.Fatal(err)
			}
			if aws.ToString(out.Role.Path) != path || roleBoundary(out.Role) != boundary {
				t.Fatalf("%s: role %s has path %q and boundary %q; want %q, %q", when, name, aws.ToString(out.Role.Path), roleBoundary(out.Role), path, boundary)
			}
		}
	}
	check("created", "/outbox/", boundary)
	if !strings.Contains(st.RelayRoleARN, ":role/outbox/bounded-relay") {
		t.Errorf("relay role ARN %s", st.RelayRoleARN)
	}
	if _, drift := must.Read(t, ctx, c, spec, st); !drift.None() {
		t.Fatalf("Read after Create: %s", drift)
	}
	found, _, err := c.Lookup(ctx, "bounded")
	if err != nil || found.IAM != spec.IAM {
		t.Fatalf("Lookup found %+v (%v)", found.IAM, err)
	}
	if _, err := c.IAM.DeleteRolePermissionsBoundary(ctx, &iam.DeleteRolePermissionsBoundaryInput{RoleName: aws.String(st.RelayRoleName)}); err != nil {
		t.Fatal(err)
	}
	if _, drift := must.Read(t, ctx, c, spec, st); !hasChange(drift, ComponentRelayRole, "permissions_boundary") {
		t.Fatalf("Read misses the boundary removed out of band: %s", drift)
	}
	st = must.Update(t, ctx, c, spec, st, "Update (repair)")
	check("repaired", "/outbox/", boundary)

	// No boundary, the default path: the roles move, and the functions
	// and the schedule follow them.
	spec.IAM = IAMSpec{}
	st = must.Update(t, ctx, c, spec, st, "Update")
	check("updated", "/", "")
	fn, err := c.getFunction(ctx, st.RelayFunctionName)
	if err != nil || aws.ToString(fn.Configuration.Role) != st.RelayRoleARN || strings.Contains(st.RelayRoleARN, "/outbox/") {
		t.Fatalf("the relay function runs as %s, the state says %s (%v)", aws.ToString(fn.Configuration.Role), st.RelayRoleARN, err)
	}
	if _, drift := must.Read(t, ctx, c, spec, st); !drift.None() {
		t.Fatalf("Read after Update: %s", drift)
	}
	for _, bad := range []IAMSpec{{PermissionsBoundary: "boundary"}, {Path: "outbox"}, {Path: "/outbox"}} {
		if err := (Spec{Name: "x", IAM: bad}).Validate(); err == nil {
			t.Errorf("Validate accepts %+v", bad)
		}
	}
}

func TestLocalTableKMSKey(t *testing.T) {
	t.Parallel()
	_, c, ctx := startStack(t, coreServices...)
	key := "arn:aws:kms:us-east-1:000000000000:key/1234abcd-12ab-34cd-56ef-1234567890ab"
	spec := Spec{Name: "encrypted", Reconciler: ReconcilerSpec{Disabled: true}, Table: TableSpec{KMSKeyARN: key}}
	st := must.Create(t, ctx, c, spec)
	t.Cleanup(func() { _, _ = c.Delete(context.Background(), st) })
	keyOf := func() string {
		t.Helper()
		d, err := c.describeTable(ctx, st.TableName)
		if err != nil {
			t.Fatal(err)
		}
		return awsops.TableKMSKey(d)
	}
	if got := keyOf(); got != key {
		t.Fatalf("the table's key is %q, want %q", got, key)
	}
	if _, drift := must.Read(t, ctx, c, spec, st); !drift.None() {
		t.Fatalf("Read after Create: %s", drift)
	}
	spec.Table.KMSKeyARN = ""
	if _, drift := must.Read(t, ctx, c, spec, st); !hasChange(drift, ComponentTable, "kms_key_arn") {
		t.Fatalf("Read misses the key change: %s", drift)
	}
	st = must.Update(t, ctx, c, spec, st, "Update")
	if got := keyOf(); got != "" {
		t.Fatalf("after Update the table's key is %q, want the AWS owned key", got)
	}
	bad := Spec{Name: "x", Table: TableSpec{Existing: true, Name: "app", KMSKeyARN: key}}
	if err := bad.Validate(); err == nil {
		t.Error("Validate accepts a KMS key for an adopted table")
	}
}
