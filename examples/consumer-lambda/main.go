// Command consumer-lambda is a Lambda function that applies each event of
// an outbox subscription once, with the consumer kit
// github.com/outboxkit/terraform-provider-outbox/consumer.
//
// Its event source is the subscription's SQS queue, with
// ReportBatchItemFailures: the kit's HandleSQS reports the messages that
// failed, so that only they are delivered again. For each OrderPlaced event,
// the handler adds the order's total to a counter item of the application's
// table, in the same DynamoDB transaction that completes the event's inbox
// entry: however often the event is delivered, the counter moves once.
//
// Configuration, from the subscription's attributes:
//
//	INBOX_TABLE   outbox_subscription.<name>.inbox.table_name
//	COUNTS_TABLE  the application's table (string partition key "id")
//
// Build it for provided.al2023 (arm64 here; GOARCH=amd64 for x86_64):
//
//	GOOS=linux GOARCH=arm64 CGO_ENABLED=0 go build -tags lambda.norpc -o bootstrap .
//	zip consumer.zip bootstrap
package main

import (
	"context"
	"fmt"
	"log"
	"os"
	"strconv"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/outboxkit/terraform-provider-outbox/consumer"
)

// OrderPlaced is the data of an OrderPlaced event.
type OrderPlaced struct {
	OrderID string  `json:"orderId"`
	Total   float64 `json:"total"`
}

// CounterID is the key of the counter item in the counts table.
const CounterID = "orders-placed"

// countOrder is the handler: its effect, the counter's update, goes into
// the transaction that completes the inbox entry.
func countOrder(table string) consumer.Handler[OrderPlaced] {
	return func(_ context.Context, e consumer.Event[OrderPlaced], tx *consumer.Tx) error {
		if e.DetailType != "OrderPlaced" {
			return nil // completed with no effect
		}
		if e.Data.OrderID == "" {
			return fmt.Errorf("event %s: the order has no orderId", e.ID)
		}
		tx.Add(types.TransactWriteItem{Update: &types.Update{
			TableName:                aws.String(table),
			Key:                      map[string]types.AttributeValue{"id": &types.AttributeValueMemberS{Value: CounterID}},
			UpdateExpression:         aws.String("ADD #orders :one, #total :total"),
			ExpressionAttributeNames: map[string]string{"#orders": "orders", "#total": "total"},
			ExpressionAttributeValues: map[string]types.AttributeValue{
				":one":   &types.AttributeValueMemberN{Value: "1"},
				":total": &types.AttributeValueMemberN{Value: strconv.FormatFloat(e.Data.Total, 'f', -1, 64)},
			},
		}})
		return nil
	}
}

func main() {
	inboxTable, countsTable := os.Getenv("INBOX_TABLE"), os.Getenv("COUNTS_TABLE")
	if inboxTable == "" || countsTable == "" {
		log.Fatal("consumer-lambda: set INBOX_TABLE and COUNTS_TABLE")
	}
	cfg, err := config.LoadDefaultConfig(context.Background())
	if err != nil {
		log.Fatalf("consumer-lambda: loading the AWS configuration: %v", err)
	}
	inbox, err := consumer.NewInbox(dynamodb.NewFromConfig(cfg), inboxTable)
	if err != nil {
		log.Fatalf("consumer-lambda: %v", err)
	}
	c, err := consumer.New(inbox, countOrder(countsTable))
	if err != nil {
		log.Fatalf("consumer-lambda: %v", err)
	}
	lambda.Start(c.HandleSQS)
}
