package core

import (
	"fmt"
	"slices"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/outboxkit/terraform-provider-outbox/third_party/minidyn/interpreter"
	"github.com/outboxkit/terraform-provider-outbox/third_party/minidyn/types"
)

// partitionTable has a hash and range key and a GSI with a numeric range
// key; its partition values share prefixes ("a", "a.b", "ab") so that a
// Query's key range holds other partitions' keys too.
func partitionTable(t *testing.T) *Table {
	t.Helper()

	table := NewTable("partitions")
	table.AttributesDef = map[string]string{"pk": "S", "sk": "S", "gpk": "S", "gsk": "N"}
	table.KeySchema = keySchema{HashKey: "pk", RangeKey: "sk"}
	table.LangInterpreter = interpreter.Language{}
	name, all := "byShard", "ALL"
	require.NoError(t, table.AddGlobalIndexes([]*types.GlobalSecondaryIndex{{
		IndexName: &name,
		KeySchema: []*types.KeySchemaElement{
			{AttributeName: "gpk", KeyType: "HASH"}, {AttributeName: "gsk", KeyType: "RANGE"},
		},
		Projection:            &types.Projection{ProjectionType: &all},
		ProvisionedThroughput: &types.ProvisionedThroughput{ReadCapacityUnits: 1, WriteCapacityUnits: 1},
	}}))

	return table
}

var partitionValues = []string{"a", "a.b", "ab", "b", "a.b.c"}

func putPartitionItems(t *testing.T, table *Table) {
	t.Helper()

	for i := range 60 {
		item := map[string]*types.Item{
			"pk": {S: new(partitionValues[i%len(partitionValues)])},
			"sk": {S: new(fmt.Sprintf("%03d", i))},
		}
		if i%3 != 0 { // sparse index
			item["gpk"] = &types.Item{S: new(partitionValues[i%len(partitionValues)])}
			item["gsk"] = &types.Item{N: new(strconv.Itoa(i))}
		}

		_, err := table.Put(&types.PutItemInput{Item: item})
		require.NoError(t, err)
	}
}

func sortKeysOf(items []map[string]*types.Item) []string {
	out := make([]string, 0, len(items))
	for _, it := range items {
		out = append(out, types.StringValue(it["sk"].S))
	}

	return out
}

type partitionCase struct {
	index, hash, cond, value string
	prefix, forward          bool
}

// partitionCases are the Queries of every partition value, on the table
// (also with a range condition) and on the index, forward and backward,
// with the key on either side of "=".
func partitionCases() []partitionCase {
	var out []partitionCase

	for _, v := range partitionValues {
		for _, forward := range []bool{true, false} {
			out = append(out,
				partitionCase{hash: "pk", cond: "#h = :v", value: v, forward: forward},
				partitionCase{hash: "pk", cond: ":v = #h", value: v, forward: forward},
				partitionCase{hash: "pk", cond: "#h = :v AND begins_with(sk, :p)", value: v, prefix: true, forward: forward},
				partitionCase{index: "byShard", hash: "gpk", cond: "#h = :v", value: v, forward: forward},
				partitionCase{index: "byShard", hash: "gpk", cond: ":v = #h", value: v, forward: forward},
			)
		}
	}

	return out
}

// TestQueryReadsItsPartition: a Query on the table or on an index returns
// exactly the items of its partition, in key order either way, whether
// other partitions' values share its prefix or not, and whichever side of
// "=" names the key.
func TestQueryReadsItsPartition(t *testing.T) {
	table := partitionTable(t)
	putPartitionItems(t, table)

	for _, tc := range partitionCases() {
		name := fmt.Sprintf("%s/%s/%s/%v", tc.index, tc.cond, tc.value, tc.forward)
		values := map[string]*types.Item{":v": {S: new(tc.value)}}

		if tc.prefix {
			values[":p"] = &types.Item{S: new("0")}
		}

		items, _, err := table.SearchData(QueryInput{
			Index: tc.index, KeyConditionExpression: tc.cond, Aliases: map[string]string{"#h": tc.hash},
			ExpressionAttributeValues: values, ScanIndexForward: tc.forward,
		})
		require.NoError(t, err, name)

		want := expectedPartition(table, tc.hash, tc.value, tc.index != "", tc.prefix)
		if !tc.forward {
			slices.Reverse(want)
		}

		require.Equal(t, want, sortKeysOf(items), name)
	}
}

