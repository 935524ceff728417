// Package targetkind holds the kinds of target a pipeline publishes to, each in
// one file: EventBridge (eventbridge.go), SNS (sns.go) and SQS (sqs.go).
//
// A kind is one Kind value, registered by its file: its settings with their
// defaults, checks and environment variables, the ARN it publishes to, the
// IAM actions that publishing takes, its existence check at apply, and its
// publisher (batching, per-entry results, error classes) and its size
// limits (Limits, the record contract's outbox.TargetLimits).
// Everything else (the relay's configuration, the provisioning, the
// operations command, the provider) goes through the functions of this
// file, so adding a kind adds a file here and touches no switch elsewhere.
//
// The package imports no framework: the relay Lambda imports it for its
// publishers.
//
// # The relay's environment variables
//
//	Variable          Default             Form
//	OUTBOX_TARGET     eventbridge         eventbridge, sns or sqs: the kind
//	OUTBOX_EVENT_BUS  default             event bus name or ARN (eventbridge)
//	OUTBOX_TOPIC_ARN  (required for sns)  SNS topic ARN, standard or FIFO
//	OUTBOX_QUEUE_ARN  (required for sqs)  SQS queue ARN, standard or FIFO
//	OUTBOX_ENVELOPE   outbox              outbox or cloudevents: the format
//	                                      of what every kind publishes
//
// A kind's variables are read only for that kind.
package targetkind

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"go.opentelemetry.io/otel/trace"

	"github.com/outboxkit/terraform-provider-outbox/internal/awsops"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay/publish"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay/retry"
	"github.com/outboxkit/terraform-provider-outbox/internal/validation"
	"github.com/outboxkit/terraform-provider-outbox/outbox"
)

// EnvTarget is the relay's environment variable that names the kind.
const EnvTarget = "OUTBOX_TARGET"

// EnvEnvelope is the relay's environment variable that names the envelope
// format, for every kind.
const EnvEnvelope = "OUTBOX_ENVELOPE"

// Type names a kind: the value of OUTBOX_TARGET.
type Type string

// Settings say where a pipeline publishes: the kind and its settings. Only
// the fields of the kind are set.
type Settings struct {
	// Type is the kind; empty means EventBridge.
	Type Type
	// EventBus is the bus name or ARN (eventbridge).
	EventBus string
	// TopicARN is the SNS topic, standard or FIFO (sns).
	TopicARN string
	// QueueARN is the SQS queue, standard or FIFO (sqs).
	QueueARN string
	// Envelope is the format of what is published, on every kind; empty
	// means outbox.FormatOutbox.
	Envelope outbox.Format
}

// Setting is one setting of a kind: a string field of Settings and the
// relay's environment variable that carries it.
type Setting struct {
	// Field is the name of the field of Settings ("QueueARN").
	Field string
	// Env is the relay's environment variable ("OUTBOX_QUEUE_ARN").
	Env string
	// Default is the value of an unset setting; "" for none.
	Default string
	// Check returns what is wrong with a value and the fix, "" when it is
	// valid; "" is checked too (a required setting refuses it).
	Check func(v string) (problem, fix string)
	// Value points at the field in s.
	Value func(s *Settings) *string
}

// Account is where names become ARNs.
type Account struct {
	Partition, Region, ID string
}

func (a Account) arn(service, resource string) string {
	return "arn:" + a.Partition + ":" + service + ":" + a.Region + ":" + a.ID + ":" + resource
}

// Permission is the IAM statement that lets a role publish to a target.
type Permission struct {
	// Sid names the statement in the roles' policies ("PublishToQueue").
	Sid string
	// Actions are the IAM actions on the target's ARN.
	Actions []string
}

// PublisherOptions tune a kind's publisher.
type PublisherOptions struct {
	// Retry bounds the retries of throttled and internally failed entries.
	Retry retry.Policy
	// Concurrency bounds the calls in flight; 0 means
	// publish.DefaultConcurrency.
	Concurrency int
	// Region is the caller's region, named in hints; "" when unknown.
	Region string
	// Objects, when not nil, replaces the S3 client that reads the
	// objects of claim-checked events, to publish their data inline, and
	// tags them once published; a fake in tests.
	Objects ObjectStore
	// TracerProvider makes the publishing spans; nil means OpenTelemetry's
	// global one.
	TracerProvider trace.TracerProvider
	// Client, when not nil, replaces the client the kind builds from the
	// AWS configuration: a fake of the kind's API (EventBridgeAPI, SNSAPI,
	// SQSAPI) in tests.
	Client any
}

