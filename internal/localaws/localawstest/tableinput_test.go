package localawstest_test

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/localawstest"
)

func TestTableInput(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, hash, rangeKey string
		view                 types.StreamViewType
		wantKeys             []string // "name:HASH|RANGE"
	}{
		{"hash only, no stream", "PK", "", "", []string{"PK:HASH"}},
		{"hash and range, stream", "pk", "sk", types.StreamViewTypeNewAndOldImages, []string{"pk:HASH", "sk:RANGE"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			in := localawstest.TableInput("t", tc.hash, tc.rangeKey, tc.view)
			if aws.ToString(in.TableName) != "t" || in.BillingMode != types.BillingModePayPerRequest {
				t.Errorf("TableName %q, BillingMode %q; want t, PAY_PER_REQUEST", aws.ToString(in.TableName), in.BillingMode)
			}
			if len(in.KeySchema) != len(tc.wantKeys) || len(in.AttributeDefinitions) != len(tc.wantKeys) {
				t.Fatalf("KeySchema %d, AttributeDefinitions %d; want %d each", len(in.KeySchema), len(in.AttributeDefinitions), len(tc.wantKeys))
			}
			for i, k := range in.KeySchema {
				got := aws.ToString(k.AttributeName) + ":" + string(k.KeyType)
				if got != tc.wantKeys[i] || in.AttributeDefinitions[i].AttributeType != types.ScalarAttributeTypeS {
					t.Errorf("key %d = %s (%s), want %s (S)", i, got, in.AttributeDefinitions[i].AttributeType, tc.wantKeys[i])
				}
			}
			switch s := in.StreamSpecification; {
			case tc.view == "" && s != nil:
				t.Errorf("StreamSpecification %+v, want none", s)
			case tc.view != "" && (s == nil || !aws.ToBool(s.StreamEnabled) || s.StreamViewType != tc.view):
				t.Errorf("StreamSpecification %+v, want %s enabled", s, tc.view)
			}
		})
	}
}
