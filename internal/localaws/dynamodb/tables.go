package dynamodb

import (
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	mini "github.com/outboxkit/terraform-provider-outbox/third_party/minidyn/server"

	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/awsapi"
)

type keyElement struct {
	AttributeName string `json:"AttributeName"`
	KeyType       string `json:"KeyType"`
}

type attrDef struct {
	AttributeName string `json:"AttributeName"`
	AttributeType string `json:"AttributeType"`
}

type throughput struct {
	ReadCapacityUnits  int64 `json:"ReadCapacityUnits"`
	WriteCapacityUnits int64 `json:"WriteCapacityUnits"`
}

type projection struct {
	ProjectionType   string   `json:"ProjectionType,omitempty"`
	NonKeyAttributes []string `json:"NonKeyAttributes,omitempty"`
}

type index struct {
	IndexName             string       `json:"IndexName"`
	KeySchema             []keyElement `json:"KeySchema"`
	Projection            projection   `json:"Projection"`
	ProvisionedThroughput *throughput  `json:"ProvisionedThroughput,omitempty"`
	status                string
	readyAt               time.Time
}

type streamSpec struct {
	StreamEnabled  bool   `json:"StreamEnabled"`
	StreamViewType string `json:"StreamViewType,omitempty"`
}

type ttlSpec struct {
	AttributeName string `json:"AttributeName"`
	Enabled       bool   `json:"Enabled"`
}

type tag struct {
	Key   string `json:"Key"`
	Value string `json:"Value"`
}

// table is the metadata the engine does not keep.
type table struct {
	name, arn, id      string
	created            time.Time
	keySchema          []keyElement
	attrDefs           []attrDef
	gsis               []*index
	lsis               []*index
	billingMode        string
	provisioned        throughput
	deletionProtection bool
	tableClass         string
	stream             *stream // current stream (enabled) or nil
	latestStream       *stream // last stream, kept after disabling
	ttlAttr            string
	ttlEnabled         bool
	ttl                *ttlIndex // items by expiry while TTL is enabled
	tags               map[string]string
	pitr               pitr
	sse                sse
	// replicas are the other Regions' replicas of a global table; written
	// stamps each item's last write, for last writer wins.
	replicas map[string]*replica
	written  map[string]stamp
	// consistency is a global table's mode (STRONG for MRSC), witness the
	// Region of an MRSC table's witness.
	consistency, witness string
}

func (t *table) keyNames() []string {
	out := make([]string, 0, len(t.keySchema))
	for _, k := range t.keySchema {
		out = append(out, k.AttributeName)
	}
	return out
}

// hashKey is the table's partition key attribute.
func (t *table) hashKey() string {
	for _, k := range t.keySchema {
		if k.KeyType == "HASH" {
			return k.AttributeName
		}
	}
	return ""
}

func (t *table) index(name string) *index {
	for _, i := range t.gsis {
		if i.IndexName == name {
			return i
		}
	}
	for _, i := range t.lsis {
		if i.IndexName == name {
			return i
		}
	}
	return nil
}

var tableNameRE = regexp.MustCompile(`^[a-zA-Z0-9_.-]{3,255}$`)

func validateTableName(name string) error {
	if !tableNameRE.MatchString(name) {
		return awsapi.ValidationException("1 validation error detected: Value '%s' at 'tableName' failed to satisfy constraint: Member must satisfy regular expression pattern: [a-zA-Z0-9_.-]+ and length 3 to 255", name)
	}
	return nil
}

// tableLocked resolves a table name or ARN. Callers hold s.mu.
func (s *Service) tableLocked(nameOrArn string) (*table, error) {
	name := nameOrArn
	if strings.HasPrefix(nameOrArn, "arn:") {
		a, err := awsapi.ParseARN(nameOrArn)
		if err != nil || !strings.HasPrefix(a.Resource, "table/") {
			return nil, awsapi.ValidationException("Invalid table ARN %s", nameOrArn)
		}
		name = strings.SplitN(strings.TrimPrefix(a.Resource, "table/"), "/", 2)[0]
	}
	t, ok := s.tables[name]
	if !ok {
		return nil, awsapi.ResourceNotFoundException("Requested resource not found: Table: %s not found", name)
	}
	return t, nil
}

func (s *Service) tableArn(name string) string {
	return s.env.ARN("dynamodb", "table/"+name)
}

