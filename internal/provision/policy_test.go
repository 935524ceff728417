package provision

import (
	"slices"
	"strings"
	"testing"

	"github.com/outboxkit/terraform-provider-outbox/internal/golden"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay/config"
	"github.com/outboxkit/terraform-provider-outbox/internal/targetkind"

	"github.com/outboxkit/terraform-provider-outbox/internal/awsops"
)

const (
	goldenTable = "arn:aws:dynamodb:eu-west-1:123456789012:table/orders-outbox"
	goldenQueue = "arn:aws:sqs:eu-west-1:123456789012:orders-relay-dlq"
)

func TestPolicyDocuments(t *testing.T) {
	t.Parallel()
	a, _ := AccountOf(goldenTable)
	eventBridge := Spec{Name: "orders"}.WithDefaults()
	sns := Spec{Name: "orders", PublishedAction: config.ActionDelete,
		Target: TargetSpec{Type: config.TargetSNS, TopicARN: "arn:aws:sns:eu-west-1:123456789012:orders"}}.WithDefaults()
	sqs := Spec{Name: "orders", Target: TargetSpec{Type: targetkind.SQS, QueueARN: "arn:aws:sqs:eu-west-1:123456789012:orders.fifo"}}.WithDefaults()
	vpc := Spec{Name: "orders", Controls: LambdaControls{SubnetIDs: []string{"subnet-0a", "subnet-0b"}, SecurityGroupIDs: []string{"sg-0c"}}}.WithDefaults()
	for name, doc := range map[string]PolicyDocument{
		"relay_eventbridge_mark": RelayPolicy(eventBridge, eventBridge.resources(a, goldenTable, goldenQueue)),
		"relay_sns_delete":       RelayPolicy(sns, sns.resources(a, goldenTable, goldenQueue)),
		"reconciler_eventbridge": ReconcilerPolicy(eventBridge, eventBridge.resources(a, goldenTable, goldenQueue)),
		"reconciler_sns":         ReconcilerPolicy(sns, sns.resources(a, goldenTable, goldenQueue)),
		"relay_sqs_mark":         RelayPolicy(sqs, sqs.resources(a, goldenTable, goldenQueue)),
		"relay_vpc":              RelayPolicy(vpc, vpc.resources(a, goldenTable, goldenQueue)),
		"reconciler_vpc":         ReconcilerPolicy(vpc, vpc.resources(a, goldenTable, goldenQueue)),
		"scheduler":              SchedulerPolicy("arn:aws:lambda:eu-west-1:123456789012:function:orders-reconciler"),
		"trust_lambda":           TrustPolicy("lambda.amazonaws.com", ""),
		"trust_scheduler":        TrustPolicy("scheduler.amazonaws.com", "123456789012"),
	} {
		golden.Check(t, name+".json", doc.JSON())
		checkWildcards(t, name, doc)
	}
}

// resourceless are the actions of the roles that have no resource type
// (Service Authorization Reference): only they may be granted on "*".
var resourceless = []string{"dynamodb:ListStreams", "ec2:DescribeNetworkInterfaces", "xray:PutTelemetryRecords", "xray:PutTraceSegments"}

// checkWildcards fails on a wildcard action, and on a wildcard resource
// other than the stream, log-stream and network-interface sub-ARNs and "*"
// for the resourceless actions.
func checkWildcards(t *testing.T, name string, doc PolicyDocument) {
	t.Helper()
	for _, st := range doc.Statement {
		for _, r := range st.Resource {
			switch {
			case r == "*":
				for _, act := range st.Action {
					if !slices.Contains(resourceless, act) {
						t.Errorf("%s: statement %s grants %s on *, which has a resource type", name, st.Sid, act)
					}
				}
			case strings.Contains(r, "*") && r != StreamsARN(goldenTable) && !strings.HasPrefix(r, "arn:aws:logs:") &&
				!strings.HasSuffix(r, ":network-interface/*") && !strings.HasSuffix(r, ":key/*"):
				t.Errorf("%s: statement %s has the wildcard resource %s", name, st.Sid, r)
			}
		}
		for _, act := range st.Action {
			if strings.Contains(act, "*") {
				t.Errorf("%s: statement %s has the wildcard action %s", name, st.Sid, act)
			}
		}
	}
}

