package relaytest

import (
	"context"
	"errors"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
)

// CancelledTransactions is a DynamoDB client whose transactions are
// cancelled: a claim-checking writer has stored the object, and its item
// never commits.
type CancelledTransactions struct{ *dynamodb.Client }

// TransactWriteItems fails as a cancelled transaction does.
func (CancelledTransactions) TransactWriteItems(context.Context, *dynamodb.TransactWriteItemsInput, ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error) {
	return nil, errors.New("TransactionCanceledException")
}
