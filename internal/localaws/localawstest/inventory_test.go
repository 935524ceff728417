package localawstest

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

func TestInventoryLeavesOutStreams(t *testing.T) {
	t.Parallel()
	stack := Start(t)
	RequireServices(t, stack, "dynamodb")
	ctl, ctx := Control(stack), context.Background()
	before := Inventory(ctx, t, ctl)
	_, err := dynamodb.NewFromConfig(Config(stack)).CreateTable(ctx, TableInput("streamed", "id", "", types.StreamViewTypeNewImage))
	if err != nil {
		t.Fatal(err)
	}
	after := Inventory(ctx, t, ctl)
	if SameInventory(before, after) {
		t.Fatalf("the inventory does not list the new table: %v", after)
	}
	var all []string
	for kind, v := range after {
		if len(v) == 0 || !slices.IsSorted(v) {
			t.Errorf("kind %s: %v, want a sorted, non-empty list", kind, v)
		}
		all = append(all, v...)
	}
	if !slices.ContainsFunc(all, func(r string) bool { return strings.HasSuffix(r, "table/streamed") }) {
		t.Errorf("the table is not listed: %v", all)
	}
	if slices.ContainsFunc(all, func(r string) bool { return strings.Contains(r, "/stream/") }) {
		t.Errorf("a stream is listed: %v", all)
	}
	raw, err := ctl.Resources(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var streams int
	for _, v := range raw {
		streams += len(slices.DeleteFunc(slices.Clone(v), func(r string) bool { return !strings.Contains(r, "/stream/") }))
	}
	if streams == 0 {
		t.Errorf("the stack lists no stream of the table, so the test proves nothing: %v", raw)
	}
}
