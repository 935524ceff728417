package outbox_test

import (
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/outboxkit/terraform-provider-outbox/outbox"
)

func TestWriterStampsTheOriginRegion(t *testing.T) {
	t.Parallel()
	table := outbox.Table{Name: "orders", Layout: outbox.LayoutShared}
	cases := []struct {
		name   string
		client outbox.TransactWriter
		opts   []outbox.WriterOption
		want   string
	}{
		{name: "the client's Region", client: dynamodb.NewFromConfig(aws.Config{Region: "eu-central-1"}), want: "eu-central-1"},
		{name: "WithOrigin over the client's", client: dynamodb.NewFromConfig(aws.Config{Region: "eu-central-1"}), opts: []outbox.WriterOption{outbox.WithOrigin("us-east-2")}, want: "us-east-2"},
		{name: "WithOrigin for a client that does not say", client: &recordingClient{}, opts: []outbox.WriterOption{outbox.WithOrigin("ap-southeast-5")}, want: "ap-southeast-5"},
		{name: "none from a client that does not say", client: &recordingClient{}, want: ""},
		{name: "none without a client", client: nil, want: ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			w, err := outbox.NewWriter(c.client, table, c.opts...)
			if err != nil {
				t.Fatalf("NewWriter: %v", err)
			}
			action, rec, err := w.Put(orderPlaced())
			if err != nil {
				t.Fatalf("Put: %v", err)
			}
			if rec.Origin != c.want {
				t.Errorf("record origin %q, want %q", rec.Origin, c.want)
			}
			got, stamped := action.Put.Item[outbox.AttrOrigin]
			if c.want == "" {
				if stamped {
					t.Errorf("item has %s %v, want none", outbox.AttrOrigin, got)
				}
				return
			}
			if s, ok := got.(*types.AttributeValueMemberS); !ok || s.Value != c.want {
				t.Errorf("item %s = %#v, want %q", outbox.AttrOrigin, got, c.want)
			}
			back, err := table.WithDefaults().ParseItem(action.Put.Item)
			if err != nil || back.Origin != c.want {
				t.Errorf("parsed back: origin %q, err %v; want %q", back.Origin, err, c.want)
			}
		})
	}
}

func TestWriterRefusesAnOriginThatIsNotARegion(t *testing.T) {
	t.Parallel()
	for _, region := range []string{"EU-WEST-1", "eu-west", "local", "eu west 1", "arn:aws:dynamodb:eu-west-1"} {
		_, err := outbox.NewWriter(nil, outbox.Table{Name: "orders"}, outbox.WithOrigin(region))
		if err == nil || !strings.Contains(err.Error(), "WithOrigin") || !strings.Contains(err.Error(), region) {
			t.Errorf("origin %q: want an error naming it and WithOrigin, got %v", region, err)
		}
	}
}

func TestItemsWithoutOriginStillParse(t *testing.T) {
	t.Parallel()
	table := outbox.Table{Name: "orders", Layout: outbox.LayoutShared}.WithDefaults()
	w := newWriter(t, nil, table)
	action, _, err := w.Put(orderPlaced())
	if err != nil {
		t.Fatalf("Put: %v", err)
	}
	delete(action.Put.Item, outbox.AttrOrigin)
	rec, err := table.ParseItem(action.Put.Item)
	if err != nil {
		t.Fatalf("ParseItem of an item without origin: %v", err)
	}
	if rec.Origin != "" {
		t.Errorf("origin %q, want none", rec.Origin)
	}
}
