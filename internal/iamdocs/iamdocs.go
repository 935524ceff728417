// Package iamdocs renders the IAM tables of the operations guide from the
// code that builds the policies and runs the subcommands, so that the
// documented permissions are the granted and needed ones: the pipeline's
// roles (provision.RelayPolicy, ReconcilerPolicy, SchedulerPolicy, for each
// setting that changes them) and the outbox command's subcommands
// (operate.CommandPermissions) and the identity that applies
// (provision.ApplyPermissions). The tables sit between markers in the
// guide's template; tools/iamdocs rewrites them, and a test fails when they
// are stale.
package iamdocs

import (
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/outboxkit/terraform-provider-outbox/internal/operate"
	"github.com/outboxkit/terraform-provider-outbox/internal/provision"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay/config"
	"github.com/outboxkit/terraform-provider-outbox/internal/targetkind"
)

// The markers around each generated table.
const (
	RolesBegin    = "<!-- BEGIN_IAM_ROLES -->"
	RolesEnd      = "<!-- END_IAM_ROLES -->"
	CommandsBegin = "<!-- BEGIN_IAM_COMMANDS -->"
	CommandsEnd   = "<!-- END_IAM_COMMANDS -->"
	ApplyBegin    = "<!-- BEGIN_IAM_APPLY -->"
	ApplyEnd      = "<!-- END_IAM_APPLY -->"
)

// The example pipeline of the tables.
const (
	account    = "123456789012"
	tableARN   = "arn:aws:dynamodb:eu-west-1:" + account + ":table/orders-outbox"
	queueARN   = "arn:aws:sqs:eu-west-1:" + account + ":orders-relay-dlq"
	reconciler = "arn:aws:lambda:eu-west-1:" + account + ":function:orders-reconciler"
)

// variant is a setting that changes the roles' policies, as the guide
// names it, and the Spec that has it.
type variant struct {
	with string
	spec provision.Spec
}

func variants() []variant {
	key := func(id string) string { return "arn:aws:kms:eu-west-1:" + account + ":key/" + id }
	return []variant{
		{"", provision.Spec{}},
		{"`target` an SNS topic", provision.Spec{Target: provision.TargetSpec{Type: targetkind.SNS, TopicARN: "arn:aws:sns:eu-west-1:" + account + ":orders"}}},
		{"`target` an SQS queue", provision.Spec{Target: provision.TargetSpec{Type: targetkind.SQS, QueueARN: "arn:aws:sqs:eu-west-1:" + account + ":orders"}}},
		{"`published.action = \"delete\"`", provision.Spec{PublishedAction: config.ActionDelete}},
		{"`ordering.enabled`", provision.Spec{Ordered: true}},
		{"`pending_index.enabled = false`", provision.Spec{Table: provision.TableSpec{PendingIndexDisabled: true}}},
		{"`dead_letter.kms_master_key_id`", provision.Spec{DeadLetterQueue: provision.QueueSpec{KMSMasterKeyID: "alias/orders-dlq"}}},
		{"`claim_check`", provision.Spec{ClaimCheck: provision.ClaimCheckSpec{Enabled: true, BucketName: "orders-claims"}}},
		{"`claim_check.kms_key_arn`", provision.Spec{ClaimCheck: provision.ClaimCheckSpec{Enabled: true, BucketName: "orders-claims", KMSKeyARN: key("claims")}}},
		{"`relay.vpc_config`", provision.Spec{Controls: provision.LambdaControls{SubnetIDs: []string{"subnet-0a"}, SecurityGroupIDs: []string{"sg-0b"}}}},
		{"`relay.tracing_mode = \"Active\"`", provision.Spec{Controls: provision.LambdaControls{TracingMode: "Active"}}},
		{"`relay.kms_key_arn`", provision.Spec{Controls: provision.LambdaControls{KMSKeyARN: key("env")}}},
		{"`multi_region`", provision.Spec{MultiRegion: provision.MultiRegionSpec{Regions: []string{"eu-west-1", "us-east-1"}}}},
	}
}

// row is one statement of a role's policy.
type row struct {
	role, actions, resource, with string
}

