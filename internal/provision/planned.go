package provision

// Predicted returns the parts of the State that follow from the Spec and the
// account alone: names given by Spec.Name and ARNs built from them. Create
// and Update produce exactly these values when they succeed, so a plan can
// show them before apply. Fields that AWS chooses (the stream's ARN, the
// mapping's UUID, the queue's URL) and the roles' ARNs (whose path may be
// configured) and the schedule's are left empty, as are ARNs when the account is not known
// (a.ID is empty). An adopted table's TTL attribute is the table's own and
// is left empty too.
func (s Spec) Predicted(a Account) State {
	s = s.WithDefaults()
	n := NamesFor(s.Name)
	st := State{
		Name: s.Name, Partition: a.Partition, Region: a.Region, AccountID: a.ID,
		TableName: s.Table.Name, TableOwned: !s.Table.Existing,
		RelayFunctionName: n.RelayFunction, RelayLogGroup: n.RelayLogGroup,
	}
	if !s.Table.Existing {
		st.TTLAttribute = s.Table.TTLAttribute
	}
	if !s.Reconciler.Disabled {
		st.ReconcilerFunctionName, st.ReconcilerLogGroup = n.ReconcilerFunction, n.ReconcilerLogGroup
	}
	st.TargetARN = s.TargetARN(a)
	if a.ID == "" || a.Partition == "" || a.Region == "" {
		return st
	}
	st.TableARN = a.arn("dynamodb", "table/"+s.Table.Name)
	if !s.Table.PendingIndexDisabled {
		st.PendingIndexARN = IndexARN(st.TableARN, s.Table.PendingIndexName)
	}
	st.QueueARN = a.arn("sqs", n.DeadLetterQueue)
	st.RelayFunctionARN = a.arn("lambda", "function:"+n.RelayFunction)
	if !s.Reconciler.Disabled {
		st.ReconcilerFunctionARN = a.arn("lambda", "function:"+n.ReconcilerFunction)
	}
	return st
}

// Account returns the account recorded in the State.
func (s State) Account() Account { return s.account() }