func TestSamePolicy(t *testing.T) {
	t.Parallel()
	doc := SchedulerPolicy("arn:aws:lambda:eu-west-1:1:function:f")
	compact := `{"Statement":[{"Resource":"arn:aws:lambda:eu-west-1:1:function:f","Action":"lambda:InvokeFunction","Effect":"Allow","Sid":"InvokeReconciler"}],"Version":"2012-10-17"}`
	if !awsops.SamePolicy(doc.JSON(), compact) {
		t.Error("equivalent documents compare different")
	}
	if awsops.SamePolicy(doc.JSON(), SchedulerPolicy("arn:aws:lambda:eu-west-1:1:function:g").JSON()) {
		t.Error("different documents compare equal")
	}
	if !awsops.SamePolicy(decodePolicy("%7B%22a%22%3A1%7D"), `{"a": 1}`) {
		t.Error("URL-encoded documents are not decoded")
	}
}

// statementWith returns the statements of doc that grant action.
func statementsWith(doc PolicyDocument, action string) []Statement {
	var out []Statement
	for _, st := range doc.Statement {
		if slices.Contains(st.Action, action) {
			out = append(out, st)
		}
	}
	return out
}

// A dead-letter queue encrypted with a customer managed key needs the
// key's GenerateDataKey and Decrypt in the relay's role, which sends the
// failed batches' metadata: the key is named by ARN, id or alias.
func TestRelayPolicyDeadLetterKey(t *testing.T) {
	t.Parallel()
	a, _ := AccountOf(goldenTable)
	keyARN := "arn:aws:kms:eu-west-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab"
	allKeys := "arn:aws:kms:eu-west-1:123456789012:key/*"
	for _, tc := range []struct {
		key, resource, alias string
	}{
		{key: keyARN, resource: keyARN},
		{key: "1234abcd-12ab-34cd-56ef-1234567890ab", resource: keyARN},
		{key: "alias/orders-dlq", resource: allKeys, alias: "alias/orders-dlq"},
		{key: "arn:aws:kms:eu-west-1:123456789012:alias/orders-dlq", resource: allKeys, alias: "alias/orders-dlq"},
	} {
		s := Spec{Name: "orders", DeadLetterQueue: QueueSpec{KMSMasterKeyID: tc.key}}.WithDefaults()
		doc := RelayPolicy(s, s.resources(a, goldenTable, goldenQueue))
		for _, act := range []string{"kms:GenerateDataKey", "kms:Decrypt"} {
			sts := statementsWith(doc, act)
			if len(sts) != 1 || !slices.Equal(sts[0].Resource, []string{tc.resource}) ||
				sts[0].Condition["ForAnyValue:StringEquals"]["kms:ResourceAliases"] != tc.alias {
				t.Errorf("key %q: %s is granted by %+v, want once on %s with alias %q", tc.key, act, sts, tc.resource, tc.alias)
			}
		}
		checkWildcards(t, tc.key, doc)
	}
	s := Spec{Name: "orders"}.WithDefaults()
	if sts := statementsWith(RelayPolicy(s, s.resources(a, goldenTable, goldenQueue)), "kms:GenerateDataKey"); len(sts) != 0 {
		t.Errorf("an SQS-managed dead-letter queue grants %+v", sts)
	}
}

// ListStreams has no resource type: it is granted on "*" alone, and the
// other stream actions on the table's streams.
func TestRelayPolicyListStreams(t *testing.T) {
	t.Parallel()
	a, _ := AccountOf(goldenTable)
	s := Spec{Name: "orders"}.WithDefaults()
	doc := RelayPolicy(s, s.resources(a, goldenTable, goldenQueue))
	if sts := statementsWith(doc, "dynamodb:ListStreams"); len(sts) != 1 || !slices.Equal(sts[0].Resource, []string{"*"}) || len(sts[0].Action) != 1 {
		t.Errorf("dynamodb:ListStreams is granted by %+v, want alone on *", sts)
	}
	if sts := statementsWith(doc, "dynamodb:GetRecords"); len(sts) != 1 || !slices.Equal(sts[0].Resource, []string{StreamsARN(goldenTable)}) {
		t.Errorf("dynamodb:GetRecords is granted by %+v, want on %s", sts, StreamsARN(goldenTable))
	}
}

