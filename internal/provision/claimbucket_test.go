package provision

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/outboxkit/terraform-provider-outbox/internal/relay/config"
)

func TestClaimCheckValidation(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name  string
		spec  Spec
		field string
	}{
		{"off, whatever the name", Spec{Name: "Orders_EU"}, ""},
		{"default bucket name", Spec{Name: "orders", ClaimCheck: ClaimCheckSpec{Enabled: true}}, ""},
		{"a name that makes no bucket name", Spec{Name: "Orders_EU", ClaimCheck: ClaimCheckSpec{Enabled: true}}, "ClaimCheck.BucketName"},
		{"an invalid bucket name", Spec{Name: "orders", ClaimCheck: ClaimCheckSpec{Enabled: true, BucketName: "a..b"}}, "ClaimCheck.BucketName"},
		{"adopted without a name", Spec{Name: "orders", ClaimCheck: ClaimCheckSpec{Enabled: true, Existing: true}}, "ClaimCheck.BucketName"},
		{"a key that is no ARN", Spec{Name: "orders", ClaimCheck: ClaimCheckSpec{Enabled: true, KMSKeyARN: "alias/x"}}, "ClaimCheck.KMSKeyARN"},
		{"published items kept forever", Spec{Name: "orders", PublishedTTL: ptr(time.Duration(0)), ClaimCheck: ClaimCheckSpec{Enabled: true}}, "PublishedTTL"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			wantValidation(t, tt.spec, tt.field)
		})
	}
}

func TestClaimCheckPoliciesAndEnvironment(t *testing.T) {
	t.Parallel()
	a := Account{Partition: "aws", Region: "eu-west-1", ID: "123456789012"}
	s := Spec{Name: "media", ClaimCheck: ClaimCheckSpec{Enabled: true, KMSKeyARN: "arn:aws:kms:eu-west-1:123456789012:key/k"},
		Reconciler: ReconcilerSpec{ScheduleExpression: "rate(3 hours)"}}
	r := s.resources(a, "arn:aws:dynamodb:eu-west-1:123456789012:table/media-outbox", "q")
	relay, recon := RelayPolicy(s, r).JSON(), ReconcilerPolicy(s, r).JSON()
	objects := `"arn:aws:s3:::media-claims/outbox/*"`
	// The relay reads an object to publish its data inline, decrypting it
	// with the bucket's key, and tags it once published.
	for _, want := range []string{`"s3:GetObject"`, `"s3:PutObjectTagging"`, `"kms:Decrypt"`, `"arn:aws:kms:eu-west-1:123456789012:key/k"`, objects} {
		if !strings.Contains(relay, want) {
			t.Errorf("relay policy lacks %s:\n%s", want, relay)
		}
	}
	// The reconciler republishes claim-checked events too, and reads and
	// tags their objects as the relay does.
	for _, want := range []string{`"s3:PutObjectTagging"`, `"kms:Decrypt"`, `"s3:ListBucket"`, `"s3:prefix": "outbox/*"`, `"s3:DeleteObject"`, `"s3:GetObject"`, `"s3:GetObjectTagging"`, `"dynamodb:GetItem"`, objects} {
		if !strings.Contains(recon, want) {
			t.Errorf("reconciler policy lacks %s:\n%s", want, recon)
		}
	}
	if strings.Contains(relay, "kms:GenerateDataKey") || strings.Contains(relay, "s3:DeleteObject") || strings.Contains(recon, "s3:PutObject\"") {
		t.Errorf("more than the calls need:\n%s\n%s", relay, recon)
	}
	writer, consumer := ClaimWriterPolicy(s, a).JSON(), ClaimConsumerPolicy(s, a).JSON()
	if !strings.Contains(writer, `"s3:PutObject"`) || !strings.Contains(writer, `"kms:GenerateDataKey"`) || strings.Contains(writer, "GetObject") {
		t.Errorf("writer policy:\n%s", writer)
	}
	if !strings.Contains(consumer, `"s3:GetObject"`) || !strings.Contains(consumer, `"kms:Decrypt"`) || strings.Contains(consumer, "PutObject") {
		t.Errorf("consumer policy:\n%s", consumer)
	}
	env := s.Environment("")
	if env[config.EnvClaimBucket] != "media-claims" || env[config.EnvClaimSweepWindow] != "6h0m0s" {
		t.Errorf("environment: %s=%q %s=%q, want the bucket and twice the 3-hour period",
			config.EnvClaimBucket, env[config.EnvClaimBucket], config.EnvClaimSweepWindow, env[config.EnvClaimSweepWindow])
	}
	off := Spec{Name: "media"}
	if ClaimWriterPolicy(off, a) != nil || strings.Contains(RelayPolicy(off, off.resources(a, "t", "q")).JSON(), "s3:") || off.Environment("")[config.EnvClaimBucket] != "" {
		t.Error("a pipeline without claim check has its grants or environment")
	}
}

func TestClaimExpiryFollowsPublishedTTL(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		action config.Action
		ttl    *time.Duration
		days   int32
	}{
		{config.ActionMark, nil, 30},
		{config.ActionMark, ptr(72 * time.Hour), 3},
		{config.ActionDelete, ptr(48 * time.Hour), 2},
		{config.ActionDelete, ptr(time.Duration(0)), 1},
	} {
		s := Spec{Name: "media", PublishedAction: tt.action, PublishedTTL: tt.ttl, ClaimCheck: ClaimCheckSpec{Enabled: true}}.WithDefaults()
		if got := s.claimExpiryDays(); got != tt.days {
			t.Errorf("%s with TTL %v: published objects expire after %d days, want %d", tt.action, tt.ttl, got, tt.days)
		}
	}
}

// wantValidation fails t unless s.Validate() accepts s (field "") or
// refuses it with a *ValidationError on field that names a fix.
func wantValidation(t *testing.T, s Spec, field string) {
	t.Helper()
	err := s.Validate()
	var ve *ValidationError
	switch {
	case field == "" && err != nil:
		t.Fatalf("Validate() = %v, want nil", err)
	case field != "" && (!errors.As(err, &ve) || ve.Field != field || ve.Fix == ""):
		t.Fatalf("Validate() = %v, want a *ValidationError on %s with a fix", err, field)
	}
}
