package provision

import (
	"context"
	"fmt"
	"slices"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// A dedicated table with Table.ReplicaRegions is a global table, version
// 2019.11.21 with multi-Region eventual consistency: UpdateTable's
// ReplicaUpdates add and remove its replicas, and DescribeTable lists them
// ("Global tables: how it works" and "UpdateTable", DynamoDB developer
// guide and API reference). Its stream is NEW_AND_OLD_IMAGES, as a global
// table's must be. Each replica is added or removed on its own, once the
// table and the replicas before it are ACTIVE.

// StreamViewType is the view type of the stream of a table the pipeline
// owns: NEW_AND_OLD_IMAGES for a global table, NEW_IMAGE otherwise.
func (s Spec) StreamViewType() string {
	return string(s.streamViewType())
}

// KeepsStream reports whether the pipeline keeps a stream of viewType on
// its table: one with the new image, unless the pipeline owns the table
// and wants NEW_AND_OLD_IMAGES (a global table) instead.
func (s Spec) KeepsStream(viewType string) bool {
	want := s.streamViewType()
	return HasNewImage(viewType) && (s.Table.Existing || want == types.StreamViewTypeNewImage || viewType == string(want))
}

func (s Spec) streamViewType() types.StreamViewType {
	if len(s.Table.ReplicaRegions) > 0 {
		return types.StreamViewTypeNewAndOldImages
	}
	return types.StreamViewTypeNewImage
}

// replicaRegions are the Regions of the table's replicas besides own, in
// order.
func replicaRegions(desc *types.TableDescription, own string) []string {
	var out []string
	for _, r := range desc.Replicas {
		if region := aws.ToString(r.RegionName); region != own {
			out = append(out, region)
		}
	}
	slices.Sort(out)
	return out
}

// sameRegions reports whether two lists hold the same Regions.
func sameRegions(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

// ensureReplicas adds the replicas of the Spec that the owned table lacks
// and removes those it has beyond them.
func (c *Provisioner) ensureReplicas(ctx context.Context, s Spec, st *State) error {
	return c.syncReplicas(ctx, st, s.Table.ReplicaRegions)
}

// removeReplicas removes every replica of the owned table, before the
// table itself is deleted.
func (c *Provisioner) removeReplicas(ctx context.Context, st *State) error {
	return c.syncReplicas(ctx, st, nil)
}

// syncReplicas gives the owned table replicas in exactly the Regions want
// besides its own, one update at a time.
func (c *Provisioner) syncReplicas(ctx context.Context, st *State, want []string) error {
	desc, err := c.describeTable(ctx, st.TableName)
	if err != nil {
		return fmt.Errorf("reading its replicas: %w", err)
	}
	have := replicaRegions(desc, st.Region)
	for _, region := range want {
		if !slices.Contains(have, region) {
			if err := c.updateReplica(ctx, st.TableName, region, true); err != nil {
				return fmt.Errorf("adding its replica in %s: %w", region, err)
			}
		}
	}
	for _, region := range have {
		if !slices.Contains(want, region) {
			if err := c.updateReplica(ctx, st.TableName, region, false); err != nil {
				return fmt.Errorf("removing its replica in %s: %w", region, err)
			}
		}
	}
	return nil
}

// updateReplica adds (add) or removes the table's replica in region, and
// waits until the table is ACTIVE and the replica ACTIVE or gone.
func (c *Provisioner) updateReplica(ctx context.Context, table, region string, add bool) error {
	u := types.ReplicationGroupUpdate{Delete: &types.DeleteReplicationGroupMemberAction{RegionName: aws.String(region)}}
	what := fmt.Sprintf("the replica of table %s in %s to be removed", table, region)
	if add {
		u = types.ReplicationGroupUpdate{Create: &types.CreateReplicationGroupMemberAction{RegionName: aws.String(region)}}
		what = fmt.Sprintf("the replica of table %s in %s to be ACTIVE", table, region)
	}
	if _, err := c.DynamoDB.UpdateTable(ctx, &dynamodb.UpdateTableInput{TableName: aws.String(table), ReplicaUpdates: []types.ReplicationGroupUpdate{u}}); err != nil {
		return err
	}
	return c.waitFor(ctx, what, func(ctx context.Context) (bool, error) {
		desc, err := c.describeTable(ctx, table)
		if err != nil || desc.TableStatus != types.TableStatusActive {
			return false, err
		}
		i := slices.IndexFunc(desc.Replicas, func(r types.ReplicaDescription) bool { return aws.ToString(r.RegionName) == region })
		if add {
			return i >= 0 && desc.Replicas[i].ReplicaStatus == types.ReplicaStatusActive, nil
		}
		return i < 0, nil
	})
}

// readReplicas reports the replica_regions of an owned table changed out
// of band.
func readReplicas(s Spec, st State, desc *types.TableDescription) []string {
	if sameRegions(replicaRegions(desc, st.Region), s.Table.ReplicaRegions) {
		return nil
	}
	return []string{"replica_regions"}
}