// In a VPC, the roles may create network interfaces only in the
// configured subnets and security groups, and delete or readdress only
// the account's network interfaces.
func TestPolicyVPCScoped(t *testing.T) {
	t.Parallel()
	a, _ := AccountOf(goldenTable)
	s := Spec{Name: "orders", Controls: LambdaControls{SubnetIDs: []string{"subnet-0a"}, SecurityGroupIDs: []string{"sg-0c"}}}.WithDefaults()
	r := s.resources(a, goldenTable, goldenQueue)
	interfaces := "arn:aws:ec2:eu-west-1:123456789012:network-interface/*"
	want := map[string][]string{
		"ec2:CreateNetworkInterface":     {interfaces, "arn:aws:ec2:eu-west-1:123456789012:subnet/subnet-0a", "arn:aws:ec2:eu-west-1:123456789012:security-group/sg-0c"},
		"ec2:DeleteNetworkInterface":     {interfaces},
		"ec2:AssignPrivateIpAddresses":   {interfaces},
		"ec2:UnassignPrivateIpAddresses": {interfaces},
		"ec2:DescribeNetworkInterfaces":  {"*"},
	}
	for role, doc := range map[string]PolicyDocument{"relay": RelayPolicy(s, r), "reconciler": ReconcilerPolicy(s, r)} {
		for act, res := range want {
			if sts := statementsWith(doc, act); len(sts) != 1 || !slices.Equal(sts[0].Resource, res) {
				t.Errorf("%s: %s is granted by %+v, want on %v", role, act, sts, res)
			}
		}
		checkWildcards(t, role, doc)
	}
}

// The reconciler deletes published items (BatchWriteItem) only in delete
// mode; in mark mode it updates them.
func TestReconcilerPolicyBatchWrite(t *testing.T) {
	t.Parallel()
	a, _ := AccountOf(goldenTable)
	for action, want := range map[config.Action]int{config.ActionMark: 0, config.ActionDelete: 1} {
		s := Spec{Name: "orders", PublishedAction: action}.WithDefaults()
		if got := len(statementsWith(ReconcilerPolicy(s, s.resources(a, goldenTable, goldenQueue)), "dynamodb:BatchWriteItem")); got != want {
			t.Errorf("published action %s: %d statements grant dynamodb:BatchWriteItem, want %d", action, got, want)
		}
	}
}

// TestReconcilerWorkers: the reconciler's settings reach its environment,
// and it may invoke its own function, to start workers, only when more
// than one run may sweep at once.
func TestReconcilerWorkers(t *testing.T) {
	t.Parallel()
	a, _ := AccountOf(goldenTable)
	invokes := func(s Spec) bool {
		for _, st := range ReconcilerPolicy(s, s.resources(a, goldenTable, goldenQueue)).Statement {
			if slices.Contains(st.Action, "lambda:InvokeFunction") {
				return slices.Equal(st.Resource, []string{"arn:aws:lambda:eu-west-1:123456789012:function:orders-reconciler"})
			}
		}
		return false
	}
	def := Spec{Name: "orders"}.WithDefaults()
	env := def.Environment("")
	if env[config.EnvReconcileMaxWorkers] != "8" || env[config.EnvReconcileMaxEventsPerSecond] != "" || !invokes(def) {
		t.Errorf("defaults: environment %v, invokes itself %t; want 8 workers, the kind's rate, InvokeFunction on the reconciler only", env, invokes(def))
	}
	one := Spec{Name: "orders", Reconciler: ReconcilerSpec{MaxWorkers: 1, MaxEventsPerSecond: 250}}.WithDefaults()
	env = one.Environment("")
	if env[config.EnvReconcileMaxWorkers] != "1" || env[config.EnvReconcileMaxEventsPerSecond] != "250" || invokes(one) {
		t.Errorf("one worker at 250 events/s: environment %v, invokes itself %t; want no InvokeFunction", env, invokes(one))
	}
}
