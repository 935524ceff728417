package provision

// State records what exists: the identifiers of the components and, for an
// adopted table, what the pipeline added to it. An empty field means the
// component does not exist (or was not created yet).
type State struct {
	// Name is Spec.Name.
	Name string `json:"Name"`
	// Account of the pipeline, from the table's ARN.
	Partition string `json:"Partition"`
	Region    string `json:"Region"`
	AccountID string `json:"AccountID"`

	TableName string `json:"TableName"`
	TableARN  string `json:"TableARN"`
	// StreamARN is the table's latest stream.
	StreamARN string `json:"StreamARN"`
	// StreamViewType is the view type of that stream, as last observed.
	StreamViewType string `json:"StreamViewType,omitempty"`
	// TableOwned is true when the pipeline created the table (and deletes it).
	TableOwned bool `json:"TableOwned"`
	// TTLAttribute is the table's TTL attribute: Spec.Table.TTLAttribute, or
	// the attribute that an adopted table already had.
	TTLAttribute string `json:"TTLAttribute"`
	// Added lists what the pipeline added to an adopted table; Delete
	// reverts exactly that.
	Added Added `json:"Added"`
	// PendingIndexARN is the ARN of the pending index.
	PendingIndexARN string `json:"PendingIndexARN"`
	// FormerPendingIndex is the index that a rename of the pending index
	// replaced; it is dropped once the functions use the new one.
	FormerPendingIndex string `json:"FormerPendingIndex,omitempty"`
	// Layout is what the table may still hold from earlier settings.
	Layout Layout `json:"Layout,omitzero"`
	// ForceDestroy is Spec.ForceDestroy as last applied: Delete removes a
	// table with undelivered events only with it.
	ForceDestroy bool `json:"ForceDestroy,omitempty"`
	// ClaimBucket is the claim-check bucket and ClaimBucketARN its ARN;
	// ClaimBucketOwned is true when the pipeline created it (and deletes
	// it), false when it adopted it.
	ClaimBucket      string `json:"ClaimBucket,omitempty"`
	ClaimBucketARN   string `json:"ClaimBucketARN,omitempty"`
	ClaimBucketOwned bool   `json:"ClaimBucketOwned,omitempty"`
	// TargetARN is the bus or topic the functions publish to.
	TargetARN string `json:"TargetARN"`

	QueueURL string `json:"QueueURL"`
	QueueARN string `json:"QueueARN"`

	RelayRoleName     string `json:"RelayRoleName"`
	RelayRoleARN      string `json:"RelayRoleARN"`
	RelayLogGroup     string `json:"RelayLogGroup"`
	RelayFunctionName string `json:"RelayFunctionName"`
	RelayFunctionARN  string `json:"RelayFunctionARN"`
	MappingUUID       string `json:"MappingUUID"`

	ReconcilerRoleName     string `json:"ReconcilerRoleName"`
	ReconcilerRoleARN      string `json:"ReconcilerRoleARN"`
	ReconcilerLogGroup     string `json:"ReconcilerLogGroup"`
	ReconcilerFunctionName string `json:"ReconcilerFunctionName"`
	ReconcilerFunctionARN  string `json:"ReconcilerFunctionARN"`
	SchedulerRoleName      string `json:"SchedulerRoleName"`
	SchedulerRoleARN       string `json:"SchedulerRoleARN"`
	ScheduleName           string `json:"ScheduleName"`
	ScheduleARN            string `json:"ScheduleARN"`
	// ScheduleGroup is the group of the schedule; "" is the default group.
	ScheduleGroup string `json:"ScheduleGroup,omitempty"`

	// Alarms are the CloudWatch alarms that exist.
	Alarms AlarmARNs `json:"Alarms"`

	// RelayPackageSHA256 is the base64 SHA-256 of the relay package that the
	// functions run. A provider built with another package plans an update.
	RelayPackageSHA256 string `json:"RelayPackageSHA256"`
}

// Added is what the pipeline changed on an adopted table.
type Added struct {
	// Stream is true when the pipeline enabled the table's stream.
	Stream bool `json:"Stream"`
	// PendingIndex is true when the pipeline created the pending index.
	PendingIndex bool `json:"PendingIndex"`
	// TTL is true when the pipeline enabled TTL on the table.
	TTL bool `json:"TTL"`
}

func (s State) account() Account {
	return Account{Partition: s.Partition, Region: s.Region, ID: s.AccountID}
}
