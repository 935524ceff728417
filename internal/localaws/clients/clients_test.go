package clients

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/oklog/ulid/v2"

	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/localawstest"
	"github.com/outboxkit/terraform-provider-outbox/internal/provision"
	"github.com/outboxkit/terraform-provider-outbox/outbox"
)

// TestClients runs the clients against one cmd/localaws with two pipelines:
// shop, which adopted the application table shop (the record contract
// guide's), and orders, with a dedicated table and a reconciler (the
// operations guide's).
func TestClients(t *testing.T) {
	requirePython(t)
	requireAWSCLI(t)
	requireNode(t)
	endpoint := startLocalaws(t)
	db := dynamodb.NewFromConfig(aws.Config{
		Region:       region,
		Credentials:  credentials.NewStaticCredentialsProvider(accessKeyID, secretAccessKey, ""),
		BaseEndpoint: aws.String(endpoint),
	})
	createShopTable(t, db)
	deployPipeline(t, endpoint, provision.Spec{Name: "shop", Table: provision.TableSpec{Existing: true, Name: "shop"}, Reconciler: provision.ReconcilerSpec{Disabled: true}})
	deployPipeline(t, endpoint, provision.Spec{Name: "orders"})
	guideWork := t.TempDir()

	t.Run("roundtrip", func(t *testing.T) {
		t.Run("python", func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			writeGuideFile(t, "record-contract.md", "outbox_contract.py", dir)
			out := run(t, dir, clientEnv(endpoint, append(roundTripEnv("python"), "PYTHONPATH="+dir)...), debianPython, filepath.Join(root, "internal/localaws/clients/python/roundtrip.py"))
			expectOutput(t, out, "roundtrip ok ", 1)
		})
		t.Run("js", func(t *testing.T) {
			t.Parallel()
			dir := jsWorkDir(t)
			writeGuideFile(t, "record-contract.md", "outbox.ts", dir)
			compileTS(t, dir, "module", "outbox.ts")
			copyFile(t, filepath.Join(jsDir, "roundtrip.mjs"), filepath.Join(dir, "roundtrip.mjs"))
			out := run(t, dir, clientEnv(endpoint, roundTripEnv("js")...), "node", "roundtrip.mjs")
			expectOutput(t, out, "roundtrip ok ", 2)
		})
		t.Run("shell", func(t *testing.T) {
			t.Parallel()
			id := ulid.Make().String()
			occurred := time.Now().UnixMilli()
			shard := outbox.PendingShardKey(outbox.Table{Name: "shop"}.WithDefaults().ShardFor(id))
			env := clientEnv(endpoint, append(roundTripEnv("shell"),
				"AWS_CLI="+debianAWS, "TMPDIR="+t.TempDir(), "EVENT_ID="+id,
				"PENDING_SHARD="+shard, "OCCURRED_MS="+strconv.FormatInt(occurred, 10))...)
			out := run(t, root, env, "bash", filepath.Join(root, "internal/localaws/clients/sh/roundtrip.sh"))
			expectOutput(t, out, "roundtrip ok "+id, 1)
		})
	})

	t.Run("sequence conflicts", func(t *testing.T) { checkConflictHelpers(t, endpoint) })

	t.Run("guides", func(t *testing.T) {
		seedFailedEvents(t, db)
		checks := map[string]func(t *testing.T, out string){
			// Every event the examples write gets published.
			"record-contract.md": func(t *testing.T, out string) {
				ids := printedEvents(out)
				// Go twice, TypeScript and DocumentClient in CommonJS and in
				// ESM, Python; then the ordered examples' two events each: Go,
				// TypeScript in CommonJS and in ESM, Python.
				if len(ids) != 15 {
					t.Fatalf("the examples printed %d event ids, want 15:\n%s", len(ids), out)
				}
				checkOrderedExamples(t, db, out, 8)
				waitStatus(t, db, "shop", ids, "PUBLISHED")
				// The first seven, the unordered examples, pass their
				// client's Region as the origin.
				checkOrigins(t, db, "shop", ids[:7])
			},
			// Each language applies its event once and shares the Go kit's inbox.
			"inbox-contract.md": func(t *testing.T, out string) { checkInboxGuide(t, db, out) },
			// The requeue examples put the FAILED events back to PENDING.
			"operations.md": func(t *testing.T, _ string) {
				waitStatus(t, db, "orders-outbox", failedIDs, "PENDING")
			},
		}
		for _, guide := range guides(t) {
			t.Run(strings.TrimSuffix(guide, ".md"), func(t *testing.T) {
				out := runGuide(t, endpoint, guide, guideWork)
				if check := checks[guide]; check != nil {
					check(t, out)
				}
			})
		}
	})
}

func roundTripEnv(lang string) []string {
	return []string{"OUTBOX_TABLE=shop", "EVENT_SOURCE=com.example." + lang, "QUEUE_NAME=consumer-" + lang}
}