// RolesTable is the table of the roles' statements: those of the default
// pipeline, then those each setting adds or changes.
func RolesTable() string {
	a, err := provision.AccountOf(tableARN)
	if err != nil {
		panic(err)
	}
	var rows []row
	seen := map[string]bool{}
	for _, v := range variants() {
		s := v.spec
		s.Name = "orders"
		s = s.WithDefaults()
		r := s.PolicyResources(a, tableARN, queueARN)
		for _, p := range []struct {
			role string
			doc  provision.PolicyDocument
		}{
			{"orders-relay", provision.RelayPolicy(s, r)},
			{"orders-reconciler", provision.ReconcilerPolicy(s, r)},
			{"orders-scheduler", provision.SchedulerPolicy(reconciler)},
		} {
			for _, st := range p.doc.Statement {
				rw := row{role: p.role, actions: codes(st.Action), resource: resources(st), with: v.with}
				if k := rw.role + rw.actions + rw.resource; !seen[k] {
					seen[k] = true
					rows = append(rows, rw)
				}
			}
		}
	}
	slices.SortStableFunc(rows, func(x, y row) int { return strings.Compare(roleOrder(x.role), roleOrder(y.role)) })
	var b strings.Builder
	b.WriteString("| role | actions | resource | with |\n| --- | --- | --- | --- |\n")
	for _, rw := range rows {
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", rw.role, rw.actions, rw.resource, rw.with)
	}
	return b.String()
}

func roleOrder(role string) string {
	return map[string]string{"orders-relay": "1", "orders-reconciler": "2", "orders-scheduler": "3"}[role]
}

// codes lists names as code.
func codes(names []string) string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = "`" + n + "`"
	}
	return strings.Join(out, ", ")
}

// resources are the statement's resources, each without its partition,
// region and account, with its condition.
func resources(st provision.Statement) string {
	var out []string
	for _, r := range st.Resource {
		if p := strings.SplitN(r, ":", 6); len(p) == 6 {
			r = p[5]
		}
		out = append(out, "`"+r+"`")
	}
	res := strings.Join(out, ", ")
	for _, op := range slices.Sorted(maps.Keys(st.Condition)) {
		for _, k := range slices.Sorted(maps.Keys(st.Condition[op])) {
			res += fmt.Sprintf(" where `%s` `%s` `%s`", k, op, st.Condition[op][k])
		}
	}
	return res
}

// CommandsTable is the table of the subcommands' actions.
func CommandsTable() string {
	var b strings.Builder
	b.WriteString("| subcommand | actions |\n| --- | --- |\n")
	for _, c := range operate.CommandPermissions() {
		fmt.Fprintf(&b, "| `%s` | %s |\n", c.Name, codes(c.Actions))
	}
	return b.String()
}

// ApplyTable is the table of the actions of the identity that applies.
func ApplyTable() string {
	var b strings.Builder
	b.WriteString("| with | actions |\n| --- | --- |\n")
	for _, p := range provision.ApplyPermissions() {
		with := p.With
		if with == "" {
			with = "every pipeline"
		}
		fmt.Fprintf(&b, "| %s | %s |\n", with, codes(p.Actions))
	}
	return b.String()
}

// Render returns doc with the text between each pair of markers replaced
// by its table.
func Render(doc string) (string, error) {
	for _, t := range []struct{ begin, end, table string }{
		{RolesBegin, RolesEnd, RolesTable()},
		{CommandsBegin, CommandsEnd, CommandsTable()},
		{ApplyBegin, ApplyEnd, ApplyTable()},
	} {
		begin, end := strings.Index(doc, t.begin), strings.Index(doc, t.end)
		if begin < 0 || end < begin {
			return "", fmt.Errorf("no %s ... %s section", t.begin, t.end)
		}
		doc = doc[:begin] + t.begin + "\n" + t.table + doc[end:]
	}
	return doc, nil
}

// Update rewrites the tables of the file at path, and reports whether it
// changed.
func Update(path string) (bool, error) {
	old, err := os.ReadFile(path)
	if err != nil {
		return false, err
	}
	updated, err := Render(string(old))
	if err != nil {
		return false, fmt.Errorf("%s: %w", path, err)
	}
	if updated == string(old) {
		return false, nil
	}
	return true, os.WriteFile(path, []byte(updated), 0o644)
}
