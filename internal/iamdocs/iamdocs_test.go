package iamdocs

import (
	"os"
	"strings"
	"testing"
)

// The operations guide's template and the guide tfplugindocs renders from
// it hold the tables the code gives: run make docs when this fails.
func TestOperationsGuideIsCurrent(t *testing.T) {
	t.Parallel()
	for _, path := range []string{"../../templates/guides/operations.md.tmpl", "../../docs/guides/operations.md"} {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		want, err := Render(string(b))
		if err != nil {
			t.Fatal(err)
		}
		if string(b) != want {
			t.Errorf("%s has stale IAM tables: run make docs", path)
		}
	}
}

// The tables list what the code grants and needs.
func TestTables(t *testing.T) {
	t.Parallel()
	roles := RolesTable()
	for _, want := range []string{
		"| `orders-relay` | `dynamodb:ListStreams` | `*` |  |",
		"| `orders-relay` | `kms:Decrypt`, `kms:GenerateDataKey` | `key/*` where `kms:ResourceAliases` `ForAnyValue:StringEquals` `alias/orders-dlq` | `dead_letter.kms_master_key_id` |",
		"| `orders-reconciler` | `dynamodb:DescribeTable`, `dynamodb:Scan` | `table/orders-outbox` | `pending_index.enabled = false` |",
		"`log-group:/aws/lambda/orders-relay:*`",
		"| `orders-scheduler` | `lambda:InvokeFunction` | `function:orders-reconciler` |  |",
	} {
		if !strings.Contains(roles, want) {
			t.Errorf("the roles' table lacks %q:\n%s", want, roles)
		}
	}
	if cmds := CommandsTable(); !strings.Contains(cmds, "| `skip` | `lambda:GetFunctionConfiguration`, `dynamodb:Scan`, `dynamodb:GetItem`, `dynamodb:UpdateItem` |") {
		t.Errorf("the subcommands' table lists skip wrongly:\n%s", cmds)
	}
	apply := ApplyTable()
	for _, want := range []string{"`dynamodb:DescribeContinuousBackups`, `dynamodb:UpdateContinuousBackups`", "`dynamodb:Scan`", "| `claim_check` | `s3:CreateBucket`", "| `iam.permissions_boundary` |", "| `relay.vpc_config` |"} {
		if !strings.Contains(apply, want) {
			t.Errorf("the applying identity's table lacks %q:\n%s", want, apply)
		}
	}
	if _, err := Render("no markers"); err == nil {
		t.Error("Render of a document without markers succeeded")
	}
}