// Kind is one kind of target.
type Kind interface {
	// Type is the kind's name.
	Type() Type
	// Service is the service name in the ARNs the kind publishes to
	// ("events", "sns", "sqs").
	Service() string
	// What names the kind's resource in messages ("SNS topic").
	What() string
	// Settings are the kind's settings; the first is where it publishes.
	Settings() []Setting
	// ARN is the ARN of the resource published to, "" when it cannot be
	// known without a (still unknown) account.
	ARN(s Settings, a Account) string
	// Permission is what publishing to the ARN takes: the relay's, the
	// reconciler's and the operations command's replay.
	Permission() Permission
	// Exists reads the resource of s, for the check at apply: an error
	// that awsops.IsNotFound recognises when it does not exist.
	Exists(ctx context.Context, cfg aws.Config, s Settings) error
	// Publisher builds the kind's publisher to s.
	Publisher(cfg aws.Config, s Settings, o PublisherOptions) (publish.Publisher, error)
	// Limits are the sizes the kind accepts: its message and the totals
	// of one call, from the record contract (outbox.TargetLimits), which
	// the writer checks events against.
	Limits() outbox.Limits
}

// kinds are the registered kinds, in the order they registered; the first
// is the default.
var kinds []Kind

// register adds a kind; each kind's file calls it from init.
func register(k Kind) { kinds = append(kinds, k) }

// Default is the kind of Settings without a Type.
const Default = EventBridge

// Kinds returns the registered kinds, the default first.
func Kinds() []Kind {
	out := slices.Clone(kinds)
	slices.SortStableFunc(out, func(a, b Kind) int {
		switch {
		case a.Type() == Default:
			return -1
		case b.Type() == Default:
			return 1
		}
		return strings.Compare(string(a.Type()), string(b.Type()))
	})
	return out
}

// Types returns the names of the registered kinds, the default first.
func Types() []Type {
	var out []Type
	for _, k := range Kinds() {
		out = append(out, k.Type())
	}
	return out
}

// Lookup returns the kind named t.
func Lookup(t Type) (Kind, bool) {
	for _, k := range kinds {
		if k.Type() == t {
			return k, true
		}
	}
	return nil, false
}

// Kind returns the kind of s; Settings without a Type are the default
// kind's. It fails for an unknown Type.
func (s Settings) Kind() (Kind, error) {
	t := s.Type
	if t == "" {
		t = Default
	}
	if k, ok := Lookup(t); ok {
		return k, nil
	}
	return nil, fmt.Errorf("unknown target %q: use %s", s.Type, quotedTypes())
}

// envelopeFromEnv reads OUTBOX_ENVELOPE: unset is outbox.FormatOutbox.
func envelopeFromEnv(subject validation.Subject, getenv func(string) string) (outbox.Format, error) {
	f := outbox.Format(strings.ToLower(strings.TrimSpace(getenv(EnvEnvelope))))
	switch {
	case f == "":
		return outbox.FormatOutbox, nil
	case !slices.Contains(outbox.Formats, f):
		return "", subject.InvalidValue(EnvEnvelope, getenv(EnvEnvelope), "is not an envelope format", "use "+quotedFormats())
	}
	return f, nil
}

func quotedFormats() string {
	var q []string
	for _, f := range outbox.Formats {
		q = append(q, fmt.Sprintf("%q", f))
	}
	return strings.Join(q, ", ")
}

func quotedTypes() string {
	var q []string
	for _, t := range Types() {
		q = append(q, fmt.Sprintf("%q", t))
	}
	return strings.Join(q, ", ")
}

// WithDefaults returns s with the default kind when it has none, and its
// kind's defaults.
func (s Settings) WithDefaults() Settings {
	if s.Type == "" {
		s.Type = Default
	}
	if s.Envelope == "" {
		s.Envelope = outbox.FormatOutbox
	}
	k, err := s.Kind()
	if err != nil {
		return s
	}
	for _, set := range k.Settings() {
		if v := set.Value(&s); *v == "" {
			*v = set.Default
		}
	}
	return s
}

