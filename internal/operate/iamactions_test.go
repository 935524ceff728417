package operate

import (
	"errors"
	"slices"
	"testing"

	"github.com/aws/smithy-go"
)

// The IAM actions of an API operation come from the table where they are
// not named after it.
func TestIAMActions(t *testing.T) {
	t.Parallel()
	for op, want := range map[string][]string{
		"dynamodb:TransactWriteItems": {"dynamodb:UpdateItem"},
		"sns:PublishBatch":            {"sns:Publish"},
		"sqs:SendMessageBatch":        {"sqs:SendMessage"},
		"s3:HeadObject":               {"s3:GetObject"},
		"dynamodb:Query":              {"dynamodb:Query"},
	} {
		if got := IAMActions(op); !slices.Equal(got, want) {
			t.Errorf("IAMActions(%s) = %v, want %v", op, got, want)
		}
	}
	if got := IAMActions("dynamodb:UpdateItem", "dynamodb:TransactWriteItems", "dynamodb:Scan"); !slices.Equal(got, []string{"dynamodb:UpdateItem", "dynamodb:Scan"}) {
		t.Errorf("IAMActions of three operations = %v, want each action once", got)
	}
}

// A denied call's advice names the IAM action to grant, not the operation.
func TestCallNamesTheIAMAction(t *testing.T) {
	t.Parallel()
	denied := &smithy.GenericAPIError{Code: "AccessDeniedException", Message: "denied"}
	var pe *PermissionError
	if err := call("dynamodb:TransactWriteItems", "table t", denied); !errors.As(err, &pe) || pe.Action != "dynamodb:UpdateItem" {
		t.Errorf("a denied TransactWriteItems advises %v, want dynamodb:UpdateItem", err)
	}
}
