package writertest_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/outboxkit/terraform-provider-outbox/internal/awsclient/awsclienttest"
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/localawstest"
	"github.com/outboxkit/terraform-provider-outbox/outbox"
)

// TestWriterAppWritesTheOrderAndItsEvent builds examples/writer-app as its
// own module (no go.work: the way an application builds against the writer
// module), runs it against the local stack's DynamoDB, and checks that the
// order and its pending outbox item were written together.
func TestWriterAppWritesTheOrderAndItsEvent(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	stack, client := startDynamoDB(t)
	table := outbox.Table{Name: "orders-outbox", PendingShards: 1}.WithDefaults()
	createTable(ctx, t, client, table.CreateTableInput())
	createTable(ctx, t, client, localawstest.TableInput("orders", "id", "", ""))

	app := filepath.Join(t.TempDir(), "writer-app")
	build := exec.CommandContext(ctx, "go", "build", "-o", app, ".")
	build.Dir = filepath.Join("..", "..", "examples", "writer-app")
	build.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=readonly")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building examples/writer-app on its own: %v\n%s", err, out)
	}
	run := exec.CommandContext(ctx, app, "-orders-table", "orders", "-outbox-table", table.Name, "-pending-shards", "1", "-order", "4711")
	run.Env = awsclienttest.Environ(map[string]string{
		"AWS_ENDPOINT_URL": stack.Endpoint(), "AWS_REGION": stack.Options().Region,
		"AWS_ACCESS_KEY_ID": "AKIDLOCALADMIN", "AWS_SECRET_ACCESS_KEY": "localadminsecret",
	})
	out, err := run.CombinedOutput()
	if err != nil {
		t.Fatalf("writer-app: %v\n%s", err, out)
	}
	m := regexp.MustCompile(`^order 4711 saved with event ([0-9A-Z]{26})\n$`).FindSubmatch(out)
	if m == nil {
		t.Fatalf("writer-app printed %q", out)
	}
	eventID := string(m[1])

	order, err := client.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: aws.String("orders"), ConsistentRead: aws.Bool(true),
		Key: map[string]types.AttributeValue{"id": &types.AttributeValueMemberS{Value: "4711"}},
	})
	if err != nil || order.Item == nil {
		t.Fatalf("the order: %v (item %v)", err, order)
	}
	items, err := client.Scan(ctx, &dynamodb.ScanInput{TableName: aws.String(table.Name), ConsistentRead: aws.Bool(true)})
	if err != nil || len(items.Items) != 1 {
		t.Fatalf("the outbox table holds %v (%v), want the one event", items, err)
	}
	r, err := table.ParseItem(items.Items[0])
	if err != nil {
		t.Fatalf("the outbox item breaks the contract: %v", err)
	}
	if r.EventID != eventID || r.Status != outbox.StatusPending || r.Source != "com.example.orders" || r.DetailType != "OrderPlaced" {
		t.Errorf("outbox item %+v, want pending OrderPlaced event %s", r, eventID)
	}
}
