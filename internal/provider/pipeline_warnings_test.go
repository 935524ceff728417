package provider

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/localawstest"
	"github.com/outboxkit/terraform-provider-outbox/outbox"
)

// The warning of a plan that replaces a pipeline counts the undelivered
// events of its table and says what apply will do.
func TestWarnUndeliveredOnReplace(t *testing.T) {
	t.Parallel()
	stack := localawstest.Start(t)
	cfg := localawstest.Config(stack)
	ctx := t.Context()
	r := &PipelineResource{data: &ProviderData{AWS: cfg}}
	c := r.clients()
	table := outbox.Table{Name: "warned-outbox"}.WithDefaults()
	if _, err := c.DynamoDB.CreateTable(ctx, &dynamodb.CreateTableInput{
		TableName: aws.String(table.Name), BillingMode: ddbtypes.BillingModePayPerRequest,
		AttributeDefinitions: []ddbtypes.AttributeDefinition{
			{AttributeName: aws.String(table.PartitionKey), AttributeType: ddbtypes.ScalarAttributeTypeS},
			{AttributeName: aws.String(table.SortKey), AttributeType: ddbtypes.ScalarAttributeTypeS},
		},
		KeySchema: []ddbtypes.KeySchemaElement{
			{AttributeName: aws.String(table.PartitionKey), KeyType: ddbtypes.KeyTypeHash},
			{AttributeName: aws.String(table.SortKey), KeyType: ddbtypes.KeyTypeRange},
		},
	}); err != nil {
		t.Fatal(err)
	}
	state := PipelineResourceModel{Name: types.StringValue("warned"), TableName: types.StringValue(table.Name), ForceDestroy: types.BoolValue(false)}
	if diags := r.warnUndeliveredOnReplace(ctx, state); len(diags) != 0 {
		t.Fatalf("an empty table warns: %v", diags)
	}
	w, err := outbox.NewWriter(c.DynamoDB, table)
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, err := w.Write(ctx, nil, outbox.Event{Source: "shop", DetailType: "OrderPlaced", Detail: json.RawMessage(`{}`)}); err != nil {
			t.Fatal(err)
		}
	}
	diags := r.warnUndeliveredOnReplace(ctx, state)
	if len(diags) != 1 || !strings.Contains(diags[0].Detail(), "2 PENDING and 0 FAILED") || !strings.Contains(diags[0].Detail(), "Apply will fail") {
		t.Fatalf("warning = %v", diags)
	}
	state.ForceDestroy = types.BoolValue(true)
	if diags := r.warnUndeliveredOnReplace(ctx, state); len(diags) != 1 || !strings.Contains(diags[0].Detail(), "apply will delete the table and these events") {
		t.Fatalf("warning under force_destroy = %v", diags)
	}
	state.Table = &TableModel{Existing: types.BoolValue(true)}
	if diags := r.warnUndeliveredOnReplace(ctx, state); len(diags) != 0 {
		t.Fatalf("an adopted table, which a replacement keeps, warns: %v", diags)
	}
}
