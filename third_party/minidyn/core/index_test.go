package core

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/outboxkit/terraform-provider-outbox/third_party/minidyn/types"
)

// sparseTable has a GSI "byStatus" on the optional attribute "gsik".
func sparseTable(t *testing.T) *Table {
	t.Helper()

	table := NewTable("sparse")
	table.AttributesDef = map[string]string{"id": "S", "gsik": "S"}
	table.KeySchema = keySchema{HashKey: "id"}
	name, all := "byStatus", "ALL"
	err := table.AddGlobalIndexes([]*types.GlobalSecondaryIndex{{
		IndexName:             &name,
		KeySchema:             []*types.KeySchemaElement{{AttributeName: "gsik", KeyType: "HASH"}},
		Projection:            &types.Projection{ProjectionType: &all},
		ProvisionedThroughput: &types.ProvisionedThroughput{ReadCapacityUnits: 1, WriteCapacityUnits: 1},
	}})
	require.NoError(t, err)

	return table
}

func indexedKeys(i *index) []string {
	var out []string
	for k := range i.primaryKeys(true) {
		out = append(out, k)
	}

	return out
}

// TestIndexFollowsUpdates: items that gain the index keys through Update
// are indexed, a changed index key moves the entry, and an item that loses
// its keys through Put, Update or Delete leaves the index.
func TestIndexFollowsUpdates(t *testing.T) {
	c := require.New(t)
	table := sparseTable(t)

	const n = 200
	for i := range n {
		_, err := table.Put(&types.PutItemInput{Item: map[string]*types.Item{"id": {S: new(fmt.Sprintf("%03d", i))}}})
		c.NoError(err)
	}

	idx := table.Indexes["byStatus"]
	c.Zero(idx.count())

	set := func(i int, expr string, values map[string]*types.Item) {
		_, err := table.Update(&types.UpdateItemInput{
			Key:                       map[string]*types.Item{"id": {S: new(fmt.Sprintf("%03d", i))}},
			UpdateExpression:          expr,
			ExpressionAttributeValues: values,
		})
		c.NoError(err)
	}

	for i := range n {
		set(i, "SET gsik = :s", map[string]*types.Item{":s": {S: new(fmt.Sprintf("P%d", i%4))}})
	}
	c.Equal(int64(n), idx.count())
	c.Len(indexedKeys(idx), n)
	c.Len(idx.refs, n)

	for i := range n {
		set(i, "SET gsik = :s", map[string]*types.Item{":s": {S: new("DONE")}})
	}
	c.Equal(int64(n), idx.count())

	for k := range idx.primaryKeys(true) {
		c.Equal("DONE", idx.refs[k].indexKey)
	}

	_, err := table.Put(&types.PutItemInput{Item: map[string]*types.Item{"id": {S: new("000")}}})
	c.NoError(err)
	_, err = table.Delete(&types.DeleteItemInput{Key: map[string]*types.Item{"id": {S: new("001")}}})
	c.NoError(err)
	c.Equal(int64(n-2), idx.count())
	c.NotContains(indexedKeys(idx), "000")
	c.NotContains(indexedKeys(idx), "001")
}
