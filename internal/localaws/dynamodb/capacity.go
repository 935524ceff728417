package dynamodb

import (
	"maps"
	"math"
	"slices"

	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// consumed accumulates the capacity units an operation consumes per table,
// following DynamoDB's rules: a write costs one unit per started KB of the
// larger of the old and new item (plus the same in each index the item is
// or was in), a strongly consistent read one unit per started 4 KB
// (half for eventually consistent reads), and transactions cost double.
//
// Index writes made by a transaction are doubled too. No AWS document
// settles that: the developer guide says a transaction makes two underlying
// writes of every item (prepare and commit), and that a write also writes
// the table's indexes, but not whether an index's write is billed once or
// twice. The stack takes the upper figure; the performance report and the
// costs guide give both.
type consumed struct {
	order  []string
	tables map[string]*tableUnits
}

type tableUnits struct {
	table, read, write float64
	gsis               map[string]float64
}

func newConsumed() *consumed { return &consumed{tables: map[string]*tableUnits{}} }

func (c *consumed) of(table string) *tableUnits {
	u, ok := c.tables[table]
	if !ok {
		u = &tableUnits{gsis: map[string]float64{}}
		c.tables[table] = u
		c.order = append(c.order, table)
	}
	return u
}

func writeUnitsFor(size int) float64 { return math.Max(1, math.Ceil(float64(size)/1024)) }

func readUnitsFor(size int, consistent bool) float64 {
	u := math.Max(1, math.Ceil(float64(size)/4096))
	if !consistent {
		u /= 2
	}
	return u
}

// write records a write of one item.
func (c *consumed) write(t *table, old, cur Item, factor float64) {
	u := c.of(t.name)
	size := max(itemSize(old), itemSize(cur))
	w := writeUnitsFor(size) * factor
	u.table += w
	u.write += w
	for _, i := range t.gsis {
		n := 0
		if inIndex(i, old) {
			n++
		}
		if inIndex(i, cur) && (!inIndex(i, old) || !sameIndexKey(i, old, cur)) {
			n++
		}
		if n > 0 {
			gw := float64(n) * writeUnitsFor(size) * factor
			u.gsis[i.IndexName] += gw
			u.write += gw
		}
	}
}

// read records reading items of the given total size, from the table or
// an index.
func (c *consumed) read(t *table, indexName string, size int, consistent bool, factor float64) {
	u := c.of(t.name)
	r := readUnitsFor(size, consistent) * factor
	u.read += r
	if indexName != "" && t.index(indexName) != nil {
		u.gsis[indexName] += r
		return
	}
	u.table += r
}

func inIndex(i *index, it Item) bool {
	if it == nil {
		return false
	}
	for _, k := range i.KeySchema {
		if _, ok := it[k.AttributeName]; !ok {
			return false
		}
	}
	return true
}

func sameIndexKey(i *index, a, b Item) bool {
	for _, k := range i.KeySchema {
		if !equalItems(Item{"k": a[k.AttributeName]}, Item{"k": b[k.AttributeName]}) {
			return false
		}
	}
	return true
}

// render returns the ConsumedCapacity entries for the requested mode (nil
// for NONE).
func (c *consumed) render(mode ddbtypes.ReturnConsumedCapacity) []map[string]any {
	if mode != ddbtypes.ReturnConsumedCapacityTotal && mode != ddbtypes.ReturnConsumedCapacityIndexes {
		return nil
	}
	var out []map[string]any
	for _, name := range c.order {
		u := c.tables[name]
		m := map[string]any{"TableName": name, "CapacityUnits": u.read + u.write}
		if u.read > 0 {
			m["ReadCapacityUnits"] = u.read
		}
		if u.write > 0 {
			m["WriteCapacityUnits"] = u.write
		}
		if mode == ddbtypes.ReturnConsumedCapacityIndexes {
			m["Table"] = map[string]any{"CapacityUnits": u.table}
			if len(u.gsis) > 0 {
				names := slices.Sorted(maps.Keys(u.gsis))
				g := map[string]any{}
				for _, n := range names {
					g[n] = map[string]any{"CapacityUnits": u.gsis[n]}
				}
				m["GlobalSecondaryIndexes"] = g
			}
		}
		out = append(out, m)
	}
	return out
}

// single adds the one-table ConsumedCapacity member to out.
func (c *consumed) single(out map[string]any, mode ddbtypes.ReturnConsumedCapacity) map[string]any {
	if r := c.render(mode); len(r) > 0 {
		out["ConsumedCapacity"] = r[0]
	}
	return out
}

// list adds the per-table ConsumedCapacity list to out.
func (c *consumed) list(out map[string]any, mode ddbtypes.ReturnConsumedCapacity) map[string]any {
	if r := c.render(mode); len(r) > 0 {
		out["ConsumedCapacity"] = r
	}
	return out
}