// Address is where s publishes: the value of its kind's first setting.
func (s Settings) Address() string {
	k, err := s.Kind()
	if err != nil {
		return ""
	}
	return *k.Settings()[0].Value(&s)
}

// Describe names the resource s publishes to ("SNS topic arn:...").
func (s Settings) Describe() string {
	k, err := s.Kind()
	if err != nil {
		return string(s.Type)
	}
	return k.What() + " " + s.Address()
}

// ARN is the ARN s publishes to; "" when it needs an unknown account.
func (s Settings) ARN(a Account) string {
	k, err := s.WithDefaults().Kind()
	if err != nil {
		return ""
	}
	return k.ARN(s.WithDefaults(), a)
}

// kindSetting is a setting with its kind.
type kindSetting struct {
	Kind
	Setting
}

// allSettings are the settings of every kind, each with its kind.
func allSettings() []kindSetting {
	var out []kindSetting
	for _, k := range Kinds() {
		for _, set := range k.Settings() {
			out = append(out, kindSetting{k, set})
		}
	}
	return out
}

// Validate checks s, with its defaults, as the settings at prefix
// ("Target") of subject: a known kind, no setting of another kind, and the
// kind's own settings. Errors are *validation.Error naming prefix.Field.
func (s Settings) Validate(subject validation.Subject, prefix string) error {
	s = s.WithDefaults()
	k, err := s.Kind()
	if err != nil {
		return subject.Invalid(prefix+".Type", "use "+quotedTypes(), "is %q", s.Type)
	}
	if !slices.Contains(outbox.Formats, s.Envelope) {
		return subject.Invalid(prefix+".Envelope", "use "+quotedFormats(), "is %q", s.Envelope)
	}
	for _, o := range allSettings() {
		v := *o.Value(&s)
		if o.Type() == k.Type() {
			if problem, fix := o.Check(v); problem != "" {
				return subject.Invalid(prefix+"."+o.Field, fix, "%s", problem)
			}
		} else if v != "" && v != o.Default {
			return subject.Invalid(prefix+"."+o.Field, fmt.Sprintf("remove it, or use the %s target", o.Type()), "is set for the %s target", k.Type())
		}
	}
	return nil
}

// Env is the relay's environment for s (with its defaults): OUTBOX_TARGET
// and its kind's variables (none for an unknown kind, which the relay
// refuses).
func (s Settings) Env() map[string]string {
	s = s.WithDefaults()
	env := map[string]string{EnvTarget: string(s.Type), EnvEnvelope: string(s.Envelope)}
	if k, err := s.Kind(); err == nil {
		for _, set := range k.Settings() {
			env[set.Env] = *set.Value(&s)
		}
	}
	return env
}

// EnvNames are the environment variables of every kind, OUTBOX_TARGET
// first.
func EnvNames() []string {
	names := []string{EnvTarget, EnvEnvelope}
	for _, o := range allSettings() {
		names = append(names, o.Env)
	}
	return names
}

// FromEnv reads the settings from the relay's environment; an invalid value
// is a *validation.Error of subject naming the variable.
func FromEnv(subject validation.Subject, getenv func(string) string) (Settings, error) {
	t := Type(strings.ToLower(strings.TrimSpace(getenv(EnvTarget))))
	s := Settings{Type: t}
	k, err := s.Kind()
	if err != nil {
		return Settings{}, subject.InvalidValue(EnvTarget, getenv(EnvTarget), "is not a known target", "use "+quotedTypes())
	}
	s.Type = k.Type()
	if s.Envelope, err = envelopeFromEnv(subject, getenv); err != nil {
		return Settings{}, err
	}
	for _, set := range k.Settings() {
		v := strings.TrimSpace(getenv(set.Env))
		if v == "" {
			v = set.Default
		}
		if problem, fix := set.Check(v); problem != "" {
			return Settings{}, subject.Invalid(set.Env, fix, "%s", problem)
		}
		*set.Value(&s) = v
	}
	return s, nil
}