func expectOutput(t *testing.T, out, prefix string, n int) {
	t.Helper()
	if got := strings.Count(out, prefix); got != n {
		t.Fatalf("output has %d lines %q, want %d:\n%s", got, prefix, n, out)
	}
}

// createShopTable creates the application table of the record contract
// guide.
func createShopTable(t *testing.T, db *dynamodb.Client) {
	t.Helper()
	_, err := db.CreateTable(context.Background(), localawstest.TableInput("shop", "PK", "SK", ""))
	if err != nil {
		t.Fatalf("creating table shop: %v", err)
	}
}

// failedIDs are the FAILED events of the operations guide.
var failedIDs = []string{"01M8NZ6R8V7V3B9Q2M4K8D1X6R", "01M8NZ6R8V7V3B9Q2M4K8D1X6S"}

// seedFailedEvents stores the FAILED events that the operations guide
// requeues, with the CLI and in Go.
func seedFailedEvents(t *testing.T, db *dynamodb.Client) {
	t.Helper()
	for _, id := range failedIDs {
		key := "OUTBOX#" + id
		_, err := db.PutItem(context.Background(), &dynamodb.PutItemInput{
			TableName: aws.String("orders-outbox"),
			Item: map[string]types.AttributeValue{
				"PK": &types.AttributeValueMemberS{Value: key}, "SK": &types.AttributeValueMemberS{Value: key},
				"eventId": &types.AttributeValueMemberS{Value: id}, "source": &types.AttributeValueMemberS{Value: "com.example.orders"},
				"detailType": &types.AttributeValueMemberS{Value: "OrderPlaced"},
				"detail":     &types.AttributeValueMemberS{Value: `{"orderId":"1234","total":42.5}`},
				"occurredAt": &types.AttributeValueMemberS{Value: "2026-11-30T10:15:00.123Z"},
				"status":     &types.AttributeValueMemberS{Value: "FAILED"}, "lastError": &types.AttributeValueMemberS{Value: "AccessDeniedException"},
				"attempts": &types.AttributeValueMemberN{Value: "1"}, "outboxVersion": &types.AttributeValueMemberN{Value: "1"},
			},
		})
		if err != nil {
			t.Fatalf("seeding FAILED event %s: %v", id, err)
		}
	}
}

// printedEvents are the ids of the lines "event <ULID>" in out.
func printedEvents(out string) []string {
	var ids []string
	for _, line := range strings.Split(out, "\n") {
		if id, ok := strings.CutPrefix(strings.TrimSpace(line), "event "); ok && len(id) == 26 {
			ids = append(ids, id)
		}
	}
	return ids
}

// waitStatus waits until every event of ids in table has status.
func waitStatus(t *testing.T, db *dynamodb.Client, table string, ids []string, status string) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for _, id := range ids {
		for {
			got, err := eventStatus(db, table, id)
			if err == nil && got == status {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("event %s in %s is %q (%v), not %s, after 2 minutes", id, table, got, err, status)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
}

// eventItem returns the item of the event id in table.
func eventItem(db *dynamodb.Client, table, id string) (map[string]types.AttributeValue, error) {
	out, err := db.Scan(context.Background(), &dynamodb.ScanInput{
		TableName:                 aws.String(table),
		FilterExpression:          aws.String("eventId = :id"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":id": &types.AttributeValueMemberS{Value: id}},
		ConsistentRead:            aws.Bool(true),
	})
	if err != nil {
		return nil, err
	}
	if len(out.Items) != 1 {
		return nil, fmt.Errorf("%d items", len(out.Items))
	}
	return out.Items[0], nil
}

// checkOrigins fails unless every event of ids in table carries the Region
// of the stack's clients as its origin, as each language's writer stamps it.
func checkOrigins(t *testing.T, db *dynamodb.Client, table string, ids []string) {
	t.Helper()
	for _, id := range ids {
		item, err := eventItem(db, table, id)
		if err != nil {
			t.Fatalf("event %s: %v", id, err)
		}
		if got, _ := item["outboxOrigin"].(*types.AttributeValueMemberS); got == nil || got.Value != db.Options().Region {
			t.Errorf("event %s: outboxOrigin %v, want %q", id, item["outboxOrigin"], db.Options().Region)
		}
	}
}

func eventStatus(db *dynamodb.Client, table, id string) (string, error) {
	item, err := eventItem(db, table, id)
	if err != nil {
		return "", err
	}
	s, _ := item["status"].(*types.AttributeValueMemberS)
	if s == nil {
		return "", fmt.Errorf("no status")
	}
	if s.Value == "PENDING" {
		if _, indexed := item["outboxPendingShard"]; !indexed {
			return "", fmt.Errorf("pending without outboxPendingShard")
		}
	}
	return s.Value, nil
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o644); err != nil {
		t.Fatal(err)
	}
}
