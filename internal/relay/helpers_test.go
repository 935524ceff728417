package relay_test

import (
	"io"
	"log/slog"
	"strconv"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/outboxkit/terraform-provider-outbox/internal/relay"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay/config"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay/logging"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay/relaytest"
	"github.com/outboxkit/terraform-provider-outbox/outbox"
)

func newLogger(w io.Writer) *slog.Logger { return logging.New(w, slog.LevelDebug) }

// newRelay wires a relay for cfg whose DynamoDB and target are fake,
// failing tb if it cannot.
func newRelay(tb testing.TB, cfg config.Config, fake *relaytest.AWS, opts relay.Options) *relay.Relay {
	tb.Helper()
	r, err := relay.New(cfg, relay.Clients{DynamoDB: fake, Target: fake}, opts)
	if err != nil {
		tb.Fatal(err)
	}
	return r
}

// retryingAt are the options of a relay whose clock is clock and that
// retries at once.
func retryingAt(clock func() time.Time) relay.Options {
	return relay.Options{Now: clock, Retry: &noSleep}
}

func batchDelete(table outbox.Table, r outbox.Record) *dynamodb.BatchWriteItemInput {
	return &dynamodb.BatchWriteItemInput{RequestItems: map[string][]types.WriteRequest{
		aws.ToString(aws.String(table.Name)): {table.Delete(r)},
	}}
}

func nAttr(n int64) types.AttributeValue {
	return &types.AttributeValueMemberN{Value: strconv.FormatInt(n, 10)}
}
