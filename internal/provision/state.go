package provision

// State records what exists: the identifiers of the components and, for an
// adopted table, what the pipeline added to it. An empty field means the
// component does not exist (or was not created yet).
type State struct {
	// Name is Spec.Name.
	Name string
	// Account of the pipeline, from the table's ARN.
	Partition, Region, AccountID string

	TableName string
	TableARN  string
	// StreamARN is the table's latest stream.
	StreamARN string
	// TableOwned is true when the pipeline created the table (and deletes it).
	TableOwned bool
	// TTLAttribute is the table's TTL attribute: Spec.Table.TTLAttribute, or
	// the attribute that an adopted table already had.
	TTLAttribute string
	// Added lists what the pipeline added to an adopted table; Delete
	// reverts exactly that.
	Added Added
	// PendingIndexARN is the ARN of the pending index.
	PendingIndexARN string
	// FormerPendingIndex is the index that a rename of the pending index
	// replaced; it is dropped once the functions use the new one.
	FormerPendingIndex string `json:",omitempty"`
	// Layout is what the table may still hold from earlier settings.
	Layout Layout `json:",omitzero"`
	// ForceDestroy is Spec.ForceDestroy as last applied: Delete removes a
	// table with undelivered events only with it.
	ForceDestroy bool `json:",omitempty"`
	// TargetARN is the bus or topic the functions publish to.
	TargetARN string

	QueueURL string
	QueueARN string

	RelayRoleName     string
	RelayRoleARN      string
	RelayLogGroup     string
	RelayFunctionName string
	RelayFunctionARN  string
	MappingUUID       string

	ReconcilerRoleName     string
	ReconcilerRoleARN      string
	ReconcilerLogGroup     string
	ReconcilerFunctionName string
	ReconcilerFunctionARN  string
	SchedulerRoleName      string
	SchedulerRoleARN       string
	ScheduleName           string
	ScheduleARN            string
	// ScheduleGroup is the group of the schedule; "" is the default group.
	ScheduleGroup string `json:",omitempty"`

	// Alarms are the CloudWatch alarms that exist.
	Alarms AlarmARNs

	// RelayPackageSHA256 is the base64 SHA-256 of the relay package that the
	// functions run. A provider built with another package plans an update.
	RelayPackageSHA256 string
}

// Added is what the pipeline changed on an adopted table.
type Added struct {
	// Stream is true when the pipeline enabled the table's stream.
	Stream bool
	// PendingIndex is true when the pipeline created the pending index.
	PendingIndex bool
	// TTL is true when the pipeline enabled TTL on the table.
	TTL bool
}

func (s State) account() Account {
	return Account{Partition: s.Partition, Region: s.Region, ID: s.AccountID}
}