type createTableInput struct {
	TableName                 string
	KeySchema                 []keyElement
	AttributeDefinitions      []attrDef
	GlobalSecondaryIndexes    []*index
	LocalSecondaryIndexes     []*index
	BillingMode               string
	ProvisionedThroughput     *throughput
	StreamSpecification       *streamSpec
	DeletionProtectionEnabled bool
	TableClass                string
	Tags                      []tag
	SSESpecification          *sseSpec
}

func (s *Service) createTable(req *awsapi.Request, in *createTableInput) (any, error) {
	if err := validateTableName(in.TableName); err != nil {
		return nil, err
	}
	if err := req.Authorize("dynamodb:CreateTable", s.tableArn(in.TableName)); err != nil {
		return nil, err
	}
	if err := validateCreateBillingAndStream(in); err != nil {
		return nil, err
	}
	if err := validateKeys(in.KeySchema, in.AttributeDefinitions, in.GlobalSecondaryIndexes, in.LocalSecondaryIndexes); err != nil {
		return nil, err
	}
	enc, err := s.resolveSSE(in.SSESpecification)
	if err != nil {
		return nil, err
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	if _, exists := s.tables[in.TableName]; exists {
		return nil, awsapi.ResourceInUseException("Table already exists: %s", in.TableName)
	}
	for _, i := range append(append([]*index(nil), in.GlobalSecondaryIndexes...), in.LocalSecondaryIndexes...) {
		i.status = "ACTIVE"
		if i.Projection.ProjectionType == "" {
			i.Projection.ProjectionType = "ALL"
		}
	}
	var mIn mini.CreateTableInput
	if err := convert(in, &mIn); err != nil {
		return nil, err
	}
	mIn.StreamSpecification = nil
	mIn.SSESpecification = nil
	mIn.Tags = nil
	if _, err := s.engine.CreateTable(bg, &mIn); err != nil {
		return nil, engineError(err)
	}
	t := &table{
		name: in.TableName, arn: s.tableArn(in.TableName), id: awsapi.NewUUID(),
		created: s.env.Time(), keySchema: in.KeySchema, attrDefs: in.AttributeDefinitions,
		gsis: in.GlobalSecondaryIndexes, lsis: in.LocalSecondaryIndexes,
		billingMode: in.BillingMode, deletionProtection: in.DeletionProtectionEnabled,
		tableClass: in.TableClass, tags: map[string]string{}, sse: enc,
	}
	if in.ProvisionedThroughput != nil {
		t.provisioned = *in.ProvisionedThroughput
	}
	for _, tg := range in.Tags {
		t.tags[tg.Key] = tg.Value
	}
	if in.StreamSpecification != nil && in.StreamSpecification.StreamEnabled {
		t.stream = s.streams.create(t.name, t.arn, t.hashKey(), in.StreamSpecification.StreamViewType, "")
		t.latestStream = t.stream
	}
	s.tables[t.name] = t
	d := s.describeLocked(t)
	d["TableStatus"] = "CREATING"
	return map[string]any{"TableDescription": d}, nil
}

// validateCreateBillingAndStream checks (and defaults to PROVISIONED) a
// CreateTable's billing mode against its throughput, and its stream
// specification.
func validateCreateBillingAndStream(in *createTableInput) error {
	if in.BillingMode == "" {
		in.BillingMode = "PROVISIONED"
	}
	switch in.BillingMode {
	case "PROVISIONED":
		if in.ProvisionedThroughput == nil {
			return awsapi.ValidationException("One or more parameter values were invalid: ReadCapacityUnits and WriteCapacityUnits must both be specified when BillingMode is PROVISIONED")
		}
	case "PAY_PER_REQUEST":
		if in.ProvisionedThroughput != nil {
			return awsapi.ValidationException("One or more parameter values were invalid: Neither ReadCapacityUnits nor WriteCapacityUnits can be specified when BillingMode is PAY_PER_REQUEST")
		}
	default:
		return awsapi.ValidationException("1 validation error detected: Value '%s' at 'billingMode' failed to satisfy constraint: Member must satisfy enum value set: [PROVISIONED, PAY_PER_REQUEST]", in.BillingMode)
	}
	if ss := in.StreamSpecification; ss != nil {
		switch {
		case ss.StreamEnabled && ss.StreamViewType == "":
			return awsapi.ValidationException("One or more parameter values were invalid: Table is being created with a stream enabled, UpdateViewType is required")
		case !ss.StreamEnabled && ss.StreamViewType != "":
			return awsapi.ValidationException("One or more parameter values were invalid: Table is being created with a stream disabled, UpdateViewType should not be specified")
		case ss.StreamEnabled:
			if err := validateViewType(ss.StreamViewType); err != nil {
				return err
			}
		}
	}
	return nil
}

func validateViewType(v string) error {
	switch v {
	case "KEYS_ONLY", "NEW_IMAGE", "OLD_IMAGE", "NEW_AND_OLD_IMAGES":
		return nil
	case "":
		return awsapi.ValidationException("One or more parameter values were invalid: StreamViewType must be specified when StreamEnabled is true")
	}
	return awsapi.ValidationException("1 validation error detected: Value '%s' at 'streamSpecification.streamViewType' failed to satisfy constraint: Member must satisfy enum value set: [NEW_IMAGE, OLD_IMAGE, NEW_AND_OLD_IMAGES, KEYS_ONLY]", v)
}

func validateKeys(ks []keyElement, defs []attrDef, gsis, lsis []*index) error {
	defined := map[string]bool{}
	for _, d := range defs {
		switch d.AttributeType {
		case "S", "N", "B":
		default:
			return awsapi.ValidationException("1 validation error detected: Value '%s' at 'attributeDefinitions.attributeType' failed to satisfy constraint: Member must satisfy enum value set: [B, N, S]", d.AttributeType)
		}
		defined[d.AttributeName] = true
	}
	used := map[string]bool{}
	check := func(ks []keyElement, what string) error {
		switch {
		case len(ks) == 0 || len(ks) > 2:
			return awsapi.ValidationException("One or more parameter values were invalid: Invalid KeySchema of %s", what)
		case ks[0].KeyType != "HASH":
			return awsapi.ValidationException("Invalid KeySchema: The first KeySchemaElement is not a HASH key type")
		case len(ks) == 2 && ks[1].KeyType != "RANGE":
			return awsapi.ValidationException("Invalid KeySchema: The second KeySchemaElement is not a RANGE key type")
		}
		for _, k := range ks {
			if !defined[k.AttributeName] {
				return awsapi.ValidationException("One or more parameter values were invalid: Some index key attributes are not defined in AttributeDefinitions. Keys: [%s], AttributeDefinitions: [%s]", k.AttributeName, defNames(defs))
			}
			used[k.AttributeName] = true
		}
		return nil
	}
	if err := check(ks, "the table"); err != nil {
		return err
	}
	names := map[string]bool{}
	for _, i := range append(append([]*index(nil), gsis...), lsis...) {
		if names[i.IndexName] {
			return awsapi.ValidationException("One or more parameter values were invalid: Duplicate index name: %s", i.IndexName)
		}
		names[i.IndexName] = true
		if err := check(i.KeySchema, "index "+i.IndexName); err != nil {
			return err
		}
	}
	for _, d := range defs {
		if !used[d.AttributeName] {
			return awsapi.ValidationException("One or more parameter values were invalid: Number of attributes in KeySchema does not exactly match number of attributes defined in AttributeDefinitions")
		}
	}
	return nil
}

func defNames(defs []attrDef) string {
	var n []string
	for _, d := range defs {
		n = append(n, d.AttributeName)
	}
	return strings.Join(n, ", ")
}

func (s *Service) describeTable(req *awsapi.Request, in *tableNameInput) (any, error) {
	t, err := s.authorizedTableLocked(req, in.TableName, "dynamodb:DescribeTable")
	if err != nil {
		return nil, err
	}
	return map[string]any{"Table": s.describeLocked(t)}, nil
}

// describeLocked renders a TableDescription. Callers hold s.mu.
func (s *Service) describeLocked(t *table) map[string]any {
	now := s.env.Time()
	count, size := s.countLocked(t.name, "")
	d := map[string]any{
		"TableName":            t.name,
		"TableArn":             t.arn,
		"TableId":              t.id,
		"TableStatus":          "ACTIVE",
		"CreationDateTime":     awsapi.Epoch(t.created),
		"KeySchema":            t.keySchema,
		"AttributeDefinitions": t.attrDefs,
		"ItemCount":            count,
		"TableSizeBytes":       size,
		"ProvisionedThroughput": map[string]any{
			"ReadCapacityUnits": t.provisioned.ReadCapacityUnits, "WriteCapacityUnits": t.provisioned.WriteCapacityUnits,
			"NumberOfDecreasesToday": 0,
		},
		"DeletionProtectionEnabled": t.deletionProtection,
	}
	if sd := t.sse.description(); sd != nil {
		d["SSEDescription"] = sd
	}
	if t.billingMode == "PAY_PER_REQUEST" {
		d["BillingModeSummary"] = map[string]any{"BillingMode": "PAY_PER_REQUEST", "LastUpdateToPayPerRequestDateTime": float64(t.created.Unix())}
		d["WarmThroughput"] = onDemandWarmThroughput()
	}
	if t.tableClass != "" {
		d["TableClassSummary"] = map[string]any{"TableClass": t.tableClass}
	}
	if len(t.gsis) > 0 {
		var g []map[string]any
		for _, i := range t.gsis {
			g = append(g, s.describeIndexLocked(t, i, true, now))
		}
		d["GlobalSecondaryIndexes"] = g
	}
	if len(t.lsis) > 0 {
		var l []map[string]any
		for _, i := range t.lsis {
			l = append(l, s.describeIndexLocked(t, i, false, now))
		}
		d["LocalSecondaryIndexes"] = l
	}
	if t.stream != nil {
		d["StreamSpecification"] = streamSpec{StreamEnabled: true, StreamViewType: t.stream.viewType}
	}
	if t.latestStream != nil {
		d["LatestStreamArn"] = t.latestStream.arn
		d["LatestStreamLabel"] = t.latestStream.label
	}
	describeReplicasLocked(t, d)
	describeConsistencyLocked(t, d)
	return d
}

// describeIndexLocked renders a GSI (global) or LSI description of t at
// now; a GSI whose backfill time has come becomes ACTIVE. Callers hold s.mu.
func (s *Service) describeIndexLocked(t *table, i *index, global bool, now time.Time) map[string]any {
	n, size := s.countLocked(t.name, i.IndexName)
	m := map[string]any{
		"IndexName":      i.IndexName,
		"KeySchema":      i.KeySchema,
		"Projection":     i.Projection,
		"IndexArn":       t.arn + "/index/" + i.IndexName,
		"ItemCount":      n,
		"IndexSizeBytes": size,
	}
	if global {
		status := i.status
		if status == "CREATING" && !now.Before(i.readyAt) {
			i.status, status = "ACTIVE", "ACTIVE"
		}
		m["IndexStatus"] = status
		if status == "CREATING" {
			m["Backfilling"] = false
		}
		pt := map[string]any{"ReadCapacityUnits": 0, "WriteCapacityUnits": 0, "NumberOfDecreasesToday": 0}
		if i.ProvisionedThroughput != nil {
			pt["ReadCapacityUnits"], pt["WriteCapacityUnits"] = i.ProvisionedThroughput.ReadCapacityUnits, i.ProvisionedThroughput.WriteCapacityUnits
		}
		m["ProvisionedThroughput"] = pt
		if t.billingMode == "PAY_PER_REQUEST" {
			m["WarmThroughput"] = onDemandWarmThroughput()
		}
	}
	return m
}

// onDemandWarmThroughput is the warm throughput of a new on-demand table
// or GSI: 12,000 read and 4,000 write units a second ("Understanding
// DynamoDB warm throughput").
func onDemandWarmThroughput() map[string]any {
	return map[string]any{"ReadUnitsPerSecond": 12000, "WriteUnitsPerSecond": 4000, "Status": "ACTIVE"}
}

// countLocked counts the items of a table or index and their size. AWS
// refreshes these about every six hours; here they are current.
func (s *Service) countLocked(tableName, indexName string) (count, size int) {
	in := &mini.ScanInput{TableName: &tableName}
	if indexName != "" {
		in.IndexName = &indexName
	}
	for {
		out, err := s.engine.Scan(bg, in)
		if err != nil {
			return count, size
		}
		count += len(out.Items)
		for _, it := range out.Items {
			size += itemSize(fromWireItem(it))
		}
		if len(out.LastEvaluatedKey) == 0 {
			return count, size
		}
		in.ExclusiveStartKey = out.LastEvaluatedKey
	}
}

type gsiUpdate struct {
	Create *index
	Delete *struct{ IndexName string }
	Update *struct {
		IndexName             string
		ProvisionedThroughput *throughput
	}
}

type updateTableInput struct {
	TableName                   string
	AttributeDefinitions        []attrDef
	BillingMode                 string
	ProvisionedThroughput       *throughput
	GlobalSecondaryIndexUpdates []gsiUpdate
	StreamSpecification         *streamSpec
	DeletionProtectionEnabled   *bool
	TableClass                  string
	SSESpecification            *sseSpec
	ReplicaUpdates              []replicaUpdate
	MultiRegionConsistency      string
	GlobalTableWitnessUpdates   []witnessUpdate
}

func (s *Service) updateTable(req *awsapi.Request, in *updateTableInput) (any, error) {
	t, err := s.authorizedTableLocked(req, in.TableName, "dynamodb:UpdateTable")
	if err != nil {
		return nil, err
	}
	if err := validateStreamUpdate(t, in); err != nil {
		return nil, err
	}
	if err := s.validateReplicaUpdates(t, in); err != nil {
		return nil, err
	}
	if err := s.validateConsistency(t, in); err != nil {
		return nil, err
	}
	var enc *sse
	if in.SSESpecification != nil {
		e, err := s.resolveSSE(in.SSESpecification)
		if err != nil {
			return nil, err
		}
		enc = &e
	}
	defs := mergeDefs(t.attrDefs, in.AttributeDefinitions)
	if err := validateIndexUpdates(t, defs, in.GlobalSecondaryIndexUpdates); err != nil {
		return nil, err
	}
	var created, deleted []*index
	if len(in.GlobalSecondaryIndexUpdates) > 0 {
		if created, deleted, err = s.applyIndexUpdatesLocked(t, defs, in.GlobalSecondaryIndexUpdates); err != nil {
			return nil, err
		}
	}
	applyTableSettings(t, in, enc)
	if ss := in.StreamSpecification; ss != nil {
		s.applyStreamUpdateLocked(t, ss)
	}
	if err := s.applyReplicaUpdatesLocked(t, in); err != nil {
		return nil, err
	}
	return map[string]any{"TableDescription": s.describeUpdateLocked(t, created, deleted)}, nil
}

// validateStreamUpdate checks an UpdateTable's StreamSpecification against
// the table's stream, and that GSI updates ask for the index attributes.
func validateStreamUpdate(t *table, in *updateTableInput) error {
	if ss := in.StreamSpecification; ss != nil {
		switch {
		case ss.StreamEnabled && t.stream != nil:
			return awsapi.ValidationException("Table already has an enabled stream: TableName: %s", t.name)
		case ss.StreamEnabled && ss.StreamViewType == "":
			return awsapi.ValidationException("One or more parameter values were invalid: If stream is being enabled then UpdateViewType is required")
		case ss.StreamEnabled:
			if err := validateViewType(ss.StreamViewType); err != nil {
				return err
			}
		case ss.StreamViewType != "":
			return awsapi.ValidationException("One or more parameter values were invalid: If stream is being disabled, then UpdateViewType must not be specified")
		case len(t.replicas) > 0:
			return awsapi.ValidationException("One or more parameter values were invalid: Disabling Stream is not allowed for a Global Table replica.")
		case t.stream == nil:
			return awsapi.ValidationException("Table has no stream to disable: TableName: %s", t.name)
		}
		if len(in.GlobalSecondaryIndexUpdates) > 0 {
			return awsapi.ValidationException("One or more parameter values were invalid: You cannot create or delete index while changing stream status")
		}
	}
	if len(in.GlobalSecondaryIndexUpdates) > 0 && len(in.AttributeDefinitions) == 0 {
		for _, u := range in.GlobalSecondaryIndexUpdates {
			if u.Create != nil {
				return awsapi.ValidationException("One or more parameter values were invalid: AttributeDefinitions must be specified when creating a global secondary index")
			}
		}
	}
	return nil
}

// validateIndexUpdates checks that each GSI update names an index that
// exists (Update, Delete) or not yet (Create), with keys defs defines.
func validateIndexUpdates(t *table, defs []attrDef, updates []gsiUpdate) error {
	for _, u := range updates {
		switch {
		case u.Create != nil:
			if t.index(u.Create.IndexName) != nil {
				return awsapi.ValidationException("Attempting to create an index which already exists")
			}
			if err := validateKeys(t.keySchema, defs, append(append([]*index(nil), t.gsis...), u.Create), t.lsis); err != nil {
				return err
			}
		case u.Delete != nil:
			if t.index(u.Delete.IndexName) == nil {
				return awsapi.ResourceNotFoundException("Requested resource not found: Index %s not found", u.Delete.IndexName)
			}
		case u.Update != nil:
			if t.index(u.Update.IndexName) == nil {
				return awsapi.ResourceNotFoundException("Requested resource not found: Index %s not found", u.Update.IndexName)
			}
		}
	}
	return nil
}

// applyIndexUpdatesLocked applies validated GSI updates to the engine and
// the table, backfills the created indexes, and returns the indexes
// created and deleted.
func (s *Service) applyIndexUpdatesLocked(t *table, defs []attrDef, updates []gsiUpdate) (created, deleted []*index, err error) {
	for _, u := range updates {
		if u.Create != nil && u.Create.Projection.ProjectionType == "" {
			u.Create.Projection.ProjectionType = "ALL"
		}
	}
	var mIn mini.UpdateTableInput
	if err := convert(map[string]any{"TableName": t.name, "AttributeDefinitions": defs, "GlobalSecondaryIndexUpdates": updates}, &mIn); err != nil {
		return nil, nil, err
	}
	if _, err := s.engine.UpdateTable(bg, &mIn); err != nil {
		return nil, nil, engineError(err)
	}
	t.attrDefs = defs
	for _, u := range updates {
		switch {
		case u.Create != nil:
			i := u.Create
			i.status = "CREATING"
			i.readyAt = s.env.Time()
			t.gsis = append(t.gsis, i)
			created = append(created, i)
		case u.Delete != nil:
			if k := slices.IndexFunc(t.gsis, func(i *index) bool { return i.IndexName == u.Delete.IndexName }); k >= 0 {
				deleted = append(deleted, t.gsis[k])
				t.gsis = append(t.gsis[:k], t.gsis[k+1:]...)
			}
		case u.Update != nil:
			if i := t.index(u.Update.IndexName); i != nil && u.Update.ProvisionedThroughput != nil {
				i.ProvisionedThroughput = u.Update.ProvisionedThroughput
			}
		}
	}
	if len(created) > 0 {
		if err := s.backfillLocked(t); err != nil {
			return nil, nil, err
		}
	}
	t.attrDefs = pruneDefs(t)
	return created, deleted, nil
}

// applyTableSettings sets the billing, throughput, deletion protection,
// encryption (enc, nil to keep) and class an UpdateTable asks for.
func applyTableSettings(t *table, in *updateTableInput, enc *sse) {
	if in.BillingMode != "" {
		t.billingMode = in.BillingMode
		if in.BillingMode == "PAY_PER_REQUEST" {
			t.provisioned = throughput{}
		}
	}
	if in.ProvisionedThroughput != nil {
		t.provisioned = *in.ProvisionedThroughput
	}
	if in.DeletionProtectionEnabled != nil {
		t.deletionProtection = *in.DeletionProtectionEnabled
	}
	if enc != nil {
		t.sse = *enc
	}
	if in.TableClass != "" {
		t.tableClass = in.TableClass
	}
}

// applyStreamUpdateLocked enables a new stream (labelled after the latest)
// or disables the table's stream, as validated.
func (s *Service) applyStreamUpdateLocked(t *table, ss *streamSpec) {
	if !ss.StreamEnabled {
		s.streams.disable(t.stream.arn)
		t.stream = nil
		return
	}
	prev := ""
	if t.latestStream != nil {
		prev = t.latestStream.label
	}
	t.stream = s.streams.create(t.name, t.arn, t.hashKey(), ss.StreamViewType, prev)
	t.latestStream = t.stream
}

// describeUpdateLocked is UpdateTable's TableDescription: UPDATING, with
// the indexes created CREATING and those deleted DELETING.
func (s *Service) describeUpdateLocked(t *table, created, deleted []*index) map[string]any {
	d := s.describeLocked(t)
	d["TableStatus"] = "UPDATING"
	if len(created) == 0 && len(deleted) == 0 {
		return d
	}
	g, _ := d["GlobalSecondaryIndexes"].([]map[string]any)
	for _, m := range g {
		for _, c := range created {
			if m["IndexName"] == c.IndexName {
				m["IndexStatus"] = "CREATING"
				m["Backfilling"] = false
			}
		}
	}
	for _, i := range deleted {
		g = append(g, map[string]any{"IndexName": i.IndexName, "KeySchema": i.KeySchema, "Projection": i.Projection,
			"IndexStatus": "DELETING", "IndexArn": t.arn + "/index/" + i.IndexName})
	}
	d["GlobalSecondaryIndexes"] = g
	return d
}

func mergeDefs(old, add []attrDef) []attrDef {
	out := slices.Clone(old)
	for _, a := range add {
		if k := slices.IndexFunc(out, func(d attrDef) bool { return d.AttributeName == a.AttributeName }); k >= 0 {
			out[k] = a
		} else {
			out = append(out, a)
		}
	}
	return out
}

// pruneDefs keeps the definitions of attributes still used by a key.
func pruneDefs(t *table) []attrDef {
	used := map[string]bool{}
	for _, k := range t.keySchema {
		used[k.AttributeName] = true
	}
	for _, i := range append(append([]*index(nil), t.gsis...), t.lsis...) {
		for _, k := range i.KeySchema {
			used[k.AttributeName] = true
		}
	}
	var out []attrDef
	for _, d := range t.attrDefs {
		if used[d.AttributeName] {
			out = append(out, d)
		}
	}
	return out
}

// backfillLocked re-puts every item so new indexes hold them.
func (s *Service) backfillLocked(t *table) error {
	items, err := s.scanAllLocked(t.name)
	if err != nil {
		return err
	}
	for _, it := range items {
		if _, err := s.engine.PutItem(bg, &mini.PutItemInput{TableName: &t.name, Item: it}); err != nil {
			return engineError(err)
		}
	}
	return nil
}

func (s *Service) scanAllLocked(name string) ([]wireItem, error) {
	in := &mini.ScanInput{TableName: &name}
	var out []wireItem
	for {
		o, err := s.engine.Scan(bg, in)
		if err != nil {
			return nil, engineError(err)
		}
		out = append(out, o.Items...)
		if len(o.LastEvaluatedKey) == 0 {
			return out, nil
		}
		in.ExclusiveStartKey = o.LastEvaluatedKey
	}
}

func (s *Service) deleteTable(req *awsapi.Request, in *tableNameInput) (any, error) {
	t, err := s.authorizedTableLocked(req, in.TableName, "dynamodb:DeleteTable")
	if err != nil {
		return nil, err
	}
	if t.deletionProtection {
		return nil, awsapi.ValidationException("Resource cannot be deleted as it is currently protected against deletion. Disable deletion protection first.")
	}
	d := s.describeLocked(t)
	d["TableStatus"] = "DELETING"
	if _, err := s.engine.DeleteTable(bg, &mini.DeleteTableInput{TableName: &t.name}); err != nil {
		return nil, engineError(err)
	}
	if t.stream != nil {
		s.streams.disable(t.stream.arn)
	}
	s.leaveGlobalTableLocked(t)
	delete(s.tables, t.name)
	return map[string]any{"TableDescription": d}, nil
}

type listTablesInput struct {
	ExclusiveStartTableName string
	Limit                   int
}

func (s *Service) listTables(req *awsapi.Request, in *listTablesInput) (any, error) {
	if err := req.Authorize("dynamodb:ListTables", "*"); err != nil {
		return nil, err
	}
	limit, err := pageLimit(in.Limit)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	names := make([]string, 0, len(s.tables))
	for n := range s.tables {
		if n > in.ExclusiveStartTableName {
			names = append(names, n)
		}
	}
	s.mu.Unlock()
	sort.Strings(names)
	out := map[string]any{}
	if len(names) > limit {
		names = names[:limit]
		out["LastEvaluatedTableName"] = names[len(names)-1]
	}
	out["TableNames"] = names
	return out, nil
}

type updateTimeToLiveInput struct {
	TableName               string
	TimeToLiveSpecification *ttlSpec
}

func (s *Service) updateTimeToLive(req *awsapi.Request, in *updateTimeToLiveInput) (any, error) {
	if in.TimeToLiveSpecification == nil || in.TimeToLiveSpecification.AttributeName == "" {
		return nil, awsapi.ValidationException("1 validation error detected: Value null at 'timeToLiveSpecification' failed to satisfy constraint: Member must not be null")
	}
	spec := *in.TimeToLiveSpecification
	s.mu.Lock()
	defer s.mu.Unlock()
	t, err := s.authorizedTableLocked(req, in.TableName, "dynamodb:UpdateTimeToLive")
	if err != nil {
		return nil, err
	}
	if err := refuseOnStrong(t, "Time to Live"); err != nil {
		return nil, err
	}
	switch {
	case spec.Enabled && t.ttlEnabled:
		return nil, awsapi.ValidationException("TimeToLive is already enabled")
	case !spec.Enabled && !t.ttlEnabled:
		return nil, awsapi.ValidationException("TimeToLive is already disabled")
	case !spec.Enabled && spec.AttributeName != t.ttlAttr:
		return nil, awsapi.ValidationException("TimeToLive is active on a different AttributeName: current AttributeName is %s", t.ttlAttr)
	}
	var ix *ttlIndex
	if spec.Enabled {
		if ix, err = s.buildTTLIndexLocked(t, spec.AttributeName); err != nil {
			return nil, err
		}
	}
	t.ttlEnabled = spec.Enabled
	t.ttlAttr = spec.AttributeName
	t.ttl = ix
	if !spec.Enabled {
		t.ttlAttr = ""
	}
	return map[string]any{"TimeToLiveSpecification": spec}, nil
}

func (s *Service) describeTimeToLive(req *awsapi.Request, in *tableNameInput) (any, error) {
	t, err := s.authorizedTableLocked(req, in.TableName, "dynamodb:DescribeTimeToLive")
	if err != nil {
		return nil, err
	}
	d := map[string]any{"TimeToLiveStatus": "DISABLED"}
	if t.ttlEnabled {
		d = map[string]any{"TimeToLiveStatus": "ENABLED", "AttributeName": t.ttlAttr}
	}
	return map[string]any{"TimeToLiveDescription": d}, nil
}

type taggingInput struct {
	ResourceArn string
	Tags        []tag
	TagKeys     []string
	NextToken   string
}

// taggedLocked finds the table a tagging operation names and authorises
// action on it; s.mu must be held.
func (s *Service) taggedLocked(req *awsapi.Request, in *taggingInput, action string) (*table, error) {
	if !strings.HasPrefix(in.ResourceArn, "arn:") {
		return nil, awsapi.ValidationException("One or more parameter values were invalid: ARNs must start with 'arn:': %s", in.ResourceArn)
	}
	if a, err := awsapi.ParseARN(in.ResourceArn); err != nil || a.Service != "dynamodb" {
		return nil, awsapi.ValidationException("One or more parameter values were invalid: Provided Arn is not a DynamoDB resource arn: %s", in.ResourceArn)
	} else if a.Region != s.env.Region {
		return nil, awsapi.ValidationException("Invalid TableArn: Invalid ResourceArn provided as input %s", in.ResourceArn)
	}
	t, err := s.tableLocked(in.ResourceArn)
	if err != nil {
		return nil, awsapi.ResourceNotFoundException("Requested resource not found: ResourcArn: %s not found", in.ResourceArn)
	}
	if err := req.Authorize(action, t.arn); err != nil {
		return nil, err
	}
	return t, nil
}

func (s *Service) tagResource(req *awsapi.Request, in *taggingInput) (any, error) {
	t, err := s.taggedLocked(req, in, "dynamodb:TagResource")
	if err != nil {
		return nil, err
	}
	for _, tg := range in.Tags {
		t.tags[tg.Key] = tg.Value
	}
	if len(t.tags) > 50 {
		return nil, awsapi.ValidationException("Number of Tags exceed the current limit for the provided ResourceArn")
	}
	return struct{}{}, nil
}

func (s *Service) untagResource(req *awsapi.Request, in *taggingInput) (any, error) {
	t, err := s.taggedLocked(req, in, "dynamodb:UntagResource")
	if err != nil {
		return nil, err
	}
	awsapi.Untag(t.tags, in.TagKeys)
	return struct{}{}, nil
}

func (s *Service) listTagsOfResource(req *awsapi.Request, in *taggingInput) (any, error) {
	t, err := s.taggedLocked(req, in, "dynamodb:ListTagsOfResource")
	if err != nil {
		return nil, err
	}
	tags := make([]tag, 0, len(t.tags))
	for k, v := range t.tags {
		tags = append(tags, tag{Key: k, Value: v})
	}
	sort.Slice(tags, func(i, j int) bool { return tags[i].Key < tags[j].Key })
	return map[string]any{"Tags": tags}, nil
}

var _ = ddbtypes.TableStatusActive
