package relay

import (
	"context"
	"errors"

	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/outboxkit/terraform-provider-outbox/internal/relay/claimsweep"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay/config"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay/reconcile"
)

// ReconcileReport is what a reconcile run reports: the reconciler's
// report and, with a claim-check bucket (OUTBOX_CLAIM_BUCKET), what the
// sweep after it did.
type ReconcileReport struct {
	reconcile.Report
	// Claims is the sweep's count; nil without a claim-check bucket.
	Claims *ClaimsReport `json:"claims,omitempty"`
	// Regions is what the run of a multi-Region pipeline did across
	// Regions; nil for a single-Region pipeline.
	Regions *RegionsReport `json:"regions,omitempty"`
}

// ClaimsReport counts what a sweep of the claim-check bucket did
// (claimsweep.Result).
type ClaimsReport struct {
	Examined int `json:"examined"`
	Removed  int `json:"removed"`
	Kept     int `json:"kept"`
	// Error is why the sweep stopped early; the next run sweeps again.
	Error string `json:"error,omitempty"`
}

// newClaimSweeper is the sweep of cfg's claim-check bucket; nil without
// one. The S3 client is clients.S3, or one built from clients.AWS.
func newClaimSweeper(cfg config.Config, clients Clients, opts Options) (*claimsweep.Sweeper, error) {
	if cfg.ClaimBucket == "" {
		return nil, nil
	}
	items, ok := clients.DynamoDB.(claimsweep.ItemGetter)
	if !ok {
		return nil, errors.New("relay: the claim sweep needs a DynamoDB client with GetItem")
	}
	objects := clients.S3
	if objects == nil {
		objects = s3.NewFromConfig(clients.AWS)
	}
	return &claimsweep.Sweeper{S3: objects, Items: items, Table: cfg.Table, Bucket: cfg.ClaimBucket,
		Window: cfg.ClaimSweepWindow, Now: opts.Now}, nil
}

// sweepClaims runs the sweep after a reconcile run, if there is a bucket;
// a failed sweep is logged and reported, never the run's failure.
func (r *Relay) sweepClaims(ctx context.Context, report reconcile.Report) ReconcileReport {
	out := ReconcileReport{Report: report}
	if r.claims == nil {
		return out
	}
	res, err := r.claims.Sweep(ctx)
	out.Claims = &ClaimsReport{Examined: res.Examined, Removed: res.Removed, Kept: res.Kept}
	if err != nil {
		out.Claims.Error = err.Error()
		r.log.WarnContext(ctx, "claim sweep stopped", "bucket", r.claims.Bucket, "error", err)
	}
	r.log.InfoContext(ctx, "claim sweep finished", "bucket", r.claims.Bucket,
		"examined", res.Examined, "removed", res.Removed, "kept", res.Kept)
	return out
}