// expectedPartition lists the sort keys of the items whose hash attribute
// is v, in DynamoDB's key order (the index's numbers by value), from the
// stored data.
func expectedPartition(table *Table, hash, v string, index, skPrefix bool) []string {
	type entry struct {
		order int
		sk    string
	}

	var out []entry

	for _, item := range table.Data {
		h, ok := item[hash]
		if !ok || types.StringValue(h.S) != v {
			continue
		}

		sk := types.StringValue(item["sk"].S)
		if skPrefix && sk[0] != '0' {
			continue
		}

		order, _ := strconv.Atoi(sk)
		if index {
			order, _ = strconv.Atoi(types.StringValue(item["gsk"].N))
		}

		out = append(out, entry{order, sk})
	}

	slices.SortFunc(out, func(a, b entry) int { return a.order - b.order })

	keys := make([]string, len(out))
	for i, e := range out {
		keys[i] = e.sk
	}

	return keys
}

// TestQueryWithoutPartitionEqualitySearchesEverything: a key condition
// without an equality on the hash key (which DynamoDB refuses) or with OR
// is left to the interpreter over every key, as before.
func TestQueryWithoutPartitionEqualitySearchesEverything(t *testing.T) {
	table := partitionTable(t)

	for _, cond := range []string{"sk = :v", "pk = :v OR pk = :w", "pk = :w"} {
		_, ok := table.partitionValue(QueryInput{
			KeyConditionExpression:    cond,
			ExpressionAttributeValues: map[string]*types.Item{":v": {S: new("a")}},
		}, table.KeySchema)
		require.False(t, ok, cond)
	}

	hash, ok := table.partitionValue(QueryInput{
		KeyConditionExpression:    "sk <= :s AND pk=:v",
		ExpressionAttributeValues: map[string]*types.Item{":v": {S: new("a.b")}, ":s": {S: new("1")}},
	}, table.KeySchema)
	require.True(t, ok)
	require.Equal(t, partitionOrder(&types.Item{S: new("a.b")}, "S"), hash)
}

// TestQueryResumesAfterItsStartKey: a Query read page by page, each from
// the last page's LastEvaluatedKey, returns its partition in order, on the
// table and on an index, forward and backward, also when the item of the
// start key has been deleted in between.
func TestQueryResumesAfterItsStartKey(t *testing.T) {
	for _, deleteStart := range []bool{false, true} {
		for _, tc := range partitionCases() {
			table := partitionTable(t)
			putPartitionItems(t, table)
			name := fmt.Sprintf("%s/%s/%s/%v/delete=%v", tc.index, tc.cond, tc.value, tc.forward, deleteStart)
			want := expectedPartition(table, tc.hash, tc.value, tc.index != "", tc.prefix)

			if !tc.forward {
				slices.Reverse(want)
			}

			got := queryPages(t, table, tc, deleteStart)
			require.Equal(t, want, got, name)
		}
	}
}

// queryPages reads tc's Query three items a page, deleting the last item
// of each page before reading the next when deleteStart is set; it
// returns the sort keys of every item read, deleted or not.
func queryPages(t *testing.T, table *Table, tc partitionCase, deleteStart bool) []string {
	t.Helper()

	values := map[string]*types.Item{":v": {S: new(tc.value)}}
	if tc.prefix {
		values[":p"] = &types.Item{S: new("0")}
	}

	var (
		got   []string
		start map[string]*types.Item
	)

	for range 100 {
		items, last, err := table.SearchData(QueryInput{
			Index: tc.index, KeyConditionExpression: tc.cond, Aliases: map[string]string{"#h": tc.hash},
			ExpressionAttributeValues: values, ScanIndexForward: tc.forward, Limit: 3, ExclusiveStartKey: start,
		})
		require.NoError(t, err)

		got = append(got, sortKeysOf(items)...)
		if len(last) == 0 {
			return got
		}

		if deleteStart {
			_, err := table.Delete(&types.DeleteItemInput{Key: map[string]*types.Item{"pk": last["pk"], "sk": last["sk"]}})
			require.NoError(t, err)
		}

		start = last
	}

	t.Fatal("the Query did not end in 100 pages")

	return nil
}
