// Command writer-app is the smallest application of the outbox: it saves an
// order and its OrderPlaced event in one DynamoDB transaction, with the
// writer module github.com/outboxkit/terraform-provider-outbox/outbox. The
// pipeline's relay then publishes the event.
//
//	go run . -orders-table orders -outbox-table orders-outbox -order 1234
//
// The AWS SDK's default configuration applies: credentials, AWS_REGION, and
// AWS_ENDPOINT_URL for a local stack (go run ./cmd/localaws in this
// repository). The outbox table's settings come from the pipeline: its
// `writer` attribute, or the data source of the same name.
//
// The application depends on the writer module, the AWS SDK and ulid only:
// `go list -m all` lists nothing of Terraform or of the local stack
// (make writer-app-check proves it).
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/outboxkit/terraform-provider-outbox/outbox"
)

func main() {
	ordersTable := flag.String("orders-table", "orders", "the application's table (string key `id`)")
	outboxTable := flag.String("outbox-table", "orders-outbox", "the pipeline's outbox table")
	shards := flag.Int("pending-shards", 0, "the pipeline's pending_index.shards (0: the default)")
	orderID := flag.String("order", "1234", "the order id")
	flag.Parse()
	if err := run(context.Background(), *ordersTable, *outboxTable, *shards, *orderID); err != nil {
		log.Fatal(err)
	}
}

func run(ctx context.Context, ordersTable, outboxTable string, shards int, orderID string) error {
	cfg, err := config.LoadDefaultConfig(ctx)
	if err != nil {
		return fmt.Errorf("loading the AWS configuration: %w", err)
	}
	client := dynamodb.NewFromConfig(cfg)
	writer, err := outbox.NewWriter(client, outbox.Table{Name: outboxTable, PendingShards: shards})
	if err != nil {
		return err
	}
	order := types.TransactWriteItem{Put: &types.Put{
		TableName: aws.String(ordersTable),
		Item: map[string]types.AttributeValue{
			"id":       &types.AttributeValueMemberS{Value: orderID},
			"total":    &types.AttributeValueMemberN{Value: "42.5"},
			"placedAt": &types.AttributeValueMemberS{Value: time.Now().UTC().Format(time.RFC3339)},
		},
		ConditionExpression: aws.String("attribute_not_exists(id)"),
	}}
	detail, err := json.Marshal(map[string]any{"orderId": orderID, "total": 42.5})
	if err != nil {
		return err
	}
	records, err := writer.Write(ctx, []types.TransactWriteItem{order}, outbox.Event{
		Source:     "com.example.orders",
		DetailType: "OrderPlaced",
		Detail:     detail,
	})
	if err != nil {
		return fmt.Errorf("saving order %s with its event: %w", orderID, err)
	}
	_, err = fmt.Fprintf(os.Stdout, "order %s saved with event %s\n", orderID, records[0].EventID)
	return err
}
