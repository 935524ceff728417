package relay_test

import (
	"io"
	"log/slog"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/outboxkit/terraform-provider-outbox/internal/relay/logging"
	"github.com/outboxkit/terraform-provider-outbox/outbox"
)

func newLogger(w io.Writer) *slog.Logger { return logging.New(w, slog.LevelDebug) }

func batchDelete(table outbox.Table, r outbox.Record) *dynamodb.BatchWriteItemInput {
	return &dynamodb.BatchWriteItemInput{RequestItems: map[string][]types.WriteRequest{
		aws.ToString(aws.String(table.Name)): {table.Delete(r)},
	}}
}

func nAttr(n int64) types.AttributeValue {
	return &types.AttributeValueMemberN{Value: strconv.FormatInt(n, 10)}
}
