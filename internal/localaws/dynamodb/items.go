package dynamodb

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
	mini "github.com/outboxkit/terraform-provider-outbox/third_party/minidyn/server"

	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/awsapi"
)

// convert copies between wire-compatible structs through JSON.
func convert(in, out any) error {
	b, err := json.Marshal(in)
	if err != nil {
		return awsapi.InternalFailure("encoding: %v", err)
	}
	if err := json.Unmarshal(b, out); err != nil {
		return awsapi.InternalFailure("decoding: %v", err)
	}
	return nil
}

// engineError maps an engine error to the DynamoDB wire error.
func engineError(err error) error {
	var ae *awsapi.Error
	if errors.As(err, &ae) {
		return ae
	}
	var tce *ddbtypes.TransactionCanceledException
	if errors.As(err, &tce) {
		return canceled(reasonsFromSDK(tce.CancellationReasons))
	}
	var ccf *ddbtypes.ConditionalCheckFailedException
	if errors.As(err, &ccf) {
		e := awsapi.NewError("ConditionalCheckFailedException", "The conditional request failed")
		if len(ccf.Item) > 0 {
			e = e.With("Item", fromSDKItem(ccf.Item))
		}
		return e
	}
	var api smithy.APIError
	if errors.As(err, &api) {
		e := awsapi.NewError(api.ErrorCode(), "%s", api.ErrorMessage())
		if api.ErrorCode() == "InternalServerError" {
			e.HTTPStatus, e.Sender = http.StatusInternalServerError, false
		}
		return e
	}
	return awsapi.ValidationException("%s", err.Error())
}

// conditionError is engineError with the item of a failed condition when
// ReturnValuesOnConditionCheckFailure is ALL_OLD.
func conditionError(err error, rv ddbtypes.ReturnValuesOnConditionCheckFailure, old Item) error {
	e := awsapi.AsError(engineError(err))
	if e.Code == "ConditionalCheckFailedException" && rv == ddbtypes.ReturnValuesOnConditionCheckFailureAllOld && old != nil {
		return e.With("Item", old)
	}
	return e
}

type reason struct {
	Code    string `json:"Code"`
	Message string `json:"Message,omitempty"`
	Item    Item   `json:"Item,omitempty"`
}

func reasonsFromSDK(in []ddbtypes.CancellationReason) []reason {
	out := make([]reason, len(in))
	for i, r := range in {
		out[i] = reason{Code: aws.ToString(r.Code), Message: aws.ToString(r.Message), Item: fromSDKItem(r.Item)}
	}
	return out
}

func canceled(reasons []reason) *awsapi.Error {
	codes := make([]string, len(reasons))
	for i, r := range reasons {
		codes[i] = r.Code
	}
	return awsapi.NewError("TransactionCanceledException",
		"Transaction cancelled, please refer cancellation reasons for specific reasons [%s]", strings.Join(codes, ", ")).
		With("CancellationReasons", reasons)
}

// resolveLocked turns a table name or ARN into the table and rewrites the
// name for the engine. Callers hold s.mu.
func (s *Service) resolveLocked(name **string) (*table, error) {
	if *name == nil || **name == "" {
		return nil, awsapi.ValidationException("1 validation error detected: Value null at 'tableName' failed to satisfy constraint: Member must not be null")
	}
	t, err := s.tableLocked(**name)
	if err != nil {
		return nil, err
	}
	*name = aws.String(t.name)
	return t, nil
}

// authorizedLocked resolves the table an operation names and authorises
// action on it; s.mu must be held.
func (s *Service) authorizedLocked(req *awsapi.Request, name **string, action string) (*table, error) {
	t, err := s.resolveLocked(name)
	if err != nil {
		return nil, err
	}
	if err := req.Authorize(action, t.arn); err != nil {
		return nil, err
	}
	return t, nil
}

// authorizedTableLocked finds the table a table operation names and
// authorises action on it; s.mu must be held.
func (s *Service) authorizedTableLocked(req *awsapi.Request, name, action string) (*table, error) {
	t, err := s.tableLocked(name)
	if err != nil {
		return nil, err
	}
	if err := req.Authorize(action, t.arn); err != nil {
		return nil, err
	}
	return t, nil
}