// ForAddress returns the settings that publish to address: an ARN of a
// kind's service, or, for a bare name, the default kind.
func ForAddress(address string) (Settings, error) {
	service := ""
	if strings.HasPrefix(address, "arn:") {
		parts := strings.SplitN(address, ":", 6)
		if len(parts) < 6 {
			return Settings{}, fmt.Errorf("%q is not an ARN", address)
		}
		service = parts[2]
	}
	for _, k := range Kinds() {
		if (service == "" && k.Type() == Default) || k.Service() == service {
			s := Settings{Type: k.Type()}
			set := k.Settings()[0]
			if problem, fix := set.Check(address); problem != "" {
				return Settings{}, fmt.Errorf("%s: %s", problem, fix)
			}
			*set.Value(&s) = address
			return s, nil
		}
	}
	return Settings{}, fmt.Errorf("%q is a %s ARN, which is no target kind: use the ARN of a %s", address, service, whats())
}

// Addresses says what ForAddress accepts, for messages: "an event bus
// name, or the ARN of an event bus, SNS topic or SQS queue".
func Addresses() string {
	w := strings.Split(whats(), ", ")
	last := len(w) - 1
	return "an " + Default.what() + " name, or the ARN of an " + strings.Join(w[:last], ", ") + " or " + w[last]
}

func (t Type) what() string {
	if k, ok := Lookup(t); ok {
		return k.What()
	}
	return string(t)
}

func whats() string {
	var w []string
	for _, k := range Kinds() {
		w = append(w, k.What())
	}
	return strings.Join(w, ", ")
}

// Check verifies, before anything is built or changed, that the resource
// of s exists and is in region (when known): the relay publishes only
// within its region, and every event would otherwise wait for a target
// that is not coming.
func Check(ctx context.Context, cfg aws.Config, s Settings, region string) error {
	s = s.WithDefaults()
	k, err := s.Kind()
	if err != nil {
		return err
	}
	what, id := k.What(), s.Address()
	if r := arnRegion(id); r != "" && region != "" && r != region {
		return fmt.Errorf("checking the target %s (%s): it is in %s, but the pipeline is in %s: the relay publishes only within its region; use a %s in %s, or configure the provider for %s",
			what, id, r, region, what, region, r)
	}
	switch err := k.Exists(ctx, cfg, s); {
	case awsops.IsNotFound(err):
		return fmt.Errorf("checking the target %s (%s): it does not exist in %s: create it first (or fix the name); the pipeline would hold every event back until it exists", what, id, region)
	case err != nil:
		return fmt.Errorf("checking the target %s (%s): %w", what, id, err)
	}
	return nil
}

// arnRegion is the region of an ARN, "" for a name.
func arnRegion(id string) string {
	parts := strings.SplitN(id, ":", 6)
	if len(parts) < 6 || parts[0] != "arn" {
		return ""
	}
	return parts[3]
}

// Permission is what publishing to s takes.
func (s Settings) Permission() Permission {
	k, err := s.WithDefaults().Kind()
	if err != nil {
		return Permission{}
	}
	return k.Permission()
}

// PublishActions are the IAM actions of every kind's permission, the
// default kind's first.
func PublishActions() []string {
	var out []string
	for _, k := range Kinds() {
		out = append(out, k.Permission().Actions...)
	}
	return out
}

// NewPublisher is the publisher of s, the one the relay, the reconciler
// and the operations command's replay use. Its client is built from cfg
// unless o.Client is set.
func NewPublisher(cfg aws.Config, s Settings, o PublisherOptions) (publish.Publisher, error) {
	s = s.WithDefaults()
	k, err := s.Kind()
	if err != nil {
		return nil, err
	}
	p, err := k.Publisher(cfg, s, o)
	if err != nil {
		return nil, err
	}
	return newTracedPublisher(newClaimPublisher(p, cfg, k, o), o.TracerProvider, s), nil
}

// client returns o.Client as the kind's API, or the client that build
// makes when o.Client is nil.
func client[API any](o PublisherOptions, t Type, build func() API) (API, error) {
	if o.Client == nil {
		return build(), nil
	}
	c, ok := o.Client.(API)
	if !ok {
		var zero API
		return zero, fmt.Errorf("the %s target's client %T does not implement its API", t, o.Client)
	}
	return c, nil
}

// arnCheck checks that v is an ARN matching pattern, described by what
// and example.
func arnCheck(v, what, example string, matches func(string) bool) (problem, fix string) {
	switch {
	case v == "":
		return "is not set", "set it to the ARN of the " + what + ", such as " + fmt.Sprintf("%q", example)
	case !matches(v):
		return fmt.Sprintf("is %q, not an %s ARN", v, what), fmt.Sprintf("use an ARN such as %q", example)
	}
	return "", ""
}