// authorizedIndexLocked resolves the table a Query or Scan names and
// authorises action on it or on the index it reads; s.mu must be held.
func (s *Service) authorizedIndexLocked(req *awsapi.Request, name **string, index *string, action string) (*table, error) {
	t, err := s.resolveLocked(name)
	if err != nil {
		return nil, err
	}
	arn, err := s.indexArn(t, index)
	if err != nil {
		return nil, err
	}
	if err := req.Authorize(action, arn); err != nil {
		return nil, err
	}
	return t, nil
}

// itemLocked reads an item by key; nil when absent.
func (s *Service) itemLocked(t *table, key Item) Item {
	out, err := s.engine.GetItem(bg, &mini.GetItemInput{TableName: &t.name, Key: toWireItem(key), ConsistentRead: aws.Bool(true)})
	if err != nil || len(out.Item) == 0 {
		return nil
	}
	return fromWireItem(out.Item)
}

// emitLocked records written items' changes: in the table's TTL index and
// on its stream. Every write path calls it with the items as stored.
func (s *Service) emitLocked(t *table, changes ...change) {
	s.indexTTLLocked(t, changes)
	s.replicateLocked(t, changes)
	if t.stream != nil && len(changes) > 0 {
		s.streams.append(t.stream.arn, changes)
	}
}

func without(m Item, names []string) Item {
	out := make(Item, len(m))
	maps.Copy(out, m)
	for _, n := range names {
		delete(out, n)
	}
	return out
}

// fixRemovesLocked applies the top-level REMOVE actions the engine
// ignores: it rewrites the item without them, which also drops its entries
// from indexes keyed on them.
func (s *Service) fixRemovesLocked(t *table, key Item, removes []string) error {
	cur := s.itemLocked(t, key)
	if cur == nil {
		return nil
	}
	stale := false
	for _, n := range removes {
		if _, ok := cur[n]; ok {
			stale = true
		}
	}
	if !stale {
		return nil
	}
	fixed := without(cur, removes)
	for _, k := range t.keyNames() {
		fixed[k] = cur[k]
	}
	if _, err := s.engine.PutItem(bg, &mini.PutItemInput{TableName: &t.name, Item: toWireItem(fixed)}); err != nil {
		return engineError(err)
	}
	return nil
}

func (s *Service) putItem(req *awsapi.Request, in *mini.PutItemInput) (any, error) {
	switch in.ReturnValues {
	case "", "NONE", "ALL_OLD":
	default:
		return nil, awsapi.ValidationException("Return values set to invalid value")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	t, err := s.authorizedLocked(req, &in.TableName, "dynamodb:PutItem")
	if err != nil {
		return nil, err
	}
	key := project(fromWireItem(in.Item), t.keyNames())
	old := s.itemLocked(t, key)
	rv := in.ReturnValues
	in.ReturnValues = ""
	_, err = s.engine.PutItem(bg, in)
	err = retryCondition(err, in.ConditionExpression, in.ExpressionAttributeNames, in.ExpressionAttributeValues, old, "",
		func(cond *string, names map[string]string, values wireItem) error {
			retry := *in
			retry.ConditionExpression, retry.ExpressionAttributeNames, retry.ExpressionAttributeValues = cond, names, values
			_, err := s.engine.PutItem(bg, &retry)
			return err
		})
	if err != nil {
		return nil, conditionError(err, in.ReturnValuesOnConditionCheckFailure, old)
	}
	cur := s.itemLocked(t, key)
	s.emitLocked(t, change{keys: key, oldImage: old, newImage: cur})
	var attrs Item
	if rv == "ALL_OLD" {
		attrs = old
	}
	return wroteItem(t, old, cur, attrs, in.ReturnConsumedCapacity), nil
}

func (s *Service) getItem(req *awsapi.Request, in *mini.GetItemInput) (any, error) {
	t, err := s.authorizedLocked(req, &in.TableName, "dynamodb:GetItem")
	if err != nil {
		return nil, err
	}
	out, err := s.engine.GetItem(bg, in)
	if err != nil {
		return nil, engineError(err)
	}
	resp := map[string]any{}
	if len(out.Item) > 0 {
		resp["Item"] = fromWireItem(out.Item)
	}
	c := newConsumed()
	c.read(t, "", itemSize(s.itemLocked(t, fromWireItem(in.Key))), aws.ToBool(in.ConsistentRead), 1)
	return c.single(resp, in.ReturnConsumedCapacity), nil
}

func (s *Service) updateItem(req *awsapi.Request, in *mini.UpdateItemInput) (any, error) {
	t, err := s.authorizedLocked(req, &in.TableName, "dynamodb:UpdateItem")
	if err != nil {
		return nil, err
	}
	key := fromWireItem(in.Key)
	removes := topLevelRemoves(aws.ToString(in.UpdateExpression), in.ExpressionAttributeNames)
	for _, r := range removes {
		if slices.Contains(t.keyNames(), r) {
			return nil, awsapi.ValidationException("One or more parameter values were invalid: Cannot update attribute %s. This attribute is part of the key", r)
		}
	}
	old := s.itemLocked(t, key)
	out, err := s.engine.UpdateItem(bg, in)
	err = retryCondition(err, in.ConditionExpression, in.ExpressionAttributeNames, in.ExpressionAttributeValues, old, aws.ToString(in.UpdateExpression),
		func(cond *string, names map[string]string, values wireItem) error {
			retry := *in
			retry.ConditionExpression, retry.ExpressionAttributeNames, retry.ExpressionAttributeValues = cond, names, values
			var err error
			out, err = s.engine.UpdateItem(bg, &retry)
			return err
		})
	if err != nil {
		return nil, conditionError(err, in.ReturnValuesOnConditionCheckFailure, old)
	}
	if err := s.fixRemovesLocked(t, key, removes); err != nil {
		return nil, err
	}
	cur := s.itemLocked(t, key)
	s.emitLocked(t, change{keys: key, oldImage: old, newImage: cur})
	attrs := fromWireItem(out.Attributes)
	if in.ReturnValues == "UPDATED_NEW" || in.ReturnValues == "UPDATED_OLD" {
		targets := updateTargets(aws.ToString(in.UpdateExpression), in.ExpressionAttributeNames)
		attrs = withEmpties(onlyTargets(attrs, targets), targets, map[bool]Item{true: cur, false: old}[in.ReturnValues == "UPDATED_NEW"])
	}
	switch in.ReturnValues {
	case "ALL_NEW":
		attrs = cur
	case "UPDATED_NEW":
		attrs = without(attrs, removes)
	case "ALL_OLD":
		attrs = old
	case "UPDATED_OLD":
		if attrs == nil && len(removes) > 0 {
			attrs = Item{}
		}
		for _, r := range removes {
			if v, ok := old[r]; ok {
				attrs[r] = v
			}
		}
	}
	return wroteItem(t, old, cur, attrs, in.ReturnConsumedCapacity), nil
}

func (s *Service) deleteItem(req *awsapi.Request, in *mini.DeleteItemInput) (any, error) {
	t, err := s.authorizedLocked(req, &in.TableName, "dynamodb:DeleteItem")
	if err != nil {
		return nil, err
	}
	key := fromWireItem(in.Key)
	old := s.itemLocked(t, key)
	out, err := s.engine.DeleteItem(bg, in)
	err = retryCondition(err, in.ConditionExpression, in.ExpressionAttributeNames, in.ExpressionAttributeValues, old, "",
		func(cond *string, names map[string]string, values wireItem) error {
			retry := *in
			retry.ConditionExpression, retry.ExpressionAttributeNames, retry.ExpressionAttributeValues = cond, names, values
			var err error
			out, err = s.engine.DeleteItem(bg, &retry)
			return err
		})
	if err != nil {
		return nil, conditionError(err, in.ReturnValuesOnConditionCheckFailure, old)
	}
	s.emitLocked(t, change{keys: key, oldImage: old, newImage: s.itemLocked(t, key)})
	return wroteItem(t, old, nil, fromWireItem(out.Attributes), in.ReturnConsumedCapacity), nil
}

// wroteItem is the response of a write of one item of t from old to cur
// (nil when deleted): attrs as its Attributes when there are any, and the
// capacity the write consumed when mode asks for it.
func wroteItem(t *table, old, cur, attrs Item, mode ddbtypes.ReturnConsumedCapacity) map[string]any {
	out := map[string]any{}
	if len(attrs) > 0 {
		out["Attributes"] = attrs
	}
	c := newConsumed()
	c.write(t, old, cur, 1)
	return c.single(out, mode)
}

func (s *Service) indexArn(t *table, indexName *string) (string, error) {
	if indexName == nil || *indexName == "" {
		return t.arn, nil
	}
	if t.index(*indexName) == nil {
		return "", awsapi.ValidationException("The table does not have the specified index: %s", *indexName)
	}
	return t.arn + "/index/" + *indexName, nil
}

type pendingWrite struct {
	t   *table
	key Item
	old Item
}

func keyID(t *table, key Item) string {
	return t.name + "\x00" + string(canonical(key))
}

func (s *Service) batchWriteItem(req *awsapi.Request, in *mini.BatchWriteItemInput) (any, error) {
	n := 0
	requests := map[string][]mini.WriteRequest{}
	var writes []pendingWrite
	seen := map[string]bool{}
	for name, reqs := range in.RequestItems {
		np := aws.String(name)
		t, err := s.resolveLocked(&np)
		if err != nil {
			return nil, err
		}
		if err := req.Authorize("dynamodb:BatchWriteItem", t.arn); err != nil {
			return nil, err
		}
		requests[t.name] = append(requests[t.name], reqs...)
		for _, r := range reqs {
			n++
			var key Item
			switch {
			case r.PutRequest != nil:
				key = project(fromWireItem(r.PutRequest.Item), t.keyNames())
			case r.DeleteRequest != nil:
				key = fromWireItem(r.DeleteRequest.Key)
			default:
				return nil, awsapi.ValidationException("Supplied AttributeValue has more than one datatypes set, must contain exactly one of the supported datatypes")
			}
			id := keyID(t, key)
			if seen[id] {
				return nil, awsapi.ValidationException("Provided list of item keys contains duplicates")
			}
			seen[id] = true
			writes = append(writes, pendingWrite{t: t, key: key, old: s.itemLocked(t, key)})
		}
	}
	if n == 0 || n > 25 {
		return nil, awsapi.ValidationException("1 validation error detected: Value at 'requestItems' failed to satisfy constraint: Map value must satisfy constraint: [Member must have length less than or equal to 25, Member must have length greater than or equal to 1]")
	}
	in.RequestItems = requests
	out, err := s.engine.BatchWriteItem(bg, in)
	if err != nil {
		return nil, engineError(err)
	}
	c := newConsumed()
	s.emitWritesLocked(writes, c, 1)
	if out.UnprocessedItems == nil {
		out.UnprocessedItems = map[string][]mini.WriteRequest{}
	}
	return c.list(map[string]any{"UnprocessedItems": out.UnprocessedItems}, in.ReturnConsumedCapacity), nil
}

// emitWritesLocked records the changes of a batch or transaction, per
// table in request order.
func (s *Service) emitWritesLocked(writes []pendingWrite, c *consumed, factor float64) {
	byTable := map[*table][]change{}
	var order []*table
	for _, w := range writes {
		if _, ok := byTable[w.t]; !ok {
			order = append(order, w.t)
		}
		cur := s.itemLocked(w.t, w.key)
		byTable[w.t] = append(byTable[w.t], change{keys: w.key, oldImage: w.old, newImage: cur})
		c.write(w.t, w.old, cur, factor)
	}
	for _, t := range order {
		s.emitLocked(t, byTable[t]...)
	}
}

// maxBatchGetBytes is the most item data one BatchGetItem returns; the
// keys past it come back in UnprocessedKeys.
const maxBatchGetBytes = 16 << 20

type batchGetTable struct {
	t  *table
	ka mini.KeysAndAttributes
}

// batchGetItem reads up to 100 items, each as GetItem would with the table's
// ConsistentRead and projection. As on DynamoDB, once the response holds
// 16 MB the remaining keys are returned in UnprocessedKeys with their
// table's request attributes, each item read counts its own units (rounded
// up to 4 KB, a missing item too), and duplicate keys are refused.
func (s *Service) batchGetItem(req *awsapi.Request, in *mini.BatchGetItemInput) (any, error) {
	tables, err := s.batchGetTablesLocked(req, in.RequestItems)
	if err != nil {
		return nil, err
	}
	responses := map[string][]Item{}
	unprocessed := map[string]mini.KeysAndAttributes{}
	c := newConsumed()
	size := 0
	for _, bt := range tables {
		responses[bt.t.name] = []Item{}
		for i, key := range bt.ka.Keys {
			if size >= maxBatchGetBytes {
				rest := bt.ka
				rest.Keys = bt.ka.Keys[i:]
				unprocessed[bt.t.name] = rest
				break
			}
			out, err := s.engine.GetItem(bg, &mini.GetItemInput{TableName: &bt.t.name, Key: key, ConsistentRead: aws.Bool(true),
				ExpressionAttributeNames: bt.ka.ExpressionAttributeNames, ProjectionExpression: bt.ka.ProjectionExpression})
			if err != nil {
				return nil, engineError(err)
			}
			stored := itemSize(s.itemLocked(bt.t, fromWireItem(key)))
			c.read(bt.t, "", stored, aws.ToBool(bt.ka.ConsistentRead), 1)
			if len(out.Item) > 0 {
				responses[bt.t.name] = append(responses[bt.t.name], fromWireItem(out.Item))
				size += stored
			}
		}
	}
	return c.list(map[string]any{"Responses": responses, "UnprocessedKeys": unprocessed}, in.ReturnConsumedCapacity), nil
}

// batchGetTablesLocked resolves and checks the tables of a BatchGetItem,
// in name order.
func (s *Service) batchGetTablesLocked(req *awsapi.Request, items map[string]mini.KeysAndAttributes) ([]batchGetTable, error) {
	n := 0
	var out []batchGetTable
	for name, ka := range items {
		np := aws.String(name)
		t, err := s.resolveLocked(&np)
		if err != nil {
			return nil, err
		}
		if err := req.Authorize("dynamodb:BatchGetItem", t.arn); err != nil {
			return nil, err
		}
		if len(ka.Keys) == 0 {
			return nil, awsapi.ValidationException("1 validation error detected: Value '[]' at 'requestItems.%s.member.keys' failed to satisfy constraint: Member must have length greater than or equal to 1", name)
		}
		seen := map[string]bool{}
		for _, k := range ka.Keys {
			id := string(canonical(fromWireItem(k)))
			if seen[id] {
				return nil, awsapi.ValidationException("Provided list of item keys contains duplicates")
			}
			seen[id] = true
		}
		n += len(ka.Keys)
		out = append(out, batchGetTable{t: t, ka: ka})
	}
	if n == 0 || n > 100 {
		return nil, awsapi.ValidationException("Too many items requested for the BatchGetItem call")
	}
	slices.SortFunc(out, func(a, b batchGetTable) int { return strings.Compare(a.t.name, b.t.name) })
	return out, nil
}

func (s *Service) transactWriteItems(req *awsapi.Request, in *mini.TransactWriteItemsInput) (any, error) {
	if len(in.TransactItems) == 0 || len(in.TransactItems) > 100 {
		return nil, awsapi.ValidationException("1 validation error detected: Value at 'transactItems' failed to satisfy constraint: Member must have length less than or equal to 100, Member must have length greater than or equal to 1")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	actions := make([]txAction, len(in.TransactItems))
	seen := map[string]bool{}
	for i := range in.TransactItems {
		a, err := s.prepareActionLocked(req, in.TransactItems[i])
		if err != nil {
			return nil, err
		}
		if err := refuseOnStrong(a.t, "TransactWriteItems"); err != nil {
			return nil, err
		}
		id := keyID(a.t, a.key)
		if seen[id] {
			return nil, awsapi.ValidationException("Transaction request cannot include multiple operations on one item")
		}
		seen[id] = true
		actions[i] = a
	}

	// Apply the actions in order, each with its condition. On a failed
	// condition, keep evaluating the others (each is undone at once) so
	// every failing action gets its reason, then undo the applied ones.
	reasons := make([]reason, len(actions))
	failed := false
	var applied []*txAction
	for i := range actions {
		a := &actions[i]
		reasons[i] = reason{Code: "None"}
		err := s.applyActionLocked(a)
		if err == nil {
			if failed || a.check {
				s.restoreLocked(a)
			} else {
				applied = append(applied, a)
			}
			continue
		}
		var ccf *ddbtypes.ConditionalCheckFailedException
		if !errors.As(err, &ccf) {
			s.rollbackLocked(applied)
			return nil, engineError(err)
		}
		reasons[i] = reason{Code: "ConditionalCheckFailed", Message: "The conditional request failed"}
		if a.returnOld() && a.old != nil {
			reasons[i].Item = a.old
		}
		if !failed {
			failed = true
			s.rollbackLocked(applied)
			applied = nil
		}
	}
	if failed {
		return nil, canceled(reasons)
	}
	var writes []pendingWrite
	for _, a := range applied {
		if len(a.removes) > 0 {
			if err := s.fixRemovesLocked(a.t, a.key, a.removes); err != nil {
				return nil, err
			}
		}
		writes = append(writes, pendingWrite{t: a.t, key: a.key, old: a.old})
	}
	c := newConsumed()
	s.emitWritesLocked(writes, c, 2)
	for _, a := range actions {
		if a.check {
			c.write(a.t, a.old, a.old, 2)
		}
	}
	return c.list(map[string]any{}, in.ReturnConsumedCapacity), nil
}

// txAction is one prepared action of a TransactWriteItems call.
type txAction struct {
	item    mini.TransactWriteItem
	t       *table
	key     Item
	old     Item
	removes []string
	check   bool
}

// returnOld reports whether the action asks for the item on a failed
// condition (ReturnValuesOnConditionCheckFailure ALL_OLD).
func (a *txAction) returnOld() bool {
	var rv ddbtypes.ReturnValuesOnConditionCheckFailure
	switch it := a.item; {
	case it.Put != nil:
		rv = it.Put.ReturnValuesOnConditionCheckFailure
	case it.Update != nil:
		rv = it.Update.ReturnValuesOnConditionCheckFailure
	case it.Delete != nil:
		rv = it.Delete.ReturnValuesOnConditionCheckFailure
	case it.ConditionCheck != nil:
		rv = it.ConditionCheck.ReturnValuesOnConditionCheckFailure
	}
	return rv == ddbtypes.ReturnValuesOnConditionCheckFailureAllOld
}

func (s *Service) prepareActionLocked(req *awsapi.Request, it mini.TransactWriteItem) (txAction, error) {
	a := txAction{item: it}
	var (
		err    error
		action string
	)
	switch {
	case it.Put != nil:
		a.t, err = s.resolveLocked(&it.Put.TableName)
		action = "dynamodb:PutItem"
		if err == nil {
			a.key = project(fromWireItem(it.Put.Item), a.t.keyNames())
		}
	case it.Update != nil:
		a.t, err = s.resolveLocked(&it.Update.TableName)
		action, a.key = "dynamodb:UpdateItem", fromWireItem(it.Update.Key)
		a.removes = topLevelRemoves(aws.ToString(it.Update.UpdateExpression), it.Update.ExpressionAttributeNames)
	case it.Delete != nil:
		a.t, err = s.resolveLocked(&it.Delete.TableName)
		action, a.key = "dynamodb:DeleteItem", fromWireItem(it.Delete.Key)
	case it.ConditionCheck != nil:
		a.t, err = s.resolveLocked(&it.ConditionCheck.TableName)
		action, a.key, a.check = "dynamodb:ConditionCheckItem", fromWireItem(it.ConditionCheck.Key), true
		if err == nil && aws.ToString(it.ConditionCheck.ConditionExpression) == "" {
			err = awsapi.ValidationException("1 validation error detected: Value null at 'transactItems.conditionCheck.conditionExpression' failed to satisfy constraint: Member must not be null")
		}
	default:
		err = awsapi.ValidationException("TransactItems can only contain one of Check, Put, Update or Delete")
	}
	if err != nil {
		return a, err
	}
	if err := req.Authorize(action, a.t.arn); err != nil {
		return a, err
	}
	for _, k := range a.t.keyNames() {
		if _, ok := a.key[k]; !ok {
			return a, awsapi.ValidationException("One or more parameter values were invalid: Missing the key %s in the item", k)
		}
	}
	a.old = s.itemLocked(a.t, a.key)
	return a, nil
}

// applyActionLocked runs one action as a single-item write with its
// condition. A ConditionCheck runs as a conditional delete, undone by the
// caller.
func (s *Service) applyActionLocked(a *txAction) error {
	it := a.item
	var (
		cond, keep string
		names      map[string]string
		values     wireItem
	)
	switch {
	case it.Put != nil:
		cond, names, values = aws.ToString(it.Put.ConditionExpression), it.Put.ExpressionAttributeNames, it.Put.ExpressionAttributeValues
	case it.Update != nil:
		cond, names, values = aws.ToString(it.Update.ConditionExpression), it.Update.ExpressionAttributeNames, it.Update.ExpressionAttributeValues
		keep = aws.ToString(it.Update.UpdateExpression)
	case it.Delete != nil:
		cond, names, values = aws.ToString(it.Delete.ConditionExpression), it.Delete.ExpressionAttributeNames, it.Delete.ExpressionAttributeValues
	case it.ConditionCheck != nil:
		cond, names, values = aws.ToString(it.ConditionCheck.ConditionExpression), it.ConditionCheck.ExpressionAttributeNames, it.ConditionCheck.ExpressionAttributeValues
	}
	run := func(cond *string, names map[string]string, values wireItem) error {
		var err error
		switch {
		case it.Put != nil:
			_, err = s.engine.PutItem(bg, &mini.PutItemInput{TableName: it.Put.TableName, Item: it.Put.Item,
				ConditionExpression: cond, ExpressionAttributeNames: names,
				ExpressionAttributeValues: values, ReturnValuesOnConditionCheckFailure: it.Put.ReturnValuesOnConditionCheckFailure})
		case it.Update != nil:
			_, err = s.engine.UpdateItem(bg, &mini.UpdateItemInput{TableName: it.Update.TableName, Key: it.Update.Key,
				UpdateExpression: it.Update.UpdateExpression, ConditionExpression: cond,
				ExpressionAttributeNames: names, ExpressionAttributeValues: values,
				ReturnValuesOnConditionCheckFailure: it.Update.ReturnValuesOnConditionCheckFailure})
		case it.Delete != nil:
			_, err = s.engine.DeleteItem(bg, &mini.DeleteItemInput{TableName: it.Delete.TableName, Key: it.Delete.Key,
				ConditionExpression: cond, ExpressionAttributeNames: names,
				ExpressionAttributeValues: values, ReturnValuesOnConditionCheckFailure: it.Delete.ReturnValuesOnConditionCheckFailure})
		case it.ConditionCheck != nil:
			c := it.ConditionCheck
			_, err = s.engine.DeleteItem(bg, &mini.DeleteItemInput{TableName: c.TableName, Key: c.Key,
				ConditionExpression: cond, ExpressionAttributeNames: names,
				ExpressionAttributeValues: values, ReturnValuesOnConditionCheckFailure: c.ReturnValuesOnConditionCheckFailure})
		}
		return err
	}
	var condPtr *string
	if cond != "" {
		condPtr = &cond
	}
	err := run(condPtr, names, values)
	return retryCondition(err, condPtr, names, values, a.old, keep, run)
}

// restoreLocked puts an action's item back as it was before the action.
func (s *Service) restoreLocked(a *txAction) {
	name := a.t.name
	_, _ = s.engine.DeleteItem(bg, &mini.DeleteItemInput{TableName: &name, Key: toWireItem(a.key)})
	if a.old != nil {
		_, _ = s.engine.PutItem(bg, &mini.PutItemInput{TableName: &name, Item: toWireItem(a.old)})
	}
}

func (s *Service) rollbackLocked(applied []*txAction) {
	for i := len(applied) - 1; i >= 0; i-- {
		s.restoreLocked(applied[i])
	}
}

func (s *Service) transactGetItems(req *awsapi.Request, in *mini.TransactGetItemsInput) (any, error) {
	if len(in.TransactItems) == 0 || len(in.TransactItems) > 100 {
		return nil, awsapi.ValidationException("1 validation error detected: Value at 'transactItems' failed to satisfy constraint: Member must have length less than or equal to 100, Member must have length greater than or equal to 1")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range in.TransactItems {
		g := in.TransactItems[i].Get
		if g == nil {
			return nil, awsapi.ValidationException("TransactItems must contain Get")
		}
		t, err := s.resolveLocked(&g.TableName)
		if err != nil {
			return nil, err
		}
		if err := req.Authorize("dynamodb:GetItem", t.arn); err != nil {
			return nil, err
		}
		if err := refuseOnStrong(t, "TransactGetItems"); err != nil {
			return nil, err
		}
	}
	out, err := s.engine.TransactGetItems(bg, in)
	if err != nil {
		return nil, engineError(err)
	}
	resp := make([]map[string]any, len(out.Responses))
	c := newConsumed()
	for i, r := range out.Responses {
		resp[i] = map[string]any{}
		if len(r.Item) > 0 {
			resp[i]["Item"] = fromWireItem(r.Item)
		}
		if i < len(in.TransactItems) {
			g := in.TransactItems[i].Get
			c.read(s.tables[aws.ToString(g.TableName)], "", itemSize(fromWireItem(r.Item)), true, 2)
		}
	}
	return c.list(map[string]any{"Responses": resp}, in.ReturnConsumedCapacity), nil
}

var _ = fmt.Sprintf
